import { type RawBuilder, sql } from 'kysely';
import type { ValueType } from '../catalogue.js';
import { EARTH_RADIUS_KM } from '../compile.js';
import { Bitset, wordsFor } from './bitset.js';

/** Past this many distinct values a codes column keeps no bitset per value (names, free text): its tests scan. */
const MAX_VALUE_BITSETS = 512;
/** The earth's radius as compile.ts's WITHIN_KM uses it. */
const EARTH_RADIUS = EARTH_RADIUS_KM;
/**
 * Distances within this of a WITHIN_KM bound are decided by SQL: libm's and V8's sin, cos and
 * asin differ by an ulp or so, which asin amplifies near antipodes to about 1e-4 km.
 */
const DOUBT_KM = 0.001;

/** A range of doubles: every comparison of numbers and instants in the filter language is one. */
export interface Range {
  low: number;
  lowInclusive: boolean;
  high: number;
  highInclusive: boolean;
}

export const inRange = (range: Range) => (value: number) =>
  (range.lowInclusive ? value >= range.low : value > range.low) && (range.highInclusive ? value <= range.high : value < range.high);

/**
 * How the counts hold one name's values, one per position (a person slot, or a row of a study's
 * participants), each read from the database with the very expression the SQL search compares:
 * - codes: text, enum and single-select values as numbers of a dictionary (0 is no value);
 * - number: doubles, exact for stored numbers of at most 15 significant digits (see decodeNumber);
 * - micros: date-times as microseconds since the epoch, exact (PostgreSQL's own precision);
 * - boolean: -1 none, 0 false, 1 true;
 * - multi: one bitset per option of a multi-select, and whether the value is a non-empty array;
 * - instants: a list of instants per position (microseconds), counted within a window at search time;
 * - haystack: lowered texts of many distinct values (emails), as UTF-8 in one buffer, each after a
 *   NUL (which no PostgreSQL text holds), searched for substrings without a dictionary of strings;
 * - location: a location's lat and lng as doubles (NaN when either is not a number).
 */
export type ColumnKind = 'codes' | 'number' | 'micros' | 'boolean' | 'multi' | 'instants' | 'haystack' | 'location';

/** The column kind a value type is counted with; email (compared lowered) and the rest are not. */
export function columnKindOf(type: ValueType): ColumnKind | undefined {
  switch (type) {
    case 'text':
    case 'enum':
    case 'select':
      return 'codes';
    case 'number':
      return 'number';
    case 'datetime':
      return 'micros';
    case 'boolean':
      return 'boolean';
    case 'multiselect':
      return 'multi';
    default:
      return undefined;
  }
}

/** The expression a column's values are read with: text where JavaScript would lose precision. */
export function readExpression(kind: ColumnKind, value: RawBuilder<unknown>): RawBuilder<unknown> {
  switch (kind) {
    case 'codes':
    case 'number':
    case 'multi':
    case 'instants':
    case 'haystack':
    case 'location':
      return sql`cast(${value} as text)`;
    case 'micros':
      return sql`cast(extract(epoch from ${value}) * 1000000 as text)`;
    case 'boolean':
      return value;
  }
}

/**
 * A text's first six bytes as one number, missing bytes as 0: texts with different numbers order
 * as the numbers do (no text holds a NUL, so a shorter text is less than a longer one it begins);
 * equal numbers leave the rest of the bytes to decide.
 */
export function textPrefixOf(bytes: Buffer): number {
  let prefix = 0;
  for (let index = 0; index < 6; index++) prefix = prefix * 256 + (bytes[index] ?? 0);
  return prefix;
}

/** At most 15 significant digits: distinct such decimals are distinct doubles, in the same order. */
const EXACT_DECIMAL = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
function significantDigits(text: string): number {
  const mantissa = text.replace(/^-/, '').replace(/[eE].*$/, '').replace('.', '').replace(/^0+/, '');
  return mantissa.replace(/0+$/, '').length;
}

/**
 * One name's values by position, growing as positions are added. `exact` turns false for good when
 * a value cannot be compared exactly here (a number of more than 15 significant digits, an instant
 * beyond 2^53 microseconds): counts naming this column then go to SQL until the next rebuild.
 */
