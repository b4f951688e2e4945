import { type Kysely, type RawBuilder, type SqlBool, sql } from 'kysely';
import type { DB, PropertyType } from '../db/schema.js';
import { historyNames } from './history-names.js';
import { incentiveNames } from './incentive-names.js';
import { type PropertyGroup, referenceNames } from './names.js';
import { participantNames } from './participant-names.js';
import { enumOptions, named } from './sql.js';

/** How a property's values compare; each type admits its own comparisons (compile.ts). */
export type ValueType = 'text' | 'email' | 'number' | 'datetime' | 'boolean' | 'enum' | 'select' | 'multiselect' | 'membership' | 'location';

/** What every expression may depend on besides the row: the workspace, and "now" from the service's clock. */
export interface CompileContext {
  workspaceId: string;
  now: Date;
  /** The workspace's segments as conditions over `people as p`, loaded only when a query names SEGMENT_MEMBERSHIP. */
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
  /** What the value is, for the OpenAPI description (catalogue names only; custom properties are the workspace's own). */
  meaning?: string;
  /**
   * The value is a function of one row alone, the person's or the participant's, or of rows the
   * search change log names the person for (population members, participants), and not of the
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
}

const column = (name: string) => () => sql.ref(`p.${name}`);
const ownRow = { countedFrom: 'person' } as const;

const core = named('PERSON');

const populationMembership: Membership = {
  ids: () => sql`select m.population_id from population_members as m where m.workspace_id = p.workspace_id and m.person_id = p.person_id`,
  check: {
    resource: 'Population',
    async existing(db, workspaceId, ids) {
      if (ids.length === 0) return new Set();
      const rows = await db.selectFrom('populations').where('workspace_id', '=', workspaceId).where('population_id', 'in', ids).select('population_id').execute();
      return new Set(rows.map((row) => row.population_id));
    },
  },
};

/**
 * The PERSON names, each defined once: those the people row and its memberships determine here,
 * and those derived from participation history, contacts, incentives and signups
 * (history-names.ts). NAME is first and last name joined, as the Person response gives it.
 */
export const SEGMENT_MEMBERSHIP = 'SEGMENT_MEMBERSHIP';

/**
 * The segments whose saved filter the person matches, evaluated in the same query: a segment's
 * members are whoever matches it now (src/search/segments.ts compiles them into the context).
 */
const segmentMembership: Membership = {
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

const populationMembershipName = (label: string, meaning: string) =>
  core(label, 'membership', meaning, (ctx) => sql`(select count(*) from (${populationMembership.ids(ctx)}) as s)`, { membership: populationMembership, notNull: true, countedFrom: 'person' });

const personNames: Record<string, PropertyDefinition> = {
  PERSON_ID: core('PERSON_ID', 'text', "the person's id", column('person_id'), { ...ownRow, notNull: true }),
  NAME: core('NAME', 'text', 'first and last name joined by a space, as the Person response gives it', () => sql`nullif(concat_ws(' ', nullif(p.first_name, ''), nullif(p.last_name, '')), '')`, { ...ownRow, personalData: true }),
  FIRST_NAME: core('FIRST_NAME', 'text', 'the first name', column('first_name'), { ...ownRow, personalData: true }),
  LAST_NAME: core('LAST_NAME', 'text', 'the last name', column('last_name'), { ...ownRow, personalData: true }),
  // Only a purged person has no email (people's check), and purged people are deleted: searches read live ones alone.
  EMAIL: core('EMAIL', 'email', 'the primary email (compared without regard to case)', column('email'), { ...ownRow, personalData: true, notNull: true }),
  PHONE: core('PHONE', 'text', 'the primary phone', column('phone'), { ...ownRow, personalData: true }),
  IMPORT_SOURCE: core('IMPORT_SOURCE', 'text', 'how the person came in by import (CSV_IMPORT for a CSV file)', column('import_source'), ownRow),
  IMPORT_DATE: core('IMPORT_DATE', 'datetime', 'when an import last wrote the person', column('imported_at'), ownRow),
  IMPORT_UPLOAD_LIST: core('IMPORT_UPLOAD_LIST', 'text', 'the id of the import that last wrote the person', column('last_import_id'), ownRow),
  OPTED_OUT: core('OPTED_OUT', 'boolean', 'whether the person opted out', column('is_opted_out'), { ...ownRow, notNull: true }),
  CONTACT_STATUS: core('CONTACT_STATUS', 'enum', 'the contact status', column('contact_status'), { ...ownRow, options: enumOptions(['CONTACTABLE', 'OPTED_OUT', 'UNREACHABLE']), notNull: true }),
  CONTACT_STATUS_UPDATE_DATE: core('CONTACT_STATUS_UPDATE_DATE', 'datetime', 'when the contact status last changed', column('contact_status_updated_at'), ownRow),
  LAST_CHANGED_AT: core('LAST_CHANGED_AT', 'datetime', 'when the person was last changed', column('updated_at'), { ...ownRow, notNull: true }),
  POPULATION_MEMBERSHIP: populationMembershipName('POPULATION_MEMBERSHIP', 'the populations the person belongs to (population ids; sorts by their number)'),
  SEGMENT_MEMBERSHIP: core(
    SEGMENT_MEMBERSHIP,
    'membership',
    "the segments (saved people filters, /segments) whose filter the person matches now (segment ids; sorts by their number)",
    (ctx) => sql`(select count(*) from (${segmentMembership.ids(ctx)}) as s)`,
    { membership: segmentMembership, notNull: true },
  ),
  PANEL_MEMBERSHIP: populationMembershipName('PANEL_MEMBERSHIP', 'the panels the person belongs to: a panel is a population, so this is POPULATION_MEMBERSHIP under another name'),
  ...historyNames,
};

/** The names each group can compute, in every search; every other reference name is refused as not yet computable. */
export const computableNames: Record<PropertyGroup, Record<string, PropertyDefinition>> = {
  PERSON: personNames,
  PARTICIPANT: participantNames,
  INCENTIVE: incentiveNames,
};

/** A catalogue name's definition: own names only, so "constructor" or "toString" are unknown names, not Object's. */
export function computableName(group: PropertyGroup, name: string): PropertyDefinition | undefined {
  return Object.hasOwn(computableNames[group], name) ? computableNames[group][name] : undefined;
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
