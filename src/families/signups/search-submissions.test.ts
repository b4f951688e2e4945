import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type Tenant, type TestService } from '../../../test/harness.js';
import { describeSecurity } from '../../../test/security.js';
import { createStudy, insertParticipants, insertSubmissions } from '../participants/search-fixtures.js';
import { insertPeople } from '../people/search-fixtures.js';
import { createForm, type SignupFormResponse } from './test-support.js';

/** E6, POST /signups/{signupFormId}/submissions/search. */

const NOW = Date.parse('2026-11-22T12:00:00.000Z');
const ago = (days: number) => new Date(NOW - days * 86_400_000).toISOString();

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
  service.deps.clock.set(new Date(NOW));
});
afterAll(async () => service.stop());

interface PageBody {
  results: { submissionId: string; personId: string; approvalStatus: string; referralCode: string | null }[];
  total: number;
  pageInfo: { hasNextPage: boolean; endCursor: string };
}

const search = (tenant: Tenant, formId: string, body: unknown, token = tenant.token) => call(service, 'POST', `/signups/${formId}/submissions/search`, { token, body });

async function readAll(tenant: Tenant, formId: string, body: { filter?: unknown; studyId?: string }, size: number) {
  const ids: string[] = [];
  let startCursor: string | undefined;
  for (;;) {
    const response = await search(tenant, formId, { ...body, pageInfo: { size, ...(startCursor ? { startCursor } : {}) } });
    expect(response.statusCode, response.body).toBe(200);
    const page = response.json<PageBody>();
    ids.push(...page.results.map((submission) => submission.submissionId));
    if (!page.pageInfo.hasNextPage) return { ids, total: page.total };
    startCursor = page.pageInfo.endCursor;
  }
}

