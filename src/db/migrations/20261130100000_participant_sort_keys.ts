import { type Kysely, sql } from 'kysely';

/**
 * INTERVIEW_START_TIME's sort keys, stored as LAST_CONTACT_DATE's are (20261130000000): a
 * participant without a booked session sorts last either way. With an index per direction by
 * study, a study's page sorted by session walks the study's participants in that order and
 * stops after a page of matches; a deep page starts at its cursor, also under row-level
 * security. Before, a page sorted every match: 8,017 SCHEDULED participants of a 100,000-strong
 * study took 160 ms to sort for a 25-row page.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table participants
      add column interview_start_key_asc timestamptz generated always as (coalesce(interview_start_time, 'infinity'::timestamptz)) stored,
      add column interview_start_key_desc timestamptz generated always as (coalesce(interview_start_time, '-infinity'::timestamptz)) stored;
    create index participants_by_session_asc on participants (workspace_id, study_id, interview_start_key_asc, participant_id);
    create index participants_by_session_desc on participants (workspace_id, study_id, interview_start_key_desc, participant_id);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop index participants_by_session_desc;
    drop index participants_by_session_asc;
    alter table participants drop column interview_start_key_desc, drop column interview_start_key_asc;
  `.execute(db);
}
