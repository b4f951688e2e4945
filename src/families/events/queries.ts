import { type Kysely, sql } from 'kysely';
import type { DB } from '../../db/schema.js';

type Executor = Kysely<DB>;

/** A position in an event stream: the (tx_id, event_id) of the last event read, both as text. */
export interface StreamPosition {
  txId: string;
  eventId: string;
}

export interface EventPageRequest {
  workspaceId: string;
  studyId: string | undefined;
  after: StreamPosition | undefined;
  /** Rows to read: the page size plus one, to tell whether more are ready. */
  limit: number;
}

/**
 * Only events of transactions older than every transaction still running: those can no longer
 * be joined by an event with a smaller (tx_id, event_id). A transaction that is slow to commit
 * holds back every later event until it ends, so nothing is passed over while it is open.
 */
const settled = (column: string) => sql<boolean>`${sql.ref(column)} < pg_snapshot_xmin(pg_current_snapshot())`;
const after = (position: StreamPosition) => sql<boolean>`(e.tx_id, e.event_id) > (${position.txId}::xid8, ${position.eventId}::bigint)`;

/** Participant status events in (tx_id, event_id) order; events of deleted people are left out. */
export async function readParticipantEvents(db: Executor, request: EventPageRequest) {
  return db
    .selectFrom('participant_status_events as e')
    .innerJoin('people as p', (join) => join.onRef('p.workspace_id', '=', 'e.workspace_id').onRef('p.person_id', '=', 'e.person_id'))
    .where('e.workspace_id', '=', request.workspaceId)
    .where('p.deleted_at', 'is', null)
    .$if(request.studyId !== undefined, (query) => query.where('e.study_id', '=', request.studyId!))
    .where(settled('e.tx_id'))
    .$if(request.after !== undefined, (query) => query.where(after(request.after!)))
    .select([
      sql<string>`e.tx_id::text`.as('tx_id'),
      sql<string>`e.event_id::text`.as('event_id'),
      'e.occurred_at',
      'e.study_id',
      'e.participant_id',
      'e.person_id',
      'e.field',
      'e.from_value',
      'e.to_value',
      'e.user_id',
      'e.actor_kind',
    ])
    .orderBy('e.tx_id')
    .orderBy('e.event_id')
    .limit(request.limit)
    .execute();
}

/** Study status events in (tx_id, event_id) order. */
export async function readStudyEvents(db: Executor, request: EventPageRequest) {
  return db
    .selectFrom('study_status_events as e')
    .where('e.workspace_id', '=', request.workspaceId)
    .$if(request.studyId !== undefined, (query) => query.where('e.study_id', '=', request.studyId!))
    .where(settled('e.tx_id'))
    .$if(request.after !== undefined, (query) => query.where(after(request.after!)))
    .select([
      sql<string>`e.tx_id::text`.as('tx_id'),
      sql<string>`e.event_id::text`.as('event_id'),
      'e.occurred_at',
      'e.study_id',
      'e.field',
      'e.from_status',
      'e.to_status',
      'e.user_id',
      'e.actor_kind',
    ])
    .orderBy('e.tx_id')
    .orderBy('e.event_id')
    .limit(request.limit)
    .execute();
}
