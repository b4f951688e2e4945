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
  'signed_name',
  'choices',
  'withdrawn_at',
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

/**
 * The latest consent the person gave for the study (any source), with whether it was withdrawn:
 * what the participant's consent page goes by ("already signed" this version, or withdrawn).
 */
export async function findLatestStudyConsent(db: Executor, workspaceId: string, studyId: string, personId: string) {
  return db
    .selectFrom('consent_submissions')
    .where('workspace_id', '=', workspaceId)
    .where('study_id', '=', studyId)
    .where('person_id', '=', personId)
    .select(['consent_submission_id', 'consent_form_id', 'form_version', 'text_sha256', 'submitted_at', 'withdrawn_at'])
    .orderBy('consent_submission_id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/**
 * The participant, locked for the change (FOR UPDATE): two posts of one consent page, or of one
 * withdrawal, wait for each other, so the second sees what the first did.
 */
export async function lockParticipant(db: Executor, workspaceId: string, studyId: string, participantId: string) {
  return db
    .selectFrom('participants')
    .where('workspace_id', '=', workspaceId)
    .where('study_id', '=', studyId)
    .where('participant_id', '=', participantId)
    .select(['participant_id', 'person_id'])
    .forUpdate()
    .executeTakeFirst();
}

/** Withdraws the person's consents for the study not withdrawn yet; answers them. */
export async function withdrawStudyConsents(db: Executor, workspaceId: string, studyId: string, personId: string, at: string) {
  return db
    .updateTable('consent_submissions')
    .set({ withdrawn_at: at })
    .where('workspace_id', '=', workspaceId)
    .where('study_id', '=', studyId)
    .where('person_id', '=', personId)
    .where('withdrawn_at', 'is', null)
    .returning(['consent_submission_id', 'person_id', 'study_id'])
    .execute();
}

export async function markCopySent(db: Executor, workspaceId: string, consentSubmissionId: string, at: string): Promise<boolean> {
  const row = await db
    .updateTable('consent_submissions')
    .set({ copy_sent_at: at })
    .where('workspace_id', '=', workspaceId)
    .where('consent_submission_id', '=', consentSubmissionId)
    .where('copy_sent_at', 'is', null)
    .returning('consent_submission_id')
    .executeTakeFirst();
  return row !== undefined;
}

/** What the signed copy's email needs: the consent, its person, participant, study and workspace. */
export async function findCopyFacts(db: Executor, workspaceId: string, consentSubmissionId: string) {
  return db
    .selectFrom('consent_submissions as c')
    .innerJoin('people as p', (join) => join.onRef('p.workspace_id', '=', 'c.workspace_id').onRef('p.person_id', '=', 'c.person_id'))
    .innerJoin('workspaces as w', 'w.workspace_id', 'c.workspace_id')
    .leftJoin('studies as s', (join) => join.onRef('s.workspace_id', '=', 'c.workspace_id').onRef('s.study_id', '=', 'c.study_id'))
    .leftJoin('participants as pa', (join) =>
      join.onRef('pa.workspace_id', '=', 'c.workspace_id').onRef('pa.study_id', '=', 'c.study_id').onRef('pa.person_id', '=', 'c.person_id'),
    )
    .where('c.workspace_id', '=', workspaceId)
    .where('c.consent_submission_id', '=', consentSubmissionId)
    .select([
      'c.consent_submission_id',
      'c.person_id',
      'c.study_id',
      'c.consent_form_id',
      'c.form_version',
      'c.signed_name',
      'c.choices',
      'c.submitted_at',
      'c.copy_sent_at',
      'c.withdrawn_at',
      'p.email',
      'p.deleted_at',
      'p.contact_status',
      'w.name as workspace_name',
      's.plan',
      'pa.participant_id',
    ])
    .executeTakeFirst();
}
