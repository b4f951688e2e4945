import type { Kysely } from 'kysely';
import type { Clock } from '../../clock.js';
import type { DB } from '../../db/schema.js';
import type { JobHandler } from '../../jobs/queue.js';
import { chooseLocale, translator } from '../../participant/i18n.js';
import type { ConsentFormVersion } from '../consent-forms/schemas.js';
import { findServableVersion } from '../consent-forms/service.js';
import type { Mailer } from '../messages/mailer.js';
import { deleteLink, issueLink } from '../participant-links/service.js';
import { CONSENT_COPY_QUEUE } from './page.js';
import * as queries from './queries.js';
import { markCopySent } from './writer.js';

export interface ConsentCopyOptions {
  db: Kysely<DB>;
  clock: Clock;
  /** Undefined without SMTP: the job then ends saying so, and nothing is sent. */
  mailer: Mailer | undefined;
  publicUrl: string | undefined;
}

type CopyFacts = NonNullable<Awaited<ReturnType<typeof queries.findCopyFacts>>>;

/**
 * The signed copy's PDF of a consent signed on the participant's page, in the study's language
 * (or `locale` when given): what the copy's email carries and what the person downloads from
 * their own page.
 */
export async function signedCopyOf(form: ConsentFormVersion, facts: Pick<CopyFacts, 'plan' | 'signed_name' | 'choices' | 'submitted_at'>, locale?: string) {
  const plan = facts.plan ?? {};
  const i18n = translator(chooseLocale(locale ?? plan.language ?? form.language, undefined));
  const study = plan.externalName ?? plan.name ?? '';
  const signedAt = new Date(facts.submitted_at);
  const choices = facts.choices ?? {};
  // pdfkit and its fonts (a few MiB) are loaded with the first copy, not at the service's start.
  const { signedCopyPdf } = await import('../consent-forms/signed-copy.js');
  const pdf = await signedCopyPdf({
    form,
    fullName: facts.signed_name ?? '',
    statementIds: form.requiredStatements.map((statement) => statement.id),
    choices,
    signedAt,
    locale: i18n.locale,
    timeZone: 'UTC',
    labels: {
      statements: i18n.t('copy.pdf.statements'),
      choices: i18n.t('copy.pdf.choices'),
      agreed: i18n.t('copy.pdf.agreed'),
      declined: i18n.t('copy.pdf.declined'),
      signedBy: i18n.t('copy.pdf.signedBy'),
      signedAt: i18n.t('copy.pdf.signedAt'),
      version: i18n.t('copy.pdf.version'),
      contentHash: i18n.t('copy.pdf.contentHash'),
    },
  });
  return { pdf, i18n, study, signedAt };
}

/** A temporary failure (SMTP 4xx, no connection): the job's attempt fails and the runner tries again later. */
class TryAgain extends Error {}

/**
 * The person's signed copy of a consent signed on the participant's page, by email: the PDF
 * (signed-copy.ts) in the study's language, and in the body a link that withdraws the consent
 * (a WITHDRAWAL participant link, which never expires). Enqueued in the signing transaction
 * (page.ts), so a signature is never lost to a failed SMTP server, and sent once: the consent's
 * copy_sent_at is checked before and set after the send, and a retried attempt (SMTP 4xx, no
 * connection) first deletes the withdrawal link its failed attempt made. The only window for a
 * second copy is a process dying between SMTP's acceptance and that record (at least once, as
 * for every message of the service).
 */
export function consentCopyHandler(options: ConsentCopyOptions): JobHandler<{ consentSubmissionId: string }> {
  return {
    queue: CONSENT_COPY_QUEUE,
    async run(job) {
      const { db, clock } = options;
      const workspaceId = job.workspaceId;
      const consentSubmissionId = job.payload.consentSubmissionId;
      const facts = await queries.findCopyFacts(db, workspaceId, consentSubmissionId);
      if (!facts) return { sent: false, reason: 'CONSENT_GONE' };
      if (facts.copy_sent_at !== null) return { sent: false, reason: 'ALREADY_SENT' };
      if (facts.withdrawn_at !== null) return { sent: false, reason: 'WITHDRAWN' };
      if (facts.deleted_at !== null) return { sent: false, reason: 'DELETED' };
      if (facts.email === null) return { sent: false, reason: 'NO_EMAIL' };
      if (facts.contact_status === 'UNREACHABLE') return { sent: false, reason: 'UNREACHABLE' };
      if (!options.mailer || !options.publicUrl) return { sent: false, reason: 'SMTP_NOT_CONFIGURED' };
      if (facts.study_id === null || facts.participant_id === null || facts.consent_form_id === null || facts.form_version === null) return { sent: false, reason: 'NOT_A_STUDY_CONSENT' };
      const form = await findServableVersion(db, workspaceId, facts.consent_form_id, Number(facts.form_version));
      if (!form) return { sent: false, reason: 'FORM_GONE' };

      const { pdf, i18n, study, signedAt } = await signedCopyOf(form, facts);
      const at = clock.now().toISOString();
      const link = await db.transaction().execute((transaction) =>
        issueLink(transaction, { workspaceId, participantId: facts.participant_id!, studyId: facts.study_id!, personId: facts.person_id, purpose: 'WITHDRAWAL', publicUrl: options.publicUrl!, at }),
      );
      const values = { study, form: form.title, workspace: facts.workspace_name, link: link.url, date: signedAt };
      const result = await options.mailer.send({
        to: facts.email,
        subject: i18n.t('copy.email.subject', values),
        text: i18n.t('copy.email.body', values),
        html: null,
        messageId: `consent-copy-${consentSubmissionId}`,
        unsubscribeUrl: null,
        attachments: [{ filename: `consent-${form.consentFormId}-v${form.version}.pdf`, content: pdf, contentType: 'application/pdf' }],
      });
      if (result.outcome !== 'SENT') {
        // The link of an email that never went is of no use to anyone: it goes.
        await deleteLink(db, workspaceId, link.linkId);
        if (result.outcome === 'TEMPORARY') throw new TryAgain(`The signed copy was not sent (SMTP ${result.smtpCode ?? 'no answer'}): tried again later`);
        return { sent: false, reason: result.reason, smtpCode: result.smtpCode };
      }
      await markCopySent(db, workspaceId, consentSubmissionId, clock.now().toISOString());
      return { sent: true, withdrawalLinkId: link.linkId };
    },
  };
}