export class Column {
  exact = true;
  /** Texts: whether the database orders them as their UTF-8 bytes (a C collation), so that a sort by them can be bounded here. */
  bytewiseOrder = false;
  /**
   * Codes by position (0: no value), as narrow as the dictionary allows: a byte each up to 255
   * values, two up to 65,535, then four. A select column of a million people holds 1 MB, not 4.
   */
  private codes: Uint8Array | Uint16Array | Int32Array = new Uint8Array(0);
  private values = new Float64Array(0);
  private flags = new Int8Array(0);
  private nonEmpty = new Uint32Array(0);
  private options = new Map<number, Uint32Array>();
  /**
   * Codes and booleans: a bitset of the positions holding each value, so that IS_ANY_OF or IS_TRUE
   * over a million people is word-wide ORs instead of a million tests. Dropped past
   * MAX_VALUE_BITSETS values.
   */
  private valueBits: Map<number, Uint32Array> | undefined = new Map();
  /**
   * Instants: position p's list is instantPool[instantStart[p] .. + instantCount[p]]. A changed
   * list is appended and the old space left behind, until compaction when half the pool is waste.
   */
  private instantStart = new Int32Array(0);
  private instantCount = new Int32Array(0);
  private instantPool = new Float64Array(0);
  private instantEnd = 0;
  private instantWaste = 0;
  /**
   * latest[k][p]: position p's (k+1)-th latest instant (-Infinity when it has fewer), and the
   * largest instant ever held. While no instant lies after a window's end, "at least k within the
   * window" is "the k-th latest at or after its start": a count compared with a small number is one
   * branchless pass over one or two of these arrays instead of a walk of every list (a million
   * people: ~11 ms, with a mispredicted branch or two per person).
   */
  private readonly latest: Float64Array[] = [];
  private latestMax = Number.NEGATIVE_INFINITY;
  /**
   * Haystack: segment s is hayBytes[segmentStart[s] .. segmentStart[s + 1]), a NUL and the text,
   * held for position segmentPosition[s] (-1 once replaced); haySegment[p] is p's segment (-1: no
   * value). Segments are appended in order, so a byte offset finds its segment by binary search;
   * replaced ones are dropped by compaction when half the bytes are waste.
   */
  private hayBytes = Buffer.alloc(0);
  private hayEnd = 0;
  private hayWaste = 0;
  private haySegment = new Int32Array(0);
  private segmentStart = new Int32Array(0);
  private segmentPosition = new Int32Array(0);
  private segments = 0;
  /**
   * Each position's text prefix (textPrefixOf: its first six bytes as one number; NaN: no text),
   * made on the first sort bounded by this haystack and kept with every text set. A bound reads
   * one per match, in position order: from here that is one read in an array walked forward, from
   * the haystack three scattered ones (segment, start, bytes): 5.6 ms of a 1000-row page of
   * 15,500 emails at a million people, under 8 concurrent searches.
   */
  private prefixes: Float64Array | undefined;
  /**
   * A haystack's latest substring results (needle, with a leading NUL for a prefix) by position,
   * most recently used last; each is updated with every value set, so it stays what a scan of the
   * haystack would find. A needle searched again (the next page, another search of the same text)
   * costs a copy instead of a scan (a million emails: ~12 ms).
   */
  private readonly remembered = new Map<string, Uint32Array>();
  private latitudes = new Float64Array(0);
  private longitudes = new Float64Array(0);
  private words = 0;
  readonly dictionary = new Map<string, number>();

  constructor(readonly kind: ColumnKind) {}

  /** Room for `positions` values; new positions read as no value. */
  grow(positions: number): void {
    const words = wordsFor(positions);
    if (this.valueBits && words > this.words) {
      for (const [value, bits] of this.valueBits) if (bits.length < words) this.valueBits.set(value, enlarge(bits, words, 0));
    }
    for (const [pattern, bits] of this.remembered) if (bits.length < words) this.remembered.set(pattern, enlarge(bits, words, 0));
    this.words = Math.max(this.words, words);
    switch (this.kind) {
      case 'codes':
        if (this.codes.length < positions) this.codes = enlarge(this.codes, positions, 0);
        return;
      case 'number':
      case 'micros':
        if (this.values.length < positions) this.values = enlarge(this.values, positions, Number.NaN);
        return;
      case 'boolean':
        if (this.flags.length < positions) this.flags = enlarge(this.flags, positions, -1);
        return;
      case 'instants':
        if (this.instantCount.length < positions) {
          this.instantStart = enlarge(this.instantStart, positions, 0);
          this.instantCount = enlarge(this.instantCount, positions, 0);
          for (let k = 0; k < LATEST_HELD; k++) this.latest[k] = enlarge(this.latest[k] ?? new Float64Array(0), positions, Number.NEGATIVE_INFINITY);
        }
        return;
      case 'haystack':
        if (this.haySegment.length < positions) {
          this.haySegment = enlarge(this.haySegment, positions, -1);
          if (this.prefixes) this.prefixes = enlarge(this.prefixes, this.haySegment.length, Number.NaN);
        }
        return;
      case 'location':
        if (this.latitudes.length < positions) {
          this.latitudes = enlarge(this.latitudes, positions, Number.NaN);
          this.longitudes = enlarge(this.longitudes, positions, Number.NaN);
        }
        return;
      case 'multi': {
        const words = wordsFor(positions);
        if (this.nonEmpty.length < words) {
          this.nonEmpty = enlarge(this.nonEmpty, words, 0);
          for (const [code, bits] of this.options) this.options.set(code, enlarge(bits, words, 0));
        }
      }
    }
  }

