import { isUtf8 } from 'node:buffer';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { columnLabel, firstInvalid, LineCounter, NotText, textPieces } from './text.js';

/** `bytes` cut at the given offsets, as an upload's pieces. */
function cut(bytes: Buffer, offsets: number[]): Buffer[] {
  const points = [...new Set(offsets.map((offset) => offset % (bytes.length + 1)))].sort((a, b) => a - b);
  const pieces: Buffer[] = [];
  let from = 0;
  for (const point of [...points, bytes.length]) {
    if (point > from) pieces.push(bytes.subarray(from, point));
    from = Math.max(from, point);
  }
  return pieces;
}

async function read(pieces: Buffer[]): Promise<{ text: Buffer; error?: unknown }> {
  const out: Buffer[] = [];
  try {
    for await (const piece of textPieces(pieces[Symbol.iterator]() as unknown as AsyncIterator<Buffer>)) out.push(piece);
  } catch (error) {
    return { text: Buffer.concat(out), error };
  }
  return { text: Buffer.concat(out) };
}

const anyText = fc.string({ unit: fc.oneof(fc.constantFrom('a', ',', '\n', '\r', 'é', '€', '日', '🎉', '\uFEFF'), fc.string({ unit: 'grapheme', maxLength: 1 })), maxLength: 40 });
const offsets = fc.array(fc.nat({ max: 200 }), { maxLength: 8 });

describe('textPieces', () => {
  it('passes UTF-8 through unchanged, however its pieces cut its characters', async () => {
    await fc.assert(
      fc.asyncProperty(anyText, offsets, async (text, at) => {
        const bytes = Buffer.from(text, 'utf8');
        // A text starting like a workbook is not what this checks.
        fc.pre(!bytes.subarray(0, 2).equals(Buffer.from('PK')));
        const { text: out, error } = await read(cut(bytes, at));
        expect(error).toBeUndefined();
        expect(out.equals(bytes)).toBe(true);
      }),
    );
  });

  it('passes on exactly the bytes before the first one that is not UTF-8, then says the text is not UTF-8', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 40 }), offsets, async (array, at) => {
        const bytes = Buffer.from(array);
        fc.pre(!(bytes[0] === 0xff && bytes[1] === 0xfe) && !(bytes[0] === 0xfe && bytes[1] === 0xff) && !bytes.subarray(0, 4).equals(Buffer.from([0x50, 0x4b, 3, 4])) && !bytes.subarray(0, 4).equals(Buffer.from([0xd0, 0xcf, 0x11, 0xe0])));
        const { text: out, error } = await read(cut(bytes, at));
        if (isUtf8(bytes)) {
          expect(error).toBeUndefined();
          expect(out.equals(bytes)).toBe(true);
          return;
        }
        expect(error).toBeInstanceOf(NotText);
        const bad = firstInvalid(bytes);
        expect(out.equals(bytes.subarray(0, bad))).toBe(true);
        // The longest prefix that ends between characters: no character starts at `bad`.
        expect(isUtf8(bytes.subarray(0, bad))).toBe(true);
        for (let size = 1; size <= 4 && bad + size <= bytes.length; size++) expect(isUtf8(bytes.subarray(bad, bad + size))).toBe(false);
      }),
    );
  });

  it('transcodes UTF-16 (LE or BE, after its byte-order mark) to UTF-8, however its pieces cut its code units', async () => {
    await fc.assert(
      fc.asyncProperty(anyText, offsets, fc.boolean(), async (text, at, bigEndian) => {
        const units = Buffer.from(text, 'utf16le');
        if (bigEndian) units.swap16();
        const bytes = Buffer.concat([Buffer.from(bigEndian ? [0xfe, 0xff] : [0xff, 0xfe]), units]);
        const { text: out, error } = await read(cut(bytes, at));
        expect(error).toBeUndefined();
        expect(out.toString('utf8')).toBe(text);
      }),
    );
  });
});

describe('LineCounter', () => {
  it('counts LF, CRLF and a CR alone as one line break each, however the pieces cut a CRLF', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('a', '\r', '\n', '\r\n'), maxLength: 30 }), offsets, (text, at) => {
        const lines = new LineCounter();
        for (const piece of cut(Buffer.from(text), at)) lines.add(piece);
        expect(lines.breaks).toBe(text.match(/\r\n|\r|\n/g)?.length ?? 0);
      }),
    );
  });
});

describe('columnLabel', () => {
  it('names a column by its position and its letters in a spreadsheet', () => {
    expect([0, 1, 25, 26, 27, 51, 52, 701, 702].map(columnLabel)).toEqual([
      'column 1, A',
      'column 2, B',
      'column 26, Z',
      'column 27, AA',
      'column 28, AB',
      'column 52, AZ',
      'column 53, BA',
      'column 702, ZZ',
      'column 703, AAA',
    ]);
  });
});
