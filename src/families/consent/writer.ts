/**
 * The writes of consent_submissions. The consent family is the only code that writes that table:
 * the public signup route and a participant's `consentFormSubmitted` call this module, as the
 * consent routes do, so what must stay in step with a consent (its webhook event today; the search
 * change log, which the table's triggers write) happens in one place, in the caller's transaction.
 * one-writer.test.ts in this folder holds the rule.
 */
import type { Kysely } from 'kysely';
import type { ConsentSource, DB } from '../../db/schema.js';
import { ApiError, badRequest, notFound } from '../../http/errors.js';
import type { Right } from '../../http/rights.js';
import { idPrefixes, newId } from '../../ids.js';
import { recordEvents } from '../webhooks/outbox.js';
import * as queries from './queries.js';

/** A consent to record: for a study or on a signup form (exactly one; the table refuses otherwise). */
export interface NewConsent {
  personId: string;
  studyId: string | null;
  signupFormId: string | null;
  consentFormId: string | null;
  formVersion: string | null;
  /** Lower-case hex. */
  textSha256: string | null;
  source: ConsentSource;
  submittedAt: string;
  /**
   * Who records it: a user (whose role must hold consent:write, whatever route they came by), or
   * the public signup route, which may record only a SIGNUP_FORM consent on the form it serves,
   * for a person that very submission made (never one found by an email alone: the caller says so).
   */
  recordedBy: { userId: string; rights: ReadonlySet<Right> } | { publicSignupForm: string; personMadeBySubmission: true } | { participantLink: string; personOfLink: true };
  /** Signed on the participant's page: the name typed and each optional choice by id (PARTICIPANT_PAGE only). */
  signedName?: string;
  choices?: Record<string, boolean>;
  /** The field the request named the consent form with, for the 400s (default ["consentFormId"]). */
  formPath?: string[];
}

/**
 * The consent form a consent may name: the study plan's consentFormId, or the signup form's. A
 * study or signup form without one has nothing to consent to (400), and a consentFormId other than
 * its own names no form of it (400): no path records a consent to an arbitrary form id. Answers
 * the form id to record.
 */
async function checkConsentForm(transaction: Kysely<DB>, workspaceId: string, consent: NewConsent): Promise<string> {
  const path = consent.formPath ?? ['consentFormId'];
  let presented: string | null;
  if (consent.studyId !== null) {
    const study = await queries.findStudyConsentForm(transaction, workspaceId, consent.studyId);
    if (!study) throw notFound('Study', ['studyId']);
    presented = study.consent_form_id;
    if (presented === null) throw badRequest('The study has no consent form (its studyPlan.consentFormId is unset): there is nothing to consent to', path);
  } else if (consent.signupFormId !== null) {
    const form = await queries.findSignupFormConsentForm(transaction, workspaceId, consent.signupFormId);
    if (!form) throw notFound('Signup form', ['signupFormId']);
    presented = form.consent_form_id;
    if (presented === null) throw badRequest('The signup form presents no consent form: there is nothing to consent to', path);
  } else {
    throw badRequest('Give studyId (a study consent) or signupFormId (a signup form consent)', ['studyId']);
  }
  if (consent.consentFormId !== null && consent.consentFormId !== presented) {
    throw badRequest(`consentFormId must be the consent form the ${consent.studyId !== null ? 'study' : 'signup form'} presents ("${presented}")`, path);
  }
  return presented;
}

/** The authority rule, the same on every path: consent:write for a user; the public route only on its own form. */
function checkAuthority(consent: NewConsent): string | null {
  const by = consent.recordedBy;
  if ('userId' in by) {
    if (!by.rights.has('consent:write')) throw new ApiError('FORBIDDEN');
    if (consent.source === 'PARTICIPANT_PAGE' || consent.signedName !== undefined) throw new Error('Only the participant page records a PARTICIPANT_PAGE consent with a signed name');
    return by.userId;
  }
  if ('participantLink' in by) {
    // The person's own link: a study consent, for the person the link was made for (the caller resolved it), signed with a name.
    if (consent.source !== 'PARTICIPANT_PAGE' || consent.studyId === null || consent.signupFormId !== null || by.personOfLink !== true || !consent.signedName || !consent.choices) {
      throw new Error("The participant page records a PARTICIPANT_PAGE study consent with a signed name and choices, for its link's person, and nothing else");
    }
    return null;
  }
  if (consent.source !== 'SIGNUP_FORM' || consent.signedName !== undefined || consent.signupFormId !== by.publicSignupForm || consent.studyId !== null || by.personMadeBySubmission !== true) {
    throw new Error('The public signup route records a SIGNUP_FORM consent on its own form, for the person its submission made, and nothing else');
  }
  return null;
}

