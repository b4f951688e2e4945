import { type Insertable, type Kysely, type Selectable, sql } from 'kysely';
import type { ConsentSubmissionsTable, DB } from '../../db/schema.js';

type Executor = Kysely<DB>;

export type ConsentRow = Selectable<ConsentSubmissionsTable>;

const presentedColumns = [
  'consent_submission_id',
  'person_id',
  'study_id',
  'signup_form_id',
  'consent_form_id',
  'form_version',
  'text_sha256',
  'source',
  'submitted_at',
  'recorded_by_user_id',
  'created_at',
] as const;
const consentColumns = presentedColumns.map((column) => `c.${column}` as const);

export type PresentableConsent = Pick<ConsentRow, (typeof presentedColumns)[number]>;

export async function insertConsent(db: Executor, consent: Insertable<ConsentSubmissionsTable>): Promise<PresentableConsent> {
  return db
    .insertInto('consent_submissions')
    .values(consent)
    .returning(presentedColumns)
    .executeTakeFirstOrThrow();
}

/**
 * Every read of consents starts here: only consents of people not deleted, so a deleted person's
 * consents disappear at once, as the person does (the purge erases them later).
 */
function liveConsents(db: Executor, workspaceId: string) {
  return db
    .selectFrom('consent_submissions as c')
    .innerJoin('people as p', (join) => join.onRef('p.workspace_id', '=', 'c.workspace_id').onRef('p.person_id', '=', 'c.person_id'))
    .where('c.workspace_id', '=', workspaceId)
    .where('p.deleted_at', 'is', null);
}

export async function findConsent(db: Executor, workspaceId: string, consentSubmissionId: string): Promise<PresentableConsent | undefined> {
  return liveConsents(db, workspaceId).where('c.consent_submission_id', '=', consentSubmissionId).select(consentColumns).executeTakeFirst();
}

export interface ConsentFilter {
  personId?: string;
  studyId?: string;
  signupFormId?: string;
}

/**
 * A page of consents in the order they were recorded (their ids are time-ordered), after the
 * keyset `afterId`, plus the exact total. Each filter has its index, leading with the workspace
 * and ending with the id (consent_submissions_of_person, _of_study, _of_signup_form).
 */
export async function listConsents(db: Executor, workspaceId: string, filter: ConsentFilter, afterId: string | undefined, size: number) {
  const base = liveConsents(db, workspaceId)
    .$if(filter.personId !== undefined, (query) => query.where('c.person_id', '=', filter.personId!))
    .$if(filter.studyId !== undefined, (query) => query.where('c.study_id', '=', filter.studyId!))
    .$if(filter.signupFormId !== undefined, (query) => query.where('c.signup_form_id', '=', filter.signupFormId!));
  const [rows, count] = await Promise.all([
    base
      .$if(afterId !== undefined, (query) => query.where('c.consent_submission_id', '>', afterId!))
      .select(consentColumns)
      .orderBy('c.consent_submission_id')
      .limit(size + 1)
      .execute(),
    base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.total) };
}

/**
 * The person a consent is recorded for, live or deleted, share-locked on its key (FOR KEY SHARE,
 * as the foreign key's own check would): the purge, which takes the row FOR UPDATE, skips it until
 * this transaction ends, so it never erases a person's consents while one more is being recorded.
 * A deletion (which changes no key) is not held up.
 */
export async function lockPersonForConsent(db: Executor, workspaceId: string, personId: string) {
  return db
    .selectFrom('people')
    .where('workspace_id', '=', workspaceId)
    .where('person_id', '=', personId)
    .select(['person_id', 'deleted_at'])
    .forKeyShare()
    .executeTakeFirst();
}

/** The study, with its plan's consent form, or undefined when the workspace has none of that id. */
export async function findStudyConsentForm(db: Executor, workspaceId: string, studyId: string) {
  return db
    .selectFrom('studies')
    .where('workspace_id', '=', workspaceId)
    .where('study_id', '=', studyId)
    .select(['study_id', sql<string | null>`plan->>'consentFormId'`.as('consent_form_id')])
    .executeTakeFirst();
}

/** The signup form, with the consent form it presents, or undefined when the workspace has none of that id. */
export async function findSignupFormConsentForm(db: Executor, workspaceId: string, signupFormId: string) {
  return db.selectFrom('signup_forms').where('workspace_id', '=', workspaceId).where('signup_form_id', '=', signupFormId).select(['signup_form_id', 'consent_form_id']).executeTakeFirst();
}

export async function signupFormExists(db: Executor, workspaceId: string, signupFormId: string): Promise<boolean> {
  const row = await db.selectFrom('signup_forms').where('workspace_id', '=', workspaceId).where('signup_form_id', '=', signupFormId).select('signup_form_id').executeTakeFirst();
  return row !== undefined;
}

export async function livePersonExists(db: Executor, workspaceId: string, personId: string): Promise<boolean> {
  const row = await db.selectFrom('people').where('workspace_id', '=', workspaceId).where('person_id', '=', personId).where('deleted_at', 'is', null).select('person_id').executeTakeFirst();
  return row !== undefined;
}

export async function studyExists(db: Executor, workspaceId: string, studyId: string): Promise<boolean> {
  return (await findStudyConsentForm(db, workspaceId, studyId)) !== undefined;
}

/** Deletes the consents of these people (the purge's batch); signup submissions that named one keep their row (the foreign key sets it null). */
export async function deleteConsentsOfPeople(db: Executor, people: readonly { workspace_id: string; person_id: string }[]): Promise<number> {
  if (people.length === 0) return 0;
  const { rows } = await sql<{ deleted: string | number }>`
    with deleted as (
      delete from consent_submissions
      where (workspace_id, person_id) in (select x.workspace_id, x.person_id from jsonb_to_recordset(${JSON.stringify(people)}::jsonb) as x(workspace_id text, person_id text))
      returning 1
    )
    select count(*) as deleted from deleted
  `.execute(db);
  return Number(rows[0]!.deleted);
}
