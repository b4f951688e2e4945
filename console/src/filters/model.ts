import { filterLimits, type Schema, type SearchName, searchComparisons, searchNames, type SearchValueType } from '@recruit-ops/sdk/browser';

/**
 * The filter builder's model: a tree the person edits (every node with a stable key, values as
 * typed), and its translation to the API's RootFilter. The names, their types, the comparisons
 * each type admits and the limits all come from the SDK (generated from the OpenAPI document's
 * `x-search-names`, `x-comparisons`, `x-filter-limits`); the workspace's own properties from
 * GET /properties.
 */

export type RootFilter = Schema<'RootFilter'>;
export type PropertyGroup = keyof typeof searchNames;
export type PersonProperty = Schema<'PersonProperty'>;

/** One property a condition may name: a catalogue name of a group, or a custom person property. */
export interface FilterProperty {
  /** `PERSON:EMAIL`, or `custom:<propertyId>`. */
  key: string;
  label: string;
  group: PropertyGroup | 'CUSTOM';
  /** The heading it is listed under in the picker: a built-in group, or the custom property's own property group. */
  section: string;
  type: SearchValueType;
  meaning?: string;
  /** enum values, or select / multi-select option names. */
  options?: readonly string[];
  ref: { propertyGroup: PropertyGroup; propertyName: string } | { propertyId: string };
}

const customTypes: Record<PersonProperty['propertyType'], SearchValueType> = {
  STRING: 'text',
  NUMBER: 'number',
  DATETIME: 'datetime',
  BOOLEAN: 'boolean',
  SINGLE_SELECT: 'select',
  MULTI_SELECT: 'multiselect',
  LOCATION: 'location',
};

/** `TOTAL_NUMBER_OF_CONTACT_L30` → `Total number of contact L30`. */
export function nameWords(name: string): string {
  const words = name.toLowerCase().replace(/_/g, ' ');
  return (words.charAt(0).toUpperCase() + words.slice(1)).replace(/\bl(30|90|365)\b/, 'L$1');
}

/** The headings of the names the service computes, by their property group. */
export const builtInSections: Record<PropertyGroup, string> = {
  PERSON: 'Person (built in)',
  PARTICIPANT: 'Participant in this study (built in)',
  INCENTIVE: 'Latest incentive (built in)',
};

/** The heading of custom properties whose property group is unknown (GET /property-groups could not be read). */
export const customSectionFallback = 'Custom properties';

/**
 * The properties a search may filter on: the groups it reads (people search: PERSON alone), then
 * the workspace's own, each under its property group's name (`groupNames`, by propertyGroupId,
 * in the order the groups are listed), so a long list reads as a few short ones.
 */
export function filterProperties(groups: readonly PropertyGroup[], custom: readonly PersonProperty[], groupNames: ReadonlyMap<string, string> = new Map()): FilterProperty[] {
  const named = groups.flatMap((group) =>
    searchNames[group].map(
      (entry: SearchName): FilterProperty => ({
        key: `${group}:${entry.name}`,
        label: nameWords(entry.name),
        group,
        section: builtInSections[group],
        type: entry.type,
        ...(entry.meaning ? { meaning: entry.meaning } : {}),
        ...(entry.options ? { options: entry.options } : {}),
        ref: { propertyGroup: group, propertyName: entry.name },
      }),
    ),
  );
  const groupOrder = [...groupNames.keys()];
  const rank = (property: PersonProperty) => {
    const at = groupOrder.indexOf(property.propertyGroupId);
    return at < 0 ? groupOrder.length : at;
  };
  // Sorted by group (a stable sort keeps the order they were made in within one).
  const own = [...custom].sort((a, b) => rank(a) - rank(b)).map(
    (property): FilterProperty => ({
      key: `custom:${property.propertyId}`,
      label: property.name,
      group: 'CUSTOM',
      section: groupNames.has(property.propertyGroupId) ? `${groupNames.get(property.propertyGroupId)} (custom)` : customSectionFallback,
      type: customTypes[property.propertyType],
      ...(property.description ? { meaning: property.description } : {}),
      ...(property.propertyOptions.length > 0 ? { options: property.propertyOptions.map((option) => option.name) } : {}),
      ref: { propertyId: property.propertyId },
    }),
  );
  return [...named, ...own];
}

/** Lower case without accents, so "emile" finds "Émile". */
const folded = (text: string) => text.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();

/**
 * The properties whose label holds every word of `query` (in any order, without regard to case or
 * accents): "cont l30" finds "Total number of contact L30". An empty query keeps them all.
 */
export function matchProperties(properties: readonly FilterProperty[], query: string): FilterProperty[] {
  const words = folded(query).split(/\s+/).filter(Boolean);
  if (words.length === 0) return [...properties];
  return properties.filter((property) => {
    const label = folded(property.label);
    return words.every((word) => label.includes(word));
  });
}

