/**
 * The CSV the team downloads and opens in a spreadsheet (RFC 4180: comma separated, CRLF, a cell
 * quoted when it holds a comma, a quote or a line break, quotes doubled). A cell that a
 * spreadsheet would read as a formula (starting with `=`, `+`, `-`, `@`, a tab or a carriage
 * return) is prefixed with a single quote (OWASP's CSV injection advice): a person's answer
 * "=HYPERLINK(...)" opens as that text, never as a formula. Numbers the service writes itself
 * (a negative answer to a NUMBER question included) are cells of their own kind: see csvNumber.
 */

const formulaStart = /^[=+\-@\t\r]/;

/** One text cell, neutralised and quoted as needed. */
export function csvText(value: string): string {
  const safe = formulaStart.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/**
 * A number the service wrote (a count, an answer to a NUMBER question): a finite number's own
 * spelling is no formula, but a negative one starts with "-", which some spreadsheets read as the
 * start of one when a text follows; a number is only digits, a sign, a point and an exponent, so
 * it is written as it is.
 */
export function csvNumber(value: number): string {
  return Number.isFinite(value) ? String(value) : '';
}

/** A record of cells already written by csvText or csvNumber, with its CRLF. */
export const csvRecord = (cells: readonly string[]): string => `${cells.join(',')}\r\n`;