  /** A number's or a date-time's (microseconds) value at a position: NaN when it holds none. */
  numberAt(position: number): number {
    return this.values[position] ?? Number.NaN;
  }

  /** Every position's number or date-time (NaN: none), for a tight loop over many (index.ts, boundedPersonNos); positions past its end hold none. */
  get numbers(): Float64Array {
    return this.values;
  }

  /** Stores the value read by readExpression at a position (null: no value). */
  set(position: number, raw: unknown): void {
    switch (this.kind) {
      case 'codes': {
        const code = raw === null ? 0 : this.codeOf(String(raw));
        this.moveValueBit(position, this.codes[position]!, code, 0);
        this.codes[position] = code;
        return;
      }
      case 'number':
        this.values[position] = raw === null ? Number.NaN : this.decodeNumber(String(raw));
        return;
      case 'micros':
        this.values[position] = raw === null ? Number.NaN : this.decodeMicros(String(raw));
        return;
      case 'boolean': {
        const flag = raw === null ? -1 : raw === true || raw === 't' || raw === 'true' ? 1 : 0;
        this.moveValueBit(position, this.flags[position]!, flag, -1);
        this.flags[position] = flag;
        return;
      }
      case 'multi':
        this.setOptions(position, raw === null ? undefined : (JSON.parse(String(raw)) as unknown));
        return;
      case 'instants':
        this.setInstants(position, raw === null ? [] : (JSON.parse(String(raw)) as string[]));
        return;
      case 'haystack':
        this.setText(position, raw === null ? undefined : String(raw));
        return;
      case 'location':
        this.setLocation(position, raw === null ? undefined : String(raw));
    }
  }

  private setText(position: number, text: string | undefined): void {
    const replaced = this.haySegment[position]!;
    if (replaced >= 0) {
      this.segmentPosition[replaced] = -1;
      this.hayWaste += this.segmentEnd(replaced) - this.segmentStart[replaced]!;
      this.haySegment[position] = -1;
    }
    for (const [pattern, bits] of this.remembered) {
      // The patterns are ASCII without NUL (plan.ts): a byte match in UTF-8 is includes() on the text.
      const holds = text !== undefined && (pattern.startsWith('\0') ? text.startsWith(pattern.slice(1)) : text.includes(pattern));
      if (holds) bits[position >>> 5]! |= 1 << (position & 31);
      else bits[position >>> 5]! &= ~(1 << (position & 31));
    }
    if (text === undefined) {
      if (this.prefixes) this.prefixes[position] = Number.NaN;
      return;
    }
    const length = Buffer.byteLength(text, 'utf8') + 1;
    if (this.hayEnd + length > this.hayBytes.length || this.segments === this.segmentStart.length) this.compactHay(length);
    this.hayBytes[this.hayEnd] = 0;
    this.hayBytes.write(text, this.hayEnd + 1, 'utf8');
    this.segmentStart[this.segments] = this.hayEnd;
    this.segmentPosition[this.segments] = position;
    this.haySegment[position] = this.segments;
    this.segments++;
    this.hayEnd += length;
    // Once the segment ends where it does: a prefix reads up to its end.
    if (this.prefixes) this.prefixes[position] = this.textPrefix(this.segments - 1);
  }

  /** Whether a haystack holds a text at a position. */
  hasText(position: number): boolean {
    return (this.haySegment[position] ?? -1) >= 0;
  }

  /**
   * The texts at two positions (both held) compared as bytes, in place: negative, zero or
   * positive. Their first six bytes, read as one number, decide nearly every comparison without a
   * call into Buffer.compare (whose checks cost some 0.3 µs a call).
   */
  compareTexts(a: number, b: number): number {
    const prefixes = this.textPrefixAt(a) - this.textPrefixAt(b);
    if (prefixes !== 0) return prefixes;
    const segmentA = this.haySegment[a]!;
    const segmentB = this.haySegment[b]!;
    return this.hayBytes.compare(this.hayBytes, this.segmentStart[segmentB]! + 1, this.segmentEnd(segmentB), this.segmentStart[segmentA]! + 1, this.segmentEnd(segmentA));
  }