/** The properties the filter's conditions name, each once, in the order they first appear. */
export function namedProperties(group: DraftGroup): string[] {
  const keys = new Set<string>();
  const visit = (items: readonly DraftItem[]) => {
    for (const item of items) {
      if (item.kind === 'group') visit(item.items);
      else if (item.property) keys.add(item.property);
    }
  };
  visit(group.items);
  return [...keys];
}

/** The comparisons a property's type admits, then IS_EMPTY and IS_NOT_EMPTY, which fit every type. */
export function comparisonsFor(type: SearchValueType): string[] {
  return [...searchComparisons[type], 'IS_EMPTY', 'IS_NOT_EMPTY'];
}

const comparisonWords: Record<string, string> = {
  EQUALS: 'is',
  NOT_EQUALS: 'is not',
  CONTAINS: 'contains',
  NOT_CONTAINS: 'does not contain',
  STARTS_WITH: 'starts with',
  IN: 'is one of',
  NOT_IN: 'is none of',
  GREATER_THAN: 'is more than',
  GREATER_THAN_OR_EQUAL: 'is at least',
  LESS_THAN: 'is less than',
  LESS_THAN_OR_EQUAL: 'is at most',
  BETWEEN: 'is between',
  BEFORE: 'is before',
  AFTER: 'is after',
  ON: 'is on',
  IN_LAST_DAYS: 'is in the last … days',
  NOT_IN_LAST_DAYS: 'is not in the last … days',
  IS_TRUE: 'is true',
  IS_FALSE: 'is false',
  IS_ANY_OF: 'is any of',
  IS_NONE_OF: 'is none of',
  HAS_ANY_OF: 'has any of',
  HAS_ALL_OF: 'has all of',
  HAS_NONE_OF: 'has none of',
  WITHIN_KM: 'is within … km of',
  COUNTRY_IS: 'is in country',
  IS_EMPTY: 'is empty',
  IS_NOT_EMPTY: 'is not empty',
};
export const comparisonLabel = (comparison: string) => comparisonWords[comparison] ?? comparison;

/** How a comparison's value is entered. */
export type ValueKind = 'none' | 'text' | 'number' | 'numberPair' | 'moment' | 'momentPair' | 'days' | 'list' | 'options' | 'location' | 'countries';

export function valueKind(type: SearchValueType, comparison: string): ValueKind {
  switch (comparison) {
    case 'IS_TRUE':
    case 'IS_FALSE':
    case 'IS_EMPTY':
    case 'IS_NOT_EMPTY':
      return 'none';
    case 'IN_LAST_DAYS':
    case 'NOT_IN_LAST_DAYS':
      return 'days';
    case 'BETWEEN':
      return type === 'datetime' ? 'momentPair' : 'numberPair';
    case 'BEFORE':
    case 'AFTER':
    case 'ON':
      return 'moment';
    case 'IN':
    case 'NOT_IN':
      return 'list';
    case 'IS_ANY_OF':
    case 'IS_NONE_OF':
    case 'HAS_ANY_OF':
    case 'HAS_ALL_OF':
    case 'HAS_NONE_OF':
      return 'options';
    case 'WITHIN_KM':
      return 'location';
    case 'COUNTRY_IS':
      return 'countries';
    default:
      return type === 'number' ? 'number' : 'text';
  }
}

/** A value as typed: the inputs' strings (a date's day and time apart), or the chosen options. */
export interface DraftValue {
  text?: string;
  from?: string;
  to?: string;
  /** Time of day (HH:MM) beside a date, optional: `text`/`from`/`to` hold the day. */
  time?: string;
  fromTime?: string;
  toTime?: string;
  chosen?: string[];
  lat?: string;
  lng?: string;
  km?: string;
}

export interface DraftCondition {
  kind: 'condition';
  key: string;
  /** A FilterProperty's key, or '' before one is chosen. */
  property: string;
  comparison: string;
  value: DraftValue;
}

export interface DraftGroup {
  kind: 'group';
  key: string;
  operator: 'AND' | 'OR';
  items: DraftItem[];
}

export type DraftItem = DraftCondition | DraftGroup;

let lastKey = 0;
const nextKey = () => `f${++lastKey}`;

export const newCondition = (): DraftCondition => ({ kind: 'condition', key: nextKey(), property: '', comparison: '', value: {} });
export const newGroup = (items: DraftItem[] = [newCondition()]): DraftGroup => ({ kind: 'group', key: nextKey(), operator: 'AND', items });

export const filterLimit = filterLimits.filters;
/** The deepest level a group may sit at: the root is level 0. */
export const groupLevelLimit = filterLimits.groupLevel;

