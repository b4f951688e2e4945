import { type Kysely, sql } from 'kysely';

/**
 * Trigram indexes for the substring filters (CONTAINS, NOT_CONTAINS, STARTS_WITH) on the PERSON
 * names that are columns of people. Search compiles them to `lower(v) like '%…%'` and `lower(v)
 * like '…%'` (src/search/compile.ts), which a GIN index of `lower(v) gin_trgm_ops` answers; the
 * former `strpos`/`starts_with` forms could only be answered by reading every person (an email
 * CONTAINS at 1,000,000 people: 0.4–0.7 s; with the index, about 1 ms for a rare needle).
 * Needles of fewer than three characters give the index no trigram to look up, and the planner
 * then prices a scan instead, as before.
 *
 * - The indexes do not lead with workspace_id (migrate.test.ts lists them as exceptions). A GIN
 *   index can (btree_gin), but a workspace is one key whose posting list holds all its people:
 *   intersecting it with the needle's trigrams made the same email CONTAINS several times slower
 *   (1M people, 90% in one workspace); the workspace is checked on the few rows the trigrams find.
 * - Partial, `where deleted_at is null`, as every search target reads only live people.
 * - NAME is left out: its value, `nullif(concat_ws(' ', …), '')` (src/search/catalogue.ts), calls
 *   concat_ws, which is STABLE, and an index expression must be IMMUTABLE. Its filters scan.
 * - Custom STRING properties (jsonb) get none: see the commit that added this migration.
 *
 * pg_trgm is a trusted extension (PostgreSQL 13 on): a database owner without superuser may
 * create it. The embedded store loads it (src/db/database.ts).
 */
/**
 * Email only. Each trigram index costs an import dearly: with the four columns of people that hold
 * text (email, first and last name, phone) the 1,000,000-row import bench fell from 22,300 to
 * 15,200 rows/s (PostgreSQL CPU 30 s to 55 s; a 64 MB pending list changed nothing), and with
 * email's alone to 18,600 (43 s). Email is the text most searched by substring; the others scan,
 * as before.
 */
const columns = ['email'] as const;

export const trigramIndexName = (column: (typeof columns)[number]) => `people_${column}_trgm`;

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create extension if not exists pg_trgm`.execute(db);
  for (const column of columns) {
    await sql`create index ${sql.id(trigramIndexName(column))} on people using gin (lower(${sql.ref(column)}) gin_trgm_ops) where deleted_at is null`.execute(db);
  }
}

/** Leaves the extension: it may have been there before, and other objects may use it. */
export async function down(db: Kysely<unknown>): Promise<void> {
  for (const column of columns) await sql`drop index if exists ${sql.id(trigramIndexName(column))}`.execute(db);
}
