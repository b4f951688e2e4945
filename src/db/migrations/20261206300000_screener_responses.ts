import { type Kysely, sql } from 'kysely';

/**
 * A participant's submission of a study's screener, one per participant (the primary key), beside
 * its answers (screener_answers, one per question version): which revision was answered, the
 * outcome the rules gave and the rule that decided it (the team may read it; the person is never
 * shown it), when the person opened the page and sent it, how long that took, and whether the
 * hidden field robots fill was filled (such a submission is left for review, whatever the rules say).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table screener_responses (
      workspace_id text not null,
      participant_id text not null,
      study_id text not null,
      person_id text not null,
      revision integer not null,
      outcome text not null check (outcome in ('QUALIFIED', 'DISQUALIFIED', 'NEEDS_REVIEW')),
      decided_by jsonb not null,
      suspected_bot boolean not null default false,
      started_at timestamptz,
      submitted_at timestamptz not null,
      seconds_to_complete integer check (seconds_to_complete >= 0),
      link_id text,
      primary key (workspace_id, participant_id),
      foreign key (workspace_id, participant_id) references participants on delete cascade
    );
    create index screener_responses_of_study on screener_responses (workspace_id, study_id, participant_id);
  `.execute(db);
  await sql`
    do $$
    begin
      execute format('alter table %I enable row level security', 'screener_responses');
      execute format(
        'create policy tenant_isolation on %I using (workspace_id = current_setting(%L, true)) with check (workspace_id = current_setting(%L, true))',
        'screener_responses', 'app.workspace_id', 'app.workspace_id');
    end
    $$;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table screener_responses`.execute(db);
}
