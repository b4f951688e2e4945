/**
 * The little CSV the imports page needs in the browser: read a file's rows (RFC 4180: quoted
 * fields, doubled quotes, CRLF or LF, a byte-order mark) to check its header against the
 * workspace's properties before upload, and write the rows back with columns renamed or left out.
 * The server parses the file again with csv-parse; this only has to agree with it on well-formed files.
 */

/** The records of `text`, each an array of fields. A trailing newline makes no empty record. */
export function parseCsv(text: string): string[][] {
  const source = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let quoted = false;
  let index = 0;
  const endRecord = () => {
    record.push(field);
    records.push(record);
    record = [];
    field = '';
  };
  while (index < source.length) {
    const char = source[index]!;
    if (quoted) {
      if (char === '"') {
        if (source[index + 1] === '"') {
          field += '"';
          index += 2;
          continue;
        }
        quoted = false;
      } else field += char;
      index++;
      continue;
    }
    if (char === '"' && field === '') quoted = true;
    else if (char === ',') {
      record.push(field);
      field = '';
    } else if (char === '\r' && source[index + 1] === '\n') {
      endRecord();
      index++;
    } else if (char === '\n' || char === '\r') endRecord();
    else field += char;
    index++;
  }
  if (field !== '' || record.length > 0) endRecord();
  return records;
}

/** One field as CSV: quoted when it holds a comma, a quote or a line break. */
function quote(field: string): string {
  return /[",\r\n]/.test(field) ? `"${field.replace(/"/g, '""')}"` : field;
}

/** `records` as CSV text, CRLF between records (RFC 4180) and after the last. */
export function writeCsv(records: readonly (readonly string[])[]): string {
  return records.map((record) => record.map(quote).join(',')).join('\r\n') + '\r\n';
}

/** Whether a record is an empty line, which is no data row (the server's parser skips them too, so row numbers agree). */
export function isBlankRecord(record: readonly string[]): boolean {
  return record.length === 1 && record[0] === '';
}
