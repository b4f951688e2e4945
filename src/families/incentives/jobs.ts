import type { Kysely } from 'kysely';
import type { Clock } from '../../clock.js';
import type { DB, IncentiveRow } from '../../db/schema.js';
import { type JobHandler, type Schedule, sweepScope } from '../../jobs/queue.js';
import { type IncentiveProviders, type ProviderOrder, providerApiUrls, providerNames } from '../../providers/index.js';
import * as queries from './queries.js';
import { confirmedOrder, ORDER_ATTEMPTS_MAX, recordProviderReport, PROVIDER_RETRY_SECONDS, PROVIDER_RETRY_SECONDS_MAX, refusedOrder, transition, voidConfirmed, voidRefused } from './service.js';
import { inTransaction } from '../../db/transaction.js';
import { type Actor, appendLedger } from './ledger.js';
import { EXPIRY_APPLIES_FROM, expiryCutoff, type ProviderBackedType } from './states.js';

export const EXPIRY_QUEUE = 'incentives.expire';
export const PROVIDER_QUEUE = 'incentives.provider';
/** Each expiry is a provider call: batches as small as the provider work's. */
const EXPIRY_BATCH_SIZE = 20;
const PROVIDER_BATCH_SIZE = 20;
/** The background work, as the ledger names it. */
const providerJob: Actor = { kind: 'JOB', id: PROVIDER_QUEUE };
const expiryJob: Actor = { kind: 'JOB', id: EXPIRY_QUEUE };
/** The reconciliation reports what the provider said: the ledger names the provider's answer, through this job. */
const reconcileJob: Actor = { kind: 'JOB', id: 'incentives.reconcile' };

export interface ExpiryResult {
  /** Voided at the provider and marked EXPIRED. */
  expired: number;
  /** Marked for expiry, the void not confirmed yet: the provider work asks again, and they become EXPIRED then. */
  voidsPending: number;
}

/**
 * Expires incentives sent from 2026-02-01 on that stayed UNCLAIMED for a year, by the service's
 * clock, through the provider: each batch is marked VOIDING for expiry in one statement that locks
 * its rows (skipping any a claim or cancel holds at that moment: the next run takes them), then
 * each order is voided and the incentive marked EXPIRED once the provider confirms. A void whose
 * outcome is unknown is retried by the provider work; one the provider refuses (it holds the order
 * as final, claimed perhaps) leaves the incentive UNCLAIMED for the provider's report, and the
 * next run asks again. So an incentive never reads EXPIRED while its money can still be claimed.
 * Runs hourly, once per slot however many instances run: a system job for every workspace, a job
 * of one workspace for that one alone (see sweepScope).
 */
export function expireIncentivesHandler(db: Kysely<DB>, clock: Clock, providers: IncentiveProviders): JobHandler {
  return {
    queue: EXPIRY_QUEUE,
    async run(job): Promise<ExpiryResult> {
      const result: ExpiryResult = { expired: 0, voidsPending: 0 };
      const now = clock.now();
      const workspaceId = sweepScope(job);
      let after: queries.ExpiryPosition | undefined;
      for (;;) {
        job.signal.throwIfAborted();
        const expiring = await startExpiriesRecorded(db, {
          appliesFrom: EXPIRY_APPLIES_FROM,
          cutoff: expiryCutoff(now).toISOString(),
          now: clock.now().toISOString(),
          retrySeconds: PROVIDER_RETRY_SECONDS,
          limit: EXPIRY_BATCH_SIZE,
          after,
          workspaceId,
        });
        for (const row of expiring) {
          const outcome = await retryVoid(db, clock, providers, row, expiryJob);
          result[outcome === 'voided' ? 'expired' : 'voidsPending']++;
        }
        const last = expiring.at(-1);
        if (!last || expiring.length < EXPIRY_BATCH_SIZE) return result;
        after = { sentAt: last.sent_at, workspaceId: last.workspace_id, incentiveId: last.incentive_id };
      }
    },
  };
}

/** startExpiries and its ledger entries (EXPIRY_STARTED), in one transaction. */
async function startExpiriesRecorded(db: Kysely<DB>, options: Parameters<typeof queries.startExpiries>[1]): Promise<IncentiveRow[]> {
  return inTransaction(db, async (transaction) => {
    const rows = await queries.startExpiries(transaction, options);
    await appendLedger(transaction, rows.map((row) => ({ row, entry: { kind: 'EXPIRY_STARTED' as const, actor: expiryJob, at: options.now } })));
    return rows;
  });
}

export const expireIncentivesSchedule: Schedule = { name: 'incentives.expire', queue: EXPIRY_QUEUE, everySeconds: 60 * 60 };

export interface ProviderWorkResult {
  ordered: number;
  refused: number;
  voided: number;
  gaveUp: number;
  unknown: number;
}

