import { createHash } from 'node:crypto';
import { type Kysely, type RawBuilder, type SqlBool, sql } from 'kysely';
import type { DB } from '../db/schema.js';
import type { CursorCodec } from '../http/cursor.js';
import { badRequest, notFound } from '../http/errors.js';
import { type Catalogue, type CompileContext, loadCustomProperties } from './catalogue.js';
import { compileRootFilter, type CompiledSearch, type GroupAvailability, namedPropertyIds, type SortKey } from './compile.js';
import type { PropertyGroup } from './names.js';
import type { RootFilter } from './schemas.js';
import { type BoundedMatches, boundedSize, type BoundedTie, type CountedBy, type CountPlan, everyBounded, type Matches, planCount, type SearchCounts, type SortBound, sortColumnOf } from './counts/index.js';
import type { MemberBitmap } from './member-bitmap.js';

/** Who searches, and when: the parts of a call the search needs. */
export interface SearchCall {
  db: Kysely<DB>;
  cursors: CursorCodec;
  workspaceId: string;
  now: Date;
  canReadPersonalData: boolean;
  /** The names the filter may use: the families' catalogue (src/families/search-catalogue.ts), given because the engine imports no family. */
  catalogue: Catalogue;
  /** The counts held in process; without them (or for a plan they cannot answer) SQL counts. */
  counts?: SearchCounts;
}

/**
 * What a search reads: its rows, under the aliases the catalogue's names are written over (`p`
 * the person, `pt` the participant, `i` the incentive), and how they are ordered by default.
 */
export interface SearchTarget {
  /** Binds cursors to this search (route and the ids that scope it); the filter is added to it. */
  scope: string;
  /** FROM and joins, given the groups the query reads: joins no name needs are left out. */
  from(groups: ReadonlySet<PropertyGroup>): RawBuilder<unknown>;
  /** What every row meets: the workspace, the study or form searched, not deleted. */
  where: RawBuilder<SqlBool>;
  /** The row's id (text), which breaks ties in every sort. */
  id: RawBuilder<unknown>;
  /** The columns each row of the page returns. */
  columns: RawBuilder<unknown>;
  groups: GroupAvailability;
  /** Groups whose row a searched row may lack (outer joins): their names may then be null. */
  optionalGroups?: readonly PropertyGroup[];
  /**
   * What the rows are, for the counts held in process: the workspace's live people, or the
   * participants of a study whose person is live. Targets without it are counted by SQL.
   */
  countedOver?: {
    studyId?: string;
    /** The person's person_no (people_by_number finds a person by it): a page of a few matches is read by these numbers (see pageAmong). */
    personNo: RawBuilder<unknown>;
    /** The same number on the searched row itself, which a walk of the row's own index tests without reading the person (see pageWalking); personNo itself when the rows are people. */
    rowPersonNo: RawBuilder<unknown>;
    /**
     * The searched rows alone, without their joins, for walks of this kind: each index a walk of
     * theirs follows holds the sort key, the id and the person number, so that the walk lists the
     * page's ids from the index without reading a row, and the page then reads those rows only
     * (see pageWalking). What `where` leaves out of the target's own, the count's matches imply.
     */
    walkAlone?: { walks: 'person' | 'row'; from: RawBuilder<unknown>; where: RawBuilder<SqlBool> };
  };
}

/** A join the query makes only when it reads the names of `group`. */
export const joinIfRead = (groups: ReadonlySet<PropertyGroup>, group: PropertyGroup, join: RawBuilder<unknown>) => (groups.has(group) ? join : sql``);

export interface SearchPage<Row> {
  rows: Row[];
  total: number;
  /** Whether the counts held in process or SQL counted the total: answered in a Server-Timing header. */
  countedBy: CountedBy;
  /** How the page found its rows (see choosePage), beside countedBy in the Server-Timing header. */
  pagePath: PagePath;
  hasNextPage: boolean;
  startCursor: string;
  endCursor: string;
}

export interface PageRequest {
  startCursor?: string;
  size: number;
}

const cursorPath = ['pageInfo', 'startCursor'];

