import { AsyncLocalStorage } from 'node:async_hooks';
import { CompiledQuery, type DatabaseConnection, type Kysely, sql } from 'kysely';

/**
 * The second wall between tenants: row-level security. Every tenant table has a policy that shows
 * and accepts only rows of the workspace named by the session setting `app.workspace_id`, and it
 * binds the role `recruit_tenant`, which owns nothing (the tables' owner, and a superuser such as
 * PGlite's, pass through policies). A request that has authenticated runs in its workspace's
 * scope: each connection it takes is switched to that role and workspace first, so a query that
 * forgot its `workspace_id` condition still sees nothing of another workspace. Work that is not a
 * tenant's (migrations, background jobs, token lookup, public forms) runs as the owner.
 */
export const TENANT_ROLE = 'recruit_tenant';

const scope = new AsyncLocalStorage<string>();

/** Runs `work`, and everything it starts, in the workspace's scope. */
export function runAsTenant<T>(workspaceId: string, work: () => T): T {
  return scope.run(workspaceId, work);
}

/** The workspace whose scope the current work runs in, if any. */
export const currentTenant = (): string | undefined => scope.getStore();

/** What each database session is switched to now: a workspace, or null for the owner. */
const sessions = new WeakMap<object, string | null>();

/**
 * Switches a connection just taken from the pool to the current scope, unless it is already in it
 * (a pool serving one busy workspace switches nothing). Sessions start as the owner. The switch is
 * session-wide and made outside any transaction, so a rollback cannot undo it.
 */
export async function scopeConnection(connection: DatabaseConnection, session: object = connection): Promise<void> {
  const wanted = scope.getStore() ?? null;
  if ((sessions.get(session) ?? null) === wanted) return;
  // Forgotten first: if the switch fails halfway, the next taker switches again.
  sessions.delete(session);
  if (wanted === null) {
    await connection.executeQuery(CompiledQuery.raw('reset role'));
  } else {
    await connection.executeQuery(CompiledQuery.raw(`select set_config('role', '${TENANT_ROLE}', false), set_config('app.workspace_id', $1, false)`, [wanted]));
  }
  sessions.set(session, wanted);
}

/**
 * Runs `work` as the owner inside a tenant's transaction, for the rare statement only an owner may
 * make (CREATE STATISTICS on people): the role returns to the tenant's before anything else runs.
 */
export async function asOwnerWithin<T, D>(transaction: Kysely<D>, work: () => Promise<T>): Promise<T> {
  if (currentTenant() === undefined) return work();
  await sql`set local role none`.execute(transaction);
  const result = await work();
  await sql`set local role ${sql.raw(TENANT_ROLE)}`.execute(transaction);
  return result;
}
