import { describe, expect, it } from 'vitest';
import { Column, columnKindOf } from './columns.js';

/** The positions among the first `size` that a test accepts. */
const matching = (test: (position: number) => boolean, size: number) => Array.from({ length: size }, (_, position) => position).filter(test);

/** A column of `kind` holding `values` at positions 0, 1, … (as readExpression's text would give them). */
function columnOf(kind: ConstructorParameters<typeof Column>[0], values: unknown[]): Column {
  const column = new Column(kind);
  column.grow(values.length);
  values.forEach((value, position) => column.set(position, value));
  return column;
}

const codes = (column: Column, texts: string[]) => new Set(texts.map((text) => column.dictionary.get(text) ?? -1));

describe('columnKindOf', () => {
  it('counts what compares exactly per row, and leaves the rest to SQL', () => {
    expect(columnKindOf('text')).toBe('codes');
    expect(columnKindOf('enum')).toBe('codes');
    expect(columnKindOf('select')).toBe('codes');
    expect(columnKindOf('number')).toBe('number');
    expect(columnKindOf('datetime')).toBe('micros');
    expect(columnKindOf('boolean')).toBe('boolean');
    expect(columnKindOf('multiselect')).toBe('multi');
    expect(columnKindOf('email')).toBeUndefined();
    expect(columnKindOf('location')).toBeUndefined();
    expect(columnKindOf('membership')).toBeUndefined();
  });
});

describe('Column: codes', () => {
  it('codes each text once, 0 being no value; the empty text is a value of its own', () => {
    const column = columnOf('codes', ['Red', null, 'Green', 'Red', '', 'red']);
    expect([...column.dictionary.entries()]).toEqual([
      ['Red', 1],
      ['Green', 2],
      ['', 3],
      ['red', 4],
    ]);
    // Compared exactly, as SQL's = compares text: case matters.
    expect(matching(column.test.code(codes(column, ['Red'])), 6)).toEqual([0, 3]);
    expect(matching(column.test.code(codes(column, ['Red', 'Green'])), 6)).toEqual([0, 2, 3]);
    expect(matching(column.test.code(new Set()), 6)).toEqual([]);
    // IS_EMPTY: no value, or the empty text.
    expect(matching(column.test.empty(codes(column, [''])), 6)).toEqual([1, 4]);
    expect(matching(column.test.empty(new Set()), 6)).toEqual([1]);
    expect(column.exact).toBe(true);
  });

  it('grows: new positions read as no value, old ones are kept; a value is replaced by set', () => {
    const column = columnOf('codes', ['a', 'b']);
    column.grow(200);
    column.set(150, 'a');
    expect(matching(column.test.code(codes(column, ['a'])), 200)).toEqual([0, 150]);
    expect(matching(column.test.empty(new Set()), 200)).toHaveLength(197);
    column.set(0, null);
    column.set(1, 'a');
    expect(matching(column.test.code(codes(column, ['a'])), 200)).toEqual([1, 150]);
    // Growing to less than held changes nothing.
    column.grow(10);
    expect(matching(column.test.code(codes(column, ['a'])), 200)).toEqual([1, 150]);
  });

  it('keeps every code exact as its values pass 255 and 65,535 (codes held in one byte, then two, then four)', () => {
    // 70,000 distinct values, each at two positions: the first and the last word of positions.
    const size = 140_000;
    const column = new Column('codes');
    column.grow(size);
    for (let value = 0; value < 70_000; value++) {
      column.set(value, `v${value}`);
      column.set(size - 1 - value, `v${value}`);
    }
    for (const value of [0, 254, 255, 256, 65_534, 65_535, 65_536, 69_999]) {
      expect(column.dictionary.get(`v${value}`)).toBe(value + 1);
      expect(matching(column.test.code(codes(column, [`v${value}`])), size)).toEqual([value, size - 1 - value]);
      const bits = column.codesBitset(codes(column, [`v${value}`]), size);
      expect(bits.count()).toBe(2);
      expect([bits.has(value), bits.has(size - 1 - value)]).toEqual([true, true]);
    }
  });

  it('holds what it is given as text (numbers read as text)', () => {
    const column = columnOf('codes', [12, '12']);
    expect(column.dictionary.get('12')).toBe(1);
    expect(matching(column.test.code(codes(column, ['12'])), 2)).toEqual([0, 1]);
  });
});

