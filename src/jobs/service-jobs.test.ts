import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callTestHelper, createTenant, startTestService, type Tenant, type TestService } from '../../test/harness.js';
import { startPrivateTestService } from '../../test/private-database.js';
import { ConfigError, loadConfig } from '../config.js';
import { expireIncentivesSchedule, providerWorkSchedule, reconcileOrdersSchedule } from '../families/incentives/jobs.js';
import { purgePeopleSchedule } from '../families/people/purge.js';
import { pruneIdempotencyKeysSchedule } from '../http/idempotency/prune.js';
import { pruneSearchChangesSchedule } from '../search/counts/prune.js';
import { sweepPropertyStatisticsSchedule } from '../search/property-statistics.js';
import { PRUNE_QUEUE, pruneJobsSchedule } from './prune.js';
import { enqueueJob, SYSTEM_WORKSPACE_ID } from './queue.js';
import type { JobRun } from './runner.js';
import { pruneWebhookHistorySchedule } from '../families/webhooks/jobs.js';
import { sweepRemindersSchedule } from '../families/scheduling/reminders.js';
import { pruneAuditEventsSchedule } from '../families/audit/jobs.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service.stop());

const uniqueQueue = (name: string) => `test.${name}.${randomUUID().slice(0, 8)}`;

/**
 * On PostgreSQL every test file's service shares the database, so these runs are scoped to the
 * test's own workspace (?workspaceId=): the service's sweeps then touch no other file's rows.
 * What an unscoped run sweeps is tested on a database of its own (scoped-sweeps.test.ts).
 */
describe('POST /v1/test-helpers/jobs/run', () => {
  const runFor = (tenant: Tenant) => callTestHelper(service, 'POST', '/jobs/run', { query: { workspaceId: tenant.workspaceId } });

  it("runs the workspace's jobs the moved clock makes due, and answers what ran", async () => {
    const tenant = await createTenant(service);
    const other = await createTenant(service, 'Other');
    const queue = uniqueQueue('route');
    service.jobs.register<{ n: number }>({
      queue,
      async run(job) {
        if (job.payload.n < 0) throw new Error('negative');
        return { doubled: job.payload.n * 2 };
      },
    });
    const start = '2090-03-01T00:00:00.000Z';
    expect((await callTestHelper(service, 'POST', '/clock', { body: { now: start } })).statusCode).toBe(200);
    const { jobId } = await enqueueJob(service.deps.db, service.deps.clock, {
      queue,
      workspaceId: tenant.workspaceId,
      payload: { n: 21 },
      runAfter: new Date('2090-03-01T01:00:00.000Z'),
    });
    const failing = await enqueueJob(service.deps.db, service.deps.clock, { queue, workspaceId: tenant.workspaceId, payload: { n: -1 }, maxAttempts: 1 });
    const others = await enqueueJob(service.deps.db, service.deps.clock, { queue, workspaceId: other.workspaceId, payload: { n: 1 } });

    const first = await runFor(tenant);
    expect(first.statusCode, first.body).toBe(200);
    const firstRuns = first.json<{ jobs: JobRun[] }>().jobs;
    expect(firstRuns.filter((run) => run.queue === queue)).toEqual([{ jobId: failing.jobId, queue, workspaceId: tenant.workspaceId, attempt: 1, outcome: 'failed', error: 'negative' }]);
    // Nothing of another workspace ran: neither its job nor a system sweep.
    expect(firstRuns.filter((run) => run.workspaceId !== tenant.workspaceId)).toEqual([]);
    expect(first.json()).toMatchObject({ ran: firstRuns.length, completed: firstRuns.length - 1, retrying: 0, failed: 1 });
    expect((await service.deps.db.selectFrom('jobs').select('state').where('job_id', '=', others.jobId).executeTakeFirstOrThrow()).state).toBe('queued');

    expect((await callTestHelper(service, 'POST', '/clock', { body: { now: '2090-03-01T01:00:00.000Z' } })).statusCode).toBe(200);
    const second = await runFor(tenant);
    expect(second.statusCode).toBe(200);
    expect(second.json<{ jobs: JobRun[] }>().jobs.filter((run) => run.queue === queue)).toEqual([
      { jobId, queue, workspaceId: tenant.workspaceId, attempt: 1, outcome: 'completed' },
    ]);
    const row = await service.deps.db.selectFrom('jobs').select(['state', 'result']).where('job_id', '=', jobId).executeTakeFirstOrThrow();
    expect(row).toEqual({ state: 'completed', result: { doubled: 42 } });

    const third = await runFor(tenant);
    expect(third.json<{ jobs: JobRun[] }>().jobs.filter((run) => run.queue === queue)).toEqual([]);
    expect((await runFor(other)).json<{ jobs: JobRun[] }>().jobs.filter((run) => run.queue === queue)).toEqual([
      { jobId: others.jobId, queue, workspaceId: other.workspaceId, attempt: 1, outcome: 'completed' },
    ]);
  });

  it("runs the service's own recurring work for the clock's current slot, as jobs of the workspace, once per slot", async () => {
    const tenant = await createTenant(service);
    const now = '2091-07-04T05:06:07.000Z';
    await callTestHelper(service, 'POST', '/clock', { body: { now } });
    const response = await runFor(tenant);
    expect(response.statusCode).toBe(200);
    const runs = response.json<{ jobs: JobRun[] }>().jobs;
    const scheduled = [pruneJobsSchedule, purgePeopleSchedule, pruneIdempotencyKeysSchedule, pruneSearchChangesSchedule, sweepPropertyStatisticsSchedule, expireIncentivesSchedule, providerWorkSchedule, reconcileOrdersSchedule, pruneWebhookHistorySchedule, sweepRemindersSchedule, pruneAuditEventsSchedule];
    expect(runs.map((run) => run.queue).sort()).toEqual(scheduled.map((schedule) => schedule.queue).sort());
    expect(runs.every((run) => run.workspaceId === tenant.workspaceId && run.outcome === 'completed')).toBe(true);
    const prune = await service.deps.db
      .selectFrom('jobs')
      .select(['state', 'workspace_id'])
      .where('queue', '=', PRUNE_QUEUE)
      .where('singleton_key', '=', 'jobs.prune@2091-07-04T05:00:00.000Z')
      .where('workspace_id', '=', tenant.workspaceId)
      .execute();
    expect(prune).toEqual([{ state: 'completed', workspace_id: tenant.workspaceId }]);
    // The same slot again: nothing new (the hourly ones ran; the minute's provider work too).
    expect((await runFor(tenant)).json<{ jobs: JobRun[] }>().jobs).toEqual([]);
  });

  it('answers 404 for a workspace that does not exist, and 400 for a bad query', async () => {
    const missing = await callTestHelper(service, 'POST', '/jobs/run', { query: { workspaceId: 'wsp_nobody' } });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({ errors: [{ message: 'Workspace not found', path: ['workspaceId'] }] });
    const system = await callTestHelper(service, 'POST', '/jobs/run', { query: { workspaceId: SYSTEM_WORKSPACE_ID } });
    expect(system.statusCode).toBe(404);
    const empty = await callTestHelper(service, 'POST', '/jobs/run', { query: { workspaceId: '' } });
    expect(empty.statusCode).toBe(400);
    const unknown = await callTestHelper(service, 'POST', '/jobs/run', { query: { workspace: 'wsp_x' } });
    expect(unknown.statusCode).toBe(400);
  });

  it('does not exist without TEST_HELPERS=1', async () => {
    const plain = await startTestService({ testHelpers: false });
    try {
      const response = await callTestHelper(plain, 'POST', '/jobs/run');
      expect(response.statusCode).toBe(404);
    } finally {
      await plain.stop();
    }
  });
});

