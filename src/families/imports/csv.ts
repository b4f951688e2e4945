import { CsvError } from 'csv-parse';
import { parse as parseSync } from 'csv-parse/sync';
import type { ImportDelimiter } from '../../db/schema.js';
import { columnLabel, formatCount } from './text.js';

/**
 * How the import reads CSV: the field separators it recognises, how it picks one for a file, the
 * parser's options, and what it tells a person whose file is broken.
 */

/** The separators spreadsheet programs write: `,`, `;` (where the decimal mark is a comma) and tab. */
export const delimiters: readonly ImportDelimiter[] = [',', ';', '\t'];

export const delimiterNames: Record<ImportDelimiter, string> = { ',': 'comma', ';': 'semicolon', '\t': 'tab' };

/**
 * The longest row the job reads. A quote that is never closed makes the rest of the file one
 * cell: the parser stops there instead of holding the file in memory. A row of a hundred
 * properties of 10,000 characters each still fits.
 */
export const RECORD_BYTES_MAX = 4 * 1024 * 1024;

/** The job's parser options for a file of this separator (the header is read with the same). */
export function parserOptions(delimiter: ImportDelimiter) {
  return { bom: true, delimiter, relax_column_count: true, skip_empty_lines: true, max_record_size: RECORD_BYTES_MAX } as const;
}

export type HeaderRow = { ok: true; delimiter: ImportDelimiter; cells: string[] } | { ok: false; error: CsvError };

/**
 * The header row's cells, split by the separator the file uses. Each candidate splits the row
 * (quotes respected: a separator inside a quoted name does not split it); the one that gives the
 * most column names the import knows wins (`known`: lower-cased, trimmed), then the one that gives
 * the most columns, then the first of comma, semicolon, tab. A one-column header is read as comma
 * separated. When no candidate can read the row, the comma's error says what is wrong with it.
 */
export function readHeaderRow(line: string, known: ReadonlySet<string>): HeaderRow {
  let best: { delimiter: ImportDelimiter; cells: string[]; known: number } | undefined;
  let commaError: CsvError | undefined;
  for (const delimiter of delimiters) {
    let cells: string[];
    try {
      cells = (parseSync(line, { bom: true, delimiter, relax_column_count: true }) as string[][])[0] ?? [''];
    } catch (error) {
      if (!(error instanceof CsvError)) throw error;
      if (delimiter === ',') commaError = error;
      continue;
    }
    const score = new Set(cells.map((cell) => cell.trim().toLowerCase()).filter((name) => known.has(name))).size;
    if (!best || score > best.known || (score === best.known && cells.length > best.cells.length)) best = { delimiter, cells, known: score };
  }
  if (best) return { ok: true, delimiter: best.delimiter, cells: best.cells };
  return { ok: false, error: commaError! };
}

/** The parser's counters as the error left them: the records read before it (the header among them) and the blank lines skipped. */
export function errorCounters(error: CsvError): { records: number; emptyLines: number } {
  return { records: typeof error.records === 'number' ? error.records : 0, emptyLines: typeof error.empty_lines === 'number' ? error.empty_lines : 0 };
}

/** Where a broken row is: its row as a spreadsheet numbers it (the header is row 1) and the file's line it starts on. */
export interface RowPlace {
  row: number;
  line: number;
  /** The header's column names, when known: a message names the column as well as its position. */
  header?: readonly string[];
}

/**
 * What is wrong at a place csv-parse could not read, in words a person who edits the file can act
 * on. Never quotes the file's content (a cell may hold personal data), only positions and column
 * names.
 */
export function describeCsvError(error: CsvError, place: RowPlace): string {
  const where = place.row === 1 ? `The header row (line 1)` : `Row ${formatCount(place.row)} (line ${formatCount(place.line)} of the file)`;
  const index = typeof error.column === 'number' ? error.column : undefined;
  const name = index !== undefined ? place.header?.[index]?.trim() : undefined;
  const column = index === undefined ? 'a cell' : `the cell in ${name ? `"${name}" (${columnLabel(index)})` : columnLabel(index)}`;
  switch (error.code) {
    case 'CSV_QUOTE_NOT_CLOSED':
      return `${where}: ${column} opens a quote that is never closed, so the rest of the file would be part of it. Close the quote, or double a quote meant as a character ("")`;
    case 'CSV_MAX_RECORD_SIZE':
      return `${where}: the row runs on for more than ${RECORD_BYTES_MAX / (1024 * 1024)} MiB, most likely because ${column} opens a quote that is never closed. Close the quote, or double a quote meant as a character ("")`;
    case 'INVALID_OPENING_QUOTE':
      return `${where}: ${column} has a quote inside it but does not start with one. A cell holding a quote must be quoted whole, its quotes doubled: 5'11" is written "5'11"""`;
    case 'CSV_INVALID_CLOSING_QUOTE':
    case 'CSV_NON_TRIMABLE_CHAR_AFTER_CLOSING_QUOTE':
      return `${where}: in ${column}, a closing quote is followed by more text before the next separator. A quote inside a quoted cell must be doubled ("")`;
    default:
      return `${where}: the file is not valid CSV here`;
  }
}
