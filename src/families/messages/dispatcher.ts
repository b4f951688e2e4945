import type { Kysely } from 'kysely';
import { type Clock, jitteredDelaySeconds, plusSeconds } from '../../clock.js';
import type { DB, MessageOrigin } from '../../db/schema.js';
import { ApiError } from '../../http/errors.js';
import { attemptsSpent, deliveryErrors } from './delivery-errors.js';
import { claimDueMessages, type ClaimedMessage, type MessageOutcome, recordMessageOutcomes } from './delivery-queries.js';
import type { Mailer } from './mailer.js';
import { type NotSentReason, skipReasonOf } from './outbox.js';
import { parseTemplate, renderTemplate, type TemplateValues } from './template-language.js';
import { unsubscribeToken, unsubscribeUrl } from './unsubscribe.js';
import { deleteLinksOfMessage, issueLink } from '../participant-links/service.js';

/**
 * When a message that failed for a temporary reason (an SMTP 4xx, no connection, a timeout) is
 * tried again: after the first attempt 1 min, then 5 min, 15 min, 1 h, 3 h, 6 h and 12 h, each
 * ±10% at random. Eight attempts over about 22 hours 20 minutes; after the eighth fails the
 * message is FAILED.
 */
export const mailRetryDelaysSeconds = [60, 300, 900, 3_600, 10_800, 21_600, 43_200] as const;
export const mailAttemptsMax = mailRetryDelaysSeconds.length + 1;

/**
 * Hard bounces before a person is UNREACHABLE: one. A mail server that refuses the recipient
 * address itself with a 5xx at RCPT TO (550 user unknown, 551, 553 bad address) has said the
 * address does not take mail; a second try would only hurt the sender's reputation.
 */
export const hardBouncesBeforeUnreachable = 1;

export interface MailReport {
  attempted: number;
  sent: number;
  retrying: number;
  failed: number;
  notSent: number;
}

export interface MailDispatcherOptions {
  db: Kysely<DB>;
  clock: Clock;
  mailer: Mailer;
  log: { warn(object: object, message: string): void; error(object: object, message: string): void };
  /** The HMAC key of unsubscribe links. */
  unsubscribeKey: Buffer;
  publicUrl: string;
  ratePerMinute: number;
  /** Messages per claim (default 500). */
  batch?: number;
  /** The safety-net poll (default 1 s), which also picks up retries as they come due. */
  pollMs?: number;
  /** How long a claim holds before its messages come due again (default 10 min, far beyond a batch's sending). */
  leaseSeconds?: number;
  /** Who writes the service's own messages, by origin (a session's reminder): they have no template. */
  composers?: Partial<Record<MessageOrigin, MessageComposer>>;
}

/** What a composer is given besides the message: the owner's handle, for its own reads and the links it makes. */
export interface ComposeContext {
  db: Kysely<DB>;
  publicUrl: string;
  /** The message's unsubscribe link, which the body carries. */
  unsubscribeUrl: string;
  /** This attempt's time. */
  at: string;
}

/** A message of the service's own, as it goes; or why it must not go any more (recorded NOT_SENT with that reason). */
export type Composed = { subject: string; text: string; html: string | null } | { notSent: NotSentReason };

/**
 * Writes one of the service's own messages as it is sent, reading again what it is about: a
 * reminder whose booking was canceled or moved meanwhile answers notSent. A composer that throws
 * fails the message as a template that cannot be rendered does.
 */
export type MessageComposer = (message: ClaimedMessage, context: ComposeContext) => Promise<Composed>;

const emptyReport = (): MailReport => ({ attempted: 0, sent: 0, retrying: 0, failed: 0, notSent: 0 });

/**
 * Sends queued messages: claims a batch (per workspace within its rate), renders each for its
 * person, hands them to SMTP together (the pool's connections share them), records the batch's
 * outcomes in one transaction, and claims again until nothing is due. Delivery is at least once:
 * an SMTP success whose outcome is not recorded (the process dies in between, or the database
 * write fails) is sent again when the lease lapses.
 */