/** Where a page starts: after the row of this sort key and id, reading time as of `now`. */
interface Position {
  value: string | null;
  id: string;
  now: Date;
}

/**
 * Cursors carry [sort key as text, row id, the first page's now in epoch ms]. The key is text,
 * because a timestamp read into a JS Date loses its microseconds and the page boundary would then
 * skip or repeat rows. `now` is kept so every page of a walk reads relative names (IN_LAST_DAYS,
 * the _L30 counts, "last year") at the same instant: a key that moved with the clock between two
 * pages would otherwise show a row twice or not at all.
 */
function decodePosition(cursors: CursorCodec, scope: string, startCursor: string): Position {
  const key = cursors.decode(scope, startCursor, cursorPath);
  const [value, id, nowMs] = key;
  if (key.length !== 3 || (value !== null && typeof value !== 'string') || typeof id !== 'string' || typeof nowMs !== 'number' || !Number.isSafeInteger(nowMs)) {
    throw badRequest('startCursor is not a valid cursor for this query', cursorPath);
  }
  return { value, id, now: new Date(nowMs) };
}

/**
 * The rows after (value, id) in the order `key direction nulls last, id direction`. For a key
 * that is never null, the row comparison comes with the same bound on the key alone: when the
 * key is the person's and the id the participant's (E1 sorted by a PERSON name), the row
 * comparison spans two tables and cannot bound an index scan, but `key <= value` bounds the scan
 * of an index in the key's order, so a deep page starts where the last one ended.
 */
function after(sort: SortKey, rowId: RawBuilder<unknown>, cursorValue: string | null, id: string): RawBuilder<SqlBool> {
  const beyond = sql.raw(sort.direction === 'ASC' ? '>' : '<');
  const idAfter = sql`${rowId} ${beyond} ${id}`;
  // A cursor issued before the key stood in for nulls carries null for the rows now keyed by the stand-in.
  const value = cursorValue ?? (sort.notNull ? (sort.nullsAs ?? null) : null);
  if (value === null) return sql<SqlBool>`(${sort.key} is null and ${idAfter})`;
  const typed = sql`cast(${value} as ${sql.raw(sort.sqlType)})`;
  if (sort.notNull) return sql<SqlBool>`(${sort.key} ${sql.raw(sort.direction === 'ASC' ? '>=' : '<=')} ${typed} and (${sort.key}, ${rowId}) ${beyond} (${typed}, ${id}))`;
  return sql<SqlBool>`(${sort.key} ${beyond} ${typed} or (${sort.key} = ${typed} and ${idAfter}) or ${sort.key} is null)`;
}

/** A filter's ids of populations, studies, …: an unknown one is a 404 naming the value. */
export async function checkMemberships(call: Pick<SearchCall, 'db' | 'workspaceId'>, compiled: Pick<CompiledSearch, 'membershipChecks'>) {
  const byMembership = new Map<CompiledSearch['membershipChecks'][number]['membership'], string[]>();
  for (const check of compiled.membershipChecks) byMembership.set(check.membership, [...(byMembership.get(check.membership) ?? []), check.id]);
  for (const [membership, ids] of byMembership) {
    if (!membership.check) continue;
    const existing = await membership.check.existing(call.db, call.workspaceId, [...new Set(ids)]);
    const missing = compiled.membershipChecks.find((check) => check.membership === membership && !existing.has(check.id));
    if (missing) throw notFound(membership.check.resource, missing.path);
  }
}

