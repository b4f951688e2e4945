import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { BoundedMatches, Matches, SortBound } from './counts/index.js';
import type { ColumnSpec } from './counts/plan.js';
import { memberBitmap } from './member-bitmap.js';
import { choosePage, PAGE_AMONG_LIMIT } from './run.js';

/**
 * Which way a page counted in process reads its rows (choosePage), for the counts' matches as
 * they come: the order of the ways, with a sort the counts can bound and one they cannot.
 */
describe('choosePage', () => {
  const page = () => sql`select 1`;
  const statements = (source?: ColumnSpec['source']) => ({
    pageAmong: page,
    pageBounded: page,
    pageWalking: page,
    walks: 'row' as const,
    ...(source ? { sortBound: { column: { source, key: 'k', kind: 'micros', value: sql`1` }, direction: 'ASC', rows: 26 } satisfies SortBound } : {}),
  });
  const bound: BoundedMatches = { listed: Int32Array.from([7, 8, 9]), ties: [] };
  /** `total` matches among 100,000 rows; a bound lists `bound`, or is refused (null). */
  const matches = (total: number, bounded: BoundedMatches | null = bound): Matches => ({
    total,
    rows: 100_000,
    people: 1_000_000,
    personNos: () => Int32Array.from({ length: total }, (_, index) => index),
    bitmap: () => memberBitmap([1]),
    bounded: () => bounded ?? undefined,
  });

  it("bounds a participant's value before walking, and walks when the bound is refused", () => {
    // 8,017 matches of 100,000: a walk of some 324 rows by the estimate; bounded all the same.
    expect(choosePage(statements('participant'), matches(8_017), 25)).toEqual({ path: 'bounded', bounded: bound });
    expect(choosePage(statements('participant'), matches(8_017, null), 25)).toEqual({ path: 'walk' });
  });

  it("walks a person's value when the walk is short, and bounds it otherwise", () => {
    expect(choosePage(statements('person'), matches(8_017), 25)).toEqual({ path: 'walk' });
    // 300 matches of 100,000: a walk of some 8,700 rows, over twice the matches.
    expect(choosePage(statements('person'), matches(300), 25)).toEqual({ path: 'bounded', bounded: bound });
  });

  it("bounds a person's value first when the walk passes more rows than the bound costs", () => {
    const byPerson = { ...statements('person'), walks: 'person' as const };
    // 35,000 matches of 1,000,000 people: 1000 rows walk some 28,600 people, more than bounding
    // 35,000 matches and listing 1,001 rows costs (16,400 walked rows' worth); 25 rows walk 743.
    expect(choosePage(byPerson, matches(35_000), 1000)).toEqual({ path: 'bounded', bounded: bound });
    expect(choosePage(byPerson, matches(35_000), 25)).toEqual({ path: 'walk' });
    // 347,000 matches: 1000 rows walk 2,900 people, less than the bound costs.
    expect(choosePage(byPerson, matches(347_000), 1000)).toEqual({ path: 'walk' });
    // Refused, the bound gives way to the walk.
    expect(choosePage(byPerson, matches(35_000, null), 1000)).toEqual({ path: 'walk' });
  });

  it('lists the matches when nothing bounds them and they are few enough, else reads by the filter', () => {
    expect(choosePage(statements(), matches(300), 25)).toEqual({ path: 'list' });
    expect(choosePage(statements('person'), matches(300, null), 25)).toEqual({ path: 'list' });
    expect(choosePage({ ...statements(), pageWalking: undefined }, matches(PAGE_AMONG_LIMIT + 1), 25)).toEqual({ path: 'filter' });
  });
});
