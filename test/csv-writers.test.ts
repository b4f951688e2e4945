import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * Issue 32, item 7 (CSV injection): a value starting with `=`, `+`, `-`, `@`, tab or CR opens as a
 * formula in a spreadsheet, so whatever CSV the service hands to a person to open must prefix
 * such a value with a single quote (OWASP). The one export, a study's screener responses
 * (GET /studies/{studyId}/screener-responses/export), writes every cell through
 * src/families/screener-responses/csv.ts, which does (its test puts formulas through it); import
 * errors are JSON. The console's writeCsv (console/src/csv.ts) rebuilds the person's own file as
 * the body of POST /imports, which the server reads verbatim: a quote added there would become
 * part of each stored value.
 *
 * This test is the tripwire: it lists every place that writes CSV or serves it, and fails when a
 * new one appears, so an export added later is written with the neutralising rule and listed here.
 */

const root = fileURLToPath(new URL('..', import.meta.url));

function sources(directory: string): string[] {
  return readdirSync(path.join(root, directory), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.(ts|tsx)$/.test(entry.name) && !/\.test\.tsx?$|test-support\.ts$/.test(entry.name))
    .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)));
}

/** What writes CSV or serves it: a CSV response type or download, a CSV writer library, the console's writer. */
const writerPatterns: [string, RegExp][] = [
  ['a text/csv answer', /(?:type|header)\(\s*['"`](?:content-type['"`]\s*,\s*['"`])?text\/csv/i],
  ['a CSV download', /\.csv['"`]|\bdownload\s*=|content-disposition['"`]?\s*[,:]\s*['"`]?attachment/i],
  ['a CSV writer library', /from\s+['"](?:csv-stringify|papaparse|json2csv|@json2csv\/[a-z]+|fast-csv)['"/]/],
  ["the console's CSV writer", /\bwriteCsv\(/],
];

/** The places that do, each with why its output needs no neutralising. */
const known: Record<string, string> = {
  // The definition, and its one use: the body of POST /imports, read verbatim by the server.
  'console/src/csv.ts: the console\'s CSV writer': 'defines writeCsv',
  'console/src/pages/Imports.tsx: the console\'s CSV writer': 'the person\'s own file, sent to POST /imports',
  // The screener responses' export: every cell written by csvText/csvNumber (screener-responses/csv.ts), which neutralise formulas.
  'src/families/screener-responses/routes.ts: a text/csv answer': 'cells through screener-responses/csv.ts',
  'src/families/screener-responses/routes.ts: a CSV download': 'cells through screener-responses/csv.ts',
  // Downloads that are not CSV: a session's calendar file (text/calendar) on its page and on the person's own page,
  // and the person's data (JSON) and signed consent (PDF) on their own page.
  'src/participant/booking-page.tsx: a CSV download': 'not CSV: the session\'s .ics calendar file',
  'src/participant/booking-routes.tsx: a CSV download': 'not CSV: the session\'s .ics calendar file',
  'src/participant/hub/routes.tsx: a CSV download': 'not CSV: a session\'s .ics, the person\'s data as JSON, a signed consent\'s PDF',
};

describe('CSV writers', () => {
  it('are all listed, with why their output needs no formula neutralising', () => {
    const found: string[] = [];
    for (const file of [...sources('src'), ...sources('console/src')]) {
      const text = readFileSync(path.join(root, file), 'utf8');
      for (const [name, pattern] of writerPatterns) if (pattern.test(text)) found.push(`${file}: ${name}`);
    }
    expect(found.sort()).toEqual(Object.keys(known).sort());
  });
});
