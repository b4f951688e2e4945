import type { Kysely } from 'kysely';
import type { Clock } from '../../clock.js';
import type { Config } from '../../config.js';
import type { DB } from '../../db/schema.js';
import { SecretBox } from '../webhooks/secrets.js';
import { MailDispatcher, type MailDispatcherOptions } from './dispatcher.js';
import { type Mailer, SmtpMailer } from './mailer.js';
import { mailOutboxChannel } from './outbox.js';
import { unsubscribeKeyPurpose } from './unsubscribe.js';

export interface MailOptions {
  db: Kysely<DB>;
  clock: Clock;
  config: Config;
  log: MailDispatcherOptions['log'];
  /** The store's LISTEN (Database.listen): commits that queue messages wake the dispatcher. */
  listen: (channel: string, onNotification: () => void) => Promise<() => Promise<void>>;
  /** The dispatcher's safety-net poll (default 1 s; a test lengthens it to show the commit's notification wakes it). */
  pollMs?: number;
  /** The writers of the service's own messages, by origin (a session's reminder), handed in by app.ts. */
  composers?: MailDispatcherOptions['composers'];
}

/**
 * The mail pieces of one instance: the unsubscribe key (derived from the same secrets key as the
 * webhook secrets' box), the SMTP mailer, and the dispatcher. Without SMTP_HOST there is no
 * dispatcher: messages are recorded NOT_SENT when they are requested.
 */
export class Mail {
  readonly dispatcher: MailDispatcher | undefined;
  /** The SMTP mailer, when SMTP is configured: the dispatcher's, also used for transactional mail (a signed consent's copy). */
  readonly mailer: Mailer | undefined;
  private unlisten: (() => Promise<void>) | undefined;

  private constructor(
    private readonly options: MailOptions,
    readonly unsubscribeKey: Buffer,
  ) {
    const { config } = options;
    if (config.smtpHost !== undefined && config.publicUrl !== undefined) {
      this.mailer = new SmtpMailer(config);
      this.dispatcher = new MailDispatcher({
        db: options.db,
        clock: options.clock,
        mailer: this.mailer,
        log: options.log,
        unsubscribeKey,
        publicUrl: config.publicUrl,
        ratePerMinute: config.mailRatePerMinute,
        pollMs: options.pollMs,
        composers: options.composers,
      });
    }
  }

  static async open(options: MailOptions): Promise<Mail> {
    const box = await SecretBox.open(options.db, options.config.secretsKey);
    return new Mail(options, box.derive(unsubscribeKeyPurpose));
  }

  get smtpConfigured(): boolean {
    return this.dispatcher !== undefined;
  }

  /** Sends queued messages from now on: woken by every commit that queues one, and polling each second. */
  async start(): Promise<void> {
    const dispatcher = this.dispatcher;
    if (!dispatcher) return;
    this.unlisten = await this.options.listen(mailOutboxChannel, () => dispatcher.wake());
    dispatcher.start();
  }

  async stop(): Promise<void> {
    await this.unlisten?.();
    this.unlisten = undefined;
    await this.dispatcher?.stop();
    await this.mailer?.close();
  }
}
