/**
 * The little CSV the imports page needs in the browser: read a file's rows (RFC 4180: quoted
 * fields, doubled quotes, CRLF or LF, a byte-order mark; comma, semicolon or tab separated) to
 * check its header against the workspace's properties before upload, and write the rows back,
 * comma separated, with columns renamed or left out. The server parses the file again with
 * csv-parse; this only has to agree with it on well-formed files.
 */

const separators = [',', ';', '\t'] as const;
/** The columns every import knows (the server also counts the workspace's property names when it picks a separator). */
const coreColumns = new Set(['email', 'firstname', 'lastname', 'phone']);

/**
 * The separator of a file, picked from its header row as the server picks it
 * (src/families/imports/csv.ts): among those that read the row as valid CSV (a quote only around a
 * whole cell), the one that splits it into the most known column names, then into the most
 * columns, then the first of comma, semicolon, tab.
 */
export function detectSeparator(text: string): string {
  let best = { separator: ',', known: -1, columns: 0 };
  for (const separator of separators) {
    let misplacedQuote = false;
    const header = parseRecords(text, separator, 1, () => (misplacedQuote = true))[0] ?? [];
    if (misplacedQuote) continue;
    const known = new Set(header.map((cell) => cell.trim().toLowerCase()).filter((name) => coreColumns.has(name))).size;
    if (known > best.known || (known === best.known && header.length > best.columns)) best = { separator, known, columns: header.length };
  }
  return best.separator;
}

/** The records of `text`, each an array of fields. A trailing newline makes no empty record. */
export function parseCsv(text: string): string[][] {
  return parseRecords(text, detectSeparator(text));
}

/**
 * Reads records, leniently: a quote inside a cell that does not start with one is a character.
 * `onMisplacedQuote` hears of each quote the server's parser would refuse (inside an unquoted
 * cell, followed by more text after it closes, or never closed).
 */
function parseRecords(text: string, separator: string, limit = Number.POSITIVE_INFINITY, onMisplacedQuote?: () => void): string[][] {
  const source = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let quoted = false;
  /** A quoted cell has just closed: only a separator or a line break may follow. */
  let closed = false;
  let index = 0;
  const endRecord = () => {
    record.push(field);
    records.push(record);
    record = [];
    field = '';
  };
  while (index < source.length && records.length < limit) {
    const char = source[index]!;
    if (quoted) {
      if (char === '"') {
        if (source[index + 1] === '"') {
          field += '"';
          index += 2;
          continue;
        }
        quoted = false;
        closed = true;
      } else field += char;
      index++;
      continue;
    }
    const ending = char === separator || char === '\n' || char === '\r';
    if (onMisplacedQuote && ((closed && !ending) || (char === '"' && field !== ''))) onMisplacedQuote();
    closed = false;
    if (char === '"' && field === '') quoted = true;
    else if (char === separator) {
      record.push(field);
      field = '';
    } else if (char === '\r' && source[index + 1] === '\n') {
      endRecord();
      index++;
    } else if (char === '\n' || char === '\r') endRecord();
    else field += char;
    index++;
  }
  if (quoted && records.length < limit) onMisplacedQuote?.();
  if ((field !== '' || record.length > 0) && records.length < limit) endRecord();
  return records;
}

/** One field as CSV: quoted when it holds a separator, a quote or a line break, so the server reads the file written as comma separated. */
function quote(field: string): string {
  return /[",;\t\r\n]/.test(field) ? `"${field.replace(/"/g, '""')}"` : field;
}

/** `records` as CSV text, CRLF between records (RFC 4180) and after the last. */
export function writeCsv(records: readonly (readonly string[])[]): string {
  return records.map((record) => record.map(quote).join(',')).join('\r\n') + '\r\n';
}

/** Whether a record is an empty line, which is no data row (the server's parser skips them too, so row numbers agree). */
export function isBlankRecord(record: readonly string[]): boolean {
  return record.length === 1 && record[0] === '';
}
