import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import lockfile from 'proper-lockfile';
import { PGliteDialect } from './pglite-dialect.js';
import type { DB } from './schema.js';

export type StoreKind = 'postgres' | 'embedded';

export interface Database {
  db: Kysely<DB>;
  kind: StoreKind;
  close(): Promise<void>;
}

export class DataDirLockedError extends Error {
  constructor(dataDir: string) {
    super(
      `The embedded store in ${dataDir} is in use by another process (a running server?). ` +
        'Stop it, or point DATABASE_URL at PostgreSQL to share one database between processes.',
    );
  }
}

/** Type OIDs whose default JavaScript conversions lose information or surprise callers. */
const TIMESTAMPTZ = 1184;
const TIMESTAMP = 1114;
const DATE = 1082;
const INT8 = 20;

/** PostgreSQL's text form of a timestamptz (session time zone UTC) as an ISO 8601 string. */
export function isoFromPostgresTimestamp(text: string): string {
  const withZone = /[+-]\d\d$/.test(text) ? `${text}:00` : text;
  return new Date(withZone.replace(' ', 'T')).toISOString();
}

const parsers: Record<number, (text: string) => unknown> = {
  [TIMESTAMPTZ]: isoFromPostgresTimestamp,
  [TIMESTAMP]: (text) => isoFromPostgresTimestamp(`${text}+00`),
  [DATE]: (text) => text,
  [INT8]: (text) => Number(text),
};

export interface OpenOptions {
  databaseUrl?: string;
  dataDir?: string;
  /** In-memory embedded store, for tests: no directory and no lock. */
  inMemory?: boolean;
  poolSize?: number;
}

export async function openDatabase(options: OpenOptions): Promise<Database> {
  if (options.databaseUrl) return openPostgres(options.databaseUrl, options.poolSize ?? 10);
  return openEmbedded(options);
}

function openPostgres(connectionString: string, poolSize: number): Database {
  const pool = new pg.Pool({
    connectionString,
    max: poolSize,
    options: '-c TimeZone=UTC',
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        parsers[oid] ?? pg.types.getTypeParser(oid, format ?? 'text')) as typeof pg.types.getTypeParser,
    },
  });
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  return { db, kind: 'postgres', close: () => db.destroy() };
}

/** PGlite's default start parameters turn fsync off; the system of record keeps it on. */
const embeddedStartParams = PGlite.defaultStartParams.filter((parameter) => parameter !== '-F');

async function openEmbedded(options: OpenOptions): Promise<Database> {
  let releaseLock: (() => Promise<void>) | undefined;
  let dataDir: string | undefined;
  if (!options.inMemory) {
    dataDir = path.resolve(options.dataDir ?? './data');
    mkdirSync(dataDir, { recursive: true });
    try {
      // PGlite has no lock of its own: a second process on the same directory would corrupt it.
      releaseLock = await lockfile.lock(dataDir, {
        lockfilePath: path.join(dataDir, 'service.lock'),
        // PGlite runs on the event loop: a long query delays the lock's refresh, so the lock is
        // only judged stale (taken over from a crashed process) after a minute without one.
        stale: 60_000,
        update: 10_000,
      });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ELOCKED') throw new DataDirLockedError(dataDir);
      throw error;
    }
  }
  try {
    const pglite = await PGlite.create({
      dataDir: dataDir ? path.join(dataDir, 'pgdata') : undefined,
      startParams: embeddedStartParams,
      parsers,
    });
    await pglite.exec(`set TimeZone = 'UTC'`);
    const db = new Kysely<DB>({ dialect: new PGliteDialect(pglite) });
    return {
      db,
      kind: 'embedded',
      close: async () => {
        await db.destroy();
        await pglite.close();
        await releaseLock?.();
      },
    };
  } catch (error) {
    await releaseLock?.();
    throw error;
  }
}
