import { type RawBuilder, type SqlBool, sql } from 'kysely';
import { at, DAY_MS } from './sql.js';
import { ApiError, badRequest, type ErrorItem, personalDataRequired } from '../http/errors.js';
import { type Catalogue, type CompileContext, computableName, isReferenceName, type Membership, type PropertyDefinition, type ValueType } from './catalogue.js';
import type { PropertyGroup } from './names.js';
import { type Comparison, comparisons, type Filter, type FilterGroup, MAX_FILTERS, MAX_GROUP_LEVEL, type RootFilter, type Sort } from './schemas.js';

type Condition = RawBuilder<SqlBool>;
type Path = string[];

/** An id a membership filter names; unknown ones are a 404 naming the value (checked by the caller, which holds the database). */
export interface MembershipCheck {
  membership: Membership;
  id: string;
  path: Path;
}

export interface SortKey {
  /** The key over the searched rows' aliases; null sorts last in either direction. */
  key: RawBuilder<unknown>;
  /** The SQL type the key has, so a cursor's text form casts back to it exactly. */
  sqlType: string;
  direction: 'ASC' | 'DESC';
  notNull: boolean;
  /** A key made never null by standing in for null (see orderedNulls): the stand-in's text, which a cursor from before that carried null means. */
  nullsAs?: string;
  /**
   * An index serves this order: over the workspace's live people (`person`: a PERSON name, or the
   * people's id) or over the searched rows themselves (`row`: a study's participants by a
   * PARTICIPANT name, or by their id). See PropertyDefinition.indexedOrder.
   */
  walkable?: 'person' | 'row';
}

export interface CompiledSearch {
  where: Condition | undefined;
  sort: SortKey;
  membershipChecks: MembershipCheck[];
  /** The groups whose names the filter reads, and those the sort reads: the query joins their rows only then. */
  filterGroups: Set<PropertyGroup>;
  sortGroups: Set<PropertyGroup>;
  /** Whether the filter or sort reads personal data (a segment saving it must say so). */
  readsPersonalData: boolean;
}

/** Per group: true when this search can read its names, or the sentence that refuses them. */
export type GroupAvailability = Record<PropertyGroup, true | string>;

/** A search that reads the names of every group. */
export const everyGroup: GroupAvailability = { PERSON: true, PARTICIPANT: true, INCENTIVE: true };

/** The order of a search without a sort: its rows' text id, ascending (never null). */
export const ascendingId = (key: RawBuilder<unknown>, walkable?: SortKey['walkable']): SortKey => ({ key, sqlType: 'text', direction: 'ASC', notNull: true, ...(walkable ? { walkable } : {}) });

