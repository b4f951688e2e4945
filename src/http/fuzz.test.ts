import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiPath } from '../../scripts/write-openapi.js';
import { call, createTenant, storeKind, startTestService, type Tenant, type TestService, uniqueEmail } from '../../test/harness.js';
import { sendIncentive } from '../../test/incentives-factory.js';
import {
  describeRequest,
  type DocumentedOperation,
  type FuzzRequest,
  type OpenApiDocument,
  operationsOf,
  Pools,
  requestArbitrary,
  ResponseChecker,
  SchemaArbitraries,
} from '../../test/openapi-arbitraries.js';
import { addParticipants, createStudy } from '../../test/participants-factory.js';
import { createPerson, createPopulation, createPropertyOfEveryType } from '../../test/people-factory.js';
import { referenceNames } from '../search/names.js';

/**
 * A fuzz test driven by the committed openapi.json: every operation gets thousands of requests
 * between them, valid and hostile (derived from its parameters' and body's schemas), sent with a
 * SUPER_ADMIN token of a workspace holding real data (ids are drawn from it, from what the run
 * creates, and from another workspace). Every response must come within a bound, never be a 5xx,
 * have a status the operation documents and a body its documented schema accepts.
 *
 * FUZZ_RUNS sets the requests per operation (default below). FUZZ_SEED replays a run's draws: the
 * seed is printed at the end, and a failure shows fast-check's seed for its operation (FUZZ_SEED
 * plus the operation's index). The data earlier operations left behind is part of what a request
 * meets, so replay the whole file; a failure also prints the request itself, to send again.
 */

const document = JSON.parse(readFileSync(openApiPath, 'utf8')) as OpenApiDocument;
// 120 a run (a fresh seed each run; FUZZ_RUNS=1000 for a long hunt): 250 took 481 s of a CI leg's 40 minutes.
const RUNS_PER_OPERATION = Number(process.env.FUZZ_RUNS ?? 120);
const ANSWER_WITHIN_MS = 10_000;
const baseSeed = process.env.FUZZ_SEED === undefined ? Date.now() % 2 ** 31 : Number(process.env.FUZZ_SEED);

/** Operations that remove data run last, so the others meet the fixtures. */
const destroys = ({ method, path }: DocumentedOperation) => method === 'DELETE' || path.endsWith('/delete');
const operations = [...operationsOf(document).filter((op) => !destroys(op)), ...operationsOf(document).filter(destroys)];

let service: TestService;
let tenant: Tenant;
const pools = new Pools();
const checker = new ResponseChecker(document);
let schemas: SchemaArbitraries;
let sent = 0;
const statusCounts = new Map<number, number>();
/** Per operation, how often each status answered each kind of request (printed with FUZZ_VERBOSE=1). */
const operationStatuses = new Map<string, Map<string, number>>();
const startedAt = performance.now();

