import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, callTestHelper, createTenant, startTestService, type Tenant, type TestService } from '../../../test/harness.js';
import { createParticipant, sendIncentive } from '../../../test/incentives-factory.js';
import { describeSecurity, type SecurityCase } from '../../../test/security.js';
import { allRoles } from '../../http/rights.js';

/** The test-helper routes (TEST_HELPERS=1) answer a SUPER_ADMIN's token alone, even when enabled. */

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => {
  await callTestHelper(service, 'DELETE', '/clock');
  await service.stop();
});

/** An UNCLAIMED incentive of the tenant, ordered at the sandbox, for the provider's reports. */
async function unclaimedIncentive(tenant: Tenant) {
  const { participantId } = await createParticipant(service, tenant);
  return (await sendIncentive(service, tenant, participantId, { type: 'MONEY_OR_GIFT_CARD', amountCents: 500 })).incentiveId;
}

const helpers: (Omit<SecurityCase, 'right' | 'addressesResource'> & { name: string })[] = [
  { name: 'POST /test-helpers/clock', method: 'POST', request: async () => ({ url: '/test-helpers/clock', body: { now: new Date().toISOString() } }) },
  { name: 'DELETE /test-helpers/clock', method: 'DELETE', request: async () => ({ url: '/test-helpers/clock' }) },
  {
    name: 'POST /test-helpers/jobs/run',
    method: 'POST',
    request: async (tenant) => ({ url: '/test-helpers/jobs/run', query: { workspaceId: tenant.workspaceId } }),
  },
  {
    name: 'POST /test-helpers/incentives/{incentiveId}/claim',
    method: 'POST',
    request: async (tenant) => ({ url: `/test-helpers/incentives/${await unclaimedIncentive(tenant)}/claim` }),
  },
  {
    name: 'POST /test-helpers/incentives/{incentiveId}/fail',
    method: 'POST',
    request: async (tenant) => ({ url: `/test-helpers/incentives/${await unclaimedIncentive(tenant)}/fail` }),
  },
];

describe('the test helpers, with TEST_HELPERS=1', () => {
  for (const helper of helpers) {
    it(`${helper.name}: 401 without a token, 403 for every role but SUPER_ADMIN, 200 for a SUPER_ADMIN`, async () => {
      const tenant = await createTenant(service);
      const send = async (token?: string) => {
        const request = await helper.request(tenant, service);
        return call(service, helper.method, request.url, { token, body: request.body, query: request.query });
      };
      const anonymous = await send();
      expect(anonymous.statusCode).toBe(401);
      expect(anonymous.body).toBe('Unauthorized');
      for (const role of allRoles.filter((role) => role !== 'SUPER_ADMIN')) {
        const response = await send((await tenant.tokenFor(role)).token);
        expect(response.statusCode, role).toBe(403);
        expect(response.body, role).toBe('Forbidden');
      }
      // The workspace's first user, and any other SUPER_ADMIN.
      for (const token of [tenant.token, (await tenant.tokenFor('SUPER_ADMIN')).token]) {
        const response = await send(token);
        expect(response.statusCode, response.body).toBe(200);
      }
    });
  }
});

for (const helper of helpers) {
  describeSecurity(helper.name, () => service, { ...helper, right: 'test-helpers:run', addressesResource: false, success: 200 });
}
