import { type RawBuilder, type SqlBool, sql } from 'kysely';
import { type Catalogue, type CompileContext, computableName, type PropertyDefinition } from '../catalogue.js';
import { complements, isGroup, locationCoordinate, read } from '../compile.js';
import type { Comparison, Filter, FilterGroup, RootFilter, Sort } from '../schemas.js';
import { DAY_MS } from '../sql.js';
import type { Bitset } from './bitset.js';
import { type Column, type ColumnKind, columnKindOf, inRange, type Range } from './columns.js';

/** Whose row a name is read from: the person's, or the participant's in the study searched. */
export type CountSource = 'person' | 'participant';

/** One column the counts hold: its key, kind and the SQL it is read with (over `p` or `pt`). */
export interface ColumnSpec {
  source: CountSource;
  key: string;
  kind: ColumnKind;
  value: RawBuilder<unknown>;
  /**
   * The value is the database's lower() of a text: substring tests lower the needle in JavaScript,
   * which is exact only for an ASCII needle and a database that lowers ASCII as JavaScript does
   * (not a Turkish locale): the loader checks the latter and marks the column inexact otherwise.
   */
  lowered?: boolean;
}

/**
 * A filter as the counts evaluate it: the same tree, each leaf a test of a held column, a split
 * test (a column answers all but the few people its SQL condition must decide: distances), or, for
 * what no column answers exactly (non-ASCII substrings, emails compared lowered), the leaf's SQL
 * condition, run in the same snapshot. Comparisons that also match people with no value
 * (NOT_EQUALS, IS_NONE_OF, …) are `not` of their positive leaf, as in compile.ts.
 */
export type CountPlan =
  | { kind: 'all' }
  | { kind: 'and' | 'or'; items: CountPlan[] }
  | { kind: 'not'; item: CountPlan }
  | { kind: 'column'; column: ColumnSpec; test: (column: Column) => (position: number) => boolean; bits?: WordWide; reuse: string }
  | { kind: 'split'; column: ColumnSpec; split: SplitTest; condition: RawBuilder<SqlBool>; reuse: string }
  | { kind: 'sql'; source: CountSource; condition: RawBuilder<SqlBool> };

/**
 * A test a held column answers for all but a few positions: those it leaves in doubt (a distance
 * within rounding of its bound) are decided by the leaf's SQL condition, for those people only, in
 * the count's snapshot. Over person slots: every slot (`slots` undefined) or the domain's.
 */
export type SplitTest = (column: Column, slots: Int32Array | undefined, positions: number) => { certain: Bitset; doubtful: Bitset };

export interface PlanOptions {
  catalogue: Catalogue;
  context: CompileContext;
  customProperties: Map<string, PropertyDefinition>;
  /** The SQL condition of one filter (the same compiler as the search's): for leaves no column answers. */
  sqlCondition(filter: Filter): RawBuilder<SqlBool>;
}

/**
 * The same test, answered for every position at once: word-wide ORs of value bitsets, or one tight
 * pass over the values; undefined when the column cannot (then each position is tested).
 */
type WordWide = (column: Column, positions: number) => Bitset | undefined;

/** The instant, in microseconds since the epoch, as the counts hold date-times. */
const micros = (date: Date) => date.getTime() * 1000;

/**
 * The count plan of a filter already validated by compileRootFilter, or undefined when one of its
 * names is not a function of one row (history counts, memberships, segments, incentives): the
 * count is then SQL's.
 */
export function planCount(filter: RootFilter | undefined, options: PlanOptions): CountPlan | undefined {
  if (!filter || filter.filters.length === 0) return { kind: 'all' };
  return planItems(filter.operator, filter.filters, options);
}

/**
 * The column a sort by a person's number, date-time or email is held in (a custom NUMBER or
 * DATETIME property, a PERSON name read from the person's row or history, or EMAIL's lowered
 * text): the counts can then tell which matches can be on its page (index.ts, boundedPersonNos).
 * Every such sort key orders by the very value the column holds, with no value last (compile.ts,
 * compileSort: the value itself, its coalesce() with an infinity, a stored key of the same, or
 * email_key, the stored lower(email)); other sorts have none.
 */
