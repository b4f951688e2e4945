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
import * as queries from './queries.js';
import type { Incentive, SendIncentiveBody } from './schemas.js';
import { cancelRefusal, isProviderBacked, type ProviderBackedType, reportRefusal, resendRefusal } from './states.js';
import type { OutboxEvent } from '../webhooks/events.js';
import { recordEvents } from '../webhooks/outbox.js';

export type CallContext = Pick<SharedCallContext, 'db' | 'clock' | 'workspaceId' | 'userId' | 'canReadPersonalData'>;

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
    sentAt: row.sent_at,
    recipientEmail: maskEmail(recipientEmail, canReadPersonalData),
    personId: row.person_id,
    participantId: row.participant_id,
    studyId: row.study_id,
    status: row.status,
    budgetId: row.budget_id,
    customIncentiveId: row.custom_incentive_id,
    customIncentiveValue: row.custom_incentive_value,
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
  if (recorded.order) row = await placeOrder(context.db, context.clock, providers, row, recorded.order);
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
    const row = await queries.insertIncentive(db, {
      workspace_id: workspaceId,
      incentive_id: newId(idPrefixes.incentive),
      study_id: participant.study_id,
      participant_id: participant.participant_id,
      person_id: participant.person_id,
      type: body.type,
      amount_cents: body.amountCents ?? 0,
      status: providerBacked ? 'UNCLAIMED' : 'SENT',
      budget_id: body.budgetId ?? planIncentive.incentiveBudgetId ?? null,
      custom_incentive_id: custom ? (body.customIncentiveId ?? planIncentive.customIncentiveId ?? null) : null,
      custom_incentive_value: customIncentiveValue,
      provider: providerBacked ? await providers.selectedFor(db, workspaceId) : null,
      provider_state: providerBacked ? 'PENDING' : null,
      provider_reference: null,
      // This request's own order is the first attempt; background work retries from the next.
      provider_attempts: providerBacked ? 1 : 0,
      provider_next_attempt_at: providerBacked ? plusSeconds(now, PROVIDER_RETRY_SECONDS) : null,
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
    await recordEvents(db, workspaceId, [incentiveStatusEvent(row, null)], at);
    if (!providerBacked) return { row };
    const name = [participant.first_name, participant.last_name].filter((part) => part).join(' ') || null;
    return {
      row,
      order: {
        workspaceId,
        incentiveId: row.incentive_id,
        type: body.type as ProviderBackedType,
        amountCents: row.amount_cents,
        currency: 'USD',
        recipientEmail: participant.email,
        recipientName: name,
      },
    };
  });
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
      from,
      to: row.status,
      failureReason: row.status === 'ERROR' ? row.failure_reason : null,
    },
  };
}

/**
 * Every change of a locked incentive row goes through here, in the caller's transaction: a change
 * of status is also a webhook event, recorded with it.
 */
async function changeIncentive(transaction: Kysely<DB>, before: IncentiveRow, changes: Parameters<typeof queries.updateIncentive>[3]): Promise<IncentiveRow> {
  const after = await queries.updateIncentive(transaction, before.workspace_id, before.incentive_id, changes);
  if (after.status !== before.status) await recordEvents(transaction, after.workspace_id, [incentiveStatusEvent(after, before.status)], after.updated_at);
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
  change: (row: IncentiveRow) => Parameters<typeof queries.updateIncentive>[3] | undefined,
): Promise<IncentiveRow> {
  return inTransaction(db, async (transaction) => {
    const row = await queries.findIncentive(transaction, workspaceId, incentiveId, { forUpdate: true });
    if (!row) throw new Error(`Incentive ${incentiveId} vanished`);
    const changes = change(row);
    return changes ? changeIncentive(transaction, row, changes) : row;
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
async function placeOrder(db: Kysely<DB>, clock: Clock, providers: IncentiveProviders, row: IncentiveRow, order: ProviderOrder): Promise<IncentiveRow> {
  const provider = await providers.adapter(db, row.workspace_id, row.provider!);
  const outcome = await providers.call((options) => provider.order(order, options));
  if (outcome.kind === 'unknown') return row;
  const at = clock.now().toISOString();
  return transition(db, row.workspace_id, row.incentive_id, (current) => {
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
  await transition(context.db, context.workspaceId, incentiveId, (current) => ({
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
    if (locked.status === 'SENT') return changeIncentive(db, locked, { status: 'CANCELED', canceled_at: at, updated_at: at });
    return changeIncentive(db, locked, {
      provider_state: 'VOIDING',
      void_purpose: 'CANCEL',
      provider_attempts: 1,
      provider_next_attempt_at: plusSeconds(now, PROVIDER_RETRY_SECONDS),
      updated_at: at,
    });
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
  const settled = await transition(context.db, context.workspaceId, incentiveId, (current) =>
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
  return inTransaction(db, async (transaction) => {
    const row = await queries.findIncentive(transaction, report.workspaceId, report.incentiveId, { forUpdate: true });
    if (!row) throw notFound('Incentive', ['incentiveId']);
    const refusal = reportRefusal(row, report.kind);
    if (refusal) throw conflict(refusal, ['incentiveId']);
    if (row.status !== 'UNCLAIMED') return row;
    const at = clock.now().toISOString();
    const settledOrder =
      row.provider_state === 'PENDING' || row.provider_state === 'VOIDING'
        ? { provider_state: 'ORDERED' as const, void_purpose: null, provider_next_attempt_at: null, provider_reference: report.reference ?? row.provider_reference }
        : {};
    const outcome =
      report.kind === 'claimed'
        ? { status: 'CLAIMED' as const, claimed_at: at }
        : { status: 'ERROR' as const, failed_at: at, failure_reason: report.reason ?? 'The provider reported a failure' };
    return changeIncentive(transaction, row, { ...settledOrder, ...outcome, updated_at: at });
  });
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