  /** The text at a position (held) compared with `bytes` as bytes, in place; `prefix` is textPrefixOf(bytes). */
  compareTextWith(position: number, bytes: Buffer, prefix: number): number {
    const prefixes = this.textPrefixAt(position) - prefix;
    if (prefixes !== 0) return prefixes;
    const segment = this.haySegment[position]!;
    return this.hayBytes.compare(bytes, 0, bytes.length, this.segmentStart[segment]! + 1, this.segmentEnd(segment));
  }

  /** The first six bytes of the text at a position as one number (see textPrefixOf); NaN when it holds none. */
  textPrefixAt(position: number): number {
    return (this.prefixes ?? this.holdPrefixes())[position] ?? Number.NaN;
  }

  private holdPrefixes(): Float64Array {
    const prefixes = new Float64Array(this.haySegment.length);
    for (let position = 0; position < prefixes.length; position++) {
      const segment = this.haySegment[position]!;
      prefixes[position] = segment < 0 ? Number.NaN : this.textPrefix(segment);
    }
    return (this.prefixes = prefixes);
  }

  /** A segment's first six bytes as one number (see textPrefixOf). */
  private textPrefix(segment: number): number {
    const start = this.segmentStart[segment]! + 1;
    const end = this.segmentEnd(segment);
    let prefix = 0;
    for (let index = start; index < start + 6; index++) prefix = prefix * 256 + (index < end ? this.hayBytes[index]! : 0);
    return prefix;
  }

  private segmentEnd(segment: number): number {
    return segment + 1 < this.segments ? this.segmentStart[segment + 1]! : this.hayEnd;
  }

  /** Copies the live segments, in order, into room for `more` bytes and one more segment. */
  private compactHay(more: number): void {
    let liveSegments = 0;
    for (let segment = 0; segment < this.segments; segment++) if (this.segmentPosition[segment]! >= 0) liveSegments++;
    const bytes = Buffer.alloc(Math.max(65_536, Math.ceil((this.hayEnd - this.hayWaste + more) * 1.5)));
    const starts = new Int32Array(Math.max(64, Math.ceil((liveSegments + 1) * 1.5)));
    const owners = new Int32Array(starts.length);
    let end = 0;
    let next = 0;
    for (let segment = 0; segment < this.segments; segment++) {
      const position = this.segmentPosition[segment]!;
      if (position < 0) continue;
      const start = this.segmentStart[segment]!;
      const length = this.segmentEnd(segment) - start;
      this.hayBytes.copy(bytes, end, start, start + length);
      starts[next] = end;
      owners[next] = position;
      this.haySegment[position] = next;
      next++;
      end += length;
    }
    this.hayBytes = bytes;
    this.segmentStart = starts;
    this.segmentPosition = owners;
    this.segments = next;
    this.hayEnd = end;
    this.hayWaste = 0;
  }

  /** The segment a byte offset lies in: the last one starting at or before it. */
  private segmentAt(offset: number): number {
    let low = 0;
    let high = this.segments - 1;
    while (low < high) {
      const middle = (low + high + 1) >>> 1;
      if (this.segmentStart[middle]! <= offset) low = middle;
      else high = middle - 1;
    }
    return low;
  }

  /**
   * The positions whose text holds `needle` (or starts with it), by searching the one buffer: a
   * match cannot straddle two texts, since the needle holds no NUL and every text starts after one.
   * An empty needle matches every text, as LIKE '%' does every value that is not null.
   */
  substringBitset(needle: string, prefix: boolean, positions: number): Bitset {
    const bits = Bitset.empty(positions);
    const owned = Math.min(positions, this.haySegment.length);
    if (needle === '') {
      for (let position = 0; position < owned; position++) if (this.haySegment[position]! >= 0) bits.add(position);
      return bits;
    }
    const key = prefix ? `\0${needle}` : needle;
    let found = this.remembered.get(key);
    if (found) this.remembered.delete(key);
    else {
      found = new Uint32Array(this.words);
      const pattern = Buffer.from(key, 'utf8');
      const hay = this.hayBytes.subarray(0, this.hayEnd);
      for (let from = 0; ; ) {
        const at = hay.indexOf(pattern, from);
        if (at < 0) break;
        const segment = this.segmentAt(at);
        const position = this.segmentPosition[segment]!;
        if (position >= 0) found[position >>> 5]! |= 1 << (position & 31);
        from = this.segmentEnd(segment);
      }
      if (this.remembered.size >= REMEMBERED_NEEDLES) this.remembered.delete(this.remembered.keys().next().value!);
    }
    this.remembered.set(key, found);
    const end = Math.min(bits.words.length, found.length);
    bits.words.set(found.subarray(0, end));
    // Positions at or past `positions` are not asked for.
    if (positions < end << 5) {
      for (let position = positions; position < end << 5; position++) bits.words[position >>> 5]! &= ~(1 << (position & 31));
    }
    return bits;
  }

