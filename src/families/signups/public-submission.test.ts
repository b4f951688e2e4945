import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type TestService, uniqueEmail } from '../../../test/harness.js';
import { createPerson, createPopulation, createProperties, createPropertyOfEveryType, type PersonResponse } from '../../../test/people-factory.js';
import { createForm, getSubmission, submit, submitted } from './test-support.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service.stop());

const personOf = async (tenant: { token: string }, personId: string) => (await call(service, 'GET', `/people/${personId}`, { token: tenant.token })).json<PersonResponse>();

async function peopleWithEmail(workspaceId: string, email: string) {
  return service.deps.db
    .selectFrom('people')
    .where('workspace_id', '=', workspaceId)
    .where((eb) => eb(eb.fn('lower', ['email']), '=', email.toLowerCase()))
    .where('deleted_at', 'is', null)
    .select(['person_id', 'import_source'])
    .execute();
}

describe('POST /public/signups/{signupFormId}/submissions', () => {
  it('makes a new person in the form\'s population, without a token, and records a PENDING_REVIEW submission', async () => {
    const tenant = await createTenant(service);
    const form = await createForm(service, tenant);
    const email = uniqueEmail('grace');
    const before = Date.now();
    const response = await submit(service, form.signupFormId, { email, firstName: 'Grace', lastName: 'Hopper', phone: '+44 20 7946 0000', referralCode: 'SPRING-2026' });
    expect(response.statusCode, response.body).toBe(201);
    expect(response.json()).toEqual({ submissionId: expect.stringMatching(/^sgs_/) });
    expect(response.headers['x-ratelimit-limit']).toMatch(/^\d+$/);
    expect(response.headers['x-ratelimit-remaining']).toMatch(/^\d+$/);
    expect(response.headers['x-ratelimit-reset']).toMatch(/^\d+$/);

    const submission = await getSubmission(service, tenant, form.signupFormId, response.json().submissionId);
    expect(submission).toEqual({
      submissionId: response.json().submissionId,
      signupFormId: form.signupFormId,
      personId: expect.stringMatching(/^per_/),
      approvalStatus: 'PENDING_REVIEW',
      submittedAt: expect.any(String),
      consentSubmissionId: null,
      referralCode: 'SPRING-2026',
      reviewedAt: null,
    });
    expect(Date.parse(submission.submittedAt)).toBeGreaterThanOrEqual(before - 1000);
    const person = await personOf(tenant, submission.personId);
    expect(person).toMatchObject({ email, firstName: 'Grace', lastName: 'Hopper', phone: '+44 20 7946 0000', isOptedOut: false, contactStatus: 'CONTACTABLE', populationIds: [form.populationId] });
    expect(await peopleWithEmail(tenant.workspaceId, email)).toEqual([{ person_id: submission.personId, import_source: 'SIGNUP_FORM' }]);
  });

  it('records a consent submission when the form carries the consentFormId the signup form presents', async () => {
    const tenant = await createTenant(service);
    const form = await createForm(service, tenant, { consentFormId: 'consent-2026-v2' });
    const { submissionId } = await submitted(service, form.signupFormId, { consentFormId: 'consent-2026-v2' });
    const submission = await getSubmission(service, tenant, form.signupFormId, submissionId);
    expect(submission.consentSubmissionId).toMatch(/^cns_/);
    const consent = await service.deps.db
      .selectFrom('consent_submissions')
      .where('workspace_id', '=', tenant.workspaceId)
      .where('consent_submission_id', '=', submission.consentSubmissionId!)
      .select(['person_id', 'consent_form_id', 'study_id', 'submitted_at'])
      .executeTakeFirstOrThrow();
    expect(consent).toEqual({ person_id: submission.personId, consent_form_id: 'consent-2026-v2', study_id: null, submitted_at: submission.submittedAt });
  });

  it('takes a value of every property type, checked and stored as POST /people stores it', async () => {
    const tenant = await createTenant(service);
    const ids = await createPropertyOfEveryType(service, tenant);
    const form = await createForm(service, tenant);
    const properties = {
      [ids.STRING]: 'Amazing Grace',
      [ids.NUMBER]: 85.5,
      [ids.DATETIME]: '2026-01-02T03:04:05+01:00',
      [ids.BOOLEAN]: false,
      [ids.SINGLE_SELECT]: 'Green',
      [ids.MULTI_SELECT]: ['Blue', 'Red', 'Blue'],
      [ids.LOCATION]: { country: 'GB', city: 'London' },
    };
    const { submissionId } = await submitted(service, form.signupFormId, { properties });
    const { personId } = await getSubmission(service, tenant, form.signupFormId, submissionId);
    expect((await personOf(tenant, personId)).properties).toEqual({ ...properties, [ids.DATETIME]: '2026-01-02T02:04:05.000Z', [ids.MULTI_SELECT]: ['Blue', 'Red'] });
  });

  it('updates a known person (email compared case-insensitively) by filling only what is empty', async () => {
    const tenant = await createTenant(service);
    const { Nickname, Age } = await createProperties(service, tenant, [
      { name: 'Nickname', propertyType: 'STRING' },
      { name: 'Age', propertyType: 'NUMBER' },
    ]);
    const otherPopulation = await createPopulation(service, tenant, 'Customers');
    const email = uniqueEmail('known');
    const known = await createPerson(service, tenant, { email, firstName: 'Ada', populationIds: [otherPopulation], properties: { [Nickname!]: 'Countess' } });
    const form = await createForm(service, tenant);

    const { submissionId } = await submitted(service, form.signupFormId, {
      email: email.toUpperCase(),
      firstName: 'Mallory',
      lastName: 'Lovelace',
      phone: '+1 555 0100',
      properties: { [Nickname!]: 'Overwritten', [Age!]: 36 },
    });
    const submission = await getSubmission(service, tenant, form.signupFormId, submissionId);
    expect(submission.personId).toBe(known.personId);
    const person = await personOf(tenant, known.personId);
    expect(person).toMatchObject({
      email,
      firstName: 'Ada',
      lastName: 'Lovelace',
      phone: '+1 555 0100',
      properties: { [Nickname!]: 'Countess', [Age!]: 36 },
      populationIds: [otherPopulation, form.populationId].sort(),
    });
    expect(await peopleWithEmail(tenant.workspaceId, email)).toHaveLength(1);

    // A second sending changes nothing already held, and is a submission of its own.
    const again = await submitted(service, form.signupFormId, { email, lastName: 'Byron' });
    expect(again.submissionId).not.toBe(submissionId);
    expect((await personOf(tenant, known.personId)).lastName).toBe('Lovelace');
  });

  it('never changes opted-out status, and answers an opted-out person exactly as a new one', async () => {
    const tenant = await createTenant(service);
    const email = uniqueEmail('optedout');
    const known = await createPerson(service, tenant, { email });
    const optOut = await call(service, 'PUT', `/people/${known.personId}/opted-out`, { token: tenant.token, body: { isOptedOut: true } });
    expect(optOut.statusCode).toBe(200);
    const form = await createForm(service, tenant);
    const response = await submit(service, form.signupFormId, { email, firstName: 'Back' });
    expect(response.statusCode).toBe(201);
    expect(Object.keys(response.json())).toEqual(['submissionId']);
    expect(await personOf(tenant, known.personId)).toMatchObject({ isOptedOut: true, contactStatus: 'OPTED_OUT', firstName: 'Back', populationIds: [form.populationId] });
  });

  it('makes a new person when the only one with that email was deleted', async () => {
    const tenant = await createTenant(service);
    const email = uniqueEmail('deleted');
    const gone = await createPerson(service, tenant, { email });
    expect((await call(service, 'DELETE', `/people/${gone.personId}`, { token: tenant.token })).statusCode).toBe(200);
    const form = await createForm(service, tenant);
    const { submissionId } = await submitted(service, form.signupFormId, { email });
    const submission = await getSubmission(service, tenant, form.signupFormId, submissionId);
    expect(submission.personId).not.toBe(gone.personId);
    expect((await personOf(tenant, submission.personId)).email).toBe(email);
  });

  it('leaves out a unique value another person holds (no 409 to tell who), and claims a free one', async () => {
    const tenant = await createTenant(service);
    const { Code } = await createProperties(service, tenant, [{ name: 'Code', propertyType: 'STRING', isUnique: true }]);
    await createPerson(service, tenant, { properties: { [Code!]: 'TAKEN' } });
    const form = await createForm(service, tenant);

    const first = await submitted(service, form.signupFormId, { properties: { [Code!]: 'TAKEN' } });
    const firstPerson = (await getSubmission(service, tenant, form.signupFormId, first.submissionId)).personId;
    expect((await personOf(tenant, firstPerson)).properties).toEqual({});

    const second = await submitted(service, form.signupFormId, { properties: { [Code!]: 'FREE' } });
    const secondPerson = (await getSubmission(service, tenant, form.signupFormId, second.submissionId)).personId;
    expect((await personOf(tenant, secondPerson)).properties).toEqual({ [Code!]: 'FREE' });
    // The free value is now claimed: POST /people with it is a conflict.
    const clash = await call(service, 'POST', '/people', { token: tenant.token, body: { email: uniqueEmail(), properties: { [Code!]: 'FREE' } } });
    expect(clash.statusCode).toBe(409);
  });

  it('gives concurrent first sendings with one new email one person and a submission each', async () => {
    const tenant = await createTenant(service);
    const form = await createForm(service, tenant);
    const email = uniqueEmail('race');
    const responses = await Promise.all(Array.from({ length: 4 }, (_, index) => submit(service, form.signupFormId, { email, referralCode: `R${index}` })));
    expect(responses.map((response) => response.statusCode)).toEqual([201, 201, 201, 201]);
    const people = await peopleWithEmail(tenant.workspaceId, email);
    expect(people).toHaveLength(1);
    for (const response of responses) {
      expect((await getSubmission(service, tenant, form.signupFormId, response.json().submissionId)).personId).toBe(people[0]!.person_id);
    }
  });

  it('answers 404 for an unknown form, a malformed id, or a form id naming the wrong workspace', async () => {
    const tenant = await createTenant(service);
    const other = await createTenant(service, 'Other workspace');
    const form = await createForm(service, tenant);
    const moved = form.signupFormId.replace(tenant.workspaceId, other.workspaceId);
    const unknownInSameWorkspace = form.signupFormId.slice(0, -4) + (form.signupFormId.endsWith('0000') ? '1111' : '0000');
    for (const signupFormId of ['sgf_nope', 'x', moved, unknownInSameWorkspace, `${form.signupFormId}0`]) {
      const response = await submit(service, signupFormId, { email: uniqueEmail() });
      expect(response.statusCode, signupFormId).toBe(404);
      expect(response.json()).toEqual({ errors: [{ message: 'Signup form not found', path: ['signupFormId'] }] });
    }
  });

  it('checks properties as POST /people does: unknown id 404, wrong shape or null 400, and then changes nothing', async () => {
    const tenant = await createTenant(service);
    const ids = await createPropertyOfEveryType(service, tenant);
    const form = await createForm(service, tenant);
    const email = uniqueEmail('refused');
    const cases: [Record<string, unknown>, number, string[]][] = [
      [{ prp_nope: 'x' }, 404, ['properties', 'prp_nope']],
      [{ [ids.NUMBER]: '5' }, 400, ['properties', ids.NUMBER]],
      [{ [ids.SINGLE_SELECT]: 'Purple' }, 400, ['properties', ids.SINGLE_SELECT]],
      [{ [ids.LOCATION]: { city: 'London' } }, 400, ['properties', ids.LOCATION]],
      [{ [ids.STRING]: null }, 400, ['properties', ids.STRING]],
    ];
    for (const [properties, status, path] of cases) {
      const response = await submit(service, form.signupFormId, { email, properties });
      expect(response.statusCode, JSON.stringify(properties)).toBe(status);
      expect(response.json()).toEqual({ errors: [{ message: expect.any(String), path }] });
    }
    expect(await peopleWithEmail(tenant.workspaceId, email)).toEqual([]);
  });

  it.each([
    ['a missing email', { firstName: 'A' }, ['email']],
    ['an email that is not one', { email: 'not-an-email' }, ['email']],
    ['a referral code with spaces', { email: 'a@example.org', referralCode: 'Grace Hopper' }, ['referralCode']],
    ['a referral code that is an email', { email: 'a@example.org', referralCode: 'grace@example.org' }, ['referralCode']],
    ['an empty consentFormId', { email: 'a@example.org', consentFormId: '' }, ['consentFormId']],
    ['an unknown field', { email: 'a@example.org', isOptedOut: false }, ['isOptedOut']],
    ['a NUL character', { email: 'a@example.org', firstName: 'A\u0000' }, ['firstName']],
    // Property ids are jsonb keys: PostgreSQL would refuse these (22021) as a 500.
    ['a NUL in a property id', { email: 'a@example.org', properties: { '\u0000': 'x' } }, ['properties']],
    ['an unpaired surrogate in a property id', { email: 'a@example.org', properties: { '\ud800x': 'x' } }, ['properties']],
    ['a property id over 100 characters', { email: 'a@example.org', properties: { ['p'.repeat(101)]: 'x' } }, ['properties', 'p'.repeat(101)]],
  ])('refuses %s with 400', async (_case, body, path) => {
    const tenant = await createTenant(service);
    const form = await createForm(service, tenant);
    const response = await submit(service, form.signupFormId, body);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ errors: [{ message: expect.any(String), path }] });
    expect(response.headers['x-ratelimit-remaining']).toMatch(/^\d+$/);
  });
});

