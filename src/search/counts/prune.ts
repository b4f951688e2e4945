import { type Kysely, sql } from 'kysely';
import type { DB } from '../../db/schema.js';
import { type JobHandler, type Schedule, sweepScope } from '../../jobs/queue.js';

export const SEARCH_CHANGES_PRUNE_QUEUE = 'search.changes.prune';
/** How long the change log keeps a change: an instance that has not searched a workspace for longer rebuilds its counts. */
export const SEARCH_CHANGES_RETENTION_MINUTES = 60;
const BATCH_SIZE = 5000;

/**
 * Deletes changes older than the retention, a batch at a time, and records per workspace the
 * newest transaction whose changes are gone: an instance whose counts are older than that can no
 * longer catch up from the log, sees so (src/search/counts/workspace.ts) and rebuilds instead.
 * Measured in real time, like the other prunes, not by the service's clock.
 */
export function pruneSearchChangesHandler(db: Kysely<DB>, realNow: () => Date = () => new Date()): JobHandler {
  return {
    queue: SEARCH_CHANGES_PRUNE_QUEUE,
    async run(job): Promise<{ deleted: number }> {
      const before = new Date(realNow().getTime() - SEARCH_CHANGES_RETENTION_MINUTES * 60_000).toISOString();
      const workspaceId = sweepScope(job);
      let deleted = 0;
      for (;;) {
        job.signal.throwIfAborted();
        const { rows } = await sql<{ deleted: string | number }>`
          with pruned as (
            delete from search_changes where (workspace_id, changed_xid, change_no) in (
              select workspace_id, changed_xid, change_no from search_changes
              where logged_at < ${before} ${workspaceId === undefined ? sql`` : sql`and workspace_id = ${workspaceId}`}
              limit ${sql.lit(BATCH_SIZE)}
            )
            returning workspace_id, changed_xid
          ), horizons as (
            insert into search_change_horizons (workspace_id, pruned_through)
            select workspace_id, max(changed_xid) from pruned group by workspace_id
            on conflict (workspace_id) do update set pruned_through = greatest(search_change_horizons.pruned_through, excluded.pruned_through)
          )
          select count(*) as deleted from pruned
        `.execute(db);
        const count = Number(rows[0]!.deleted);
        deleted += count;
        if (count < BATCH_SIZE) return { deleted };
      }
    },
  };
}

export const pruneSearchChangesSchedule: Schedule = { name: 'search.changes.prune', queue: SEARCH_CHANGES_PRUNE_QUEUE, everySeconds: 10 * 60 };
