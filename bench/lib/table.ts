/** A plain fixed-width table: numbers right-aligned, text left-aligned. */
export function formatTable(headers: string[], rows: (string | number)[][]): string {
  const cells = [headers, ...rows.map((row) => row.map((cell) => (typeof cell === 'number' ? formatNumber(cell) : cell)))];
  const widths = headers.map((_, column) => Math.max(...cells.map((row) => (row[column] ?? '').length)));
  const numeric = headers.map((_, column) => rows.length > 0 && rows.every((row) => typeof row[column] === 'number'));
  const line = (row: string[]) =>
    row.map((cell, column) => (numeric[column] ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!))).join('  ').trimEnd();
  return [line(cells[0]!), widths.map((width) => '-'.repeat(width)).join('  '), ...cells.slice(1).map(line)].join('\n');
}

function formatNumber(value: number): string {
  if (Number.isInteger(value)) return value.toLocaleString('en-US');
  return value.toLocaleString('en-US', { minimumFractionDigits: 1, maximumFractionDigits: 2 });
}