export function sortColumnOf(sort: Sort | undefined, options: Pick<PlanOptions, 'catalogue' | 'customProperties' | 'context'>): ColumnSpec | undefined {
  if (!sort) return undefined;
  const builtIn = computableName(options.catalogue, sort.propertyGroup, sort.propertyName);
  const definition = builtIn ?? (sort.propertyGroup === 'PERSON' ? options.customProperties.get(sort.propertyName) : undefined);
  if (!definition || definition.countedWithin) return undefined;
  const key = builtIn ? `${sort.propertyGroup}.${sort.propertyName}` : `custom:${sort.propertyName}`;
  // A participant's number or date-time, held per study as the filters' columns are.
  if (definition.countedFrom === 'participant' && sort.propertyGroup === 'PARTICIPANT') {
    return definition.type === 'number' || definition.type === 'datetime' ? { source: 'participant', key, kind: columnKindOf(definition.type)!, value: definition.value(options.context) } : undefined;
  }
  if (definition.countedFrom !== 'person' || sort.propertyGroup !== 'PERSON') return undefined;
  // An email sorts by its lowered form, the text the counts hold for substrings (planFilter).
  if (definition.type === 'email') return { source: 'person', key: `${key}:lower`, kind: 'haystack', value: sql`lower(${definition.value(options.context)})`, lowered: true };
  if (definition.type !== 'number' && definition.type !== 'datetime') return undefined;
  return { source: 'person', key, kind: columnKindOf(definition.type)!, value: definition.value(options.context) };
}

function planItems(operator: 'AND' | 'OR' | undefined, items: (Filter | FilterGroup)[], options: PlanOptions): CountPlan | undefined {
  const plans: CountPlan[] = [];
  for (const item of items) {
    const plan = isGroup(item) ? (item.filters.length === 0 ? { kind: 'all' as const } : planItems(item.operator, item.filters, options)) : planFilter(item, options);
    if (!plan) return undefined;
    plans.push(plan);
  }
  return { kind: operator === 'OR' ? 'or' : 'and', items: plans };
}

function definitionOf(filter: Filter, options: PlanOptions): { definition: PropertyDefinition; key: string } | undefined {
  const property = filter.property;
  if ('propertyId' in property) {
    const definition = options.customProperties.get(property.propertyId);
    return definition && { definition, key: `custom:${property.propertyId}` };
  }
  const definition = computableName(options.catalogue, property.propertyGroup, property.propertyName) ?? (property.propertyGroup === 'PERSON' ? options.customProperties.get(property.propertyName) : undefined);
  if (!definition) return undefined;
  const custom = !computableName(options.catalogue, property.propertyGroup, property.propertyName);
  return { definition, key: custom ? `custom:${property.propertyName}` : `${property.propertyGroup}.${property.propertyName}` };
}

