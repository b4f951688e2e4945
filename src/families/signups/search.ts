import type { CallContext as SharedCallContext } from '../../context.js';
import type { CursorCodec } from '../../http/cursor.js';
import { notFound } from '../../http/errors.js';
import { catalogue } from '../search-catalogue.js';
import { runSearch, type PageRequest } from '../../search/run.js';
import type { RootFilter } from '../../search/schemas.js';
import { bySubmissionId, submissionsTarget } from './search-target.js';
import { studyExists } from '../participants/queries.js';
import * as queries from './queries.js';
import { presentSubmissions } from './service.js';

export type CallContext = Pick<SharedCallContext, 'db' | 'clock' | 'workspaceId' | 'canReadPersonalData'>;

/**
 * E6: the submissions of a signup form whose person is not deleted, matching a RootFilter, one
 * keyset page in the filter's sort order (submission id, the order they came in, by default),
 * with the exact number of matches. `studyId` gives PARTICIPANT names their study.
 */
export async function searchSubmissions(context: CallContext, cursors: CursorCodec, signupFormId: string, studyId: string | undefined, filter: RootFilter | undefined, page: PageRequest) {
  const { db, workspaceId } = context;
  if (!(await queries.findForm(db, workspaceId, signupFormId))) throw notFound('Signup form', ['signupFormId']);
  if (studyId !== undefined && !(await studyExists(db, workspaceId, studyId))) throw notFound('Study', ['studyId']);
  const found = await runSearch<queries.SubmissionRow>(
    { db, cursors, workspaceId, now: context.clock.now(), canReadPersonalData: context.canReadPersonalData, catalogue },
    submissionsTarget(workspaceId, signupFormId, studyId),
    filter,
    page,
    bySubmissionId,
  );
  return {
    results: presentSubmissions(found.rows),
    total: found.total,
    pageInfo: { hasNextPage: found.hasNextPage, hasPreviousPage: false as const, startCursor: found.startCursor, endCursor: found.endCursor },
  };
}
