import { type Kysely, sql } from 'kysely';
import { trigramIndexName } from './20261124100000_text_search.js';

/**
 * The email trigram index is kept on the embedded store only.
 *
 * On PostgreSQL every request's statements run as the tenant role under row-level security, and
 * `LIKE` is not leakproof, so no tenant statement can use the index (20261129000000_people_email_key):
 * an email CONTAINS as the tenant read the workspace's emails in 458 ms at 1,000,000 people, the
 * index in place, where the owner's bitmap scan took 3 ms. Substrings are answered there by the
 * search counts in process, and pages are read by the count's matches. Yet every write kept the
 * index up: a 5,000-row import statement took 227 ms with it and 171 ms without (25% of it), and
 * the import bench fell short of 24,000 rows/s. The embedded store runs requests as the owner,
 * where the index serves the statements that filter in SQL, so it stays there.
 */
const onPostgresServer = async (db: Kysely<unknown>) => {
  const { rows } = await sql<{ embedded: boolean }>`select position('PGlite' in version()) > 0 as embedded`.execute(db);
  return !rows[0]!.embedded;
};

export async function up(db: Kysely<unknown>): Promise<void> {
  if (await onPostgresServer(db)) await sql`drop index if exists ${sql.id(trigramIndexName('email'))}`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  if (await onPostgresServer(db)) {
    await sql`create index if not exists ${sql.id(trigramIndexName('email'))} on people using gin (email_key gin_trgm_ops) where deleted_at is null`.execute(db);
  }
}
