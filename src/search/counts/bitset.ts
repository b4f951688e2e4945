/**
 * A set of person slots as bits, 32 to a word. Sets of one workspace have as many words as its
 * slots need; a word past another set's end reads as empty. Every operation makes a new set: the
 * operands of one count are shared with nobody else.
 */
export class Bitset {
  constructor(readonly words: Uint32Array) {}

  static empty(slots: number): Bitset {
    return new Bitset(new Uint32Array(wordsFor(slots)));
  }

  static full(slots: number): Bitset {
    const set = Bitset.empty(slots);
    set.words.fill(0xffffffff);
    return set;
  }

  add(slot: number): void {
    this.words[slot >>> 5]! |= 1 << (slot & 31);
  }

  has(slot: number): boolean {
    return ((this.words[slot >>> 5] ?? 0) & (1 << (slot & 31))) !== 0;
  }

  and(other: Bitset): Bitset {
    const words = new Uint32Array(this.words.length);
    const shared = Math.min(this.words.length, other.words.length);
    for (let i = 0; i < shared; i++) words[i] = this.words[i]! & other.words[i]!;
    return new Bitset(words);
  }

  or(other: Bitset): Bitset {
    const longer = this.words.length >= other.words.length ? this : other;
    const shorter = longer === this ? other : this;
    const words = Uint32Array.from(longer.words);
    for (let i = 0; i < shorter.words.length; i++) words[i]! |= shorter.words[i]!;
    return new Bitset(words);
  }

  not(): Bitset {
    const words = new Uint32Array(this.words.length);
    for (let i = 0; i < words.length; i++) words[i] = ~this.words[i]! >>> 0;
    return new Bitset(words);
  }

  /** How many slots are in the set. */
  count(): number {
    let count = 0;
    for (let i = 0; i < this.words.length; i++) count += popcount(this.words[i]!);
    return count;
  }

  /** The slots in the set, ascending. */
  *slots(): Generator<number> {
    for (let i = 0; i < this.words.length; i++) {
      let word = this.words[i]!;
      while (word !== 0) {
        const low = word & -word;
        yield (i << 5) + (31 - Math.clz32(low));
        word = (word ^ low) >>> 0;
      }
    }
  }

  /** How many slots are in both sets. */
  countAnd(other: Bitset): number {
    const shared = Math.min(this.words.length, other.words.length);
    let count = 0;
    for (let i = 0; i < shared; i++) count += popcount(this.words[i]! & other.words[i]!);
    return count;
  }
}

export const wordsFor = (slots: number) => (slots + 31) >>> 5;

function popcount(word: number): number {
  let v = word - ((word >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (((v + (v >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}
