import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../seed/demo-people.js';
import { Bitset } from './bitset.js';
import { Column } from './columns.js';
import { type BoundedMatches, boundedPersonNos as boundedMatches, everyBounded, LeastKeys, selectLeast, timestampMicros } from './index.js';

/** Every person number a bound lists or ties, or undefined when it refuses. */
const boundedPersonNos = (...args: Parameters<typeof boundedMatches>) => {
  const found = boundedMatches(...args);
  return found && everyBounded(found);
};

/**
 * boundedPersonNos against the page itself: for random values (ties, no values, negatives), random
 * matches, both directions and random keyset positions, the rows a sorted page of the matches
 * takes past the position are all among the person numbers it lists, and it lists no match
 * outside the values the page can reach.
 */
describe('the matches a page sorted by a held number can take', () => {
  const numbers = { kind: 'number' } as const;
  const people = 400;
  /** Person numbers are not slots: slot s holds person 1000 + 3s, so a mix-up shows. */
  const personNoOf = Int32Array.from({ length: people }, (_, slot) => 1000 + 3 * slot);

  function setUp(seed: number) {
    const random = seededRandom(seed).next;
    const column = new Column('number');
    column.grow(people);
    const values: (number | null)[] = [];
    for (let slot = 0; slot < people; slot++) {
      const roll = random();
      const value = roll < 0.15 ? null : roll < 0.6 ? Math.floor(random() * 20) - 5 : Math.round(random() * 1e6) / 100;
      values.push(value);
      column.set(slot, value === null ? null : String(value));
    }
    const matched = Bitset.empty(people);
    for (let slot = 0; slot < people; slot++) if (random() < 0.6) matched.add(slot);
    return { random, column, values, matched };
  }

  /** setUp's column and matches, and a random page of up to `maxRows` rows, starting after a random row holding a value at chance `fromRow`. */
  function randomPage(seed: number, maxRows: number, fromRow: number) {
    const { random, column, values, matched } = setUp(seed);
    const direction: 'ASC' | 'DESC' = random() < 0.5 ? 'ASC' : 'DESC';
    const rows = 1 + Math.floor(random() * maxRows);
    const withValue = [...matched.slots()].filter((slot) => values[slot] !== null);
    const start = random() < fromRow && withValue.length > 0 ? withValue[Math.floor(random() * withValue.length)]! : undefined;
    const after = start === undefined ? undefined : { value: values[start]!, slot: start };
    return { column, values, matched, direction, rows, after };
  }

  /** The page as SQL reads it: no value last (as ±Infinity), then the slot (standing in for the row id), past a position. */
  function page(values: (number | null)[], matched: Bitset, direction: 'ASC' | 'DESC', rows: number, after?: { value: number; slot: number }) {
    const sign = direction === 'ASC' ? 1 : -1;
    const key = (slot: number) => (values[slot] === null ? Number.POSITIVE_INFINITY : sign * values[slot]!);
    // Ties in the id's order in the sort's direction, as SQL's `order by key desc, id desc`.
    const ordered = [...matched.slots()].sort((a, b) => key(a) - key(b) || sign * (a - b));
    const past = after ? ordered.filter((slot) => key(slot) > sign * after.value || (key(slot) === sign * after.value && sign * (slot - after.slot) > 0)) : ordered;
    return past.slice(0, rows);
  }

  it('lists every match the page takes, and none beyond the rows-th value past the position', () => {
    let bounded = 0;
    let refused = 0;
    for (let seed = 1; seed <= 200; seed++) {
      // Half the pages start after a row of an earlier page (its value, as SQL's text gives it).
      const { column, values, matched, direction, rows, after } = randomPage(seed, 40, 0.5);
      const listed = boundedPersonNos(matched, personNoOf, column, { column: numbers, direction, rows, ...(after ? { after: String(after.value) } : {}) });
      const expected = page(values, matched, direction, rows, after);
      if (!listed) {
        // Refused only when fewer than `rows` matches hold a number past the position.
        const sign = direction === 'ASC' ? 1 : -1;
        const past = [...matched.slots()].filter((slot) => values[slot] !== null && (after === undefined || sign * values[slot]! > sign * after.value));
        expect(past.length, `seed ${seed}`).toBeLessThan(rows);
        refused++;
        continue;
      }
      bounded++;
      const set = new Set(listed);
      for (const slot of expected) expect(set.has(personNoOf[slot]!), `seed ${seed}: slot ${slot} of the page`).toBe(true);
      // Nothing outside the values from the position's to the rows-th value strictly past it (which
      // may lie past the page's last: rows at the position's own value can be on the page).
      const sign = direction === 'ASC' ? 1 : -1;
      const strictlyPast = [...matched.slots()].filter((slot) => values[slot] !== null && (after === undefined || sign * values[slot]! > sign * after.value));
      const last = strictlyPast.map((slot) => sign * values[slot]!).sort((a, b) => a - b)[rows - 1]!;
      for (const personNo of listed) {
        const slot = (personNo - 1000) / 3;
        expect(matched.has(slot)).toBe(true);
        expect(values[slot], `seed ${seed}`).not.toBeNull();
        expect(sign * values[slot]!).toBeLessThanOrEqual(last);
        if (after) expect(sign * values[slot]!).toBeGreaterThanOrEqual(sign * after.value);
      }
    }
    expect(bounded).toBeGreaterThan(150);
    expect(refused).toBeGreaterThan(0);
  });

  it('bounds by a study’s column, held by participant row, as by the same values held by person', () => {
    let compared = 0;
    for (let seed = 1; seed <= 100; seed++) {
      const { random, column, values, matched } = setUp(seed);
      // Some people are participants, at rows in no slot order; the count's domain lists them.
      const participants = [...Array(people).keys()].filter(() => random() < 0.7).sort(() => random() - 0.5);
      const studyColumn = new Column('number');
      studyColumn.grow(participants.length);
      participants.forEach((slot, row) => studyColumn.set(row, values[slot] === null ? null : String(values[slot])));
      const domain = { slots: Int32Array.from(participants), rows: Int32Array.from(participants, (_, row) => row) };
      const inStudy = Bitset.empty(people);
      for (const slot of participants) if (matched.has(slot)) inStudy.add(slot);
      const direction = random() < 0.5 ? 'ASC' : 'DESC';
      const rows = 1 + Math.floor(random() * 40);
      const start = participants[Math.floor(random() * participants.length)]!;
      const after = random() < 0.5 && values[start] !== null ? { after: String(values[start]) } : {};
      const byPerson = boundedPersonNos(inStudy, personNoOf, column, { column: numbers, direction, rows, ...after });
      const byRow = boundedPersonNos(inStudy, personNoOf, studyColumn, { column: numbers, direction, rows, ...after }, domain);
      expect(byRow && [...byRow].sort(), `seed ${seed}`).toEqual(byPerson && [...byPerson].sort());
      if (byRow) compared++;
    }
    expect(compared).toBeGreaterThan(50);
  });

  it('refuses a position in the rows with no value, and a page longer than the numbers past the position', () => {
    const { column, matched } = setUp(7);
    expect(boundedPersonNos(matched, personNoOf, column, { column: numbers, direction: 'ASC', rows: 5, after: 'Infinity' })).toBeUndefined();
    expect(boundedPersonNos(matched, personNoOf, column, { column: numbers, direction: 'DESC', rows: 5, after: null })).toBeUndefined();
    expect(boundedPersonNos(matched, personNoOf, column, { column: numbers, direction: 'ASC', rows: people + 1 })).toBeUndefined();
  });

  it('keeps every tie of the page’s last value, whatever its row order: listed when the page could read them all, as a tie when more', () => {
    const column = new Column('number');
    column.grow(6);
    ['1', '2', '2', '2', null, '3'].forEach((value, slot) => column.set(slot, value));
    const matched = Bitset.full(6);
    const tied = Int32Array.from([1003, 1006, 1009]);
    expect(boundedMatches(matched, personNoOf, column, { column: numbers, direction: 'ASC', rows: 2 })).toEqual({ listed: Int32Array.from([1000]), ties: [{ personNos: tied, atPosition: false }] });
    expect(boundedMatches(matched, personNoOf, column, { column: numbers, direction: 'DESC', rows: 2 })).toEqual({ listed: Int32Array.from([1015]), ties: [{ personNos: tied, atPosition: false }] });
    expect(boundedMatches(matched, personNoOf, column, { column: numbers, direction: 'ASC', rows: 3 })).toEqual({ listed: Int32Array.from([1000, 1003, 1006, 1009]), ties: [] });
    expect(boundedMatches(matched, personNoOf, column, { column: numbers, direction: 'ASC', rows: 1, after: '2' })).toEqual({
      listed: Int32Array.from([1015]),
      ties: [{ personNos: tied, atPosition: true }],
    });
  });

  /**
   * The page run.ts reads from a bound: the listed matches, and of each tie its first `rows` by
   * row id in the page's direction (past the position's id for the position's own value).
   */
  function readAsSql(bounded: BoundedMatches, direction: 'ASC' | 'DESC', rows: number, after?: { slot: number }): Bitset {
    const read = Bitset.empty(people);
    const slotOf = (personNo: number) => (personNo - 1000) / 3;
    for (const personNo of bounded.listed) read.add(slotOf(personNo));
    const beyond = (slot: number) => after === undefined || (direction === 'ASC' ? slot > after.slot : slot < after.slot);
    for (const tie of bounded.ties) {
      const slots = [...tie.personNos].map(slotOf).filter((slot) => !tie.atPosition || beyond(slot));
      slots.sort((a, b) => (direction === 'ASC' ? a - b : b - a));
      for (const slot of slots.slice(0, rows)) read.add(slot);
    }
    return read;
  }

  it('reads the same page from its ties, taken by row id, as from every match', () => {
    let tied = 0;
    for (let seed = 1; seed <= 300; seed++) {
      const { column, values, matched, direction, rows, after } = randomPage(seed, 12, 0.7);
      const bounded = boundedMatches(matched, personNoOf, column, { column: numbers, direction, rows, ...(after ? { after: String(after.value) } : {}) });
      if (!bounded) continue;
      if (bounded.ties.length > 0) tied++;
      for (const tie of bounded.ties) expect(tie.personNos.length).toBeGreaterThan(rows);
      expect(page(values, readAsSql(bounded, direction, rows, after), direction, rows, after), `seed ${seed}`).toEqual(page(values, matched, direction, rows, after));
    }
    expect(tied).toBeGreaterThan(50);
  });

  it('reads a date-time position as PostgreSQL writes it, in microseconds as the counts hold date-times', () => {
    expect(timestampMicros('2026-11-20 10:00:00.123456+00')).toBe(Date.UTC(2026, 10, 20, 10) * 1000 + 123_456);
    expect(timestampMicros('2026-11-20 10:00:00+00')).toBe(Date.UTC(2026, 10, 20, 10) * 1000);
    expect(timestampMicros('2026-11-20 12:30:00.5+02:30')).toBe(Date.UTC(2026, 10, 20, 10) * 1000 + 500_000);
    expect(timestampMicros('1969-12-31 23:59:59.5-00')).toBe(-500_000);
    for (const text of ['infinity', '-infinity', '0050-01-01 00:00:00+00', '2026-11-20 10:00:00 BC', '2026-11-20T10:00:00Z']) expect(timestampMicros(text), text).toBeNaN();
    // A page of date-times past such a position: the rows-th instant past it bounds the list.
    const column = new Column('micros');
    column.grow(4);
    const base = Date.UTC(2026, 10, 20, 10) * 1000;
    [base, base + 1, base + 2, null].forEach((micros, slot) => column.set(slot, micros === null ? null : String(micros)));
    const listed = boundedPersonNos(Bitset.full(4), personNoOf, column, { column: { kind: 'micros' }, direction: 'DESC', rows: 1, after: '2026-11-20 10:00:00.000002+00' });
    expect([...listed!].sort()).toEqual([1003, 1006]);
  });

  it('bounds a sort by texts in their bytes’ order, as a C collation sorts them', () => {
    const alphabet = ['a', 'b', 'z', '.', '_', '0', 'é', 'ß'];
    let bounded = 0;
    for (let seed = 1; seed <= 150; seed++) {
      const random = seededRandom(seed).next;
      const column = new Column('haystack');
      column.grow(people);
      const texts: (string | null)[] = [];
      for (let slot = 0; slot < people; slot++) {
        // Half share their first six bytes or more, which then leave the comparison to the rest.
        const prefix = random() < 0.5 ? (random() < 0.5 ? 'garcia' : 'garcía') : '';
        const text = random() < 0.1 ? null : prefix + Array.from({ length: 1 + Math.floor(random() * 3) }, () => alphabet[Math.floor(random() * alphabet.length)]).join('');
        texts.push(text);
        column.set(slot, text);
      }
      const matched = Bitset.empty(people);
      for (let slot = 0; slot < people; slot++) if (random() < 0.5) matched.add(slot);
      const direction = random() < 0.5 ? 'ASC' : 'DESC';
      const sign = direction === 'ASC' ? 1 : -1;
      const rows = 1 + Math.floor(random() * 30);
      const compare = (a: string, b: string) => sign * Buffer.compare(Buffer.from(a), Buffer.from(b));
      const withText = [...matched.slots()].filter((slot) => texts[slot] !== null);
      const start = random() < 0.5 ? withText[Math.floor(random() * withText.length)] : undefined;
      const past = (slot: number) => start === undefined || compare(texts[slot]!, texts[start]!) > 0 || (compare(texts[slot]!, texts[start]!) === 0 && slot > start);
      const expected = withText.filter(past).sort((a, b) => compare(texts[a]!, texts[b]!) || a - b).slice(0, rows);
      const listed = boundedPersonNos(matched, personNoOf, column, { column: { kind: 'haystack' }, direction, rows, ...(start === undefined ? {} : { after: texts[start]! }) });
      const strictlyPast = withText.filter((slot) => start === undefined || compare(texts[slot]!, texts[start]!) > 0);
      if (!listed) {
        expect(strictlyPast.length, `seed ${seed}`).toBeLessThan(rows);
        continue;
      }
      bounded++;
      const set = new Set(listed);
      for (const slot of expected) expect(set.has(personNoOf[slot]!), `seed ${seed}: slot ${slot} (${texts[slot]}) of the page`).toBe(true);
      const limit = strictlyPast.map((slot) => texts[slot]!).sort(compare)[rows - 1]!;
      for (const personNo of listed) {
        const text = texts[(personNo - 1000) / 3]!;
        expect(compare(text, limit), `seed ${seed}: ${text} past ${limit}`).toBeLessThanOrEqual(0);
      }
    }
    expect(bounded).toBeGreaterThan(100);
  });
});

