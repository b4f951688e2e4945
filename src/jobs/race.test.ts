import { randomUUID } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, storeKind, testDatabaseUrl, type TestService } from '../../test/harness.js';
import { createClock } from '../clock.js';
import { type Database, openDatabase } from '../db/database.js';
import type { DB } from '../db/schema.js';
import { enqueueJob } from './queue.js';
import { JobRunner } from './runner.js';

/**
 * Two runners as two instances would have them. On PostgreSQL each has a connection pool of its
 * own on the run's database, as separate processes would; the embedded store has one process
 * and one connection, so there both share it.
 */
let service: TestService;
const extraHandles: Database[] = [];
let handles: [Kysely<DB>, Kysely<DB>];
beforeAll(async () => {
  service = await startTestService();
  if (testDatabaseUrl) {
    for (let i = 0; i < 2; i++) extraHandles.push(await openDatabase({ databaseUrl: testDatabaseUrl, poolSize: 6 }));
    handles = [extraHandles[0]!.db, extraHandles[1]!.db];
  } else {
    handles = [service.deps.db, service.deps.db];
  }
});
afterAll(async () => {
  for (const handle of extraHandles) await handle.close();
  await service.stop();
});

const JOB_COUNT = 200;

describe(`two job runners racing on the ${storeKind} store`, () => {
  it(`run each of ${JOB_COUNT} jobs exactly once`, async () => {
    const queue = `test.race.${randomUUID().slice(0, 8)}`;
    const clock = createClock();
    const sideEffects = new Map<string, number>();
    const runnerOf = new Map<string, string>();
    const runners = handles.map((db, index) => {
      const runner = new JobRunner({ db, clock, concurrency: 4 });
      runner.register({
        queue,
        async run(job) {
          // A round trip to the database, so the runners interleave as real work would.
          await sql`select 1`.execute(db);
          sideEffects.set(job.jobId, (sideEffects.get(job.jobId) ?? 0) + 1);
          runnerOf.set(job.jobId, `runner ${index}`);
          return { by: index };
        },
      });
      return runner;
    });
    const jobIds: string[] = [];
    for (let n = 0; n < JOB_COUNT; n++) {
      jobIds.push((await enqueueJob(service.deps.db, clock, { queue, workspaceId: `wsp_race_${n % 7}`, payload: { n } })).jobId);
    }

    try {
      const reports = await Promise.all(runners.map((runner) => runner.runDue()));
      expect(reports.reduce((sum, report) => sum + report.ran, 0)).toBe(JOB_COUNT);
      expect(reports.reduce((sum, report) => sum + report.completed, 0)).toBe(JOB_COUNT);
      const reported = reports.flatMap((report) => report.jobs.map((run) => run.jobId));
      expect(new Set(reported).size).toBe(JOB_COUNT);

      expect([...sideEffects.keys()].sort()).toEqual([...jobIds].sort());
      expect([...sideEffects.values()].filter((count) => count !== 1)).toEqual([]);

      const rows = await service.deps.db.selectFrom('jobs').select(['job_id', 'state', 'attempts', 'result']).where('queue', '=', queue).execute();
      expect(rows).toHaveLength(JOB_COUNT);
      expect(rows.filter((row) => row.state !== 'completed' || row.attempts !== 1)).toEqual([]);
      // The stored result names the runner whose side effect was counted: no second run overwrote it.
      expect(rows.filter((row) => `runner ${(row.result as { by: number }).by}` !== runnerOf.get(row.job_id))).toEqual([]);
    } finally {
      for (const runner of runners) await runner.stop();
    }
  });

  it('enqueue a recurring slot once when both schedule it at the same moment', async () => {
    const queue = `test.race-schedule.${randomUUID().slice(0, 8)}`;
    const clock = createClock();
    clock.set(new Date('2090-06-01T12:34:56.000Z'));
    let runs = 0;
    const runners = handles.map((db) => {
      const runner = new JobRunner({ db, clock });
      runner.register({ queue, run: async () => ++runs });
      runner.schedule({ name: queue, queue, everySeconds: 300 });
      return runner;
    });
    try {
      await Promise.all(runners.map((runner) => runner.runDue()));
      expect(runs).toBe(1);
      const rows = await service.deps.db.selectFrom('jobs').select(['singleton_key', 'state']).where('queue', '=', queue).execute();
      expect(rows).toEqual([{ singleton_key: `${queue}@2090-06-01T12:30:00.000Z`, state: 'completed' }]);
    } finally {
      for (const runner of runners) await runner.stop();
    }
  });
});