describe('Column: number', () => {
  it('holds numbers read as text, null as no value', () => {
    const column = columnOf('number', ['1', '-2.5', null, '0', '1e3', '100000000000000000000', '0.000123', '-0']);
    expect(matching(column.test.value((value) => value > 0), 8)).toEqual([0, 4, 5, 6]);
    expect(matching(column.test.value((value) => value === 0), 8)).toEqual([3, 7]);
    expect(matching(column.test.value(() => true), 8)).toEqual([0, 1, 3, 4, 5, 6, 7]);
    expect(matching(column.test.none(), 8)).toEqual([2]);
    expect(column.exact).toBe(true);
  });

  it('stays exact up to 15 significant digits, however many zeros surround them', () => {
    const column = columnOf('number', ['123456789012345', '-0.000000123456789012345', '1234567890123450000000', '12345678901234.5', '0.10000000000000', '999999999999999e10']);
    expect(column.exact).toBe(true);
  });

  it.each([
    ['16 significant digits', '1234567890123456'],
    ['16 significant digits after the point', '0.1234567890123456'],
    ['a negative number of 17 digits', '-12345678901234567'],
    ['a long fraction', '3.14159265358979323846'],
    ['an underflowing number', '1e-400'],
    ['an underflowing number written out', `0.${'0'.repeat(400)}1`],
    ['a subnormal number', '1e-310'],
    ['an overflowing number', '1e400'],
    ['text that is no decimal', 'abc'],
    ['NaN', 'NaN'],
    ['Infinity', 'Infinity'],
  ])('turns inexact for good on %s', (_what, text) => {
    const column = columnOf('number', ['1', text]);
    expect(column.exact).toBe(false);
    column.set(1, '2');
    column.set(1, null);
    expect(column.exact).toBe(false);
  });

  it('grows with no value in the new positions', () => {
    const column = columnOf('number', ['5']);
    column.grow(100);
    expect(matching(column.test.none(), 100)).toHaveLength(99);
    column.set(99, '7');
    expect(matching(column.test.value((value) => value >= 5), 100)).toEqual([0, 99]);
  });
});

describe('Column: micros', () => {
  it('holds microseconds since the epoch, exact when whole and safe', () => {
    const at = Date.parse('2026-11-22T12:00:00.000Z') * 1000;
    const column = columnOf('micros', [`${at}.000000`, `${at + 1}`, null, '-86400000000', 'Infinity', '-Infinity']);
    expect(column.exact).toBe(true);
    expect(matching(column.test.value((value) => value > at), 6)).toEqual([1, 4]);
    expect(matching(column.test.value((value) => value < 0), 6)).toEqual([3, 5]);
    expect(matching(column.test.none(), 6)).toEqual([2]);
  });

  it.each([
    ['a non-integer microsecond value', '1764000000000000.5'],
    ['an instant beyond 2^53 microseconds', '9007199254740993'],
    ['text that is no number', 'soon'],
  ])('turns inexact on %s', (_what, text) => {
    const column = columnOf('micros', ['0', text]);
    expect(column.exact).toBe(false);
  });
});

describe('Column: boolean', () => {
  it('holds true, false and none, from booleans or their text', () => {
    const column = columnOf('boolean', [true, false, null, 't', 'f', 'true', 'false']);
    expect(matching(column.test.flag(1), 7)).toEqual([0, 3, 5]);
    expect(matching(column.test.flag(0), 7)).toEqual([1, 4, 6]);
    expect(matching(column.test.flag(-1), 7)).toEqual([2]);
  });

  it('grows with no value in the new positions', () => {
    const column = columnOf('boolean', [true]);
    column.grow(70);
    expect(matching(column.test.flag(-1), 70)).toHaveLength(69);
    column.set(69, false);
    expect(matching(column.test.flag(0), 70)).toEqual([69]);
  });
});

