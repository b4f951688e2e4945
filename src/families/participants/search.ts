import { sql } from 'kysely';
import type { CallContext as SharedCallContext } from '../../context.js';
import type { CursorCodec } from '../../http/cursor.js';
import { notFound } from '../../http/errors.js';
import { catalogue } from '../search-catalogue.js';
import { runSearch, type PageRequest } from '../../search/run.js';
import type { RootFilter } from '../../search/schemas.js';
import { byParticipantId, participantsTarget } from './search-target.js';
import * as queries from './queries.js';
import { type Participant, type PresentableParticipant, presentedColumns, presentParticipant } from './service.js';

export type CallContext = Pick<SharedCallContext, 'db' | 'clock' | 'workspaceId' | 'canReadPersonalData' | 'counts'>;

/** A page row: the participant's presented columns and its person's contact details, read in the same query. */
type FoundParticipant = PresentableParticipant & {
  person_email: string | null;
  person_phone: string | null;
  person_additional_emails: string[];
  person_additional_phones: string[];
};

// The person is joined for the filter anyway: its contact details come with the page, no second query.
const columns = sql.join([
  ...presentedColumns.map((column) => sql.ref(`pt.${column}`)),
  sql`p.email as person_email`,
  sql`p.phone as person_phone`,
  sql`p.additional_emails as person_additional_emails`,
  sql`p.additional_phones as person_additional_phones`,
]);

/**
 * E1: the participants of a study whose person is not deleted, matching a RootFilter, one keyset
 * page in the filter's sort order (participant id, the order they were added, by default), with
 * the exact number of matches.
 */
export async function searchParticipants(context: CallContext, cursors: CursorCodec, studyId: string, filter: RootFilter | undefined, page: PageRequest) {
  if (!(await queries.studyExists(context.db, context.workspaceId, studyId))) throw notFound('Study', ['studyId']);
  const target = { ...participantsTarget(context.workspaceId, studyId), columns };
  const found = await runSearch<FoundParticipant>(
    { db: context.db, cursors, workspaceId: context.workspaceId, now: context.clock.now(), canReadPersonalData: context.canReadPersonalData, counts: context.counts, catalogue },
    target,
    filter,
    page,
    byParticipantId,
  );
  const results: Participant[] = found.rows.map((row) =>
    presentParticipant(
      row,
      { person_id: row.person_id, email: row.person_email, phone: row.person_phone, additional_emails: row.person_additional_emails, additional_phones: row.person_additional_phones },
      context.canReadPersonalData,
    ),
  );
  return {
    results,
    total: found.total,
    countedBy: found.countedBy,
    pagePath: found.pagePath,
    pageInfo: { hasNextPage: found.hasNextPage, hasPreviousPage: false as const, startCursor: found.startCursor, endCursor: found.endCursor },
  };
}
