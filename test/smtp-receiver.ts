import type { AddressInfo } from 'node:net';
import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
  parsed: ParsedMail;
}

/** An SMTP answer to inject: a 4xx (temporary) or 5xx (permanent) code and its text. */
export interface SmtpRefusal {
  code: number;
  message: string;
}

export interface SmtpReceiver {
  port: number;
  received: ReceivedMail[];
  /** Refuses a recipient address at RCPT TO (a hard bounce with a 5xx). */
  refuseRecipient: (address: string, refusal: SmtpRefusal) => void;
  /** Answers the next `times` DATA commands with the refusal (after reading the message). */
  refuseNextData: (times: number, refusal: SmtpRefusal) => void;
  /** Messages received for an address. */
  to: (address: string) => ReceivedMail[];
  close: () => Promise<void>;
}

function smtpError(refusal: SmtpRefusal): Error {
  return Object.assign(new Error(refusal.message), { responseCode: refusal.code });
}

/** A real SMTP server (the smtp-server package) on loopback, on a port of its own, that keeps what it receives. */
export async function startSmtpReceiver(options: { parse?: boolean } = {}): Promise<SmtpReceiver> {
  const parse = options.parse ?? true;
  const received: ReceivedMail[] = [];
  const refusedRecipients = new Map<string, SmtpRefusal>();
  let dataRefusals: { times: number; refusal: SmtpRefusal } | undefined;
  const server = new SMTPServer({
    secure: false,
    disabledCommands: ['AUTH', 'STARTTLS'],
    logger: false,
    size: 10 * 1024 * 1024,
    onRcptTo(address, _session, callback) {
      const refusal = refusedRecipients.get(address.address.toLowerCase());
      callback(refusal ? smtpError(refusal) : undefined);
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        if (dataRefusals && dataRefusals.times > 0) {
          dataRefusals.times--;
          callback(smtpError(dataRefusals.refusal));
          return;
        }
        const raw = Buffer.concat(chunks).toString('utf8');
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
        const to = session.envelope.rcptTo.map((rcpt) => rcpt.address);
        if (!parse) {
          received.push({ from, to, raw, parsed: undefined as unknown as ParsedMail });
          callback();
          return;
        }
        simpleParser(raw)
          .then((parsed) => {
            received.push({ from, to, raw, parsed });
            callback();
          })
          .catch((error: unknown) => callback(error as Error));
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    port,
    received,
    refuseRecipient: (address, refusal) => refusedRecipients.set(address.toLowerCase(), refusal),
    refuseNextData: (times, refusal) => {
      dataRefusals = { times, refusal };
    },
    to: (address) => received.filter((mail) => mail.to.some((to) => to.toLowerCase() === address.toLowerCase())),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The configuration of a test service that sends through `receiver`. */
export function smtpConfig(receiver: SmtpReceiver) {
  return {
    smtpHost: '127.0.0.1',
    smtpPort: receiver.port,
    smtpSecurity: 'none' as const,
    mailFrom: 'Research Team <research@example.test>',
    publicUrl: 'https://recruit.example.test',
    smtpTimeoutMs: 5_000,
  };
}

/** The header block of a raw message, each folded header on one line. */
export const unfoldedHeaders = (raw: string) => raw.split(/\r?\n\r?\n/)[0]!.replace(/\r?\n[ \t]+/g, ' ').replace(/\r/g, '');

/** The unsubscribe URL of a received message's List-Unsubscribe header. */
export function unsubscribeLinkOf(mail: ReceivedMail): string {
  const match = /^List-Unsubscribe: <([^>]+)>$/m.exec(unfoldedHeaders(mail.raw));
  if (!match) throw new Error('The message has no List-Unsubscribe header');
  return match[1]!;
}
