import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TestService } from '../../test/harness.js';
import { startPrivateTestService } from '../../test/private-database.js';
import { type Clock, createClock } from '../clock.js';
import { inTransaction } from '../db/transaction.js';
import { claimJob, completeJob, failJob } from './queries.js';
import { enqueueJob, type JobHandler, SYSTEM_WORKSPACE_ID } from './queue.js';
import { type DrainReport, JobRunner, type JobRunnerOptions } from './runner.js';

let service: TestService;
beforeAll(async () => {
  // A database of its own: on the run's shared PostgreSQL database the stop test once hung in CI
  // for 30 s (not reproduced in three full runs since); here no other file's work meets its jobs.
  service = await startPrivateTestService();
});
afterAll(async () => service.stop());

// Far ahead of real time: the prune job (real-time retention) run by any test never touches these rows.
const T0 = new Date('2090-03-01T00:00:00.000Z');
const at = (seconds: number) => new Date(T0.getTime() + seconds * 1000);
const uniqueQueue = (name: string) => `test.${name}.${randomUUID().slice(0, 8)}`;

let clock: Clock;
const runners: JobRunner[] = [];
beforeEach(() => {
  clock = createClock();
  clock.set(T0);
  return async () => {
    for (const runner of runners.splice(0)) await runner.stop();
  };
});

function newRunner(options: Partial<JobRunnerOptions> = {}) {
  const runner = new JobRunner({ db: service.deps.db, clock, ...options });
  runners.push(runner);
  return runner;
}

const jobRow = (jobId: string) => service.deps.db.selectFrom('jobs').selectAll().where('job_id', '=', jobId).executeTakeFirstOrThrow();
const enqueue = (queue: string, options: { payload?: unknown; runAfter?: Date; maxAttempts?: number; backoffSeconds?: number; workspaceId?: string } = {}) =>
  enqueueJob(service.deps.db, clock, { queue, workspaceId: 'wsp_jobs', ...options }).then((enqueued) => enqueued.jobId);
const counts = (report: DrainReport) => ({ ran: report.ran, completed: report.completed, retrying: report.retrying, failed: report.failed });