export class MailDispatcher {
  private readonly batch: number;
  private readonly pollMs: number;
  private readonly leaseSeconds: number;
  private draining: Promise<void> | undefined;
  private drainAgain = false;
  private pollTimer: NodeJS.Timeout | undefined;
  private stopped = true;
  private readonly listeners = new Set<(report: MailReport) => void>();
  /** Parsed templates by id and update time: a batch to 10,000 people parses its template once. */
  private readonly parsed = new Map<string, Promise<ParsedTemplate>>();

  constructor(private readonly options: MailDispatcherOptions) {
    this.batch = options.batch ?? 500;
    this.pollMs = options.pollMs ?? 1000;
    this.leaseSeconds = options.leaseSeconds ?? 600;
  }

  start(): void {
    this.stopped = false;
    const poll = () => {
      this.wake();
      this.pollTimer = setTimeout(poll, this.pollMs);
      this.pollTimer.unref();
    };
    poll();
  }

  /** Sends what is due now (a commit queued messages); coalesces with a drain under way. */
  wake(): void {
    if (this.stopped) return;
    if (this.draining) {
      this.drainAgain = true;
      return;
    }
    this.draining = this.drain(undefined)
      .then(() => undefined)
      .catch((error: unknown) => this.options.log.warn({ err: error }, 'mail: sending queued messages failed; the next poll tries again'))
      .finally(() => {
        this.draining = undefined;
        if (this.drainAgain) {
          this.drainAgain = false;
          this.wake();
        }
      });
  }

