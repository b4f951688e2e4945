import { performance } from 'node:perf_hooks';
import { setImmediate as yieldToEventLoop } from 'node:timers/promises';
import type { PGlite } from '@electric-sql/pglite';
import { textFor } from './jsonb-bytes.js';
import {
  type CompiledQuery,
  type DatabaseConnection,
  type Dialect,
  type Driver,
  type Kysely,
  type QueryResult,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
} from 'kysely';

export interface PGliteDialectOptions {
  /** How long a query waits for the single connection before failing (default 60 s). */
  acquireTimeoutMs?: number;
}

/**
 * A Kysely dialect over one PGlite instance.
 *
 * PGlite has a single connection. Kysely acquires a connection for each standalone query and
 * holds it for the whole of a transaction, so a FIFO lock around acquire/release serializes
 * whole transactions: statements of two concurrent requests never interleave inside one
 * transaction (the `kysely-pglite` dialect does not do this and loses writes).
 */
export class PGliteDialect implements Dialect {
  /** The queue for the single connection, which the metrics read (src/http/metrics.ts). */
  readonly queue: ConnectionQueue;

  constructor(
    private readonly pglite: PGlite,
    options: PGliteDialectOptions = {},
  ) {
    this.queue = new ConnectionLock(options.acquireTimeoutMs ?? ACQUIRE_TIMEOUT_MS);
  }
  createAdapter() {
    return new PostgresAdapter();
  }
  createDriver(): Driver {
    return new PGliteDriver(this.pglite, this.queue as ConnectionLock);
  }
  createIntrospector(db: Kysely<unknown>) {
    return new PostgresIntrospector(db);
  }
  createQueryCompiler() {
    return new PostgresQueryCompiler();
  }
}

/** Waiting longer than this for the single connection means a transaction is stuck or a query
 * ran on the root handle inside a transaction (which would wait for itself forever). */
const ACQUIRE_TIMEOUT_MS = 60_000;

/** What the serialized queue for the embedded store's single connection tells an operator. */
export interface ConnectionQueue {
  /** Queries and transactions waiting for the connection (not the one holding it). */
  readonly waiting: number;
  /** How long the longest-waiting of them has waited so far, in seconds (0 when none waits). */
  oldestWaitSeconds(): number;
  /**
   * Tells `listener` how long each wait for the connection lasted, in seconds (a wait that timed
   * out too); returns the function that stops it.
   */
  onWait(listener: (seconds: number) => void): () => void;
  /**
   * Names the scopes (a workspace, or null: the owner) whose statements wait behind the others'
   * (the workspaces running heavy work); by default none.
   */
  setBackground(isBackground: (scope: string | null) => boolean): void;
}

interface Waiter {
  since: number;
  take: () => void;
}

/**
 * The single connection, handed to one holder at a time, in two queues: statements of a workspace
 * running heavy work (ConnectionQueue.setBackground; its searches' transactions, a 1000-row page
 * each), and of background handles (Database.background: an import's upload and job), wait behind
 * everyone else's, so that another workspace's one-row request waits for at most
 * the transaction holding the connection, not for every search queued before it. A background
 * waiter that has waited BACKGROUND_MAX_WAIT_MS goes first all the same: nothing starves.
 */
class ConnectionLock implements ConnectionQueue {
  private held = false;
  private readonly foreground: Waiter[] = [];
  private readonly background: Waiter[] = [];
  private readonly listeners = new Set<(seconds: number) => void>();
  private isBackground: (scope: string | null) => boolean = () => false;

  constructor(private readonly timeoutMs: number) {}

  get waiting(): number {
    return this.foreground.length + this.background.length;
  }

  oldestWaitSeconds(): number {
    const oldest = Math.min(this.foreground[0]?.since ?? Infinity, this.background[0]?.since ?? Infinity);
    return oldest === Infinity ? 0 : (performance.now() - oldest) / 1000;
  }