/**
 * Inserts the consent and its `consent.submitted` event (ids only) in the caller's transaction;
 * answers the row. Every path goes through here, so the rules hold on each: the recorder's
 * authority (checkAuthority) and a consent form that exists (checkConsentForm), both checked
 * before anything is written. The caller has checked that the person is the workspace's.
 */
export async function recordConsent(transaction: Kysely<DB>, workspaceId: string, consent: NewConsent, at: string): Promise<queries.PresentableConsent> {
  if (!transaction.isTransaction) throw new Error('Consents are recorded in the transaction of the change: pass a transaction');
  const recordedByUserId = checkAuthority(consent);
  const consentFormId = await checkConsentForm(transaction, workspaceId, consent);
  const row = await queries.insertConsent(transaction, {
    workspace_id: workspaceId,
    consent_submission_id: newId(idPrefixes.consentSubmission),
    person_id: consent.personId,
    study_id: consent.studyId,
    signup_form_id: consent.signupFormId,
    consent_form_id: consentFormId,
    form_version: consent.formVersion,
    text_sha256: consent.textSha256,
    source: consent.source,
    recorded_by_user_id: recordedByUserId,
    submitted_at: consent.submittedAt,
    created_at: at,
    signed_name: consent.signedName ?? null,
    choices: consent.choices ? JSON.stringify(consent.choices) : null,
    link_id: 'participantLink' in consent.recordedBy ? consent.recordedBy.participantLink : null,
  });
  await recordEvents(
    transaction,
    workspaceId,
    [{ type: 'consent.submitted', data: { consentSubmissionId: row.consent_submission_id, personId: row.person_id, studyId: row.study_id, signupFormId: row.signup_form_id } }],
    at,
  );
  return row;
}

/**
 * Withdraws the person's consents for the study (every one not withdrawn yet: the person withdraws
 * from the study, not from one version), with a `consent.withdrawn` event each, in the caller's
 * transaction. Answers the consents withdrawn: none when they were withdrawn already.
 */
export async function withdrawStudyConsents(
  transaction: Kysely<DB>,
  workspaceId: string,
  withdrawal: { studyId: string; personId: string; participantId: string | null },
  at: string,
): Promise<{ consent_submission_id: string }[]> {
  if (!transaction.isTransaction) throw new Error('Consents are withdrawn in the transaction of the change: pass a transaction');
  const rows = await queries.withdrawStudyConsents(transaction, workspaceId, withdrawal.studyId, withdrawal.personId, at);
  await recordEvents(
    transaction,
    workspaceId,
    rows.map((row) => ({
      type: 'consent.withdrawn' as const,
      data: { consentSubmissionId: row.consent_submission_id, personId: row.person_id, studyId: withdrawal.studyId, participantId: withdrawal.participantId },
    })),
    at,
  );
  return rows;
}

/** Records that the signed copy went out; false when it already had (a second run of its job). */
export async function markCopySent(db: Kysely<DB>, workspaceId: string, consentSubmissionId: string, at: string): Promise<boolean> {
  return queries.markCopySent(db, workspaceId, consentSubmissionId, at);
}

/** Erases the consents of people the purge is erasing, in its transaction; answers how many. */
export async function eraseConsentsOfPeople(transaction: Kysely<DB>, people: readonly { workspace_id: string; person_id: string }[]): Promise<number> {
  if (!transaction.isTransaction) throw new Error('Consents are erased in the transaction of the purge: pass a transaction');
  return queries.deleteConsentsOfPeople(transaction, people);
}
