import { type Kysely, sql } from 'kysely';

/**
 * When a participant first sent their screener's form and it was refused (an answer missing or
 * invalid): the funnel's "started" counts them beside those who submitted (a submission is a start
 * too, and is not written here). One row per participant, the first such post's time; it goes with
 * the participant, and with the person's erasure (src/families/screener-responses/queries.ts).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table screener_starts (
      workspace_id text not null,
      participant_id text not null,
      study_id text not null,
      started_at timestamptz not null,
      primary key (workspace_id, participant_id),
      foreign key (workspace_id, participant_id) references participants on delete cascade
    );
  `.execute(db);
  await sql`
    do $$
    begin
      execute format('alter table %I enable row level security', 'screener_starts');
      execute format(
        'create policy tenant_isolation on %I using (workspace_id = current_setting(%L, true)) with check (workspace_id = current_setting(%L, true))',
        'screener_starts', 'app.workspace_id', 'app.workspace_id');
    end
    $$;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table screener_starts`.execute(db);
}
