import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordConsent } from '../../../test/consent-factory.js';
import { sql } from 'kysely';
import { call, createTenant as createAnyTenant, startTestService, type Tenant, type TestService, uniqueEmail } from '../../../test/harness.js';
import { allRoles, roleHasRight } from '../../http/rights.js';
import { addParticipants, createStudy, patchParticipantResponse } from '../../../test/participants-factory.js';
import { createPerson } from '../../../test/people-factory.js';
import { describeSecurity } from '../../../test/security.js';
import { createForm, getSubmission, submit, submitted } from '../signups/test-support.js';

/** The workspaces this file made: on PostgreSQL the run's database holds other files' consents too. */
const workspacesOfThisFile: string[] = [];
async function createTenant(...args: Parameters<typeof createAnyTenant>): Promise<Tenant> {
  const tenant = await createAnyTenant(...args);
  workspacesOfThisFile.push(tenant.workspaceId);
  return tenant;
}

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service.stop());

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const consentText = 'I agree to take part in this study and to be recorded. — Ünïcödé';

interface Page {
  results: { consentSubmissionId: string; personId: string }[];
  total: number;
  pageInfo: { hasNextPage: boolean; endCursor: string };
}

async function list(tenant: Tenant, query: Record<string, string> = {}) {
  const response = await call(service, 'GET', '/consent-submissions', { token: tenant.token, query });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<Page>();
}

/** A study with a consent form, and a person who is its participant. */
async function studyWithParticipant(tenant: Tenant) {
  const studyId = await createStudy(service, tenant, { studyType: 'INTERVIEWS', studyPlan: { consentFormId: 'consent-2026-v2' } });
  const person = await createPerson(service, tenant);
  const [participant] = await addParticipants(service, tenant, studyId, [person.personId]);
  return { studyId, personId: person.personId, participantId: participant!.participantId };
}

const getParticipant = async (tenant: Tenant, studyId: string, participantId: string) => {
  const response = await call(service, 'GET', `/studies/${studyId}/participants/${participantId}`, { token: tenant.token });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<{ consentFormSubmittedAt: string | null }>();
};

