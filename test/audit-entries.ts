import type { Kysely } from 'kysely';
import type { DB } from '../src/db/schema.js';

/** The audit trail's entries of one operation in a workspace, oldest first: who, what, and the state after. */
export async function auditEntriesOf(db: Kysely<DB>, workspaceId: string, operationId: string) {
  return db
    .selectFrom('audit_events')
    .where('workspace_id', '=', workspaceId)
    .where('operation_id', '=', operationId)
    .select(['actor_kind', 'actor_service', 'resource_type', 'resource_id', 'after_state'])
    .orderBy('audit_event_id')
    .execute();
}
