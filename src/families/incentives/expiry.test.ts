import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, callTestHelper, createTenant, startTestService, type Tenant, type TestService } from '../../../test/harness.js';
import { createParticipant, incentiveRow, incentiveStatus, sendIncentive, setClock } from '../../../test/incentives-factory.js';
import { JobRunner } from '../../jobs/runner.js';
import { type ExpiryResult, EXPIRY_QUEUE, expireIncentivesHandler, expireIncentivesSchedule, PROVIDER_QUEUE, providerWorkHandler, providerWorkSchedule } from './jobs.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service.stop());

/** Runs the tenant's due background work (jobs/run for its workspace), its expiry among them. */
async function runJobs(tenant: Tenant) {
  const response = await callTestHelper(service, 'POST', '/jobs/run', { query: { workspaceId: tenant.workspaceId } });
  expect(response.statusCode, response.body).toBe(200);
  const runs = response.json<{ jobs: { queue: string; workspaceId: string; outcome: string }[] }>().jobs.filter((run) => run.queue === EXPIRY_QUEUE);
  expect(runs.map((run) => [run.workspaceId, run.outcome])).toEqual([[tenant.workspaceId, 'completed']]);
}

/** A runner of the expiry queue alone, as another instance would run it; tests drain it for their tenant's workspace. */
function expiryRunner() {
  const runner = new JobRunner({ db: service.deps.db, clock: service.deps.clock });
  runner.register(expireIncentivesHandler(service.deps.db, service.deps.clock, service.deps.providers));
  runner.schedule(expireIncentivesSchedule);
  return runner;
}

/** A runner of the provider queue alone (retries of provider calls whose outcome was not known). */
function providerRunner() {
  const runner = new JobRunner({ db: service.deps.db, clock: service.deps.clock });
  runner.register(providerWorkHandler(service.deps.db, service.deps.clock, service.deps.providers));
  runner.schedule(providerWorkSchedule);
  return runner;
}

async function jobResult(jobId: string) {
  return (await service.deps.db.selectFrom('jobs').select('result').where('job_id', '=', jobId).executeTakeFirstOrThrow()).result;
}

async function sendAt(tenant: Tenant, at: string, body: object = {}) {
  await setClock(service, at);
  const { participantId } = await createParticipant(service, tenant);
  const incentive = await sendIncentive(service, tenant, participantId, body);
  expect(incentive.sentAt).toBe(at);
  return incentive.incentiveId;
}

/**
 * On PostgreSQL the test files share a database. Every run here is of the test's own workspace
 * (jobs/run?workspaceId=, runDue({ workspaceId })), whose expiry and provider work touch that
 * workspace's incentives alone, as other files' runs touch theirs alone: no test sees another's
 * sweep, whatever the clocks.
 */
const own = (tenant: Tenant) => ({ workspaceId: tenant.workspaceId });

