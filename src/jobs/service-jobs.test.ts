import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestService, type TestService } from '../../test/harness.js';
import { ConfigError, loadConfig } from '../config.js';
import { PRUNE_QUEUE } from './prune.js';
import { enqueueJob } from './queue.js';
import type { JobRun } from './runner.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service.stop());

const uniqueQueue = (name: string) => `test.${name}.${randomUUID().slice(0, 8)}`;

describe('POST /v1/test-helpers/jobs/run', () => {
  it('runs the jobs the moved clock makes due, and answers what ran', async () => {
    const queue = uniqueQueue('route');
    service.jobs.register<{ n: number }>({
      queue,
      async run(job) {
        if (job.payload.n < 0) throw new Error('negative');
        return { doubled: job.payload.n * 2 };
      },
    });
    const start = '2090-03-01T00:00:00.000Z';
    expect((await call(service, 'POST', '/test-helpers/clock', { body: { now: start } })).statusCode).toBe(200);
    const { jobId } = await enqueueJob(service.deps.db, service.deps.clock, {
      queue,
      workspaceId: 'wsp_route',
      payload: { n: 21 },
      runAfter: new Date('2090-03-01T01:00:00.000Z'),
    });
    const failing = await enqueueJob(service.deps.db, service.deps.clock, { queue, workspaceId: 'wsp_route', payload: { n: -1 }, maxAttempts: 1 });

    const first = await call(service, 'POST', '/test-helpers/jobs/run');
    expect(first.statusCode, first.body).toBe(200);
    const firstMine = first.json<{ jobs: JobRun[] }>().jobs.filter((run) => run.queue === queue);
    expect(firstMine).toEqual([{ jobId: failing.jobId, queue, workspaceId: 'wsp_route', attempt: 1, outcome: 'failed', error: 'negative' }]);
    expect(first.json()).toMatchObject({ ran: expect.any(Number), completed: expect.any(Number), retrying: expect.any(Number), failed: expect.any(Number) });
    expect(first.json().failed).toBeGreaterThanOrEqual(1);

    expect((await call(service, 'POST', '/test-helpers/clock', { body: { now: '2090-03-01T01:00:00.000Z' } })).statusCode).toBe(200);
    const second = await call(service, 'POST', '/test-helpers/jobs/run');
    expect(second.statusCode).toBe(200);
    expect(second.json<{ jobs: JobRun[] }>().jobs.filter((run) => run.queue === queue)).toEqual([
      { jobId, queue, workspaceId: 'wsp_route', attempt: 1, outcome: 'completed' },
    ]);
    const row = await service.deps.db.selectFrom('jobs').select(['state', 'result']).where('job_id', '=', jobId).executeTakeFirstOrThrow();
    expect(row).toEqual({ state: 'completed', result: { doubled: 42 } });

    const third = await call(service, 'POST', '/test-helpers/jobs/run');
    expect(third.json<{ jobs: JobRun[] }>().jobs.filter((run) => run.queue === queue)).toEqual([]);
  });

  it("runs the service's own recurring work for the clock's current slot", async () => {
    const now = '2091-07-04T05:06:07.000Z';
    await call(service, 'POST', '/test-helpers/clock', { body: { now } });
    const response = await call(service, 'POST', '/test-helpers/jobs/run');
    expect(response.statusCode).toBe(200);
    const prune = await service.deps.db
      .selectFrom('jobs')
      .select(['state', 'workspace_id'])
      .where('queue', '=', PRUNE_QUEUE)
      .where('singleton_key', '=', 'jobs.prune@2091-07-04T05:00:00.000Z')
      .execute();
    // Another test file's service on a shared database may have run it; it ran once either way.
    expect(prune).toEqual([{ state: 'completed', workspace_id: '_system' }]);
  });

  it('does not exist without TEST_HELPERS=1', async () => {
    const plain = await startTestService({ testHelpers: false });
    try {
      const response = await call(plain, 'POST', '/test-helpers/jobs/run');
      expect(response.statusCode).toBe(404);
    } finally {
      await plain.stop();
    }
  });
});

describe('the service poller', () => {
  it('runs due jobs on its own when JOBS is on, and stops with the service', async () => {
    const polling = await startTestService({ jobs: true, jobPollSeconds: 0.02 });
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
