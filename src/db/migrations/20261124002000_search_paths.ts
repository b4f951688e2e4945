import { type Kysely, sql } from 'kysely';

/**
 * Access paths for searching a study's participants (E1), found with the search bench
 * (`npm run bench -- search --explain`, 1,000,000 people, 100,000 participants, 3,000,000 rows
 * of participation history):
 *
 * - LAST_CONTACT_DATE sorts by `coalesce(last_contact_at, -infinity)` descending and
 *   `coalesce(last_contact_at, infinity)` ascending (src/search/compile.ts, orderedNulls): nulls
 *   last either way, on a key that is never null. One index per direction, in that order, lets
 *   the planner walk people newest (or oldest) contact first and stop after a page of matches,
 *   and lets a deep page start at its cursor; they replace the plain index, which served
 *   neither (its backward scan puts nulls first). Without them, a page sorted by last contact
 *   sorted every candidate.
 * - A participant status filter reads one range of `participants_by_status` instead of
 *   scanning the whole participation history (every study's participants); with the person id
 *   included, the exact count reads the index alone.
 * - `people_live` answers "is this person not deleted", which every E1 query asks of every
 *   candidate, from the index alone, without visiting the people row.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop index people_by_last_contact;
    create index people_by_last_contact_desc on people (workspace_id, coalesce(last_contact_at, '-infinity'::timestamptz), person_id) where deleted_at is null;
    create index people_by_last_contact_asc on people (workspace_id, coalesce(last_contact_at, 'infinity'::timestamptz), person_id) where deleted_at is null;
    create index people_live on people (workspace_id, person_id) where deleted_at is null;
    create index participants_by_status on participants (workspace_id, study_id, status, participant_id) include (person_id);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop index participants_by_status;
    drop index people_live;
    drop index people_by_last_contact_asc;
    drop index people_by_last_contact_desc;
    create index people_by_last_contact on people (workspace_id, last_contact_at, person_id) where deleted_at is null;
  `.execute(db);
}
