import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, callTestHelper, createTenant, startTestService, type Tenant, type TestService, uniqueEmail } from '../../../test/harness.js';
import { createProperties } from '../../../test/people-factory.js';
import { describeSecurity } from '../../../test/security.js';
import { createForm, getSubmission, type SubmissionResponse, submitted } from './test-support.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service.stop());

const review = (tenant: Tenant, signupFormId: string, submissionId: string, body: unknown, token = tenant.token) =>
  call(service, 'PATCH', `/signups/${signupFormId}/submissions/${submissionId}`, { token, body });

async function setClock(at: string) {
  expect((await callTestHelper(service, 'POST', '/clock', { body: { now: at } })).statusCode).toBe(200);
}

describe('PATCH /signups/{signupFormId}/submissions/{submissionId}', () => {
  afterAll(async () => {
    await callTestHelper(service, 'DELETE', '/clock');
  });

  it('approves, rejects and withdraws a review: reviewedAt follows, by the service clock', async () => {
    const tenant = await createTenant(service);
    const form = await createForm(service, tenant);
    const { submissionId } = await submitted(service, form.signupFormId, { referralCode: 'FRIENDS' });
    const pending = await getSubmission(service, tenant, form.signupFormId, submissionId);

    await setClock('2027-03-01T09:00:00.000Z');
    const approved = await review(tenant, form.signupFormId, submissionId, { approvalStatus: 'APPROVED' });
    expect(approved.statusCode, approved.body).toBe(200);
    expect(approved.json()).toEqual({ ...pending, approvalStatus: 'APPROVED', reviewedAt: '2027-03-01T09:00:00.000Z' });
    expect(await getSubmission(service, tenant, form.signupFormId, submissionId)).toEqual(approved.json());
    const reviewer = await service.deps.db.selectFrom('signup_submissions').where('submission_id', '=', submissionId).select('reviewed_by_user_id').executeTakeFirstOrThrow();
    expect(reviewer.reviewed_by_user_id).toBe(tenant.userId);

    // The same status again changes nothing, not even the time of the review.
    await setClock('2027-03-02T09:00:00.000Z');
    const same = await review(tenant, form.signupFormId, submissionId, { approvalStatus: 'APPROVED' });
    expect(same.json()).toEqual(approved.json());

    const rejected = await review(tenant, form.signupFormId, submissionId, { approvalStatus: 'REJECTED' });
    expect(rejected.json()).toMatchObject({ approvalStatus: 'REJECTED', reviewedAt: '2027-03-02T09:00:00.000Z' });

    const withdrawn = await review(tenant, form.signupFormId, submissionId, { approvalStatus: 'PENDING_REVIEW' });
    expect(withdrawn.json()).toEqual(pending);
  });

  it('changes neither the person nor their memberships', async () => {
    const tenant = await createTenant(service);
    const form = await createForm(service, tenant);
    const { submissionId } = await submitted(service, form.signupFormId);
    const { personId } = await getSubmission(service, tenant, form.signupFormId, submissionId);
    const before = (await call(service, 'GET', `/people/${personId}`, { token: tenant.token })).json();
    expect((await review(tenant, form.signupFormId, submissionId, { approvalStatus: 'REJECTED' })).statusCode).toBe(200);
    expect((await call(service, 'GET', `/people/${personId}`, { token: tenant.token })).json()).toEqual(before);
  });

  it.each([
    ['an unknown status', { approvalStatus: 'MAYBE' }, ['approvalStatus']],
    ['a missing status', {}, ['approvalStatus']],
    ['an unknown field', { approvalStatus: 'APPROVED', note: 'x' }, ['note']],
  ])('refuses %s with 400', async (_case, body, path) => {
    const tenant = await createTenant(service);
    const form = await createForm(service, tenant);
    const { submissionId } = await submitted(service, form.signupFormId);
    const response = await review(tenant, form.signupFormId, submissionId, body);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ errors: [{ message: expect.any(String), path }] });
  });
});