/** The two statements of one page: the page in sort order, and the exact count of matches. */
export interface SearchStatements {
  page: RawBuilder<unknown>;
  count: RawBuilder<{ total: string | number }>;
  scope: string;
  /** The instant relative names were read at: the cursors of this page carry it on. */
  now: Date;
  /** The count as the counts held in process evaluate it, when they can. */
  countPlan?: CountPlan;
  /**
   * The same page, of the rows whose person is among `personNos`: the exact matches the counts
   * found in the page's snapshot, standing in for the filter's condition (countedOver targets).
   */
  pageAmong?: (personNos: Int32Array) => RawBuilder<unknown>;
  /** The same page, of the matches a sort by a held column can reach (Matches.bounded): the listed by person number, each tie's first rows by row id. */
  pageBounded?: (bounded: BoundedMatches) => RawBuilder<unknown>;
  /**
   * The same page again, walking the index that serves the sort (sort.walkable) and keeping the
   * rows whose person is in `members`, a bitmap of the matches: for many matches, where listing
   * them costs more than walking past the others.
   */
  pageWalking?: (members: MemberBitmap) => RawBuilder<unknown>;
  /** What the walk ranges over: the workspace's people, or the searched rows (see SortKey.walkable). */
  walks?: 'person' | 'row';
  /** A sort by a value the counts may hold (a number, a date-time, an email): they then list only the matches that can be on the page (pageAmong). */
  sortBound?: SortBound;
}

/** How a page counted in process finds its rows (see choosePage); `filter` also when SQL counted, `none` when the count found nothing to read. */
export type PagePath = 'filter' | 'list' | 'bounded' | 'walk' | 'none';

/**
 * A walk in sort order reads about (size + 1) × domain / matches rows before it has a page (more
 * when the sort and the filter are correlated); a list reads each match once, but PostgreSQL plans
 * over the whole list (10 ms for 35,000 numbers) and probes each. Measured at 1,000,000 people,
 * 8 clients: a walked row cost about half a listed match.
 */
const WALKED_ROWS_PER_LISTED_MATCH = 2;

/**
 * Bounding a sort by a person's value (Matches.bounded) visits every match in process, about this
 * many in the time PostgreSQL walks one row of the sort's index and tests it; and then lists the
 * page's rows by person number, each costing about WALKED_ROWS_PER_BOUNDED_ROW walked rows. Both
 * were read off the search bench (1,000,000 people, 8 clients, walked against bounded):
 * POST /people/search a (347,000 matches), 25 rows: 19 against 39 ms, 1000 rows: 157 against 183;
 * E1 a (35,000 matches, a walk of 28,600 people for 1000 rows): 263 against 153; E1 h 1000 rows:
 * 314 against 149; E1 a 25 rows (a walk of 743): 27 against 31, a near tie, which the second
 * constant, set high, leaves to the walk.
 */
const BOUNDED_MATCHES_PER_WALKED_ROW = 90;
const WALKED_ROWS_PER_BOUNDED_ROW = 16;

/**
 * How a page counted in process reads its rows: walking the sort's index and keeping the matches
 * when that passes few rows; else listing only the matches that can be on the page when the counts
 * hold the sort's values (`bounded`); else listing the matches when they are few enough, and
 * otherwise in sort order by the filter itself, which then meets its rows soon enough. For a
 * person's value the bound goes first when the walk would pass more rows than the bound costs
 * (above). For a participant's value the bound goes first (E1 b, SCHEDULED by session: 137 ms
 * walked, 71 bounded).
 */
export function choosePage(
  statements: Pick<SearchStatements, 'pageBounded' | 'pageAmong' | 'pageWalking' | 'walks' | 'sortBound'>,
  matches: Matches,
  size: number,
): { path: Exclude<PagePath, 'none'>; bounded?: BoundedMatches } {
  const bounded = () => {
    const found = statements.sortBound && statements.pageBounded ? matches.bounded(statements.sortBound) : undefined;
    return found && boundedSize(found) <= PAGE_AMONG_LIMIT ? { path: 'bounded' as const, bounded: found } : undefined;
  };
  const walked = statements.pageWalking && statements.walks ? ((size + 1) * (statements.walks === 'person' ? matches.people : matches.rows)) / matches.total : undefined;
  // A participant's value goes the other way: walking a study's rows in, say, session order meets
  // the filter's matches late when the two go together (SCHEDULED participants have the future
  // sessions), which the estimate cannot see; bounding passes over the study's rows once.
  const boundFirst =
    statements.sortBound?.column.source === 'participant' ||
    (walked !== undefined && walked > matches.total / BOUNDED_MATCHES_PER_WALKED_ROW + WALKED_ROWS_PER_BOUNDED_ROW * (size + 1));
  const first = boundFirst ? bounded() : undefined;
  if (first) return first;
  const walks = walked !== undefined && walked <= WALKED_ROWS_PER_LISTED_MATCH * matches.total;
  if (walks) return { path: 'walk' };
  const second = boundFirst ? undefined : bounded();
  if (second) return second;
  return { path: statements.pageAmong && matches.total <= PAGE_AMONG_LIMIT ? 'list' : 'filter' };
}

