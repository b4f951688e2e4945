import type { Kysely } from 'kysely';
import type { CallContext as SharedCallContext } from '../../context.js';
import type { Clock } from '../../clock.js';
import type { DB } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { badRequest, notFound } from '../../http/errors.js';
import { idPrefixes, newId, newUnguessableId } from '../../ids.js';
import * as peopleQueries from '../people/queries.js';
import { isEmailRace } from '../people/service.js';
import { checkPropertyValues } from '../people/values.js';
import { createOrFillPerson } from '../people/writer.js';
import { findPopulationIds } from '../populations/queries.js';
import * as queries from './queries.js';
import type { CreateSignupFormBody, PublicSubmissionBody, ReviewSubmissionBody, SignupForm, SignupSubmission } from './schemas.js';
import { recordEvents } from '../webhooks/outbox.js';
import { recordConsent } from '../consent/writer.js';

export type CallContext = Pick<SharedCallContext, 'db' | 'clock' | 'workspaceId' | 'userId'>;

/** What the public route knows: no workspace, no user; the form's id says the workspace. */
export interface PublicContext {
  db: Kysely<DB>;
  clock: Clock;
}

const now = (clock: Clock) => clock.now().toISOString();

/**
 * Form ids carry their workspace's id, as API tokens do: `sgf_<workspaceId>_<ULID>`. The public
 * submission route has no token, and this way the id alone reaches the form through the
 * workspace-leading primary key. The workspace id is no secret (it grants nothing by itself);
 * the ULID's 80 random bits, fresh for every form (newUnguessableId, not newId, whose ids of one
 * millisecond follow from each other), keep a form's id from being guessed from another's.
 */
const FORM_ID_PATTERN = /^sgf_(wsp_[0-9A-Z]{26})_[0-9A-Z]{26}$/;

export function newSignupFormId(workspaceId: string): string {
  return newUnguessableId(`${idPrefixes.signupForm}_${workspaceId}`);
}

/** The workspace a form id names, or undefined when the text is not a form id at all. */
export function workspaceOfSignupForm(signupFormId: string): string | undefined {
  return FORM_ID_PATTERN.exec(signupFormId)?.[1];
}

function presentForm(row: queries.SignupFormRow): SignupForm {
  return { signupFormId: row.signup_form_id, name: row.name, populationId: row.population_id, consentFormId: row.consent_form_id, createdAt: row.created_at };
}

/**
 * Submission rows as SignupSubmission responses, in the order given. Nothing in a submission is
 * personal data, so there is nothing to mask and no query to make: E6 (the submission search)
 * presents its page with this same function.
 */
export function presentSubmissions(rows: readonly queries.SubmissionRow[]): SignupSubmission[] {
  return rows.map((row) => ({
    submissionId: row.submission_id,
    signupFormId: row.signup_form_id,
    personId: row.person_id,
    approvalStatus: row.approval_status,
    submittedAt: row.submitted_at,
    consentSubmissionId: row.consent_submission_id,
    referralCode: row.referral_code,
    reviewedAt: row.reviewed_at,
  }));
}

export async function createForm(context: CallContext, body: CreateSignupFormBody): Promise<SignupForm> {
  const { workspaceId } = context;
  return inTransaction(context.db, async (db) => {
    // FOR SHARE would add nothing: populations are never deleted, and the foreign key holds the row.
    const populations = await findPopulationIds(db, workspaceId, [body.populationId]);
    if (!populations.has(body.populationId)) throw notFound('Population', ['populationId']);
    const row = await queries.insertForm(db, {
      workspace_id: workspaceId,
      signup_form_id: newSignupFormId(workspaceId),
      name: body.name,
      population_id: body.populationId,
      consent_form_id: body.consentFormId ?? null,
      created_by_user_id: context.userId,
      created_at: now(context.clock),
    });
    return presentForm(row);
  });
}

export async function getForm(context: CallContext, signupFormId: string): Promise<SignupForm> {
  const row = await queries.findForm(context.db, context.workspaceId, signupFormId);
  if (!row) throw notFound('Signup form', ['signupFormId']);
  return presentForm(row);
}

export async function listForms(context: CallContext, afterFormId: string | undefined, size: number) {
  const { rows, total } = await queries.listForms(context.db, context.workspaceId, afterFormId, size);
  return { rows: rows.slice(0, size).map(presentForm), hasNextPage: rows.length > size, total };
}

export async function getSubmission(context: CallContext, signupFormId: string, submissionId: string): Promise<SignupSubmission> {
  const row = await queries.findSubmission(context.db, context.workspaceId, signupFormId, submissionId);
  if (!row) throw await submissionNotFound(context.db, context.workspaceId, signupFormId);
  return presentSubmissions([row])[0]!;
}

/** The 404 of a submission route: the form's, when the form itself does not exist. */
async function submissionNotFound(db: Kysely<DB>, workspaceId: string, signupFormId: string) {
  const form = await queries.findForm(db, workspaceId, signupFormId);
  return form ? notFound('Submission', ['submissionId']) : notFound('Signup form', ['signupFormId']);
}

/**
 * Reviews a submission. APPROVED and REJECTED stamp reviewedAt and the reviewer; back to
 * PENDING_REVIEW clears both. Setting the status it already has changes nothing.
 */
