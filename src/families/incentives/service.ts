import type { Kysely } from 'kysely';
import { type Clock, plusSeconds } from '../../clock.js';
import type { CallContext as SharedCallContext } from '../../context.js';
import type { DB, IncentiveRow, StoredStudyPlan } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { badGateway, badRequest, conflict, draftStatusError, notFound } from '../../http/errors.js';
import { IDEMPOTENCY_HEADER } from '../../http/idempotency/plugin.js';
import { maskEmail } from '../../http/masking.js';
import { idPrefixes, newId } from '../../ids.js';
import type { IncentiveProviders, ProviderOrder, ProviderReport } from '../../providers/index.js';
import * as budgetQueries from '../incentive-budgets/queries.js';
import { checkAmount, checkCurrency } from './currencies.js';
import { type Actor, appendLedger, type LedgerEntryInput, ledgerKindOf } from './ledger.js';
import * as queries from './queries.js';
import type { Incentive, SendIncentiveBody } from './schemas.js';
import { cancelRefusal, isProviderBacked, type ProviderBackedType, reportRefusal, resendRefusal } from './states.js';
import type { OutboxEvent } from '../webhooks/events.js';
import { recordEvents } from '../webhooks/outbox.js';

export type CallContext = Pick<SharedCallContext, 'db' | 'clock' | 'workspaceId' | 'userId' | 'canReadPersonalData'> & Pick<Partial<SharedCallContext>, 'tokenId'>;

/** The caller as the ledger records them. */
export const userActor = (context: CallContext): Actor => ({ kind: 'USER', userId: context.userId, tokenId: context.tokenId ?? null });

/** The first retry of a provider call whose outcome is unknown waits this long; each further one twice as long. */
export const PROVIDER_RETRY_SECONDS = 30;
export const PROVIDER_RETRY_SECONDS_MAX = 60 * 60;
/**
 * Order attempts (the request's own and the background retries) before the service gives up on
 * an order the provider never confirmed: it then voids it (so it can never be paid later) and
 * marks the incentive ERROR. With the backoff above that is about two hours of retries.
 */
export const ORDER_ATTEMPTS_MAX = 8;

/**
 * Incentive rows as Incentive responses: the recipients' emails in one query, null for people
 * deleted since, masked for tokens without the personal-data right. Rows keep their order.
 */
export async function presentIncentives(
  db: Kysely<DB>,
  workspaceId: string,
  rows: readonly queries.PresentableIncentiveRow[],
  canReadPersonalData: boolean,
): Promise<Incentive[]> {
  if (rows.length === 0) return [];
  const emails = await queries.findRecipientEmails(
    db,
    workspaceId,
    rows.map((row) => row.person_id),
  );
  return rows.map((row) => presentIncentive(row, emails.get(row.person_id) ?? null, canReadPersonalData));
}

/** One incentive row with its recipient's email (null once they are deleted), read with it or looked up. */
export function presentIncentive(row: queries.PresentableIncentiveRow, recipientEmail: string | null, canReadPersonalData: boolean): Incentive {
  return {
    incentiveId: row.incentive_id,
    type: row.type,
    amountCents: row.amount_cents,
    currency: row.currency,
    sentAt: row.sent_at,
    recipientEmail: maskEmail(recipientEmail, canReadPersonalData),
    personId: row.person_id,
    participantId: row.participant_id,
    studyId: row.study_id,
    status: row.status,
    budgetId: row.budget_id,
    customIncentiveId: row.custom_incentive_id,
    customIncentiveValue: row.custom_incentive_value,
    approval:
      row.approval_state === null
        ? null
        : { state: row.approval_state, decidedByUserId: row.approval_decided_by_user_id, decidedAt: row.approval_decided_at, reason: row.approval_reason },
  };
}

const presentOne = async (context: CallContext, row: queries.PresentableIncentiveRow) =>
  (await presentIncentives(context.db, context.workspaceId, [row], context.canReadPersonalData))[0]!;