  private setLocation(position: number, text: string | undefined): void {
    const [lat, lng] = text === undefined ? [] : text.split(' ').map(Number);
    const known = lat !== undefined && lng !== undefined && Number.isFinite(lat) && Number.isFinite(lng);
    this.latitudes[position] = known ? lat : Number.NaN;
    this.longitudes[position] = known ? lng : Number.NaN;
  }

  /**
   * WITHIN_KM as compile.ts writes it (haversine over PostgreSQL's float8), split in two: the
   * positions certainly within `km`, and those whose distance lies so near `km` (DOUBT_KM) that
   * JavaScript's sin/cos/asin and the database's could round to different sides: SQL decides those.
   * A latitude difference alone bounds the distance from below, which skips most positions cheaply.
   */
  withinKm(lat: number, lng: number, km: number, slots: Int32Array | undefined, positions: number): { certain: Bitset; doubtful: Bitset } {
    const certain = Bitset.empty(positions);
    const doubtful = Bitset.empty(positions);
    const radians = (degrees: number) => degrees * (Math.PI / 180);
    const cosLat = Math.cos(radians(lat));
    const latitudeReach = ((km + DOUBT_KM) / EARTH_RADIUS) * (180 / Math.PI) * (1 + 1e-9);
    const latitudes = this.latitudes;
    const longitudes = this.longitudes;
    const visit = (position: number) => {
      const other = latitudes[position]!;
      // NaN (no location) fails this test too.
      if (!(Math.abs(other - lat) <= latitudeReach)) return;
      const a = Math.sin(radians(other - lat) / 2) ** 2 + cosLat * Math.cos(radians(other)) * Math.sin(radians(longitudes[position]! - lng) / 2) ** 2;
      const distance = 2 * EARTH_RADIUS * Math.asin(Math.min(1, Math.sqrt(a)));
      if (Math.abs(distance - km) <= DOUBT_KM) doubtful.add(position);
      else if (distance <= km) certain.add(position);
    };
    const held = Math.min(positions, latitudes.length);

    if (slots) {
      for (let index = 0; index < slots.length; index++) if (slots[index]! < held) visit(slots[index]!);
    } else {
      for (let position = 0; position < held; position++) visit(position);
    }
    return { certain, doubtful };
  }

  private setInstants(position: number, texts: readonly string[]): void {
    this.instantWaste += this.instantCount[position]!;
    if (this.instantEnd + texts.length > this.instantPool.length) this.compactInstants(texts.length);
    const start = this.instantEnd;
    texts.forEach((text, index) => (this.instantPool[start + index] = this.decodeMicros(text)));
    for (let k = 0; k < LATEST_HELD; k++) this.latest[k]![position] = Number.NEGATIVE_INFINITY;
    for (let index = start; index < start + texts.length; index++) {
      // Insertion into the position's few latest, newest first.
      let instant = this.instantPool[index]!;
      if (instant > this.latestMax) this.latestMax = instant;
      for (let k = 0; k < LATEST_HELD; k++) {
        const kth = this.latest[k]!;
        if (instant > kth[position]!) [instant, kth[position]] = [kth[position]!, instant];
      }
    }
    this.instantStart[position] = start;
    this.instantCount[position] = texts.length;
    this.instantEnd += texts.length;
  }

  /** Copies the live lists into a pool with room for `more`, dropping the space of replaced ones. */
  private compactInstants(more: number): void {
    const live = this.instantEnd - this.instantWaste;
    const pool = new Float64Array(Math.max(64, Math.ceil((live + more) * 1.5)));
    let end = 0;
    for (let position = 0; position < this.instantCount.length; position++) {
      const count = this.instantCount[position]!;
      if (count === 0) continue;
      pool.set(this.instantPool.subarray(this.instantStart[position]!, this.instantStart[position]! + count), end);
      this.instantStart[position] = end;
      end += count;
    }
    this.instantPool = pool;
    this.instantEnd = end;
    this.instantWaste = 0;
  }

