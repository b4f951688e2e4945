import { expect } from 'vitest';
import type { ConsentSubmission } from '../src/families/consent/schemas.js';
import { call, type Tenant, type TestService } from './harness.js';

/** A ConsentSubmission as the API answers it. */
export type ConsentResponse = ConsentSubmission;

/** A consent recorded through POST /consent-submissions; expects a 201. */
export async function recordConsent(service: TestService, tenant: Tenant, body: object, token = tenant.token): Promise<ConsentResponse> {
  const response = await call(service, 'POST', '/consent-submissions', { token, body });
  expect(response.statusCode, response.body).toBe(201);
  return response.json<ConsentResponse>();
}