/**
 * Settles provider calls whose outcome was not known: PENDING orders are placed again and
 * VOIDING voids asked again, with the incentive id as the provider's idempotency key (so a
 * repeat never pays twice), each retry waiting twice as long as the one before. An order still
 * unconfirmed after ORDER_ATTEMPTS_MAX attempts is voided (it can then never be paid) and the
 * incentive marked ERROR. Taking a row pushes its next attempt back in the same statement, so
 * runners on several instances never call for the same incentive at once. A system job takes
 * every workspace's work, a job of one workspace that one's alone (see sweepScope).
 */
export function providerWorkHandler(db: Kysely<DB>, clock: Clock, providers: IncentiveProviders): JobHandler {
  return {
    queue: PROVIDER_QUEUE,
    async run(job): Promise<ProviderWorkResult> {
      const result: ProviderWorkResult = { ordered: 0, refused: 0, voided: 0, gaveUp: 0, unknown: 0 };
      for (;;) {
        job.signal.throwIfAborted();
        const due = await queries.takeDueProviderWork(db, {
          now: clock.now().toISOString(),
          limit: PROVIDER_BATCH_SIZE,
          backoffSeconds: PROVIDER_RETRY_SECONDS,
          backoffSecondsMax: PROVIDER_RETRY_SECONDS_MAX,
          workspaceId: sweepScope(job),
        });
        for (const row of due) {
          const outcome = row.provider_state === 'VOIDING' ? await retryVoid(db, clock, providers, row, providerJob) : await retryOrder(db, clock, providers, row);
          result[outcome]++;
        }
        if (due.length < PROVIDER_BATCH_SIZE) return result;
      }
    },
  };
}

export const providerWorkSchedule: Schedule = { name: 'incentives.provider', queue: PROVIDER_QUEUE, everySeconds: 60 };

type WorkOutcome = keyof ProviderWorkResult;

async function retryOrder(db: Kysely<DB>, clock: Clock, providers: IncentiveProviders, row: queries.DueProviderWork): Promise<WorkOutcome> {
  const provider = await providers.adapter(db, row.workspace_id, row.provider!);
  const recipientEmail = row.recipient_deleted_at === null ? row.recipient_email : null;
  if (recipientEmail === null || row.provider_attempts > ORDER_ATTEMPTS_MAX) {
    const reason = recipientEmail === null
      ? 'The recipient was deleted before the provider confirmed the order; it was voided'
      : `The provider did not confirm the order after ${ORDER_ATTEMPTS_MAX} attempts; it was voided`;
    return giveUp(db, clock, providers, row, reason);
  }
  const order: ProviderOrder = {
    workspaceId: row.workspace_id,
    incentiveId: row.incentive_id,
    type: row.type as ProviderBackedType,
    amountCents: row.amount_cents,
    currency: row.currency,
    recipientEmail,
    recipientName: [row.recipient_first_name, row.recipient_last_name].filter((part) => part).join(' ') || null,
  };
  const outcome = await providers.call((options) => provider.order(order, options));
  if (outcome.kind === 'unknown') return 'unknown';
  const at = clock.now().toISOString();
  await transition(db, row.workspace_id, row.incentive_id, providerJob, (current) => {
    if (current.provider_state !== 'PENDING') return undefined;
    return outcome.kind === 'done' ? confirmedOrder(outcome.value.reference, at) : refusedOrder(`The provider refused the order: ${outcome.reason}`, at);
  });
  return outcome.kind === 'done' ? 'ordered' : 'refused';
}

/** Ends an order that was never confirmed: void it first, so that it cannot be paid after the incentive reads ERROR. */
async function giveUp(db: Kysely<DB>, clock: Clock, providers: IncentiveProviders, row: IncentiveRow, reason: string): Promise<WorkOutcome> {
  const provider = await providers.adapter(db, row.workspace_id, row.provider!);
  const outcome = await providers.call((options) =>
    provider.void({ workspaceId: row.workspace_id, incentiveId: row.incentive_id, reference: row.provider_reference }, options),
  );
  // Unknown: asked again at the next attempt. Refused: the order exists and stands (it may be
  // claimed); it stays PENDING until the provider's report or an order attempt settles it.
  if (outcome.kind !== 'done') return 'unknown';
  const at = clock.now().toISOString();
  await transition(db, row.workspace_id, row.incentive_id, providerJob, (current) => (current.provider_state === 'PENDING' ? refusedOrder(reason, at) : undefined));
  return 'gaveUp';
}

