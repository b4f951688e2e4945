import { type Kysely, sql } from 'kysely';

/**
 * Participants: a person taking part in a study, and the history of their status changes.
 *
 * The participants rows of every study are also the panel's participation history, which the
 * derived PERSON names (interviews completed in the last 90 days, show rate, …) count. So each
 * row carries what those counts need as typed columns, and partial indexes hold exactly the rows
 * each count reads:
 * - `study_kind`, copied from the study's type (INTERVIEWS and GROUP_INTERVIEW are both
 *   INTERVIEW), so "interviews completed" is one index range, not a join to studies;
 * - `completed_at`, set once when the participant first reaches COMPLETED (hiding a completed
 *   participant later does not undo a completed session);
 * - `no_show_count`, incremented on every move to NO_SHOW (a no-show that was rescheduled and then
 *   completed still missed a session).
 *
 * Status events record every change of status, approval status or screener state. `tx_id` is the
 * writing transaction's id: a poller reads only events of transactions older than every running
 * one (pg_snapshot_xmin), in (tx_id, event_id) order, so an event committed late by a slow
 * transaction is never skipped. The same column is added to study status events.
 *
 * Consent submissions record a person's consent: on a signup form, or for a study's consent form
 * (a participant's `consent_submitted_at` says the latter happened, for PARTICIPANT filters).
 *
 * `people.last_contact_at` is the latest contact (an invitation or a screener sent), kept in the
 * transaction that records the contact, so LAST_CONTACT_DATE sorts by an index in sort order.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table participants (
      workspace_id text not null,
      participant_id text not null,
      study_id text not null,
      person_id text not null,
      study_kind text not null check (study_kind in ('INTERVIEW', 'UNMODERATED_TEST', 'SURVEY')),
      status text not null default 'NOT_STARTED'
        check (status in ('NOT_STARTED', 'INVITED', 'SCHEDULED', 'COMPLETED', 'NO_SHOW', 'CANCELED', 'HIDDEN')),
      status_before_hidden text check (status_before_hidden in ('NOT_STARTED', 'INVITED', 'SCHEDULED', 'COMPLETED', 'NO_SHOW', 'CANCELED')),
      approval_status text not null default 'PENDING_REVIEW' check (approval_status in ('PENDING_REVIEW', 'APPROVED', 'REJECTED')),
      screener_state text not null default 'NOT_SENT'
        check (screener_state in ('NOT_SENT', 'SCREENER_SENT', 'SUBMITTED', 'QUALIFIED', 'DISQUALIFIED')),
      invited_at timestamptz,
      approved_at timestamptz,
      screener_sent_at timestamptz,
      screener_submitted_at timestamptz,
      interview_start_time timestamptz,
      test_completed_at timestamptz,
      completed_at timestamptz,
      no_show_count integer not null default 0 check (no_show_count >= 0),
      rating smallint check (rating between 1 and 5),
      note text,
      note_created_by_user_id text,
      quota_group text,
      consent_submitted_at timestamptz,
      added_by_user_id text,
      added_at timestamptz not null,
      updated_at timestamptz not null,
      primary key (workspace_id, participant_id),
      check ((status = 'HIDDEN') = (status_before_hidden is not null)),
      foreign key (workspace_id, study_id) references studies on delete cascade,
      foreign key (workspace_id, person_id) references people
    );
    create unique index participants_once_per_study on participants (workspace_id, study_id, person_id);
    create index participants_of_study on participants (workspace_id, study_id, participant_id);
    create index participants_of_person on participants (workspace_id, person_id, study_id);
    create index participants_completed on participants (workspace_id, person_id, study_kind, completed_at) where completed_at is not null;
    create index participants_invited on participants (workspace_id, person_id, invited_at) where invited_at is not null;
    create index participants_no_shows on participants (workspace_id, person_id, study_kind) include (no_show_count) where no_show_count > 0;
    create index participants_rated on participants (workspace_id, person_id) include (rating) where rating is not null;

    -- A person's consent, given on a signup form or recorded for a study's consent form.
    create table consent_submissions (
      workspace_id text not null,
      consent_submission_id text not null,
      person_id text not null,
      consent_form_id text,
      study_id text,
      submitted_at timestamptz not null,
      primary key (workspace_id, consent_submission_id),
      foreign key (workspace_id, person_id) references people,
      foreign key (workspace_id, study_id) references studies on delete cascade
    );
    create index consent_submissions_of_person on consent_submissions (workspace_id, person_id, submitted_at);

    alter table people add column last_contact_at timestamptz;
    create index people_by_last_contact on people (workspace_id, last_contact_at, person_id) where deleted_at is null;

    create table participant_status_events (
      workspace_id text not null,
      event_id bigint generated always as identity,
      tx_id xid8 not null default pg_current_xact_id(),
      study_id text not null,
      participant_id text not null,
      person_id text not null,
      field text not null check (field in ('status', 'approvalStatus', 'screenerState')),
      from_value text,
      to_value text not null,
      is_contact boolean not null default false,
      user_id text,
      occurred_at timestamptz not null,
      primary key (workspace_id, event_id),
      foreign key (workspace_id, participant_id) references participants on delete cascade
    );
    create index participant_status_events_in_commit_order on participant_status_events (workspace_id, tx_id, event_id);
    create index participant_status_events_of_study on participant_status_events (workspace_id, study_id, tx_id, event_id);
    create index participant_status_events_contacts on participant_status_events (workspace_id, person_id, occurred_at) where is_contact;

    alter table study_status_events add column tx_id xid8 not null default pg_current_xact_id();
    create index study_status_events_in_commit_order on study_status_events (workspace_id, tx_id, event_id);
    create index study_status_events_of_study on study_status_events (workspace_id, study_id, tx_id, event_id);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop index study_status_events_of_study;
    drop index study_status_events_in_commit_order;
    alter table study_status_events drop column tx_id;
    drop table participant_status_events;
    drop index people_by_last_contact;
    alter table people drop column last_contact_at;
    drop table consent_submissions;
    drop table participants;
  `.execute(db);
}