  /** How many of a position's instants lie within [low, high], both included. */
  private instantsWithin(position: number, low: number, high: number): number {
    const start = this.instantStart[position]!;
    const end = start + this.instantCount[position]!;
    let count = 0;
    for (let index = start; index < end; index++) {
      const instant = this.instantPool[index]!;
      if (instant >= low && instant <= high) count++;
    }
    return count;
  }

  /**
   * The positions whose number of instants within [low, high] lies in `range`, in one tight pass
   * (a count is a whole number: the range becomes whole bounds).
   */
  windowCountBitset(low: number, high: number, range: Range, positions: number): Bitset {
    const bits = Bitset.empty(positions);
    const words = bits.words;
    const fewest = range.lowInclusive ? Math.ceil(range.low) : Math.floor(range.low) + 1;
    const most = range.highInclusive ? Math.floor(range.high) : Math.ceil(range.high) - 1;
    const zero = fewest <= 0 && 0 <= most;
    if (high >= this.latestMax) {
      const byLatest = this.windowCountByLatest(low, fewest, most, positions);
      if (byLatest) return byLatest;
    }
    const counts = this.instantCount;
    const starts = this.instantStart;
    const pool = this.instantPool;
    const held = Math.min(positions, counts.length);
    for (let position = 0; position < held; position++) {
      const count = counts[position]!;
      // Whatever share of the list lies in the window, the count is between 0 and the list's length.
      let matches = zero;
      if (count < fewest) matches = false;
      else if (fewest <= 0 && count <= most) matches = true;
      else if (count !== 0) {
        const start = starts[position]!;
        let within = 0;
        // Without a branch per instant (see rangeBitset).
        for (let index = start; index < start + count; index++) {
          const instant = pool[index]!;
          within += +(instant >= low) & +(instant <= high);
        }
        matches = within >= fewest && within <= most;
      }
      words[position >>> 5]! |= +matches << (position & 31);
    }
    if (zero) for (let position = held; position < positions; position++) words[position >>> 5]! |= 1 << (position & 31);
    return bits;
  }

  /**
   * windowCountBitset when no instant lies after the window's end: at least k within it is the
   * k-th latest at or after `low`. Undefined when a bound needs more than the latest held.
   */
  private windowCountByLatest(low: number, fewest: number, most: number, positions: number): Bitset | undefined {
    const bits = Bitset.empty(positions);
    if (most < fewest || most < 0) return bits;
    const needsFewest = fewest > 0;
    const needsMost = Number.isFinite(most);
    if ((needsFewest && fewest > LATEST_HELD) || (needsMost && most + 1 > LATEST_HELD)) return undefined;
    const held = Math.min(positions, this.instantCount.length);
    // The k-th latest of a position with fewer than k instants is -Infinity: never at or after `low`.
    const below = nextDown(low);
    if (needsFewest) passWithin(this.latest[fewest - 1]!, held, low, Number.POSITIVE_INFINITY, bits.words);
    if (needsMost) {
      const fewerThanMost = Bitset.empty(positions);
      passWithin(this.latest[most]!, held, Number.NEGATIVE_INFINITY, below, fewerThanMost.words);
      if (!needsFewest) return fillFrom(fewerThanMost, held, positions);
      return bits.and(fewerThanMost);
    }
    // Positions beyond the held ones have no instants: a count of 0, within the range when fewest <= 0.
    return needsFewest ? bits : fillFrom(bits, 0, positions);
  }

  private moveValueBit(position: number, before: number, after: number, none: number): void {
    if (!this.valueBits || before === after) return;
    const word = position >>> 5;
    const bit = 1 << (position & 31);
    if (before !== none) this.valueBits.get(before)![word]! &= ~bit;
    if (after === none) return;
    let bits = this.valueBits.get(after);
    if (!bits) {
      if (this.valueBits.size >= MAX_VALUE_BITSETS) {
        this.valueBits = undefined;
        return;
      }
      bits = new Uint32Array(this.words);
      this.valueBits.set(after, bits);
    }
    bits[word]! |= bit;
  }

  /** The positions holding any of these codes (or flags), word-wide; undefined when this column keeps no value bitsets. */
  valuesBitset(values: Iterable<number>): Bitset | undefined {
    if (!this.valueBits) return undefined;
    const words = new Uint32Array(this.words);
    for (const value of values) {
      const bits = this.valueBits.get(value);
      if (bits) for (let i = 0; i < bits.length; i++) words[i]! |= bits[i]!;
    }
    return new Bitset(words);
  }

