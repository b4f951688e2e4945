import { type Kysely, sql } from 'kysely';

/**
 * The audit trail (issue 36, item 4).
 *
 * - audit_events: one row per successful write (a request answered 2xx/3xx that is not a read)
 *   and per state change the service makes itself (jobs, provider reports). Ids, operation
 *   names, resource types and states only: never an email, a name or a property's value, so a
 *   purged person leaves nothing behind. `before_state`/`after_state` hold a status (a study's,
 *   a participant's, an incentive's, a message's) when the write changed one.
 *   Keyset-paged newest first by (occurred_at, audit_event_id); the partial and composite indexes
 *   serve the reads by actor and by resource (docs/api/audit.md shows the plans).
 * - audit_settings: a workspace's retention in days (absent: the default, 365).
 * - participant_status_events.actor_kind and study_status_events.actor_kind: who made the
 *   change, USER (user_id says who), PARTICIPANT (on the participant's pages) or SERVICE (jobs);
 *   null on rows written before this migration.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table audit_events (
      workspace_id text not null,
      audit_event_id text not null,
      occurred_at timestamptz not null,
      actor_kind text not null check (actor_kind in ('USER', 'PARTICIPANT', 'VISITOR', 'SERVICE', 'OPERATOR')),
      actor_user_id text,
      actor_credential_id text,
      actor_person_id text,
      actor_service text,
      operation_id text not null,
      method text,
      resource_type text,
      resource_id text,
      request_id text,
      status_code integer,
      before_state text,
      after_state text,
      primary key (workspace_id, audit_event_id)
    );
    create index audit_events_by_time on audit_events (workspace_id, occurred_at desc, audit_event_id desc);
    create index audit_events_by_actor on audit_events (workspace_id, actor_user_id, occurred_at desc, audit_event_id desc) where actor_user_id is not null;
    create index audit_events_by_resource on audit_events (workspace_id, resource_type, resource_id, occurred_at desc, audit_event_id desc) where resource_id is not null;
    create table audit_settings (
      workspace_id text primary key,
      retention_days integer not null check (retention_days between 7 and 3650),
      updated_by_user_id text,
      updated_at timestamptz not null
    );
    alter table participant_status_events add column actor_kind text check (actor_kind in ('USER', 'PARTICIPANT', 'SERVICE'));
    alter table study_status_events add column actor_kind text check (actor_kind in ('USER', 'PARTICIPANT', 'SERVICE'));
  `.execute(db);
  await sql`
    do $$
    declare t text;
    begin
      foreach t in array array['audit_events', 'audit_settings'] loop
        execute format('alter table %I enable row level security', t);
        execute format(
          'create policy tenant_isolation on %I using (workspace_id = current_setting(%L, true)) with check (workspace_id = current_setting(%L, true))',
          t, 'app.workspace_id', 'app.workspace_id');
      end loop;
    end
    $$;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table study_status_events drop column actor_kind;
    alter table participant_status_events drop column actor_kind;
    drop table audit_settings;
    drop table audit_events;
  `.execute(db);
}