export interface IdempotencyKey {
  key: string;
  fingerprint: string;
}

export interface SendResult {
  incentive: Incentive;
  /** The incentive was sent earlier by a request with the same Idempotency-Key: this answers that one. */
  replayed: boolean;
}

const reusedKey = () => badRequest('This Idempotency-Key was already used with a different request', [IDEMPOTENCY_HEADER]);

/** The incentive an earlier request with this key sent, if any (a different request with it is a 400). */
async function sentWithKey(context: CallContext, idempotency: IdempotencyKey | undefined): Promise<IncentiveRow | undefined> {
  if (!idempotency) return undefined;
  const existing = await queries.findIncentiveByIdempotencyKey(context.db, context.workspaceId, idempotency.key);
  if (existing && existing.idempotency_fingerprint !== idempotency.fingerprint) throw reusedKey();
  return existing;
}

function isKeyRace(error: unknown): boolean {
  const fields = error as { code?: string; constraint?: string; message?: string };
  return fields.code === '23505' && (fields.constraint === 'incentives_idempotency_key' || (fields.message ?? '').includes('incentives_idempotency_key'));
}

/**
 * What the body's type asks of its other fields: an amount for every type but CUSTOM (a CUSTOM
 * incentive may be a thing, not money: see record), and the custom fields for CUSTOM only.
 */
function checkTypeFields(body: SendIncentiveBody) {
  if (body.currency !== undefined) checkCurrency(body.currency, ['currency']);
  if (body.type === 'CUSTOM') return;
  if (body.amountCents === undefined) throw badRequest('amountCents is required', ['amountCents']);
  for (const field of ['customIncentiveId', 'customIncentiveValue'] as const) {
    if (body[field] !== undefined) throw badRequest(`${field} applies only to CUSTOM incentives`, [field]);
  }
}

interface Recorded {
  row: IncentiveRow;
  order?: ProviderOrder;
}

/**
 * Sends an incentive. It is recorded first (committed) and only then ordered at the provider,
 * with the incentive id as the provider's idempotency key, so a failure at any point leaves a
 * known state: a refusal makes it ERROR; an unknown outcome (timeout, lost connection) leaves
 * the order PENDING, and background work orders again with the same key until the provider
 * confirms or refuses (see providerWorkHandler). The provider is never called inside a
 * transaction: on the embedded store that would hold the only connection while waiting.
 *
 * With an Idempotency-Key the key is kept on the incentive too: a re-execution of the same
 * request (its reservation lost) answers the incentive already sent instead of paying again.
 */
export async function sendIncentive(
  context: CallContext,
  providers: IncentiveProviders,
  body: SendIncentiveBody,
  idempotency?: IdempotencyKey,
): Promise<SendResult> {
  const earlier = await sentWithKey(context, idempotency);
  if (earlier) return { incentive: await presentOne(context, earlier), replayed: true };
  checkTypeFields(body);
  let recorded: Recorded;
  try {
    recorded = await record(context, providers, body, idempotency);
  } catch (error) {
    if (!isKeyRace(error)) throw error;
    const winner = await sentWithKey(context, idempotency);
    if (!winner) throw error;
    return { incentive: await presentOne(context, winner), replayed: true };
  }
  let row = recorded.row;
  if (recorded.order) row = await placeOrder(context.db, context.clock, providers, row, recorded.order, userActor(context));
  return { incentive: await presentOne(context, row), replayed: false };
}