describe('JobRunner.runDue', () => {
  it('runs a due job once with its payload and keeps the result', async () => {
    const queue = uniqueQueue('echo');
    const seen: unknown[] = [];
    const runner = newRunner();
    runner.register<{ personId: string }>({
      queue,
      async run(job) {
        seen.push({ jobId: job.jobId, workspaceId: job.workspaceId, payload: job.payload, attempt: job.attempt, maxAttempts: job.maxAttempts });
        return { purged: job.payload.personId };
      },
    });
    const jobId = await enqueue(queue, { payload: { personId: 'per_1' } });

    const report = await runner.runDue();
    expect(counts(report)).toEqual({ ran: 1, completed: 1, retrying: 0, failed: 0 });
    expect(report.jobs).toEqual([{ jobId, queue, workspaceId: 'wsp_jobs', attempt: 1, outcome: 'completed' }]);
    expect(seen).toEqual([{ jobId, workspaceId: 'wsp_jobs', payload: { personId: 'per_1' }, attempt: 1, maxAttempts: 5 }]);
    expect(await jobRow(jobId)).toMatchObject({
      state: 'completed',
      attempts: 1,
      result: { purged: 'per_1' },
      last_error: null,
      lease_token: null,
      locked_until: null,
      started_at: T0.toISOString(),
      finished_at: T0.toISOString(),
    });

    expect(counts(await runner.runDue())).toEqual({ ran: 0, completed: 0, retrying: 0, failed: 0 });
    expect(seen).toHaveLength(1);
  });

  it('runs only the queues it has handlers for', async () => {
    const mine = uniqueQueue('mine');
    const foreign = uniqueQueue('foreign');
    const runner = newRunner();
    runner.register({ queue: mine, run: async () => 'done' });
    const foreignJob = await enqueue(foreign);
    const mineJob = await enqueue(mine);
    const report = await runner.runDue();
    expect(report.jobs.map((run) => run.jobId)).toEqual([mineJob]);
    expect((await jobRow(foreignJob)).state).toBe('queued');
  });

  it('retries a failing handler with exponential backoff, then fails it keeping the last error', async () => {
    const queue = uniqueQueue('failing');
    let calls = 0;
    const runner = newRunner();
    runner.register({
      queue,
      async run() {
        calls++;
        throw new TypeError(`provider unavailable (call ${calls})`);
      },
    });
    const jobId = await enqueue(queue, { maxAttempts: 3, backoffSeconds: 10 });

    const first = await runner.runDue();
    expect(counts(first)).toEqual({ ran: 1, completed: 0, retrying: 1, failed: 0 });
    expect(first.jobs[0]).toMatchObject({ attempt: 1, outcome: 'retrying', error: 'TypeError: provider unavailable (call 1)' });
    expect(await jobRow(jobId)).toMatchObject({
      state: 'queued',
      attempts: 1,
      run_after: at(10).toISOString(),
      last_error: 'TypeError: provider unavailable (call 1)',
      lease_token: null,
    });

    clock.set(at(9));
    expect(counts(await runner.runDue()).ran).toBe(0);

    clock.set(at(10));
    expect(counts(await runner.runDue())).toEqual({ ran: 1, completed: 0, retrying: 1, failed: 0 });
    expect(await jobRow(jobId)).toMatchObject({ state: 'queued', attempts: 2, run_after: at(30).toISOString() });

    clock.set(at(30));
    const last = await runner.runDue();
    expect(counts(last)).toEqual({ ran: 1, completed: 0, retrying: 0, failed: 1 });
    expect(last.jobs[0]).toMatchObject({ attempt: 3, outcome: 'failed' });
    expect(await jobRow(jobId)).toMatchObject({
      state: 'failed',
      attempts: 3,
      last_error: 'TypeError: provider unavailable (call 3)',
      finished_at: at(30).toISOString(),
      lease_token: null,
      locked_until: null,
    });

    clock.set(at(100_000));
    expect(counts(await runner.runDue()).ran).toBe(0);
    expect(calls).toBe(3);
  });

  it('completes a job that succeeds on a retry, keeping the earlier error for the record', async () => {
    const queue = uniqueQueue('flaky');
    const runner = newRunner();
    runner.register({
      queue,
      async run(job) {
        if (job.attempt === 1) throw new Error('timeout');
        return { attempt: job.attempt };
      },
    });
    const jobId = await enqueue(queue, { backoffSeconds: 0 });
    // No backoff: the retry is due at once, and the same drain runs it.
    const report = await runner.runDue();
    expect(report.jobs.map((run) => [run.attempt, run.outcome])).toEqual([
      [1, 'retrying'],
      [2, 'completed'],
    ]);
    expect(await jobRow(jobId)).toMatchObject({ state: 'completed', attempts: 2, result: { attempt: 2 }, last_error: 'timeout' });
  });

  it("waits for a job's run_after by the injected clock", async () => {
    const queue = uniqueQueue('later');
    const runner = newRunner();
    runner.register({ queue, run: async () => null });
    const jobId = await enqueue(queue, { runAfter: at(3600) });
    expect((await runner.runDue()).ran).toBe(0);
    clock.set(at(3599));
    expect((await runner.runDue()).ran).toBe(0);
    clock.set(at(3600));
    expect((await runner.runDue()).jobs).toMatchObject([{ jobId, outcome: 'completed' }]);
  });

  it('runs jobs in order of when they became due', async () => {
    const queue = uniqueQueue('order');
    const order: string[] = [];
    const runner = newRunner({ concurrency: 1 });
    runner.register<{ name: string }>({ queue, run: async (job) => order.push(job.payload.name) });
    await enqueue(queue, { payload: { name: 'third' }, runAfter: at(-10) });
    await enqueue(queue, { payload: { name: 'first' }, runAfter: at(-30) });
    await enqueue(queue, { payload: { name: 'second' }, runAfter: at(-20) });
    await runner.runDue();
    expect(order).toEqual(['first', 'second', 'third']);
  });
});