  /**
   * The positions holding any of these codes, in one tight pass over the codes: for a column that
   * keeps no value bitsets (more than MAX_VALUE_BITSETS values), or a set of codes too large to OR.
   */
  codesBitset(codes: ReadonlySet<number>, positions: number): Bitset {
    const accepted = new Uint8Array(this.dictionary.size + 1);
    for (const code of codes) accepted[code] = 1;
    const bits = Bitset.empty(positions);
    const values = this.codes;
    const end = Math.min(positions, values.length);
    const words = bits.words;
    // A word at a time, without a branch per value (see rangeBitset).
    const whole = end >>> 5;
    for (let index = 0; index < whole; index++) {
      const first = index << 5;
      let word = 0;
      for (let bit = 0; bit < 32; bit++) word |= accepted[values[first + bit]!]! << bit;
      words[index] = word;
    }
    for (let position = whole << 5; position < end; position++) words[position >>> 5]! |= accepted[values[position]!]! << (position & 31);
    return bits;
  }

  /** The codes of the dictionary's values that `accepts` takes. */
  codesWhere(accepts: (value: string) => boolean): Set<number> {
    const codes = new Set<number>();
    for (const [value, code] of this.dictionary) if (accepts(value)) codes.add(code);
    return codes;
  }

  /** The positions whose multi-select holds any (or all) of these options, word-wide. */
  optionsBitset(names: readonly string[], all: boolean): Bitset {
    const sets = names.map((name) => this.options.get(this.dictionary.get(name) ?? -1));
    const words = new Uint32Array(this.nonEmpty.length);
    if (all && (sets.length === 0 || sets.some((bits) => bits === undefined))) return new Bitset(words);
    const present = sets.filter((bits): bits is Uint32Array => bits !== undefined);
    if (all) words.set(present[0]!);
    for (const bits of all ? present.slice(1) : present) {
      for (let i = 0; i < words.length; i++) words[i] = all ? words[i]! & bits[i]! : words[i]! | bits[i]!;
    }
    return new Bitset(words);
  }

  /**
   * The positions whose number or instant lies in the range, in one tight pass over the values,
   * a word of 32 at a time and without branches: a value's test is as likely to pass as to fail,
   * and a branch per value took three times as long (1,000,000 values: 5.5 ms against 1.8).
   * NaN (no value) fails every comparison.
   */
  rangeBitset(range: Range, positions: number): Bitset {
    const bits = Bitset.empty(positions);
    const words = bits.words;
    const values = this.values;
    const end = Math.min(positions, values.length);
    const { low, high } = closedBounds(range);
    passWithin(values, end, low, high, words);
    return bits;
  }

  private codeOf(text: string): number {
    let code = this.dictionary.get(text);
    if (code === undefined) {
      code = this.dictionary.size + 1;
      this.dictionary.set(text, code);
      if (code === 256) this.codes = Uint16Array.from(this.codes);
      else if (code === 65_536) this.codes = Int32Array.from(this.codes);
    }
    return code;
  }

  private decodeNumber(text: string): number {
    const value = Number(text);
    const underflows = value === 0 ? /[1-9]/.test(text) : Math.abs(value) < 1e-300;
    if (!EXACT_DECIMAL.test(text) || !Number.isFinite(value) || underflows || significantDigits(text) > 15) this.exact = false;
    return value;
  }

  private decodeMicros(text: string): number {
    const value = Number(text);
    // Infinite instants compare as infinities do; finite ones must be whole microseconds a double holds exactly.
    if (Number.isNaN(value) || (Number.isFinite(value) && !Number.isSafeInteger(value))) this.exact = false;
    return value;
  }

  private setOptions(position: number, value: unknown): void {
    const word = position >>> 5;
    const bit = 1 << (position & 31);
    for (const bits of this.options.values()) bits[word]! &= ~bit;
    this.nonEmpty[word]! &= ~bit;
    if (!Array.isArray(value) || value.length === 0) return;
    this.nonEmpty[word]! |= bit;
    for (const item of value) {
      // jsonb's ?| and ?& match an array's string elements only.
      if (typeof item !== 'string') continue;
      const code = this.codeOf(item);
      let bits = this.options.get(code);
      if (!bits) {
        bits = new Uint32Array(this.nonEmpty.length);
        this.options.set(code, bits);
      }
      bits[word]! |= bit;
    }
  }

