import { type Kysely, sql } from 'kysely';

/**
 * Consent submissions as a resource of their own (src/families/consent/): what a person agreed to
 * and how it was recorded.
 *
 * - A consent is given either for a study (`study_id`, its consent form) or on a signup form
 *   (`signup_form_id`): exactly one of the two. Rows written before this migration came from the
 *   public signup route (their signup submission names the form) or from a participant's
 *   `consentFormSubmitted` (study_id set), so each row gets one.
 * - `form_version` and `text_sha256` (the lower-case hex SHA-256 of the consent text shown) say
 *   which wording was agreed to; the text itself is not kept.
 * - `source`: how it was given: SIGNUP_FORM (the public signup route), API, PAPER, EMAIL, VERBAL,
 *   IMPORT, OTHER. `recorded_by_user_id` is the user whose token recorded it (null for a public
 *   signup), `created_at` when it was recorded (`submitted_at` is when it was given).
 * - The list route pages by id, whole workspace or per person, study or signup form: an index for
 *   each (the per-person one also serves the PERSON names CONSENT_SUBMISSIONS and
 *   CONSENT_FORM_WAS_SUBMITTED).
 * - The purge erases a deleted person's consents: a signup submission that referenced one keeps
 *   its row, with consent_submission_id set null by the foreign key (PostgreSQL 15's column list).
 * - Those two PERSON names are held by the search counts, so every write of consent rows names its
 *   person in the search change log, as participants and population members do.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table consent_submissions
      add column signup_form_id text,
      add column form_version text,
      add column text_sha256 text,
      add column source text,
      add column recorded_by_user_id text,
      add column created_at timestamptz;

    update consent_submissions as c set signup_form_id = s.signup_form_id, source = 'SIGNUP_FORM'
    from signup_submissions as s
    where s.workspace_id = c.workspace_id and s.consent_submission_id = c.consent_submission_id;
    update consent_submissions set source = 'API' where source is null;
    update consent_submissions set created_at = submitted_at;

    alter table consent_submissions
      alter column source set not null,
      alter column created_at set not null,
      add constraint consent_submissions_source check (source in ('API', 'SIGNUP_FORM', 'PAPER', 'EMAIL', 'VERBAL', 'IMPORT', 'OTHER')),
      add constraint consent_submissions_study_or_signup_form check (num_nonnulls(study_id, signup_form_id) = 1),
      add constraint consent_submissions_text_sha256 check (text_sha256 ~ '^[0-9a-f]{64}$'),
      add constraint consent_submissions_signup_form foreign key (workspace_id, signup_form_id) references signup_forms;

    drop index consent_submissions_of_person;
    create index consent_submissions_of_person on consent_submissions (workspace_id, person_id, consent_submission_id);
    create index consent_submissions_of_study on consent_submissions (workspace_id, study_id, consent_submission_id) where study_id is not null;
    create index consent_submissions_of_signup_form on consent_submissions (workspace_id, signup_form_id, consent_submission_id) where signup_form_id is not null;

    alter table signup_submissions drop constraint signup_submissions_workspace_id_consent_submission_id_fkey;
    alter table signup_submissions add constraint signup_submissions_consent_submission
      foreign key (workspace_id, consent_submission_id) references consent_submissions on delete set null (consent_submission_id);
  `.execute(db);
  for (const [event, transition] of [['insert', 'new'], ['update', 'new'], ['delete', 'old']] as const) {
    await sql`
      create trigger ${sql.raw(`consent_submissions_search_log_${event}`)} after ${sql.raw(event)} on consent_submissions
      referencing ${sql.raw(transition)} table as changed_rows
      for each statement execute function search_log_changed_people()
    `.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  for (const event of ['insert', 'update', 'delete']) await sql`drop trigger ${sql.raw(`consent_submissions_search_log_${event}`)} on consent_submissions`.execute(db);
  await sql`
    alter table signup_submissions drop constraint signup_submissions_consent_submission;
    alter table signup_submissions add constraint signup_submissions_workspace_id_consent_submission_id_fkey
      foreign key (workspace_id, consent_submission_id) references consent_submissions;
    drop index consent_submissions_of_signup_form;
    drop index consent_submissions_of_study;
    drop index consent_submissions_of_person;
    create index consent_submissions_of_person on consent_submissions (workspace_id, person_id, submitted_at);
    alter table consent_submissions
      drop constraint consent_submissions_signup_form,
      drop constraint consent_submissions_text_sha256,
      drop constraint consent_submissions_study_or_signup_form,
      drop constraint consent_submissions_source,
      drop column created_at,
      drop column recorded_by_user_id,
      drop column source,
      drop column text_sha256,
      drop column form_version,
      drop column signup_form_id;
  `.execute(db);
}