describe('GET and PATCH of a submission: not found', () => {
  it('answers 404 naming signupFormId for an unknown form, and submissionId for an unknown submission or one of another form', async () => {
    const tenant = await createTenant(service);
    const form = await createForm(service, tenant);
    const otherForm = await createForm(service, tenant, { populationId: form.populationId });
    const { submissionId } = await submitted(service, form.signupFormId);
    const cases: [string, string, string[], string][] = [
      ['sgf_nope', submissionId, ['signupFormId'], 'Signup form not found'],
      [form.signupFormId, 'sgs_nope', ['submissionId'], 'Submission not found'],
      [otherForm.signupFormId, submissionId, ['submissionId'], 'Submission not found'],
    ];
    for (const [signupFormId, id, path, message] of cases) {
      for (const [method, body] of [['GET', undefined], ['PATCH', { approvalStatus: 'APPROVED' }]] as const) {
        const response = await call(service, method, `/signups/${signupFormId}/submissions/${id}`, { token: tenant.token, body });
        expect(response.statusCode, `${method} ${signupFormId} ${id}`).toBe(404);
        expect(response.json()).toEqual({ errors: [{ message, path }] });
      }
    }
    // Nothing was reviewed by the refused PATCH.
    expect((await getSubmission(service, tenant, form.signupFormId, submissionId)).approvalStatus).toBe('PENDING_REVIEW');
  });

  it("hides a deleted person's submissions at once (404 to GET and PATCH)", async () => {
    const tenant = await createTenant(service);
    const form = await createForm(service, tenant);
    const { submissionId } = await submitted(service, form.signupFormId);
    const { personId } = await getSubmission(service, tenant, form.signupFormId, submissionId);
    expect((await call(service, 'DELETE', `/people/${personId}`, { token: tenant.token })).statusCode).toBe(200);
    const read = await call(service, 'GET', `/signups/${form.signupFormId}/submissions/${submissionId}`, { token: tenant.token });
    expect(read.statusCode).toBe(404);
    expect(read.json()).toEqual({ errors: [{ message: 'Submission not found', path: ['submissionId'] }] });
    expect((await review(tenant, form.signupFormId, submissionId, { approvalStatus: 'APPROVED' })).statusCode).toBe(404);
  });
});

describe('what a submission keeps', () => {
  it('holds none of the personal data the form carried: the person row does, and the deletion purge erases it there', async () => {
    const tenant = await createTenant(service);
    const { Secret } = await createProperties(service, tenant, [{ name: 'Secret', propertyType: 'STRING', isPII: true }]);
    const form = await createForm(service, tenant, { consentFormId: 'consent-v1' });
    const email = uniqueEmail('private');
    const personal = [email, 'Privatefirst', 'Privatelast', '+44 7700 900123', 'privatevalue'];
    const { submissionId } = await submitted(service, form.signupFormId, {
      email,
      firstName: personal[1],
      lastName: personal[2],
      phone: personal[3],
      properties: { [Secret!]: personal[4] },
      referralCode: 'SPRING',
      consentFormId: 'consent-v1',
    });
    const submission: SubmissionResponse = await getSubmission(service, tenant, form.signupFormId, submissionId);
    const { rows } = await sql<{ text: string }>`
      select s::text || coalesce((select c::text from consent_submissions c where c.workspace_id = s.workspace_id and c.consent_submission_id = s.consent_submission_id), '') as text
      from signup_submissions s where s.workspace_id = ${tenant.workspaceId} and s.submission_id = ${submissionId}
    `.execute(service.deps.db);
    expect(rows).toHaveLength(1);
    for (const value of personal) expect(rows[0]!.text.toLowerCase()).not.toContain(value.toLowerCase());
    expect(rows[0]!.text).toContain(submission.personId);
  });
});

describeSecurity('GET /signups/{signupFormId}/submissions/{submissionId}', () => service, {
  method: 'GET',
  right: 'signups:read',
  addressesResource: true,
  request: async (tenant) => {
    const form = await createForm(service, tenant);
    const { submissionId } = await submitted(service, form.signupFormId);
    return { url: `/signups/${form.signupFormId}/submissions/${submissionId}` };
  },
});

describeSecurity('PATCH /signups/{signupFormId}/submissions/{submissionId}', () => service, {
  method: 'PATCH',
  right: 'signups:write',
  addressesResource: true,
  request: async (tenant) => {
    const form = await createForm(service, tenant);
    const { submissionId } = await submitted(service, form.signupFormId);
    return { url: `/signups/${form.signupFormId}/submissions/${submissionId}`, body: { approvalStatus: 'APPROVED' } };
  },
});