  /** Tests of one position, for the leaves of a count (src/search/counts/plan.ts). */
  readonly test = {
    // A table by code, not a Set: a study's 100,000 participants are tested one by one, and
    // Set.has made up most of E1's count.
    code: (codes: ReadonlySet<number>) => {
      const accepted = codeTable(codes);
      return (position: number) => accepted[this.codes[position]!] === 1;
    },
    empty: (emptyCodes: ReadonlySet<number>) => {
      const accepted = codeTable([0, ...emptyCodes]);
      return (position: number) => accepted[this.codes[position]!] === 1;
    },
    value: (accepts: (value: number) => boolean) => (position: number) => {
      const value = this.values[position]!;
      return !Number.isNaN(value) && accepts(value);
    },
    none: () => (position: number) => Number.isNaN(this.values[position]!),
    windowCount: (low: number, high: number, range: Range) => {
      const accepts = inRange(range);
      return (position: number) => accepts(position < this.instantCount.length ? this.instantsWithin(position, low, high) : 0);
    },
    flag: (wanted: -1 | 0 | 1) => (position: number) => this.flags[position] === wanted,
    substring: (needle: string, prefix: boolean) => {
      const bits = this.substringBitset(needle, prefix, this.haySegment.length);
      return (position: number) => bits.has(position);
    },
    noOptions: () => (position: number) => (this.nonEmpty[position >>> 5]! & (1 << (position & 31))) === 0,
    options: (names: readonly string[], all: boolean) => {
      const sets = names.map((name) => this.options.get(this.dictionary.get(name) ?? -1));
      if (all && sets.some((bits) => bits === undefined)) return () => false;
      const present = sets.filter((bits): bits is Uint32Array => bits !== undefined);
      return (position: number) => {
        const word = position >>> 5;
        const bit = 1 << (position & 31);
        return all ? present.every((bits) => (bits[word]! & bit) !== 0) : present.some((bits) => (bits[word]! & bit) !== 0);
      };
    },
  };
}

function enlarge<T extends Uint8Array | Uint16Array | Int32Array | Float64Array | Int8Array | Uint32Array>(array: T, atLeast: number, fill: number): T {
  const capacity = Math.max(atLeast, Math.ceil(array.length * 1.5), 64);
  const larger = new (array.constructor as new (length: number) => T)(capacity);
  larger.set(array);
  larger.fill(fill, array.length);
  return larger;
}

/** 1 at each of `codes`, 0 elsewhere; a code past its end reads undefined, so not accepted. */
function codeTable(codes: Iterable<number>): Uint8Array {
  let highest = 0;
  for (const code of codes) if (code > highest) highest = code;
  const table = new Uint8Array(highest + 1);
  for (const code of codes) if (code >= 0) table[code] = 1;
  return table;
}

/**
 * A range's bounds as closed ones over doubles: x > a exactly when x >= the next double above a
 * (NaN, no value, fails both), so one loop of closed comparisons answers every kind of bounds.
 */
function closedBounds(range: Range): { low: number; high: number } {
  return { low: range.lowInclusive ? range.low : nextUp(range.low), high: range.highInclusive ? range.high : nextDown(range.high) };
}

const doubleView = new DataView(new ArrayBuffer(8));

/** The least double above `value` (Infinity and NaN stay themselves). */
function nextUp(value: number): number {
  if (Number.isNaN(value) || value === Number.POSITIVE_INFINITY) return value;
  if (value === 0) return Number.MIN_VALUE;
  doubleView.setFloat64(0, value);
  // Sign and magnitude: one unit more magnitude above zero, one less below.
  doubleView.setBigInt64(0, doubleView.getBigInt64(0) + (value > 0 ? 1n : -1n));
  return doubleView.getFloat64(0);
}

const nextDown = (value: number) => -nextUp(-value);

/** `bits` with every position from `from` up to `positions` added. */
function fillFrom(bits: Bitset, from: number, positions: number): Bitset {
  for (let position = from; position < positions; position++) bits.add(position);
  return bits;
}

/** How many substring results a haystack keeps current (see Column.remembered). */
const REMEMBERED_NEEDLES = 16;

/** How many of each position's latest instants are held beside its list (see Column.latest). */
const LATEST_HELD = 2;

/**
 * The positions whose value lies within [low, high], a word of 32 at a time and without a branch
 * per value (a loop calling a test per kind of bounds ran 5x slower). Open bounds are first made
 * closed by closedBounds, so this one loop serves every range.
 */
function passWithin(values: Float64Array, end: number, low: number, high: number, words: Uint32Array): void {
  const whole = end >>> 5;
  for (let index = 0; index < whole; index++) {
    const first = index << 5;
    let word = 0;
    for (let bit = 0; bit < 32; bit++) {
      const value = values[first + bit]!;
      word |= (+(value >= low) & +(value <= high)) << bit;
    }
    words[index] = word;
  }
  for (let position = whole << 5; position < end; position++) {
    const value = values[position]!;
    words[position >>> 5]! |= (+(value >= low) & +(value <= high)) << (position & 31);
  }
}