/**
 * Up to this many matches, a page counted in process is read by its matches' person numbers
 * instead of the filter. The planner then knows how few rows match (a filter on a jsonb location,
 * a trigram match or a multi-select with a date was misjudged by orders of magnitude, and the
 * page walked or sorted a million people: 0.4–13 s at 1,000,000), and a hashed `= any` costs the
 * same whatever the filter. Above it, a page in sort order meets its rows soon enough by the
 * filter; listing the numbers, and planning over them, would cost more.
 */
export const PAGE_AMONG_LIMIT = 50_000;

/** Person numbers as one int4[] parameter, sent as its text. */
const int4Array = (personNos: Int32Array) => sql`cast(${`{${personNos.join(',')}}`} as int4[])`;

/** The Server-Timing header of a search response: how its total was counted, how long the request took so far, and how its page found its rows. */
export const serverTiming = (countedBy: CountedBy, startedAt: number, pagePath: PagePath) =>
  `total;desc="${countedBy}";dur=${(performance.now() - startedAt).toFixed(1)}, page;desc="${pagePath}"`;

/** JSON with every object's keys in order: the same filter, however its keys were ordered, hashes alike. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).filter(([, item]) => item !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/**
 * Validates and compiles a RootFilter for `target`, returning the page and count statements. The
 * search bench sends these same statements straight to PostgreSQL as its floor.
 */
