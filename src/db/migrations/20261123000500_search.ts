import { type Kysely, sql } from 'kysely';

/**
 * LAST_CHANGED_AT is the one non-null sort a panel is usually read in (newest changes first):
 * with this index in sort order the planner walks it and stops after a page of matches instead
 * of sorting every match. (Sorting by person id uses the primary key.)
 *
 * Custom date-time values are read out of people.properties for filtering and sorting. Values
 * are checked on write, but a cast of one malformed stored value would fail the whole search,
 * and PostgreSQL 15 has no pg_input_is_valid: this cast answers null instead of raising.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create function search_timestamptz(value text) returns timestamptz language plpgsql stable strict as $$
    begin
      return value::timestamptz;
    exception when others then
      return null;
    end
    $$;
    create index people_by_last_change on people (workspace_id, updated_at, person_id) where deleted_at is null;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index people_by_last_change; drop function search_timestamptz(text)`.execute(db);
}