describe('POST /consent-submissions', () => {
  it("records a study consent with the study's consent form and the text's hash, read back and listed; the participant is marked", async () => {
    const tenant = await createTenant(service);
    const { studyId, personId, participantId } = await studyWithParticipant(tenant);
    const consent = await recordConsent(service, tenant, { personId, studyId, formVersion: '2.1', text: consentText, source: 'PAPER', submittedAt: '2026-11-20T09:30:00Z' });
    expect(consent).toEqual({
      consentSubmissionId: expect.stringMatching(/^cns_/),
      personId,
      studyId,
      signupFormId: null,
      consentFormId: 'consent-2026-v2',
      formVersion: '2.1',
      textSha256: sha256(consentText),
      source: 'PAPER',
      submittedAt: '2026-11-20T09:30:00.000Z',
      recordedByUserId: tenant.userId,
      createdAt: expect.any(String),
      signedName: null,
      choices: null,
      withdrawnAt: null,
    });
    const read = await call(service, 'GET', `/consent-submissions/${consent.consentSubmissionId}`, { token: tenant.token });
    expect(read.statusCode, read.body).toBe(200);
    expect(read.json()).toEqual(consent);
    expect((await list(tenant)).results).toEqual([consent]);
    expect((await getParticipant(tenant, studyId, participantId)).consentFormSubmittedAt).toBe('2026-11-20T09:30:00.000Z');
    // The text itself is kept nowhere.
    const row = await service.deps.db.selectFrom('consent_submissions').selectAll().where('consent_submission_id', '=', consent.consentSubmissionId).executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain('I agree');
  });

  it('keeps the earliest consent time on the participant, and a consent for a study the person takes no part in marks nobody', async () => {
    const tenant = await createTenant(service);
    const { studyId, personId, participantId } = await studyWithParticipant(tenant);
    await recordConsent(service, tenant, { personId, studyId, submittedAt: '2026-11-10T00:00:00Z' });
    await recordConsent(service, tenant, { personId, studyId, submittedAt: '2026-11-15T00:00:00Z' });
    expect((await getParticipant(tenant, studyId, participantId)).consentFormSubmittedAt).toBe('2026-11-10T00:00:00.000Z');
    await recordConsent(service, tenant, { personId, studyId, submittedAt: '2026-11-01T00:00:00Z' });
    expect((await getParticipant(tenant, studyId, participantId)).consentFormSubmittedAt).toBe('2026-11-01T00:00:00.000Z');

    const outsider = await createPerson(service, tenant);
    const consent = await recordConsent(service, tenant, { personId: outsider.personId, studyId, consentFormId: 'consent-2026-v2', textSha256: 'AB'.repeat(32) });
    expect(consent).toMatchObject({ consentFormId: 'consent-2026-v2', textSha256: 'ab'.repeat(32), source: 'API', formVersion: null });
    expect(Date.parse(consent.submittedAt)).toBeLessThanOrEqual(Date.now());
  });

  it('records a consent on a signup form, for an opted-out person too', async () => {
    const tenant = await createTenant(service);
    const form = await createForm(service, tenant, { consentFormId: 'panel-terms' });
    const person = await createPerson(service, tenant);
    const optedOut = await call(service, 'PUT', `/people/${person.personId}/opted-out`, { token: tenant.token, body: { isOptedOut: true } });
    expect(optedOut.statusCode, optedOut.body).toBe(200);
    const consent = await recordConsent(service, tenant, { personId: person.personId, signupFormId: form.signupFormId, consentFormId: 'panel-terms', source: 'EMAIL' });
    expect(consent).toMatchObject({ studyId: null, signupFormId: form.signupFormId, consentFormId: 'panel-terms', source: 'EMAIL', textSha256: null });
  });

  it('records a consent.submitted webhook event with ids only, in the same transaction', async () => {
    const tenant = await createTenant(service);
    const { studyId, personId } = await studyWithParticipant(tenant);
    const consent = await recordConsent(service, tenant, { personId, studyId, text: consentText });
    const messages = await service.deps.db.selectFrom('webhook_messages').select(['event_type', 'payload']).where('workspace_id', '=', tenant.workspaceId).where('event_type', '=', 'consent.submitted').execute();
    expect(messages).toHaveLength(1);
    expect((messages[0]!.payload as { data: unknown }).data).toEqual({ consentSubmissionId: consent.consentSubmissionId, personId, studyId, signupFormId: null });
  });

  it('replays a retry with the same Idempotency-Key and records once', async () => {
    const tenant = await createTenant(service);
    const { studyId, personId } = await studyWithParticipant(tenant);
    const send = () => call(service, 'POST', '/consent-submissions', { token: tenant.token, body: { personId, studyId }, headers: { 'idempotency-key': `consent-${personId}` } });
    const first = await send();
    expect(first.statusCode, first.body).toBe(201);
    const again = await send();
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
    expect((await list(tenant)).total).toBe(1);
  });

  describe('refuses', () => {
    let tenant: Tenant;
    let other: Tenant;
    let ids: { studyId: string; personId: string; signupFormId: string; otherPersonId: string; otherStudyId: string; otherFormId: string; deletedPersonId: string };
    beforeAll(async () => {
      tenant = await createTenant(service);
      other = await createTenant(service, 'Other workspace');
      const { studyId, personId } = await studyWithParticipant(tenant);
      const deleted = await createPerson(service, tenant);
      expect((await call(service, 'DELETE', `/people/${deleted.personId}`, { token: tenant.token })).statusCode).toBe(200);
      ids = {
        studyId,
        personId,
        signupFormId: (await createForm(service, tenant, { consentFormId: 'panel-terms' })).signupFormId,
        otherPersonId: (await createPerson(service, other)).personId,
        otherStudyId: await createStudy(service, other, { studyType: 'SURVEY' }),
        otherFormId: (await createForm(service, other)).signupFormId,
        deletedPersonId: deleted.personId,
      };
    });

    const invalid: [string, (valid: Record<string, unknown>) => Record<string, unknown>, string[], RegExp?][] = [
      ['a missing personId', ({ personId: _personId, ...rest }) => rest, ['personId']],
      ['neither studyId nor signupFormId', ({ studyId: _studyId, ...rest }) => rest, ['studyId'], /studyId.*signupFormId/],
      ['both studyId and signupFormId', (valid) => ({ ...valid, signupFormId: ids.signupFormId }), ['signupFormId'], /not both/],
      ['both text and textSha256', (valid) => ({ ...valid, text: 'x', textSha256: 'a'.repeat(64) }), ['text'], /not both/],
      ['a textSha256 that is no SHA-256', (valid) => ({ ...valid, textSha256: 'abc' }), ['textSha256']],
      ['an empty text', (valid) => ({ ...valid, text: '' }), ['text']],
      ['an empty consentFormId', (valid) => ({ ...valid, consentFormId: '' }), ['consentFormId']],
      ['an unknown source', (valid) => ({ ...valid, source: 'CARRIER_PIGEON' }), ['source']],
      ['the source SIGNUP_FORM (the public route records those)', (valid) => ({ ...valid, source: 'SIGNUP_FORM' }), ['source']],
      ['a submittedAt that is no date-time', (valid) => ({ ...valid, submittedAt: 'yesterday' }), ['submittedAt']],
      ['a submittedAt in the future', (valid) => ({ ...valid, submittedAt: new Date(Date.now() + 3_600_000).toISOString() }), ['submittedAt'], /future/],
      ['an unknown field', (valid) => ({ ...valid, signature: 'Ada' }), ['signature']],
      ['a NUL character', (valid) => ({ ...valid, formVersion: 'v\u00002' }), ['formVersion']],
    ];
    it.each(invalid)('%s (400 naming the field)', async (_name, make, path, message) => {
      const response = await call(service, 'POST', '/consent-submissions', { token: tenant.token, body: make({ personId: ids.personId, studyId: ids.studyId }) });
      expect(response.statusCode, response.body).toBe(400);
      const [error] = response.json<{ errors: { message: string; path: string[] }[] }>().errors;
      expect(error!.path).toEqual(path);
      if (message) expect(error!.message).toMatch(message);
    });

    const missing: [string, () => Record<string, unknown>, string, string[]][] = [
      ['an unknown person', () => ({ personId: 'per_unknown', studyId: ids.studyId }), 'Person not found', ['personId']],
      ['a deleted person', () => ({ personId: ids.deletedPersonId, studyId: ids.studyId }), 'Person not found', ['personId']],
      ["another workspace's person", () => ({ personId: ids.otherPersonId, studyId: ids.studyId }), 'Person not found', ['personId']],
      ['an unknown study', () => ({ personId: ids.personId, studyId: 'stu_unknown' }), 'Study not found', ['studyId']],
      ["another workspace's study", () => ({ personId: ids.personId, studyId: ids.otherStudyId }), 'Study not found', ['studyId']],
      ['an unknown signup form', () => ({ personId: ids.personId, signupFormId: 'sgf_unknown' }), 'Signup form not found', ['signupFormId']],
      ["another workspace's signup form", () => ({ personId: ids.personId, signupFormId: ids.otherFormId }), 'Signup form not found', ['signupFormId']],
    ];
    it.each(missing)('%s (404 naming the field)', async (_name, body, message, path) => {
      const response = await call(service, 'POST', '/consent-submissions', { token: tenant.token, body: body() });
      expect(response.statusCode, response.body).toBe(404);
      expect(response.json()).toEqual({ errors: [{ message, path }] });
    });

    it('and records nothing when it refuses', async () => {
      expect((await list(tenant)).total).toBe(0);
    });
  });
});

