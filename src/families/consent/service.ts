import { createHash } from 'node:crypto';
import type { CallContext as SharedCallContext } from '../../context.js';
import { inTransaction } from '../../db/transaction.js';
import { badRequest, notFound } from '../../http/errors.js';
import { maskText } from '../../http/masking.js';
import { markConsentSubmitted } from '../participants/service.js';
import * as queries from './queries.js';
import type { ConsentListQuery, ConsentSubmission, RecordConsentBody } from './schemas.js';
import { recordConsent as writeConsent } from './writer.js';

export type CallContext = Pick<SharedCallContext, 'db' | 'clock' | 'workspaceId' | 'userId' | 'role' | 'rights' | 'canReadPersonalData'>;

/** How far ahead of the service clock a `submittedAt` may be: client clocks run a little fast. */
export const SUBMITTED_AT_SKEW_MS = 5 * 60 * 1000;

function present(row: queries.PresentableConsent, canReadPersonalData: boolean): ConsentSubmission {
  return {
    consentSubmissionId: row.consent_submission_id,
    personId: row.person_id,
    studyId: row.study_id,
    signupFormId: row.signup_form_id,
    consentFormId: row.consent_form_id,
    formVersion: row.form_version,
    textSha256: row.text_sha256,
    source: row.source,
    submittedAt: row.submitted_at,
    recordedByUserId: row.recorded_by_user_id,
    createdAt: row.created_at,
    signedName: maskText(row.signed_name, canReadPersonalData),
    choices: row.choices,
    withdrawnAt: row.withdrawn_at,
  };
}

/** The hex SHA-256 of the text's UTF-8 bytes. */
export const sha256Hex = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/** The checks of a body that need no database, in the order of its fields. */
function checkBody(body: RecordConsentBody, now: Date): { submittedAt: string; textSha256: string | null } {
  if (body.studyId === undefined && body.signupFormId === undefined) throw badRequest('Give studyId (a study consent) or signupFormId (a signup form consent)', ['studyId']);
  if (body.studyId !== undefined && body.signupFormId !== undefined) throw badRequest('Give studyId or signupFormId, not both', ['signupFormId']);
  if (body.text !== undefined && body.textSha256 !== undefined) throw badRequest('Give text or textSha256, not both', ['text']);
  let submittedAt = now.toISOString();
  if (body.submittedAt !== undefined) {
    const given = new Date(body.submittedAt);
    if (given.getTime() > now.getTime() + SUBMITTED_AT_SKEW_MS) throw badRequest('submittedAt must not be in the future', ['submittedAt']);
    submittedAt = given.toISOString();
  }
  const textSha256 = body.text !== undefined ? sha256Hex(body.text) : (body.textSha256?.toLowerCase() ?? null);
  return { submittedAt, textSha256 };
}

/**
 * POST /consent-submissions: records a live person's consent for a study or on a signup form of
 * the workspace. For a study, the consent form defaults to the study plan's, and the person's
 * participant of the study (if any) is marked CONSENT_FORM_SUBMITTED, in the same transaction as
 * the consent and its `consent.submitted` event.
 */
export async function recordConsent(context: CallContext, body: RecordConsentBody): Promise<ConsentSubmission> {
  const { workspaceId } = context;
  const now = context.clock.now();
  const { submittedAt, textSha256 } = checkBody(body, now);
  return inTransaction(context.db, async (db) => {
    const person = await queries.lockPersonForConsent(db, workspaceId, body.personId);
    if (!person || person.deleted_at !== null) throw notFound('Person', ['personId']);
    // The writer checks the study or signup form, and that consentFormId (by default) is the form it presents.
    const at = now.toISOString();
    const row = await writeConsent(
      db,
      workspaceId,
      {
        personId: body.personId,
        studyId: body.studyId ?? null,
        signupFormId: body.signupFormId ?? null,
        consentFormId: body.consentFormId ?? null,
        formVersion: body.formVersion ?? null,
        textSha256,
        source: body.source ?? 'API',
        recordedBy: { userId: context.userId, rights: context.rights },
        submittedAt,
      },
      at,
    );
    if (body.studyId !== undefined) await markConsentSubmitted(db, workspaceId, body.studyId, body.personId, submittedAt, at);
    return present(row, context.canReadPersonalData);
  });
}

export async function getConsent(context: CallContext, consentSubmissionId: string): Promise<ConsentSubmission> {
  const row = await queries.findConsent(context.db, context.workspaceId, consentSubmissionId);
  if (!row) throw notFound('Consent submission', ['consentSubmissionId']);
  return present(row, context.canReadPersonalData);
}

/** The filters of a list, each checked to name a resource of the workspace (404 naming the parameter otherwise). */
export async function checkListFilter(context: CallContext, query: ConsentListQuery): Promise<queries.ConsentFilter> {
  const { db, workspaceId } = context;
  if (query.personId !== undefined && !(await queries.livePersonExists(db, workspaceId, query.personId))) throw notFound('Person', ['personId']);
  if (query.studyId !== undefined && !(await queries.studyExists(db, workspaceId, query.studyId))) throw notFound('Study', ['studyId']);
  if (query.signupFormId !== undefined && !(await queries.signupFormExists(db, workspaceId, query.signupFormId))) throw notFound('Signup form', ['signupFormId']);
  return { personId: query.personId, studyId: query.studyId, signupFormId: query.signupFormId };
}

export async function listConsents(context: CallContext, filter: queries.ConsentFilter, afterId: string | undefined, size: number) {
  const { rows, total } = await queries.listConsents(context.db, context.workspaceId, filter, afterId, size);
  return { rows: rows.slice(0, size).map((row) => present(row, context.canReadPersonalData)), hasNextPage: rows.length > size, total };
}
