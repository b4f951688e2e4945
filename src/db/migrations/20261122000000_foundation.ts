import { type Kysely, sql } from 'kysely';

/**
 * The foundation: workspaces, users and teams, API tokens, populations, studies with their
 * owners, screeners and templates, and the study status history. Every workspace-owned table
 * leads its keys and indexes with workspace_id, so a workspace's rows stay together and the
 * schema can later be sharded by workspace.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table service_secrets (
      name text primary key,
      value text not null,
      created_at timestamptz not null default now()
    );

    create table workspaces (
      workspace_id text primary key,
      name text not null,
      slug text not null unique,
      created_at timestamptz not null
    );

    create table users (
      workspace_id text not null references workspaces,
      user_id text not null,
      email_account_id text not null,
      email text not null,
      fullname text not null,
      job_role text not null default '',
      profile_pic text not null default '',
      status text not null check (status in ('INVITED', 'ACTIVE', 'DEACTIVATED')),
      seat text check (seat in ('SERVICE', 'RESEARCHER_FREE', 'RESEARCHER_PAID', 'LITE')),
      role text not null check (role in ('DEVELOPER', 'OBSERVER', 'RESEARCHER', 'OPS_MANAGER', 'SUPER_ADMIN', 'CUSTOM', 'COLLABORATOR')),
      created_at timestamptz not null,
      updated_at timestamptz not null,
      primary key (workspace_id, user_id)
    );
    create unique index users_email_unique on users (workspace_id, lower(email));

    create table teams (
      workspace_id text not null references workspaces,
      team_id text not null,
      name text not null,
      created_at timestamptz not null,
      primary key (workspace_id, team_id)
    );
    create unique index teams_name_unique on teams (workspace_id, lower(name));

    create table team_members (
      workspace_id text not null,
      team_id text not null,
      user_id text not null,
      primary key (workspace_id, team_id, user_id),
      foreign key (workspace_id, team_id) references teams on delete cascade,
      foreign key (workspace_id, user_id) references users on delete cascade
    );
    create index team_members_by_user on team_members (workspace_id, user_id);

    create table api_tokens (
      workspace_id text not null,
      token_id text not null,
      user_id text not null,
      token_digest text not null,
      can_read_personal_data boolean not null,
      can_read_screeners boolean not null,
      created_at timestamptz not null,
      revoked_at timestamptz,
      primary key (workspace_id, token_id),
      foreign key (workspace_id, user_id) references users on delete cascade
    );
    create unique index api_tokens_digest on api_tokens (workspace_id, token_digest);

    create table populations (
      workspace_id text not null references workspaces,
      population_id text not null,
      name text not null,
      description text not null default '',
      created_at timestamptz not null,
      primary key (workspace_id, population_id)
    );

    create table studies (
      workspace_id text not null references workspaces,
      study_id text not null,
      study_type text not null check (study_type in ('SURVEY', 'INTERVIEWS', 'UNMODERATED_TEST', 'GROUP_INTERVIEW')),
      recruitment_strategy text not null check (recruitment_strategy in ('IN_SERVICE', 'EXTERNAL')),
      recruitment_panel_provider text check (recruitment_panel_provider in ('PROVIDER_ONE', 'PROVIDER_TWO')),
      status text not null check (status in ('DRAFT', 'ACTIVE', 'PAUSED', 'CLOSED')),
      plan jsonb not null,
      created_from_template_id text,
      team_id text,
      population_id text,
      created_by_user_id text not null,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      primary key (workspace_id, study_id),
      foreign key (workspace_id, team_id) references teams,
      foreign key (workspace_id, population_id) references populations
    );
    create index studies_by_status on studies (workspace_id, status, study_id);
    create index studies_by_type on studies (workspace_id, study_type, study_id);

    create table study_owners (
      workspace_id text not null,
      study_id text not null,
      user_id text not null,
      position integer not null,
      primary key (workspace_id, study_id, user_id),
      foreign key (workspace_id, study_id) references studies on delete cascade,
      foreign key (workspace_id, user_id) references users
    );

    create table study_templates (
      workspace_id text not null references workspaces,
      study_template_id text not null,
      name text not null,
      study_type text not null,
      recruitment_strategy text not null,
      recruitment_panel_provider text,
      plan jsonb not null,
      screener jsonb,
      created_from_study_id text,
      created_by_user_id text not null,
      created_at timestamptz not null,
      primary key (workspace_id, study_template_id)
    );

    create table screeners (
      workspace_id text not null,
      screener_id text not null,
      study_id text not null,
      type text not null check (type in ('SERVICE', 'EXTERNAL_SURVEY')),
      show_scheduler_to_qualified boolean not null default false,
      qualify_by_default boolean not null default false,
      external_survey_id text,
      survey_platform_collector_id text,
      external_survey_setup_status text,
      external_survey_setup_error_code text,
      external_survey_setup_updated_at timestamptz,
      custom_link_url text,
      custom_link_tokens_json text,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      primary key (workspace_id, screener_id),
      foreign key (workspace_id, study_id) references studies on delete cascade
    );
    create unique index screeners_one_per_study on screeners (workspace_id, study_id);

    create table screener_questions (
      workspace_id text not null,
      question_id text not null,
      screener_id text not null,
      position integer not null,
      category text not null,
      type text not null,
      name text not null,
      is_required boolean not null,
      description text,
      mapped_to_property_id text,
      question_template_id text,
      primary key (workspace_id, question_id),
      foreign key (workspace_id, screener_id) references screeners on delete cascade
    );
    create index screener_questions_in_order on screener_questions (workspace_id, screener_id, position);

    create table study_status_events (
      workspace_id text not null,
      event_id bigint generated always as identity,
      study_id text not null,
      field text not null default 'status',
      from_status text,
      to_status text not null,
      user_id text,
      occurred_at timestamptz not null,
      primary key (workspace_id, event_id),
      foreign key (workspace_id, study_id) references studies on delete cascade
    );
    create index study_status_events_by_study on study_status_events (workspace_id, study_id, event_id);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop table study_status_events, screener_questions, screeners, study_templates, study_owners,
      studies, populations, api_tokens, team_members, teams, users, workspaces, service_secrets;
  `.execute(db);
}
