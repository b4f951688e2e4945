import { parse } from 'csv-parse/sync';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isBlankRecord, parseCsv, writeCsv } from '../../console/src/csv.js';

/** The server's reading of a file (src/families/imports/job.ts): csv-parse, BOM allowed, ragged rows, blank lines skipped. */
const serverRecords = (text: string) => parse(text, { bom: true, relax_column_count: true, skip_empty_lines: true }) as string[][];

describe('the console’s CSV (imports page)', () => {
  it('reads quoted fields, doubled quotes, CRLF or LF, a BOM, blank lines and a last line without a newline as csv-parse does', () => {
    for (const newline of ['\n', '\r\n']) {
      const text = ['\uFEFFemail,lastName', '"a@x.test","Hopper, ""Amazing"" Grace"', 'b@x.test,"two\nlines"', '', 'c@x.test,'].join(newline);
      expect(parseCsv(text).filter((record) => !isBlankRecord(record))).toEqual(serverRecords(text));
    }
  });

  it('writes what it reads, and the server reads the same records (any fields: commas, quotes, line breaks)', () => {
    const field = fc.string({ unit: fc.constantFrom('a', 'Z', ' ', ',', '"', '\n', '\r\n', ';', 'é') as fc.Arbitrary<string>, maxLength: 8 });
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
