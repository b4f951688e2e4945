import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeKind, testDatabaseUrl } from '../../test/harness.js';
import { createClock } from '../clock.js';
import { type Database, openDatabase } from '../db/database.js';
import { migrateToLatest } from '../db/migrate.js';
import { PRUNE_QUEUE, pruneJobsHandler } from './prune.js';
import { enqueueJob, SYSTEM_WORKSPACE_ID } from './queue.js';
import { JobRunner } from './runner.js';

/**
 * Pruning deletes across every workspace and queue, so this file keeps a database of its own:
 * on the run's shared PostgreSQL database it would delete other files' rows, and their services'
 * prune jobs would delete its rows.
 */
let database: Database;
let dropPrivate: (() => Promise<void>) | undefined;
beforeAll(async () => {
  if (!testDatabaseUrl) {
    database = await openDatabase({ inMemory: true });
  } else {
    const name = `test_prune_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
    const admin = await openDatabase({ databaseUrl: testDatabaseUrl, poolSize: 1 });
    await sql`create database ${sql.id(name)}`.execute(admin.db);
    const url = new URL(testDatabaseUrl);
    url.pathname = `/${name}`;
    database = await openDatabase({ databaseUrl: url.toString(), poolSize: 2 });
    dropPrivate = async () => {
      await sql`drop database if exists ${sql.id(name)} with (force)`.execute(admin.db);
      await admin.close();
    };
  }
  await migrateToLatest(database.db);
});
afterAll(async () => {
  await database.close();
  await dropPrivate?.();
});

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

  it('stops between batches when the service shuts down', async () => {
    const controller = new AbortController();
    controller.abort();
    const handler = pruneJobsHandler(database.db);
    await expect(
      handler.run({ jobId: 'job_x', queue: PRUNE_QUEUE, workspaceId: SYSTEM_WORKSPACE_ID, payload: {}, singletonKey: null, attempt: 1, maxAttempts: 5, signal: controller.signal }),
    ).rejects.toThrow();
  });
});
