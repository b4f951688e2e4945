import type { CursorCodec } from './cursor.js';
import { badRequest } from './errors.js';

export interface Page<T> {
  results: T[];
  total: number;
  pageInfo: { hasNextPage: boolean; hasPreviousPage: false; startCursor: string; endCursor: string };
}

/**
 * The scope a list's cursors are signed with: the workspace and the query (route, filters,
 * sort). Every cursor is bound to its workspace, so one workspace's cursor is a 400 in another,
 * even for the same query. Build every list's scope with it (searches bind theirs in each
 * family's search-target.ts the same way).
 */
export function cursorScope(workspaceId: string, query: string): CursorScope {
  // Workspace ids hold no ":", so the two parts never run together ambiguously.
  return `${workspaceId}:${query}` as CursorScope;
}

/** A scope made by cursorScope: list helpers take no other, so no list can leave the workspace out. */
export type CursorScope = string & { readonly boundToWorkspace: unique symbol };

/**
 * The keyset position a list request starts after. `scope` (see cursorScope) names the workspace
 * and the query, so a cursor taken from another query or workspace does not verify.
 */
function startAfter(cursors: CursorCodec, scope: CursorScope, startCursor: string | undefined, path: string[]): string | undefined {
  if (startCursor === undefined) return undefined;
  const [key] = cursors.decode(scope, startCursor, path);
  if (typeof key !== 'string') throw badRequest('startCursor is not a valid cursor for this query', path);
  return key;
}

function pageOf<T>(cursors: CursorCodec, scope: CursorScope, rows: T[], keyOf: (row: T) => string, hasNextPage: boolean, total: number): Page<T> {
  const first = rows[0];
  const last = rows.at(-1);
  return {
    results: rows,
    total,
    pageInfo: {
      hasNextPage,
      hasPreviousPage: false,
      startCursor: first === undefined ? '' : cursors.encode(scope, [keyOf(first)]),
      endCursor: last === undefined ? '' : cursors.encode(scope, [keyOf(last)]),
    },
  };
}

/** What a list query answers: one page of rows after a key, whether more follow, and how many match in all. */
export interface KeysetRows<T> {
  rows: T[];
  hasNextPage: boolean;
  total: number;
}

/**
 * A list route's answer: its `startCursor` checked against `scope`, `size` rows (25 unless asked)
 * loaded after that key, and the page with cursors on the rows' keys.
 */
export async function listPage<T>(
  cursors: CursorCodec,
  scope: CursorScope,
  query: { startCursor?: string; size?: number },
  keyOf: (row: T) => string,
  load: (after: string | undefined, size: number) => Promise<KeysetRows<T>>,
): Promise<Page<T>> {
  const after = startAfter(cursors, scope, query.startCursor, ['startCursor']);
  const page = await load(after, query.size ?? 25);
  return pageOf(cursors, scope, page.rows, keyOf, page.hasNextPage, page.total);
}
