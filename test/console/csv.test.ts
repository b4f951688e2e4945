import { parse } from 'csv-parse/sync';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { detectSeparator, isBlankRecord, parseCsv, writeCsv } from '../../console/src/csv.js';
import { readHeaderRow } from '../../src/families/imports/csv.js';

/** The columns both sides know without a workspace's properties. */
const coreColumns = new Set(['email', 'firstname', 'lastname', 'phone']);

/** The separator the server picks (src/families/imports/service.ts): from the header row, up to its first line break outside quotes. */
function serverSeparator(text: string): string {
  let inQuotes = false;
  let end = 0;
  for (; end < text.length; end++) {
    if (text[end] === '"') inQuotes = !inQuotes;
    else if (!inQuotes && (text[end] === '\n' || text[end] === '\r')) break;
  }
  const header = readHeaderRow(text.slice(0, end), coreColumns);
  return header.ok ? header.delimiter : ',';
}

/** The server's reading of a file (src/families/imports/job.ts): csv-parse, its separator, BOM allowed, ragged rows, blank lines skipped. */
const serverRecords = (text: string) => parse(text, { bom: true, delimiter: serverSeparator(text), relax_column_count: true, skip_empty_lines: true }) as string[][];

describe('the console’s CSV (imports page)', () => {
  it('reads quoted fields, doubled quotes, CRLF or LF, a BOM, blank lines and a last line without a newline as csv-parse does', () => {
    for (const newline of ['\n', '\r\n']) {
      const text = ['\uFEFFemail,lastName', '"a@x.test","Hopper, ""Amazing"" Grace"', 'b@x.test,"two\nlines"', '', 'c@x.test,'].join(newline);
      expect(parseCsv(text).filter((record) => !isBlankRecord(record))).toEqual(serverRecords(text));
    }
  });

  it('reads a semicolon or tab file (as spreadsheet programs save them) as the server does, picking the separator from the header', () => {
    for (const separator of [';', '\t']) {
      const text = ['\uFEFFemail', 'firstName', 'Favourite, colour'].join(separator) + `\r\na@x.test${separator}"Hopper${separator} Grace"${separator}"Red, ""or"" blue"\r\n`;
      expect(detectSeparator(text)).toBe(separator);
      expect(serverSeparator(text)).toBe(separator);
      expect(parseCsv(text)).toEqual([
        ['email', 'firstName', 'Favourite, colour'],
        ['a@x.test', `Hopper${separator} Grace`, 'Red, "or" blue'],
      ]);
      expect(parseCsv(text)).toEqual(serverRecords(text));
    }
  });

  it('writes what it reads, and the server reads the same records (any fields: separators, quotes, line breaks)', () => {
    const field = fc.string({ unit: fc.constantFrom('a', 'Z', ' ', ',', '"', '\n', '\r\n', ';', '\t', 'é') as fc.Arbitrary<string>, maxLength: 8 });
    // A record of one empty field would be a blank line, which is no data row on either side.
    const record = fc.array(field, { minLength: 1, maxLength: 5 }).filter((fields) => !isBlankRecord(fields));
    fc.assert(
      fc.property(fc.array(record, { minLength: 1, maxLength: 6 }), (records) => {
        const text = writeCsv(records);
        expect(parseCsv(text)).toEqual(records);
        expect(serverRecords(text)).toEqual(records);
      }),
    );
  });
});
