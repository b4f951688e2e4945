import type { CallContext as SharedCallContext } from '../../context.js';
import type { IncentiveBudgetRow } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { badRequest, conflict, notFound } from '../../http/errors.js';
import { idPrefixes, newId } from '../../ids.js';
import { checkCurrency } from '../incentives/currencies.js';
import * as queries from './queries.js';
import type { ApprovalSettings, CreateBudgetBody, IncentiveBudget, UpdateBudgetBody } from './schemas.js';

export type CallContext = Pick<SharedCallContext, 'db' | 'clock' | 'workspaceId' | 'userId'>;

export function presentBudget(row: IncentiveBudgetRow): IncentiveBudget {
  return {
    budgetId: row.budget_id,
    name: row.name,
    currency: row.currency,
    limitCents: row.limit_minor,
    spentCents: row.spent_minor,
    remainingCents: row.limit_minor - row.spent_minor,
    archived: row.archived_at !== null,
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}

export async function createBudget(context: CallContext, body: CreateBudgetBody): Promise<IncentiveBudget> {
  checkCurrency(body.currency, ['currency']);
  const at = context.clock.now().toISOString();
  const row = await queries.insertBudget(context.db, {
    workspace_id: context.workspaceId,
    budget_id: newId(idPrefixes.incentiveBudget),
    name: body.name,
    currency: body.currency,
    limit_minor: body.limitCents,
    archived_at: null,
    created_by_user_id: context.userId,
    created_at: at,
    updated_at: at,
  });
  return presentBudget(row);
}

export async function listBudgets(context: CallContext, includeArchived: boolean, after: string | undefined, size: number) {
  const { rows, total } = await queries.listBudgets(context.db, context.workspaceId, includeArchived, after, size);
  return { rows: rows.slice(0, size).map(presentBudget), hasNextPage: rows.length > size, total };
}

export async function getBudget(context: CallContext, budgetId: string): Promise<IncentiveBudget> {
  const row = await queries.findBudget(context.db, context.workspaceId, budgetId);
  if (!row) throw notFound('Incentive budget', ['budgetId']);
  return presentBudget(row);
}

/** Renames it or moves its limit, under the row's lock: a limit below what is spent (at that moment) is a 409. */
export async function updateBudget(context: CallContext, budgetId: string, body: UpdateBudgetBody): Promise<IncentiveBudget> {
  return inTransaction(context.db, async (db) => {
    const row = await queries.findBudget(db, context.workspaceId, budgetId, { forUpdate: true });
    if (!row) throw notFound('Incentive budget', ['budgetId']);
    if (body.limitCents !== undefined && body.limitCents < row.spent_minor) {
      throw conflict(`limitCents cannot be below what is spent (${row.spent_minor})`, ['limitCents']);
    }
    const changed = await queries.updateBudget(db, context.workspaceId, budgetId, {
      ...(body.name === undefined ? {} : { name: body.name }),
      ...(body.limitCents === undefined ? {} : { limit_minor: body.limitCents }),
      updated_at: context.clock.now().toISOString(),
    });
    return presentBudget(changed);
  });
}

/** Archives it: no new incentive is paid from it. Archiving an archived budget answers it unchanged. */
export async function archiveBudget(context: CallContext, budgetId: string): Promise<IncentiveBudget> {
  return inTransaction(context.db, async (db) => {
    const row = await queries.findBudget(db, context.workspaceId, budgetId, { forUpdate: true });
    if (!row) throw notFound('Incentive budget', ['budgetId']);
    if (row.archived_at !== null) return presentBudget(row);
    const at = context.clock.now().toISOString();
    return presentBudget(await queries.updateBudget(db, context.workspaceId, budgetId, { archived_at: at, updated_at: at }));
  });
}

export async function getApprovalSettings(context: CallContext): Promise<ApprovalSettings> {
  const rows = await queries.listThresholds(context.db, context.workspaceId);
  return { thresholds: rows.map((row) => ({ currency: row.currency, amountCents: row.threshold_minor })) };
}

/** Replaces the thresholds. They apply to incentives sent from then on; those already waiting still wait. */
export async function putApprovalSettings(context: CallContext, body: ApprovalSettings): Promise<ApprovalSettings> {
  const seen = new Set<string>();
  body.thresholds.forEach((threshold, index) => {
    checkCurrency(threshold.currency, ['thresholds', String(index), 'currency']);
    if (seen.has(threshold.currency)) throw badRequest(`${threshold.currency} has a threshold already: one per currency`, ['thresholds', String(index), 'currency']);
    seen.add(threshold.currency);
  });
  await inTransaction(context.db, (db) =>
    queries.replaceThresholds(
      db,
      context.workspaceId,
      body.thresholds.map((threshold) => ({ currency: threshold.currency, amount: threshold.amountCents })),
      context.userId,
      context.clock.now().toISOString(),
    ),
  );
  return getApprovalSettings(context);
}
