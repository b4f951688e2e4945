import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * One writer per row (design.md): the scan behind each family's one-writer test. It reads the
 * source under src/ and finds the write statements of some tables, through Kysely or in raw SQL,
 * outside the files a family exempts.
 */

export const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../src');

/** The patterns of a write of any of `tables` (names without schema or quotes). */
export function writePatterns(tables: readonly string[]): RegExp[] {
  const names = `(?:${tables.join('|')})`;
  return [
    new RegExp(String.raw`\.(?:insertInto|updateTable|deleteFrom|mergeInto|replaceInto)\(\s*['"\`]${names}(?:\s+as\s+\w+)?['"\`]`, 'g'),
    new RegExp(String.raw`\b(?:insert\s+into|update|delete\s+from|merge\s+into|truncate(?:\s+table)?|copy)\s+(?:only\s+)?(?:public\.)?"?${names}"?(?=[\s(;,'"\`]|$)`, 'gi'),
  ];
}

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(directory, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.isFile() && entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** The code without its comments: prose that says "update people" is no write. */
const withoutComments = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');

/** The write statements the patterns find in a source text. */
export function writesIn(text: string, patterns: readonly RegExp[]): string[] {
  const code = withoutComments(text);
  return patterns.flatMap((pattern) => [...code.matchAll(pattern)].map((match) => match[0]));
}

/** Migrations, the test helpers' routes and test code (tests, fixtures, test support) may write any table. */
export const isTestOrMigration = (relative: string) =>
  relative.startsWith('db/migrations/') || relative.startsWith('families/test-helpers/') || /\.test\.ts$|(^|\/)test-support\.ts$|-fixtures\.ts$/.test(relative);

/** The number of writes per file (relative to src/, with /) of the files not exempt. */
export function writesOutside(patterns: readonly RegExp[], isExempt: (relative: string) => boolean): Record<string, number> {
  const found: Record<string, number> = {};
  for (const file of sourceFiles(SRC)) {
    const relative = path.relative(SRC, file).split(path.sep).join('/');
    if (isExempt(relative)) continue;
    const writes = writesIn(readFileSync(file, 'utf8'), patterns);
    if (writes.length > 0) found[relative] = writes.length;
  }
  return found;
}
