import type { Kysely } from 'kysely';
import type { Clock } from '../../clock.js';
import type { Config } from '../../config.js';
import type { DB } from '../../db/schema.js';
import { type DispatcherLogger, WebhookDispatcher } from './dispatcher.js';
import { deliveriesChannel } from './outbox.js';
import { SecretBox } from './secrets.js';
import { WebhookSender } from './sender.js';
import { type Resolver, systemResolver, type TargetPolicy } from './targets.js';

export interface WebhooksOptions {
  db: Kysely<DB>;
  clock: Clock;
  config: Config;
  log: DispatcherLogger;
  /** The store's LISTEN (Database.listen): commits that queue deliveries wake the dispatcher. */
  listen: (channel: string, onNotification: () => void) => Promise<() => Promise<void>>;
  /** Host name resolution for the address checks (tests hand in their own). */
  resolve?: Resolver;
  /** The dispatcher's safety-net poll (default 1 s; tests lengthen it to show the commit's notification wakes it). */
  pollMs?: number;
}

/** The webhook pieces of one instance: the secret box, the address policy, the sender and the dispatcher. */
export class Webhooks {
  readonly policy: TargetPolicy;
  readonly sender: WebhookSender;
  readonly dispatcher: WebhookDispatcher;
  private unlisten: (() => Promise<void>) | undefined;

  private constructor(
    private readonly options: WebhooksOptions,
    readonly secrets: SecretBox,
  ) {
    const { config } = options;
    this.policy = { allowPrivateTargets: config.webhookAllowPrivateTargets, allowHttp: config.webhookAllowHttp, resolve: options.resolve ?? systemResolver };
    this.sender = new WebhookSender(this.policy, config.webhookTimeoutMs);
    this.dispatcher = new WebhookDispatcher({ db: options.db, clock: options.clock, sender: this.sender, secrets, log: options.log, timeoutMs: config.webhookTimeoutMs, pollMs: options.pollMs });
  }

  static async open(options: WebhooksOptions): Promise<Webhooks> {
    return new Webhooks(options, await SecretBox.open(options.db, options.config.secretsKey));
  }

  /** Sends deliveries from now on: woken by every commit that queues one, and polling each second. */
  async start(): Promise<void> {
    this.unlisten = await this.options.listen(deliveriesChannel, () => this.dispatcher.wake());
    this.dispatcher.start();
  }

  async stop(): Promise<void> {
    await this.unlisten?.();
    this.unlisten = undefined;
    await this.dispatcher.stop();
    await this.sender.close();
  }
}
