import { type Insertable, type Kysely, sql } from 'kysely';
import type { AuditEventsTable, AuditActorKind, DB } from '../../db/schema.js';

type Executor = Kysely<DB>;

export async function insertEvents(db: Executor, rows: readonly Insertable<AuditEventsTable>[]) {
  if (rows.length === 0) return;
  await db.insertInto('audit_events').values([...rows]).execute();
}

export interface EventFilter {
  actorUserId?: string | undefined;
  actorKind?: AuditActorKind | undefined;
  resourceType?: string | undefined;
  resourceId?: string | undefined;
  operationId?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
}

/**
 * A page of the workspace's entries, newest first, after the keyset (occurred_at, id): one of the
 * three indexes (by time; by actor; by resource) serves each filter (docs/api/audit.md).
 */
export async function listEvents(db: Executor, workspaceId: string, filter: EventFilter, after: { at: string; id: string } | undefined, size: number) {
  return db
    .selectFrom('audit_events')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .$if(filter.actorUserId !== undefined, (query) => query.where('actor_user_id', '=', filter.actorUserId!))
    .$if(filter.actorKind !== undefined, (query) => query.where('actor_kind', '=', filter.actorKind!))
    .$if(filter.resourceType !== undefined, (query) => query.where('resource_type', '=', filter.resourceType!))
    .$if(filter.resourceId !== undefined, (query) => query.where('resource_id', '=', filter.resourceId!))
    .$if(filter.operationId !== undefined, (query) => query.where('operation_id', '=', filter.operationId!))
    .$if(filter.from !== undefined, (query) => query.where('occurred_at', '>=', filter.from!))
    .$if(filter.to !== undefined, (query) => query.where('occurred_at', '<', filter.to!))
    .$if(after !== undefined, (query) =>
      query.where((eb) => eb.or([eb('occurred_at', '<', after!.at), eb.and([eb('occurred_at', '=', after!.at), eb('audit_event_id', '<', after!.id)])])),
    )
    .orderBy('occurred_at', 'desc')
    .orderBy('audit_event_id', 'desc')
    .limit(size + 1)
    .execute();
}

export async function findSettings(db: Executor, workspaceId: string) {
  return db.selectFrom('audit_settings').select(['retention_days', 'updated_at']).where('workspace_id', '=', workspaceId).executeTakeFirst();
}

export async function upsertSettings(db: Executor, row: { workspace_id: string; retention_days: number; updated_by_user_id: string; updated_at: string }) {
  return db
    .insertInto('audit_settings')
    .values(row)
    .onConflict((conflict) => conflict.column('workspace_id').doUpdateSet({ retention_days: row.retention_days, updated_by_user_id: row.updated_by_user_id, updated_at: row.updated_at }))
    .returning(['retention_days', 'updated_at'])
    .executeTakeFirstOrThrow();
}

/**
 * Deletes up to `batch` entries older than their workspace's retention (the default where none is
 * set), one workspace's or every workspace's: the number deleted, so that the job loops until fewer.
 */
export async function deleteExpired(db: Executor, now: Date, defaultDays: number, batch: number, workspaceId: string | undefined) {
  const result = await db
    .deleteFrom('audit_events')
    .where(({ eb, refTuple, selectFrom }) =>
      eb(
        refTuple('workspace_id', 'audit_event_id'),
        'in',
        selectFrom('audit_events as e')
          .leftJoin('audit_settings as s', 's.workspace_id', 'e.workspace_id')
          .$if(workspaceId !== undefined, (query) => query.where('e.workspace_id', '=', workspaceId!))
          .where(sql<boolean>`e.occurred_at < ${now.toISOString()}::timestamptz - make_interval(days => coalesce(s.retention_days, ${defaultDays}))`)
          .select(['e.workspace_id', 'e.audit_event_id'])
          .limit(batch)
          .$asTuple('workspace_id', 'audit_event_id'),
      ),
    )
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