function planFilter(filter: Filter, options: PlanOptions): CountPlan | undefined {
  const found = definitionOf(filter, options);
  if (found?.definition.countedWithin) return planWindowCount(found.definition.countedWithin, filter, options.context);
  if (!found?.definition.countedFrom) return undefined;
  const { definition, key } = found;
  const source = definition.countedFrom!;
  const complement = complements[filter.comparison];
  const comparison = complement ?? filter.comparison;
  if (definition.type === 'membership') {
    const column: ColumnSpec = { source, key, kind: 'multi', value: membershipIds(definition, options.context) };
    const positive: CountPlan = { kind: 'column', column, ...membershipTest(comparison, filter.value) };
    return complement ? { kind: 'not', item: positive } : positive;
  }
  const kind = columnKindOf(definition.type);
  // Emails are nearly all distinct: a dictionary of them would hold a string per person.
  const haystack = definition.type === 'email';
  const substring = definition.type === 'text' || haystack ? substringTest(comparison, filter.value, haystack) : undefined;
  if (substring) {
    const column: ColumnSpec = { source, key: `${key}:lower`, kind: haystack ? 'haystack' : 'codes', value: sql`lower(${definition.value(options.context)})`, lowered: true };
    const positive: CountPlan = { kind: 'column', column, ...substring };
    return complement ? { kind: 'not', item: positive } : positive;
  }
  if (definition.type === 'location' && comparison === 'WITHIN_KM' && source === 'person') {
    const { lat, lng, km } = filter.value as { lat: number; lng: number; km: number };
    const value = definition.value(options.context);
    const latitude = locationCoordinate(value, 'lat');
    const longitude = locationCoordinate(value, 'lng');
    const column: ColumnSpec = { source, key: `${key}:lat-lng`, kind: 'location', value: sql`(cast(${latitude} as text) || ' ' || cast(${longitude} as text))` };
    return { kind: 'split', column, split: (held, slots, positions) => held.withinKm(lat, lng, km, slots, positions), condition: options.sqlCondition(filter), reuse: JSON.stringify(['within-km', lat, lng, km]) };
  }
  const tests = kind && columnTest(definition, kind, comparison, filter.value, options.context.now);
  const positive: CountPlan = tests
    ? { kind: 'column', column: { source, key, kind: kind!, value: definition.value(options.context) }, ...tests }
    : { kind: 'sql', source, condition: options.sqlCondition({ ...filter, comparison }) };
  return complement ? { kind: 'not', item: positive } : positive;
}

/**
 * A leaf's tests, and `reuse`: what they test for, as a text that differs whenever the tests'
 * answers over the same held values could (the values compared, resolved; a window's ends), so
 * that a result computed once serves every later count at the same version (see reuseKey).
 */
type Tests = { test: (column: Column) => (position: number) => boolean; bits?: WordWide; reuse: string };

/**
 * What a whole plan counts, as a text: equal texts count the same people over the same held
 * values, so a count's result can be reused at the same version of the counts (workspace.ts).
 * Undefined when a leaf is SQL's: its answer is read from the database, not from what is held.
 */
export function reuseKey(plan: CountPlan): string | undefined {
  switch (plan.kind) {
    case 'all':
      return 'all';
    case 'and':
    case 'or': {
      const items = plan.items.map(reuseKey);
      return items.every((item) => item !== undefined) ? `${plan.kind}(${items.join(',')})` : undefined;
    }
    case 'not': {
      const item = reuseKey(plan.item);
      return item === undefined ? undefined : `not(${item})`;
    }
    case 'column':
    case 'split':
      return leafKey(plan);
    case 'sql':
      return undefined;
  }
}

/** A column or split leaf's key: its column (source and key) and what it tests for. */
export const leafKey = (leaf: Extract<CountPlan, { kind: 'column' | 'split' }>) => `${leaf.kind}:${JSON.stringify([leaf.column.source, leaf.column.key, leaf.reuse])}`;

/**
 * A windowed count (never null) compared as a number: the person's instants within the last
 * `days` days up to now, both ends included, as compile.ts's window reads them. The instants are
 * held once per count (`key`), for every window of it.
 */
function planWindowCount(within: NonNullable<PropertyDefinition['countedWithin']>, filter: Filter, context: CompileContext): CountPlan {
  const column: ColumnSpec = { source: 'person', key: `instants:${within.key}`, kind: 'instants', value: within.instants(context) };
  const low = micros(new Date(context.now.getTime() - within.days * DAY_MS));
  const high = micros(context.now);
  const complement = complements[filter.comparison];
  const comparison = complement ?? filter.comparison;
  // A count is never empty: IS_EMPTY matches nobody (an empty OR), IS_NOT_EMPTY everybody.
  const positive: CountPlan =
    comparison === 'IS_EMPTY'
      ? { kind: 'or', items: [] }
      : (() => {
          const range = numberRange(comparison, filter.value);
          return {
            kind: 'column',
            column,
            test: (held) => held.test.windowCount(low, high, range),
            bits: (held, positions) => held.windowCountBitset(low, high, range, positions),
            reuse: JSON.stringify(['window', low, high, rangeText(range)]),
          };
        })();
  return complement ? { kind: 'not', item: positive } : positive;
}

