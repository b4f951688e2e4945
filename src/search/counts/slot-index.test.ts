import { describe, expect, it } from 'vitest';
import { SlotIndex } from './slot-index.js';

describe('SlotIndex', () => {
  it('hands out slots in order and finds them again by person number, in both directions', () => {
    const index = new SlotIndex();
    for (const personNo of [3, 7, 8, 20]) index.slotFor(personNo);
    expect(index.slots).toBe(4);
    expect([3, 7, 8, 20].map((personNo) => index.get(personNo))).toEqual([0, 1, 2, 3]);
    expect([...index.personNoOf.subarray(0, index.slots)]).toEqual([3, 7, 8, 20]);
    expect(index.get(5)).toBeUndefined();
    expect(index.get(21)).toBeUndefined();
    expect(index.slotFor(8)).toEqual({ slot: 2, added: false });
  });

  it('holds a person numbered below one already held (a commit out of order), and everyone after', () => {
    const index = new SlotIndex();
    for (const personNo of [10, 12, 11, 13, 9]) index.slotFor(personNo);
    expect([10, 12, 11, 13, 9].map((personNo) => index.get(personNo))).toEqual([0, 1, 2, 3, 4]);
    expect(index.get(14)).toBeUndefined();
  });

  it('agrees with a Map over random arrivals, mostly in order', () => {
    let seed = 42;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    const index = new SlotIndex();
    const expected = new Map<number, number>();
    let next = 1;
    for (let step = 0; step < 20_000; step++) {
      // Mostly the next numbers of the sequence; now and then one from earlier, or one seen before.
      const personNo = random() < 0.9 ? (next += 1 + Math.floor(random() * 3)) : 1 + Math.floor(random() * next);
      const { slot, added } = index.slotFor(personNo);
      expect(added).toBe(!expected.has(personNo));
      if (added) expected.set(personNo, slot);
      else expect(slot).toBe(expected.get(personNo));
    }
    expect(index.slots).toBe(expected.size);
    for (let personNo = 0; personNo <= next + 1; personNo++) expect(index.get(personNo)).toBe(expected.get(personNo));
    for (const [personNo, slot] of expected) expect(index.personNoOf[slot]).toBe(personNo);
  });

  it('finds the slots of many person numbers at once (sorted and merged) as one by one, out-of-order ones and unknown ones included', () => {
    const index = new SlotIndex();
    for (let personNo = 10; personNo < 20_010; personNo += 2) index.slotFor(personNo);
    for (const late of [5, 7, 3]) index.slotFor(late);
    // Held evens, unknown odds, the three held late, a number past the end, shuffled; then a few only.
    const asked = [...Array.from({ length: 12_000 }, (_, n) => 3 + n * 3), 5, 7, 20_009, 20_010, 99_999].sort((a, b) => ((a * 7_919) % 10_007) - ((b * 7_919) % 10_007));
    for (const personNos of [asked, asked.slice(0, 50)]) {
      const oneByOne = personNos.flatMap((personNo) => (index.get(personNo) === undefined ? [] : [index.get(personNo)!]));
      const visited: number[] = [];
      index.forEachSlot(personNos, (slot) => visited.push(slot));
      expect(visited.sort((a, b) => a - b)).toEqual(oneByOne.sort((a, b) => a - b));
      expect(visited.length).toBeGreaterThan(0);
    }
    const all: number[] = [];
    index.forEachSlot(asked, (slot) => all.push(slot));
    expect(all).toContain(index.get(3));
    expect(all).toContain(index.get(5));
  });

  it('starts over on clear, leaving a list read before it as it was', () => {
    const index = new SlotIndex();
    index.slotFor(5);
    const before = index.personNoOf;
    index.clear();
    expect(index.slots).toBe(0);
    expect(index.get(5)).toBeUndefined();
    expect(before[0]).toBe(5);
    expect(index.slotFor(2)).toEqual({ slot: 0, added: true });
  });
});