async function retryVoid(db: Kysely<DB>, clock: Clock, providers: IncentiveProviders, row: IncentiveRow, actor: Actor): Promise<WorkOutcome> {
  const provider = await providers.adapter(db, row.workspace_id, row.provider!);
  const outcome = await providers.call((options) =>
    provider.void({ workspaceId: row.workspace_id, incentiveId: row.incentive_id, reference: row.provider_reference }, options),
  );
  if (outcome.kind === 'unknown') return 'unknown';
  const at = clock.now().toISOString();
  await transition(db, row.workspace_id, row.incentive_id, actor, (current) => (outcome.kind === 'done' ? voidConfirmed(current, at) : voidRefused(current, at)));
  return outcome.kind === 'done' ? 'voided' : 'refused';
}

export const RECONCILE_QUEUE = 'incentives.reconcile';
/** An order's report is late once it is this old: only then is the provider asked. */
export const RECONCILE_MIN_AGE_SECONDS = 60 * 60;
/** An open order is asked about at most once in this long. */
export const RECONCILE_RECHECK_SECONDS = 6 * 60 * 60;
const RECONCILE_BATCH_SIZE = 20;

export interface ReconcileResult {
  open: number;
  claimed: number;
  failed: number;
  canceled: number;
  /** The provider has no such order: ordered again with the same key. */
  reordered: number;
  unknown: number;
}

/** The providers worth asking: the real ones, whose webhooks can be lost (the sandbox's answers are this process's own). */
const reconciledProviders = providerNames.filter((name) => providerApiUrls[name] !== null);

/**
 * Catches the provider reports that never came (a webhook lost, refused or never sent): asks
 * the provider about each order still open an hour after it was sent, and applies what it says
 * through the same path a webhook takes (recordProviderReport: CLAIMED or ERROR, each an event
 * and a webhook of the service's own), or CANCELED for an order canceled at the provider. An
 * order the provider does not know is ordered again with the same idempotency key (the provider
 * work does it: the incentive goes back to PENDING), which never pays twice.
 */
export function reconcileOrdersHandler(db: Kysely<DB>, clock: Clock, providers: IncentiveProviders): JobHandler {
  return {
    queue: RECONCILE_QUEUE,
    async run(job): Promise<ReconcileResult> {
      const result: ReconcileResult = { open: 0, claimed: 0, failed: 0, canceled: 0, reordered: 0, unknown: 0 };
      for (;;) {
        job.signal.throwIfAborted();
        const open = await queries.takeOpenOrdersToCheck(db, {
          now: clock.now().toISOString(),
          minAgeSeconds: RECONCILE_MIN_AGE_SECONDS,
          recheckSeconds: RECONCILE_RECHECK_SECONDS,
          providers: reconciledProviders,
          limit: RECONCILE_BATCH_SIZE,
          workspaceId: sweepScope(job),
        });
        for (const row of open) result[await reconcileOrder(db, clock, providers, row)]++;
        if (open.length < RECONCILE_BATCH_SIZE) return result;
      }
    },
  };
}

export const reconcileOrdersSchedule: Schedule = { name: 'incentives.reconcile', queue: RECONCILE_QUEUE, everySeconds: 15 * 60 };

async function reconcileOrder(db: Kysely<DB>, clock: Clock, providers: IncentiveProviders, row: IncentiveRow): Promise<keyof ReconcileResult> {
  const provider = await providers.adapter(db, row.workspace_id, row.provider!);
  const outcome = await providers.call((options) => provider.status({ workspaceId: row.workspace_id, incentiveId: row.incentive_id, reference: row.provider_reference }, options));
  if (outcome.kind !== 'done') return 'unknown';
  const state = outcome.value;
  const at = clock.now().toISOString();
  switch (state.state) {
    case 'open':
      return 'open';
    case 'claimed':
    case 'failed':
      await recordProviderReport(db, clock, {
        workspaceId: row.workspace_id,
        incentiveId: row.incentive_id,
        kind: state.state,
        ...(state.state === 'failed' ? { reason: `${state.reason} (found by the reconciliation)` } : {}),
      }).catch((error: unknown) => {
        // Settled meanwhile (a claim or a cancel came first): nothing to apply.
        if ((error as { code?: string }).code !== 'CONFLICT') throw error;
      });
      return state.state;
    case 'canceled':
      await transition(db, row.workspace_id, row.incentive_id, reconcileJob, (current) =>
        current.status === 'UNCLAIMED' && current.provider_state === 'ORDERED'
          ? { status: 'CANCELED', canceled_at: at, provider_state: 'VOIDED', provider_next_attempt_at: null, updated_at: at }
          : undefined,
      );
      return 'canceled';
    case 'not_found':
      await transition(db, row.workspace_id, row.incentive_id, reconcileJob, (current) =>
        current.status === 'UNCLAIMED' && current.provider_state === 'ORDERED'
          ? { provider_state: 'PENDING', provider_attempts: 1, provider_next_attempt_at: at, updated_at: at }
          : undefined,
      );
      return 'reordered';
  }
}
