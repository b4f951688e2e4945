/**
 * Consent as the person gives and withdraws it on the participant's pages (src/participant/):
 * the rules of what the page shows, the signing and the withdrawal. The pages call these; the
 * writes go through this family's writer (writer.ts) and the participants family's service.
 */
import type { Kysely } from 'kysely';
import type { Clock } from '../../clock.js';
import type { DB } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { enqueueJob } from '../../jobs/queue.js';
import type { ConsentFormVersion } from '../consent-forms/schemas.js';
import { findServableVersion } from '../consent-forms/service.js';
import { markConsentSubmitted, recordWithdrawal } from '../participants/service.js';
import * as queries from './queries.js';
import { recordConsent, withdrawStudyConsents } from './writer.js';
import { signedCopyOf } from './copy-job.js';

/** The queue of the signed copies' emails (copy-job.ts). */
export const CONSENT_COPY_QUEUE = 'consent.copy';
/** A copy is tried for about a day: 1 min, 2, 4 … doubling, 10 attempts. */
export const consentCopyAttempts = { maxAttempts: 10, backoffSeconds: 60 } as const;

/** The longest typed name taken (the column's check says the same). */
export const SIGNED_NAME_MAX = 200;

/**
 * Where the person stands with the study's consent, for the page:
 * - `TO_SIGN`: no consent yet, or one to an earlier version (or another form): a new version asks again;
 * - `SIGNED`: they signed this very version (consent form and version), not withdrawn;
 * - `WITHDRAWN`: their latest consent was withdrawn (the page does not ask again: the team would
 *   invite them back, with a new link, if the person asks).
 */
export type ConsentStanding = { kind: 'TO_SIGN' } | { kind: 'SIGNED'; at: string } | { kind: 'WITHDRAWN'; at: string };

export async function consentStanding(db: Kysely<DB>, workspaceId: string, studyId: string, personId: string, form: Pick<ConsentFormVersion, 'consentFormId' | 'version'>): Promise<ConsentStanding> {
  const latest = await queries.findLatestStudyConsent(db, workspaceId, studyId, personId);
  return standingOf(latest, form);
}

function standingOf(latest: Awaited<ReturnType<typeof queries.findLatestStudyConsent>>, form: Pick<ConsentFormVersion, 'consentFormId' | 'version'>): ConsentStanding {
  if (!latest) return { kind: 'TO_SIGN' };
  if (latest.withdrawn_at !== null) return { kind: 'WITHDRAWN', at: latest.withdrawn_at };
  if (latest.consent_form_id === form.consentFormId && latest.form_version === String(form.version)) return { kind: 'SIGNED', at: latest.submitted_at };
  return { kind: 'TO_SIGN' };
}

export interface PageSignature {
  workspaceId: string;
  studyId: string;
  participantId: string;
  linkId: string;
  form: ConsentFormVersion;
  signedName: string;
  /** Each optional choice of the version by id. */
  choices: Record<string, boolean>;
  at: string;
}

export type SignOutcome = { kind: 'SIGNED'; consentSubmissionId: string } | { kind: 'ALREADY_SIGNED'; at: string } | { kind: 'WITHDRAWN'; at: string } | { kind: 'GONE' };

/**
 * Records the person's signature, in one transaction: the consent (PARTICIPANT_PAGE, the version,
 * its content's SHA-256, the choices, the typed name, the time, the link) with its
 * `consent.submitted` event through the writer, the participant's consentFormSubmittedAt, and the
 * job that emails the signed copy (once per consent: its singleton key). The participant's row is
 * locked first, so two posts of one page record one consent: the second finds it signed.
 */
export async function signOnPage(db: Kysely<DB>, clock: Clock, signature: PageSignature): Promise<SignOutcome> {
  const { workspaceId, studyId, form, at } = signature;
  return inTransaction(db, async (transaction) => {
    const participant = await queries.lockParticipant(transaction, workspaceId, studyId, signature.participantId);
    if (!participant) return { kind: 'GONE' };
    const standing = standingOf(await queries.findLatestStudyConsent(transaction, workspaceId, studyId, participant.person_id), form);
    if (standing.kind === 'SIGNED') return { kind: 'ALREADY_SIGNED', at: standing.at };
    if (standing.kind === 'WITHDRAWN') return standing;
    const row = await recordConsent(
      transaction,
      workspaceId,
      {
        personId: participant.person_id,
        studyId,
        signupFormId: null,
        consentFormId: form.consentFormId,
        formVersion: String(form.version),
        textSha256: form.contentSha256,
        source: 'PARTICIPANT_PAGE',
        recordedBy: { participantLink: signature.linkId, personOfLink: true },
        signedName: signature.signedName,
        choices: signature.choices,
        submittedAt: at,
      },
      at,
    );
    await markConsentSubmitted(transaction, workspaceId, studyId, participant.person_id, at, at);
    await enqueueJob(transaction, clock, {
      queue: CONSENT_COPY_QUEUE,
      workspaceId,
      payload: { consentSubmissionId: row.consent_submission_id },
      singletonKey: row.consent_submission_id,
      ...consentCopyAttempts,
    });
    return { kind: 'SIGNED', consentSubmissionId: row.consent_submission_id };
  });
}