describe('POST /public/signups/{signupFormId}/submissions: security', () => {
  it('needs no token, and ignores one that is given (even a bad one)', async () => {
    const tenant = await createTenant(service);
    const form = await createForm(service, tenant);
    for (const authorization of [undefined, 'Bearer nonsense', `Bearer ${tenant.token}`]) {
      const response = await service.app.inject({
        method: 'POST',
        url: `/v1/public/signups/${form.signupFormId}/submissions`,
        payload: { email: uniqueEmail() },
        headers: authorization ? { authorization } : {},
      });
      expect(response.statusCode, authorization).toBe(201);
    }
  });

  it('reaches only the workspace its form id names', async () => {
    const tenant = await createTenant(service);
    const other = await createTenant(service, 'Other workspace');
    const form = await createForm(service, tenant);
    const email = uniqueEmail('scoped');
    await submitted(service, form.signupFormId, { email });
    expect(await peopleWithEmail(tenant.workspaceId, email)).toHaveLength(1);
    expect(await peopleWithEmail(other.workspaceId, email)).toHaveLength(0);
  });

  describe('rate limit per client address', () => {
    const max = 3;
    let limited: TestService;
    beforeAll(async () => {
      // A service of its own whose signup budget (SIGNUP_RATE_LIMIT_MAX) is small; tokens keep a large one.
      limited = await startTestService({ signupRateLimitMax: max });
    });
    afterAll(async () => limited.stop());

    it('answers the submission past the budget with 429, Retry-After and the budget headers; other addresses and tokens are not held back', async () => {
      const tenant = await createTenant(limited);
      const form = await createForm(limited, tenant);
      for (let sent = 1; sent <= max; sent++) {
        // Invalid bodies count too: the budget is drawn before the body is read.
        const response = await submit(limited, form.signupFormId, sent === 2 ? { email: 'not-an-email' } : { email: uniqueEmail() }, '203.0.113.7');
        expect(response.statusCode).toBe(sent === 2 ? 400 : 201);
        expect(response.headers['x-ratelimit-limit']).toBe(String(max));
        expect(response.headers['x-ratelimit-remaining']).toBe(String(max - sent));
      }
      const email = uniqueEmail('refused');
      const refused = await submit(limited, form.signupFormId, { email }, '203.0.113.7');
      expect(refused.statusCode).toBe(429);
      expect(refused.headers['content-type']).toMatch(/^text\/plain/);
      expect(refused.body).toBe('Too Many Requests');
      expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(refused.headers['x-ratelimit-remaining']).toBe('0');
      expect(Number(refused.headers['x-ratelimit-reset'])).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000));
      expect(await limited.deps.db.selectFrom('people').where('email', '=', email).select('person_id').execute()).toEqual([]);

      expect((await submit(limited, form.signupFormId, { email: uniqueEmail() }, '203.0.113.8')).statusCode).toBe(201);
      const unknownForm = await submit(limited, 'sgf_nope', { email: uniqueEmail() }, '203.0.113.7');
      expect(unknownForm.statusCode).toBe(429);
      // The budget is the form's own: the address's authenticated calls draw on the token's budget.
      const me = await limited.app.inject({ method: 'GET', url: '/v1/me', remoteAddress: '203.0.113.7', headers: { authorization: `Bearer ${tenant.token}` } });
      expect(me.statusCode).toBe(200);
    });
  });
});