describe('Column: multi', () => {
  const json = (value: unknown) => JSON.stringify(value);

  it('tests options with ANY and ALL; IS_EMPTY is no value or an empty array', () => {
    const column = columnOf('multi', [json(['Red', 'Green']), json(['Green']), null, json([]), json(['Blue', 'Red', 'Green']), json(['Red'])]);
    const any = (names: string[]) => matching(column.test.options(names, false), 6);
    const all = (names: string[]) => matching(column.test.options(names, true), 6);
    expect(any(['Red'])).toEqual([0, 4, 5]);
    expect(any(['Red', 'Blue'])).toEqual([0, 4, 5]);
    expect(any(['Green', 'Blue'])).toEqual([0, 1, 4]);
    expect(all(['Red', 'Green'])).toEqual([0, 4]);
    expect(all(['Red', 'Green', 'Blue'])).toEqual([4]);
    // An option nobody holds: ANY ignores it, ALL matches nobody.
    expect(any(['Red', 'Purple'])).toEqual([0, 4, 5]);
    expect(all(['Red', 'Purple'])).toEqual([]);
    expect(any(['Purple'])).toEqual([]);
    expect(matching(column.test.noOptions(), 6)).toEqual([2, 3]);
  });

  it('ignores array items that are not strings (as jsonb ?| and ?& do), and values that are not arrays', () => {
    const column = columnOf('multi', [json([1, 'Red', null, { Red: true }, ['Green'], true]), json([2]), json('Red'), json({ Red: 1 }), json(3), json(null)]);
    expect(matching(column.test.options(['Red'], false), 6)).toEqual([0]);
    expect(matching(column.test.options(['Green'], false), 6)).toEqual([]);
    expect(matching(column.test.options(['1'], false), 6)).toEqual([]);
    expect([...column.dictionary.keys()]).toEqual(['Red']);
    // A non-empty array is a value, even of no strings; anything else is no value.
    expect(matching(column.test.noOptions(), 6)).toEqual([2, 3, 4, 5]);
  });

  it('replaces a position’s options when set again', () => {
    const column = columnOf('multi', [json(['Red', 'Green']), json(['Red'])]);
    column.set(0, json(['Blue']));
    expect(matching(column.test.options(['Red'], false), 2)).toEqual([1]);
    expect(matching(column.test.options(['Blue'], false), 2)).toEqual([0]);
    column.set(1, null);
    expect(matching(column.test.options(['Red'], false), 2)).toEqual([]);
    expect(matching(column.test.noOptions(), 2)).toEqual([1]);
    column.set(1, json([]));
    expect(matching(column.test.noOptions(), 2)).toEqual([1]);
  });

  it('grows every option’s bits, across word boundaries, and options first seen late are as long', () => {
    const column = columnOf('multi', [json(['Red'])]);
    column.grow(100);
    column.set(33, json(['Red', 'Green']));
    column.set(99, json(['Green']));
    column.grow(1000);
    column.set(999, json(['Red', 'Blue']));
    expect(matching(column.test.options(['Red'], false), 1000)).toEqual([0, 33, 999]);
    expect(matching(column.test.options(['Green'], false), 1000)).toEqual([33, 99]);
    expect(matching(column.test.options(['Red', 'Green'], true), 1000)).toEqual([33]);
    expect(matching(column.test.options(['Blue'], false), 1000)).toEqual([999]);
    expect(matching(column.test.noOptions(), 1000)).toHaveLength(996);
    expect(column.exact).toBe(true);
  });
});

describe('codes scanned without value bitsets', () => {
  it('finds the positions of the codes a dictionary test accepts, in one pass over any number of values', () => {
    const values = Array.from({ length: 2000 }, (_, position) => (position % 7 === 0 ? null : `person ${position % 600}`));
    const column = columnOf('codes', values);
    const accepted = column.codesWhere((value) => value.endsWith(' 5') || value === 'person 599');
    const bits = column.codesBitset(accepted, values.length);
    const expected = values.flatMap((value, position) => (value === 'person 5' || value === 'person 599' ? [position] : []));
    expect(matching((position) => bits.has(position), values.length)).toEqual(expected);
    expect(matching(column.test.code(accepted), values.length)).toEqual(expected);
    // More than 512 values: the column keeps no bitset per value, and says so.
    expect(column.valuesBitset(accepted)).toBeUndefined();
  });

  it('never accepts a position holding no value, whatever the test', () => {
    const column = columnOf('codes', [null, '', 'a']);
    const bits = column.codesBitset(column.codesWhere(() => true), 3);
    expect(matching((position) => bits.has(position), 3)).toEqual([1, 2]);
  });
});

describe('Column: number ranges', () => {
  it('answers every kind of bounds as the comparisons would, also between adjacent doubles and at infinities', () => {
    // 2^53 - 1 and 2^53 are adjacent doubles: an open bound at one must keep the other.
    const texts = ['9007199254740991', '9007199254740992', '0.5', '-3', null, '0', '-9007199254740992'];
    const column = columnOf('number', texts);
    const values = texts.map((text) => (text === null ? Number.NaN : Number(text)));
    const bounds = [...values.filter((value) => !Number.isNaN(value)), Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY];
    for (const low of bounds) {
      for (const high of bounds) {
        for (const lowInclusive of [true, false]) {
          for (const highInclusive of [true, false]) {
            const range = { low, lowInclusive, high, highInclusive };
            const expected = matching((position) => {
              const value = values[position]!;
              return (lowInclusive ? value >= low : value > low) && (highInclusive ? value <= high : value < high);
            }, texts.length);
            const bits = column.rangeBitset(range, texts.length);
            expect(matching((position) => bits.has(position), texts.length), JSON.stringify(range)).toEqual(expected);
          }
        }
      }
    }
  });
});

