import { type Kysely, sql } from 'kysely';

/**
 * Sessions booked in the person's own time zone.
 *
 * - study_schedules: a study's booking rules (session length, buffers, notice, horizon, daily cap,
 *   capacity, the person's window to move or cancel, reminder offsets). One row per study.
 * - study_hosts: the workspace users who host the study's sessions, each with weekly hours in an
 *   IANA time zone and date overrides. Wall times are kept as the host wrote them: the instants
 *   they stand for are computed per date, so a daylight-saving change moves nothing by an hour.
 * - sessions: one occurrence of a host's time in a study, with its capacity and the places booked.
 *   A booking takes a place with one conditional update (`booked < capacity`), under the host's
 *   row lock, which is also what keeps one host's sessions in several studies from overlapping.
 * - bookings: a participant's place in a session; at most one live (BOOKED) per participant.
 *   A move keeps the booking (and its calendar UID) and raises its sequence, as RFC 5545 wants.
 *
 * participant_links gains the SCHEDULING purpose: the page that lists open times, or, once booked,
 * the booking with its move and cancel buttons (every confirmation carries one).
 *
 * Setting interviewStartTime by PATCH stays apart from all this: it holds no session.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table study_schedules (
      workspace_id text not null,
      study_id text not null,
      duration_minutes integer check (duration_minutes between 5 and 720),
      buffer_before_minutes integer not null default 0 check (buffer_before_minutes between 0 and 720),
      buffer_after_minutes integer not null default 0 check (buffer_after_minutes between 0 and 720),
      minimum_notice_minutes integer not null default 240 check (minimum_notice_minutes between 0 and 129600),
      horizon_days integer not null default 30 check (horizon_days between 1 and 365),
      daily_cap integer check (daily_cap between 1 and 100),
      capacity integer not null default 1 check (capacity between 1 and 100),
      slot_interval_minutes integer check (slot_interval_minutes between 5 and 720),
      person_change_cutoff_minutes integer default 1440 check (person_change_cutoff_minutes between 0 and 43200),
      reminder_offsets_minutes integer[] not null default '{1440,60}',
      created_at timestamptz not null,
      updated_at timestamptz not null,
      primary key (workspace_id, study_id),
      foreign key (workspace_id, study_id) references studies on delete cascade
    );
    create table study_hosts (
      workspace_id text not null,
      study_id text not null,
      user_id text not null,
      position integer not null,
      time_zone text not null,
      weekly_hours jsonb not null,
      overrides jsonb not null default '[]',
      created_at timestamptz not null,
      updated_at timestamptz not null,
      primary key (workspace_id, study_id, user_id),
      foreign key (workspace_id, study_id) references studies on delete cascade,
      foreign key (workspace_id, user_id) references users
    );
    create index study_hosts_of_user on study_hosts (workspace_id, user_id);
    create table sessions (
      workspace_id text not null,
      session_id text not null,
      study_id text not null,
      host_user_id text not null,
      starts_at timestamptz not null,
      ends_at timestamptz not null,
      buffer_before_minutes integer not null,
      buffer_after_minutes integer not null,
      capacity integer not null check (capacity >= 1),
      booked integer not null default 0 check (booked >= 0),
      created_at timestamptz not null,
      updated_at timestamptz not null,
      primary key (workspace_id, session_id),
      unique (workspace_id, study_id, host_user_id, starts_at),
      check (ends_at > starts_at),
      foreign key (workspace_id, study_id) references studies on delete cascade,
      foreign key (workspace_id, host_user_id) references users
    );
    create index sessions_of_host on sessions (workspace_id, host_user_id, starts_at) where booked > 0;
    create table bookings (
      workspace_id text not null,
      booking_id text not null,
      study_id text not null,
      participant_id text not null,
      person_id text not null,
      session_id text not null,
      status text not null check (status in ('BOOKED', 'CANCELED')),
      booked_by text not null check (booked_by in ('PERSON', 'TEAM')),
      booked_by_user_id text,
      person_time_zone text,
      sequence integer not null default 0,
      cancel_reason text,
      canceled_by text check (canceled_by in ('PERSON', 'TEAM')),
      canceled_by_user_id text,
      canceled_at timestamptz,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      primary key (workspace_id, booking_id),
      foreign key (workspace_id, session_id) references sessions,
      foreign key (workspace_id, participant_id) references participants on delete cascade,
      foreign key (workspace_id, study_id) references studies on delete cascade
    );
    create unique index bookings_live_of_participant on bookings (workspace_id, participant_id) where status = 'BOOKED';
    create index bookings_of_session on bookings (workspace_id, session_id) where status = 'BOOKED';
    create index bookings_of_study on bookings (workspace_id, study_id, booking_id);
    create index bookings_of_person on bookings (workspace_id, person_id);
    alter table participant_links drop constraint participant_links_purpose_check;
    alter table participant_links add constraint participant_links_purpose_check check (purpose in ('SCREENER', 'CONSENT', 'WITHDRAWAL', 'SCHEDULING'));
  `.execute(db);
  await sql`
    do $$
    declare t text;
    begin
      foreach t in array array['study_schedules', 'study_hosts', 'sessions', 'bookings'] loop
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
    drop table bookings; drop table sessions; drop table study_hosts; drop table study_schedules;
    delete from participant_links where purpose = 'SCHEDULING';
    alter table participant_links drop constraint participant_links_purpose_check;
    alter table participant_links add constraint participant_links_purpose_check check (purpose in ('SCREENER', 'CONSENT', 'WITHDRAWAL'));
  `.execute(db);
}