/**
 * LeastKeys against a sort, over offers long enough to fill its buffer many times (its smallest
 * holds 1,024 keys): ascending, descending (each key entering below the bar), random, and with a
 * tie at the limit wider than the buffer.
 */
describe('the least keys of many offered', () => {
  const orders = {
    ascending: (count: number) => Array.from({ length: count }, (_, i) => i),
    descending: (count: number) => Array.from({ length: count }, (_, i) => count - i),
    random: (count: number, random: () => number) => Array.from({ length: count }, () => Math.floor(random() * count)),
    'few values': (count: number, random: () => number) => Array.from({ length: count }, () => Math.floor(random() * 4)),
  };

  it.each(Object.keys(orders))('keeps the rows least and every key equal to the limit, offered %s', (order) => {
    const random = seededRandom(order.length).next;
    for (const [count, rows] of [
      [10_000, 1],
      [10_000, 7],
      [20_000, 1001],
      [500, 600],
    ] as const) {
      const keys = orders[order as keyof typeof orders](count, random);
      const least = new LeastKeys(rows);
      keys.forEach((key, slot) => least.offer(key, slot));
      const kept = least.finish();
      if (count < rows) {
        expect(kept).toBeUndefined();
        continue;
      }
      const limit = [...keys].sort((a, b) => a - b)[rows - 1]!;
      expect(kept!.limit, `${count} keys, ${rows} rows`).toBe(limit);
      const keptSlots = [...kept!.slots.subarray(0, kept!.count)].filter((slot) => keys[slot]! <= limit).sort((a, b) => a - b);
      const expected = keys.flatMap((key, slot) => (key <= limit ? [slot] : []));
      expect(keptSlots, `${count} keys, ${rows} rows`).toEqual(expected);
      for (let i = 0; i < kept!.count; i++) expect(kept!.keys[i]).toBe(keys[kept!.slots[i]!]);
    }
  });

  it('selects the k-th least in place, each slot moving with its key', () => {
    const random = seededRandom(7).next;
    for (let round = 0; round < 200; round++) {
      const count = 1 + Math.floor(random() * 300);
      const keys = Float64Array.from({ length: count }, () => Math.floor(random() * (round % 2 === 0 ? 10 : 1000)));
      const slots = Int32Array.from({ length: count }, (_, i) => i);
      const original = Float64Array.from(keys);
      const k = Math.floor(random() * count);
      expect(selectLeast(keys, slots, count, k)).toBe([...original].sort((a, b) => a - b)[k]);
      for (let i = 0; i < count; i++) expect(keys[i]).toBe(original[slots[i]!]);
    }
  });
});