export interface CompileOptions {
  /** The names the filter may use: the families' catalogue, given because the engine imports none. */
  catalogue: Catalogue;
  context: CompileContext;
  canReadPersonalData: boolean;
  /** Custom properties of the workspace named by the request, by id. */
  customProperties: Map<string, PropertyDefinition>;
  groups: GroupAvailability;
  /** Groups whose row a searched row may lack (an outer join): their names can then be null, whatever their definition says. */
  optionalGroups?: ReadonlySet<PropertyGroup>;
  /** The order without a sort: the rows' id, ascending. */
  defaultSort: SortKey;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/;
const COUNTRY = /^[A-Za-z]{2}$/;
export const EARTH_RADIUS_KM = 6371.0088;

/** A location's coordinate as float8, null unless the jsonb holds a number there (the counts read the same). */
export const locationCoordinate = (value: RawBuilder<unknown>, name: 'lat' | 'lng') =>
  sql<number | null>`(case when jsonb_typeof(${value} -> ${sql.lit(name)}) = 'number' then cast(${value} ->> ${sql.lit(name)} as float8) end)`;

export const isGroup = (item: Filter | FilterGroup): item is FilterGroup => 'filters' in item;

/** Why a reference name is refused, where there is more to say than "not yet". */
const uncomputableReasons: Record<string, string> = {
  'PERSON.POPULATION_LIST_MEMBERSHIP': ': it keeps no population lists (filter by POPULATION_MEMBERSHIP, or save a list of people as a segment and use SEGMENT_MEMBERSHIP)',
};

/** The ids of custom properties a filter or sort may name (propertyId, or a sort's propertyName that is no catalogue name). */
export function namedPropertyIds(filter: RootFilter | undefined, catalogue: Catalogue): string[] {
  const ids = new Set<string>();
  const visit = (items: (Filter | FilterGroup)[]) => {
    for (const item of items) {
      if (isGroup(item)) visit(item.filters);
      else if ('propertyId' in item.property) ids.add(item.property.propertyId);
      else if (item.property.propertyGroup === 'PERSON' && !computableName(catalogue, 'PERSON', item.property.propertyName)) ids.add(item.property.propertyName);
    }
  };
  if (filter) {
    visit(filter.filters);
    if (filter.sort?.propertyGroup === 'PERSON' && !computableName(catalogue, 'PERSON', filter.sort.propertyName)) ids.add(filter.sort.propertyName);
  }
  return [...ids];
}

const PROPERTY_IDS_HINT = "GET /properties lists the workspace's custom properties with their ids.";
/** How a filter names a custom person property, said where a name is unknown. */
const FILTER_CUSTOM_HINT = `A custom person property is named by its id: {"propertyId": "<id>"}; ${PROPERTY_IDS_HINT}`;
const SORT_CUSTOM_HINT = `To sort by a custom person property, give its id as propertyName (propertyGroup PERSON); ${PROPERTY_IDS_HINT}`;

/** Comparisons whose result is the complement of another's: they also match people with no value. */
export const complements: Partial<Record<Comparison, Comparison>> = {
  NOT_EQUALS: 'EQUALS',
  NOT_CONTAINS: 'CONTAINS',
  NOT_IN: 'IN',
  NOT_IN_LAST_DAYS: 'IN_LAST_DAYS',
  IS_NONE_OF: 'IS_ANY_OF',
  HAS_NONE_OF: 'HAS_ANY_OF',
  IS_NOT_EMPTY: 'IS_EMPTY',
};

/** The comparisons each value type admits; the document gives the table to clients as `x-comparisons`. */
export const comparisonsByType: Record<ValueType, readonly Comparison[]> = {
  text: ['EQUALS', 'NOT_EQUALS', 'CONTAINS', 'NOT_CONTAINS', 'STARTS_WITH', 'IN', 'NOT_IN'],
  email: ['EQUALS', 'NOT_EQUALS', 'CONTAINS', 'NOT_CONTAINS', 'STARTS_WITH', 'IN', 'NOT_IN'],
  number: ['EQUALS', 'NOT_EQUALS', 'GREATER_THAN', 'GREATER_THAN_OR_EQUAL', 'LESS_THAN', 'LESS_THAN_OR_EQUAL', 'BETWEEN'],
  datetime: ['BEFORE', 'AFTER', 'ON', 'BETWEEN', 'IN_LAST_DAYS', 'NOT_IN_LAST_DAYS'],
  boolean: ['IS_TRUE', 'IS_FALSE'],
  enum: ['IS_ANY_OF', 'IS_NONE_OF'],
  select: ['IS_ANY_OF', 'IS_NONE_OF'],
  multiselect: ['HAS_ANY_OF', 'HAS_ALL_OF', 'HAS_NONE_OF'],
  membership: ['HAS_ANY_OF', 'HAS_ALL_OF', 'HAS_NONE_OF'],
  location: ['WITHIN_KM', 'COUNTRY_IS'],
};

const typeNames: Record<ValueType, string> = {
  text: 'text',
  email: 'email',
  number: 'number',
  datetime: 'date-time',
  boolean: 'boolean',
  enum: 'enum',
  select: 'single select',
  multiselect: 'multi select',
  membership: 'membership',
  location: 'location',
};

const sortTypes: Record<ValueType, string> = {
  text: 'text',
  email: 'text',
  number: 'numeric',
  datetime: 'timestamptz',
  boolean: 'boolean',
  enum: 'text',
  select: 'text',
  multiselect: 'jsonb',
  membership: 'bigint',
  location: 'text',
};

const and = (conditions: Condition[]): Condition => (conditions.length === 0 ? sql<SqlBool>`true` : sql<SqlBool>`(${sql.join(conditions, sql` and `)})`);
const or = (conditions: Condition[]): Condition => (conditions.length === 0 ? sql<SqlBool>`false` : sql<SqlBool>`(${sql.join(conditions, sql` or `)})`);
/** Whether a positive comparison matches the value `empty` (see PropertyDefinition.presence); the value was checked by then. */
function emptyMatches(empty: null | 0, comparison: Comparison, raw: unknown, path: Path): boolean {
  if (comparison === 'IS_EMPTY') return empty === null;
  if (empty === null) return false;
  if (comparison === 'BETWEEN') {
    const [min, max] = read.pair(raw, path, read.number);
    return min <= 0 && 0 <= max;
  }
  const bound = read.number(raw, path);
  switch (comparison) {
    case 'EQUALS':
      return bound === 0;
    case 'GREATER_THAN':
      return 0 > bound;
    case 'GREATER_THAN_OR_EQUAL':
      return 0 >= bound;
    case 'LESS_THAN':
      return 0 < bound;
    case 'LESS_THAN_OR_EQUAL':
      return 0 <= bound;
    default:
      // Not a comparison of numbers: keep the condition as it is (always right).
      return true;
  }
}

const not = (condition: Condition): Condition => sql<SqlBool>`(not coalesce(${condition}, false))`;
const textArray = (values: string[]) => sql`cast(${values} as text[])`;

/**
 * A value, or an item of it, not of the shape its comparison takes: compileRootFilter answers it
 * with what that comparison takes (valueTaken), at the path the reader names.
 */
class ValueMismatch extends Error {
  constructor(readonly path: Path) {
    super('The value does not fit its comparison');
  }
}

/** Values: each reader refuses what does not fit (ValueMismatch), naming the value's path. */
export const read = {
  none(value: unknown, path: Path) {
    if (value !== undefined) throw new ValueMismatch(path);
  },
  string(value: unknown, path: Path): string {
    if (typeof value !== 'string' || value.length > 1000) throw new ValueMismatch(path);
    return value;
  },
  strings(value: unknown, path: Path): string[] {
    if (!Array.isArray(value) || value.length === 0 || value.length > 1000) throw new ValueMismatch(path);
    return value.map((item, index) => read.string(item, [...path, String(index)]));
  },
  number(value: unknown, path: Path): number {
    if (typeof value !== 'number' || !Number.isFinite(value)) throw new ValueMismatch(path);
    return value;
  },
  pair<T>(value: unknown, path: Path, item: (value: unknown, path: Path) => T): [T, T] {
    if (!Array.isArray(value) || value.length !== 2) throw new ValueMismatch(path);
    return [item(value[0], [...path, '0']), item(value[1], [...path, '1'])];
  },
  days(value: unknown, path: Path): number {
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 36_500) throw new ValueMismatch(path);
    return value;
  },
  /** A date covers its UTC day; a date-time is an instant (from = to). */
  moment(value: unknown, path: Path): { from: Date; to: Date; isDate: boolean } {
    if (typeof value === 'string' && (DATE.test(value) || DATE_TIME.test(value))) {
      const isDate = DATE.test(value);
      const at = new Date(isDate ? `${value}T00:00:00Z` : value);
      if (!Number.isNaN(at.getTime()) && (!isDate || at.toISOString().startsWith(value))) {
        return { from: at, to: isDate ? new Date(at.getTime() + DAY_MS) : at, isDate };
      }
    }
    throw new ValueMismatch(path);
  },
};

