import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type Tenant, type TestService } from '../../test/harness.js';
import { addParticipants, createStudy, patchParticipant } from '../../test/participants-factory.js';
import { createPerson, createPropertyOfEveryType } from '../../test/people-factory.js';

/**
 * Which comparisons ignore case, as docs/api/filters.md and the RootFilter description say: every
 * substring comparison (CONTAINS, NOT_CONTAINS, STARTS_WITH) of every text, every comparison of an
 * email, and COUNTRY_IS; the rest (EQUALS, NOT_EQUALS, IN, NOT_IN of other texts, option names)
 * compare exactly. The same answers whether the counts held in process count the total or SQL
 * does (SEARCH_COUNTS=off), on both stores; letters beyond ASCII fold as the database folds them.
 */

let counted: TestService;
let sqlOnly: TestService;
let tenant: Tenant;
let properties: Awaited<ReturnType<typeof createPropertyOfEveryType>>;
const people: Record<'ada' | 'adam' | 'ecole' | 'none', string> = { ada: '', adam: '', ecole: '', none: '' };
let studyId: string;

beforeAll(async () => {
  counted = await startTestService();
  sqlOnly = await startTestService({ searchCounts: false }, { database: counted.database });
  tenant = await createTenant(counted);
  properties = await createPropertyOfEveryType(counted, tenant);
  const nickname = properties.STRING;
  people.ada = (await createPerson(counted, tenant, { email: 'Ada.Lovelace@Example.org', firstName: 'Ada', properties: { [nickname]: 'Ada', [properties.SINGLE_SELECT]: 'Red', [properties.LOCATION]: { country: 'GB' } } })).personId;
  people.adam = (await createPerson(counted, tenant, { email: 'adam@example.org', firstName: 'ADAM', properties: { [nickname]: 'ADA-fan' } })).personId;
  people.ecole = (await createPerson(counted, tenant, { email: 'emile@example.org', firstName: 'Émile', properties: { [nickname]: 'École' } })).personId;
  people.none = (await createPerson(counted, tenant, { email: 'nobody@example.org' })).personId;
  // Participants of a study, with notes: PARTICIPANT names are held per study.
  studyId = await createStudy(counted, tenant, { studyType: 'INTERVIEWS', launch: true });
  const participants = await addParticipants(counted, tenant, studyId, [people.ada, people.adam, people.ecole]);
  await patchParticipant(counted, tenant, studyId, participants[0]!.participantId, { note: 'Call back' });
  await patchParticipant(counted, tenant, studyId, participants[1]!.participantId, { note: 'CALL BACK LATER' });
}, 60_000);

afterAll(async () => {
  await sqlOnly?.stop();
  await counted?.stop();
});

type Who = keyof typeof people;

async function searchOn(service: TestService, filter: object, url: string): Promise<{ ids: string[]; total: number; countedBy: string }> {
  const response = await call(service, 'POST', url, { token: tenant.token, body: { filter: { filters: [filter] }, pageInfo: { size: 100 } } });
  expect(response.statusCode, response.body).toBe(200);
  const page = response.json<{ total: number; results: { personId: string }[] }>();
  return { ids: page.results.map((row) => row.personId).sort(), total: page.total, countedBy: String(response.headers['server-timing'] ?? '').includes('counts') ? 'counts' : 'sql' };
}

/** The search through the counts (waiting until they answer: a column's first search prepares it in the background) and through SQL alone. */
async function bothPaths(filter: object, url: string) {
  let fromCounts = await searchOn(counted, filter, url);
  for (let round = 0; round < 20 && fromCounts.countedBy !== 'counts'; round++) {
    await counted.deps.counts!.settled();
    fromCounts = await searchOn(counted, filter, url);
  }
  const fromSql = await searchOn(sqlOnly, filter, url);
  expect(fromSql.countedBy).toBe('sql');
  return { fromCounts, fromSql };
}

const expectFound = async (filter: object, expected: Who[], options: { countsAnswer?: boolean; url?: string } = {}) => {
  const { fromCounts, fromSql } = await bothPaths(filter, options.url ?? '/people/search');
  const ids = expected.map((who) => people[who]).sort();
  expect(fromSql.ids, `SQL: ${JSON.stringify(filter)}`).toEqual(ids);
  expect(fromSql.total).toBe(ids.length);
  expect(fromCounts.ids, `counts: ${JSON.stringify(filter)}`).toEqual(ids);
  expect(fromCounts.total).toBe(ids.length);
  if (options.countsAnswer !== false) expect(fromCounts.countedBy, JSON.stringify(filter)).toBe('counts');
};

