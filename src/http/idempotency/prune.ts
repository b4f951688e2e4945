import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { type JobHandler, type Schedule, sweepScope } from '../../jobs/queue.js';
import { deleteExpiredKeys } from './queries.js';

export const IDEMPOTENCY_PRUNE_QUEUE = 'idempotency.prune';
/** How long a key is kept at least (the contract promises 24 hours). */
export const IDEMPOTENCY_RETENTION_HOURS = 24;
const PRUNE_BATCH_SIZE = 1000;

/**
 * Deletes keys older than the retention whose request is over (or whose lease lapsed): every
 * workspace's, or one workspace's for a job of that workspace (see sweepScope). Real time, not
 * the service's clock, like the leases (see plugin.ts).
 */
export function pruneIdempotencyKeysHandler(db: Kysely<DB>, realNow: () => Date = () => new Date()): JobHandler {
  return {
    queue: IDEMPOTENCY_PRUNE_QUEUE,
    async run(job): Promise<{ deleted: number }> {
      const now = realNow();
      const before = new Date(now.getTime() - IDEMPOTENCY_RETENTION_HOURS * 60 * 60 * 1000);
      const workspaceId = sweepScope(job);
      let deleted = 0;
      for (;;) {
        job.signal.throwIfAborted();
        const count = await deleteExpiredKeys(db, before, now, PRUNE_BATCH_SIZE, workspaceId);
        deleted += count;
        if (count < PRUNE_BATCH_SIZE) return { deleted };
      }
    },
  };
}

export const pruneIdempotencyKeysSchedule: Schedule = { name: 'idempotency.prune', queue: IDEMPOTENCY_PRUNE_QUEUE, everySeconds: 60 * 60 };