const DATE_OR_DATE_TIME = 'a date (YYYY-MM-DD) or an ISO 8601 date-time';

/** What value a comparison takes on a property of this type, as refusals say it. */
export function valueTaken(type: ValueType, comparison: Comparison): string {
  if (comparison === 'IS_EMPTY' || comparison === 'IS_NOT_EMPTY' || comparison === 'IS_TRUE' || comparison === 'IS_FALSE') return 'no value (leave `value` out)';
  switch (type) {
    case 'text':
    case 'email':
      return comparison === 'IN' || comparison === 'NOT_IN' ? 'an array of 1 to 1000 strings' : 'a string of at most 1000 characters';
    case 'number':
      return comparison === 'BETWEEN' ? 'an array of two numbers [min, max], min not greater than max' : 'a number';
    case 'datetime':
      if (comparison === 'BETWEEN') return `an array [from, to] of two values, each ${DATE_OR_DATE_TIME}, from not after to`;
      if (comparison === 'IN_LAST_DAYS' || comparison === 'NOT_IN_LAST_DAYS') return 'a whole number of days from 0 to 36500';
      return DATE_OR_DATE_TIME;
    case 'boolean':
      return 'no value (leave `value` out)';
    case 'enum':
      return 'an array of 1 to 1000 of its values';
    case 'select':
    case 'multiselect':
      return 'an array of 1 to 1000 of its option names or ids';
    case 'membership':
      return 'an array of 1 to 1000 ids';
    case 'location':
      return comparison === 'WITHIN_KM' ? 'an object {"lat", "lng", "km"} of numbers' : 'an array of 1 to 1000 ISO 3166-1 alpha-2 country codes';
  }
}