  onWait(listener: (seconds: number) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  setBackground(isBackground: (scope: string | null) => boolean): void {
    this.isBackground = isBackground;
  }

  private ended(since: number) {
    const seconds = (performance.now() - since) / 1000;
    for (const listener of this.listeners) listener(seconds);
  }

  acquire(scope: string | null = null, background = false): Promise<() => void> {
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      this.held = false;
      this.next();
    };
    if (!this.held && this.waiting === 0) {
      this.held = true;
      this.ended(performance.now());
      return Promise.resolve(release);
    }
    const queue = background || this.isBackground(scope) ? this.background : this.foreground;
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        since: performance.now(),
        take: () => {
          clearTimeout(timer);
          this.ended(waiter.since);
          resolve(release);
        },
      };
      const timer = setTimeout(() => {
        queue.splice(queue.indexOf(waiter), 1);
        this.ended(waiter.since);
        reject(new Error('Timed out waiting for the embedded database connection'));
      }, this.timeoutMs);
      queue.push(waiter);
    });
  }

  /**
   * Hands the connection on in a turn of its own (setImmediate), not at once. PGlite answers
   * without I/O, so a connection passed on as the holder's promise settles went from transaction
   * to transaction in one run of the microtask queue, and the event loop read no socket meanwhile:
   * with 16 searches queued, another workspace's one-row request was not even read for seconds.
   * A turn also lets the requests that arrived meanwhile ask for it before it is given.
   */
  private next(): void {
    if (this.waiting === 0) return;
    this.held = true;
    setImmediate(() => {
      const overdue = this.background[0] !== undefined && performance.now() - this.background[0].since >= BACKGROUND_MAX_WAIT_MS;
      const waiter = overdue ? this.background.shift() : (this.foreground.shift() ?? this.background.shift());
      if (!waiter) {
        this.held = false;
        return;
      }
      waiter.take();
    });
  }
}

/** The longest a background statement waits while foreground ones keep coming. */
const BACKGROUND_MAX_WAIT_MS = 2_000;

class PGliteDriver implements Driver {
  private readonly releases = new WeakMap<DatabaseConnection, () => void>();
  private readonly connection: PGliteConnection;

  constructor(
    pglite: PGlite,
    private readonly lock: ConnectionLock,
  ) {
    this.connection = new PGliteConnection(pglite);
  }

  async init(): Promise<void> {}

  acquireConnection(): Promise<DatabaseConnection> {
    return this.acquireConnectionFor(null);
  }

  /**
   * The connection for a scope's statements (ScopedDriver): a background scope's, and a background
   * handle's (Database.background: an import), wait behind the others'.
   */
  async acquireConnectionFor(scope: string | null, background = false): Promise<DatabaseConnection> {
    const release = await this.lock.acquire(scope, background);
    // One connection object serves every holder in turn; the lock guarantees one at a time.
    const lease = Object.create(this.connection) as PGliteConnection;
    this.releases.set(lease, release);
    return lease;
  }

  async beginTransaction(connection: DatabaseConnection, settings: { isolationLevel?: string }): Promise<void> {
    const isolation = settings.isolationLevel ? ` isolation level ${settings.isolationLevel}` : '';
    await connection.executeQuery({ sql: `begin${isolation}`, parameters: [], query: undefined } as never);
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery({ sql: 'commit', parameters: [], query: undefined } as never);
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery({ sql: 'rollback', parameters: [], query: undefined } as never);
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    const release = this.releases.get(connection);
    this.releases.delete(connection);
    release?.();
  }

  async destroy(): Promise<void> {}
}

class PGliteConnection implements DatabaseConnection {
  constructor(private readonly pglite: PGlite) {}

  async executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    // Each statement in a turn of the event loop of its own. PGlite runs a statement on this
    // thread and answers without I/O: a request's statements, its answer and the next queued
    // request's all followed one another in one run of the microtask queue, and no socket was read
    // meanwhile (issue 32: with 16 searches of one workspace queued, another workspace's one-row
    // request reached the server seconds after it was sent). A turn costs microseconds.
    await yieldToEventLoop();
    // Without parameters the simple protocol runs (and allows several statements, as migrations
    // send); with them, the extended protocol binds the values.
    const result =
      compiledQuery.parameters.length === 0
        ? ((await this.pglite.exec(compiledQuery.sql)).at(-1) ?? { rows: [], affectedRows: 0 })
        : await this.pglite.query<R>(compiledQuery.sql, compiledQuery.parameters.map(textFor));
    const affected = result.affectedRows;
    return {
      rows: result.rows as R[],
      ...(affected !== undefined && affected > 0 ? { numAffectedRows: BigInt(affected) } : {}),
    };
  }

  // eslint-disable-next-line require-yield
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('Streaming queries are not supported on the embedded store');
  }
}
