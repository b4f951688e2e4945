import { type Kysely, type RawBuilder, type SqlBool, sql } from 'kysely';
import type { DB, PropertyType } from '../db/schema.js';
import { type PropertyGroup, referenceNames } from './names.js';
import type { RootFilter } from './schemas.js';

/** How a property's values compare; each type admits its own comparisons (compile.ts). */
export type ValueType = 'text' | 'email' | 'number' | 'datetime' | 'boolean' | 'enum' | 'select' | 'multiselect' | 'membership' | 'location';

/** What every expression may depend on besides the row: the workspace, and "now" from the service's clock. */
export interface CompileContext {
  workspaceId: string;
  now: Date;
  /** The workspace's segments as conditions over `people as p`, loaded (Catalogue.loadContext) only when a query names SEGMENT_MEMBERSHIP. */
  segments?: ReadonlyMap<string, RawBuilder<SqlBool>>;
}

export interface SelectOption {
  id: string;
  name: string;
}

/**
 * A set-valued property kept in rows of its own (population or study membership, referral codes):
 * filtered with HAS_ANY_OF / HAS_ALL_OF / HAS_NONE_OF, sorted by the number of values.
 */
export interface Membership {
  /** `select <value> from … where <belongs to p>`: the values the person of `people as p` has. */
  ids(ctx: CompileContext): RawBuilder<unknown>;
  /** For sets of ids: the resource named in the 404 for an unknown one ("Population not found"), and which ids exist. Free-text sets have none. */
  check?: {
    resource: string;
    existing(db: Kysely<DB>, workspaceId: string, ids: string[]): Promise<Set<string>>;
  };
}

/**
 * One filterable and sortable property: its type, and its value as SQL over `people as p` (null
 * when the person has none). Derived names (counts over history, participant and incentive
 * names) are added as further definitions whose `value` is a correlated subquery.
 */
export interface PropertyDefinition {
  /** How messages name it: "PERSON.EMAIL" or the custom property's name. */
  label: string;
  type: ValueType;
  /** Masked without the personal-data right, so filtering or sorting on it is refused (403). */
  personalData: boolean;
  value(ctx: CompileContext): RawBuilder<unknown>;
  /** enum: the values; select and multiselect: the options (values may name them by name or id). */
  options?: SelectOption[];
  membership?: Membership;
  /** Never null: a keyset page can then start with one row comparison, which an index in sort order answers. */
  notNull?: boolean;
  /**
   * An email's lower() as a stored column: compared and sorted by instead of the expression, which
   * under row-level security could never be an index condition (lower() is not leakproof).
   */
  folded?: (ctx: CompileContext) => RawBuilder<unknown>;
  /**
   * A nullable date-time or number's sort keys, stored: `coalesce(value, infinity)` for ASC and
   * `coalesce(value, -infinity)` for DESC as generated columns (see orderedNulls in compile.ts).
   * The expression itself cannot start a keyset page's index scan under row-level security
   * (PostgreSQL holds COALESCE to be possibly leaky); a plain column comparison can.
   */
  storedSortKeys?: Record<'ASC' | 'DESC', (ctx: CompileContext) => RawBuilder<unknown>>;
  /**
   * An index serves the order this name sorts by (its stored or folded key where it has one), in
   * either direction, with the row's id after it: over the workspace's live people for a PERSON
   * name, over a study's participants for a PARTICIPANT name. A page counted in process may then
   * walk that index and keep the count's matches (src/search/run.ts).
   */
  indexedOrder?: true;
  /** What the value is, for the OpenAPI description (catalogue names only; custom properties are the workspace's own). */
  meaning?: string;
  /**
   * The value is a function of one row alone, the person's or the participant's, or of rows the
   * search change log names the person for (population members, participants, consent
   * submissions), and not of the
   * time: the search counts (src/search/counts/) may then hold it per row, read with `value`
   * (a membership's with its ids).
   */
  countedFrom?: 'person' | 'participant';
  /**
   * The value is the number of the person's instants (read with `instants`, a JSON array of
   * microseconds since the epoch, from rows the change log names the person for) within the last
   * `days` days up to now, both ends included: the counts hold the instants and count at `now`.
   */
  countedWithin?: { key: string; instants: (ctx: CompileContext) => RawBuilder<unknown>; days: number };
  /**
   * A PERSON name read from other rows of the person (participations, incentives, signups…) by a
   * subquery per person: `persons` selects the ids of the workspace's people who have any such
   * row, and a person outside it has the value `empty` (null, or 0 for a count or sum). A filter
   * that the empty value cannot match is then compiled as `p.person_id in (persons) and …`, which
   * the planner answers as a semi-join from those rows: the per-person subquery runs for the
   * people who have rows, not for every person of the workspace (3,004 subqueries, 40–90 ms on the
   * demo's data, became 19 and under 1 ms: docs/benchmarks/search-sql.md). A looser set (people
   * with rows the value then leaves out) is still right, only less selective.
   */
  presence?: { persons: (ctx: CompileContext) => RawBuilder<unknown>; empty: null | 0 };
}

