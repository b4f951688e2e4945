import { type Kysely, sql } from 'kysely';

/**
 * Signup forms and their submissions.
 *
 * A form's id carries its workspace's id (`sgf_<workspaceId>_<ULID>`), as API tokens do: the
 * public submission route has no token, and the id alone then locates the form through the
 * primary key (workspace_id, signup_form_id), with no lookup table that would not lead with
 * workspace_id.
 *
 * A submission records that a person sent the form: when, with which referral code, the consent
 * they gave (a consent_submissions row), and the review of it (approval status, when, by whom).
 * It holds no personal data of its own: what the form carried went into the person's row, which
 * the deletion purge erases. The column names feed the derived PERSON names of the filter
 * language (FORM_SIGNEDUP_AT, FORM_APPROVAL_STATUS, FORM_FIRST/LAST_SIGNUP_REFERRAL_CODE,
 * SIGNUP_REFERRAL_CODES): keep them.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table signup_forms (
      workspace_id text not null references workspaces,
      signup_form_id text not null,
      name text not null,
      population_id text not null,
      created_by_user_id text not null,
      created_at timestamptz not null,
      primary key (workspace_id, signup_form_id),
      foreign key (workspace_id, population_id) references populations
    );

    create table signup_submissions (
      workspace_id text not null,
      submission_id text not null,
      signup_form_id text not null,
      person_id text not null,
      approval_status text not null default 'PENDING_REVIEW' check (approval_status in ('PENDING_REVIEW', 'APPROVED', 'REJECTED')),
      referral_code text,
      consent_submission_id text,
      submitted_at timestamptz not null,
      reviewed_at timestamptz,
      reviewed_by_user_id text,
      primary key (workspace_id, submission_id),
      check ((reviewed_at is null) = (approval_status = 'PENDING_REVIEW')),
      foreign key (workspace_id, signup_form_id) references signup_forms,
      foreign key (workspace_id, person_id) references people,
      foreign key (workspace_id, consent_submission_id) references consent_submissions
    );
    create index signup_submissions_of_form on signup_submissions (workspace_id, signup_form_id, submission_id);
    create index signup_submissions_of_person on signup_submissions (workspace_id, person_id, submitted_at);
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table signup_submissions, signup_forms;`.execute(db);
}
