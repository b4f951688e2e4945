/**
 * A set of person numbers as bits for PostgreSQL's get_bit: bit `n - offset` of `bytes` (bit 0 is
 * the lowest of the first byte) is person n's. Bits 0 and `last` are never set, and a number
 * outside the range is read at one of them (see `memberTest` in run.ts), so every person_no reads
 * a bit.
 */
export interface MemberBitmap {
  bytes: Uint8Array;
  offset: number;
  last: number;
}

/** The bitmap of these person numbers. */
export function memberBitmap(personNos: ArrayLike<number>): MemberBitmap {
  let low = Number.POSITIVE_INFINITY;
  let high = Number.NEGATIVE_INFINITY;
  for (let index = 0; index < personNos.length; index++) {
    const personNo = personNos[index]!;
    if (personNo < low) low = personNo;
    if (personNo > high) high = personNo;
  }
  const bitmap = emptyBitmap(low, high);
  for (let index = 0; index < personNos.length; index++) setMember(bitmap, personNos[index]!);
  return bitmap;
}

/** Whether a Uint32Array's bit n is byte n >> 3's bit n & 7, as get_bit numbers them: on little-endian machines. */
const littleEndian = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/**
 * The bitmap of the person numbers of the slots set in `words` (32 slots a word), read from
 * `personNoOf`, straight from a count's bits. Slots below `orderedSlots` hold increasing numbers
 * (see SlotIndex), so a word of 32 slots whose numbers span 31 holds 32 consecutive numbers, and
 * is copied whole: 347,000 matches at 1,000,000 people took 6 ms bit by bit, most of a page's time.
 */
export function memberBitmapOfSlots(words: Uint32Array, personNoOf: Int32Array, orderedSlots: number): MemberBitmap {
  let low = Number.POSITIVE_INFINITY;
  let high = Number.NEGATIVE_INFINITY;
  const orderedWords = orderedSlots >>> 5;
  // In the ordered words the first and the last slot set are the lowest and highest numbers there.
  for (let index = 0; index < orderedWords; index++) {
    const word = words[index]!;
    if (word === 0) continue;
    low = personNoOf[(index << 5) + (31 - Math.clz32(word & -word))]!;
    break;
  }
  for (let index = Math.min(orderedWords, words.length) - 1; index >= 0; index--) {
    const word = words[index]!;
    if (word === 0) continue;
    high = personNoOf[(index << 5) + (31 - Math.clz32(word))]!;
    break;
  }
  for (let index = orderedWords; index < words.length; index++) {
    let word = words[index]!;
    while (word !== 0) {
      const lowest = word & -word;
      const personNo = personNoOf[(index << 5) + (31 - Math.clz32(lowest))]!;
      if (personNo < low) low = personNo;
      if (personNo > high) high = personNo;
      word = (word ^ lowest) >>> 0;
    }
  }
  const bitmap = emptyBitmap(low, high, 4);
  const bits = new Uint32Array(bitmap.bytes.buffer, bitmap.bytes.byteOffset, bitmap.bytes.byteLength >>> 2);
  for (let index = 0; index < words.length; index++) {
    let word = words[index]!;
    if (word === 0) continue;
    const first = index << 5;
    if (littleEndian && index < orderedWords && personNoOf[first + 31]! - personNoOf[first]! === 31) {
      // From the word's lowest member on: the numbers below it may lie below the bitmap.
      const skipped = 31 - Math.clz32(word & -word);
      const members = word >>> skipped;
      const at = personNoOf[first + skipped]! - bitmap.offset;
      const shift = at & 31;
      bits[at >>> 5]! |= members << shift;
      if (shift !== 0) bits[(at >>> 5) + 1]! |= members >>> (32 - shift);
      continue;
    }
    while (word !== 0) {
      const lowest = word & -word;
      setMember(bitmap, personNoOf[first + (31 - Math.clz32(lowest))]!);
      word = (word ^ lowest) >>> 0;
    }
  }
  return bitmap;
}

/** Room for bits 0 to `last`, in whole groups of `align` bytes and one group more (a word copied at an odd bit spills into the next). */
function emptyBitmap(low: number, high: number, align = 1): MemberBitmap {
  if (low > high) return { bytes: new Uint8Array(align * 2), offset: 0, last: 1 };
  const offset = low - 1;
  const last = high - offset + 1;
  const groups = Math.floor((last >> 3) / align) + 2;
  return { bytes: new Uint8Array(groups * align), offset, last };
}

function setMember(bitmap: MemberBitmap, personNo: number): void {
  const bit = personNo - bitmap.offset;
  bitmap.bytes[bit >> 3]! |= 1 << (bit & 7);
}

/** Calls `visit` with each slot set in `words`, ascending. */
export function forEachSlot(words: Uint32Array, visit: (slot: number) => void): void {
  for (let index = 0; index < words.length; index++) {
    let word = words[index]!;
    while (word !== 0) {
      const low = word & -word;
      visit((index << 5) + (31 - Math.clz32(low)));
      word = (word ^ low) >>> 0;
    }
  }
}
