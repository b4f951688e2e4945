import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import { deleteFinishedJobs } from './queries.js';
import { type JobHandler, type Schedule, sweepScope } from './queue.js';

export const PRUNE_QUEUE = 'jobs.prune';
export const COMPLETED_RETENTION_DAYS = 7;
/** Failed jobs are kept longer: someone may still want to read their last_error. */
export const FAILED_RETENTION_DAYS = 30;
const BATCH_SIZE = 1000;
const DAY_MS = 24 * 60 * 60 * 1000;

export interface PruneResult {
  completed: number;
  failed: number;
}

/**
 * Deletes finished jobs after their retention, which also frees their singleton keys: every
 * workspace's, or only its own workspace's when the job is not a system one (see sweepScope).
 *
 * Retention is measured in real time, not by the service's clock: the test-helper clock moves
 * time for business rules of one instance, and a clock set years ahead must not erase the job
 * history every other instance (or test) on the same database still reads.
 */
export function pruneJobsHandler(db: Kysely<DB>, realNow: () => Date = () => new Date()): JobHandler {
  return {
    queue: PRUNE_QUEUE,
    async run(job): Promise<PruneResult> {
      const now = realNow().getTime();
      const deleted: PruneResult = { completed: 0, failed: 0 };
      for (const [state, days] of [['completed', COMPLETED_RETENTION_DAYS], ['failed', FAILED_RETENTION_DAYS]] as const) {
        const before = new Date(now - days * DAY_MS);
        for (;;) {
          job.signal.throwIfAborted();
          const count = await deleteFinishedJobs(db, state, before, BATCH_SIZE, sweepScope(job));
          deleted[state] += count;
          if (count < BATCH_SIZE) break;
        }
      }
      return deleted;
    },
  };
}

export const pruneJobsSchedule: Schedule = { name: 'jobs.prune', queue: PRUNE_QUEUE, everySeconds: 60 * 60 };