describe('consents recorded by other routes', () => {
  it("a participant updated with consentFormSubmitted: a study consent with the study's form, source API", async () => {
    const tenant = await createTenant(service);
    const { studyId, personId, participantId } = await studyWithParticipant(tenant);
    const patched = await patchParticipantResponse(service, tenant, studyId, participantId, { consentFormSubmitted: true });
    expect(patched.statusCode, patched.body).toBe(200);
    const { results } = await list(tenant, { personId });
    expect(results).toEqual([expect.objectContaining({ personId, studyId, signupFormId: null, consentFormId: 'consent-2026-v2', source: 'API', recordedByUserId: tenant.userId })]);
  });

  it('a public signup with a consentFormId: a signup form consent, source SIGNUP_FORM', async () => {
    const tenant = await createTenant(service);
    const form = await createForm(service, tenant, { consentFormId: 'panel-terms-v3' });
    const { submissionId } = await submitted(service, form.signupFormId, { consentFormId: 'panel-terms-v3' });
    const submission = await getSubmission(service, tenant, form.signupFormId, submissionId);
    const read = await call(service, 'GET', `/consent-submissions/${submission.consentSubmissionId}`, { token: tenant.token });
    expect(read.statusCode, read.body).toBe(200);
    expect(read.json()).toMatchObject({ personId: submission.personId, studyId: null, signupFormId: form.signupFormId, consentFormId: 'panel-terms-v3', source: 'SIGNUP_FORM', recordedByUserId: null });
    expect((await list(tenant, { signupFormId: form.signupFormId })).total).toBe(1);
  });
});

