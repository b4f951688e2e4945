import type { Kysely } from 'kysely';
import type { Clock } from '../../clock.js';
import type { DB } from '../../db/schema.js';
import { type JobHandler, type Schedule, sweepScope } from '../../jobs/queue.js';
import { pruneHistory } from './queries.js';
import { MESSAGE_RETENTION_DAYS } from './service.js';

const PRUNE_QUEUE = 'webhooks.prune';

/** Drops messages older than the replay window, with their deliveries and attempts. */
export function pruneWebhookHistoryHandler(db: Kysely<DB>, clock: Clock): JobHandler {
  return {
    queue: PRUNE_QUEUE,
    async run(job) {
      const cutoff = new Date(clock.now().getTime() - MESSAGE_RETENTION_DAYS * 86_400_000).toISOString();
      return { messagesPruned: await pruneHistory(db, cutoff, { workspaceId: sweepScope(job) }) };
    },
  };
}

export const pruneWebhookHistorySchedule: Schedule = { name: 'webhooks.prune', queue: PRUNE_QUEUE, everySeconds: 60 * 60 };
