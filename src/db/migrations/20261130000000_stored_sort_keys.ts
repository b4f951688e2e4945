import { type Kysely, sql } from 'kysely';

/**
 * LAST_CONTACT_DATE's sort keys as stored generated columns: `last_contact_key_asc` is
 * `coalesce(last_contact_at, infinity)` and `last_contact_key_desc` is
 * `coalesce(last_contact_at, -infinity)`, the keys src/search/compile.ts (orderedNulls) sorts by
 * so that people never contacted come last either way. The two expression indexes of
 * 20261124002000_search_paths move to the columns.
 *
 * Why: searches run under row-level security, and PostgreSQL treats a COALESCE as possibly
 * leaky, so `coalesce(last_contact_at, -infinity) < $cursor` is evaluated after the policy and
 * is never an index condition: a deep page walked the index from its first entry, filtering
 * (people by last contact, a page 5,000 rows in at 1,000,000 people: hundreds of milliseconds
 * against tens for the same statement run by the owner). A comparison of a plain column is
 * leakproof and starts the scan at the cursor.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table people
      add column last_contact_key_asc timestamptz generated always as (coalesce(last_contact_at, 'infinity'::timestamptz)) stored,
      add column last_contact_key_desc timestamptz generated always as (coalesce(last_contact_at, '-infinity'::timestamptz)) stored;
    drop index people_by_last_contact_desc;
    drop index people_by_last_contact_asc;
    create index people_by_last_contact_desc on people (workspace_id, last_contact_key_desc, person_id) where deleted_at is null;
    create index people_by_last_contact_asc on people (workspace_id, last_contact_key_asc, person_id) where deleted_at is null;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop index people_by_last_contact_asc;
    drop index people_by_last_contact_desc;
    alter table people drop column last_contact_key_desc, drop column last_contact_key_asc;
    create index people_by_last_contact_desc on people (workspace_id, coalesce(last_contact_at, '-infinity'::timestamptz), person_id) where deleted_at is null;
    create index people_by_last_contact_asc on people (workspace_id, coalesce(last_contact_at, 'infinity'::timestamptz), person_id) where deleted_at is null;
  `.execute(db);
}