describe('GET /consent-submissions', () => {
  it('pages in the order recorded, filtered by person, study and signup form; a cursor is bound to its filters', async () => {
    const tenant = await createTenant(service);
    const { studyId, personId } = await studyWithParticipant(tenant);
    const form = await createForm(service, tenant, { consentFormId: 'panel-terms' });
    const someoneElse = await createPerson(service, tenant);
    const recorded = [
      await recordConsent(service, tenant, { personId, studyId }),
      await recordConsent(service, tenant, { personId, signupFormId: form.signupFormId }),
      await recordConsent(service, tenant, { personId: someoneElse.personId, studyId }),
      await recordConsent(service, tenant, { personId, studyId }),
    ];
    const ids = (consents: { consentSubmissionId: string }[]) => consents.map((consent) => consent.consentSubmissionId);

    const first = await list(tenant, { size: '3' });
    expect(first.total).toBe(4);
    expect(ids(first.results)).toEqual(ids(recorded.slice(0, 3)));
    expect(first.pageInfo.hasNextPage).toBe(true);
    const second = await list(tenant, { size: '3', startCursor: first.pageInfo.endCursor });
    expect(ids(second.results)).toEqual(ids(recorded.slice(3)));
    expect(second.pageInfo.hasNextPage).toBe(false);

    expect(ids((await list(tenant, { personId })).results)).toEqual(ids([recorded[0]!, recorded[1]!, recorded[3]!]));
    expect(ids((await list(tenant, { studyId })).results)).toEqual(ids([recorded[0]!, recorded[2]!, recorded[3]!]));
    expect(ids((await list(tenant, { signupFormId: form.signupFormId })).results)).toEqual(ids([recorded[1]!]));
    expect(ids((await list(tenant, { personId, studyId })).results)).toEqual(ids([recorded[0]!, recorded[3]!]));

    const byPerson = await list(tenant, { personId, size: '1' });
    const wrongCursor = await call(service, 'GET', '/consent-submissions', { token: tenant.token, query: { studyId, startCursor: byPerson.pageInfo.endCursor } });
    expect(wrongCursor.statusCode).toBe(400);
    expect(wrongCursor.json<{ errors: { path: string[] }[] }>().errors[0]!.path).toEqual(['startCursor']);
  });

  it("leaves out a deleted person's consents at once, in the list and by id", async () => {
    const tenant = await createTenant(service);
    const { studyId, personId } = await studyWithParticipant(tenant);
    const consent = await recordConsent(service, tenant, { personId, studyId });
    expect((await call(service, 'DELETE', `/people/${personId}`, { token: tenant.token })).statusCode).toBe(200);
    expect((await list(tenant)).total).toBe(0);
    const read = await call(service, 'GET', `/consent-submissions/${consent.consentSubmissionId}`, { token: tenant.token });
    expect(read.statusCode).toBe(404);
    expect(read.json()).toEqual({ errors: [{ message: 'Consent submission not found', path: ['consentSubmissionId'] }] });
  });

  it.each([
    ['personId', 'per_unknown', 'Person not found'],
    ['studyId', 'stu_unknown', 'Study not found'],
    ['signupFormId', 'sgf_unknown', 'Signup form not found'],
  ])('a %s filter naming nothing of the workspace is a 404 naming it', async (parameter, value, message) => {
    const tenant = await createTenant(service);
    const response = await call(service, 'GET', '/consent-submissions', { token: tenant.token, query: { [parameter]: value } });
    expect(response.statusCode, response.body).toBe(404);
    expect(response.json()).toEqual({ errors: [{ message, path: [parameter] }] });
  });

  it.each([
    ['size', '0'],
    ['size', '101'],
    ['startCursor', 'garbage'],
    ['colour', 'red'],
  ])('refuses %s=%s (400 naming it)', async (parameter, value) => {
    const tenant = await createTenant(service);
    const response = await call(service, 'GET', '/consent-submissions', { token: tenant.token, query: { [parameter]: value } });
    expect(response.statusCode, response.body).toBe(400);
    expect(response.json<{ errors: { path: string[] }[] }>().errors[0]!.path).toEqual([parameter]);
  });
});