  /** Sends every message due now (of one workspace, or all) and answers once each outcome is recorded: tests and the test helper drive sending with it. */
  runDue(workspaceId?: string): Promise<MailReport> {
    return this.drain(workspaceId);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.pollTimer);
    await this.draining;
  }

  onRecorded(listener: (report: MailReport) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private async drain(workspaceId: string | undefined): Promise<MailReport> {
    const total = emptyReport();
    for (;;) {
      const now = this.options.clock.now();
      const claimed = await claimDueMessages(this.options.db, {
        now: now.toISOString(),
        leaseUntil: plusSeconds(now, this.leaseSeconds),
        batch: this.batch,
        ratePerMinute: this.options.ratePerMinute,
        workspaceId,
      });
      if (claimed.length === 0) return total;
      const outcomes = await Promise.all(claimed.map((message) => this.attempt(message, now.toISOString())));
      // Unrecorded outcomes are not lost work: their leases lapse and the messages are tried again (at least once).
      await recordMessageOutcomes(this.options.db, outcomes);
      const report = reportOf(outcomes);
      for (const key of Object.keys(total) as (keyof MailReport)[]) total[key] += report[key];
      for (const listener of this.listeners) listener(report);
      if (this.stopped && workspaceId === undefined) return total;
    }
  }

  private async attempt(message: ClaimedMessage, attemptedAt: string): Promise<MessageOutcome> {
    const base = { workspaceId: message.workspace_id, messageId: message.message_id, personId: message.person_id, attemptedAt, contact: false, hardBounce: false };
    const notSent = (reason: NotSentReason): MessageOutcome => ({
      ...base,
      status: 'NOT_SENT',
      nextAttemptAt: null,
      event: 'NOT_SENT',
      smtpCode: null,
      error: null,
      notSentReason: reason,
    });
    // The person is read again as the message goes: whoever opted out, was deleted or bounced since the request is not sent to.
    const skip = skipReasonOf({ participant_id: null, person_id: message.person_id, is_deleted: message.is_deleted, is_opted_out: message.is_opted_out, contact_status: message.contact_status, has_email: message.email !== null, study_messages_stopped: message.study_messages_stopped });
    if (skip) return notSent(skip);
    const composer = this.options.composers?.[message.origin];
    if (!composer && message.template_key === null) return notSent('TEMPLATE_DELETED');
    const link = unsubscribeUrl(this.options.publicUrl, unsubscribeToken(this.options.unsubscribeKey, message.workspace_id, message.person_id, message.message_id));
    let rendered: { subject: string; text: string; html: string | null };
    try {
      if (composer) {
        const composed = await composer(message, { db: this.options.db, publicUrl: this.options.publicUrl, unsubscribeUrl: link, at: attemptedAt });
        if ('notSent' in composed) return notSent(composed.notSent);
        rendered = composed;
      } else {
        rendered = await this.render(message, link, attemptedAt);
      }
    } catch (error) {
      // The detail (the failing tag, its line and column) can depend on the person's values: the log has it, the API a fixed text.
      const detail = error instanceof ApiError ? error.items.map((item) => item.message).join('; ') : error instanceof Error ? error.message : String(error);
      this.options.log.warn({ workspaceId: message.workspace_id, messageId: message.message_id, detail }, 'mail: the template could not be rendered for a recipient');
      return { ...base, status: 'FAILED', nextAttemptAt: null, event: 'FAILED', smtpCode: null, error: deliveryErrors.RENDER_FAILED, notSentReason: null };
    }
    const result = await this.options.mailer.send({ to: message.email!, subject: rendered.subject, text: rendered.text, html: rendered.html, messageId: message.message_id, unsubscribeUrl: link });
    if (result.outcome === 'SENT') {
      return {
        ...base,
        contact: message.counts_as_contact,
        status: 'SENT',
        nextAttemptAt: null,
        event: 'SENT',
        smtpCode: result.smtpCode,
        error: null,
        notSentReason: null,
        sent: { recipientEmail: message.email!, subject: rendered.subject, textBody: rendered.text, htmlBody: rendered.html, smtpMessageId: result.smtpMessageId },
      };
    }
    // The server's answer often quotes the address: the log has it, the API a fixed text (delivery-errors.ts).
    this.options.log.warn(
      { workspaceId: message.workspace_id, messageId: message.message_id, smtpCode: result.smtpCode, outcome: result.outcome, detail: result.error },
      'mail: an attempt failed',
    );
    const delay = result.outcome === 'TEMPORARY' ? jitteredDelaySeconds(mailRetryDelaysSeconds, message.attempt_count) : undefined;
    if (delay !== undefined) {
      return { ...base, status: 'QUEUED', nextAttemptAt: plusSeconds(this.options.clock.now(), delay), event: 'RETRYING', smtpCode: result.smtpCode, error: deliveryErrors[result.reason], notSentReason: null };
    }
    const error = result.outcome === 'TEMPORARY' ? attemptsSpent(result.reason, mailAttemptsMax) : deliveryErrors[result.reason];
    return { ...base, hardBounce: result.outcome === 'RECIPIENT_REFUSED', status: 'FAILED', nextAttemptAt: null, event: 'FAILED', smtpCode: result.smtpCode, error, notSentReason: null };
  }

  /**
   * The participant's own links the template places, made as the message goes: one per message
   * and purpose, recorded with the message's id. A token is known only until it is sent, so an
   * attempt after the first replaces the links of the attempts before it (the earlier attempt's
   * mail was refused or never confirmed; its link opens nothing once replaced).
   */
  private async participantLinks(message: ClaimedMessage, purposes: readonly ParticipantPagePurpose[], at: string): Promise<Record<ParticipantPagePurpose, string>> {
    const urls: Record<ParticipantPagePurpose, string> = { SCREENER: '', CONSENT: '', SCHEDULING: '' };
    if (purposes.length === 0 || message.participant_id === null || message.study_id === null) return urls;
    if (message.attempt_count > 1) await deleteLinksOfMessage(this.options.db, message.workspace_id, message.message_id);
    for (const purpose of purposes) {
      const issued = await issueLink(this.options.db, {
        workspaceId: message.workspace_id,
        participantId: message.participant_id,
        studyId: message.study_id,
        personId: message.person_id,
        purpose,
        publicUrl: this.options.publicUrl,
        at,
        messageId: message.message_id,
      });
      urls[purpose] = issued.url;
    }
    return urls;
  }

  private async render(message: ClaimedMessage, unsubscribe: string, at: string) {
    const key = message.template_key!;
    let parsed = this.parsed.get(key);
    if (!parsed) {
      if (this.parsed.size >= 100) this.parsed.clear();
      parsed = (async () => {
        // Checked again (a template saved before a rule was added); the worker renders the sources.
        const subject = await parseTemplate('subject', message.template_subject!);
        const textBody = await parseTemplate('textBody', message.template_text!);
        const htmlBody = message.template_html === null ? null : await parseTemplate('htmlBody', message.template_html);
        return {
          subject: message.template_subject!,
          textBody: message.template_text!,
          htmlBody: htmlBody === null ? null : message.template_html,
          textHasLink: textBody.variables.has('links.unsubscribe'),
          htmlHasLink: htmlBody?.variables.has('links.unsubscribe') ?? false,
          participantLinks: participantPagePurposes.filter(({ variable }) =>
            [subject, textBody, htmlBody].some((parsedSource) => parsedSource?.variables.has(variable)),
          ).map(({ purpose }) => purpose),
        };
      })();
      parsed.catch(() => this.parsed.delete(key));
      this.parsed.set(key, parsed);
    }
    const templates = await parsed;
    const pages = await this.participantLinks(message, templates.participantLinks, at);
    const values: TemplateValues = {
      person: {
        firstName: message.first_name ?? '',
        lastName: message.last_name ?? '',
        fullName: [message.first_name, message.last_name].filter((part) => part).join(' '),
        email: message.email ?? '',
      },
      study: { externalName: message.study_external_name ?? '', externalDescription: message.study_external_description ?? '' },
      workspace: { name: message.workspace_name },
      links: { screener: pages.SCREENER, consent: pages.CONSENT, scheduling: pages.SCHEDULING, unsubscribe },
    };
    // Every message carries its unsubscribe link in the body too: a template that does not place it gets it as a last line.
    const text = await renderTemplate('textBody', templates.textBody, values, message.workspace_id);
    const html = templates.htmlBody === null ? null : await renderTemplate('htmlBody', templates.htmlBody, values, message.workspace_id);
    return {
      subject: await renderTemplate('subject', templates.subject, values, message.workspace_id),
      text: templates.textHasLink ? text : `${text}\n\n--\nUnsubscribe: ${unsubscribe}\n`,
      html: html === null || templates.htmlHasLink ? html : `${html}\n<p style="font-size:small"><a href="${escapeAttribute(unsubscribe)}">Unsubscribe</a></p>`,
    };
  }
}

/** A template's sources once checked (the render worker parses and caches them). */
interface ParsedTemplate {
  subject: string;
  textBody: string;
  htmlBody: string | null;
  textHasLink: boolean;
  htmlHasLink: boolean;
  /** The participant's pages the template links to, by purpose. */
  participantLinks: ParticipantPagePurpose[];
}

type ParticipantPagePurpose = 'SCREENER' | 'CONSENT' | 'SCHEDULING';
const participantPagePurposes = [
  { variable: 'links.screener', purpose: 'SCREENER' },
  { variable: 'links.consent', purpose: 'CONSENT' },
  { variable: 'links.scheduling', purpose: 'SCHEDULING' },
] as const satisfies readonly { variable: string; purpose: ParticipantPagePurpose }[];

const escapeAttribute = (value: string) => value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function reportOf(outcomes: readonly MessageOutcome[]): MailReport {
  const report = emptyReport();
  report.attempted = outcomes.length;
  for (const outcome of outcomes) {
    if (outcome.status === 'SENT') report.sent++;
    else if (outcome.status === 'QUEUED') report.retrying++;
    else if (outcome.status === 'FAILED') report.failed++;
    else report.notSent++;
  }
  return report;
}

