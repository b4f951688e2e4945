import { type Kysely, sql } from 'kysely';
import type { DB, IncentiveLedgerRow, IncentiveRow } from '../../db/schema.js';
import { maskEmail } from '../../http/masking.js';
import { idPrefixes, newId } from '../../ids.js';
import { recordServiceChanges } from '../audit/recorder.js';

/**
 * The money ledger: one append-only row per order, approval, refusal, resend, cancellation,
 * expiry and provider report, written in the transaction of the change it records, with who or
 * what did it. The table refuses updates and deletes (a trigger) but the erasure of a deleted
 * person's own values (recipient_email, note): amount, currency, study, ids and actor stay.
 */

/** Who or what moved the money: a user through the API (with the token used), a background job, or a provider's report. */
export type Actor = { kind: 'USER'; userId: string; tokenId: string | null } | { kind: 'JOB'; id: string } | { kind: 'PROVIDER'; id: string };

export const ledgerKinds = [
  'SENT',
  'APPROVAL_REQUESTED',
  'APPROVED',
  'REFUSED',
  'WITHDRAWN',
  'ORDER_CONFIRMED',
  'ORDER_FAILED',
  'RESENT',
  'CANCEL_REQUESTED',
  'CANCELED',
  'VOID_REFUSED',
  'EXPIRY_STARTED',
  'EXPIRED',
  'PROVIDER_REPORT',
] as const;
export type LedgerKind = (typeof ledgerKinds)[number];

export const ledgerKindMeaning: Record<LedgerKind, string> = {
  SENT: 'the incentive was recorded (and, provider-backed, ordered at the provider); recipientEmail is the address it went to',
  APPROVAL_REQUESTED: 'recorded above the approval threshold: waiting for a second person, not ordered',
  APPROVED: 'a second person approved it: it is ordered now',
  REFUSED: 'a second person refused it: never ordered, CANCELED, its budget given back',
  WITHDRAWN: 'canceled while waiting for approval: never ordered',
  ORDER_CONFIRMED: 'the provider confirmed the order',
  ORDER_FAILED: 'the provider refused the order, or it was voided after it was never confirmed (ERROR)',
  RESENT: 'the provider sent the claim email again',
  CANCEL_REQUESTED: 'a cancel asked the provider to void the order',
  CANCELED: 'canceled (the provider confirmed the void, or one paid outside the service marked so)',
  VOID_REFUSED: 'the provider refused to void the order: it stands',
  EXPIRY_STARTED: 'unclaimed for a year: the order is being voided',
  EXPIRED: 'the provider confirmed the void of an expired order',
  PROVIDER_REPORT: "a provider's report (claimed or failed), applied or repeated: note says which",
};

export interface LedgerEntryInput {
  kind: LedgerKind;
  actor: Actor;
  at: string;
  note?: string | null;
  recipientEmail?: string | null;
}

function actorColumns(actor: Actor) {
  if (actor.kind === 'USER') return { actor_kind: 'USER' as const, actor_id: actor.userId, token_id: actor.tokenId };
  return { actor_kind: actor.kind, actor_id: actor.id, token_id: null };
}

/** Appends entries for incentives as they are after the change (status, budget), in the caller's transaction. */
export async function appendLedger(transaction: Kysely<DB>, entries: readonly { row: IncentiveRow; entry: LedgerEntryInput }[]): Promise<void> {
  if (!transaction.isTransaction) throw new Error('The ledger is written in the transaction of the change: pass a transaction');
  if (entries.length === 0) return;
  await transaction
    .insertInto('incentive_ledger')
    .values(
      entries.map(({ row, entry }) => ({
        workspace_id: row.workspace_id,
        entry_id: newId(idPrefixes.ledgerEntry),
        incentive_id: row.incentive_id,
        kind: entry.kind,
        amount_minor: row.amount_cents,
        currency: row.currency,
        study_id: row.study_id,
        participant_id: row.participant_id,
        person_id: row.person_id,
        budget_id: row.budget_id,
        status: row.status,
        ...actorColumns(entry.actor),
        recipient_email: entry.recipientEmail ?? null,
        note: entry.note ?? null,
        at: entry.at,
      })),
    )
    .execute();
  // The audit trail: what a job did to an incentive (expiry, claims, payments, retries) is the
  // service's change, recorded with it. A user's change is recorded by its request, a provider's
  // report by its webhook request.
  await recordServiceChanges(
    transaction,
    entries
      .filter(({ entry }) => entry.actor.kind === 'JOB')
      .map(({ row, entry }) => ({
        workspaceId: row.workspace_id,
        at: entry.at,
        service: entry.actor.kind === 'JOB' ? entry.actor.id : 'job',
        operationId: `incentive.${entry.kind}`,
        resourceType: 'incentive',
        resourceId: row.incentive_id,
        after: row.status,
      })),
  );
}