export async function compileSearch(call: SearchCall, target: SearchTarget, filter: RootFilter | undefined, page: PageRequest, defaultSort: SortKey): Promise<SearchStatements> {
  const { db, workspaceId } = call;
  // The scope binds a cursor to this search, its filter and sort: another query's cursor fails its MAC.
  const scope = `${target.scope}:${createHash('sha256').update(canonicalJson(filter ?? null)).digest('base64url')}`;
  const start = page.startCursor === undefined ? undefined : decodePosition(call.cursors, scope, page.startCursor);
  const now = start?.now ?? call.now;

  const { catalogue } = call;
  const customProperties = await loadCustomProperties(db, workspaceId, namedPropertyIds(filter, catalogue));
  const bare: CompileContext = { workspaceId, now };
  const context: CompileContext = { ...bare, ...(await catalogue.loadContext?.(call, bare, filter)) };
  const compileOptions = {
    catalogue,
    context,
    canReadPersonalData: call.canReadPersonalData,
    customProperties,
    groups: target.groups,
    optionalGroups: new Set(target.optionalGroups ?? []),
    defaultSort,
  };
  const compiled = compileRootFilter(filter, compileOptions);
  await checkMemberships(call, compiled);
  const countPlan =
    call.counts && target.countedOver
      ? planCount(filter, { catalogue, context, customProperties, sqlCondition: (leaf) => compileRootFilter({ filters: [leaf] }, compileOptions).where! })
      : undefined;

  const { sort } = compiled;
  const matches = compiled.where ? sql<SqlBool>`${target.where} and ${compiled.where}` : target.where;
  const direction = sql.raw(sort.direction === 'ASC' ? 'asc' : 'desc');
  const pageWhere = start ? sql<SqlBool>`${matches} and ${after(sort, target.id, start.value, start.id)}` : matches;
  // A key that is never null needs no NULLS clause, and without one an index in sort order serves either direction.
  const orderKey = sort.notNull ? sql`${sort.key} ${direction}` : sql`${sort.key} ${direction} nulls last`;
  const pageGroups = new Set([...compiled.filterGroups, ...compiled.sortGroups]);
  const pageStatement = sql`
    select ${target.columns}, cast(${sort.key} as text) as sort_key, ${target.id} as row_id
    from ${target.from(pageGroups)}
    where ${pageWhere}
    order by ${orderKey}, ${target.id} ${direction}
    limit ${sql.lit(page.size + 1)}`;
  const countStatement = sql<{ total: string | number }>`select count(*) as total from ${target.from(compiled.filterGroups)} where ${matches}`;
  const { countedOver } = target;
  /** The page of the target's rows meeting `members` instead of the filter, which the count's matches stand in for. */
  const pageOfMatches = (members: RawBuilder<SqlBool>) => {
    const among = sql<SqlBool>`${target.where} and ${members}`;
    return sql`
      select ${target.columns}, cast(${sort.key} as text) as sort_key, ${target.id} as row_id
      from ${target.from(new Set(compiled.sortGroups))}
      where ${start ? sql<SqlBool>`${among} and ${after(sort, target.id, start.value, start.id)}` : among}
      order by ${orderKey}, ${target.id} ${direction}
      limit ${sql.lit(page.size + 1)}`;
  };
  const pageAmong =
    countPlan && countedOver
      ? (personNos: Int32Array) => pageOfMatches(sql<SqlBool>`${countedOver.personNo} = any (${int4Array(personNos)})`)
      : undefined;
  const pageBounded =
    pageAmong && countedOver
      ? (bounded: BoundedMatches) => {
          if (bounded.ties.length === 0) return pageAmong(everyBounded(bounded));
          // Each tie's first rows by id (past the position's id, at the position's value), read
          // with no sort key: by an index in id order that holds the person number (people_live,
          // participants_of_study) when the tie is wide, by number when it is few (E1: the
          // person's then, joined to the participant); the planner weighs the two.
          const idBeyond = sql.raw(sort.direction === 'ASC' ? '>' : '<');
          const rows = sql.lit(page.size + 1);
          const walk = (tie: BoundedTie, condition: RawBuilder<unknown>) => {
            const tied = int4Array(tie.personNos);
            const byPerson = countedOver.personNo === countedOver.rowPersonNo ? sql`` : sql` and ${countedOver.personNo} = any (${tied})`;
            return sql`
              select ${countedOver.rowPersonNo} from ${target.from(new Set())}
              where ${target.where} and ${countedOver.rowPersonNo} = any (${tied})${byPerson}${condition}
              order by ${target.id} ${direction}
              limit ${rows}`;
          };
          const atPosition = bounded.ties.find((tie) => tie.atPosition);
          const atLimit = bounded.ties.find((tie) => !tie.atPosition);
          const parts = [sql`select unnest(${int4Array(bounded.listed)})`];
          if (atPosition) parts.push(sql`select * from at_position`);
          // The position's value is the least past it: when its ties past the position's id fill
          // the page, the limit's cannot be on it, and are not walked (a one-time filter).
          if (atLimit) parts.push(sql`(${walk(atLimit, atPosition ? sql` and (select count(*) from at_position) < ${rows}` : sql``)})`);
          // One array of the listed and the walked, compared as a bare parameter: under row-level
          // security only a leakproof condition reaches an index, and array_cat() is not one (the
          // page read all 1,000,000 people).
          const candidates = sql`array(
            ${atPosition ? sql`with at_position as (${walk(atPosition, start ? sql` and ${target.id} ${idBeyond} ${start.id}` : sql``)})` : sql``}
            ${sql.join(parts, sql` union all `)})`;
          return pageOfMatches(sql<SqlBool>`${countedOver.personNo} = any (${candidates})`);
        }
      : undefined;
  const walks = sort.walkable;
  const pageWalking =
    countPlan && countedOver && walks
      ? ({ bytes, offset, last }: MemberBitmap) => {
          // Cast to boolean rather than compared with 1: PostgreSQL guesses that a third of the
          // rows pass a boolean function, and half a percent an equality, which made it sort
          // every row for a page of 1,000 instead of walking the index.
          const personNo = walks === 'person' ? countedOver.personNo : countedOver.rowPersonNo;
          const member = sql<SqlBool>`cast(get_bit(cast(${bytes} as bytea), least(greatest(${personNo} - ${sql.lit(offset)}, 0), ${sql.lit(last)})) as boolean)`;
          const alone = countedOver.walkAlone?.walks === walks ? countedOver.walkAlone : undefined;
          if (!alone) return pageOfMatches(member);
          // The ids first, from the index alone (the rows a walk passes are 10 to 30 times the
          // page's); as an array, so that the page reads exactly those rows by their key.
          const walked = sql`
            select ${target.id} from ${alone.from}
            where ${alone.where} and ${start ? sql<SqlBool>`${after(sort, target.id, start.value, start.id)} and ${member}` : member}
            order by ${orderKey}, ${target.id} ${direction}
            limit ${sql.lit(page.size + 1)}`;
          return pageOfMatches(sql<SqlBool>`${target.id} = any(array(${walked}))`);
        }
      : undefined;
  const sortColumn = countPlan && sortColumnOf(filter?.sort, { catalogue, context, customProperties });
  const sortBound: SortBound | undefined = sortColumn && { column: sortColumn, direction: sort.direction, rows: page.size + 1, ...(start ? { after: start.value } : {}) };
  return {
    page: pageStatement,
    count: countStatement,
    scope,
    now,
    ...(countPlan ? { countPlan } : {}),
    ...(pageAmong ? { pageAmong } : {}),
    ...(pageBounded ? { pageBounded } : {}),
    ...(pageWalking ? { pageWalking, walks } : {}),
    ...(sortBound ? { sortBound } : {}),
  };
}

