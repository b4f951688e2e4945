import { describe, expect, it } from 'vitest';
import { Bitset, wordsFor } from './bitset.js';

/** The slots of a set, in order (slots past `limit` are not looked at). */
function slotsOf(set: Bitset, limit = set.words.length * 32): number[] {
  const slots: number[] = [];
  for (let slot = 0; slot < limit; slot++) if (set.has(slot)) slots.push(slot);
  return slots;
}

function setOf(size: number, slots: number[]): Bitset {
  const set = Bitset.empty(size);
  for (const slot of slots) set.add(slot);
  return set;
}

/** The number of slots set, counted one by one. */
const sizeOf = (set: Bitset) => slotsOf(set).length;

describe('Bitset', () => {
  it('has as many 32-bit words as its slots need', () => {
    expect([0, 1, 31, 32, 33, 64, 65].map(wordsFor)).toEqual([0, 1, 1, 1, 2, 2, 3]);
    expect(Bitset.empty(33).words.length).toBe(2);
    expect(Bitset.full(33).words).toEqual(new Uint32Array([0xffffffff, 0xffffffff]));
  });

  it('adds and tests slots at word edges; a slot past its end reads as empty', () => {
    const set = setOf(96, [0, 31, 32, 63, 95]);
    expect(slotsOf(set)).toEqual([0, 31, 32, 63, 95]);
    expect(set.has(1)).toBe(false);
    expect(set.has(96)).toBe(false);
    expect(set.has(10_000)).toBe(false);
    // Bit 31 is the sign bit of an Int32: the words stay unsigned.
    expect(set.words[0]).toBe(0x80000001);
  });

  it('ands sets of different lengths: words past the shorter one are empty', () => {
    const short = setOf(32, [1, 5, 31]);
    const long = setOf(100, [1, 31, 40, 99]);
    for (const result of [short.and(long), long.and(short)]) {
      expect(slotsOf(result)).toEqual([1, 31]);
    }
    // The result is as long as its receiver.
    expect(short.and(long).words.length).toBe(1);
    expect(long.and(short).words.length).toBe(4);
    expect(Bitset.empty(0).and(long).words.length).toBe(0);
  });

  it('ors sets of different lengths: the longer one is kept whole', () => {
    const short = setOf(32, [0, 7]);
    const long = setOf(100, [7, 64, 99]);
    for (const result of [short.or(long), long.or(short)]) {
      expect(slotsOf(result)).toEqual([0, 7, 64, 99]);
      expect(result.words.length).toBe(4);
    }
    expect(slotsOf(Bitset.empty(0).or(short))).toEqual([0, 7]);
  });

  it('nots every word of its own length (the caller ands with a domain for the rest)', () => {
    const set = setOf(40, [0, 33]);
    const complement = set.not();
    expect(complement.words.length).toBe(2);
    expect(complement.has(0)).toBe(false);
    expect(complement.has(33)).toBe(false);
    expect(complement.has(1)).toBe(true);
    expect(complement.has(63)).toBe(true);
    expect(complement.has(64)).toBe(false);
    expect(sizeOf(complement)).toBe(62);
    expect(complement.words[0]).toBe(0xfffffffe);
    expect(slotsOf(complement.not())).toEqual([0, 33]);
  });

  it('makes new sets: the operands are left as they were', () => {
    const a = setOf(64, [1, 40]);
    const b = setOf(64, [2, 40]);
    const before = [Uint32Array.from(a.words), Uint32Array.from(b.words)];
    a.and(b);
    a.or(b);
    a.not();
    a.countAnd(b);
    expect([a.words, b.words]).toEqual(before);
    const full = Bitset.full(64);
    expect(full.and(a).words).not.toBe(a.words);
  });

  it('counts the slots in both sets, across different lengths', () => {
    const a = setOf(200, [0, 31, 32, 100, 150, 199]);
    const b = setOf(101, [0, 31, 100, 101]);
    expect(a.countAnd(b)).toBe(3);
    expect(b.countAnd(a)).toBe(3);
    expect(a.countAnd(Bitset.empty(0))).toBe(0);
    expect(Bitset.empty(0).countAnd(a)).toBe(0);
  });

  it('counts 32 for every all-ones word, and the sign bit alone as one', () => {
    for (const slots of [1, 31, 32, 33, 64, 1000, 4096]) {
      const full = Bitset.full(slots);
      expect(full.countAnd(full), `${slots} slots`).toBe(wordsFor(slots) * 32);
    }
    const sign = setOf(32, [31]);
    expect(sign.countAnd(Bitset.full(32))).toBe(1);
    const alternating = new Bitset(new Uint32Array([0xaaaaaaaa, 0x55555555, 0xf0f0f0f0, 0x0000ffff, 0x80000000]));
    expect(alternating.countAnd(Bitset.full(160))).toBe(16 + 16 + 16 + 16 + 1);
  });

  it('counts as a slot-by-slot count does, for random sets', () => {
    let seed = 12345;
    const random = () => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed / 0x7fffffff;
    };
    for (let round = 0; round < 20; round++) {
      const sizeA = 1 + Math.floor(random() * 300);
      const sizeB = 1 + Math.floor(random() * 300);
      const a = setOf(sizeA, Array.from({ length: sizeA }, (_, slot) => slot).filter(() => random() < 0.5));
      const b = setOf(sizeB, Array.from({ length: sizeB }, (_, slot) => slot).filter(() => random() < 0.3));
      const both = slotsOf(a).filter((slot) => b.has(slot));
      expect(a.countAnd(b)).toBe(both.length);
      expect(slotsOf(a.and(b))).toEqual(both);
      expect(slotsOf(a.or(b))).toEqual([...new Set([...slotsOf(a), ...slotsOf(b)])].sort((x, y) => x - y));
      expect(a.not().countAnd(a)).toBe(0);
      expect(sizeOf(a.not()) + sizeOf(a)).toBe(a.words.length * 32);
    }
  });
});
