import { type Kysely, sql } from 'kysely';
import { plusSeconds } from '../../clock.js';
import type { DB } from '../../db/schema.js';

// Every statement on idempotency_keys: the plugin (plugin.ts) and its prune job (prune.ts) call these.

type Executor = Kysely<DB>;

/** The key of one request in one workspace, and the lease it holds. */
export interface HeldKey {
  workspaceId: string;
  key: string;
  leaseToken: string;
}

/** Inserts a new reservation of the key; false when the key is there already. */
export async function insertReservation(db: Executor, workspaceId: string, key: string, fingerprint: string, leaseToken: string, now: Date, leaseSeconds: number): Promise<boolean> {
  const inserted = await db
    .insertInto('idempotency_keys')
    .values({
      workspace_id: workspaceId,
      idempotency_key: key,
      fingerprint,
      lease_token: leaseToken,
      locked_until: plusSeconds(now, leaseSeconds),
      created_at: now.toISOString(),
    })
    .onConflict((onConflict) => onConflict.columns(['workspace_id', 'idempotency_key']).doNothing())
    .returning('idempotency_key')
    .executeTakeFirst();
  return inserted !== undefined;
}

export function findKey(db: Executor, workspaceId: string, key: string) {
  return db.selectFrom('idempotency_keys').selectAll().where('workspace_id', '=', workspaceId).where('idempotency_key', '=', key).executeTakeFirst();
}

/** Moves the lease on the key from `staleLeaseToken` to `leaseToken`; false when another request took it first. */
export async function takeOverKey(db: Executor, workspaceId: string, key: string, staleLeaseToken: string | null, leaseToken: string, now: Date, leaseSeconds: number): Promise<boolean> {
  const taken = await db
    .updateTable('idempotency_keys')
    .set({ lease_token: leaseToken, locked_until: plusSeconds(now, leaseSeconds) })
    .where('workspace_id', '=', workspaceId)
    .where('idempotency_key', '=', key)
    .where('lease_token', '=', staleLeaseToken)
    .returning('idempotency_key')
    .executeTakeFirst();
  return taken !== undefined;
}

/** Extends the lease of a request still running; false when it was lost (another request took the key over). */
export async function renewLease(db: Executor, held: HeldKey, now: Date, leaseSeconds: number): Promise<boolean> {
  const result = await db
    .updateTable('idempotency_keys')
    .set({ locked_until: plusSeconds(now, leaseSeconds) })
    .where('workspace_id', '=', held.workspaceId)
    .where('idempotency_key', '=', held.key)
    .where('lease_token', '=', held.leaseToken)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Stores the response for replays; false when the lease was lost meanwhile (nothing stored). */
export async function storeResponse(db: Executor, held: HeldKey, status: number, contentType: string | null, body: string, now: Date): Promise<boolean> {
  const result = await db
    .updateTable('idempotency_keys')
    .set({
      lease_token: null,
      locked_until: null,
      response_status: status,
      response_content_type: contentType,
      response_body: body,
      completed_at: now.toISOString(),
    })
    .where('workspace_id', '=', held.workspaceId)
    .where('idempotency_key', '=', held.key)
    .where('lease_token', '=', held.leaseToken)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function releaseKey(db: Executor, held: HeldKey): Promise<void> {
  await db
    .deleteFrom('idempotency_keys')
    .where('workspace_id', '=', held.workspaceId)
    .where('idempotency_key', '=', held.key)
    .where('lease_token', '=', held.leaseToken)
    .execute();
}

/**
 * Deletes at most `limit` keys created before `before` whose request is over (or whose lease
 * lapsed by `now`), of one workspace or every one; returns how many.
 */
export async function deleteExpiredKeys(db: Executor, before: Date, now: Date, limit: number, workspaceId: string | undefined): Promise<number> {
  const result = await sql`
    delete from idempotency_keys where (workspace_id, idempotency_key) in (
      select workspace_id, idempotency_key from idempotency_keys
      where created_at < ${before.toISOString()} and (response_status is not null or locked_until < ${now.toISOString()})
        ${workspaceId === undefined ? sql`` : sql`and workspace_id = ${workspaceId}`}
      limit ${limit}
    )
  `.execute(db);
  return Number(result.numAffectedRows ?? 0n);
}
