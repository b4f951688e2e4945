import { createHash } from 'node:crypto';
import { type Kysely, type SqlBool, sql } from 'kysely';
import type { DB, PeopleTable } from '../db/schema.js';
import type { CursorCodec } from '../http/cursor.js';
import { badRequest, notFound } from '../http/errors.js';
import type { Selectable } from 'kysely';
import { loadCustomProperties } from './catalogue.js';
import { compileRootFilter, namedPropertyIds, type SortKey } from './compile.js';
import type { RootFilter } from './schemas.js';

export interface PeopleSearch {
  db: Kysely<DB>;
  cursors: CursorCodec;
  workspaceId: string;
  now: Date;
  canReadPersonalData: boolean;
}

export interface PeopleSearchPage {
  rows: Selectable<PeopleTable>[];
  total: number;
  hasNextPage: boolean;
  startCursor: string;
  endCursor: string;
}

const cursorPath = ['pageInfo', 'startCursor'];

/**
 * Cursors carry [sort key as text, person id]: text, because a timestamp read into a JS Date
 * loses its microseconds and the page boundary would then skip or repeat rows.
 */
function decodeKey(cursors: CursorCodec, scope: string, startCursor: string): [string | null, string] {
  const key = cursors.decode(scope, startCursor, cursorPath);
  const [value, personId] = key;
  if (key.length !== 2 || (value !== null && typeof value !== 'string') || typeof personId !== 'string') {
    throw badRequest('startCursor is not a valid cursor for this query', cursorPath);
  }
  return [value, personId];
}

/** The rows after (value, personId) in the order `key direction nulls last, person_id direction`. */
function after(sort: SortKey, value: string | null, personId: string) {
  const beyond = sql.raw(sort.direction === 'ASC' ? '>' : '<');
  const id = sql`p.person_id ${beyond} ${personId}`;
  if (value === null) return sql<SqlBool>`(${sort.key} is null and ${id})`;
  const typed = sql`cast(${value} as ${sql.raw(sort.sqlType)})`;
  if (sort.notNull) return sql<SqlBool>`(${sort.key}, p.person_id) ${beyond} (${typed}, ${personId})`;
  return sql<SqlBool>`(${sort.key} ${beyond} ${typed} or (${sort.key} = ${typed} and ${id}) or ${sort.key} is null)`;
}

/**
 * People of the workspace matching a RootFilter, one keyset page in the filter's sort order,
 * with the exact number of matches. Deleted people never match.
 */
export async function searchPeople(search: PeopleSearch, filter: RootFilter | undefined, page: { startCursor?: string; size: number }): Promise<PeopleSearchPage> {
  const { db, workspaceId } = search;
  const customProperties = await loadCustomProperties(db, workspaceId, namedPropertyIds(filter));
  const compiled = compileRootFilter(filter, { context: { workspaceId, now: search.now }, canReadPersonalData: search.canReadPersonalData, customProperties });

  const byMembership = new Map<(typeof compiled.membershipChecks)[number]['membership'], string[]>();
  for (const check of compiled.membershipChecks) byMembership.set(check.membership, [...(byMembership.get(check.membership) ?? []), check.id]);
  for (const [membership, ids] of byMembership) {
    const existing = await membership.existing(db, workspaceId, [...new Set(ids)]);
    const missing = compiled.membershipChecks.find((check) => check.membership === membership && !existing.has(check.id));
    if (missing) throw notFound(membership.resource, missing.path);
  }

  // The scope binds a cursor to this workspace, filter and sort: another query's cursor fails its MAC.
  const scope = `people-search:${workspaceId}:${createHash('sha256').update(JSON.stringify(filter ?? null)).digest('base64url')}`;
  const start = page.startCursor === undefined ? undefined : decodeKey(search.cursors, scope, page.startCursor);

  let matches = db.selectFrom('people as p').where('p.workspace_id', '=', workspaceId).where('p.deleted_at', 'is', null);
  if (compiled.where) matches = matches.where(compiled.where);
  const { sort } = compiled;
  const direction = sql.raw(sort.direction === 'ASC' ? 'asc' : 'desc');
  const pageQuery = (start ? matches.where(after(sort, start[0], start[1])) : matches)
    .selectAll('p')
    .select(sql<string | null>`cast(${sort.key} as text)`.as('sort_key'))
    // A key that is never null needs no NULLS clause, and without one an index in sort order serves either direction.
    .orderBy(sort.notNull ? sql`${sort.key} ${direction}` : sql`${sort.key} ${direction} nulls last`)
    .orderBy(sql`p.person_id ${direction}`)
    .limit(page.size + 1);
  const countQuery = matches.select((eb) => eb.fn.countAll<string | number>().as('total'));
  const [rows, count] = await Promise.all([pageQuery.execute(), countQuery.executeTakeFirstOrThrow()]);

  const hasNextPage = rows.length > page.size;
  const shown = hasNextPage ? rows.slice(0, page.size) : rows;
  const cursorOf = (row: (typeof rows)[number] | undefined) => (row === undefined ? '' : search.cursors.encode(scope, [row.sort_key, row.person_id]));
  return {
    rows: shown.map(({ sort_key: _sortKey, ...person }) => person),
    total: Number(count.total),
    hasNextPage,
    startCursor: cursorOf(shown[0]),
    endCursor: cursorOf(shown.at(-1)),
  };
}
