import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';
import { openDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string | undefined;
    /** On the embedded store: a migrated store's dump, which every test file's store starts from. */
    embeddedTemplatePath: string | undefined;
  }
}

/**
 * On PostgreSQL each test run gets a database of its own (created beside DATABASE_URL's, dropped
 * at the end), migrated once; test files share it and isolate themselves by workspace, as
 * tenants do. On the embedded store each file opens its own in-memory database, started from
 * a migrated one dumped here once: a fresh PGlite runs initdb (1–4 s a file) and the migrations.
 */
export async function setup(project: TestProject) {
  // Tests reach the compiled server that `npm start` runs: build it first if the sources changed
  // since the last build (`npx vitest run …` after an edit), as `npm test` does before it starts.
  execFileSync(process.execPath, [fileURLToPath(new URL('../scripts/build-stamp.mjs', import.meta.url)), 'ensure'], { stdio: 'inherit' });
  const baseUrl = process.env.DATABASE_URL;
  if (!baseUrl) {
    project.provide('databaseUrl', undefined);
    const directory = mkdtempSync(path.join(tmpdir(), 'recruit-ops-tests-'));
    const templatePath = path.join(directory, 'migrated.tar');
    const template = await openDatabase({ inMemory: true });
    await migrateToLatest(template.db);
    writeFileSync(templatePath, Buffer.from(await (await template.dump!()).arrayBuffer()));
    await template.close();
    project.provide('embeddedTemplatePath', templatePath);
    return async () => rmSync(directory, { recursive: true, force: true });
  }
  project.provide('embeddedTemplatePath', undefined);
  const name = `test_run_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const admin = await openDatabase({ databaseUrl: baseUrl, poolSize: 1 });
  await sql`create database ${sql.id(name)}`.execute(admin.db);
  const runUrl = new URL(baseUrl);
  runUrl.pathname = `/${name}`;
  const run = await openDatabase({ databaseUrl: runUrl.toString(), poolSize: 1 });
  await migrateToLatest(run.db);
  await run.close();
  project.provide('databaseUrl', runUrl.toString());

  return async () => {
    await sql`drop database if exists ${sql.id(name)} with (force)`.execute(admin.db);
    await admin.close();
  };
}
