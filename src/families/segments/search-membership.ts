import { type RawBuilder, type SqlBool, sql } from 'kysely';
import { ApiError, personalDataRequired } from '../../http/errors.js';
import { type Catalogue, type CompileContext, type ContextCall, loadCustomProperties, type Membership } from '../../search/catalogue.js';
import { compileRootFilter, type GroupAvailability, isGroup, namedPropertyIds } from '../../search/compile.js';
import type { Filter, FilterGroup, RootFilter } from '../../search/schemas.js';
import { byPersonId } from '../people/search-target.js';

export const SEGMENT_MEMBERSHIP = 'SEGMENT_MEMBERSHIP';

/**
 * The segments whose saved filter the person matches, evaluated in the same query: a segment's
 * members are whoever matches it now (loadSegmentConditions below compiles them into the context).
 * PERSON.SEGMENT_MEMBERSHIP (../people/search-names.ts) reads it.
 */
export const segmentMembership: Membership = {
  ids: (ctx) => {
    const segments = [...(ctx.segments ?? new Map<string, RawBuilder<SqlBool>>())];
    if (segments.length === 0) return sql`select cast(null as text) where false`;
    const rows = sql.join(segments.map(([segmentId, condition]) => sql`(cast(${segmentId} as text), ${condition})`));
    return sql`select s.segment_id from (values ${rows}) as s(segment_id, matches) where s.matches`;
  },
  check: {
    resource: 'Segment',
    async existing(db, workspaceId, ids) {
      if (ids.length === 0) return new Set();
      const rows = await db.selectFrom('segments').where('workspace_id', '=', workspaceId).where('segment_id', 'in', ids).select('segment_id').execute();
      return new Set(rows.map((row) => row.segment_id));
    },
  },
};

/** A segment filters people: the names it may use. */
export const segmentGroups: GroupAvailability = {
  PERSON: true,
  PARTICIPANT: 'A segment filters people: PARTICIPANT names need a study',
  INCENTIVE: 'A segment filters people: INCENTIVE names need a study',
};

const namesSegments = (item: Filter) => 'propertyName' in item.property && item.property.propertyGroup === 'PERSON' && item.property.propertyName === SEGMENT_MEMBERSHIP;

/** The path of the first Filter (or the sort) naming SEGMENT_MEMBERSHIP, if any. */
export function segmentMembershipPath(filter: RootFilter | undefined): string[] | undefined {
  if (!filter) return undefined;
  const find = (items: (Filter | FilterGroup)[], path: string[]): string[] | undefined => {
    for (const [index, item] of items.entries()) {
      const itemPath = [...path, 'filters', String(index)];
      const found = isGroup(item) ? find(item.filters, itemPath) : namesSegments(item) ? itemPath : undefined;
      if (found) return found;
    }
    return undefined;
  };
  return find(filter.filters, ['filter']) ?? (filter.sort?.propertyGroup === 'PERSON' && filter.sort.propertyName === SEGMENT_MEMBERSHIP ? ['filter', 'sort'] : undefined);
}

/**
 * Which segments a search needs: those a SEGMENT_MEMBERSHIP filter names, or all of the
 * workspace's when it sorts by the number of segments matched; undefined when it names none.
 */
export function segmentsNamed(filter: RootFilter | undefined): { ids: string[] } | 'all' | undefined {
  if (!filter) return undefined;
  if (filter.sort?.propertyGroup === 'PERSON' && filter.sort.propertyName === SEGMENT_MEMBERSHIP) return 'all';
  const ids = new Set<string>();
  let named = false;
  const visit = (items: (Filter | FilterGroup)[]) => {
    for (const item of items) {
      if (isGroup(item)) visit(item.filters);
      else if (namesSegments(item)) {
        named = true;
        if (Array.isArray(item.value)) for (const id of item.value) if (typeof id === 'string') ids.add(id);
      }
    }
  };
  visit(filter.filters);
  return named ? { ids: [...ids] } : undefined;
}

/** The catalogue's loadContext: the conditions of the segments a filter names, when it names any. */
export async function segmentContext(call: ContextCall, context: CompileContext, filter: RootFilter | undefined): Promise<Partial<CompileContext>> {
  const which = segmentsNamed(filter);
  return which ? { segments: await loadSegmentConditions(call, context, which) } : {};
}

/**
 * The segments a search needs, each as a condition over `people as p`. A segment whose filter no
 * longer compiles (a property it names was deleted since) matches nobody. A segment defined on
 * personal data answers who holds it, so a token without the personal-data right may not use it (403).
 */
export async function loadSegmentConditions(call: ContextCall, context: CompileContext, which: { ids: string[] } | 'all'): Promise<Map<string, RawBuilder<SqlBool>>> {
  let query = call.db.selectFrom('segments').where('workspace_id', '=', call.workspaceId).select(['segment_id', 'filter', 'uses_personal_data']).orderBy('segment_id');
  if (which !== 'all') {
    if (which.ids.length === 0) return new Map();
    query = query.where('segment_id', 'in', which.ids);
  }
  const rows = await query.execute();
  if (!call.canReadPersonalData && rows.some((row) => row.uses_personal_data)) throw personalDataRequired('A segment defined on personal data');
  const filters = rows.map((row) => ({ segmentId: row.segment_id, filter: row.filter as RootFilter }));
  const customProperties = await loadCustomProperties(call.db, call.workspaceId, [...new Set(filters.flatMap(({ filter }) => namedPropertyIds(filter, call.catalogue)))]);
  const conditions = new Map<string, RawBuilder<SqlBool>>();
  for (const { segmentId, filter } of filters) {
    conditions.set(segmentId, compileSegmentFilter(call.catalogue, filter, context, customProperties) ?? sql<SqlBool>`false`);
  }
  return conditions;
}

/** A segment's filter as a condition; undefined when it cannot be compiled any more. */
function compileSegmentFilter(catalogue: Catalogue, filter: RootFilter, context: CompileContext, customProperties: Awaited<ReturnType<typeof loadCustomProperties>>): RawBuilder<SqlBool> | undefined {
  try {
    const compiled = compileRootFilter(filter, {
      catalogue,
      context,
      // Who may use a segment on personal data is settled above, by its stored flag.
      canReadPersonalData: true,
      customProperties,
      groups: segmentGroups,
      defaultSort: byPersonId,
    });
    return compiled.where ?? sql<SqlBool>`true`;
  } catch (error) {
    if (error instanceof ApiError) return undefined;
    throw error;
  }
}
