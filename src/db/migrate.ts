import { type Kysely, Migrator, sql } from 'kysely';
import { migrations } from './migrations/index.js';

export interface MigrationOutcome {
  migrated: string[];
}

/** Applies every pending migration; safe to run from several processes at once (Kysely locks). */
// Migrations run on an untyped handle: they must never depend on the live DB type.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function migrateToLatest(db: Kysely<any>): Promise<MigrationOutcome> {
  if (await isUpToDate(db)) return { migrated: [] };
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return { migrated: (results ?? []).filter((result) => result.status === 'Success').map((result) => result.migrationName) };
}

/**
 * Whether the database has applied exactly the migrations this code knows. Every start asks this;
 * the Migrator (its lock table, a locking transaction, its checks) runs only when the answer is
 * no: it took 160-215 ms of an embedded store's start (issue 12). Anything else (pending, unknown
 * or missing names) goes to the Migrator, which applies or refuses as before.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function isUpToDate(db: Kysely<any>): Promise<boolean> {
  const { rows: tables } = await sql<{ exists: boolean }>`select to_regclass('kysely_migration') is not null as exists`.execute(db);
  if (!tables[0]?.exists) return false;
  const { rows } = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(db);
  const known = Object.keys(migrations).sort();
  return rows.length === known.length && rows.every((row, index) => row.name === known[index]);
}