/**
 * The ledger entry a change of an incentive row makes, read from the change itself (so every
 * path that moves an incentive, the request's, a job's or a report's, is recorded alike); undefined
 * for bookkeeping that moves no money (an attempt counted).
 */
export function ledgerKindOf(before: IncentiveRow, after: IncentiveRow): LedgerKind | undefined {
  if (before.approval_state !== after.approval_state) {
    if (after.approval_state === 'APPROVED') return 'APPROVED';
    if (after.approval_state === 'REFUSED') return 'REFUSED';
    if (after.approval_state === 'WITHDRAWN') return 'WITHDRAWN';
  }
  if (before.provider_state !== after.provider_state) {
    if (after.provider_state === 'ORDERED') return before.provider_state === 'VOIDING' ? 'VOID_REFUSED' : 'ORDER_CONFIRMED';
    if (after.provider_state === 'FAILED') return 'ORDER_FAILED';
    if (after.provider_state === 'VOIDING') return after.void_purpose === 'EXPIRE' ? 'EXPIRY_STARTED' : 'CANCEL_REQUESTED';
    if (after.provider_state === 'VOIDED') return after.status === 'EXPIRED' ? 'EXPIRED' : 'CANCELED';
  }
  if (before.status !== after.status && after.status === 'CANCELED') return 'CANCELED';
  if (before.resend_count !== after.resend_count) return 'RESENT';
  return undefined;
}

export const ledgerActorKinds = ['USER', 'JOB', 'PROVIDER'] as const;

export interface LedgerEntry {
  entryId: string;
  incentiveId: string;
  kind: LedgerKind;
  amountCents: number;
  currency: string;
  studyId: string;
  participantId: string;
  personId: string;
  budgetId: string | null;
  status: IncentiveRow['status'];
  actor: { kind: 'USER' | 'JOB' | 'PROVIDER'; id: string; tokenId: string | null };
  recipientEmail: string | null;
  note: string | null;
  at: string;
}

export function presentLedgerEntry(row: IncentiveLedgerRow, canReadPersonalData: boolean): LedgerEntry {
  return {
    entryId: row.entry_id,
    incentiveId: row.incentive_id,
    kind: row.kind as LedgerKind,
    amountCents: row.amount_minor,
    currency: row.currency,
    studyId: row.study_id,
    participantId: row.participant_id,
    personId: row.person_id,
    budgetId: row.budget_id,
    status: row.status,
    actor: { kind: row.actor_kind, id: row.actor_id, tokenId: row.token_id },
    recipientEmail: maskEmail(row.recipient_email, canReadPersonalData),
    note: row.note,
    at: new Date(row.at).toISOString(),
  };
}

/** Every entry of one incentive, oldest first. */
export async function ledgerOfIncentive(db: Kysely<DB>, workspaceId: string, incentiveId: string): Promise<IncentiveLedgerRow[]> {
  return db
    .selectFrom('incentive_ledger')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('incentive_id', '=', incentiveId)
    .orderBy('entry_id')
    .execute();
}

/** One keyset page of the workspace's ledger, in entry order (the order they were written), within [since, until). */
export async function listLedger(
  db: Kysely<DB>,
  workspaceId: string,
  filter: { since?: string | undefined; until?: string | undefined },
  after: string | undefined,
  size: number,
): Promise<{ rows: IncentiveLedgerRow[]; total: number }> {
  const base = db
    .selectFrom('incentive_ledger')
    .where('workspace_id', '=', workspaceId)
    .$if(filter.since !== undefined, (query) => query.where('at', '>=', filter.since!))
    .$if(filter.until !== undefined, (query) => query.where('at', '<', filter.until!));
  const [rows, count] = await Promise.all([
    base
      .selectAll()
      .$if(after !== undefined, (query) => query.where('entry_id', '>', after!))
      .orderBy('entry_id')
      .limit(size + 1)
      .execute(),
    base.select(sql<number>`count(*)::int`.as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: count.total };
}

/** A deleted person's values in the ledger (the address paid, notes that may quote it): erased, the rows kept. */
export async function eraseLedgerOf(transaction: Kysely<DB>, batch: ReturnType<typeof sql>): Promise<void> {
  await sql`
    update incentive_ledger set recipient_email = null, note = null
    where (workspace_id, person_id) in ${batch} and (recipient_email is not null or note is not null)
  `.execute(transaction);
}
