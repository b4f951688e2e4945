import { sql } from 'kysely';
import type { CallContext as SharedCallContext } from '../../context.js';
import type { CursorCodec } from '../../http/cursor.js';
import { notFound } from '../../http/errors.js';
import { catalogue } from '../search-catalogue.js';
import { runSearch, type PageRequest } from '../../search/run.js';
import type { RootFilter } from '../../search/schemas.js';
import { byIncentiveId, incentivesTarget } from './search-target.js';
import { studyExists } from '../participants/queries.js';
import { incentiveColumns, type PresentableIncentiveRow } from './queries.js';
import { presentIncentive } from './service.js';

export type CallContext = Pick<SharedCallContext, 'db' | 'clock' | 'workspaceId' | 'canReadPersonalData'>;

type FoundIncentive = PresentableIncentiveRow & { recipient_email: string | null };

// The recipient is joined (while not deleted) for PERSON names anyway: their email comes with the page.
const columns = sql.join([...incentiveColumns.map((column) => sql.ref(`i.${column}`)), sql`p.email as recipient_email`]);

/**
 * E7: the incentives of the workspace (of one study with `studyId`) matching a RootFilter, one
 * keyset page in the filter's sort order (incentive id, the order they were sent, by default),
 * with the exact number of matches. Incentives of deleted recipients stay, with recipientEmail null.
 */
export async function searchIncentives(context: CallContext, cursors: CursorCodec, studyId: string | undefined, filter: RootFilter | undefined, page: PageRequest) {
  const { db, workspaceId } = context;
  if (studyId !== undefined && !(await studyExists(db, workspaceId, studyId))) throw notFound('Study', ['studyId']);
  const found = await runSearch<FoundIncentive>(
    { db, cursors, workspaceId, now: context.clock.now(), canReadPersonalData: context.canReadPersonalData, catalogue },
    { ...incentivesTarget(workspaceId, studyId), columns },
    filter,
    page,
    byIncentiveId,
  );
  return {
    results: found.rows.map((row) => presentIncentive(row, row.recipient_email, context.canReadPersonalData)),
    total: found.total,
    pageInfo: { hasNextPage: found.hasNextPage, hasPreviousPage: false as const, startCursor: found.startCursor, endCursor: found.endCursor },
  };
}