/** A membership's ids (populations, studies) as a JSON array, held like a multi-select's options. */
const membershipIds = (definition: PropertyDefinition, context: CompileContext) =>
  sql`(select coalesce(json_agg(s.id), '[]') from (${definition.membership!.ids(context)}) as s(id))`;

/** HAS_ANY_OF and HAS_ALL_OF (HAS_NONE_OF is the complement of the first), and IS_EMPTY: no ids at all. */
function membershipTest(comparison: Comparison, raw: unknown): Tests {
  if (comparison === 'IS_EMPTY') return { test: (column) => column.test.noOptions(), reuse: 'no-options' };
  const ids = [...new Set(read.strings(raw, []))];
  const all = comparison === 'HAS_ALL_OF';
  return { test: (column) => column.test.options(ids, all), bits: (column) => column.optionsBitset(ids, all), reuse: JSON.stringify(['options', all, ids]) };
}

/** Up to how many values a test ORs their bitsets rather than passing over every position. */
const FEW_CODES = 8;

const isAscii = (text: string) => [...text].every((character) => character.charCodeAt(0) < 0x80);

/**
 * CONTAINS and STARTS_WITH (NOT_CONTAINS is their complement) over the dictionary of a column of
 * lowered values: compile.ts writes `lower(value) like '%' || lower(needle) || '%'`, with LIKE's
 * wildcards escaped, so a value matches when its lowered text holds the lowered needle. For an
 * ASCII needle that is a byte match UTF-8 cannot make elsewhere than on ASCII, which JavaScript's
 * includes() makes on the same characters; any other needle is SQL's.
 */
function substringTest(comparison: Comparison, raw: unknown, haystack: boolean): Tests | undefined {
  if (comparison !== 'CONTAINS' && comparison !== 'STARTS_WITH') return undefined;
  const needle = read.string(raw, []);
  if (!isAscii(needle) || needle.includes('\0')) return undefined;
  const lowered = needle.toLowerCase();
  if (haystack) {
    const prefix = comparison === 'STARTS_WITH';
    return { test: (column) => column.test.substring(lowered, prefix), bits: (column, positions) => column.substringBitset(lowered, prefix, positions), reuse: JSON.stringify(['substring', prefix, lowered]) };
  }
  const accepts = comparison === 'CONTAINS' ? (value: string) => value.includes(lowered) : (value: string) => value.startsWith(lowered);
  return {
    test: (column) => column.test.code(column.codesWhere(accepts)),
    bits: (column, positions) => {
      // A few values' bitsets ORed word-wide cost less than a pass over every position.
      const codes = column.codesWhere(accepts);
      return (codes.size <= FEW_CODES ? column.valuesBitset(codes) : undefined) ?? column.codesBitset(codes, positions);
    },
    reuse: JSON.stringify([comparison, lowered]),
  };
}

