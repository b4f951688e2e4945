import { type Kysely, sql } from 'kysely';
import type { DB } from '../../db/schema.js';
import { idPrefixes, newId } from '../../ids.js';
import { eventBody, type OutboxEvent } from './events.js';

/** The channel a commit that queued deliveries notifies; dispatchers listen on it (dispatcher.ts). */
export const deliveriesChannel = 'webhook_deliveries';

/**
 * Writes events to the outbox in the caller's transaction, with one delivery per enabled
 * endpoint of the workspace subscribed to each event's type. Nothing is sent here: the
 * transaction's commit notifies the dispatchers (NOTIFY is held until commit, and dropped with a
 * rollback), so a change that rolls back leaves no message and sends nothing, and one that commits
 * cannot lose its event. Every family whose change is an event calls this where it writes the
 * change.
 */
export async function recordEvents(transaction: Kysely<DB>, workspaceId: string, events: readonly OutboxEvent[], occurredAt: string): Promise<void> {
  if (!transaction.isTransaction) throw new Error('Events are recorded in the transaction of the change: pass a transaction');
  if (events.length === 0) return;
  const messageIds = events.map(() => newId(idPrefixes.webhookMessage));
  await transaction
    .insertInto('webhook_messages')
    .values(
      events.map((event, index) => ({
        workspace_id: workspaceId,
        message_id: messageIds[index]!,
        event_type: event.type,
        occurred_at: occurredAt,
        payload: JSON.stringify(eventBody(event, occurredAt)),
      })),
    )
    .execute();
  const queued = await sql`
    insert into webhook_deliveries (workspace_id, endpoint_id, message_id, state, next_attempt_at, created_at)
    select e.workspace_id, e.endpoint_id, m.message_id, 'PENDING', ${occurredAt}::timestamptz, ${occurredAt}::timestamptz
    from webhook_endpoints e
    cross join unnest(${messageIds}::text[], ${events.map((event) => event.type)}::text[]) as m (message_id, event_type)
    where e.workspace_id = ${workspaceId} and e.enabled and (cardinality(e.event_types) = 0 or m.event_type = any (e.event_types))
  `.execute(transaction);
  if ((queued.numAffectedRows ?? 0n) > 0n) await notifyDispatchers(transaction);
}

/**
 * Wakes the dispatchers of every instance once the caller's transaction commits (NOTIFY is held
 * until then, and dropped by a rollback); outside a transaction, at once.
 */
export async function notifyDispatchers(db: Kysely<DB>): Promise<void> {
  await sql`select pg_notify(${deliveriesChannel}, '')`.execute(db);
}
