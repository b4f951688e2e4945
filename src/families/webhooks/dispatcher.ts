import type { Kysely } from 'kysely';
import type { Clock } from '../../clock.js';
import { plusSeconds } from '../../clock.js';
import type { DB } from '../../db/schema.js';
import { idPrefixes, newId } from '../../ids.js';
import { type AttemptOutcome, claimDueDeliveries, type ClaimedDelivery, recordOutcomes } from './queries.js';
import { failingDaysBeforeDisabling, retryDelaySeconds } from './schedule.js';
import { type SecretBox, signingSecrets } from './secrets.js';
import type { WebhookSender } from './sender.js';

export interface DispatcherLogger {
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

export interface DispatcherOptions {
  db: Kysely<DB>;
  clock: Clock;
  sender: WebhookSender;
  secrets: SecretBox;
  log: DispatcherLogger;
  /** How long one attempt may take; a claim's lease is twice that and 10 s more. */
  timeoutMs: number;
  /** Attempts in flight per endpoint in this process (default 16). */
  perEndpoint?: number;
  /** The safety-net poll, for retries coming due and missed notifications (default 1000 ms). */
  pollMs?: number;
}

export interface DeliveryReport {
  attempted: number;
  succeeded: number;
  failed: number;
}

/**
 * Sends due deliveries. Every instance runs one; they share the deliveries table, and each
 * attempt is claimed by one of them (claimDueDeliveries). A commit that queued deliveries
 * notifies every instance (the outbox's NOTIFY), which claims at once; a poll each second finds
 * retries coming due. Each endpoint gets its own slots, so a slow or dead endpoint holds only its
 * own: other endpoints' deliveries are claimed and sent meanwhile. Outcomes are written in
 * batches, one transaction for all the attempts that ended while the previous batch was written.
 */
export class WebhookDispatcher {
  private readonly perEndpoint: number;
  private readonly pollMs: number;
  private readonly leaseSeconds: number;
  /** Attempts in flight here, per `workspace\0endpoint`. */
  private readonly inFlight = new Map<string, number>();
  private readonly running = new Set<Promise<void>>();
  private pending: AttemptOutcome[] = [];
  private flushing: Promise<void> | undefined;
  private cycling: Promise<void> | undefined;
  private wakeAgain = false;
  private pollTimer: NodeJS.Timeout | undefined;
  private stopped = true;
  private listeners = new Set<(report: DeliveryReport) => void>();
  private totals: DeliveryReport = { attempted: 0, succeeded: 0, failed: 0 };

  constructor(private readonly options: DispatcherOptions) {
    this.perEndpoint = options.perEndpoint ?? 16;
    this.pollMs = options.pollMs ?? 1000;
    this.leaseSeconds = (options.timeoutMs * 2) / 1000 + 10;
  }

  /** Starts claiming on every wake() and every poll. */
  start(): void {
    this.stopped = false;
    const poll = () => {
      this.wake();
      this.pollTimer = setTimeout(poll, this.pollMs);
      this.pollTimer.unref();
    };
    poll();
  }

  /** Claims due deliveries now (a notification arrived); coalesces with a claim under way. */
  wake(): void {
    if (this.stopped) return;
    if (this.cycling) {
      this.wakeAgain = true;
      return;
    }
    this.cycling = this.cycle(undefined)
      .then(() => undefined)
      .catch((error: unknown) => this.options.log.warn({ err: error }, 'webhooks: claiming deliveries failed; the next poll tries again'))
      .finally(() => {
        this.cycling = undefined;
        if (this.wakeAgain) {
          this.wakeAgain = false;
          this.wake();
        }
      });
  }

  /**
   * Sends every delivery due now (of one workspace, or all) and waits until each attempt's
   * outcome is recorded: tests and the test helpers drive deliveries with this, with the clock
   * moved to make retries due.
   */
  async runDue(workspaceId?: string): Promise<DeliveryReport> {
    const before = { ...this.totals };
    for (;;) {
      const claimed = await this.cycle(workspaceId);
      await this.settle();
      if (claimed === 0) break;
    }
    return { attempted: this.totals.attempted - before.attempted, succeeded: this.totals.succeeded - before.succeeded, failed: this.totals.failed - before.failed };
  }

