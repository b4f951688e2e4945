import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { storeKind, testDatabaseUrl } from '../../test/harness.js';
import { runCli } from '../../test/processes.js';
import { type Database, DataDirLockedError, openDatabase } from './database.js';
import { migrations } from './migrations/index.js';

const directories: string[] = [];
const opened: Database[] = [];

function temporaryDataDir(): string {
  const directory = mkdtempSync(path.join(tmpdir(), 'recruit-ops-lock-'));
  directories.push(directory);
  return directory;
}

async function openEmbedded(dataDir: string): Promise<Database> {
  const database = await openDatabase({ dataDir });
  opened.push(database);
  return database;
}

async function closeAll() {
  for (const database of opened.splice(0)) await database.close().catch(() => undefined);
}

afterEach(closeAll);
afterAll(() => {
  for (const directory of directories) rmSync(directory, { recursive: true, force: true });
});

// These use temporary directories of their own, so they run whichever store is under test.
// Creating an on-disk store and starting child processes is slow on a busy machine: a generous
// timeout, not a speed check.
describe('DATA_DIR lock of the embedded store', { timeout: 120_000 }, () => {
  it('refuses a second open of the same directory in one process, and opens again after close', async () => {
    const dataDir = temporaryDataDir();
    const first = await openEmbedded(dataDir);
    await expect(openDatabase({ dataDir })).rejects.toBeInstanceOf(DataDirLockedError);
    await expect(openDatabase({ dataDir: `${dataDir}${path.sep}.${path.sep}` })).rejects.toThrow(/is in use by another process/);

    await sql`create table kept (value text)`.execute(first.db);
    await sql`insert into kept values (${'written before close'})`.execute(first.db);
    await first.close();

    const second = await openEmbedded(dataDir);
    const { rows } = await sql<{ value: string }>`select value from kept`.execute(second.db);
    expect(rows).toEqual([{ value: 'written before close' }]);
  });

  it('starts a new data directory as a copy of a dump, and opens one that holds a store as it is', async () => {
    const source = await openDatabase({ inMemory: true });
    opened.push(source);
    await sql`create table copied (value text)`.execute(source.db);
    await sql`insert into copied values (${'from the dump'})`.execute(source.db);
    const dump = await source.dump!();

    const dataDir = temporaryDataDir();
    const started = await openDatabase({ dataDir, startFrom: dump });
    expect((await sql<{ value: string }>`select value from copied`.execute(started.db)).rows).toEqual([{ value: 'from the dump' }]);
    await sql`insert into copied values (${'written after'})`.execute(started.db);
    await started.close();

    // Given the dump again, the directory keeps what it holds.
    const again = await openDatabase({ dataDir, startFrom: dump });
    opened.push(again);
    expect((await sql<{ value: string }>`select value from copied order by value`.execute(again.db)).rows.map((row) => row.value)).toEqual(['from the dump', 'written after']);
  });

  it('makes the CLI of another process exit non-zero with a clear message while held, and work after', async () => {
    const dataDir = temporaryDataDir();
    const held = await openEmbedded(dataDir);

    const refused = await runCli(['migrate', '--json'], { DATA_DIR: dataDir });
    expect(refused.code).not.toBe(0);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toContain('is in use by another process');
    expect(refused.stderr).not.toMatch(/\n\s+at /);

    await held.close();
    const worked = await runCli(['migrate', '--json'], { DATA_DIR: dataDir });
    expect(worked.stderr).toBe('');
    expect(worked.code).toBe(0);
    expect(JSON.parse(worked.stdout)).toEqual({ migrated: Object.keys(migrations) });
  });
});

describe(`value conversions (${storeKind} store)`, () => {
  let database: Database;
  beforeAll(async () => {
    database = await openDatabase({ databaseUrl: testDatabaseUrl, inMemory: true, poolSize: 1 });
  });
  afterAll(async () => database.close());

  it('reads timestamps as ISO 8601 UTC, dates as text and bigints as numbers, with or without parameters', async () => {
    const literal = await sql<{ at: string; day: string; count: number; local: string }>`
      select '2026-03-04 05:06:07.891+02'::timestamptz as at, '2026-03-04'::date as day,
        count(*) as count, '2026-03-04 05:06:07'::timestamp as local
      from (values (1), (2)) as v(x)
    `.execute(database.db);
    expect(literal.rows).toEqual([{ at: '2026-03-04T03:06:07.891Z', day: '2026-03-04', count: 2, local: '2026-03-04T05:06:07.000Z' }]);

    const bound = await sql<{ at: string; day: string; big: number }>`
      select ${'2026-03-04T03:06:07.891Z'}::timestamptz as at, ${'2026-03-04'}::date as day, ${'9007199254740991'}::bigint as big
    `.execute(database.db);
    expect(bound.rows).toEqual([{ at: '2026-03-04T03:06:07.891Z', day: '2026-03-04', big: 9007199254740991 }]);
  });

  it("reads a timestamptz's infinities (the stored sort keys' stand-ins for null) as PostgreSQL writes them", async () => {
    const { rows } = await sql<{ late: string; early: string }>`
      select 'infinity'::timestamptz as late, '-infinity'::timestamptz as early
    `.execute(database.db);
    expect(rows).toEqual([{ late: 'infinity', early: '-infinity' }]);
  });

  it('reads text arrays, empty or not, with quotes, commas, braces and nulls inside', async () => {
    const { rows } = await sql<{ empty: string[]; plain: string[]; awkward: (string | null)[] }>`
      select cast('{}' as text[]) as empty, array['a@example.org', 'b'] as plain,
        array['with, comma', 'with "quotes"', '{braces}', null, '', 'NULL'] as awkward
    `.execute(database.db);
    expect(rows).toEqual([{ empty: [], plain: ['a@example.org', 'b'], awkward: ['with, comma', 'with "quotes"', '{braces}', null, '', 'NULL'] }]);
    rows[0]!.empty.push('mine');
    const again = await sql<{ empty: string[] }>`select cast('{}' as text[]) as empty`.execute(database.db);
    expect(again.rows[0]!.empty).toEqual([]);
  });

  it.runIf(storeKind === 'postgres')('runs its PostgreSQL sessions without JIT, in the time zone UTC', async () => {
    const { rows } = await sql<{ jit: string; zone: string }>`select current_setting('jit') as jit, current_setting('TimeZone') as zone`.execute(database.db);
    expect(rows).toEqual([{ jit: 'off', zone: 'UTC' }]);
  });
});
