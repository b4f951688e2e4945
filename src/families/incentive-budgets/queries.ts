import { type Kysely, sql } from 'kysely';
import type { DB, IncentiveBudgetRow, IncentiveBudgetsTable } from '../../db/schema.js';
import type { Insertable } from 'kysely';

type Executor = Kysely<DB>;

export async function insertBudget(db: Executor, budget: Insertable<IncentiveBudgetsTable>): Promise<IncentiveBudgetRow> {
  return db.insertInto('incentive_budgets').values(budget).returningAll().executeTakeFirstOrThrow();
}

export async function findBudget(db: Executor, workspaceId: string, budgetId: string, options: { forUpdate?: boolean } = {}) {
  return db
    .selectFrom('incentive_budgets')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('budget_id', '=', budgetId)
    .$if(options.forUpdate === true, (query) => query.forUpdate())
    .executeTakeFirst();
}

/** One keyset page of the workspace's budgets in the order they were made; archived ones only when asked. */
export async function listBudgets(db: Executor, workspaceId: string, includeArchived: boolean, after: string | undefined, size: number) {
  const base = db
    .selectFrom('incentive_budgets')
    .where('workspace_id', '=', workspaceId)
    .$if(!includeArchived, (query) => query.where('archived_at', 'is', null));
  const [rows, count] = await Promise.all([
    base
      .selectAll()
      .$if(after !== undefined, (query) => query.where('budget_id', '>', after!))
      .orderBy('budget_id')
      .limit(size + 1)
      .execute(),
    base.select(sql<number>`count(*)::int`.as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: count.total };
}

export async function updateBudget(db: Executor, workspaceId: string, budgetId: string, changes: Partial<Pick<IncentiveBudgetRow, 'name' | 'limit_minor' | 'archived_at' | 'updated_at'>>) {
  return db
    .updateTable('incentive_budgets')
    .set(changes)
    .where('workspace_id', '=', workspaceId)
    .where('budget_id', '=', budgetId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * Takes `amount` from a live budget if it has that much left, in one statement: concurrent
 * takers of the same row queue on its lock and each re-reads `spent_minor` before its condition
 * holds, so the sum taken never passes the limit, on one instance or several. Undefined when the
 * budget has too little left (or is archived meanwhile).
 */
export async function holdBudget(db: Executor, workspaceId: string, budgetId: string, amount: number, at: string) {
  return db
    .updateTable('incentive_budgets')
    .set({ spent_minor: sql`spent_minor + ${amount}`, updated_at: at })
    .where('workspace_id', '=', workspaceId)
    .where('budget_id', '=', budgetId)
    .where('archived_at', 'is', null)
    .where(sql<boolean>`spent_minor + ${amount} <= limit_minor`)
    .returningAll()
    .executeTakeFirst();
}

/** Gives an incentive's amount back (the caller clears its budget_held in the same transaction: once). */
export async function releaseBudget(db: Executor, workspaceId: string, budgetId: string, amount: number, at: string): Promise<void> {
  await db
    .updateTable('incentive_budgets')
    .set({ spent_minor: sql`spent_minor - ${amount}`, updated_at: at })
    .where('workspace_id', '=', workspaceId)
    .where('budget_id', '=', budgetId)
    .execute();
}

/** The workspace's approval thresholds, per currency. */
export async function listThresholds(db: Executor, workspaceId: string) {
  return db.selectFrom('incentive_approval_thresholds').selectAll().where('workspace_id', '=', workspaceId).orderBy('currency').execute();
}

export async function findThreshold(db: Executor, workspaceId: string, currency: string): Promise<number | undefined> {
  const row = await db
    .selectFrom('incentive_approval_thresholds')
    .select('threshold_minor')
    .where('workspace_id', '=', workspaceId)
    .where('currency', '=', currency)
    .executeTakeFirst();
  return row?.threshold_minor;
}

export async function replaceThresholds(db: Executor, workspaceId: string, thresholds: readonly { currency: string; amount: number }[], userId: string, at: string) {
  await db.deleteFrom('incentive_approval_thresholds').where('workspace_id', '=', workspaceId).execute();
  if (thresholds.length === 0) return;
  await db
    .insertInto('incentive_approval_thresholds')
    .values(thresholds.map((threshold) => ({ workspace_id: workspaceId, currency: threshold.currency, threshold_minor: threshold.amount, updated_by_user_id: userId, updated_at: at })))
    .execute();
}