  /** Stops claiming, lets attempts in flight end (their outcomes are recorded), then returns. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.pollTimer);
    await this.cycling;
    await this.settle();
  }

  /** Reports each batch of recorded outcomes (the bench and tests watch throughput with it). */
  onRecorded(listener: (report: DeliveryReport) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Waits for the attempts in flight and for every outcome to be written. */
  private async settle(): Promise<void> {
    for (;;) {
      if (this.running.size > 0) await Promise.all([...this.running]);
      else if (this.flushing) await this.flushing;
      else if (this.pending.length > 0) await this.flush();
      else return;
    }
  }

  /** One claim, its attempts started; answers how many were claimed. */
  private async cycle(workspaceId: string | undefined): Promise<number> {
    const now = this.options.clock.now();
    const capacity = [...this.inFlight.entries()].map(([key, count]) => {
      const [workspace, endpoint] = key.split('\u0000') as [string, string];
      return { workspaceId: workspace, endpointId: endpoint, free: Math.max(0, this.perEndpoint - count) };
    });
    const claimed = await claimDueDeliveries(this.options.db, {
      now: now.toISOString(),
      leaseUntil: plusSeconds(now, this.leaseSeconds),
      perEndpoint: this.perEndpoint,
      capacity,
      workspaceId,
    });
    for (const delivery of claimed) this.launch(delivery, now.toISOString());
    return claimed.length;
  }

  private launch(delivery: ClaimedDelivery, attemptedAt: string): void {
    const key = `${delivery.workspace_id}\u0000${delivery.endpoint_id}`;
    this.inFlight.set(key, (this.inFlight.get(key) ?? 0) + 1);
    const attempt = this.attempt(delivery, attemptedAt)
      .then((outcome) => {
        this.pending.push(outcome);
        void this.flush();
      })
      .catch((error: unknown) => this.options.log.error({ err: error, messageId: delivery.message_id }, 'webhooks: an attempt could not be made; its lease will lapse and it is retried'))
      .finally(() => {
        this.running.delete(attempt);
        const left = (this.inFlight.get(key) ?? 1) - 1;
        if (left === 0) this.inFlight.delete(key);
        else this.inFlight.set(key, left);
        // A slot is free: claim again, so a busy endpoint's backlog keeps flowing.
        this.wake();
      });
    this.running.add(attempt);
  }

  private async attempt(delivery: ClaimedDelivery, attemptedAt: string): Promise<AttemptOutcome> {
    const secrets = signingSecrets(this.options.secrets, delivery, attemptedAt);
    // jsonb keeps keys in its own order: the body goes out in the documented one (type, timestamp, data), as the test send and GET show it.
    const { type, timestamp, data } = delivery.payload as { type: string; timestamp: string; data: unknown };
    const result = await this.options.sender.send(delivery.url, secrets, { messageId: delivery.message_id, body: JSON.stringify({ type, timestamp, data }) });
    const delay = result.succeeded ? undefined : retryDelaySeconds(delivery.attempt_count);
    return {
      workspaceId: delivery.workspace_id,
      endpointId: delivery.endpoint_id,
      messageId: delivery.message_id,
      attemptId: newId(idPrefixes.webhookAttempt),
      trigger: delivery.trigger,
      attemptedAt,
      ...result,
      delivery: result.succeeded
        ? { state: 'SUCCEEDED', nextAttemptAt: null }
        : delay === undefined
          ? { state: 'FAILED', nextAttemptAt: null }
          : { state: 'PENDING', nextAttemptAt: plusSeconds(this.options.clock.now(), delay) },
    };
  }

  /** Writes the outcomes gathered so far; attempts ending meanwhile go into the next batch. */
  private flush(): Promise<void> {
    if (this.flushing) return this.flushing;
    if (this.pending.length === 0) return Promise.resolve();
    const batch = this.pending;
    this.pending = [];
    this.flushing = recordOutcomes(this.options.db, batch, failingDaysBeforeDisabling * 86_400)
      .then(() => {
        const report = { attempted: batch.length, succeeded: batch.filter((o) => o.succeeded).length, failed: batch.filter((o) => !o.succeeded).length };
        this.totals = { attempted: this.totals.attempted + report.attempted, succeeded: this.totals.succeeded + report.succeeded, failed: this.totals.failed + report.failed };
        for (const listener of this.listeners) listener(report);
      })
      .catch((error: unknown) => {
        // Unrecorded outcomes are not lost work: their leases lapse and the deliveries are tried again (at least once).
        this.options.log.error({ err: error, attempts: batch.length }, 'webhooks: attempt outcomes could not be recorded; those deliveries will be retried');
      })
      .finally(() => {
        this.flushing = undefined;
        if (this.pending.length > 0) void this.flush();
      });
    return this.flushing;
  }
}