async function record(context: CallContext, providers: IncentiveProviders, body: SendIncentiveBody, idempotency: IdempotencyKey | undefined): Promise<Recorded> {
  const { workspaceId } = context;
  return inTransaction(context.db, async (db) => {
    const participant = await queries.findParticipantToPay(db, workspaceId, body.participantId);
    // A deleted person's participant is not found, here as on every route; a live person always has an email.
    if (!participant || participant.email === null) throw notFound('Participant', ['participantId']);
    const planIncentive: StoredStudyPlan['incentive'] = participant.plan.incentive ?? {};
    const now = context.clock.now();
    const at = now.toISOString();
    const providerBacked = isProviderBacked(body.type);
    const custom = body.type === 'CUSTOM';
    const customIncentiveValue = custom ? (body.customIncentiveValue ?? planIncentive.defaultCustomIncentiveValue ?? null) : null;
    // A CUSTOM incentive without an amount is a thing (a gift, a voucher code): it reads 0 cents,
    // and must then say what it is. checkTypeFields made sure every other type has an amount.
    if (custom && body.amountCents === undefined && customIncentiveValue === null) {
      throw badRequest(
        "A CUSTOM incentive without amountCents needs a customIncentiveValue (or the study plan's defaultCustomIncentiveValue)",
        ['customIncentiveValue'],
      );
    }
    const budgetId = body.budgetId ?? planIncentive.incentiveBudgetId ?? null;
    const { currency, budgetHeld } = await holdAmount(db, workspaceId, budgetId, body.currency, body.amountCents ?? 0, at);
    // Above the workspace's threshold for the currency, money waits for a second person: recorded, not ordered.
    const threshold = providerBacked ? await budgetQueries.findThreshold(db, workspaceId, currency) : undefined;
    const awaitingApproval = threshold !== undefined && (body.amountCents ?? 0) > threshold;
    const row = await queries.insertIncentive(db, {
      workspace_id: workspaceId,
      incentive_id: newId(idPrefixes.incentive),
      study_id: participant.study_id,
      participant_id: participant.participant_id,
      person_id: participant.person_id,
      type: body.type,
      amount_cents: body.amountCents ?? 0,
      currency,
      status: providerBacked ? 'UNCLAIMED' : 'SENT',
      budget_id: budgetId,
      budget_held: budgetHeld,
      approval_state: awaitingApproval ? 'PENDING' : null,
      custom_incentive_id: custom ? (body.customIncentiveId ?? planIncentive.customIncentiveId ?? null) : null,
      custom_incentive_value: customIncentiveValue,
      provider: providerBacked ? await providers.selectedFor(db, workspaceId) : null,
      provider_state: providerBacked ? (awaitingApproval ? 'AWAITING_APPROVAL' : 'PENDING') : null,
      provider_reference: null,
      // This request's own order is the first attempt; background work retries from the next.
      provider_attempts: providerBacked && !awaitingApproval ? 1 : 0,
      provider_next_attempt_at: providerBacked && !awaitingApproval ? plusSeconds(now, PROVIDER_RETRY_SECONDS) : null,
      idempotency_key: idempotency?.key ?? null,
      idempotency_fingerprint: idempotency?.fingerprint ?? null,
      sent_by_user_id: context.userId,
      sent_at: at,
      claimed_at: null,
      canceled_at: null,
      failed_at: null,
      expired_at: null,
      failure_reason: null,
      last_resent_at: null,
      created_at: at,
      updated_at: at,
    });
    await recordEvents(
      db,
      workspaceId,
      [incentiveStatusEvent(row, null), ...(awaitingApproval ? [approvalEvent(row, null)] : [])],
      at,
    );
    await appendLedger(db, [
      { row, entry: { kind: awaitingApproval ? 'APPROVAL_REQUESTED' : 'SENT', actor: userActor(context), at, recipientEmail: participant.email } },
    ]);
    if (!providerBacked || awaitingApproval) return { row };
    return { row, order: orderOf(row, { ...participant, email: participant.email }) };
  });
}

function orderOf(row: IncentiveRow, recipient: { email: string; first_name: string | null; last_name: string | null }): ProviderOrder {
  return {
    workspaceId: row.workspace_id,
    incentiveId: row.incentive_id,
    type: row.type as ProviderBackedType,
    amountCents: row.amount_cents,
    currency: row.currency,
    recipientEmail: recipient.email,
    recipientName: [recipient.first_name, recipient.last_name].filter((part) => part).join(' ') || null,
  };
}