/** The fuzzed workspace's data: properties of every type, populations, people, studies with participants, an incentive, a segment, a signup form with a submission, a study template, an import. */
async function seed(service: TestService, tenant: Tenant, foreign = false): Promise<void> {
  const add = (name: string, value: string) => pools.add(name, value, foreign);
  const properties = await createPropertyOfEveryType(service, tenant);
  for (const id of Object.values(properties)) add('propertyId', id);
  const population = await createPopulation(service, tenant, 'Fuzz panel');
  add('populationId', population);
  const people = [];
  for (let index = 0; index < 5; index++) {
    const person = await createPerson(service, tenant, {
      firstName: `First${index}`,
      lastName: `Last${index}`,
      populationIds: [population],
      properties: { [properties.STRING]: `nick ${index}`, [properties.NUMBER]: index * 7, [properties.BOOLEAN]: index % 2 === 0, [properties.SINGLE_SELECT]: 'Red' },
    });
    people.push(person);
    add('personId', person.personId);
    add('email', person.email);
  }
  const launched = await createStudy(service, tenant, { studyType: 'INTERVIEWS', screener: true, launch: true, studyPlan: { name: 'Fuzz interviews', participationLimit: 50 } });
  const draft = await createStudy(service, tenant, { studyType: 'SURVEY' });
  add('studyId', launched);
  add('studyId', draft);
  const participants = await addParticipants(
    service,
    tenant,
    launched,
    people.slice(0, 3).map((person) => person.personId),
  );
  for (const participant of participants) add('participantId', participant.participantId);
  const incentive = await sendIncentive(service, tenant, participants[0]!.participantId);
  add('incentiveId', incentive.incentiveId);

  const expectCreated = (response: LightMyRequestResponse) => {
    expect(response.statusCode, response.body).toBeLessThan(300);
    pools.harvest(response.json());
    return response.json<Record<string, unknown>>();
  };
  const post = (url: string, body: unknown) => call(service, 'POST', url, { token: tenant.token, body });
  // harvest() adds to the own pools: for the foreign workspace, move what it found.
  const segment = expectCreated(
    await post('/segments', { name: 'Fuzz segment', filter: { filters: [{ property: { propertyGroup: 'PERSON', propertyName: 'FIRST_NAME' }, comparison: 'STARTS_WITH', value: 'First' }] } }),
  );
  const form = expectCreated(await post('/signups', { name: 'Fuzz form', populationId: population }));
  const submission = expectCreated(
    await call(service, 'POST', `/public/signups/${String(form.signupFormId)}/submissions`, { body: { email: uniqueEmail('signup'), firstName: 'Sign', referralCode: 'FUZZ' } }),
  );
  const template = expectCreated(await post('/study-templates', { studyId: launched, name: 'Fuzz template' }));
  const group = expectCreated(await post('/property-groups', { name: 'Fuzz group', scopeType: 'SPECIFIC', populationIds: [population], propertyIds: [properties.STRING] }));
  const imported = expectCreated(
    await service.app.inject({
      method: 'POST',
      url: '/v1/imports',
      headers: { authorization: `Bearer ${tenant.token}`, 'content-type': 'text/csv' },
      payload: `email,firstName\n${uniqueEmail('import')},Imported\n`,
    }),
  );
  if (foreign) {
    for (const [name, value] of [
      ['segmentId', segment.segmentId],
      ['signupFormId', form.signupFormId],
      ['submissionId', submission.submissionId],
      ['studyTemplateId', template.studyTemplateId],
      ['propertyGroupId', group.propertyGroupId],
      ['importId', imported.importId],
    ] as const) {
      if (typeof value === 'string') pools.add(name, value, true);
    }
  }
}

