import { type Kysely, sql } from 'kysely';

/**
 * A study's quota groups (the reference's STUDY_QUOTA_GROUP): each a condition over the screener's
 * answers and the person's properties, a cap, and the places filled so far. A qualified
 * submission takes a place with one conditional update (`filled = filled + 1 where filled < cap`)
 * in its own transaction, so the database keeps a group from ever holding more than its cap and a
 * submission rolled back gives its place back. No personal data: the condition is the team's, the
 * counter is a number (a person's place is their participant's quota_group).
 *
 * screener_responses.outcome widens to OVER_QUOTA: qualified by the rules, but no matching group
 * had a place (the participant's screenerState is then DISQUALIFIED).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table quota_groups (
      workspace_id text not null,
      quota_group_id text not null,
      study_id text not null,
      name text not null,
      position integer not null,
      cap integer not null check (cap > 0),
      filled integer not null default 0 check (filled >= 0),
      answers jsonb not null default '[]',
      filter jsonb,
      uses_personal_data boolean not null default false,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      primary key (workspace_id, quota_group_id),
      foreign key (workspace_id, study_id) references studies on delete cascade
    );
    create unique index quota_groups_name on quota_groups (workspace_id, study_id, lower(name));
    create index quota_groups_of_study on quota_groups (workspace_id, study_id, position);
    alter table screener_responses drop constraint screener_responses_outcome_check;
    alter table screener_responses add constraint screener_responses_outcome_check check (outcome in ('QUALIFIED', 'DISQUALIFIED', 'NEEDS_REVIEW', 'OVER_QUOTA'));
  `.execute(db);
  await sql`
    do $$
    begin
      execute format('alter table %I enable row level security', 'quota_groups');
      execute format(
        'create policy tenant_isolation on %I using (workspace_id = current_setting(%L, true)) with check (workspace_id = current_setting(%L, true))',
        'quota_groups', 'app.workspace_id', 'app.workspace_id');
    end
    $$;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop table quota_groups;
    alter table screener_responses drop constraint screener_responses_outcome_check;
    alter table screener_responses add constraint screener_responses_outcome_check check (outcome in ('QUALIFIED', 'DISQUALIFIED', 'NEEDS_REVIEW'));
  `.execute(db);
}
