import type { CallContext as SharedCallContext } from '../../context.js';
import type { CursorCodec } from '../../http/cursor.js';
import { badRequest, notFound } from '../../http/errors.js';
import { cursorScope } from '../../http/pagination.js';
import { studyExists } from '../studies/queries.js';
import * as queries from './queries.js';
import type { EventsQuery } from './schemas.js';

export type CallContext = Pick<SharedCallContext, 'db' | 'workspaceId'>;

export interface EventPageInfo {
  hasNextPage: boolean;
  hasPreviousPage: false;
  startCursor: string;
  endCursor: string;
}

/** Where a stream begins: before every event (transaction ids start at 3, event ids at 1). */
const origin: queries.StreamPosition = { txId: '0', eventId: '0' };
const DIGITS = /^\d{1,20}$/;

/**
 * Reads one page of an event stream after the cursor's position. The cursor carries the
 * (tx_id, event_id) of the last event read, signed with the workspace, the stream and its studyId
 * filter, so a cursor of another workspace, stream or filter is a 400. An empty page answers the position it started
 * from as its endCursor: the client polls again from there, and misses nothing.
 */
async function readPage<Row extends { tx_id: string; event_id: string }, Event>(
  context: CallContext,
  cursors: CursorCodec,
  stream: string,
  query: EventsQuery,
  read: (request: queries.EventPageRequest) => Promise<Row[]>,
  present: (row: Row) => Event,
): Promise<{ results: Event[]; pageInfo: EventPageInfo }> {
  const scope = cursorScope(context.workspaceId, `${stream}:${query.studyId ?? ''}`);
  let after: queries.StreamPosition | undefined;
  if (query.startCursor !== undefined) {
    const [txId, eventId] = cursors.decode(scope, query.startCursor, ['startCursor']);
    if (typeof txId !== 'string' || typeof eventId !== 'string' || !DIGITS.test(txId) || !DIGITS.test(eventId)) {
      throw badRequest('startCursor is not a valid cursor for this query', ['startCursor']);
    }
    after = { txId, eventId };
  }
  if (query.studyId !== undefined && !(await studyExists(context.db, context.workspaceId, query.studyId))) throw notFound('Study', ['studyId']);
  const size = query.size ?? 25;
  const rows = await read({ workspaceId: context.workspaceId, studyId: query.studyId, after, limit: size + 1 });
  const page = rows.slice(0, size);
  const first = page[0];
  const last = page.at(-1);
  const position = (row: Row) => cursors.encode(scope, [row.tx_id, row.event_id]);
  const here = query.startCursor ?? cursors.encode(scope, [origin.txId, origin.eventId]);
  return {
    results: page.map(present),
    pageInfo: {
      hasNextPage: rows.length > size,
      hasPreviousPage: false,
      startCursor: first === undefined ? here : position(first),
      endCursor: last === undefined ? here : position(last),
    },
  };
}

export function pollParticipantEvents(context: CallContext, cursors: CursorCodec, query: EventsQuery) {
  return readPage(context, cursors, 'participant-status-events', query, (request) => queries.readParticipantEvents(context.db, request), (row) => ({
    eventId: row.event_id,
    occurredAt: row.occurred_at,
    studyId: row.study_id,
    participantId: row.participant_id,
    personId: row.person_id,
    field: row.field,
    from: row.from_value,
    to: row.to_value,
    actor: { kind: row.actor_kind, userId: row.user_id },
  }));
}

export function pollStudyEvents(context: CallContext, cursors: CursorCodec, query: EventsQuery) {
  return readPage(context, cursors, 'study-status-events', query, (request) => queries.readStudyEvents(context.db, request), (row) => ({
    eventId: row.event_id,
    occurredAt: row.occurred_at,
    studyId: row.study_id,
    field: row.field,
    from: row.from_status,
    to: row.to_status,
    actor: { kind: row.actor_kind, userId: row.user_id },
  }));
}
