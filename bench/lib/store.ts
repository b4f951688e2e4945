import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';

export const defaultDatabaseUrl = 'postgres://postgres@127.0.0.1:5432/test';

/** Where a bench's data lives: its own PostgreSQL database, or an embedded store's directory. */
export type BenchStore = { kind: 'postgres'; databaseUrl: string } | { kind: 'embedded'; dataDir: string };

/**
 * Drops and recreates the bench's own database on the server DATABASE_URL points at, so every
 * run starts from the same data and never touches the tests' or anyone's databases.
 */
export async function recreatePostgresDatabase(name: string, serverUrl = process.env.DATABASE_URL || defaultDatabaseUrl): Promise<BenchStore> {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`Unsafe database name ${name}`);
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return { kind: 'postgres', databaseUrl: url.toString() };
}

/** The bench's own database on the server DATABASE_URL points at, as it is (created empty if missing): for data kept between runs. */
export async function keptPostgresDatabase(name: string, serverUrl = process.env.DATABASE_URL || defaultDatabaseUrl): Promise<BenchStore> {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`Unsafe database name ${name}`);
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    const { rowCount } = await admin.query('select 1 from pg_database where datname = $1', [name]);
    if (rowCount === 0) await admin.query(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return { kind: 'postgres', databaseUrl: url.toString() };
}

/** Drops a bench's own database once it is done with it (an import bench leaves a gigabyte behind). */
export async function dropPostgresDatabase(name: string, serverUrl = process.env.DATABASE_URL || defaultDatabaseUrl): Promise<void> {
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new Error(`Unsafe database name ${name}`);
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`drop database if exists ${name} with (force)`);
  } finally {
    await admin.end();
  }
}

/** A fresh directory for an embedded store, removed by `dispose`. */
export function freshEmbeddedStore(prefix: string): { store: BenchStore; dispose(): void } {
  const dataDir = mkdtempSync(path.join(tmpdir(), `${prefix}-`));
  return { store: { kind: 'embedded', dataDir }, dispose: () => rmSync(dataDir, { recursive: true, force: true }) };
}

/** The environment a child needs to open the same store. */
export function storeEnv(store: BenchStore): NodeJS.ProcessEnv {
  return store.kind === 'postgres' ? { DATABASE_URL: store.databaseUrl } : { DATABASE_URL: '', DATA_DIR: store.dataDir };
}

/**
 * The server processes serving connections to the bench's database (a local PostgreSQL only):
 * their CPU time is the database's share of the work. Asked over a connection to another
 * database, so the asking connection is not among them.
 */
export async function backendPids(store: BenchStore, serverUrl = process.env.DATABASE_URL || defaultDatabaseUrl): Promise<number[]> {
  if (store.kind !== 'postgres') return [];
  const name = new URL(store.databaseUrl).pathname.slice(1);
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ pid: number }>('select pid from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [name]);
    return rows.map((row) => row.pid);
  } finally {
    await client.end();
  }
}
