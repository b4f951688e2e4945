import { openDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { sql } from 'kysely';

/**
 * On PostgreSQL every test file shares one freshly migrated database (tests isolate themselves
 * by workspace, as tenants do). On the embedded store each file opens its own in-memory one.
 */
export async function setup() {
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) return;
  const database = await openDatabase({ databaseUrl, poolSize: 1 });
  try {
    await sql`drop schema if exists public cascade`.execute(database.db);
    await sql`create schema public`.execute(database.db);
    await migrateToLatest(database.db);
  } finally {
    await database.close();
  }
}
