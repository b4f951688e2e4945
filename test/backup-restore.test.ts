import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../src/db/database.js';
import { runCompiledCli, startCompiledServer } from './compiled-server.js';
import { shellBlocks } from './docs-blocks.js';
import { storeKind, testDatabaseUrl } from './harness.js';
import { createPrivatePostgresDatabase } from './private-database.js';
import { projectRoot } from './processes.js';

/**
 * docs/operating.md's backup and restore, run as written: its blocks that name this file are
 * taken from the page itself, run in bash on a store holding a person, and the compiled server
 * started on what they restored must show that person.
 */
const page = 'docs/operating.md';
const blocks = shellBlocks(page, readFileSync(path.join(projectRoot, page), 'utf8')).filter((block) => block.skip?.startsWith('test/backup-restore.test.ts'));

function runBlock(code: string, cwd: string, env: Record<string, string>): void {
  const ran = spawnSync('bash', ['-c', `set -euo pipefail\n${code}`], { cwd, env: { ...process.env, ...env }, encoding: 'utf8' });
  expect(ran.status, `${code}\n${ran.stdout}${ran.stderr}`).toBe(0);
}

/** A person made through the compiled server on `env`'s store, then the server stopped. */
async function storeWithAPerson(env: Record<string, string>): Promise<{ token: string; personId: string }> {
  const { token } = await runCompiledCli<{ token: string }>(['workspace', 'create', '--name', 'Backed up', '--email', 'owner@backup.example.test'], env);
  const server = await startCompiledServer(env);
  try {
    const created = await fetch(`${server.api}/people`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'ada@backup.example.test', firstName: 'Ada' }),
    });
    expect(created.status).toBe(201);
    return { token, personId: ((await created.json()) as { personId: string }).personId };
  } finally {
    expect(await server.stop()).toBe(0);
  }
}

/** The person, read through the compiled server started on `env`'s store. */
async function readPerson(env: Record<string, string>, token: string, personId: string): Promise<unknown> {
  const server = await startCompiledServer(env);
  try {
    const read = await fetch(`${server.api}/people/${personId}`, { headers: { authorization: `Bearer ${token}` } });
    expect(read.status).toBe(200);
    return read.json();
  } finally {
    await server.stop();
  }
}

describe(`backups, as docs/operating.md says (${storeKind} store)`, () => {
  const folder = mkdtempSync(path.join(tmpdir(), 'backup-restore-'));
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
    rmSync(folder, { recursive: true, force: true });
  });

  it.runIf(!testDatabaseUrl)('copies a stopped embedded store and starts on the copy', async () => {
    const [backup, restore] = blocks.filter((block) => block.code.includes('tar '));
    expect(backup?.code).toMatch(/tar -czf/);
    expect(restore?.code).toMatch(/tar -xzf/);
    const env = { DATABASE_URL: '', REDIS_URL: '', DATA_DIR: path.join(folder, 'data') };
    const { token, personId } = await storeWithAPerson(env);
    runBlock(backup!.code, folder, {});
    rmSync(path.join(folder, 'data'), { recursive: true });
    runBlock(restore!.code, folder, {});
    expect(await readPerson({ ...env, DATA_DIR: path.join(folder, 'restored-data') }, token, personId)).toMatchObject({ personId, email: 'ada@backup.example.test' });
  }, 180_000);

  it.runIf(testDatabaseUrl)('dumps a PostgreSQL database while it is served, restores it into a new one, and starts on that', async () => {
    const [backup, restore] = blocks.filter((block) => /pg_dump|pg_restore/.test(block.code));
    expect(backup?.code).toMatch(/pg_dump/);
    expect(restore?.code).toMatch(/pg_restore/);
    const original = await createPrivatePostgresDatabase(testDatabaseUrl!);
    cleanups.push(original.drop);
    const env = { DATABASE_URL: original.url, REDIS_URL: '', DATA_DIR: '' };
    const { token, personId } = await storeWithAPerson(env);
    runBlock(backup!.code, folder, { DATABASE_URL: original.url });
    // The page's database name, made unique: test runs share this PostgreSQL cluster.
    const restoredName = `test_restored_${randomBytes(4).toString('hex')}`;
    const restoredUrl = new URL(original.url);
    restoredUrl.pathname = `/${restoredName}`;
    cleanups.push(async () => {
      const admin = await openDatabase({ databaseUrl: testDatabaseUrl!, poolSize: 1 });
      await sql`drop database if exists ${sql.id(restoredName)} with (force)`.execute(admin.db);
      await admin.close();
    });
    runBlock(restore!.code.replaceAll('recruit_restored', restoredName), folder, { DATABASE_URL: original.url, RESTORED_URL: restoredUrl.toString() });
    expect(await readPerson({ ...env, DATABASE_URL: restoredUrl.toString() }, token, personId)).toMatchObject({ personId, email: 'ada@backup.example.test' });
  }, 180_000);
});
