import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, callTestHelper, createTenant, operatorToken, startTestService, type Tenant, type TestService } from '../../../test/harness.js';
import { createParticipant, incentiveStatus, sendIncentive, setClock } from '../../../test/incentives-factory.js';
import { describeSecurity, type SecurityCase } from '../../../test/security.js';
import { allRoles } from '../../http/rights.js';

/**
 * The test-helper routes (TEST_HELPERS=1), issue 32 item 6: the clock answers the operator token
 * (TEST_HELPERS_TOKEN) alone, no workspace token; every other helper answers a workspace's
 * SUPER_ADMIN, held to that workspace, and the operator token for any.
 */

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

const scopedHelpers: (Omit<SecurityCase, 'right' | 'addressesResource'> & { name: string })[] = [
  { name: 'POST /test-helpers/jobs/run', method: 'POST', request: async (tenant) => ({ url: '/test-helpers/jobs/run', query: { workspaceId: tenant.workspaceId } }) },
  { name: 'POST /test-helpers/webhooks/run', method: 'POST', request: async (tenant) => ({ url: '/test-helpers/webhooks/run', query: { workspaceId: tenant.workspaceId } }) },
  { name: 'POST /test-helpers/mail/run', method: 'POST', request: async (tenant) => ({ url: '/test-helpers/mail/run', query: { workspaceId: tenant.workspaceId } }) },
  { name: 'POST /test-helpers/incentives/{incentiveId}/claim', method: 'POST', request: async (tenant) => ({ url: `/test-helpers/incentives/${await unclaimedIncentive(tenant)}/claim` }) },
  { name: 'POST /test-helpers/incentives/{incentiveId}/fail', method: 'POST', request: async (tenant) => ({ url: `/test-helpers/incentives/${await unclaimedIncentive(tenant)}/fail` }) },
];

describe('the clock, an operator control', () => {
  const clockCalls = [
    { name: 'POST /test-helpers/clock', method: 'POST', body: { now: '2031-01-01T00:00:00.000Z' } },
    { name: 'DELETE /test-helpers/clock', method: 'DELETE', body: undefined },
  ];
  for (const clock of clockCalls) {
    it(`${clock.name}: 401 without a token, 403 for every workspace token (SUPER_ADMIN too) and a wrong operator token, 200 for the operator token`, async () => {
      const tenant = await createTenant(service);
      await setClock(service, '2030-06-01T00:00:00.000Z');
      const send = (token?: string) => call(service, clock.method, '/test-helpers/clock', { token, body: clock.body });
      const anonymous = await send();
      expect(anonymous.statusCode).toBe(401);
      expect(anonymous.body).toBe('Unauthorized');
      const refusedTokens = [tenant.token, `${operatorToken}x`, operatorToken.slice(0, -1)];
      for (const role of allRoles) refusedTokens.push((await tenant.tokenFor(role)).token);
      for (const token of refusedTokens) {
        const response = await send(token);
        expect(response.statusCode, token).toBe(403);
        expect(response.body).toBe('Forbidden');
      }
      // Nothing moved: the clock is where the operator left it.
      expect(service.deps.clock.now().toISOString()).toBe('2030-06-01T00:00:00.000Z');
      const done = await send(operatorToken);
      expect(done.statusCode, done.body).toBe(200);
      if (clock.method === 'POST') expect(service.deps.clock.now().toISOString()).toBe('2031-01-01T00:00:00.000Z');
      else expect(Math.abs(service.deps.clock.now().getTime() - Date.now())).toBeLessThan(60_000);
    });
  }
});

describe("the other helpers, held to the caller's workspace", () => {
  let mine: Tenant;
  let theirs: Tenant;
  beforeAll(async () => {
    mine = await createTenant(service, 'Mine');
    theirs = await createTenant(service, 'Theirs');
  });

  for (const path of ['/jobs/run', '/webhooks/run', '/mail/run']) {
    it(`POST /test-helpers${path}: another workspace's id is a 404; without one, the caller's own alone`, async () => {
      const other = await callTestHelper(service, 'POST', path, { token: mine.token, query: { workspaceId: theirs.workspaceId } });
      expect(other.statusCode, other.body).toBe(404);
      expect(other.json()).toEqual({ errors: [{ message: 'Workspace not found', path: ['workspaceId'] }] });
      const own = await callTestHelper(service, 'POST', path, { token: mine.token });
      expect(own.statusCode, own.body).toBe(200);
      if (path === '/jobs/run') {
        const ran = own.json<{ jobs: { workspaceId: string }[] }>().jobs;
        expect(ran.length).toBeGreaterThan(0);
        expect(new Set(ran.map((job) => job.workspaceId))).toEqual(new Set([mine.workspaceId]));
      }
    });
  }

  it("a SUPER_ADMIN's jobs/run, with the clock moved past a year, does not expire another workspace's incentive; the operator's run of that workspace does", async () => {
    await setClock(service, '2030-01-01T00:00:00.000Z');
    const { participantId } = await createParticipant(service, theirs);
    const { incentiveId } = await sendIncentive(service, theirs, participantId, { type: 'MONEY_OR_GIFT_CARD', amountCents: 500 });
    await setClock(service, '2031-06-01T00:00:00.000Z');
    for (const query of [{}, { workspaceId: mine.workspaceId }] as Record<string, string>[]) {
      const run = await callTestHelper(service, 'POST', '/jobs/run', { token: mine.token, query });
      expect(run.statusCode, run.body).toBe(200);
    }
    expect(await incentiveStatus(service, theirs, incentiveId)).toBe('UNCLAIMED');
    const operatorRun = await callTestHelper(service, 'POST', '/jobs/run', { query: { workspaceId: theirs.workspaceId } });
    expect(operatorRun.statusCode, operatorRun.body).toBe(200);
    expect(await incentiveStatus(service, theirs, incentiveId)).toBe('EXPIRED');
    await callTestHelper(service, 'DELETE', '/clock');
  });

  for (const action of ['claim', 'fail']) {
    it(`POST /test-helpers/incentives/{id}/${action}: another workspace's incentive is a 404 and stays as it was; the operator reaches it`, async () => {
      const incentiveId = await unclaimedIncentive(theirs);
      const refused = await callTestHelper(service, 'POST', `/incentives/${incentiveId}/${action}`, { token: mine.token });
      expect(refused.statusCode, refused.body).toBe(404);
      expect(refused.json()).toEqual({ errors: [{ message: 'Incentive not found', path: ['incentiveId'] }] });
      expect(await incentiveStatus(service, theirs, incentiveId)).toBe('UNCLAIMED');
      const own = await callTestHelper(service, 'POST', `/incentives/${incentiveId}/${action}`, { token: theirs.token });
      expect(own.statusCode, own.body).toBe(200);
    });
  }

  for (const helper of scopedHelpers) {
    it(`${helper.name}: 401 without a token, 403 for every role but SUPER_ADMIN, 200 for a SUPER_ADMIN and for the operator`, async () => {
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
      for (const token of [tenant.token, (await tenant.tokenFor('SUPER_ADMIN')).token, operatorToken]) {
        const response = await send(token);
        expect(response.statusCode, response.body).toBe(200);
      }
    });
  }
});

for (const helper of scopedHelpers) {
  describeSecurity(helper.name, () => service, { ...helper, right: 'test-helpers:run', addressesResource: false, success: 200 });
}
