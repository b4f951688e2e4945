import { type Kysely, sql } from 'kysely';

/**
 * Consent signed by the person on the participant's page (issue 33, item 5), and its withdrawal.
 *
 * - `source` gains PARTICIPANT_PAGE: the person signed it themselves, through their link.
 * - `signed_name`: the full name the person typed (personal data: masked for tokens without the
 *   personal-data right); `choices`: each optional choice of the version by id, true or false;
 *   `link_id`: the participant link the page was opened with (kept as text: links are deleted
 *   with their person, and the consent with them by the purge).
 * - `copy_sent_at`: when the person's signed copy (a PDF by email) was handed to SMTP; the copy's
 *   job checks it first, so a retried job never sends it twice.
 * - `withdrawn_at`: when the person withdrew the consent (the withdrawal link in that email).
 *   A withdrawn consent stays, as the record of what was agreed and until when.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table consent_submissions
      add column signed_name text,
      add column choices jsonb,
      add column link_id text,
      add column copy_sent_at timestamptz,
      add column withdrawn_at timestamptz,
      drop constraint consent_submissions_source,
      add constraint consent_submissions_source check (source in ('API', 'SIGNUP_FORM', 'PAPER', 'EMAIL', 'VERBAL', 'IMPORT', 'OTHER', 'PARTICIPANT_PAGE')),
      add constraint consent_submissions_signed_name check (signed_name is null or char_length(signed_name) between 1 and 200),
      add constraint consent_submissions_page_signed check (source <> 'PARTICIPANT_PAGE' or (signed_name is not null and choices is not null and study_id is not null));
    create index consent_submissions_of_study_person on consent_submissions (workspace_id, study_id, person_id) where study_id is not null;
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    drop index consent_submissions_of_study_person;
    delete from consent_submissions where source = 'PARTICIPANT_PAGE';
    alter table consent_submissions
      drop constraint consent_submissions_page_signed,
      drop constraint consent_submissions_signed_name,
      drop constraint consent_submissions_source,
      add constraint consent_submissions_source check (source in ('API', 'SIGNUP_FORM', 'PAPER', 'EMAIL', 'VERBAL', 'IMPORT', 'OTHER')),
      drop column withdrawn_at,
      drop column copy_sent_at,
      drop column link_id,
      drop column choices,
      drop column signed_name;
  `.execute(db);
}
