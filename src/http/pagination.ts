import type { CursorCodec } from './cursor.js';
import { badRequest } from './errors.js';

export interface Page<T> {
  results: T[];
  total: number;
  pageInfo: { hasNextPage: boolean; hasPreviousPage: false; startCursor: string; endCursor: string };
}

/**
 * The keyset position a list request starts after. `scope` names the query (route and
 * filters), so a cursor taken from another query does not verify.
 */
export function startAfter(cursors: CursorCodec, scope: string, startCursor: string | undefined, path: string[]): string | undefined {
  if (startCursor === undefined) return undefined;
  const [key] = cursors.decode(scope, startCursor, path);
  if (typeof key !== 'string') throw badRequest('startCursor is not a valid cursor for this query', path);
  return key;
}

export function pageOf<T>(cursors: CursorCodec, scope: string, rows: T[], keyOf: (row: T) => string, hasNextPage: boolean, total: number): Page<T> {
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