describe('GET /consent-submissions/{consentSubmissionId}', () => {
  it("answers 404 for an unknown id and another workspace's consent", async () => {
    const tenant = await createTenant(service);
    const other = await createTenant(service, 'Other workspace');
    const { studyId, personId } = await studyWithParticipant(other);
    const theirs = await recordConsent(service, other, { personId, studyId });
    for (const id of ['cns_unknown', theirs.consentSubmissionId]) {
      const response = await call(service, 'GET', `/consent-submissions/${id}`, { token: tenant.token });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({ errors: [{ message: 'Consent submission not found', path: ['consentSubmissionId'] }] });
    }
  });
});

describe('searching by consent, right after recording', () => {
  const person = (name: string) => ({ propertyGroup: 'PERSON', propertyName: name });
  const participantName = (name: string) => ({ propertyGroup: 'PARTICIPANT', propertyName: name });

  async function searchIds(tenant: Tenant, url: string, filters: unknown[]) {
    const response = await call(service, 'POST', url, { token: tenant.token, body: { filter: { operator: 'AND', filters }, pageInfo: { size: 100 } } });
    expect(response.statusCode, response.body).toBe(200);
    const page = response.json<{ total: number; results: { personId: string }[] }>();
    expect(page.total).toBe(page.results.length);
    return page.results.map((row) => row.personId).sort();
  }

  it('finds the person by CONSENT_FORM_WAS_SUBMITTED and CONSENT_SUBMISSIONS, and the participant by CONSENT_FORM_SUBMITTED, from the counts held', async () => {
    const tenant = await createTenant(service);
    const { studyId, personId } = await studyWithParticipant(tenant);
    const bystander = await createPerson(service, tenant);
    await addParticipants(service, tenant, studyId, [bystander.personId]);
    const submitted = [{ property: person('CONSENT_FORM_WAS_SUBMITTED'), comparison: 'IS_TRUE' }];
    const twice = [{ property: person('CONSENT_SUBMISSIONS'), comparison: 'GREATER_THAN_OR_EQUAL', value: 2 }];
    const participantConsented = [{ property: participantName('CONSENT_FORM_SUBMITTED'), comparison: 'IS_TRUE' }];
    const participantsUrl = `/studies/${studyId}/participants/search`;

    // Searched once first, so that the counts hold these names: the searches after the writes are then the counts' to answer.
    // (One preparation at a time per workspace: a search arriving meanwhile prepares nothing, hence the settling after each.)
    for (const [url, filters] of [['/people/search', submitted], ['/people/search', twice], [participantsUrl, participantConsented]] as const) {
      expect(await searchIds(tenant, url, [...filters])).toEqual([]);
      await service.deps.counts?.settled();
    }
    const countedBefore = service.deps.counts?.answered.counts ?? 0;

    await recordConsent(service, tenant, { personId, studyId });
    expect(await searchIds(tenant, '/people/search', submitted)).toEqual([personId]);
    expect(await searchIds(tenant, participantsUrl, participantConsented)).toEqual([personId]);
    expect(await searchIds(tenant, '/people/search', twice)).toEqual([]);
    const form = await createForm(service, tenant, { consentFormId: 'panel-terms' });
    await recordConsent(service, tenant, { personId, signupFormId: form.signupFormId });
    expect(await searchIds(tenant, '/people/search', twice)).toEqual([personId]);
    expect(await searchIds(tenant, '/people/search', [{ property: person('CONSENT_FORM_WAS_SUBMITTED'), comparison: 'IS_FALSE' }])).toEqual([bystander.personId]);
    if (service.deps.counts) expect(service.deps.counts.answered.counts - countedBefore).toBeGreaterThanOrEqual(5);
  });
});