/**
 * The incentive's currency (given, else its budget's, else USD) and its amount taken from the
 * budget it names, in the caller's transaction: a budget that is not found is a 404, an archived
 * one or one with too little left a 409, a currency other than the budget's a 400, each naming
 * the field. The take itself is one conditional update (holdBudget): never overspent.
 */
async function holdAmount(db: Kysely<DB>, workspaceId: string, budgetId: string | null, givenCurrency: string | undefined, amount: number, at: string) {
  const budget = budgetId === null ? undefined : await budgetQueries.findBudget(db, workspaceId, budgetId);
  if (budgetId !== null && !budget) throw notFound('Incentive budget', ['budgetId']);
  if (budget && givenCurrency !== undefined && givenCurrency !== budget.currency) {
    throw badRequest(`currency must be the budget's (${budget.currency}); ${givenCurrency} was given`, ['currency']);
  }
  const currency = givenCurrency ?? budget?.currency ?? 'USD';
  if (amount > 0) checkAmount(amount, currency, ['amountCents']);
  if (!budget || amount === 0) return { currency, budgetHeld: false };
  if (budget.archived_at !== null) throw conflict('The incentive budget is archived', ['budgetId']);
  const held = await budgetQueries.holdBudget(db, workspaceId, budget.budget_id, amount, at);
  if (!held) {
    const current = await budgetQueries.findBudget(db, workspaceId, budget.budget_id);
    const remaining = current ? current.limit_minor - current.spent_minor : 0;
    throw conflict(`The incentive budget has ${remaining} left (in ${currency}'s minor unit); this incentive needs ${amount}`, ['budgetId']);
  }
  return { currency, budgetHeld: true };
}

/** The webhook event of an approval's step: requested (from null), approved, refused or withdrawn. */
function approvalEvent(row: IncentiveRow, from: IncentiveRow['approval_state']): OutboxEvent {
  return {
    type: 'incentive.approval_changed',
    data: {
      incentiveId: row.incentive_id,
      studyId: row.study_id,
      participantId: row.participant_id,
      personId: row.person_id,
      amountCents: row.amount_cents,
      currency: row.currency,
      from,
      to: row.approval_state ?? 'PENDING',
      decidedByUserId: row.approval_decided_by_user_id,
    },
  };
}

/** The webhook event of an incentive's status change (or of its sending, from null). */
function incentiveStatusEvent(row: IncentiveRow, from: IncentiveRow['status'] | null): OutboxEvent {
  return {
    type: 'incentive.status_changed',
    data: {
      incentiveId: row.incentive_id,
      studyId: row.study_id,
      participantId: row.participant_id,
      personId: row.person_id,
      type: row.type,
      amountCents: row.amount_cents,
      currency: row.currency,
      from,
      to: row.status,
      failureReason: row.status === 'ERROR' ? row.failure_reason : null,
    },
  };
}

/** Statuses in which an incentive paid nothing: its budget gets its amount back. */
const unpaidStatuses: readonly IncentiveRow['status'][] = ['CANCELED', 'ERROR', 'EXPIRED'];

type IncentiveChanges = Parameters<typeof queries.updateIncentive>[3];

/**
 * Every change of a locked incentive row goes through here, in the caller's transaction: a change
 * of status or approval is also a webhook event; a move of money is a ledger entry (with `actor`);
 * an incentive that ends unpaid gives its budget back its amount, once (budget_held is cleared in
 * the same transaction, under the row's lock).
 */