describe.skipIf(!process.env.REDIS_URL)('POST /public/signups/{signupFormId}/submissions: the per-address budget shared through Redis', () => {
  const max = 3;
  let first: TestService;
  let second: TestService;
  beforeAll(async () => {
    // A prefix of this run's own, so that parallel runs on one Redis never share a budget.
    const rateLimitKeyPrefix = `test-signup-${randomBytes(6).toString('hex')}`;
    const overrides = { signupRateLimitMax: max, rateLimitMax: max, redisUrl: process.env.REDIS_URL };
    first = await startTestService(overrides, { rateLimitKeyPrefix });
    // The second instance serves the same database, as instances behind one load balancer do.
    second = await startTestService(overrides, { rateLimitKeyPrefix, database: first.database });
  });
  afterAll(async () => {
    await second?.stop();
    await first?.stop();
  });

  it("draws one address's submissions to two instances from one budget, apart from its budget for bad tokens", async () => {
    const tenant = await createTenant(first);
    const form = await createForm(first, tenant);
    const address = '198.51.100.23';
    for (const [index, instance] of [first, second, first].entries()) {
      const response = await submit(instance, form.signupFormId, { email: uniqueEmail() }, address);
      expect(response.statusCode).toBe(201);
      expect(response.headers['x-ratelimit-remaining']).toBe(String(max - 1 - index));
    }
    expect((await submit(second, form.signupFormId, { email: uniqueEmail() }, address)).statusCode).toBe(429);
    // The address's budget for bad tokens is another one: still whole.
    const badToken = await second.app.inject({ method: 'GET', url: '/v1/me', remoteAddress: address, headers: { authorization: 'Bearer garbage' } });
    expect(badToken.statusCode).toBe(401);
    expect(badToken.headers['x-ratelimit-remaining']).toBe(String(max - 1));
  });
});
