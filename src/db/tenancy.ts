import { CompiledQuery, type DatabaseConnection, type Driver, type Kysely, type TransactionSettings, sql } from 'kysely';

/**
 * The second wall between tenants: row-level security. Every tenant table has a policy that shows
 * and accepts only rows of the workspace named by the session setting `app.workspace_id`, and it
 * binds the role `recruit_tenant`, which owns nothing (the tables' owner, and a superuser such as
 * PGlite's, pass through policies). An authenticated request's work goes through its workspace's
 * database handle (Database.forTenant): each connection that handle takes is switched to that role
 * and workspace first, so a query that forgot its `workspace_id` condition still sees nothing of
 * another workspace. Work that is not a tenant's (migrations, background jobs, token lookup, public
 * forms) goes through the owner's handle, whose connections are switched back to the owner.
 *
 * The scope travels with the handle, not in an AsyncLocalStorage: on Node 20 an active
 * AsyncLocalStorage hooks every promise in the process, which cost the service about 40 µs of CPU
 * per request (a 12-16% fall in throughput on `npm run bench -- http --rls`).
 */
export const TENANT_ROLE = 'recruit_tenant';

/** What each database session is switched to now: a workspace, or null for the owner. */
const sessions = new WeakMap<object, string | null>();

/**
 * Switches a connection just taken from the pool to `wanted` (a workspace, or null: the owner),
 * unless it is already there (a pool serving one busy workspace switches nothing). Sessions start
 * as the owner. The switch is session-wide and made outside any transaction, so a rollback cannot
 * undo it. `session` names the database session when several connection objects share one.
 */
export async function scopeConnection(connection: DatabaseConnection, session: object, wanted: string | null): Promise<void> {
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
 * A store's driver as one scope sees it: every connection it hands out is first switched to that
 * scope. The owner's handle and each workspace's share the store's one driver (its pool, or the
 * embedded store's queue); only the owner's handle closes it.
 */
export class ScopedDriver implements Driver {
  readonly savepoint?: Driver['savepoint'];
  readonly rollbackToSavepoint?: Driver['rollbackToSavepoint'];
  readonly releaseSavepoint?: Driver['releaseSavepoint'];

  constructor(
    private readonly store: Driver,
    private readonly scope: string | null,
    private readonly sessionOf: (connection: DatabaseConnection) => object,
    /** Background work's handle: on the embedded store's queue its statements wait behind the others'. */
    private readonly background = false,
    /**
     * Takes each connection in whatever scope it is (Database.anyScope): only for statements that
     * answer the same in every scope (a SECURITY DEFINER function's lookup), so that a lookup
     * made before the workspace is known does not switch a connection away from the workspace it
     * serves.
     */
    private readonly anyScope = false,
  ) {
    // Only what the store's driver has: Kysely treats a missing savepoint method as unsupported.
    this.savepoint = store.savepoint?.bind(store);
    this.rollbackToSavepoint = store.rollbackToSavepoint?.bind(store);
    this.releaseSavepoint = store.releaseSavepoint?.bind(store);
  }

  init(): Promise<void> {
    return this.store.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    // The embedded store's driver queues by scope (src/db/pglite-dialect.ts); a pool does not.
    const store = this.store as Driver & { acquireConnectionFor?: (scope: string | null, background: boolean) => Promise<DatabaseConnection> };
    const connection = await (store.acquireConnectionFor ? store.acquireConnectionFor(this.scope, this.background) : store.acquireConnection());
    if (this.anyScope) return connection;
    try {
      await scopeConnection(connection, this.sessionOf(connection), this.scope);
    } catch (error) {
      await this.store.releaseConnection(connection);
      throw error;
    }
    return connection;
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.store.beginTransaction(connection, settings);
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.store.commitTransaction(connection);
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.store.rollbackTransaction(connection);
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.store.releaseConnection(connection);
  }

  destroy(): Promise<void> {
    return this.scope === null && !this.background && !this.anyScope ? this.store.destroy() : Promise.resolve();
  }
}

/**
 * Runs `work` as the owner inside a transaction, for the rare statement only an owner may make
 * (CREATE STATISTICS on people): in a tenant's transaction the role returns to the tenant's
 * before anything else runs; in the owner's, nothing changes.
 */
export async function asOwnerWithin<T, D>(transaction: Kysely<D>, work: () => Promise<T>): Promise<T> {
  const { rows } = await sql<{ role: string }>`select current_setting('role') as role`.execute(transaction);
  const role = rows[0]?.role ?? 'none';
  if (role === 'none') return work();
  await sql`set local role none`.execute(transaction);
  const result = await work();
  await sql`set local role ${sql.ref(role)}`.execute(transaction);
  return result;
}