async function changeIncentive(transaction: Kysely<DB>, before: IncentiveRow, changes: IncentiveChanges, actor: Actor, entry?: Omit<LedgerEntryInput, 'actor' | 'at'>): Promise<IncentiveRow> {
  const releases = before.budget_held && changes.status !== undefined && unpaidStatuses.includes(changes.status as IncentiveRow['status']);
  const after = await queries.updateIncentive(transaction, before.workspace_id, before.incentive_id, releases ? { ...changes, budget_held: false } : changes);
  if (releases) await budgetQueries.releaseBudget(transaction, after.workspace_id, after.budget_id!, after.amount_cents, after.updated_at);
  const events: OutboxEvent[] = [];
  if (after.status !== before.status) events.push(incentiveStatusEvent(after, before.status));
  if (after.approval_state !== before.approval_state) events.push(approvalEvent(after, before.approval_state));
  await recordEvents(transaction, after.workspace_id, events, after.updated_at);
  const kind = entry?.kind ?? ledgerKindOf(before, after);
  if (kind) await appendLedger(transaction, [{ row: after, entry: { ...entry, kind, actor, at: after.updated_at } }]);
  return after;
}

/**
 * Locks the incentive and applies `change` if it still applies (another request, a report or
 * the background work may have moved it since it was read). Returns the row as it is then.
 */
export async function transition(
  db: Kysely<DB>,
  workspaceId: string,
  incentiveId: string,
  actor: Actor,
  change: (row: IncentiveRow) => IncentiveChanges | undefined,
): Promise<IncentiveRow> {
  return inTransaction(db, async (transaction) => {
    const row = await queries.findIncentive(transaction, workspaceId, incentiveId, { forUpdate: true });
    if (!row) throw new Error(`Incentive ${incentiveId} vanished`);
    const changes = change(row);
    return changes ? changeIncentive(transaction, row, changes, actor) : row;
  });
}

export const confirmedOrder = (reference: string, at: string) => ({ provider_state: 'ORDERED' as const, provider_reference: reference, provider_next_attempt_at: null, updated_at: at });
export const refusedOrder = (reason: string, at: string) => ({
  status: 'ERROR' as const,
  provider_state: 'FAILED' as const,
  provider_next_attempt_at: null,
  failure_reason: reason,
  failed_at: at,
  updated_at: at,
});

/** Orders at the provider and records a known outcome; an unknown one stays PENDING for the background retries. */
async function placeOrder(db: Kysely<DB>, clock: Clock, providers: IncentiveProviders, row: IncentiveRow, order: ProviderOrder, actor: Actor): Promise<IncentiveRow> {
  const provider = await providers.adapter(db, row.workspace_id, row.provider!);
  const outcome = await providers.call((options) => provider.order(order, options));
  if (outcome.kind === 'unknown') return row;
  const at = clock.now().toISOString();
  return transition(db, row.workspace_id, row.incentive_id, actor, (current) => {
    if (current.provider_state !== 'PENDING') return undefined;
    return outcome.kind === 'done' ? confirmedOrder(outcome.value.reference, at) : refusedOrder(`The provider refused the order: ${outcome.reason}`, at);
  });
}

export async function getIncentive(context: CallContext, incentiveId: string): Promise<Incentive> {
  const row = await queries.findIncentive(context.db, context.workspaceId, incentiveId);
  if (!row) throw notFound('Incentive', ['incentiveId']);
  return presentOne(context, row);
}

/**
 * Locks the incentive for an E16/E17 decision: 404 when it does not exist, the draft-status
 * error when its study is not in DRAFT (the reference's rule for both), then `decide`.
 */
async function lockForAction<T>(context: CallContext, incentiveId: string, decide: (db: Kysely<DB>, row: IncentiveRow) => Promise<T>): Promise<T> {
  return inTransaction(context.db, async (db) => {
    const row = await queries.findIncentive(db, context.workspaceId, incentiveId, { forUpdate: true });
    if (!row) throw notFound('Incentive', ['incentiveId']);
    const studyStatus = await queries.findStudyStatusForShare(db, context.workspaceId, row.study_id);
    if (studyStatus !== 'DRAFT') throw draftStatusError();
    return decide(db, row);
  });
}

export interface ActionResult {
  success: true;
  incentiveId: string;
}

/**
 * E16: asks the provider to send the claim email again. Status does not change; the resend is
 * counted. A provider refusal is a 409; no answer in time is a 502 (retrying is safe).
 */