/**
 * The names each group can compute, in every search; every other reference name is refused as not
 * yet computable. The engine knows no family, so it is given them: each family defines its names
 * beside its code, src/families/search-catalogue.ts joins them into one Catalogue, and each search
 * receives it with its call (SearchCall.catalogue, then CompileOptions and PlanOptions). What a
 * name needs loaded first (the segments a filter names) comes the same way, as loadContext.
 */
export interface Catalogue {
  names: Record<PropertyGroup, Record<string, PropertyDefinition>>;
  /**
   * What the filter's names read from the context beyond the workspace and now, loaded before it
   * compiles: the conditions of the segments a SEGMENT_MEMBERSHIP filter names.
   */
  loadContext?(call: ContextCall, context: CompileContext, filter: RootFilter | undefined): Promise<Partial<CompileContext>>;
}

/** What loading a search's context may read: the store, the caller's rights, and the catalogue to compile with. */
export interface ContextCall {
  db: Kysely<DB>;
  workspaceId: string;
  canReadPersonalData: boolean;
  catalogue: Catalogue;
}

/** A catalogue name's definition: own names only, so "constructor" or "toString" are unknown names, not Object's. */
export function computableName(catalogue: Catalogue, group: PropertyGroup, name: string): PropertyDefinition | undefined {
  return Object.hasOwn(catalogue.names[group], name) ? catalogue.names[group][name] : undefined;
}

export const isReferenceName = (group: PropertyGroup, name: string) => referenceNames[group].includes(name);

const customTypes: Record<PropertyType, ValueType> = {
  STRING: 'text',
  NUMBER: 'number',
  DATETIME: 'datetime',
  BOOLEAN: 'boolean',
  SINGLE_SELECT: 'select',
  MULTI_SELECT: 'multiselect',
  LOCATION: 'location',
};

/**
 * A custom property's value out of `p.properties`, cast to its type only when the stored JSON
 * has the expected kind: a malformed stored value reads as empty instead of failing the query.
 */
function customValue(propertyId: string, propertyType: PropertyType): (ctx: CompileContext) => RawBuilder<unknown> {
  return customValueOf(propertyType, sql`p.properties`, sql`cast(${propertyId} as text)`);
}

/**
 * customValue over any `properties` column and key: the query's (`p.properties`, the id bound as
 * a parameter) or the planner statistics' (src/search/property-statistics.ts: the bare column,
 * the id as a literal). Once the parameter is bound the two are the same expression, which is
 * how the planner finds the statistics for a filter.
 */
export function customValueOf(propertyType: PropertyType, properties: RawBuilder<unknown>, key: RawBuilder<unknown>): (ctx: CompileContext) => RawBuilder<unknown> {
  const raw = sql`(${properties} -> ${key})`;
  const text = sql`(${properties} ->> ${key})`;
  const when = (kind: string, then: RawBuilder<unknown>) => sql`(case when jsonb_typeof(${raw}) = ${sql.lit(kind)} then ${then} end)`;
  switch (propertyType) {
    case 'STRING':
    case 'SINGLE_SELECT':
      return () => when('string', text);
    case 'NUMBER':
      return () => when('number', sql`cast(${text} as numeric)`);
    case 'DATETIME':
      return () => when('string', sql`search_timestamptz(${text})`);
    case 'BOOLEAN':
      return () => when('boolean', sql`cast(${text} as boolean)`);
    case 'MULTI_SELECT':
      return () => when('array', raw);
    case 'LOCATION':
      return () => when('object', raw);
  }
}

/** The custom properties a request names, with their options, in one round trip each. */
export async function loadCustomProperties(db: Kysely<DB>, workspaceId: string, propertyIds: string[]): Promise<Map<string, PropertyDefinition>> {
  const found = new Map<string, PropertyDefinition>();
  if (propertyIds.length === 0) return found;
  const properties = await db
    .selectFrom('person_properties')
    .where('workspace_id', '=', workspaceId)
    .where('property_id', 'in', propertyIds)
    .select(['property_id', 'name', 'property_type', 'is_pii', 'is_phi'])
    .execute();
  const selects = properties.filter((property) => property.property_type === 'SINGLE_SELECT' || property.property_type === 'MULTI_SELECT').map((property) => property.property_id);
  const options =
    selects.length === 0
      ? []
      : await db
          .selectFrom('property_options')
          .where('workspace_id', '=', workspaceId)
          .where('property_id', 'in', selects)
          .select(['property_id', 'option_id', 'name'])
          .orderBy('position')
          .execute();
  for (const property of properties) {
    const type = customTypes[property.property_type];
    found.set(property.property_id, {
      label: property.name,
      type,
      personalData: property.is_pii || property.is_phi,
      value: customValue(property.property_id, property.property_type),
      countedFrom: 'person',
      ...(type === 'select' || type === 'multiselect'
        ? { options: options.filter((option) => option.property_id === property.property_id).map((option) => ({ id: option.option_id, name: option.name })) }
        : {}),
    });
  }
  return found;
}
