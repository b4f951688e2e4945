import { describe, expect, it } from 'vitest';
import { Bitset } from './counts/bitset.js';
import { forEachSlot, type MemberBitmap, memberBitmap, memberBitmapOfSlots } from './member-bitmap.js';

/** What the walk's SQL reads for a person: get_bit(bytes, least(greatest(n - offset, 0), last)), as JavaScript. */
function reads(bitmap: MemberBitmap, personNo: number): boolean {
  const bit = Math.min(Math.max(personNo - bitmap.offset, 0), bitmap.last);
  return ((bitmap.bytes[bit >> 3]! >> (bit & 7)) & 1) === 1;
}

/** mulberry32: the same draws every run. */
function random(seed: number) {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('member bitmaps', () => {
  it('read every member, and nobody else inside or outside the range', () => {
    const next = random(7);
    for (let round = 0; round < 50; round++) {
      const members = new Set(Array.from({ length: Math.floor(next() * 300) + 1 }, () => 1 + Math.floor(next() * 5000)));
      const bitmap = memberBitmap(Int32Array.from(members));
      for (let personNo = -10; personNo < 5100; personNo++) expect(reads(bitmap, personNo), `round ${round}, ${personNo}`).toBe(members.has(personNo));
    }
  });

  it("built from a count's slots, read as the bitmap of the slots' person numbers, whole words copied or bit by bit", () => {
    const next = random(11);
    for (let round = 0; round < 60; round++) {
      const slots = 1 + Math.floor(next() * 3000);
      // An ordered prefix (increasing, in runs of consecutive numbers with gaps between, as a
      // workspace's people are numbered), then people who committed out of order (see SlotIndex).
      const orderedSlots = round % 3 === 0 ? slots : Math.floor(next() * slots);
      const personNoOf = new Int32Array(slots);
      let personNo = 100 + Math.floor(next() * 70);
      for (let slot = 0; slot < slots; slot++) {
        personNo += slot < orderedSlots ? (next() < 0.03 ? 2 + Math.floor(next() * 50) : 1) : 0;
        personNoOf[slot] = slot < orderedSlots ? personNo : 1 + Math.floor(next() * 20_000);
      }
      const set = Bitset.empty(slots);
      const density = next();
      for (let slot = 0; slot < slots; slot++) if (next() < density) set.add(slot);
      const listed: number[] = [];
      forEachSlot(set.words, (slot) => listed.push(personNoOf[slot]!));
      const members = new Set(listed);
      const fromSlots = memberBitmapOfSlots(set.words, personNoOf, orderedSlots);
      const fromList = memberBitmap(Int32Array.from(listed));
      expect([fromSlots.offset, fromSlots.last], `round ${round}`).toEqual([fromList.offset, fromList.last]);
      for (let number = -5; number < 25_000; number++) {
        if (reads(fromSlots, number) !== members.has(number)) expect(reads(fromSlots, number), `round ${round}, person ${number}`).toBe(members.has(number));
      }
    }
  });

  it('visit the slots of a set in ascending order', () => {
    const set = Bitset.empty(100);
    for (const slot of [0, 31, 32, 63, 64, 99]) set.add(slot);
    const seen: number[] = [];
    forEachSlot(set.words, (slot) => seen.push(slot));
    expect(seen).toEqual([0, 31, 32, 63, 64, 99]);
  });

  it('of nobody reads nobody', () => {
    const bitmap = memberBitmap(new Int32Array(0));
    for (const personNo of [-1, 0, 1, 2, 1000]) expect(reads(bitmap, personNo)).toBe(false);
  });
});