beforeAll(async () => {
  service = await startTestService();
  const other = await createTenant(service, 'Other workspace');
  await seed(service, other, true);
  // What harvest() took from the other workspace's responses is not the fuzzed tenant's own.
  pools.own.clear();
  tenant = await createTenant(service, 'Fuzzed workspace');
  await seed(service, tenant);

  const everyName = [...new Set(Object.values(referenceNames).flat())];
  const anything = fc.oneof(
    fc.string({ maxLength: 20 }),
    fc.integer({ min: -1000, max: 1000 }),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.constant(null),
    fc.array(fc.oneof(fc.constantFrom('Red', 'Green', 'Blue', 'ACTIVE', 'INVITED'), fc.string({ maxLength: 8 })), { maxLength: 4 }),
    fc.date({ min: new Date('2000-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true }).map((date) => date.toISOString()),
    fc.constantFrom('First', 'Red', 'COMPLETED', 'US', 'en'),
    fc.record({ latitude: fc.double({ min: -90, max: 90, noNaN: true }), longitude: fc.double({ min: -180, max: 180, noNaN: true }), km: fc.integer({ min: 0, max: 1000 }) }, { requiredKeys: [] }),
    pools.draw('personId').map((id) => id ?? null),
    pools.draw('studyId').map((id) => [id ?? 'stu_X']),
    pools.draw('segmentId').map((id) => id ?? null),
    pools.draw('populationId').map((id) => [id ?? 'pop_X']),
    pools.draw('email').map((email) => email ?? null),
  );
  schemas = new SchemaArbitraries(document, pools, {
    anything,
    hints: {
      propertyName: fc.constantFrom(...everyName),
    },
  });
}, 120_000);

afterAll(async () => {
  const seconds = (performance.now() - startedAt) / 1000;
  const statuses = [...statusCounts.entries()]
    .sort(([a], [b]) => a - b)
    .map(([status, count]) => `${status}: ${count}`)
    .join(', ');
  console.log(`fuzz (${storeKind}): ${sent} requests over ${operations.length} operations in ${seconds.toFixed(1)} s, FUZZ_SEED=${baseSeed} (${statuses})`);
  if (process.env.FUZZ_VERBOSE) {
    for (const [name, tallies] of operationStatuses) {
      console.log(`${name}: ${[...tallies.entries()].sort().map(([tally, count]) => `${tally}×${count}`).join(', ')}`);
    }
  }
  await service?.stop();
});

const csv = fc
  .tuple(
    fc.constantFrom('email,firstName,lastName,phone', 'email', 'firstName,email', 'email,Nickname,Age', 'email,email', '', 'EMAIL ,first name', '"email"'),
    fc.array(
      fc.tuple(
        fc.oneof(fc.emailAddress({ size: 'small' }), fc.constantFrom('', 'not-an-email', '"quoted,email"@x.test', 'a\u0000@x.test'), fc.string({ maxLength: 12 })),
        fc.oneof(fc.string({ maxLength: 12 }), fc.constantFrom('"unclosed', 'a"b', '\r', '=1+1', '\ud800')),
      ),
      { maxLength: 6 },
    ),
  )
  .map(([header, rows]) => `${header}\n${rows.map((cells) => cells.join(',')).join('\n')}\n`);

async function send(op: DocumentedOperation, request: FuzzRequest): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((done) => (timer = setTimeout(() => done('timeout'), ANSWER_WITHIN_MS)));
  const response = await Promise.race([
    service.app.inject({ method: request.method as 'GET', url: request.url, headers: request.headers, ...(request.payload === undefined ? {} : { payload: request.payload }) }),
    timeout,
  ]).finally(() => clearTimeout(timer));
  sent++;
  if (response === 'timeout') throw new Error(`${op.name}: no answer within ${ANSWER_WITHIN_MS} ms\n${describeRequest(request)}`);
  statusCounts.set(response.statusCode, (statusCounts.get(response.statusCode) ?? 0) + 1);
  const byOperation = operationStatuses.get(op.name) ?? new Map<string, number>();
  operationStatuses.set(op.name, byOperation);
  const tally = `${response.statusCode} ${request.kind}`;
  byOperation.set(tally, (byOperation.get(tally) ?? 0) + 1);
  if (process.env.FUZZ_VERBOSE === '2' && request.kind === 'valid' && response.statusCode >= 400 && (byOperation.get(tally) ?? 0) <= 3) {
    console.log(`${op.name} ${response.statusCode}: ${response.body.slice(0, 300)}\n   ${describeRequest(request).slice(0, 600)}`);
  }
  const contentType = response.headers['content-type'];
  const judged = checker.judge(op, response.statusCode, typeof contentType === 'string' ? contentType : undefined, response.body);
  if (judged.problem !== undefined) {
    throw new Error(`${op.name}: ${judged.problem}\n${describeRequest(request)}\n  answered ${response.statusCode}: ${response.body.slice(0, 1000)}`);
  }
  if (response.statusCode < 300 && String(contentType).startsWith('application/json')) pools.harvest(JSON.parse(response.body), op.name);
}

describe(`fuzzing every operation of openapi.json (${storeKind})`, () => {
  it('covers the documented operations, the test helpers left out', () => {
    expect(operations.length).toBeGreaterThan(50);
    expect(operations.some(({ path }) => path.startsWith('/test-helpers'))).toBe(false);
  });

  it('judges a response by the document: a 5xx, an undocumented status or content type, or a body off its schema is a failure', () => {
    const getStudy = operations.find(({ name }) => name === 'GET /studies/{studyId}')!;
    const json = 'application/json; charset=utf-8';
    expect(checker.judge(getStudy, 500, 'text/plain', 'Internal Server Error').problem).toMatch(/server error/);
    expect(checker.judge(getStudy, 409, json, '{"errors":[]}').problem).toMatch(/not documented/);
    expect(checker.judge(getStudy, 404, 'text/plain; charset=utf-8', 'Not Found').problem).toMatch(/content type/);
    expect(checker.judge(getStudy, 200, json, '{"studyId":1}').problem).toMatch(/does not match its schema/);
    expect(checker.judge(getStudy, 404, json, '{"errors":[{"message":"Study not found"}]}').problem).toMatch(/path/);
    expect(checker.judge(getStudy, 404, json, '{"errors":[{"message":"Study not found","path":["studyId"]}]}').problem).toBeUndefined();
  });

  operations.forEach((op, index) => {
    it(`${op.name}: no 5xx, no hang, documented statuses and bodies`, async () => {
      const requests = requestArbitrary(op, schemas, pools, { token: tenant.token, csv }).map((request) =>
        // fast-check prints a counterexample with this, not the whole (maybe 3 MiB) object.
        Object.assign(request, { [fc.toStringMethod]: () => describeRequest(request) }),
      );
      await fc.assert(
        fc.asyncProperty(requests, (request) => send(op, request)),
        { numRuns: RUNS_PER_OPERATION, seed: baseSeed + index, endOnFailure: true },
      );
    }, 180_000);
  });

  it(`sent at least ${RUNS_PER_OPERATION} requests per operation`, () => {
    expect(sent).toBeGreaterThanOrEqual(RUNS_PER_OPERATION * operations.length);
  });
});
