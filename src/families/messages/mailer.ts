import type { Transporter } from 'nodemailer';
import type { Config } from '../../config.js';
import type { DeliveryError } from './delivery-errors.js';

/** One message as it goes to the SMTP server. */
export interface OutgoingMail {
  to: string;
  subject: string;
  text: string;
  html: string | null;
  /** The service's message id: in the Message-ID and an X-Recruit-Message-Id header, to match bounces and logs. */
  messageId: string;
  /** The List-Unsubscribe link of a message about studies; a transactional mail (a signed consent's copy) has none. */
  unsubscribeUrl: string | null;
  /** Files sent with it (a signed consent's PDF copy). */
  attachments?: { filename: string; content: Buffer; contentType: string }[];
  /**
   * A calendar invitation (RFC 6047, iMIP): nodemailer's icalEvent puts it in the message twice,
   * as a `text/calendar; method=…` alternative of the text (what Gmail, Outlook and Apple Mail
   * read to show the invitation's buttons) and as an .ics attachment (for clients that read only
   * attachments). `method` must be the calendar's own METHOD.
   */
  icalEvent?: { method: 'REQUEST' | 'CANCEL' | 'PUBLISH'; filename: string; content: string };
}

/**
 * What an attempt came to. SMTP's reply classes decide: 2xx SENT; 4xx and every failure to reach
 * or talk to the server (connection refused, timeout, TLS, authentication) TEMPORARY, tried again
 * on the schedule; 5xx PERMANENT. A 5xx refusal of the recipient address itself (at RCPT TO) is a
 * hard bounce (RECIPIENT_REFUSED); a 5xx at another stage (the sender, the content) fails the
 * message without holding it against the person.
 */
export type SendResult =
  | { outcome: 'SENT'; smtpCode: number | null; smtpMessageId: string | null }
  | {
      outcome: 'TEMPORARY' | 'PERMANENT' | 'RECIPIENT_REFUSED';
      smtpCode: number | null;
      /** What the API may say of it (delivery-errors.ts); `error` is for the server's log only. */
      reason: DeliveryError;
      error: string;
    };

export interface Mailer {
  send(mail: OutgoingMail): Promise<SendResult>;
  close(): Promise<void>;
}

interface NodemailerError extends Error {
  code?: string;
  responseCode?: number;
  response?: string;
  rejected?: unknown[];
}

/** The reply code at the head of an SMTP response line ("250 2.0.0 Ok: queued"). */
const replyCode = (response: unknown) => (typeof response === 'string' && /^\d{3}/.test(response) ? Number(response.slice(0, 3)) : null);

export function classifySmtpError(error: unknown): Extract<SendResult, { error: string }> {
  const failure = error as NodemailerError;
  const code = typeof failure.responseCode === 'number' ? failure.responseCode : null;
  const message = (failure.response ?? failure.message ?? String(error)).slice(0, 1000);
  // Credentials refused is the operator's to fix, not the message's fault: it waits for the fix on the retry schedule.
  if (failure.code === 'EAUTH') return { outcome: 'TEMPORARY', smtpCode: code, reason: 'CREDENTIALS_REFUSED', error: message };
  if (code === null || code < 500) return { outcome: 'TEMPORARY', smtpCode: code, reason: 'TEMPORARY', error: message };
  if (failure.code === 'EENVELOPE' && Array.isArray(failure.rejected) && failure.rejected.length > 0) return { outcome: 'RECIPIENT_REFUSED', smtpCode: code, reason: 'RECIPIENT_REFUSED', error: message };
  return { outcome: 'PERMANENT', smtpCode: code, reason: 'MESSAGE_REFUSED', error: message };
}

/** The domain of MAIL_FROM (`Team <team@example.org>` or `team@example.org`), for Message-IDs. */
export function fromDomain(from: string): string {
  const address = /<([^>]+)>/.exec(from)?.[1] ?? from;
  return address.split('@')[1]?.trim() || 'localhost';
}

/**
 * SMTP through nodemailer's pooled transport (SMTP_POOL_SIZE connections kept open). Nodemailer
 * (a few MiB resident) is loaded with the first message sent, not at the service's start.
 */
export class SmtpMailer implements Mailer {
  private transport: Promise<Transporter> | undefined;
  private readonly domain: string;

  constructor(private readonly config: Config) {
    this.domain = fromDomain(config.mailFrom ?? '');
  }

  private open(): Promise<Transporter> {
    const { config } = this;
    this.transport ??= import('nodemailer').then(({ default: nodemailer }) =>
      nodemailer.createTransport({
        pool: true,
        host: config.smtpHost,
        port: config.smtpPort,
        secure: config.smtpSecurity === 'tls',
        requireTLS: config.smtpSecurity === 'starttls',
        ignoreTLS: config.smtpSecurity === 'none',
        ...(config.smtpUser !== undefined ? { auth: { user: config.smtpUser, pass: config.smtpPassword ?? '' } } : {}),
        maxConnections: config.smtpPoolSize,
        maxMessages: Number.POSITIVE_INFINITY,
        connectionTimeout: config.smtpTimeoutMs,
        greetingTimeout: config.smtpTimeoutMs,
        socketTimeout: config.smtpTimeoutMs,
      }),
    );
    return this.transport;
  }

  async send(mail: OutgoingMail): Promise<SendResult> {
    const transport = await this.open();
    try {
      const info = (await transport.sendMail({
        from: this.config.mailFrom,
        to: mail.to,
        subject: mail.subject,
        text: mail.text,
        ...(mail.html !== null ? { html: mail.html } : {}),
        messageId: `<${mail.messageId}@${this.domain}>`,
        ...(mail.attachments ? { attachments: mail.attachments.map(({ filename, content, contentType }) => ({ filename, content, contentType })) } : {}),
        ...(mail.icalEvent ? { icalEvent: { method: mail.icalEvent.method, filename: mail.icalEvent.filename, content: mail.icalEvent.content } } : {}),
        headers: {
          'X-Recruit-Message-Id': mail.messageId,
          // RFC 8058: a mail client's one-click unsubscribe POSTs "List-Unsubscribe=One-Click" to this URL.
          ...(mail.unsubscribeUrl !== null ? { 'List-Unsubscribe': `<${mail.unsubscribeUrl}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' } : {}),
        },
      })) as { messageId?: string; response?: string };
      return { outcome: 'SENT', smtpCode: replyCode(info.response), smtpMessageId: info.messageId ?? null };
    } catch (error) {
      return classifySmtpError(error);
    }
  }

  async close(): Promise<void> {
    const transport = this.transport;
    this.transport = undefined;
    if (transport) (await transport).close();
  }
}