export type WithdrawOutcome = { kind: 'WITHDRAWN'; statusMove: { from: string; to: string } | undefined } | { kind: 'ALREADY_WITHDRAWN'; at: string } | { kind: 'NOTHING_TO_WITHDRAW' } | { kind: 'GONE' };

/**
 * Withdraws the person's consent to the study, in one transaction: every consent of theirs for it
 * not withdrawn yet gets its withdrawn_at and a `consent.withdrawn` event (writer.ts), and the
 * participant moves as the state table says (participants' recordWithdrawal: to CANCELED where
 * allowed). A second withdrawal changes nothing and answers when the first was.
 */
export async function withdrawOnPage(db: Kysely<DB>, withdrawal: { workspaceId: string; studyId: string; participantId: string; at: string }): Promise<WithdrawOutcome> {
  const { workspaceId, studyId, participantId, at } = withdrawal;
  return inTransaction(db, async (transaction) => {
    const participant = await queries.lockParticipant(transaction, workspaceId, studyId, participantId);
    if (!participant) return { kind: 'GONE' };
    const withdrawn = await withdrawStudyConsents(transaction, workspaceId, { studyId, personId: participant.person_id, participantId }, at);
    if (withdrawn.length === 0) {
      const latest = await queries.findLatestStudyConsent(transaction, workspaceId, studyId, participant.person_id);
      return latest?.withdrawn_at ? { kind: 'ALREADY_WITHDRAWN', at: latest.withdrawn_at } : { kind: 'NOTHING_TO_WITHDRAW' };
    }
    const statusMove = await recordWithdrawal(transaction, workspaceId, studyId, participantId, at);
    return { kind: 'WITHDRAWN', statusMove };
  });
}

/** Whether the person's consent to the study was withdrawn, and when (the withdrawal page's "already withdrawn"). */
export async function withdrawnAt(db: Kysely<DB>, workspaceId: string, studyId: string, personId: string): Promise<string | null | undefined> {
  const latest = await queries.findLatestStudyConsent(db, workspaceId, studyId, personId);
  return latest === undefined ? undefined : latest.withdrawn_at;
}

// The person's own page (src/participant/hub/): their consents, each signed copy, a withdrawal.

/** Every live consent of the person, in the order they were recorded. */
export async function consentsOfPerson(db: Kysely<DB>, workspaceId: string, personId: string) {
  const { rows } = await queries.listConsents(db, workspaceId, { personId }, undefined, 1000);
  return rows;
}

/**
 * The signed copy's PDF of one of the person's own consents signed on the participant's page, or
 * undefined: another person's consent, one of another workspace, or one with no signed copy (given
 * another way: on paper, through the API) answer the same.
 */
export async function signedCopyForPerson(db: Kysely<DB>, workspaceId: string, personId: string, consentSubmissionId: string): Promise<{ pdf: Buffer; filename: string } | undefined> {
  const facts = await queries.findCopyFacts(db, workspaceId, consentSubmissionId);
  if (!facts || facts.person_id !== personId || facts.deleted_at !== null || facts.signed_name === null || facts.consent_form_id === null || facts.form_version === null) return undefined;
  const form = await findServableVersion(db, workspaceId, facts.consent_form_id, Number(facts.form_version));
  if (!form) return undefined;
  const { pdf } = await signedCopyOf(form, facts);
  return { pdf, filename: `consent-${form.consentFormId}-v${form.version}.pdf` };
}

/**
 * The person withdraws one of their own study consents from their page: the withdrawal link's
 * path (withdrawOnPage), so the consents, the participant's move and the events are the same.
 * Another person's consent, or one with no participant of theirs, is GONE.
 */
export async function withdrawForPerson(db: Kysely<DB>, workspaceId: string, personId: string, consentSubmissionId: string, at: string): Promise<WithdrawOutcome> {
  const facts = await queries.findCopyFacts(db, workspaceId, consentSubmissionId);
  if (!facts || facts.person_id !== personId || facts.deleted_at !== null || facts.study_id === null || facts.participant_id === null) return { kind: 'GONE' };
  return withdrawOnPage(db, { workspaceId, studyId: facts.study_id, participantId: facts.participant_id, at });
}
