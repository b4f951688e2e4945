import { type Kysely, sql } from 'kysely';

/**
 * What the in-process search counts (src/search/counts/) are derived from, and how they learn of
 * every change:
 * - `people.person_no`, a small integer per person, so a workspace's people are numbered densely
 *   enough to be positions in typed arrays and bitsets;
 * - `search_changes`, a log of the people whose searchable rows changed, one row per statement,
 *   written by triggers in the transaction of the change and ordered by that transaction's id (xid8). Triggers, not the
 *   services, write it: no writer (a service, an import's set-based SQL, a purge, a migration or
 *   a hand-run fix) can change a searched row without its change being logged, and a crash can
 *   lose neither without the other;
 * - `search_change_horizons`, how far pruning has gone per workspace: an instance whose counts are
 *   older than that rebuilds them instead of catching up.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create sequence people_person_no_seq as integer;
    alter table people add column person_no integer;
    update people set person_no = nextval('people_person_no_seq');
    alter table people alter column person_no set default nextval('people_person_no_seq');
    alter table people alter column person_no set not null;
    alter sequence people_person_no_seq owned by people.person_no;
    create unique index people_by_number on people (workspace_id, person_no);

    create table search_changes (
      workspace_id text not null,
      changed_xid xid8 not null default pg_current_xact_id(),
      change_no bigint generated always as identity,
      person_ids text[] not null,
      logged_at timestamptz not null default now(),
      primary key (workspace_id, changed_xid, change_no)
    );

    create table search_change_horizons (
      workspace_id text primary key,
      pruned_through xid8 not null
    );

    create function search_log_changed_people() returns trigger language plpgsql as $$
    begin
      -- One row per statement and workspace, not per person: an import's batch of 5,000 upserts logs one row.
      insert into search_changes (workspace_id, person_ids) select workspace_id, array_agg(distinct person_id) from changed_rows group by workspace_id;
      return null;
    end
    $$;
  `.execute(db);
  for (const table of ['people', 'participants', 'population_members']) {
    for (const [event, transition] of [['insert', 'new'], ['update', 'new'], ['delete', 'old']] as const) {
      await sql`
        create trigger ${sql.raw(`${table}_search_log_${event}`)} after ${sql.raw(event)} on ${sql.raw(table)}
        referencing ${sql.raw(transition)} table as changed_rows
        for each statement execute function search_log_changed_people()
      `.execute(db);
    }
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const table of ['people', 'participants', 'population_members']) {
    for (const event of ['insert', 'update', 'delete']) await sql`drop trigger ${sql.raw(`${table}_search_log_${event}`)} on ${sql.raw(table)}`.execute(db);
  }
  await sql`
    drop function search_log_changed_people();
    drop table search_change_horizons;
    drop table search_changes;
    alter table people drop column person_no;
  `.execute(db);
}
