import type { Insertable, Kysely, Selectable, Updateable } from 'kysely';
import type { DB, SignupFormsTable, SignupSubmissionsTable } from '../../db/schema.js';

type Executor = Kysely<DB>;

export type SignupFormRow = Selectable<SignupFormsTable>;
export type SubmissionRow = Selectable<SignupSubmissionsTable>;

export async function insertForm(db: Executor, form: Insertable<SignupFormsTable>) {
  return db.insertInto('signup_forms').values(form).returningAll().executeTakeFirstOrThrow();
}

export async function findForm(db: Executor, workspaceId: string, signupFormId: string) {
  return db.selectFrom('signup_forms').where('workspace_id', '=', workspaceId).where('signup_form_id', '=', signupFormId).selectAll().executeTakeFirst();
}

/** A page of forms in the order they were made (their ids are time-ordered), after `afterFormId`; plus the exact total. */
export async function listForms(db: Executor, workspaceId: string, afterFormId: string | undefined, size: number) {
  const base = db.selectFrom('signup_forms').where('workspace_id', '=', workspaceId);
  const [rows, count] = await Promise.all([
    base
      .$if(afterFormId !== undefined, (query) => query.where('signup_form_id', '>', afterFormId!))
      .selectAll()
      .orderBy('signup_form_id')
      .limit(size + 1)
      .execute(),
    base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.total) };
}

/**
 * Every read of submissions starts here: only submissions of people not deleted, so a deleted
 * person's submissions disappear at once (E6 searches from the same base).
 */
export function liveSubmissions(db: Executor, workspaceId: string) {
  return db
    .selectFrom('signup_submissions as s')
    .innerJoin('people as p', (join) => join.onRef('p.workspace_id', '=', 's.workspace_id').onRef('p.person_id', '=', 's.person_id'))
    .where('s.workspace_id', '=', workspaceId)
    .where('p.deleted_at', 'is', null);
}

export async function findSubmission(db: Executor, workspaceId: string, signupFormId: string, submissionId: string, options: { forUpdate?: boolean } = {}) {
  return liveSubmissions(db, workspaceId)
    .where('s.signup_form_id', '=', signupFormId)
    .where('s.submission_id', '=', submissionId)
    .selectAll('s')
    .$if(options.forUpdate === true, (query) => query.forUpdate('s'))
    .executeTakeFirst();
}

export async function insertSubmission(db: Executor, submission: Insertable<SignupSubmissionsTable>) {
  await db.insertInto('signup_submissions').values(submission).execute();
}

export async function updateSubmission(db: Executor, workspaceId: string, submissionId: string, changes: Updateable<SignupSubmissionsTable>) {
  return db
    .updateTable('signup_submissions')
    .set(changes)
    .where('workspace_id', '=', workspaceId)
    .where('submission_id', '=', submissionId)
    .returningAll()
    .executeTakeFirstOrThrow();
}