describe('incentive expiry', () => {
  it('expires (jobs/run) UNCLAIMED incentives sent after 31 Jan 2026 at exactly one year; never those sent before', async () => {
    const tenant = await createTenant(service);
    const before = await sendAt(tenant, '2026-01-31T23:59:59.999Z');
    const after = await sendAt(tenant, '2026-02-01T00:00:00.000Z');
    const claimed = await sendAt(tenant, '2026-02-01T00:00:00.000Z');
    expect((await callTestHelper(service, 'POST', `/incentives/${claimed}/claim`)).statusCode).toBe(200);
    const custom = await sendAt(tenant, '2026-02-01T00:00:00.000Z', { type: 'CUSTOM' });
    const canceled = await sendAt(tenant, '2026-02-01T00:00:00.000Z');
    expect((await call(service, 'POST', `/incentives/${canceled}/cancel`, { token: tenant.token })).statusCode).toBe(200);

    await setClock(service, '2027-02-01T00:00:00.000Z');
    await runJobs(tenant);
    expect(await incentiveStatus(service, tenant, after)).toBe('EXPIRED');
    // The audit trail names the job as the actor of each move, written with it.
    const trail = await service.deps.db
      .selectFrom('audit_events')
      .select(['actor_kind', 'actor_service', 'operation_id', 'after_state'])
      .where('workspace_id', '=', tenant.workspaceId)
      .where('resource_id', '=', after)
      .where('actor_kind', '=', 'SERVICE')
      .execute();
    expect(trail.map((entry) => entry.operation_id)).toContain('incentive.EXPIRY_STARTED');
    expect(new Set(trail.map((entry) => entry.actor_service))).toEqual(new Set(['incentives.expire']));
    expect(trail.map((entry) => entry.after_state)).toContain('EXPIRED');
    // Expired through the provider: its order was voided first, so no one can claim it any more.
    expect(await incentiveRow(service, tenant, after)).toMatchObject({ expired_at: expect.any(String), provider_state: 'VOIDED', void_purpose: 'EXPIRE' });
    // The expiry is a webhook event too, written with it (src/families/webhooks/).
    const events = await service.deps.db.selectFrom('webhook_messages').select('payload').where('workspace_id', '=', tenant.workspaceId).where('event_type', '=', 'incentive.status_changed').execute();
    expect(events.map((event) => (event.payload as { data: object }).data)).toContainEqual(
      expect.objectContaining({ incentiveId: after, from: 'UNCLAIMED', to: 'EXPIRED', failureReason: null }),
    );
    expect(await incentiveStatus(service, tenant, before)).toBe('UNCLAIMED');
    expect(await incentiveStatus(service, tenant, claimed)).toBe('CLAIMED');
    expect(await incentiveStatus(service, tenant, custom)).toBe('SENT');
    expect(await incentiveStatus(service, tenant, canceled)).toBe('CANCELED');

    // An expired incentive can no longer be claimed, canceled or resent.
    const claim = await callTestHelper(service, 'POST', `/incentives/${after}/claim`);
    expect(claim.statusCode).toBe(409);
    for (const action of ['cancel', 'resend']) {
      const response = await call(service, 'POST', `/incentives/${after}/${action}`, { token: tenant.token });
      expect(response.statusCode).toBe(409);
      expect(response.json().errors[0].message).toBe('Incentive has expired');
    }

    await setClock(service, '2027-06-01T00:00:00.000Z');
    await runJobs(tenant);
    expect(await incentiveStatus(service, tenant, before)).toBe('UNCLAIMED');
  });

  it('expires at one year to the millisecond, and not a millisecond before', async () => {
    const tenant = await createTenant(service);
    const runner = expiryRunner();
    const sentAt = '2030-03-01T12:00:00.000Z';
    const incentive = await sendAt(tenant, sentAt);
    const later = await sendAt(tenant, '2030-03-01T12:00:00.001Z');
    await setClock(service, '2031-03-01T11:59:59.999Z');
    await runner.runDue(own(tenant));
    expect(await incentiveStatus(service, tenant, incentive)).toBe('UNCLAIMED');
    await setClock(service, '2031-03-01T12:00:00.000Z');
    const report = await runner.runDue(own(tenant));
    expect(report.jobs.map((run) => [run.queue, run.workspaceId, run.outcome])).toEqual([[EXPIRY_QUEUE, tenant.workspaceId, 'completed']]);
    expect(await incentiveStatus(service, tenant, incentive)).toBe('EXPIRED');
    expect((await incentiveRow(service, tenant, incentive)).expired_at).toBe('2031-03-01T12:00:00.000Z');
    expect(service.deps.providers.sandbox.orderOf(tenant.workspaceId, incentive)).toMatchObject({ voided: true });
    expect(await incentiveStatus(service, tenant, later)).toBe('UNCLAIMED');
    expect(service.deps.providers.sandbox.orderOf(tenant.workspaceId, later)).toMatchObject({ voided: false });
  });

  it('marks EXPIRED only once the provider confirms the void: until then it stays UNCLAIMED, expiring, and the provider work asks again', async () => {
    const tenant = await createTenant(service);
    const sandbox = service.deps.providers.sandbox;
    const incentive = await sendAt(tenant, '2032-01-01T00:00:00.000Z');
    await setClock(service, '2033-01-01T00:00:00.000Z');
    sandbox.injectFault('void', 'lose-request');
    const report = await expiryRunner().runDue(own(tenant));
    const [run] = report.jobs.filter((job) => job.queue === EXPIRY_QUEUE);
    expect(run?.outcome).toBe('completed');
    expect(await jobResult(run!.jobId)).toEqual({ expired: 0, voidsPending: 1 } satisfies ExpiryResult);
    expect(await incentiveRow(service, tenant, incentive)).toMatchObject({ status: 'UNCLAIMED', provider_state: 'VOIDING', void_purpose: 'EXPIRE', expired_at: null });
    for (const action of ['cancel', 'resend']) {
      const response = await call(service, 'POST', `/incentives/${incentive}/${action}`, { token: tenant.token });
      expect(response.statusCode, action).toBe(409);
      expect(response.json()).toEqual({ errors: [{ message: 'Incentive is expiring: its order is being voided at the provider', path: ['incentiveId'] }] });
    }

    await setClock(service, '2033-01-01T00:01:00.000Z');
    const retried = await providerRunner().runDue(own(tenant));
    expect(retried.jobs.map((job) => [job.queue, job.outcome])).toEqual([[PROVIDER_QUEUE, 'completed']]);
    expect(await jobResult(retried.jobs[0]!.jobId)).toMatchObject({ voided: 1 });
    expect(await incentiveRow(service, tenant, incentive)).toMatchObject({ status: 'EXPIRED', provider_state: 'VOIDED', void_purpose: 'EXPIRE', provider_next_attempt_at: null });
    expect((await callTestHelper(service, 'POST', `/incentives/${incentive}/claim`)).statusCode).toBe(409);
  });

  it('leaves an incentive UNCLAIMED when the provider refuses the void (it holds the order), and asks again at the next run', async () => {
    const tenant = await createTenant(service);
    const sandbox = service.deps.providers.sandbox;
    const incentive = await sendAt(tenant, '2034-01-01T00:00:00.000Z');
    await setClock(service, '2035-01-01T00:00:00.000Z');
    sandbox.injectFault('void', 'refuse');
    const [run] = (await expiryRunner().runDue(own(tenant))).jobs.filter((job) => job.queue === EXPIRY_QUEUE);
    expect(await jobResult(run!.jobId)).toEqual({ expired: 0, voidsPending: 1 });
    expect(await incentiveRow(service, tenant, incentive)).toMatchObject({ status: 'UNCLAIMED', provider_state: 'ORDERED', void_purpose: null });
    // The provider's claim report settles it as what happened: the money went out.
    expect((await callTestHelper(service, 'POST', `/incentives/${incentive}/claim`)).statusCode).toBe(200);
    await setClock(service, '2035-01-01T01:00:00.000Z');
    expect((await expiryRunner().runDue(own(tenant))).jobs).toMatchObject([{ queue: EXPIRY_QUEUE, outcome: 'completed' }]);
    expect(await incentiveStatus(service, tenant, incentive)).toBe('CLAIMED');
  });

  it('counts a year from 29 February as ending on 1 March', async () => {
    const tenant = await createTenant(service);
    const runner = expiryRunner();
    const incentive = await sendAt(tenant, '2028-02-29T00:00:00.000Z');
    await setClock(service, '2029-02-28T23:00:00.000Z');
    await runner.runDue(own(tenant));
    expect(await incentiveStatus(service, tenant, incentive)).toBe('UNCLAIMED');
    await setClock(service, '2029-03-01T00:00:00.000Z');
    await runner.runDue(own(tenant));
    expect(await incentiveStatus(service, tenant, incentive)).toBe('EXPIRED');
  });

  it('runs once per slot however many instances run it', async () => {
    const tenant = await createTenant(service);
    const incentive = await sendAt(tenant, '2031-05-01T00:00:00.000Z');
    await setClock(service, '2032-05-01T00:30:00.000Z');
    const runners = [expiryRunner(), expiryRunner(), expiryRunner()];
    const reports = await Promise.all(runners.map((runner) => runner.runDue(own(tenant))));
    const runs = reports.flatMap((report) => report.jobs);
    expect(runs.map((run) => [run.queue, run.outcome])).toEqual([[EXPIRY_QUEUE, 'completed']]);
    const jobs = await service.deps.db
      .selectFrom('jobs')
      .select('state')
      .where('workspace_id', '=', tenant.workspaceId)
      .where('queue', '=', EXPIRY_QUEUE)
      .where('singleton_key', '=', 'incentives.expire@2032-05-01T00:00:00.000Z')
      .execute();
    expect(jobs).toEqual([{ state: 'completed' }]);
    expect(await incentiveStatus(service, tenant, incentive)).toBe('EXPIRED');
  });
});