export async function resendIncentive(context: CallContext, providers: IncentiveProviders, incentiveId: string): Promise<ActionResult> {
  const row = await lockForAction(context, incentiveId, async (_db, locked) => {
    const refusal = resendRefusal(locked);
    if (refusal) throw conflict(refusal, ['incentiveId']);
    return locked;
  });
  const provider = await providers.adapter(context.db, row.workspace_id, row.provider!);
  const outcome = await providers.call((options) =>
    provider.resend({ workspaceId: row.workspace_id, incentiveId: row.incentive_id, reference: row.provider_reference }, options),
  );
  if (outcome.kind === 'refused') throw conflict(`The provider refused to resend the incentive: ${outcome.reason}`, ['incentiveId']);
  if (outcome.kind === 'unknown') throw badGateway('The provider did not confirm the resend; retrying is safe', ['incentiveId']);
  const at = context.clock.now().toISOString();
  await transition(context.db, context.workspaceId, incentiveId, userActor(context), (current) => ({
    resend_count: current.resend_count + 1,
    last_resent_at: at,
    updated_at: at,
  }));
  return { success: true, incentiveId };
}

/** What the void was for decides the status it ends in: CANCELED (E17) or EXPIRED (a year unclaimed). */
function voidedStatus(current: IncentiveRow, at: string) {
  if (current.status !== 'UNCLAIMED') return {};
  return current.void_purpose === 'EXPIRE' ? { status: 'EXPIRED' as const, expired_at: at } : { status: 'CANCELED' as const, canceled_at: at };
}

export const voidConfirmed = (current: IncentiveRow, at: string) =>
  current.provider_state !== 'VOIDING'
    ? undefined
    : { provider_state: 'VOIDED' as const, provider_next_attempt_at: null, ...voidedStatus(current, at), updated_at: at };

/** The provider refused the void: the order stands (the recipient may have claimed it), and the incentive stays UNCLAIMED. */
export const voidRefused = (current: IncentiveRow, at: string) =>
  current.provider_state !== 'VOIDING' ? undefined : { provider_state: 'ORDERED' as const, void_purpose: null, provider_next_attempt_at: null, updated_at: at };

/**
 * E17. CUSTOM and RECRUITMENT_FEE incentives (SENT) are marked CANCELED. A provider-backed one
 * (UNCLAIMED) is voided at the provider first: the intent is recorded (VOIDING), the provider
 * asked, and the incentive becomes CANCELED once the provider confirms. A refusal restores it
 * (409); no answer in time leaves the void to the background retries (502: it becomes CANCELED
 * when the provider confirms, and calling cancel again asks again).
 */
export async function cancelIncentive(context: CallContext, providers: IncentiveProviders, incentiveId: string): Promise<ActionResult> {
  const row = await lockForAction(context, incentiveId, async (db, locked) => {
    const refusal = cancelRefusal(locked);
    if (refusal) throw conflict(refusal, ['incentiveId']);
    const now = context.clock.now();
    const at = now.toISOString();
    const actor = userActor(context);
    if (locked.status === 'SENT') return changeIncentive(db, locked, { status: 'CANCELED', canceled_at: at, updated_at: at }, actor);
    // Never ordered: withdrawn without a provider call (its budget is given back).
    if (locked.provider_state === 'AWAITING_APPROVAL') {
      return changeIncentive(
        db,
        locked,
        { status: 'CANCELED', canceled_at: at, provider_state: 'NOT_ORDERED', approval_state: 'WITHDRAWN', updated_at: at },
        actor,
      );
    }
    return changeIncentive(db, locked, {
      provider_state: 'VOIDING',
      void_purpose: 'CANCEL',
      provider_attempts: 1,
      provider_next_attempt_at: plusSeconds(now, PROVIDER_RETRY_SECONDS),
      updated_at: at,
    }, actor);
  });
  if (row.status === 'CANCELED') return { success: true, incentiveId };

  const provider = await providers.adapter(context.db, row.workspace_id, row.provider!);
  const outcome = await providers.call((options) =>
    provider.void({ workspaceId: row.workspace_id, incentiveId: row.incentive_id, reference: row.provider_reference }, options),
  );
  if (outcome.kind === 'unknown') {
    throw badGateway('The provider did not confirm the void in time; the service keeps asking, and the incentive becomes CANCELED when it does', ['incentiveId']);
  }
  const at = context.clock.now().toISOString();
  const settled = await transition(context.db, context.workspaceId, incentiveId, userActor(context), (current) =>
    outcome.kind === 'done' ? voidConfirmed(current, at) : voidRefused(current, at),
  );
  if (outcome.kind === 'refused') throw conflict(`The provider refused to void the incentive: ${outcome.reason}`, ['incentiveId']);
  // A report may have overtaken the void (the recipient claimed it meanwhile): say what happened.
  if (settled.status !== 'CANCELED') throw conflict(cancelRefusal(settled) ?? `Incentive is ${settled.status}`, ['incentiveId']);
  return { success: true, incentiveId };
}

