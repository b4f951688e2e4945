import { performance } from 'node:perf_hooks';
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
}

class ConnectionLock implements ConnectionQueue {
  private tail: Promise<void> = Promise.resolve();
  /** The start (performance.now()) of every wait under way, oldest first: the queue is FIFO. */
  private readonly waits = new Set<{ since: number }>();
  private readonly listeners = new Set<(seconds: number) => void>();

  constructor(private readonly timeoutMs: number) {}

  get waiting(): number {
    return this.waits.size;
  }

  oldestWaitSeconds(): number {
    for (const wait of this.waits) return (performance.now() - wait.since) / 1000;
    return 0;
  }

  onWait(listener: (seconds: number) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private ended(wait: { since: number }) {
    this.waits.delete(wait);
    const seconds = (performance.now() - wait.since) / 1000;
    for (const listener of this.listeners) listener(seconds);
  }

  acquire(): Promise<() => void> {
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const previous = this.tail;
    this.tail = previous.then(() => held);
    const wait = { since: performance.now() };
    this.waits.add(wait);
    return new Promise((resolve, reject) => {
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        this.ended(wait);
        reject(new Error('Timed out waiting for the embedded database connection'));
      }, this.timeoutMs);
      void previous.then(() => {
        clearTimeout(timer);
        // A waiter that gave up still holds its place in the queue: pass the turn on, or every
        // later query would wait forever.
        if (timedOut) {
          release();
        } else {
          this.ended(wait);
          resolve(release);
        }
      });
    });
  }
}

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

  async acquireConnection(): Promise<DatabaseConnection> {
    const release = await this.lock.acquire();
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
