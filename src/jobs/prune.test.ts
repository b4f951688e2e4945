import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeKind } from '../../test/harness.js';
import { openPrivateDatabase, type PrivateDatabase } from '../../test/private-database.js';
import { createClock } from '../clock.js';
import type { Database } from '../db/database.js';
import { PRUNE_QUEUE, pruneJobsHandler, pruneJobsSchedule } from './prune.js';
import { enqueueJob, SYSTEM_WORKSPACE_ID } from './queue.js';
import { JobRunner } from './runner.js';

/**
 * A system prune deletes across every workspace and queue, so this file keeps a database of its
 * own: on the run's shared PostgreSQL database it would delete other files' rows.
 */
let database: Database;
let privateDatabase: PrivateDatabase;
beforeAll(async () => {
  privateDatabase = await openPrivateDatabase();
  database = privateDatabase.database;
});
afterAll(async () => privateDatabase.drop());

const DAY_MS = 24 * 60 * 60 * 1000;

describe(`the prune job on the ${storeKind} store`, () => {
  it('deletes finished jobs after their retention in real time and keeps the rest', async () => {
    const base = new Date('2030-01-01T00:00:00.000Z');
    const clock = createClock();
    const queue = 'test.prunable';
    const runner = new JobRunner({ db: database.db, clock });
    runner.register<{ fail: boolean }>({
      queue,
      async run(job) {
        if (job.payload.fail) throw new Error('broken');
        return null;
      },
    });
    const finishedOnDay = async (day: number, fail = false) => {
      clock.set(new Date(base.getTime() + day * DAY_MS));
      const { jobId } = await enqueueJob(database.db, clock, { queue, workspaceId: `wsp_${day}`, payload: { fail }, maxAttempts: 1 });
      await runner.runDue();
      return jobId;
    };
    await finishedOnDay(0);
    await finishedOnDay(27);
    const completedInRetention = await finishedOnDay(29);
    await finishedOnDay(1, true);
    const failedInRetention = await finishedOnDay(6, true);
    clock.set(base);
    const stillQueued = (await enqueueJob(database.db, clock, { queue, workspaceId: 'wsp_q', runAfter: new Date('2031-01-01T00:00:00.000Z') })).jobId;

    // Real time, as the handler sees it: day 35, so completed jobs from before day 28 and failed
    // ones from before day 5 are past their retention (7 and 30 days).
    const prune = new JobRunner({ db: database.db, clock });
    prune.register(pruneJobsHandler(database.db, () => new Date(base.getTime() + 35 * DAY_MS)));
    const { jobId: pruneJobId } = await enqueueJob(database.db, clock, { queue: PRUNE_QUEUE, workspaceId: SYSTEM_WORKSPACE_ID });
    const report = await prune.runDue();
    expect(report.jobs).toMatchObject([{ jobId: pruneJobId, outcome: 'completed' }]);

    const prunedRow = await database.db.selectFrom('jobs').select('result').where('job_id', '=', pruneJobId).executeTakeFirstOrThrow();
    expect(prunedRow.result).toEqual({ completed: 2, failed: 1 });
    const left = await database.db.selectFrom('jobs').select('job_id').where('queue', '=', queue).execute();
    expect(left.map((row) => row.job_id).sort()).toEqual([completedInRetention, failedInRetention, stillQueued].sort());
  });

  it("deletes only its own workspace's finished jobs when it is a job of that workspace; a system one deletes every workspace's", async () => {
    const clock = createClock();
    clock.set(new Date('2031-01-01T00:00:00.000Z'));
    const queue = 'test.prunable-scoped';
    const runner = new JobRunner({ db: database.db, clock });
    runner.register({ queue, run: async () => null });
    const mine = (await enqueueJob(database.db, clock, { queue, workspaceId: 'wsp_mine' })).jobId;
    const theirs = (await enqueueJob(database.db, clock, { queue, workspaceId: 'wsp_theirs' })).jobId;
    expect((await runner.runDue()).completed).toBe(2);
    const left = async () => (await database.db.selectFrom('jobs').select('job_id').where('queue', '=', queue).orderBy('job_id').execute()).map((row) => row.job_id);

    // A month later in real time: both are past the retention of completed jobs.
    const prune = new JobRunner({ db: database.db, clock });
    prune.register(pruneJobsHandler(database.db, () => new Date('2031-02-01T00:00:00.000Z')));
    prune.schedule(pruneJobsSchedule);
    const scoped = await prune.runDue({ workspaceId: 'wsp_mine' });
    expect(scoped.jobs).toMatchObject([{ queue: PRUNE_QUEUE, workspaceId: 'wsp_mine', outcome: 'completed' }]);
    expect(await left()).toEqual([theirs]);
    expect(mine).not.toBe(theirs);

    const system = await prune.runDue();
    expect(system.jobs).toMatchObject([{ queue: PRUNE_QUEUE, workspaceId: SYSTEM_WORKSPACE_ID, outcome: 'completed' }]);
    expect(await left()).toEqual([]);
  });

  it('stops between batches when the service shuts down', async () => {
    const controller = new AbortController();
    controller.abort();
    const handler = pruneJobsHandler(database.db);
    await expect(
      handler.run({ jobId: 'job_x', queue: PRUNE_QUEUE, workspaceId: SYSTEM_WORKSPACE_ID, payload: {}, singletonKey: null, attempt: 1, maxAttempts: 5, signal: controller.signal }),
    ).rejects.toThrow();
  });
});