describeSecurity('POST /consent-submissions', () => service, {
  method: 'POST',
  right: 'consent:write',
  addressesResource: true,
  request: async (tenant) => {
    const person = await createPerson(service, tenant);
    const studyId = await createStudy(service, tenant, { studyType: 'SURVEY', studyPlan: { consentFormId: 'consent-2026-v2' } });
    return { url: '/consent-submissions', body: { personId: person.personId, studyId } };
  },
});

describeSecurity('GET /consent-submissions', () => service, {
  method: 'GET',
  right: 'consent:read',
  addressesResource: true,
  request: async (tenant) => ({ url: '/consent-submissions', query: { personId: (await createPerson(service, tenant)).personId } }),
});

describeSecurity('GET /consent-submissions/{consentSubmissionId}', () => service, {
  method: 'GET',
  right: 'consent:read',
  addressesResource: true,
  request: async (tenant) => {
    const person = await createPerson(service, tenant);
    const studyId = await createStudy(service, tenant, { studyType: 'SURVEY', studyPlan: { consentFormId: 'consent-2026-v2' } });
    const consent = await recordConsent(service, tenant, { personId: person.personId, studyId });
    return { url: `/consent-submissions/${consent.consentSubmissionId}` };
  },
});

/**
 * Issue 32, item 4: a consent cannot be forged. Every path that writes one (POST
 * /consent-submissions, PATCH …/participants/{id} consentFormSubmitted, the public signup route)
 * needs the same authority and names the consent form its study or signup form presents.
 */
