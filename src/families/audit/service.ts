import type { CallContext } from '../../context.js';
import type { AuditActorKind } from '../../db/schema.js';
import * as queries from './queries.js';
import { type AuditEvent, type AuditEventQuery, type AuditSettings, RETENTION_DAYS_DEFAULT } from './schemas.js';

type EventRow = Awaited<ReturnType<typeof queries.listEvents>>[number];

function toEvent(row: EventRow): AuditEvent {
  return {
    auditEventId: row.audit_event_id,
    occurredAt: row.occurred_at,
    actor: { kind: row.actor_kind, userId: row.actor_user_id, credentialId: row.actor_credential_id, personId: row.actor_person_id, service: row.actor_service },
    operationId: row.operation_id,
    method: row.method,
    resourceType: row.resource_type,
    resourceId: row.resource_id,
    requestId: row.request_id,
    statusCode: row.status_code,
    before: row.before_state,
    after: row.after_state,
  };
}

export async function listEvents(context: CallContext, query: AuditEventQuery, after: { at: string; id: string } | undefined) {
  const size = query.size ?? 25;
  const rows = await queries.listEvents(
    context.db,
    context.workspaceId,
    {
      actorUserId: query.actorUserId,
      actorKind: query.actorKind as AuditActorKind | undefined,
      resourceType: query.resourceType,
      resourceId: query.resourceId,
      operationId: query.operationId,
      from: query.from,
      to: query.to,
    },
    after,
    size,
  );
  return { events: rows.slice(0, size).map(toEvent), hasNextPage: rows.length > size };
}

export async function getSettings(context: CallContext): Promise<AuditSettings> {
  const row = await queries.findSettings(context.db, context.workspaceId);
  return { retentionDays: row?.retention_days ?? RETENTION_DAYS_DEFAULT, updatedAt: row?.updated_at ?? null };
}

export async function putSettings(context: CallContext, body: { retentionDays: number }): Promise<AuditSettings> {
  const row = await queries.upsertSettings(context.db, {
    workspace_id: context.workspaceId,
    retention_days: body.retentionDays,
    updated_by_user_id: context.userId,
    updated_at: context.clock.now().toISOString(),
  });
  return { retentionDays: row.retention_days, updatedAt: row.updated_at };
}