/**
 * What a provider reports about an incentive it holds: `claimed` (UNCLAIMED → CLAIMED) or
 * `failed` (UNCLAIMED → ERROR). The one code path for provider webhooks and the test helpers.
 * A report that repeats the current status changes nothing (providers redeliver); one that
 * contradicts it (a claim of a canceled incentive) is a 409. A report also settles the order:
 * the provider holds it, so a retrying order or void is over.
 */
export async function recordProviderReport(db: Kysely<DB>, clock: Clock, report: ProviderReport): Promise<IncentiveRow> {
  // Every report is in the ledger, a refused one too: its entry is committed before the 409.
  const result = await inTransaction(db, async (transaction) => {
    const row = await queries.findIncentive(transaction, report.workspaceId, report.incentiveId, { forUpdate: true });
    if (!row) throw notFound('Incentive', ['incentiveId']);
    const at = clock.now().toISOString();
    const actor: Actor = { kind: 'PROVIDER', id: row.provider ?? 'none' };
    const said = `${report.kind}${report.reason ? `: ${report.reason}` : ''}`;
    const refusal = reportRefusal(row, report.kind);
    if (refusal || row.status !== 'UNCLAIMED') {
      const note = refusal ? `${said} (refused: ${refusal})` : `${said} (repeated: no change)`;
      await appendLedger(transaction, [{ row, entry: { kind: 'PROVIDER_REPORT', actor, at, note } }]);
      return { row, refusal };
    }
    const settledOrder =
      row.provider_state === 'PENDING' || row.provider_state === 'VOIDING'
        ? { provider_state: 'ORDERED' as const, void_purpose: null, provider_next_attempt_at: null, provider_reference: report.reference ?? row.provider_reference }
        : {};
    const outcome =
      report.kind === 'claimed'
        ? { status: 'CLAIMED' as const, claimed_at: at }
        : { status: 'ERROR' as const, failed_at: at, failure_reason: report.reason ?? 'The provider reported a failure' };
    return { row: await changeIncentive(transaction, row, { ...settledOrder, ...outcome, updated_at: at }, actor, { kind: 'PROVIDER_REPORT', note: said }), refusal: undefined };
  });
  if (result.refusal) throw conflict(result.refusal, ['incentiveId']);
  return result.row;
}

/** The test helpers' claim and fail: the workspace is found from the incentive, as a provider's metadata would give it. */
export async function reportAsProvider(db: Kysely<DB>, clock: Clock, incentiveId: string, kind: ProviderReport['kind'], onlyWorkspaceId?: string) {
  const workspaceId = await queries.findIncentiveWorkspace(db, incentiveId);
  // Held to one workspace (a workspace's test-helper call): another workspace's incentive is not found.
  if (!workspaceId || (onlyWorkspaceId !== undefined && workspaceId !== onlyWorkspaceId)) throw notFound('Incentive', ['incentiveId']);
  const reason = kind === 'failed' ? 'Reported as failed through the test helpers' : undefined;
  const row = await recordProviderReport(db, clock, { workspaceId, incentiveId, kind, reason });
  return { incentiveId: row.incentive_id, status: row.status };
}