/** The tests of one positive comparison on a held column, or undefined when SQL must answer it. */
function columnTest(definition: PropertyDefinition, kind: ColumnKind, comparison: Comparison, raw: unknown, now: Date): Tests | undefined {
  const path: string[] = [];
  if (comparison === 'IS_EMPTY') {
    if (kind === 'codes') return { test: (column) => column.test.empty(codesOf(column, [''])), reuse: 'empty' };
    if (kind === 'boolean') return { test: (column) => column.test.flag(-1), reuse: 'empty' };
    if (kind === 'multi') return { test: (column) => column.test.noOptions(), reuse: 'empty' };
    return { test: (column) => column.test.none(), reuse: 'empty' };
  }
  const byCodes = (values: string[]): Tests => ({
    test: (column) => column.test.code(codesOf(column, values)),
    bits: (column, positions) => column.valuesBitset(codesOf(column, values)) ?? column.codesBitset(codesOf(column, values), positions),
    reuse: JSON.stringify(['codes', values]),
  });
  const byRange = (range: Range): Tests => ({
    test: (column) => column.test.value(inRange(range)),
    bits: (column, positions) => column.rangeBitset(range, positions),
    reuse: JSON.stringify(['range', rangeText(range)]),
  });
  switch (kind) {
    case 'codes': {
      if (definition.type === 'text') {
        if (comparison === 'EQUALS') return byCodes([read.string(raw, path)]);
        if (comparison === 'IN') return byCodes(read.strings(raw, path));
        return undefined;
      }
      return byCodes(optionNames(definition, raw));
    }
    case 'multi': {
      const names = optionNames(definition, raw);
      const all = comparison === 'HAS_ALL_OF';
      return { test: (column) => column.test.options(names, all), bits: (column) => column.optionsBitset(names, all), reuse: JSON.stringify(['options', all, names]) };
    }
    case 'boolean': {
      const wanted = comparison === 'IS_TRUE' ? 1 : 0;
      return { test: (column) => column.test.flag(wanted), bits: (column) => column.valuesBitset([wanted]), reuse: JSON.stringify(['flag', wanted]) };
    }
    case 'number':
      return byRange(numberRange(comparison, raw));
    case 'micros':
      return byRange(instantRange(comparison, raw, now));
  }
}

function codesOf(column: Column, values: readonly string[]): Set<number> {
  const codes = new Set<number>();
  for (const value of values) {
    const code = column.dictionary.get(value);
    if (code !== undefined) codes.add(code);
  }
  return codes;
}

/** Option names, given by name or id, as compile.ts reads them (validated there already). */
function optionNames(definition: PropertyDefinition, raw: unknown): string[] {
  return read.strings(raw, []).flatMap((given) => {
    const option = definition.options?.find((candidate) => candidate.name === given || candidate.id === given);
    return option ? [option.name] : [];
  });
}

const range = (low: number, lowInclusive: boolean, high: number, highInclusive: boolean): Range => ({ low, lowInclusive, high, highInclusive });

/** A range as text, exactly (JSON would write infinities as null, and -0 as 0, which compare alike anyway). */
const rangeText = (given: Range) => `${given.lowInclusive ? '[' : '('}${String(given.low)},${String(given.high)}${given.highInclusive ? ']' : ')'}`;

function numberRange(comparison: Comparison, raw: unknown): Range {
  if (comparison === 'BETWEEN') {
    const [min, max] = read.pair(raw, [], read.number);
    return range(min, true, max, true);
  }
  const bound = read.number(raw, []);
  switch (comparison) {
    case 'EQUALS':
      return range(bound, true, bound, true);
    case 'GREATER_THAN':
      return range(bound, false, Infinity, true);
    case 'GREATER_THAN_OR_EQUAL':
      return range(bound, true, Infinity, true);
    case 'LESS_THAN':
      return range(-Infinity, true, bound, false);
    default:
      return range(-Infinity, true, bound, true);
  }
}

/** The same ranges compile.ts writes in SQL, in microseconds (an infinite instant is past every bound, as in SQL). */
function instantRange(comparison: Comparison, raw: unknown, now: Date): Range {
  if (comparison === 'IN_LAST_DAYS') return range(micros(new Date(now.getTime() - read.days(raw, []) * DAY_MS)), true, micros(now), true);
  if (comparison === 'BETWEEN') {
    const [from, to] = read.pair(raw, [], read.moment);
    return range(micros(from.from), true, micros(to.to), !to.isDate);
  }
  const moment = read.moment(raw, []);
  if (comparison === 'BEFORE') return range(-Infinity, true, micros(moment.from), false);
  if (comparison === 'AFTER') return range(micros(moment.to), moment.isDate, Infinity, true);
  const day = Math.floor(moment.from.getTime() / DAY_MS) * DAY_MS;
  return range(day * 1000, true, (day + DAY_MS) * 1000, false);
}