describe('leases', () => {
  it("gives a crashed worker's job to another runner once the lease expires, and ignores the late worker", async () => {
    const queue = uniqueQueue('lease');
    const attempts: number[] = [];
    const runner = newRunner({ leaseSeconds: 60 });
    runner.register({
      queue,
      async run(job) {
        attempts.push(job.attempt);
        return { by: 'runner' };
      },
    });
    const jobId = await enqueue(queue, { maxAttempts: 3 });
    // A worker claims the job and dies before recording anything.
    const crashed = await claimJob(service.deps.db, { queues: [queue], now: clock.now(), leaseSeconds: 60 });
    expect(crashed).toMatchObject({ jobId, attempt: 1 });
    expect(await jobRow(jobId)).toMatchObject({ state: 'running', locked_until: at(60).toISOString() });

    expect((await runner.runDue()).ran).toBe(0);
    clock.set(at(59));
    expect((await runner.runDue()).ran).toBe(0);
    clock.set(at(60));
    expect((await runner.runDue()).jobs).toMatchObject([{ jobId, attempt: 2, outcome: 'completed' }]);
    expect(attempts).toEqual([2]);

    // The first worker comes back: its lease is gone, so it cannot overwrite the outcome.
    expect(await completeJob(service.deps.db, crashed!, '{"by":"crashed"}', clock.now())).toBe(false);
    expect(await failJob(service.deps.db, crashed!, 'late failure', clock.now())).toBe('lease-lost');
    expect(await jobRow(jobId)).toMatchObject({ state: 'completed', attempts: 2, result: { by: 'runner' }, last_error: null });
  });

  it('fails a job whose lease expired on its last attempt, without running it again', async () => {
    const queue = uniqueQueue('lease-last');
    let runs = 0;
    const runner = newRunner();
    runner.register({ queue, run: async () => runs++ });
    const jobId = await enqueue(queue, { maxAttempts: 1 });
    await claimJob(service.deps.db, { queues: [queue], now: clock.now(), leaseSeconds: 30 });
    clock.set(at(30));
    const report = await runner.runDue();
    expect(counts(report)).toEqual({ ran: 0, completed: 0, retrying: 0, failed: 1 });
    expect(report.jobs).toMatchObject([{ jobId, outcome: 'failed', attempt: 1 }]);
    expect(runs).toBe(0);
    const row = await jobRow(jobId);
    expect(row).toMatchObject({ state: 'failed', attempts: 1, lease_token: null, finished_at: at(30).toISOString() });
    expect(row.last_error).toMatch(/lease of attempt 1 expired/);
  });

  it('renews the lease while a handler runs, even while the handler holds a transaction', async () => {
    const queue = uniqueQueue('renew');
    // Renewals every 20 ms; the handler's transaction outlasts several of them.
    const runner = newRunner({ leaseSeconds: 0.06 });
    let seenLease: string | null = null;
    runner.register({
      queue,
      async run(job) {
        clock.set(at(1));
        await inTransaction(service.deps.db, async (transaction) => {
          await sql`select 1`.execute(transaction);
          await sleep(120);
        });
        // Renewals queued behind the transaction have now been made with the moved clock.
        for (let wait = 0; wait < 500 && seenLease !== at(1.06).toISOString(); wait++) {
          seenLease = (await jobRow(job.jobId)).locked_until;
          await sleep(10);
        }
        return null;
      },
    });
    const jobId = await enqueue(queue);
    expect((await runner.runDue()).jobs).toMatchObject([{ jobId, outcome: 'completed' }]);
    expect(seenLease).toBe(at(1.06).toISOString());
  });
});