describe('Column: instants', () => {
  const day = 86_400_000_000; // microseconds
  const list = (...days: number[]) => JSON.stringify(days.map((at) => String(at * day)));

  it('counts each position’s instants within a window, both ends included', () => {
    const column = columnOf('instants', [list(1, 5, 10), list(), null, list(10, 11), list(4)]);
    const counted = (low: number, high: number, range: Parameters<Column['windowCountBitset']>[2]) => {
      const bits = column.windowCountBitset(low * day, high * day, range, 5);
      const word = matching((position) => bits.has(position), 5);
      expect(matching(column.test.windowCount(low * day, high * day, range), 5)).toEqual(word);
      return word;
    };
    expect(counted(5, 10, { low: 1, lowInclusive: true, high: Infinity, highInclusive: true })).toEqual([0, 3]);
    expect(counted(5, 10, { low: 2, lowInclusive: true, high: 2, highInclusive: true })).toEqual([0]);
    expect(counted(5, 10, { low: -Infinity, lowInclusive: true, high: 0, highInclusive: true })).toEqual([1, 2, 4]);
  });

  it('keeps the latest list of a position through replacements and compaction of the pool', () => {
    const column = columnOf('instants', [list(1), list(2), list(3)]);
    for (let round = 0; round < 200; round++) column.set(round % 3, list(...Array.from({ length: (round % 5) + 1 }, (_, index) => 100 + index)));
    column.set(1, list(7, 8));
    const within = (position: number) => Array.from({ length: 10 }, (_, count) => count).find((count) => column.test.windowCount(0, 1000 * day, { low: count, lowInclusive: true, high: count, highInclusive: true })(position));
    expect([within(0), within(1), within(2)]).toEqual([(198 % 5) + 1, 2, (197 % 5) + 1]);
  });

  it('counts by the latest instants held exactly as by walking the lists, for any window and bounds, also after replacements and with instants after the window', () => {
    // A small deterministic generator: the same cases on every run.
    let state = 42;
    const next = (below: number) => {
      state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
      return state % below;
    };
    const size = 300;
    const lists: number[][] = Array.from({ length: size }, () => Array.from({ length: next(5) }, () => next(100)));
    const column = columnOf('instants', lists.map((days) => list(...days)));
    for (let change = 0; change < 100; change++) {
      const position = next(size);
      lists[position] = Array.from({ length: next(5) }, () => next(100));
      column.set(position, list(...lists[position]!));
    }
    const bounds = [-Infinity, -1, 0, 0.5, 1, 1.5, 2, 3, 4, Infinity];
    for (let round = 0; round < 400; round++) {
      const low = next(100);
      // Windows ending at or after every instant (the latest answer), and before some (the lists do).
      const high = round % 4 === 0 ? low + next(30) : 100 + next(10);
      const range = { low: bounds[next(bounds.length)]!, lowInclusive: next(2) === 0, high: bounds[next(bounds.length)]!, highInclusive: next(2) === 0 };
      const positions = size + next(40);
      const bits = column.windowCountBitset(low * day, high * day, range, positions);
      const expected = matching((position) => {
        const within = (lists[position] ?? []).filter((at) => at >= low && at <= high).length;
        const aboveLow = range.lowInclusive ? within >= range.low : within > range.low;
        const belowHigh = range.highInclusive ? within <= range.high : within < range.high;
        return aboveLow && belowHigh;
      }, positions);
      expect(matching((position) => bits.has(position), positions), JSON.stringify({ low, high, range, positions })).toEqual(expected);
    }
  });

  it('marks the column inexact for an instant a double cannot hold to the microsecond', () => {
    const column = columnOf('instants', [JSON.stringify(['9007199254740993'])]);
    expect(column.exact).toBe(false);
  });
});