describe('the service poller', () => {
  it('runs due jobs on its own when JOBS is on, and stops with the service', async () => {
    // The poller drains every workspace, its sweeps included: on a database of its own.
    const polling = await startPrivateTestService({ jobs: true, jobPollSeconds: 0.02 });
    const queue = uniqueQueue('service-poll');
    let runs = 0;
    try {
      polling.jobs.register({ queue, run: async () => ++runs });
      const { jobId } = await enqueueJob(polling.deps.db, polling.deps.clock, { queue, workspaceId: 'wsp_poll' });
      let state = 'queued';
      for (let wait = 0; wait < 500 && state !== 'completed'; wait++) {
        await sleep(10);
        state = (await polling.deps.db.selectFrom('jobs').select('state').where('job_id', '=', jobId).executeTakeFirstOrThrow()).state;
      }
      expect(state).toBe('completed');
    } finally {
      await polling.stop();
    }
    expect(runs).toBe(1);
  });
});

describe('job configuration', () => {
  it('reads JOBS and JOB_POLL_SECONDS, refusing bad values', () => {
    expect(loadConfig({})).toMatchObject({ jobs: true, jobPollSeconds: 5 });
    expect(loadConfig({ JOBS: 'off', JOB_POLL_SECONDS: '0.5' })).toMatchObject({ jobs: false, jobPollSeconds: 0.5 });
    expect(() => loadConfig({ JOBS: 'yes' })).toThrow(ConfigError);
    expect(() => loadConfig({ JOB_POLL_SECONDS: 'soon' })).toThrow(ConfigError);
    expect(() => loadConfig({ JOB_POLL_SECONDS: '0' })).toThrow(ConfigError);
  });
});