export async function reviewSubmission(context: CallContext, signupFormId: string, submissionId: string, body: ReviewSubmissionBody): Promise<SignupSubmission> {
  const { workspaceId } = context;
  return inTransaction(context.db, async (db) => {
    const row = await queries.findSubmission(db, workspaceId, signupFormId, submissionId, { forUpdate: true });
    if (!row) throw await submissionNotFound(db, workspaceId, signupFormId);
    if (row.approval_status === body.approvalStatus) return presentSubmissions([row])[0]!;
    const reviewed = body.approvalStatus !== 'PENDING_REVIEW';
    const updated = await queries.updateSubmission(db, workspaceId, submissionId, {
      approval_status: body.approvalStatus,
      reviewed_at: reviewed ? now(context.clock) : null,
      reviewed_by_user_id: reviewed ? context.userId : null,
    });
    return presentSubmissions([updated])[0]!;
  });
}

/**
 * A public signup form sent by anyone, without a token: what it may do to the panel is limited.
 *
 * - A new email makes a new person (CONTACTABLE, import source SIGNUP_FORM) from the form's fields.
 * - An email the panel knows (case-insensitively) updates that person, but only fills what is
 *   empty: a first name, last name or phone only where none is held, a property only where it is
 *   unset. Whoever types an email in a public form may not be its owner, so the form never
 *   overwrites what the panel holds, never changes the email, and never changes opted-out
 *   status (an opted-out person stays opted out: opting back in is the person's own request,
 *   made to the workspace).
 * - A value of a unique property that another person holds is left out rather than answered
 *   with a 409, which would tell an anonymous caller that someone holds it.
 * - Either way the person joins the form's population, and the submission is recorded as
 *   PENDING_REVIEW with the referral code.
 * - Consent: a form records consent only to the consent form it presents (the signup form's
 *   consentFormId); a body naming another, or any when the form presents none, is a 400 naming
 *   consentFormId. The consent is recorded only for a person this submission made: an email the
 *   panel knows proves nothing about who sent the form, so a known person's submission carries
 *   no consent (consentSubmissionId null), for the workspace to record once it has checked
 *   (POST /consent-submissions).
 *
 * The answer is the same 201 for a new and a known email, so the route tells nobody who is on
 * the panel.
 */
export async function submitForm(context: PublicContext, signupFormId: string, body: PublicSubmissionBody): Promise<{ submissionId: string }> {
  const workspaceId = workspaceOfSignupForm(signupFormId);
  if (workspaceId === undefined) throw notFound('Signup form', ['signupFormId']);
  const properties = body.properties ?? {};
  const nullValue = Object.keys(properties).find((propertyId) => properties[propertyId] === null);
  if (nullValue !== undefined) throw badRequest('A signup form sets values; null is not one', ['properties', nullValue]);
  const submit = () => inTransaction(context.db, (db) => submitInTransaction(db, context.clock, workspaceId, signupFormId, body));
  try {
    return await submit();
  } catch (error) {
    // Two first submissions with one new email at once: the loser of the race on the email's
    // unique index runs again and finds the person the winner made.
    if (isEmailRace(error)) return submit();
    throw error;
  }
}

async function submitInTransaction(db: Kysely<DB>, clock: Clock, workspaceId: string, signupFormId: string, body: PublicSubmissionBody) {
  const form = await queries.findForm(db, workspaceId, signupFormId);
  if (!form) throw notFound('Signup form', ['signupFormId']);
  if (body.consentFormId !== undefined && body.consentFormId !== form.consent_form_id) {
    throw badRequest(form.consent_form_id === null ? 'This signup form presents no consent form' : `consentFormId must be the consent form this signup form presents ("${form.consent_form_id}")`, ['consentFormId']);
  }
  const checked = await checkPropertyValues(db, workspaceId, body.properties ?? {});
  const at = now(clock);
  // The people family writes the person: created, or filled where empty (see createOrFillPerson).
  const { personId, created } = await createOrFillPerson(
    db,
    workspaceId,
    { email: body.email, firstName: body.firstName, lastName: body.lastName, phone: body.phone, properties: checked.set, catalogue: checked.catalogue },
    { at, importSource: 'SIGNUP_FORM' },
  );

  await peopleQueries.addMemberships(db, workspaceId, personId, [form.population_id], at);
  let consentSubmissionId: string | null = null;
  if (body.consentFormId !== undefined && created) {
    // The consent family records it (and its event), as POST /consent-submissions does.
    const consent = await recordConsent(
      db,
      workspaceId,
      {
        personId,
        studyId: null,
        signupFormId,
        consentFormId: body.consentFormId,
        formVersion: null,
        textSha256: null,
        source: 'SIGNUP_FORM',
        recordedBy: { publicSignupForm: signupFormId, personMadeBySubmission: true },
        submittedAt: at,
      },
      at,
    );
    consentSubmissionId = consent.consent_submission_id;
  }
  const submissionId = newId(idPrefixes.signupSubmission);
  await queries.insertSubmission(db, {
    workspace_id: workspaceId,
    submission_id: submissionId,
    signup_form_id: signupFormId,
    person_id: personId,
    referral_code: body.referralCode ?? null,
    consent_submission_id: consentSubmissionId,
    submitted_at: at,
    reviewed_at: null,
    reviewed_by_user_id: null,
  });
  await recordEvents(db, workspaceId, [{ type: 'signup.submitted', data: { signupFormId, submissionId, personId } }], at);
  return { submissionId };
}