/**
 * Locks an incentive waiting for approval for a decision by `context`'s user: 404 when it does
 * not exist; 409 naming why when it does not wait (never did, or was decided or withdrawn: of two
 * approvers at once, the second finds it decided), or when the caller sent it (a second person decides).
 */
async function lockForDecision<T>(context: CallContext, incentiveId: string, decide: (db: Kysely<DB>, row: IncentiveRow, at: string) => Promise<T>): Promise<T> {
  return inTransaction(context.db, async (db) => {
    const row = await queries.findIncentive(db, context.workspaceId, incentiveId, { forUpdate: true });
    if (!row) throw notFound('Incentive', ['incentiveId']);
    if (row.approval_state === null) throw conflict('Incentive does not wait for approval', ['incentiveId']);
    if (row.approval_state !== 'PENDING') throw conflict(`Incentive was already ${row.approval_state.toLowerCase()}`, ['incentiveId']);
    if (row.sent_by_user_id === context.userId) {
      throw conflict('The sender of an incentive cannot decide on its approval: a second person with the right to approve must', ['incentiveId']);
    }
    return decide(db, row, context.clock.now().toISOString());
  });
}

/**
 * Approves an incentive waiting for approval and orders it at the provider, as a send does (the
 * order recorded PENDING first, so an unknown outcome is retried in the background with the
 * incentive id as the idempotency key). Its budget stays held.
 */
export async function approveIncentive(context: CallContext, providers: IncentiveProviders, incentiveId: string): Promise<Incentive> {
  const actor = userActor(context);
  const { row, order } = await lockForDecision(context, incentiveId, async (db, locked, at) => {
    const approved = await changeIncentive(
      db,
      locked,
      {
        approval_state: 'APPROVED',
        approval_decided_by_user_id: context.userId,
        approval_decided_at: at,
        provider_state: 'PENDING',
        provider_attempts: 1,
        provider_next_attempt_at: plusSeconds(new Date(at), PROVIDER_RETRY_SECONDS),
        updated_at: at,
      },
      actor,
    );
    // A recipient deleted meanwhile is not ordered for: the background work voids and ends it (ERROR).
    const recipient = await queries.findRecipient(db, context.workspaceId, approved.person_id);
    return { row: approved, order: recipient?.email ? orderOf(approved, { ...recipient, email: recipient.email }) : undefined };
  });
  const placed = order ? await placeOrder(context.db, context.clock, providers, row, order, actor) : row;
  return presentOne(context, placed);
}

/** Refuses an incentive waiting for approval: never ordered, CANCELED, its budget given back. */
export async function refuseIncentive(context: CallContext, incentiveId: string, reason: string | undefined): Promise<Incentive> {
  const row = await lockForDecision(context, incentiveId, (db, locked, at) =>
    changeIncentive(
      db,
      locked,
      {
        approval_state: 'REFUSED',
        approval_decided_by_user_id: context.userId,
        approval_decided_at: at,
        approval_reason: reason ?? null,
        status: 'CANCELED',
        canceled_at: at,
        provider_state: 'NOT_ORDERED',
        updated_at: at,
      },
      userActor(context),
      { kind: 'REFUSED', note: reason ?? null },
    ),
  );
  return presentOne(context, row);
}

/** The incentives waiting for approval, oldest first, one keyset page. */
export async function listAwaitingApproval(context: CallContext, after: string | undefined, size: number) {
  const { rows, total } = await queries.listAwaitingApproval(context.db, context.workspaceId, after, size);
  const page = rows.slice(0, size);
  return { rows: await presentIncentives(context.db, context.workspaceId, page, context.canReadPersonalData), hasNextPage: rows.length > size, total };
}
