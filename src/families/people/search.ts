import type { Selectable } from 'kysely';
import type { PeopleTable } from '../../db/schema.js';
import { runSearch, type PageRequest, type SearchCall, type SearchPage } from '../../search/run.js';
import type { RootFilter } from '../../search/schemas.js';
import { byPersonId, peopleTarget } from './search-target.js';

export type PeopleSearchPage = SearchPage<Selectable<PeopleTable>>;

/**
 * People of the workspace matching a RootFilter, one keyset page in the filter's sort order,
 * with the exact number of matches. Deleted people never match.
 */
export function searchPeople(call: SearchCall, filter: RootFilter | undefined, page: PageRequest): Promise<PeopleSearchPage> {
  return runSearch(call, peopleTarget(call.workspaceId), filter, page, byPersonId);
}