/**
 * The rows of `target` matching a RootFilter, one keyset page in the filter's sort order, with
 * the exact number of matches.
 */
export async function runSearch<Row>(call: SearchCall, target: SearchTarget, filter: RootFilter | undefined, page: PageRequest, defaultSort: SortKey): Promise<SearchPage<Row>> {
  const statements = await compileSearch(call, target, filter, page, defaultSort);
  type Found = Row & { sort_key: string | null; row_id: string };
  const pageStatement = statements.page as RawBuilder<Found>;
  let pagePath: PagePath = 'filter';
  const counted =
    statements.countPlan && call.counts
      ? await call.counts.count(call.workspaceId, target.countedOver?.studyId, statements.countPlan, async (transaction, matches) => {
          if (matches.total === 0) {
            pagePath = 'none';
            return [];
          }
          const chosen = choosePage(statements, matches, page.size);
          pagePath = chosen.path;
          const statement =
            pagePath === 'walk'
              ? statements.pageWalking!(matches.bitmap())
              : pagePath === 'bounded'
                ? statements.pageBounded!(chosen.bounded!)
                : pagePath === 'list'
                  ? statements.pageAmong!(matches.personNos())
                  : pageStatement;
          // A page reads at most 1,001 rows: parallel workers only add their start-up, and on a
          // small machine under concurrent searches they take cores from the other searches
          // (E1's first page of a select, 8 clients on 2 cores: 165 ms with them, 67 without).
          await sql`set local max_parallel_workers_per_gather = 0`.execute(transaction);
          return (await (statement as RawBuilder<Found>).execute(transaction)).rows;
        }, statements.sortBound?.column)
      : ({ by: 'sql' } as const);
  const [rows, total] =
    counted.by === 'counts'
      ? [counted.page, counted.total]
    : await Promise.all([pageStatement.execute(call.db).then((found) => found.rows), statements.count.execute(call.db).then((result) => Number(result.rows[0]!.total))]);
  const hasNextPage = rows.length > page.size;
  const shown = hasNextPage ? rows.slice(0, page.size) : rows;
  const cursorOf = (row: Found | undefined) => (row === undefined ? '' : call.cursors.encode(statements.scope, [row.sort_key, row.row_id, statements.now.getTime()]));
  return {
    // Each row keeps its sort_key and row_id: the families present rows field by field, and copying
    // a 1000-row page's rows without the two was 5% of what such a page allocated.
    rows: shown,
    total,
    countedBy: counted.by,
    pagePath,
    hasNextPage,
    startCursor: cursorOf(shown[0]),
    endCursor: cursorOf(shown.at(-1)),
  };
}
