import { type Kysely, Migrator } from 'kysely';
import { migrations } from './migrations/index.js';

export interface MigrationOutcome {
  migrated: string[];
}

/** Applies every pending migration; safe to run from several processes at once (Kysely locks). */
// Migrations run on an untyped handle: they must never depend on the live DB type.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export async function migrateToLatest(db: Kysely<any>): Promise<MigrationOutcome> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return { migrated: (results ?? []).filter((result) => result.status === 'Success').map((result) => result.migrationName) };
}