describe('a consent cannot be forged', () => {
  const consentCount = async (tenant: Tenant) =>
    Number(
      (await service.deps.db.selectFrom('consent_submissions').where('workspace_id', '=', tenant.workspaceId).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n,
    );

  it('on PATCH …/participants/{id}: consentFormSubmitted needs consent:write, as POST /consent-submissions does, for every role (403, nothing changes)', async () => {
    const tenant = await createTenant(service);
    for (const role of allRoles) {
      const { studyId, participantId } = await studyWithParticipant(tenant);
      const { token } = await tenant.tokenFor(role);
      const before = await consentCount(tenant);
      const patched = await call(service, 'PATCH', `/studies/${studyId}/participants/${participantId}`, { token, body: { consentFormSubmitted: true } });
      const posted = await call(service, 'POST', '/consent-submissions', { token, body: { personId: (await getParticipantPerson(tenant, studyId, participantId)), studyId } });
      if (roleHasRight(role, 'consent:write')) {
        expect(patched.statusCode, `${role}: ${patched.body}`).toBe(200);
        expect(posted.statusCode, `${role}: ${posted.body}`).toBe(201);
        expect(await consentCount(tenant), role).toBe(before + 2);
      } else {
        // Whatever else the role may do to participants (COLLABORATOR holds participants:write).
        expect(patched.statusCode, role).toBe(403);
        expect(posted.statusCode, role).toBe(403);
        expect(await consentCount(tenant), role).toBe(before);
        expect((await getParticipant(tenant, studyId, participantId)).consentFormSubmittedAt, role).toBeNull();
      }
    }
  });

  it("on PATCH …/participants/{id}: a study without a consent form has nothing to consent to (400 naming consentFormSubmitted, nothing changes)", async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(service, tenant, { studyType: 'INTERVIEWS' });
    const person = await createPerson(service, tenant);
    const [participant] = await addParticipants(service, tenant, studyId, [person.personId]);
    const patched = await call(service, 'PATCH', `/studies/${studyId}/participants/${participant!.participantId}`, { token: tenant.token, body: { consentFormSubmitted: true, note: 'signed' } });
    expect(patched.statusCode, patched.body).toBe(400);
    expect(patched.json<{ errors: { path: string[] }[] }>().errors[0]!.path).toEqual(['consentFormSubmitted']);
    expect(await consentCount(tenant)).toBe(0);
    expect((await getParticipant(tenant, studyId, participant!.participantId)).consentFormSubmittedAt).toBeNull();
  });

  it('on POST /consent-submissions: only the form the study or signup form presents (400 naming consentFormId, nothing recorded)', async () => {
    const tenant = await createTenant(service);
    const { studyId, personId } = await studyWithParticipant(tenant);
    const bareStudy = await createStudy(service, tenant, { studyType: 'SURVEY' });
    const form = await createForm(service, tenant, { consentFormId: 'panel-terms' });
    const bareForm = await createForm(service, tenant);
    const cases: [string, object][] = [
      ["another form than the study's", { personId, studyId, consentFormId: 'made-up-form' }],
      ["the study's form in other case", { personId, studyId, consentFormId: 'CONSENT-2026-V2' }],
      ['a study without a consent form', { personId, studyId: bareStudy }],
      ['a study without a consent form, naming one', { personId, studyId: bareStudy, consentFormId: 'made-up-form' }],
      ["another form than the signup form's", { personId, signupFormId: form.signupFormId, consentFormId: 'made-up-form' }],
      ['a signup form that presents none', { personId, signupFormId: bareForm.signupFormId }],
      ['a signup form that presents none, naming one', { personId, signupFormId: bareForm.signupFormId, consentFormId: 'panel-terms' }],
    ];
    for (const [name, body] of cases) {
      const response = await call(service, 'POST', '/consent-submissions', { token: tenant.token, body });
      expect(response.statusCode, `${name}: ${response.body}`).toBe(400);
      expect(response.json<{ errors: { path: string[] }[] }>().errors[0]!.path, name).toEqual(['consentFormId']);
    }
    expect(await consentCount(tenant)).toBe(0);
  });

  it('on the public signup route: only the form it presents, and never for a person found by email alone', async () => {
    const tenant = await createTenant(service);
    const form = await createForm(service, tenant, { consentFormId: 'panel-terms' });
    const bareForm = await createForm(service, tenant);
    const known = await createPerson(service, tenant, { email: uniqueEmail('known') });

    for (const [name, signupFormId, consentFormId] of [
      ['another form than the one presented', form.signupFormId, 'made-up-form'],
      ['a form that presents none', bareForm.signupFormId, 'panel-terms'],
    ] as const) {
      const response = await submit(service, signupFormId, { email: uniqueEmail('anon'), consentFormId });
      expect(response.statusCode, `${name}: ${response.body}`).toBe(400);
      expect(response.json<{ errors: { path: string[] }[] }>().errors[0]!.path, name).toEqual(['consentFormId']);
    }
    expect(await consentCount(tenant)).toBe(0);

    // A known email, in any spelling: the submission is recorded (the same 201 as for a stranger), its consent is not.
    for (const email of [known.email, known.email.toUpperCase()]) {
      const { submissionId } = await submitted(service, form.signupFormId, { email, consentFormId: 'panel-terms' });
      const submission = await getSubmission(service, tenant, form.signupFormId, submissionId);
      expect(submission.personId).toBe(known.personId);
      expect(submission.consentSubmissionId).toBeNull();
    }
    expect(await consentCount(tenant)).toBe(0);

    // A new person, made by the submission, on the form it presents: recorded.
    const { submissionId } = await submitted(service, form.signupFormId, { consentFormId: 'panel-terms' });
    const made = await getSubmission(service, tenant, form.signupFormId, submissionId);
    expect(made.consentSubmissionId).toMatch(/^cns_/);
    expect(await consentCount(tenant)).toBe(1);
  });

  it('holds on every consent recorded by this file: each names the form its study or signup form presents', async () => {
    const { rows } = await sql<{ n: number | string }>`
      select count(*) as n from consent_submissions c
      left join studies s on s.workspace_id = c.workspace_id and s.study_id = c.study_id
      left join signup_forms f on f.workspace_id = c.workspace_id and f.signup_form_id = c.signup_form_id
      where c.workspace_id = any(${workspacesOfThisFile})
        and (c.consent_form_id is distinct from coalesce(s.plan->>'consentFormId', f.consent_form_id) or c.consent_form_id is null)
    `.execute(service.deps.db);
    expect(workspacesOfThisFile.length).toBeGreaterThan(5);
    expect(Number(rows[0]!.n)).toBe(0);
  });
});

async function getParticipantPerson(tenant: Tenant, studyId: string, participantId: string): Promise<string> {
  const response = await call(service, 'GET', `/studies/${studyId}/participants/${participantId}`, { token: tenant.token });
  return response.json<{ personId: string }>().personId;
}
