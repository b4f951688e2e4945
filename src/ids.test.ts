import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { formatId, newId, newUnguessableId } from './ids.js';

describe('newId', () => {
  it('is a prefix and a 26-character Crockford ULID', () => {
    expect(newId('stu')).toMatch(/^stu_[0-9A-HJKMNP-TV-Z]{26}$/);
  });

  it('strictly increases within a process, also many times in one millisecond', () => {
    const ids = Array.from({ length: 5000 }, () => newId('x', 1_800_000_000_000));
    const sorted = [...ids].sort();
    expect(ids).toEqual(sorted);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('orders by time first, and never goes back when the clock does', () => {
    // Past the newest time this process has made an id for: other test files in the same worker
    // may have made ids at later times than now, and an id never goes back before those.
    const base = Number(decode(newId('x').slice(2, 12))) + 60_000;
    const earlier = newId('x', base);
    const later = newId('x', base + 1);
    expect(later > earlier).toBe(true);
    expect(later.slice(2, 12) > earlier.slice(2, 12)).toBe(true);
    const afterClockWentBack = newId('x', base - 50_000);
    expect(afterClockWentBack > later).toBe(true);
  });
});

/** Crockford base32 text as a number. */
const decode = (text: string) => [...text].reduce((value, character) => value * 32n + BigInt('0123456789ABCDEFGHJKMNPQRSTVWXYZ'.indexOf(character)), 0n);
/** The 80-bit random part of an id, as a number. */
const randomPart = (id: string) => decode(id.slice(-16));

describe('newUnguessableId', () => {
  it('is a prefix and a 26-character Crockford ULID with the time of its making', () => {
    const id = newUnguessableId('sgf_wsp_01JD0000000000000000000000', 1_800_000_000_000);
    expect(id).toMatch(/^sgf_wsp_01JD0000000000000000000000_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(decode(id.slice(-26, -16))).toBe(1_800_000_000_000n);
  });

  it('draws fresh random bits every time: ids of one millisecond do not follow from each other', () => {
    const ids = Array.from({ length: 1000 }, () => newUnguessableId('x', 1_850_000_000_000));
    expect(new Set(ids).size).toBe(ids.length);
    for (let index = 1; index < ids.length; index++) {
      const step = randomPart(ids[index]!) - randomPart(ids[index - 1]!);
      // newId's next id in the same millisecond is the previous one plus one.
      expect(step === 1n, `${ids[index - 1]} then ${ids[index]}`).toBe(false);
    }
    // And newId keeps its monotonic steps for every other id.
    const [first, second] = [newId('x', 1_850_000_000_001), newId('x', 1_850_000_000_001)];
    expect(randomPart(second!) - randomPart(first!)).toBe(1n);
  });
});

describe('formatId', () => {
  /** The text as it was made before formatId: BigInt arithmetic, a character at a time. */
  const reference = (prefix: string, time: number, random: bigint) => {
    const encode = (value: bigint, length: number) => {
      let text = '';
      for (let i = 0; i < length; i++) {
        text = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'[Number(value & 31n)] + text;
        value >>= 5n;
      }
      return text;
    };
    return `${prefix}_${encode(BigInt(time), 10)}${encode(random, 16)}`;
  };

  it('writes the same text as the BigInt encoding, for any time and random bits', () => {
    fc.assert(
      fc.property(fc.constantFrom('x', 'per', 'sgf_wsp_01JD0000000000000000000000'), fc.integer({ min: 0, max: 2 ** 48 - 1 }), fc.bigInt({ min: 0n, max: (1n << 80n) - 1n }), (prefix, time, random) => {
        expect(formatId(prefix, time, Number(random >> 40n), Number(random & ((1n << 40n) - 1n)))).toBe(reference(prefix, time, random));
      }),
    );
  });
});