describe('E6: searching submissions', () => {
  let tenant: Tenant;
  let form: SignupFormResponse;
  let studyId: string;
  let submissions: string[];
  let people: string[];

  beforeAll(async () => {
    tenant = await createTenant(service);
    form = await createForm(service, tenant);
    const otherForm = await createForm(service, tenant);
    studyId = await createStudy(service, tenant, 'INTERVIEWS');
    people = await insertPeople(service, tenant.workspaceId, [
      { email: 'zoe@example.org', firstName: 'Zoe' },
      { email: 'al@example.org', firstName: 'Al' },
      { email: 'mo@example.org', firstName: 'Mo' },
      { email: 'gone@example.org', deletedAt: ago(1) },
    ]);
    submissions = await insertSubmissions(service, tenant.workspaceId, [
      { signupFormId: form.signupFormId, personId: people[0]!, at: ago(3), referralCode: 'fb', approvalStatus: 'APPROVED' },
      { signupFormId: form.signupFormId, personId: people[1]!, at: ago(2), referralCode: null },
      { signupFormId: form.signupFormId, personId: people[2]!, at: ago(1), referralCode: 'tw', approvalStatus: 'REJECTED' },
      // A deleted person's submission, and another form's, never appear.
      { signupFormId: form.signupFormId, personId: people[3]!, at: ago(1) },
      { signupFormId: otherForm.signupFormId, personId: people[0]!, at: ago(1) },
    ]);
    // Zoe and Mo take part in the study; Al does not.
    await insertParticipants(service, tenant.workspaceId, [
      { studyId, studyType: 'INTERVIEWS', personId: people[0]!, participation: { status: 'INVITED', invitedAt: ago(1) } },
      { studyId, studyType: 'INTERVIEWS', personId: people[2]!, participation: { status: 'COMPLETED', completedAt: ago(1) } },
    ]);
  });

  it('lists the live submissions of the form in the order they came in, with the exact total', async () => {
    const response = await search(tenant, form.signupFormId, undefined);
    expect(response.statusCode, response.body).toBe(200);
    const body = response.json<PageBody>();
    expect(body.results.map((submission) => submission.submissionId)).toEqual(submissions.slice(0, 3));
    expect(body.results[0]).toMatchObject({ submissionId: submissions[0], signupFormId: form.signupFormId, personId: people[0], approvalStatus: 'APPROVED', referralCode: 'fb' });
    expect(body.total).toBe(3);
    expect((await readAll(tenant, form.signupFormId, {}, 1)).ids).toEqual(submissions.slice(0, 3));
  });

  it('filters and sorts by PERSON names of the sender', async () => {
    const byName = { filters: [], sort: { operator: 'ASC', propertyGroup: 'PERSON', propertyName: 'FIRST_NAME' } };
    expect((await readAll(tenant, form.signupFormId, { filter: byName }, 1)).ids).toEqual([submissions[1], submissions[2], submissions[0]]);
    const approved = { filters: [{ property: { propertyGroup: 'PERSON', propertyName: 'FORM_APPROVAL_STATUS' }, comparison: 'IS_NONE_OF', value: ['REJECTED'] }] };
    // Zoe's latest submission (to the other form) is pending: FORM_APPROVAL_STATUS reads the person's latest.
    expect((await readAll(tenant, form.signupFormId, { filter: approved }, 10)).ids).toEqual([submissions[0], submissions[1]]);
    const email = { filters: [{ property: { propertyGroup: 'PERSON', propertyName: 'EMAIL' }, comparison: 'STARTS_WITH', value: 'MO@' }] };
    expect((await readAll(tenant, form.signupFormId, { filter: email }, 10)).ids).toEqual([submissions[2]]);
  });

  it("reads PARTICIPANT names of the person's participant of studyId, and refuses them without studyId", async () => {
    const status = (value: string[]) => ({ filters: [{ property: { propertyGroup: 'PARTICIPANT', propertyName: 'STATUS' }, comparison: 'IS_ANY_OF', value }] });
    expect((await readAll(tenant, form.signupFormId, { filter: status(['INVITED', 'COMPLETED']), studyId }, 10)).ids).toEqual([submissions[0], submissions[2]]);
    const notParticipating = { filters: [{ property: { propertyGroup: 'PARTICIPANT', propertyName: 'STATUS' }, comparison: 'IS_EMPTY' }] };
    expect((await readAll(tenant, form.signupFormId, { filter: notParticipating, studyId }, 10)).ids).toEqual([submissions[1]]);
    const sorted = { filters: [], sort: { operator: 'DESC', propertyGroup: 'PARTICIPANT', propertyName: 'STATUS' } };
    expect((await readAll(tenant, form.signupFormId, { filter: sorted, studyId }, 1)).ids).toEqual([submissions[0], submissions[2], submissions[1]]);
    const refused = await search(tenant, form.signupFormId, { filter: status(['INVITED']) });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toEqual({ errors: [{ message: expect.stringMatching(/need studyId/), path: ['filter', 'filters', '0', 'property', 'propertyGroup'] }] });
    // INCENTIVE names need no study: without one they read the person's latest incentive (none here).
    const incentive = { filters: [{ property: { propertyGroup: 'INCENTIVE', propertyName: 'STATUS' }, comparison: 'IS_EMPTY' }] };
    expect((await readAll(tenant, form.signupFormId, { filter: incentive }, 10)).total).toBe(3);
  });

  it('answers 404 for an unknown or foreign form and an unknown study; 400 for bad input and cursors', async () => {
    const other = await createTenant(service, 'Other');
    for (const formId of ['sgf_nope', (await createForm(service, other)).signupFormId]) {
      const response = await search(tenant, formId, {});
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({ errors: [{ message: 'Signup form not found', path: ['signupFormId'] }] });
    }
    const unknownStudy = await search(tenant, form.signupFormId, { studyId: 'stu_nope' });
    expect(unknownStudy.statusCode).toBe(404);
    expect(unknownStudy.json()).toEqual({ errors: [{ message: 'Study not found', path: ['studyId'] }] });
    for (const [body, path] of [
      [{ pageInfo: { size: 0 } }, ['pageInfo', 'size']],
      [{ studyId: '' }, ['studyId']],
      [{ extra: true }, ['extra']],
      [{ pageInfo: { startCursor: 'abc.def' } }, ['pageInfo', 'startCursor']],
    ] as const) {
      const response = await search(tenant, form.signupFormId, body);
      expect(response.statusCode, JSON.stringify(body)).toBe(400);
      expect(response.json<{ errors: { path: string[] }[] }>().errors[0]!.path).toEqual(path);
    }
    // A cursor of the search without a study is no cursor of the search with one.
    const cursor = (await search(tenant, form.signupFormId, { pageInfo: { size: 1 } })).json<PageBody>().pageInfo.endCursor;
    expect((await search(tenant, form.signupFormId, { studyId, pageInfo: { startCursor: cursor } })).statusCode).toBe(400);
  });
});

describeSecurity('POST /signups/{signupFormId}/submissions/search', () => service, {
  method: 'POST',
  right: 'signups:read',
  addressesResource: true,
  request: async (tenant, svc) => ({ url: `/signups/${(await createForm(svc, tenant)).signupFormId}/submissions/search`, body: {} }),
});
