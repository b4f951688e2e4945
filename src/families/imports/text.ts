import { isUtf8 } from 'node:buffer';

/**
 * The text of an uploaded file, as the import stores it: UTF-8 always. A file saved as UTF-8 (a
 * byte-order mark or none) is checked and kept as it is; one that starts with a UTF-16 byte-order
 * mark (Excel's "Unicode text", tab-delimited) is transcoded piece by piece as it arrives, so the
 * job downstream reads one encoding and memory stays flat in the file's size.
 */

/** The bytes are not the text the file says it is: a 400 naming the line, once the caller knows it. */
export class NotText extends Error {
  constructor(
    /** What the text was read as. */
    readonly encoding: 'UTF-8' | 'UTF-16',
    /** Whether the bytes before the broken one were all passed on (the line is then exact, else a lower bound). */
    readonly exact: boolean,
  ) {
    super(`The file is not valid ${encoding} text`);
  }
}

/** The file is not text at all, but a spreadsheet program's own format. */
export class SpreadsheetFile extends Error {}

const UTF16_LE_BOM = [0xff, 0xfe];
const UTF16_BE_BOM = [0xfe, 0xff];
/** A zip archive: an .xlsx (or .ods, .numbers) workbook. */
const ZIP = [0x50, 0x4b, 0x03, 0x04];
/** An OLE compound file: an .xls workbook of Excel 97-2003. */
const OLE = [0xd0, 0xcf, 0x11, 0xe0];

const startsWith = (bytes: Buffer, prefix: number[]) => bytes.length >= prefix.length && prefix.every((byte, index) => bytes[index] === byte);

/**
 * The file's bytes as UTF-8, a piece at a time. Reads its first bytes to see what it is: a UTF-16
 * byte-order mark means transcoding (the mark dropped), anything else is checked as UTF-8. Throws
 * NotText where the bytes stop being text, after yielding the good bytes before it (so a caller
 * that keeps what it is given can count the lines before the bad byte), and SpreadsheetFile for a
 * workbook.
 */
export async function* textPieces(source: AsyncIterator<Buffer | Uint8Array>): AsyncGenerator<Buffer, void, undefined> {
  const start: Buffer[] = [];
  let length = 0;
  let ended = false;
  // Enough bytes to know the file's kind: a piece may be as short as one byte.
  while (length < 4) {
    const next = await source.next();
    if (next.done) {
      ended = true;
      break;
    }
    const piece = toBuffer(next.value);
    start.push(piece);
    length += piece.length;
  }
  const head = Buffer.concat(start);
  if (startsWith(head, ZIP) || startsWith(head, OLE)) throw new SpreadsheetFile('The file is a spreadsheet workbook (.xlsx or .xls), not CSV text');
  const rest = ended ? emptyIterator() : source;
  if (startsWith(head, UTF16_LE_BOM) || startsWith(head, UTF16_BE_BOM)) yield* utf16(head, rest, head[0] === 0xff ? 'utf-16le' : 'utf-16be');
  else yield* utf8(head, rest);
}

function toBuffer(value: Buffer | Uint8Array): Buffer {
  return Buffer.isBuffer(value) ? value : Buffer.from(value.buffer, value.byteOffset, value.byteLength);
}

function emptyIterator(): AsyncIterator<Buffer> {
  return { next: () => Promise.resolve({ done: true, value: undefined }) };
}

async function* pieces(first: Buffer, rest: AsyncIterator<Buffer | Uint8Array>): AsyncGenerator<Buffer, void, undefined> {
  if (first.length > 0) yield first;
  for (;;) {
    const next = await rest.next();
    if (next.done) return;
    yield toBuffer(next.value);
  }
}

/**
 * Checks each piece with node's isUtf8 (simdutf: vectorised, many gigabytes a second), holding
 * back a character cut by the piece's end until the next piece completes it.
 */
async function* utf8(first: Buffer, rest: AsyncIterator<Buffer | Uint8Array>): AsyncGenerator<Buffer, void, undefined> {
  let carry: Buffer | undefined;
  for await (const piece of pieces(first, rest)) {
    const data = carry ? Buffer.concat([carry, piece]) : piece;
    const end = completeLength(data);
    const whole = data.subarray(0, end);
    if (!isUtf8(whole)) {
      const bad = firstInvalid(whole);
      if (bad > 0) yield whole.subarray(0, bad);
      throw new NotText('UTF-8', true);
    }
    if (end > 0) yield whole;
    // A copy: the body's buffer is not ours to keep past this turn.
    carry = end < data.length ? Buffer.from(data.subarray(end)) : undefined;
  }
  // The file ends inside a character.
  if (carry) throw new NotText('UTF-8', true);
}

