import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import type { BuildOptions } from '../src/app.js';
import type { Config } from '../src/config.js';
import { type Database, openDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { startTestService, testDatabaseUrl, type TestService } from './harness.js';

export interface PrivateDatabase {
  database: Database;
  /** Closes the database and, on PostgreSQL, drops it. */
  drop(): Promise<void>;
}

/**
 * On PostgreSQL: a migrated database of its own, created beside the run's (`baseUrl`'s); its URL,
 * and drop(), which drops it (closing every connection to it).
 */
export async function createPrivatePostgresDatabase(baseUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `test_private_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const admin = await openDatabase({ databaseUrl: baseUrl, poolSize: 1 });
  await sql`create database ${sql.id(name)}`.execute(admin.db);
  const url = new URL(baseUrl);
  url.pathname = `/${name}`;
  const drop = async () => {
    await sql`drop database if exists ${sql.id(name)} with (force)`.execute(admin.db);
    await admin.close();
  };
  try {
    const migrating = await openDatabase({ databaseUrl: url.toString(), poolSize: 1 });
    try {
      await migrateToLatest(migrating.db);
    } finally {
      await migrating.close();
    }
  } catch (error) {
    await drop();
    throw error;
  }
  return { url: url.toString(), drop };
}

/**
 * A migrated database of its own, for a test of work that sweeps every workspace (system jobs):
 * on the run's shared PostgreSQL database it would change other files' rows, and their services'
 * work would change its rows. On PostgreSQL a database created beside the run's (and dropped by
 * drop()); on the embedded store a fresh in-memory one, as every file has anyway.
 */
export async function openPrivateDatabase(): Promise<PrivateDatabase> {
  if (!testDatabaseUrl) {
    const database = await openDatabase({ inMemory: true });
    await migrateToLatest(database.db);
    return { database, drop: () => database.close() };
  }
  const created = await createPrivatePostgresDatabase(testDatabaseUrl);
  const database = await openDatabase({ databaseUrl: created.url, poolSize: 5 });
  return {
    database,
    drop: async () => {
      await database.close();
      await created.drop();
    },
  };
}

/** A test service on a private database (see openPrivateDatabase); stop() also drops the database. */
export async function startPrivateTestService(overrides: Partial<Config> = {}, options: Partial<BuildOptions> = {}): Promise<TestService> {
  const { database, drop } = await openPrivateDatabase();
  try {
    const service = await startTestService(overrides, { ...options, database });
    return {
      ...service,
      stop: async () => {
        await service.stop();
        await drop();
      },
    };
  } catch (error) {
    await drop();
    throw error;
  }
}