export function countConditions(group: DraftGroup): number {
  return group.items.reduce((sum, item) => sum + (item.kind === 'group' ? countConditions(item) : 1), 0);
}

/** The tree with the node of `key` replaced by what `change` makes of it (or removed, when it answers undefined). */
export function updateItem(group: DraftGroup, key: string, change: (item: DraftItem) => DraftItem | undefined): DraftGroup {
  const items: DraftItem[] = [];
  for (const item of group.items) {
    if (item.key === key) {
      const changed = change(item);
      if (changed) items.push(changed);
    } else items.push(item.kind === 'group' ? updateItem(item, key, change) : item);
  }
  return { ...group, items };
}

const list = (text: string | undefined) =>
  (text ?? '')
    .split(/[,\n]/)
    .map((part) => part.trim())
    .filter((part) => part.length > 0);

const number = (text: string | undefined) => (text === undefined || text.trim() === '' ? undefined : Number(text));

/** A day (YYYY-MM-DD) with an optional local time: the day as the API takes it, or the instant in UTC. */
function moment(day: string | undefined, time: string | undefined): string | undefined {
  if (!day) return undefined;
  if (!time) return day;
  const at = new Date(`${day}T${time}`);
  return Number.isNaN(at.getTime()) ? day : at.toISOString();
}

/**
 * The API's value for a condition, or `incomplete` while something is still to enter (such a
 * condition is left out of the search until it is complete, and says so). What is entered is sent
 * as it is: a value the API refuses comes back as an error beside the condition.
 */
export function conditionValue(kind: ValueKind, value: DraftValue): { value?: unknown } | 'incomplete' {
  switch (kind) {
    case 'none':
      return {};
    case 'text':
      return value.text === undefined || value.text === '' ? 'incomplete' : { value: value.text };
    case 'number':
    case 'days': {
      const given = number(value.text);
      return given === undefined ? 'incomplete' : { value: given };
    }
    case 'numberPair': {
      const from = number(value.from);
      const to = number(value.to);
      return from === undefined || to === undefined ? 'incomplete' : { value: [from, to] };
    }
    case 'moment': {
      const at = moment(value.text, value.time);
      return at === undefined ? 'incomplete' : { value: at };
    }
    case 'momentPair': {
      const from = moment(value.from, value.fromTime);
      const to = moment(value.to, value.toTime);
      return from === undefined || to === undefined ? 'incomplete' : { value: [from, to] };
    }
    case 'list':
    case 'countries': {
      const items = list(value.text);
      return items.length === 0 ? 'incomplete' : { value: kind === 'countries' ? items.map((code) => code.toUpperCase()) : items };
    }
    case 'options':
      return !value.chosen || value.chosen.length === 0 ? 'incomplete' : { value: value.chosen };
    case 'location': {
      const lat = number(value.lat);
      const lng = number(value.lng);
      const km = number(value.km);
      return lat === undefined || lng === undefined || km === undefined ? 'incomplete' : { value: { lat, lng, km } };
    }
  }
}

export interface BuiltFilter {
  /** The RootFilter to send; undefined when no condition is complete (the search is then unfiltered). */
  filter: RootFilter | undefined;
  /** Each sent node's path in the request body (`['filter', 'filters', '0', 'filters', '1']`), by key. */
  paths: Map<string, string[]>;
  /** Conditions not sent because they are not complete yet. */
  incomplete: Set<string>;
}

type SentItem = RootFilter['filters'][number];

/** The RootFilter of the tree (complete conditions only; groups left empty dropped), with where each node went. */
export function buildFilter(root: DraftGroup, properties: ReadonlyMap<string, FilterProperty>): BuiltFilter {
  const paths = new Map<string, string[]>();
  const incomplete = new Set<string>();
  const build = (group: DraftGroup, path: string[]): SentItem[] => {
    const sent: SentItem[] = [];
    for (const item of group.items) {
      const itemPath = [...path, 'filters', String(sent.length)];
      if (item.kind === 'group') {
        const filters = build(item, itemPath);
        if (filters.length === 0) continue;
        paths.set(item.key, itemPath);
        sent.push({ operator: item.operator, filters } as SentItem);
        continue;
      }
      const property = properties.get(item.property);
      if (!property || !item.comparison) {
        incomplete.add(item.key);
        continue;
      }
      const value = conditionValue(valueKind(property.type, item.comparison), item.value);
      if (value === 'incomplete') {
        incomplete.add(item.key);
        continue;
      }
      paths.set(item.key, itemPath);
      sent.push({ property: property.ref, comparison: item.comparison, ...value } as SentItem);
    }
    return sent;
  };
  paths.set(root.key, ['filter']);
  const filters = build(root, ['filter']);
  return { filter: filters.length > 0 ? { operator: root.operator, filters } : undefined, paths, incomplete };
}