describe('handlers with their own transactions', () => {
  it('run concurrently with the claimer and with other runners without deadlock', async () => {
    const parents = uniqueQueue('parent');
    const children = uniqueQueue('child');
    const register = (runner: JobRunner) => {
      runner.register<{ n: number }>({
        queue: parents,
        async run(job) {
          // A handler that enqueues follow-up work atomically with its own writes.
          return inTransaction(service.deps.db, async (transaction) => {
            await sql`select count(*) from jobs where queue = ${parents}`.execute(transaction);
            const child = await enqueueJob(transaction, clock, { queue: children, workspaceId: job.workspaceId, singletonKey: job.jobId, payload: { n: job.payload.n } });
            return { child: child.jobId };
          });
        },
      });
      runner.register<{ n: number }>({
        queue: children,
        run: (job) => inTransaction(service.deps.db, async (transaction) => (await sql<{ n: number }>`select ${job.payload.n}::int as n`.execute(transaction)).rows[0]),
      });
    };
    const first = newRunner({ concurrency: 4 });
    const second = newRunner({ concurrency: 3 });
    register(first);
    register(second);
    for (let n = 0; n < 12; n++) await enqueue(parents, { payload: { n } });

    const reports = await Promise.all([first.runDue(), second.runDue(), first.runDue()]);
    const runs = reports.flatMap((report) => report.jobs);
    expect(runs).toHaveLength(24);
    expect(runs.every((run) => run.outcome === 'completed')).toBe(true);
    const results = await service.deps.db.selectFrom('jobs').select(['state', 'result']).where('queue', '=', children).execute();
    expect(results.map((row) => (row.result as { n: number }).n).sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, n) => n));
  });
});

describe('recurring schedules', () => {
  it('enqueue each slot once however many runners drain, and only the current slot after a gap', async () => {
    const queue = uniqueQueue('recurring');
    const ran: string[] = [];
    const handler: JobHandler = {
      queue,
      async run(job) {
        ran.push(job.singletonKey ?? '');
      },
    };
    const schedule = { name: `every-10-minutes.${queue}`, queue, everySeconds: 600, payload: { scope: 'all' } };
    const instances = [newRunner(), newRunner(), newRunner()];
    for (const runner of instances) {
      runner.register(handler);
      runner.schedule(schedule);
    }
    clock.set(at(125));
    await Promise.all(instances.map((runner) => runner.runDue()));
    await Promise.all(instances.map((runner) => runner.runDue()));
    expect(ran).toEqual([`${schedule.name}@${T0.toISOString()}`]);

    clock.set(at(610));
    await Promise.all(instances.map((runner) => runner.runDue()));
    // Down for an hour: one run for the current slot, not one per missed slot.
    clock.set(at(4210));
    await Promise.all(instances.map((runner) => runner.runDue()));
    expect(ran).toEqual([T0, at(600), at(4200)].map((slot) => `${schedule.name}@${slot.toISOString()}`));

    const rows = await service.deps.db.selectFrom('jobs').selectAll().where('queue', '=', queue).orderBy('run_after').execute();
    expect(rows.map((row) => [row.workspace_id, row.state, row.run_after, row.payload])).toEqual(
      [T0, at(600), at(4200)].map((slot) => [SYSTEM_WORKSPACE_ID, 'completed', slot.toISOString(), { scope: 'all' }]),
    );
  });

  it('need a handler for their queue', () => {
    const runner = newRunner();
    expect(() => runner.schedule({ name: 'orphan', queue: 'test.nobody', everySeconds: 60 })).toThrow(/no handler/);
    runner.register({ queue: 'test.somebody', run: async () => null });
    expect(() => runner.register({ queue: 'test.somebody', run: async () => null })).toThrow(/already/);
    expect(() => runner.schedule({ name: 'fractional', queue: 'test.somebody', everySeconds: 0.5 })).toThrow(/everySeconds/);
  });
});

