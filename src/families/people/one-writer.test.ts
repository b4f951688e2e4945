import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * One writer per row: the people family is the only code that writes people rows and their
 * unique-value claims (see writer.ts). Another family calls the people family's functions, so
 * whatever must stay in step with a write of a person lives in one place. This test reads the
 * source under src/ and fails when code outside src/families/people/ writes either table, through
 * Kysely or in raw SQL. Migrations and test code (tests, fixtures, test support) may write them.
 */

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

const TABLES = '(?:people|person_unique_values)';
const WRITES = [
  new RegExp(String.raw`\.(?:insertInto|updateTable|deleteFrom|mergeInto|replaceInto)\(\s*['"\`]${TABLES}(?:\s+as\s+\w+)?['"\`]`, 'g'),
  new RegExp(String.raw`\b(?:insert\s+into|update|delete\s+from|merge\s+into|truncate(?:\s+table)?|copy)\s+(?:only\s+)?(?:public\.)?"?${TABLES}"?(?=[\s(;,'"\`]|$)`, 'gi'),
];

/**
 * Writers outside the family that predate the rule, each to move into the people family; the
 * count is of write statements in the file, so a new one there fails too, and moving one out
 * fails until this list shrinks.
 */
const KNOWN_EXCEPTIONS: Record<string, { writes: number; why: string }> = {
  'families/participants/queries.ts': { writes: 1, why: "recordContact moves people.last_contact_at when a participant is contacted" },
  'seed/demo-people.ts': { writes: 2, why: 'the demo seed bulk-inserts people and their unique claims' },
};

const isExempt = (relative: string) =>
  relative.startsWith('families/people/') ||
  relative.startsWith('db/migrations/') ||
  relative.startsWith('families/test-helpers/') ||
  /\.test\.ts$|(^|\/)test-support\.ts$|-fixtures\.ts$/.test(relative);

function sourceFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(directory, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.isFile() && entry.name.endsWith('.ts') ? [full] : [];
  });
}

/** The code without its comments: prose that says "update people" is no write. */
const withoutComments = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');

function peopleWrites(text: string): string[] {
  const code = withoutComments(text);
  return WRITES.flatMap((pattern) => [...code.matchAll(pattern)].map((match) => match[0]));
}

describe('one writer per people row', () => {
  it('recognizes writes of people through Kysely and in raw SQL, and not reads or prose', () => {
    expect(peopleWrites(`db.insertInto('people').values(row)`)).toHaveLength(1);
    expect(peopleWrites(`db.updateTable("people as p").set({})`)).toHaveLength(1);
    expect(peopleWrites(`db.deleteFrom('person_unique_values')`)).toHaveLength(1);
    expect(peopleWrites('sql`insert into people (workspace_id) values (1)`')).toHaveLength(1);
    expect(peopleWrites('sql`UPDATE people SET email = null`')).toHaveLength(1);
    expect(peopleWrites('sql`delete from person_unique_values u using x`')).toHaveLength(1);
    expect(peopleWrites(`db.selectFrom('people').selectAll()`)).toEqual([]);
    expect(peopleWrites(`db.insertInto('people_export')`)).toEqual([]);
    expect(peopleWrites('sql`update participants set x = 1 from people p`')).toEqual([]);
    expect(peopleWrites('// then update people in the batch\n/* insert into people */')).toEqual([]);
  });

  it('finds no write of people or person_unique_values outside src/families/people/', () => {
    const found: Record<string, number> = {};
    for (const file of sourceFiles(SRC)) {
      const relative = path.relative(SRC, file).split(path.sep).join('/');
      if (isExempt(relative)) continue;
      const writes = peopleWrites(readFileSync(file, 'utf8'));
      if (writes.length > 0) found[relative] = writes.length;
    }
    const expected = Object.fromEntries(Object.entries(KNOWN_EXCEPTIONS).map(([file, exception]) => [file, exception.writes]));
    // A file here that is not a known exception writes people itself: call the people family
    // (src/families/people/writer.ts) instead.
    expect(found).toEqual(expected);
  });
});
