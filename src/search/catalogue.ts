import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { DB, PropertyType } from '../db/schema.js';
import { type PropertyGroup, referenceNames } from './names.js';

/** How a property's values compare; each type admits its own comparisons (compile.ts). */
export type ValueType = 'text' | 'email' | 'number' | 'datetime' | 'boolean' | 'enum' | 'select' | 'multiselect' | 'membership' | 'location';

/** What every expression may depend on besides the row: the workspace, and "now" from the service's clock. */
export interface CompileContext {
  workspaceId: string;
  now: Date;
}

export interface SelectOption {
  id: string;
  name: string;
}

/** A set-valued property kept in rows of its own (population membership, later study membership). */
export interface Membership {
  /** The resource named in the 404 for an unknown id ("Population not found"). */
  resource: string;
  /** `select <id> from … where <belongs to p>`: the ids the person of `people as p` belongs to. */
  ids(ctx: CompileContext): RawBuilder<unknown>;
  /** Which of `ids` exist in the workspace. */
  existing(db: Kysely<DB>, workspaceId: string, ids: string[]): Promise<Set<string>>;
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
}

const column = (name: string) => () => sql.ref(`p.${name}`);

const core = (label: string, type: ValueType, value: (ctx: CompileContext) => RawBuilder<unknown>, extra: Partial<PropertyDefinition> = {}): PropertyDefinition => ({
  label: `PERSON.${label}`,
  type,
  personalData: false,
  value,
  ...extra,
});

const enumOptions = (values: readonly string[]): SelectOption[] => values.map((value) => ({ id: value, name: value }));

const populationMembership: Membership = {
  resource: 'Population',
  ids: () => sql`select m.population_id from population_members as m where m.workspace_id = p.workspace_id and m.person_id = p.person_id`,
  async existing(db, workspaceId, ids) {
    if (ids.length === 0) return new Set();
    const rows = await db.selectFrom('populations').where('workspace_id', '=', workspaceId).where('population_id', 'in', ids).select('population_id').execute();
    return new Set(rows.map((row) => row.population_id));
  },
};

/**
 * The PERSON names that the people table alone determines, each defined once. NAME is first and
 * last name joined, as the Person response gives it; POPULATION_MEMBERSHIP sorts by the number of
 * populations; IMPORT_UPLOAD_LIST is the id of the import that last wrote the person.
 */
const personNames: Record<string, PropertyDefinition> = {
  PERSON_ID: core('PERSON_ID', 'text', column('person_id'), { notNull: true }),
  NAME: core('NAME', 'text', () => sql`nullif(concat_ws(' ', nullif(p.first_name, ''), nullif(p.last_name, '')), '')`, { personalData: true }),
  FIRST_NAME: core('FIRST_NAME', 'text', column('first_name'), { personalData: true }),
  LAST_NAME: core('LAST_NAME', 'text', column('last_name'), { personalData: true }),
  EMAIL: core('EMAIL', 'email', column('email'), { personalData: true }),
  PHONE: core('PHONE', 'text', column('phone'), { personalData: true }),
  IMPORT_SOURCE: core('IMPORT_SOURCE', 'text', column('import_source')),
  IMPORT_DATE: core('IMPORT_DATE', 'datetime', column('imported_at')),
  IMPORT_UPLOAD_LIST: core('IMPORT_UPLOAD_LIST', 'text', column('last_import_id')),
  OPTED_OUT: core('OPTED_OUT', 'boolean', column('is_opted_out'), { notNull: true }),
  CONTACT_STATUS: core('CONTACT_STATUS', 'enum', column('contact_status'), { options: enumOptions(['CONTACTABLE', 'OPTED_OUT', 'UNREACHABLE']), notNull: true }),
  CONTACT_STATUS_UPDATE_DATE: core('CONTACT_STATUS_UPDATE_DATE', 'datetime', column('contact_status_updated_at')),
  LAST_CHANGED_AT: core('LAST_CHANGED_AT', 'datetime', column('updated_at'), { notNull: true }),
  POPULATION_MEMBERSHIP: core('POPULATION_MEMBERSHIP', 'membership', (ctx) => sql`(select count(*) from (${populationMembership.ids(ctx)}) as s)`, {
    membership: populationMembership,
    notNull: true,
  }),
};

/** The names each group can compute in a people search; every other reference name is refused as not yet computable. */
export const computableNames: Record<PropertyGroup, Record<string, PropertyDefinition>> = {
  PERSON: personNames,
  PARTICIPANT: {},
  INCENTIVE: {},
};

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
  const raw = sql`(p.properties -> cast(${propertyId} as text))`;
  const text = sql`(p.properties ->> cast(${propertyId} as text))`;
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
      ...(type === 'select' || type === 'multiselect'
        ? { options: options.filter((option) => option.property_id === property.property_id).map((option) => ({ id: option.option_id, name: option.name })) }
        : {}),
    });
  }
  return found;
}