/**
 * Validates a RootFilter against the catalogue and compiles it to one condition over the searched
 * rows' aliases (`p` the person, `pt` the participant, `i` the incentive), with its sort key.
 * Every refusal names the offending part's path from the body's root.
 */
export function compileRootFilter(filter: RootFilter | undefined, options: CompileOptions): CompiledSearch {
  const { context, canReadPersonalData, customProperties } = options;
  const membershipChecks: MembershipCheck[] = [];
  const filterGroups = new Set<PropertyGroup>();
  const sortGroups = new Set<PropertyGroup>();
  let filterCount = 0;

  const resolve = (group: PropertyGroup, name: string, path: Path, used: Set<PropertyGroup>, customHint: string): PropertyDefinition => {
    const definition = computableName(options.catalogue, group, name) ?? (group === 'PERSON' ? customProperties.get(name) : undefined);
    if (!definition) {
      if (isReferenceName(group, name)) throw badRequest(`${group}.${name} cannot be computed by this service yet${uncomputableReasons[`${group}.${name}`] ?? ''}`, path);
      const names = Object.keys(options.catalogue.names[group]).join(', ');
      const custom = group === 'PERSON' ? ' nor the id of a custom person property' : '';
      throw badRequest(`${name} is not a name of the ${group} property group${custom}. ${group} names: ${names}. ${customHint}`, path);
    }
    const availability = options.groups[group];
    if (availability !== true) throw badRequest(availability, path.slice(0, -1).concat('propertyGroup'));
    used.add(group);
    return definition;
  };

  let readsPersonalData = false;
  const guard = (definition: PropertyDefinition) => {
    if (!definition.personalData) return;
    if (!canReadPersonalData) throw personalDataRequired('Filtering or sorting on personal data');
    readsPersonalData = true;
  };

  const optionNames = (definition: PropertyDefinition, value: unknown, path: Path): string[] =>
    read.strings(value, path).map((given, index) => {
      const option = definition.options?.find((candidate) => candidate.name === given || candidate.id === given);
      if (!option) {
        const names = (definition.options ?? []).map((candidate) => candidate.name);
        const kind = definition.type === 'enum' ? 'values' : 'options (by name, exactly as written, or by id)';
        throw badRequest(`${given} is not ${definition.type === 'enum' ? 'a value' : 'an option'} of ${definition.label}; its ${kind}: ${names.join(', ')}`, [...path, String(index)]);
      }
      return option.name;
    });

  const positive = (definition: PropertyDefinition, comparison: Comparison, raw: unknown, path: Path): Condition => {
    const value = definition.value(context);
    const type = definition.type;
    if (comparison === 'IS_EMPTY') {
      read.none(raw, path);
      if (type === 'membership') return sql<SqlBool>`not exists (${definition.membership!.ids(context)})`;
      if (type === 'text' || type === 'email' || type === 'enum' || type === 'select') return sql<SqlBool>`(${value} is null or ${value} = '')`;
      if (type === 'multiselect') return sql<SqlBool>`(${value} is null or jsonb_array_length(${value}) = 0)`;
      return sql<SqlBool>`(${value} is null)`;
    }
    switch (type) {
      case 'text':
      case 'email': {
        const folded = type === 'email' ? (definition.folded?.(context) ?? sql`lower(${value})`) : value;
        const fold = (text: RawBuilder<unknown>) => (type === 'email' ? sql`lower(${text})` : text);
        if (comparison === 'EQUALS') return sql<SqlBool>`${folded} = ${fold(sql`cast(${read.string(raw, path)} as text)`)}`;
        if (comparison === 'IN') {
          const values = read.strings(raw, path);
          // The database's lower(), as on the stored side: JavaScript folds some letters differently.
          return sql<SqlBool>`${folded} = any(${type === 'email' ? sql`array(select lower(v) from unnest(${textArray(values)}) as v)` : textArray(values)})`;
        }
        // Substring matches ignore case for every text, PostgreSQL's lower() on both sides. As LIKE
        // patterns they can use the trigram indexes of migration 20261124100000_text_search (strpos and
        // starts_with could not): the needle's %, _ and \ are quoted with a backslash, LIKE's default
        // escape, so it matches literally, and an empty needle still matches every value that is not null.
        const needle = sql`lower(cast(${read.string(raw, path).replace(/[\\%_]/g, '\\$&')} as text))`;
        const lowered = type === 'email' ? folded : sql`lower(${value})`;
        if (comparison === 'CONTAINS') return sql<SqlBool>`(${lowered} like ('%' || ${needle} || '%'))`;
        return sql<SqlBool>`(${lowered} like (${needle} || '%'))`;
      }
      case 'number': {
        const operators: Partial<Record<Comparison, string>> = {
          EQUALS: '=',
          GREATER_THAN: '>',
          GREATER_THAN_OR_EQUAL: '>=',
          LESS_THAN: '<',
          LESS_THAN_OR_EQUAL: '<=',
        };
        const num = (n: number) => sql`cast(${String(n)} as numeric)`;
        if (comparison === 'BETWEEN') {
          const [min, max] = read.pair(raw, path, read.number);
          // Reversed bounds would match nobody, silently: the client meant something else.
          if (min > max) throw badRequest(`BETWEEN takes [min, max] with min not greater than max; ${min} is greater than ${max}`, path);
          return sql<SqlBool>`(${value} between ${num(min)} and ${num(max)})`;
        }
        return sql<SqlBool>`${value} ${sql.raw(operators[comparison]!)} ${num(read.number(raw, path))}`;
      }
      case 'datetime': {
        if (comparison === 'IN_LAST_DAYS') {
          const days = read.days(raw, path);
          const now = context.now;
          return sql<SqlBool>`(${value} >= ${at(new Date(now.getTime() - days * DAY_MS))} and ${value} <= ${at(now)})`;
        }
        if (comparison === 'BETWEEN') {
          const [from, to] = read.pair(raw, path, read.moment);
          // Empty when from starts after to ends (a date's end is exclusive): reversed bounds, refused.
          if (from.from.getTime() > to.to.getTime() || (to.isDate && from.from.getTime() >= to.to.getTime())) {
            throw badRequest(`BETWEEN takes [from, to] with from not after to; ${String((raw as unknown[])[0])} is after ${String((raw as unknown[])[1])}`, path);
          }
          return sql<SqlBool>`(${value} >= ${at(from.from)} and ${value} ${sql.raw(to.isDate ? '<' : '<=')} ${at(to.to)})`;
        }
        const moment = read.moment(raw, path);
        if (comparison === 'BEFORE') return sql<SqlBool>`${value} < ${at(moment.from)}`;
        if (comparison === 'AFTER') return moment.isDate ? sql<SqlBool>`${value} >= ${at(moment.to)}` : sql<SqlBool>`${value} > ${at(moment.to)}`;
        // ON: the UTC day of the date, or of the date-time's instant.
        const day = new Date(Math.floor(moment.from.getTime() / DAY_MS) * DAY_MS);
        return sql<SqlBool>`(${value} >= ${at(day)} and ${value} < ${at(new Date(day.getTime() + DAY_MS))})`;
      }
      case 'boolean':
        read.none(raw, path);
        return comparison === 'IS_TRUE' ? sql<SqlBool>`(${value} is true)` : sql<SqlBool>`(${value} is false)`;
      case 'enum':
      case 'select':
        return sql<SqlBool>`${value} = any(${textArray(optionNames(definition, raw, path))})`;
      case 'multiselect': {
        const names = textArray(optionNames(definition, raw, path));
        return comparison === 'HAS_ALL_OF' ? sql<SqlBool>`(${value} ?& ${names})` : sql<SqlBool>`(${value} ?| ${names})`;
      }
      case 'membership': {
        const membership = definition.membership!;
        const given = read.strings(raw, path);
        if (membership.check) given.forEach((id, index) => membershipChecks.push({ membership, id, path: [...path, String(index)] }));
        const ids = [...new Set(given)];
        const members = membership.ids(context);
        if (comparison === 'HAS_ALL_OF') {
          return sql<SqlBool>`((select count(distinct s.id) from (${members}) as s(id) where s.id = any(${textArray(ids)})) = ${sql.lit(ids.length)})`;
        }
        return sql<SqlBool>`exists (select 1 from (${members}) as s(id) where s.id = any(${textArray(ids)}))`;
      }
      case 'location': {
        if (comparison === 'COUNTRY_IS') {
          const codes = read.strings(raw, path).map((code, index) => {
            if (!COUNTRY.test(code)) throw new ValueMismatch([...path, String(index)]);
            return code.toUpperCase();
          });
          return sql<SqlBool>`upper(${value} ->> 'country') = any(${textArray(codes)})`;
        }
        if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new ValueMismatch(path);
        const fields = raw as Record<string, unknown>;
        const extra = Object.keys(fields).find((key) => !['lat', 'lng', 'km'].includes(key));
        if (extra !== undefined) throw badRequest(`${extra} is not a known field`, [...path, extra]);
        const lat = read.number(fields.lat, [...path, 'lat']);
        const lng = read.number(fields.lng, [...path, 'lng']);
        const km = read.number(fields.km, [...path, 'km']);
        if (lat < -90 || lat > 90) throw badRequest('lat must be from -90 to 90', [...path, 'lat']);
        if (lng < -180 || lng > 180) throw badRequest('lng must be from -180 to 180', [...path, 'lng']);
        if (km < 0) throw badRequest('km must not be negative', [...path, 'km']);
        const coordinate = (name: 'lat' | 'lng') => locationCoordinate(value, name);
        const float = (n: number) => sql`cast(${String(n)} as float8)`;
        // Haversine; least() keeps rounding from pushing asin's argument past 1. least() also skips
        // nulls, which would put a person without coordinates half the earth away: they never match.
        return sql<SqlBool>`(${coordinate('lat')} is not null and ${coordinate('lng')} is not null and (2 * ${sql.lit(EARTH_RADIUS_KM)} * asin(least(1, sqrt(
          power(sin(radians(${coordinate('lat')} - ${float(lat)}) / 2), 2)
          + cos(radians(${float(lat)})) * cos(radians(${coordinate('lat')})) * power(sin(radians(${coordinate('lng')} - ${float(lng)}) / 2), 2)
        )))) <= ${float(km)})`;
      }
    }
  };

  /**
   * A positive condition on a name with `presence`, when the value a person without rows has
   * cannot match it: only people with rows can, and saying so lets the planner start from them
   * (see PropertyDefinition.presence). Null matches no comparison but IS_EMPTY; 0 is compared.
   * The result is unchanged for every person: one without rows had the empty value, which fails.
   */
  const withPresence = (definition: PropertyDefinition, comparison: Comparison, condition: Condition, raw: unknown, path: Path): Condition => {
    const presence = definition.presence;
    if (!presence || emptyMatches(presence.empty, comparison, raw, path)) return condition;
    return sql<SqlBool>`(p.person_id in (${presence.persons(context)}) and ${condition})`;
  };

  const compileFilter = (item: Filter, path: Path): Condition => {
    const ref = item.property;
    let definition: PropertyDefinition;
    if ('propertyId' in ref) {
      const custom = customProperties.get(ref.propertyId);
      if (!custom) throw badRequest(`No custom person property of this workspace has the id ${ref.propertyId}. ${PROPERTY_IDS_HINT}`, [...path, 'property', 'propertyId']);
      definition = custom;
      filterGroups.add('PERSON');
    } else {
      definition = resolve(ref.propertyGroup, ref.propertyName, [...path, 'property', 'propertyName'], filterGroups, FILTER_CUSTOM_HINT);
    }
    guard(definition);
    const comparison = item.comparison;
    // The schema lists every comparison but leaves the check to this point, where the property's
    // type says which fit: one refusal that lists them, not one per comparison of the language.
    const allowed = [...comparisonsByType[definition.type], 'IS_EMPTY', 'IS_NOT_EMPTY'];
    const fitting = `${definition.label}, a ${typeNames[definition.type]} property`;
    if (!(comparisons as readonly string[]).includes(comparison)) {
      throw badRequest(`comparison must be one of the comparisons of ${fitting}: ${allowed.join(', ')}`, [...path, 'comparison']);
    }
    if (!allowed.includes(comparison)) throw badRequest(`${comparison} does not fit ${fitting}; use one of ${allowed.join(', ')}`, [...path, 'comparison']);
    const valuePath = [...path, 'value'];
    const complement = complements[comparison];
    try {
      const positiveComparison = complement ?? comparison;
      const condition = withPresence(definition, positiveComparison, positive(definition, positiveComparison, item.value, valuePath), item.value, valuePath);
      return complement ? not(condition) : condition;
    } catch (error) {
      if (error instanceof ValueMismatch) throw badRequest(`${comparison} on ${definition.label} takes ${valueTaken(definition.type, comparison)}`, error.path);
      throw error;
    }
  };

  /**
   * A refusal of one Filter or FilterGroup is kept and the others still checked: a filter with
   * several mistakes gets an error for each item, and one per item.
   */
  const refusals: ErrorItem[] = [];
  const checked = <T>(compile: () => T, instead: T): T => {
    try {
      return compile();
    } catch (error) {
      if (!(error instanceof ApiError) || error.code !== 'VALIDATION') throw error;
      refusals.push(...error.items);
      return instead;
    }
  };

  const compileItems = (operator: 'AND' | 'OR' | undefined, items: (Filter | FilterGroup)[], level: number, path: Path): Condition => {
    const conditions = items.map((item, index) => {
      const itemPath = [...path, 'filters', String(index)];
      if (!isGroup(item)) {
        // The limit is the filter's, not the item's: refused at once.
        if (++filterCount > MAX_FILTERS) throw badRequest(`A filter may hold at most ${MAX_FILTERS} Filters, counted through every level`, itemPath);
        return checked(() => compileFilter(item, itemPath), sql<SqlBool>`false`);
      }
      if (level + 1 > MAX_GROUP_LEVEL) {
        refusals.push({ message: `FilterGroups nest at most ${MAX_GROUP_LEVEL} levels deep`, path: itemPath });
        return sql<SqlBool>`false`;
      }
      // An empty group constrains nothing, whatever its operator.
      return item.filters.length === 0 ? sql<SqlBool>`true` : compileItems(item.operator, item.filters, level + 1, itemPath);
    });
    return operator === 'OR' ? or(conditions) : and(conditions);
  };

  const where = filter && filter.filters.length > 0 ? compileItems(filter.operator, filter.filters, 0, ['filter']) : undefined;
  const sort = checked(() => compileSort(filter?.sort), options.defaultSort);
  if (refusals.length > 0) throw new ApiError('VALIDATION', refusals);
  return { where, sort, membershipChecks, filterGroups, sortGroups, readsPersonalData };

  function compileSort(sort: Sort | undefined): SortKey {
    if (!sort) return options.defaultSort;
    const definition = resolve(sort.propertyGroup, sort.propertyName, ['filter', 'sort', 'propertyName'], sortGroups, SORT_CUSTOM_HINT);
    const rowAlwaysThere = !options.optionalGroups?.has(sort.propertyGroup);
    guard(definition);
    const value = definition.value(context);
    const key = definition.type === 'email' ? (definition.folded?.(context) ?? sql`lower(${value})`) : definition.type === 'location' ? sql`(${value} ->> 'country')` : value;
    const walkable = !definition.indexedOrder || !rowAlwaysThere ? undefined : sort.propertyGroup === 'PERSON' ? 'person' : sort.propertyGroup === 'PARTICIPANT' ? 'row' : undefined;
    const sortKey: SortKey = { key, sqlType: sortTypes[definition.type], direction: sort.operator, notNull: (definition.notNull ?? false) && rowAlwaysThere };
    if (sortKey.notNull) return walkable ? { ...sortKey, walkable } : sortKey;
    const ordered = orderedNulls(sortKey);
    const stored = definition.storedSortKeys?.[sort.operator];
    // Only a stored key is the indexed one: coalesce() over the value is not.
    return stored && ordered.notNull ? { ...ordered, key: stored(context), ...(walkable ? { walkable } : {}) } : ordered;
  }
}

/**
 * A date-time or number key that may be null sorts by `coalesce(key, -infinity)` descending and
 * `coalesce(key, infinity)` ascending: the same order (nulls last either way, then the id; no
 * stored value is infinite, the API admits finite ones only), but a key that is never null. A
 * keyset page then starts at one row comparison that an index on the same expression answers
 * as a range, where `key < v or key is null` made every deep page scan from the first row.
 * Other types (text has no infinity) keep the nullable form.
 */
export function orderedNulls(sort: SortKey): SortKey {
  if (sort.notNull || (sort.sqlType !== 'timestamptz' && sort.sqlType !== 'numeric')) return sort;
  const nullsAs = sort.direction === 'DESC' ? (sort.sqlType === 'numeric' ? '-Infinity' : '-infinity') : sort.sqlType === 'numeric' ? 'Infinity' : 'infinity';
  return { ...sort, key: sql`coalesce(${sort.key}, cast(${sql.lit(nullsAs)} as ${sql.raw(sort.sqlType)}))`, notNull: true, nullsAs };
}