/** The length of `data` without a character its end cuts short (at most three bytes less). */
function completeLength(data: Buffer): number {
  const length = data.length;
  let lead = length - 1;
  while (lead >= 0 && lead > length - 4 && (data[lead]! & 0xc0) === 0x80) lead--;
  if (lead < 0) return length;
  const byte = data[lead]!;
  const size = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
  return lead + size > length ? lead : length;
}

/**
 * The offset of the first byte of `data` that does not start a valid UTF-8 character (RFC 3629:
 * no overlong forms, no surrogates, nothing past U+10FFFF). Read only once isUtf8 said there is one.
 */
export function firstInvalid(data: Uint8Array): number {
  let index = 0;
  while (index < data.length) {
    const byte = data[index]!;
    if (byte < 0x80) {
      index++;
      continue;
    }
    let size: number;
    let low = 0x80;
    let high = 0xbf;
    if (byte >= 0xc2 && byte <= 0xdf) size = 2;
    else if (byte >= 0xe0 && byte <= 0xef) {
      size = 3;
      if (byte === 0xe0) low = 0xa0;
      if (byte === 0xed) high = 0x9f;
    } else if (byte >= 0xf0 && byte <= 0xf4) {
      size = 4;
      if (byte === 0xf0) low = 0x90;
      if (byte === 0xf4) high = 0x8f;
    } else return index;
    if (index + size > data.length) return index;
    const second = data[index + 1]!;
    if (second < low || second > high) return index;
    for (let offset = 2; offset < size; offset++) if ((data[index + offset]! & 0xc0) !== 0x80) return index;
    index += size;
  }
  return data.length;
}

/** Transcodes with the platform's TextDecoder (streaming: a character cut by a piece's end is completed by the next one). */
async function* utf16(first: Buffer, rest: AsyncIterator<Buffer | Uint8Array>, label: 'utf-16le' | 'utf-16be'): AsyncGenerator<Buffer, void, undefined> {
  // fatal: an unpaired surrogate, or an odd byte at the end, is an error rather than U+FFFD.
  // The byte-order mark is dropped (ignoreBOM false).
  const decoder = new TextDecoder(label, { fatal: true });
  const decode = (piece?: Buffer) => {
    try {
      return piece ? decoder.decode(piece, { stream: true }) : decoder.decode();
    } catch {
      throw new NotText('UTF-16', false);
    }
  };
  for await (const piece of pieces(first, rest)) {
    const text = decode(piece);
    if (text.length > 0) yield Buffer.from(text, 'utf8');
  }
  const text = decode();
  if (text.length > 0) yield Buffer.from(text, 'utf8');
}

/**
 * Counts line breaks as a text editor does: LF, CRLF, or a CR alone (old Mac files) are one each.
 * Only error paths count lines (the line of a bad byte or a broken quote), so the import's own
 * pass over a file never pays for it.
 */
export class LineCounter {
  /** Line breaks so far. */
  breaks = 0;
  /** The last byte given was a CR: an LF starting the next piece belongs to it. */
  private pendingCr = false;

  add(data: Uint8Array): void {
    const bytes = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    if (bytes.length === 0) return;
    let from = 0;
    if (this.pendingCr && bytes[0] === 0x0a) from = 1;
    for (let at = bytes.indexOf(0x0a, from); at !== -1; at = bytes.indexOf(0x0a, at + 1)) this.breaks++;
    for (let at = bytes.indexOf(0x0d, from); at !== -1; at = bytes.indexOf(0x0d, at + 1)) {
      // A CR followed by an LF was counted with the LF; one at the end waits for the next piece.
      if (at + 1 < bytes.length ? bytes[at + 1] !== 0x0a : true) this.breaks++;
    }
    // A CR ending this piece was counted above as alone: if the next piece starts with LF, that LF is skipped instead.
    this.pendingCr = bytes[bytes.length - 1] === 0x0d;
  }

  /** The 1-based line the next byte is on. */
  get line(): number {
    return this.breaks + 1;
  }
}

/** A column's 1-based position and its letters in a spreadsheet: 3 → "column 3, C". */
export function columnLabel(index: number): string {
  let letters = '';
  for (let rest = index + 1; rest > 0; rest = Math.floor((rest - 1) / 26)) letters = String.fromCharCode(65 + ((rest - 1) % 26)) + letters;
  return `column ${index + 1}, ${letters}`;
}

/** A number as people read it in a message: 5000 → "5,000". */
export function formatCount(value: number): string {
  return value.toLocaleString('en-US');
}
