import type { Kysely } from 'kysely';
import type { Clock } from '../../clock.js';
import type { DB } from '../../db/schema.js';
import { type JobHandler, type Schedule, sweepScope } from '../../jobs/queue.js';
import { deleteExpired } from './queries.js';
import { RETENTION_DAYS_DEFAULT } from './schemas.js';

export const AUDIT_PRUNE_QUEUE = 'audit.prune';
export const AUDIT_PRUNE_BATCH = 1000;

/**
 * Deletes entries older than their workspace's retention (the service's clock), 1,000 a statement
 * so that no statement holds many rows' locks: every workspace's, or one's for a job of that workspace.
 */
export function pruneAuditEventsHandler(db: Kysely<DB>, clock: Clock): JobHandler {
  return {
    queue: AUDIT_PRUNE_QUEUE,
    async run(job): Promise<{ deleted: number }> {
      const workspaceId = sweepScope(job);
      const now = clock.now();
      let deleted = 0;
      for (;;) {
        job.signal.throwIfAborted();
        const count = await deleteExpired(db, now, RETENTION_DAYS_DEFAULT, AUDIT_PRUNE_BATCH, workspaceId);
        deleted += count;
        if (count < AUDIT_PRUNE_BATCH) return { deleted };
      }
    },
  };
}

export const pruneAuditEventsSchedule: Schedule = { name: 'audit.prune', queue: AUDIT_PRUNE_QUEUE, everySeconds: 60 * 60 };