describe('drains scoped to one workspace', () => {
  it("claim that workspace's jobs alone, and fail only its jobs whose last lease expired", async () => {
    const queue = uniqueQueue('scoped');
    const runner = newRunner();
    runner.register({ queue, run: async (job) => job.workspaceId });
    const mine = await enqueue(queue, { workspaceId: 'wsp_mine' });
    const theirs = await enqueue(queue, { workspaceId: 'wsp_theirs' });
    const stalled = await enqueue(queue, { workspaceId: 'wsp_theirs', maxAttempts: 1, runAfter: at(-1) });
    // Another worker took their oldest job on its last attempt and died.
    expect(await claimJob(service.deps.db, { queues: [queue], now: clock.now(), leaseSeconds: 30, workspaceId: 'wsp_theirs' })).toMatchObject({ jobId: stalled });
    clock.set(at(30));

    const scoped = await runner.runDue({ workspaceId: 'wsp_mine' });
    expect(scoped.jobs).toEqual([{ jobId: mine, queue, workspaceId: 'wsp_mine', attempt: 1, outcome: 'completed' }]);
    expect(await jobRow(theirs)).toMatchObject({ state: 'queued', attempts: 0 });
    expect(await jobRow(stalled)).toMatchObject({ state: 'running' });

    const everyone = await runner.runDue();
    expect(everyone.jobs.map((run) => [run.jobId, run.outcome])).toEqual([
      [stalled, 'failed'],
      [theirs, 'completed'],
    ]);
  });

  it("enqueue each schedule's current slot as a job of the workspace, once per workspace, beside the system's", async () => {
    const queue = uniqueQueue('scoped-recurring');
    const ran: [string, string | null][] = [];
    const schedule = { name: `hourly.${queue}`, queue, everySeconds: 3600 };
    const instances = [newRunner(), newRunner()];
    for (const runner of instances) {
      runner.register({ queue, run: async (job) => ran.push([job.workspaceId, job.singletonKey]) });
      runner.schedule(schedule);
    }
    clock.set(at(125));
    await Promise.all(instances.map((runner) => runner.runDue({ workspaceId: 'wsp_a' })));
    await instances[1]!.runDue({ workspaceId: 'wsp_a' });
    await instances[0]!.runDue({ workspaceId: 'wsp_b' });
    await Promise.all(instances.map((runner) => runner.runDue()));
    const key = `${schedule.name}@${T0.toISOString()}`;
    expect(ran.sort()).toEqual([
      [SYSTEM_WORKSPACE_ID, key],
      ['wsp_a', key],
      ['wsp_b', key],
    ]);
    // The next slot is the workspace's again, though this process ran the slot before.
    clock.set(at(3600));
    await instances[0]!.runDue({ workspaceId: 'wsp_a' });
    expect(ran.at(-1)).toEqual(['wsp_a', `${schedule.name}@${at(3600).toISOString()}`]);
    expect(ran).toHaveLength(4);
  });
});

describe('stopping', () => {
  it('tells running handlers to stop and puts their jobs back without spending an attempt', async () => {
    const queue = uniqueQueue('stop');
    const runner = newRunner();
    let started!: () => void;
    const running = new Promise<void>((resolve) => (started = resolve));
    runner.register({
      queue,
      run: (job) =>
        new Promise((_resolve, reject) => {
          job.signal.addEventListener('abort', () => reject(new Error('interrupted')));
          started();
        }),
    });
    const jobId = await enqueue(queue);
    const drain = runner.runDue();
    // A drain that ends (or fails) before the handler starts would leave `running` pending for ever.
    await Promise.race([running, drain.then((report) => expect.fail(`the drain ended before the handler started: ${JSON.stringify(report)}`))]);
    await runner.stop();
    expect((await drain).jobs).toMatchObject([{ jobId, outcome: 'released' }]);
    expect(await jobRow(jobId)).toMatchObject({ state: 'queued', attempts: 0, lease_token: null, run_after: T0.toISOString() });
    expect(counts(await runner.runDue()).ran).toBe(0);

    const next = newRunner();
    next.register({ queue, run: async (job) => ({ attempt: job.attempt }) });
    expect((await next.runDue()).jobs).toMatchObject([{ jobId, attempt: 1, outcome: 'completed' }]);
  });
});

describe('polling', () => {
  it('drains due work periodically once started, until stopped', async () => {
    const queue = uniqueQueue('polled');
    const runner = newRunner();
    runner.register({ queue, run: async () => 'polled' });
    runner.start(0.02);
    const jobId = await enqueue(queue);
    let state = (await jobRow(jobId)).state;
    for (let wait = 0; wait < 500 && state !== 'completed'; wait++) {
      await sleep(10);
      state = (await jobRow(jobId)).state;
    }
    expect(state).toBe('completed');
    await runner.stop();
    const after = await enqueue(queue);
    await sleep(100);
    expect((await jobRow(after)).state).toBe('queued');
  });
});