const nickname = (comparison: string, value: unknown) => ({ property: { propertyId: properties.STRING }, comparison, value });
const person = (name: string, comparison: string, value: unknown) => ({ property: { propertyGroup: 'PERSON', propertyName: name }, comparison, value });

describe('case in filters, through the counts and through SQL alone', () => {
  it('a custom text property: substrings ignore case, equality does not', async () => {
    await expectFound(nickname('CONTAINS', 'ada'), ['ada', 'adam']);
    await expectFound(nickname('STARTS_WITH', 'aDa'), ['ada', 'adam']);
    await expectFound(nickname('NOT_CONTAINS', 'ADA'), ['ecole', 'none']);
    await expectFound(nickname('EQUALS', 'ada'), []);
    await expectFound(nickname('EQUALS', 'Ada'), ['ada']);
    await expectFound(nickname('IN', ['ada', 'ada-fan']), []);
    await expectFound(nickname('NOT_EQUALS', 'ada'), ['ada', 'adam', 'ecole', 'none']);
    await expectFound(nickname('NOT_IN', ['Ada']), ['adam', 'ecole', 'none']);
  });

  it('letters beyond ASCII fold too, as the database lowers them', async () => {
    // A needle beyond ASCII is SQL's on both paths (see substringTest in counts/plan.ts).
    await expectFound(nickname('CONTAINS', 'éc'), ['ecole'], { countsAnswer: false });
    await expectFound(nickname('STARTS_WITH', 'ÉCO'), ['ecole'], { countsAnswer: false });
    await expectFound(person('FIRST_NAME', 'CONTAINS', 'émi'), ['ecole'], { countsAnswer: false });
    // An ASCII needle against stored letters beyond ASCII: the counts hold the database's lowered text.
    await expectFound(nickname('CONTAINS', 'COLE'), ['ecole']);
  });

  it("the reference's text names (FIRST_NAME) follow the same rules", async () => {
    await expectFound(person('FIRST_NAME', 'CONTAINS', 'ada'), ['ada', 'adam']);
    await expectFound(person('FIRST_NAME', 'EQUALS', 'ada'), []);
    await expectFound(person('FIRST_NAME', 'EQUALS', 'ADAM'), ['adam']);
  });

  it("a participant's text (E1) follows the same rules", async () => {
    const note = (comparison: string, value: unknown) => ({ property: { propertyGroup: 'PARTICIPANT', propertyName: 'STUDY_NOTE' }, comparison, value });
    const url = `/studies/${studyId}/participants/search`;
    await expectFound(note('CONTAINS', 'call back'), ['ada', 'adam'], { url });
    await expectFound(note('STARTS_WITH', 'CALL BACK L'), ['adam'], { url });
    await expectFound(note('EQUALS', 'call back'), [], { url });
    await expectFound(note('NOT_EQUALS', 'call back'), ['ada', 'adam', 'ecole'], { url });
  });

  it('an email ignores case in every comparison', async () => {
    await expectFound(person('EMAIL', 'EQUALS', 'ada.lovelace@example.ORG'), ['ada'], { countsAnswer: false });
    await expectFound(person('EMAIL', 'IN', ['ADAM@EXAMPLE.ORG', 'Emile@Example.Org']), ['adam', 'ecole'], { countsAnswer: false });
    await expectFound(person('EMAIL', 'NOT_EQUALS', 'NOBODY@example.org'), ['ada', 'adam', 'ecole'], { countsAnswer: false });
    await expectFound(person('EMAIL', 'CONTAINS', 'LOVELACE'), ['ada']);
    await expectFound(person('EMAIL', 'STARTS_WITH', 'ADA'), ['ada', 'adam']);
  });

  it('country codes ignore case; option names do not (a 400 that lists them)', async () => {
    await expectFound({ property: { propertyId: properties.LOCATION }, comparison: 'COUNTRY_IS', value: ['gb'] }, ['ada'], { countsAnswer: false });
    await expectFound({ property: { propertyId: properties.SINGLE_SELECT }, comparison: 'IS_ANY_OF', value: ['Red'] }, ['ada']);
    for (const service of [counted, sqlOnly]) {
      const response = await call(service, 'POST', '/people/search', { token: tenant.token, body: { filter: { filters: [{ property: { propertyId: properties.SINGLE_SELECT }, comparison: 'IS_ANY_OF', value: ['red'] }] } } });
      expect(response.statusCode).toBe(400);
      expect(response.json()).toEqual({
        errors: [{ message: 'red is not an option of Colour; its options (by name, exactly as written, or by id): Red, Green, Blue', path: ['filter', 'filters', '0', 'value', '0'] }],
      });
    }
  });
});
