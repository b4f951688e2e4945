/**
 * The writes of consent_submissions. The consent family is the only code that writes that table:
 * the public signup route and a participant's `consentFormSubmitted` call this module, as the
 * consent routes do, so what must stay in step with a consent (its webhook event today; the search
 * change log, which the table's triggers write) happens in one place, in the caller's transaction.
 * one-writer.test.ts in this folder holds the rule.
 */
import type { Kysely } from 'kysely';
import type { ConsentSource, DB } from '../../db/schema.js';
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
  recordedByUserId: string | null;
  submittedAt: string;
}

/**
 * Inserts the consent and its `consent.submitted` event (ids only) in the caller's transaction;
 * answers the row. The caller has checked that the person, study or form are the workspace's.
 */
export async function recordConsent(transaction: Kysely<DB>, workspaceId: string, consent: NewConsent, at: string): Promise<queries.PresentableConsent> {
  if (!transaction.isTransaction) throw new Error('Consents are recorded in the transaction of the change: pass a transaction');
  const row = await queries.insertConsent(transaction, {
    workspace_id: workspaceId,
    consent_submission_id: newId(idPrefixes.consentSubmission),
    person_id: consent.personId,
    study_id: consent.studyId,
    signup_form_id: consent.signupFormId,
    consent_form_id: consent.consentFormId,
    form_version: consent.formVersion,
    text_sha256: consent.textSha256,
    source: consent.source,
    recorded_by_user_id: consent.recordedByUserId,
    submitted_at: consent.submittedAt,
    created_at: at,
  });
  await recordEvents(
    transaction,
    workspaceId,
    [{ type: 'consent.submitted', data: { consentSubmissionId: row.consent_submission_id, personId: row.person_id, studyId: row.study_id, signupFormId: row.signup_form_id } }],
    at,
  );
  return row;
}

/** Erases the consents of people the purge is erasing, in its transaction; answers how many. */
export async function eraseConsentsOfPeople(transaction: Kysely<DB>, people: readonly { workspace_id: string; person_id: string }[]): Promise<number> {
  if (!transaction.isTransaction) throw new Error('Consents are erased in the transaction of the purge: pass a transaction');
  return queries.deleteConsentsOfPeople(transaction, people);
}