describe('Column: haystack', () => {
  const slotsOf = (bits: { slots(): Generator<number> }) => [...bits.slots()];

  it('finds substrings and prefixes in texts of any script, never across two texts, and empty needles in every text', () => {
    const column = columnOf('haystack', ['ana.garcia@example.com', null, 'zoë@garcia.es', '', 'bengarc', 'ia@x.org']);
    expect(slotsOf(column.substringBitset('garcia', false, 6))).toEqual([0, 2]);
    expect(slotsOf(column.substringBitset('garc', true, 6))).toEqual([]);
    expect(slotsOf(column.substringBitset('ana', true, 6))).toEqual([0]);
    expect(slotsOf(column.substringBitset('ë@', false, 6))).toEqual([2]);
    expect(slotsOf(column.substringBitset('', false, 6))).toEqual([0, 2, 3, 4, 5]);
    expect(slotsOf(column.substringBitset('', true, 6))).toEqual([0, 2, 3, 4, 5]);
    expect(matching(column.test.substring('.org', false), 6)).toEqual([5]);
  });

  it('follows replaced and removed texts, also through compactions', () => {
    const column = columnOf('haystack', ['a@one', 'b@two']);
    for (let round = 0; round < 5_000; round++) column.set(round % 2, `${round % 2 === 0 ? 'a' : 'b'}@round${round}`);
    expect(slotsOf(column.substringBitset('round4998', false, 2))).toEqual([0]);
    expect(slotsOf(column.substringBitset('round4999', false, 2))).toEqual([1]);
    expect(slotsOf(column.substringBitset('round', false, 2))).toEqual([0, 1]);
    expect(slotsOf(column.substringBitset('one', false, 2))).toEqual([]);
    column.set(0, null);
    expect(slotsOf(column.substringBitset('@', false, 2))).toEqual([1]);
    column.grow(3);
    column.set(2, 'c@round4999');
    expect(slotsOf(column.substringBitset('round4999', false, 3))).toEqual([1, 2]);
  });

  it('answers a needle searched again as a scan would, after writes, growth and the eviction of older needles', () => {
    let state = 7;
    const next = (below: number) => {
      state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
      return state % below;
    };
    const syllables = ['ga', 'rc', 'ia', 'an', 'na', 'x', 'é', '@', '.'];
    const text = () => (next(6) === 0 ? null : Array.from({ length: next(6) }, () => syllables[next(syllables.length)]).join(''));
    const texts: (string | null)[] = Array.from({ length: 200 }, text);
    const column = columnOf('haystack', texts);
    const needles = ['ga', 'garc', 'ia', 'an', 'na', 'x', 'rcia', '@', '.', 'aga', 'ana', 'nan', 'xx', 'iaia', 'gaga', 'rc', 'a', 'c', 'ian', 'na.'];
    for (let round = 0; round < 600; round++) {
      if (next(3) === 0) {
        const position = next(texts.length + 3);
        if (position >= texts.length) {
          column.grow(position + 1);
          while (texts.length <= position) texts.push(null);
        }
        texts[position] = text();
        column.set(position, texts[position]);
      }
      const needle = needles[next(needles.length)]!;
      const prefix = next(2) === 0;
      const positions = texts.length - next(3);
      const expected = matching((position) => {
        const value = texts[position];
        return value !== null && value !== undefined && (prefix ? value.startsWith(needle) : value.includes(needle));
      }, positions);
      expect(slotsOf(column.substringBitset(needle, prefix, positions)), `${prefix ? 'prefix ' : ''}${needle} over ${positions}`).toEqual(expected);
    }
  });
});

describe('Column: location', () => {
  const london = [51.5074, -0.1278] as const;
  const haversine = (lat: number, lng: number) => {
    const radians = (degrees: number) => degrees * (Math.PI / 180);
    const a = Math.sin(radians(lat - london[0]) / 2) ** 2 + Math.cos(radians(london[0])) * Math.cos(radians(lat)) * Math.sin(radians(lng - london[1]) / 2) ** 2;
    return 2 * 6371.0088 * Math.asin(Math.min(1, Math.sqrt(a)));
  };

  it('is certain away from the bound, leaves distances within a metre of it to SQL, and never matches a missing coordinate', () => {
    const column = columnOf('location', ['51.5074 -0.1278', '51.7520 -1.2577', '48.8566 2.3522', null, '-51.5074 179.8722', 'x 1']);
    const oxford = haversine(51.752, -1.2577);
    const near = column.withinKm(london[0], london[1], 100, undefined, 6);
    expect([...near.certain.slots()]).toEqual([0, 1]);
    expect(near.doubtful.count()).toBe(0);
    const atOxford = column.withinKm(london[0], london[1], oxford, undefined, 6);
    expect([...atOxford.certain.slots()]).toEqual([0]);
    expect([...atOxford.doubtful.slots()]).toEqual([1]);
    expect([...column.withinKm(london[0], london[1], oxford + 0.01, undefined, 6).certain.slots()]).toEqual([0, 1]);
    const everywhere = column.withinKm(london[0], london[1], 20_100, undefined, 6);
    expect([...everywhere.certain.slots()]).toEqual([0, 1, 2, 4]);
    // Only the domain's slots are visited.
    expect([...column.withinKm(london[0], london[1], 20_100, Int32Array.of(2, 3), 6).certain.slots()]).toEqual([2]);
  });
});
