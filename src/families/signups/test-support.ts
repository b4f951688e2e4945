import { expect } from 'vitest';
import { call, type Tenant, type TestService, uniqueEmail } from '../../../test/harness.js';
import { createPopulation } from '../../../test/people-factory.js';

export interface SignupFormResponse {
  signupFormId: string;
  name: string;
  populationId: string;
  consentFormId: string | null;
  createdAt: string;
}

export interface SubmissionResponse {
  submissionId: string;
  signupFormId: string;
  personId: string;
  approvalStatus: 'PENDING_REVIEW' | 'APPROVED' | 'REJECTED';
  submittedAt: string;
  consentSubmissionId: string | null;
  referralCode: string | null;
  reviewedAt: string | null;
}

/** A signup form made through POST /signups (in a new population unless one is given). */
export async function createForm(service: TestService, tenant: Tenant, body: { name?: string; populationId?: string; consentFormId?: string } = {}): Promise<SignupFormResponse> {
  const populationId = body.populationId ?? (await createPopulation(service, tenant, 'Signups'));
  const consent = body.consentFormId !== undefined ? { consentFormId: body.consentFormId } : {};
  const response = await call(service, 'POST', '/signups', { token: tenant.token, body: { name: body.name ?? 'Join our panel', populationId, ...consent } });
  expect(response.statusCode, response.body).toBe(201);
  return response.json<SignupFormResponse>();
}

/** Sends a form through the public route, without a token. */
export function submit(service: TestService, signupFormId: string, body: object, remoteAddress?: string) {
  return service.app.inject({ method: 'POST', url: `/v1/public/signups/${signupFormId}/submissions`, payload: body, ...(remoteAddress ? { remoteAddress } : {}) });
}

/** A submission sent through the public route (a fresh email unless one is given); returns its id and the email. */
export async function submitted(service: TestService, signupFormId: string, body: object = {}) {
  const payload = { email: uniqueEmail('signup'), ...body } as { email: string };
  const response = await submit(service, signupFormId, payload);
  expect(response.statusCode, response.body).toBe(201);
  return { submissionId: response.json<{ submissionId: string }>().submissionId, email: payload.email };
}

export async function getSubmission(service: TestService, tenant: Tenant, signupFormId: string, submissionId: string) {
  const response = await call(service, 'GET', `/signups/${signupFormId}/submissions/${submissionId}`, { token: tenant.token });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<SubmissionResponse>();
}
