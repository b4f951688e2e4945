import { sql } from 'kysely';
import type { CallContext as SharedCallContext } from '../../context.js';
import type { CursorCodec } from '../../http/cursor.js';
import { runSearch, type PageRequest } from '../../search/run.js';
import type { RootFilter } from '../../search/schemas.js';
import { catalogue } from '../search-catalogue.js';
import { byPersonId, peopleTarget } from './search-target.js';
import { personJsonColumns, type PersonJsonRow, writePeopleJson } from './service.js';

const columns = sql.join(personJsonColumns.map((column) => (column === 'properties_json' ? sql`cast(p.properties as text) as properties_json` : sql.ref(`p.${column}`))));

export type CallContext = Pick<SharedCallContext, 'db' | 'clock' | 'workspaceId' | 'canReadPersonalData' | 'counts'>;

/**
 * People of the workspace matching a RootFilter, one keyset page in the filter's sort order,
 * with the exact number of matches. Deleted people never match. Each Person comes as its JSON text.
 */
export async function searchPeople(context: CallContext, cursors: CursorCodec, filter: RootFilter | undefined, page: PageRequest) {
  const { db, workspaceId } = context;
  const found = await runSearch<PersonJsonRow>(
    { db, cursors, workspaceId, now: context.clock.now(), canReadPersonalData: context.canReadPersonalData, counts: context.counts, catalogue },
    { ...peopleTarget(workspaceId), columns },
    filter,
    page,
    byPersonId,
  );
  return {
    results: await writePeopleJson(db, workspaceId, found.rows, context.canReadPersonalData),
    total: found.total,
    countedBy: found.countedBy,
    pagePath: found.pagePath,
    pageInfo: { hasNextPage: found.hasNextPage, hasPreviousPage: false as const, startCursor: found.startCursor, endCursor: found.endCursor },
  };
}
