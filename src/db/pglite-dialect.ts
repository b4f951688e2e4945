import type { PGlite } from '@electric-sql/pglite';
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
  constructor(
    private readonly pglite: PGlite,
    private readonly options: PGliteDialectOptions = {},
  ) {}
  createAdapter() {
    return new PostgresAdapter();
  }
  createDriver(): Driver {
    return new PGliteDriver(this.pglite, this.options.acquireTimeoutMs ?? ACQUIRE_TIMEOUT_MS);
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

class ConnectionLock {
  private tail: Promise<void> = Promise.resolve();

  constructor(private readonly timeoutMs: number) {}

  acquire(): Promise<() => void> {
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const previous = this.tail;
    this.tail = previous.then(() => held);
    return new Promise((resolve, reject) => {
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        reject(new Error('Timed out waiting for the embedded database connection'));
      }, this.timeoutMs);
      void previous.then(() => {
        clearTimeout(timer);
        // A waiter that gave up still holds its place in the queue: pass the turn on, or every
        // later query would wait forever.
        if (timedOut) release();
        else resolve(release);
      });
    });
  }
}

class PGliteDriver implements Driver {
  private readonly lock: ConnectionLock;
  private readonly releases = new WeakMap<DatabaseConnection, () => void>();
  private readonly connection: PGliteConnection;

  constructor(pglite: PGlite, acquireTimeoutMs: number) {
    this.connection = new PGliteConnection(pglite);
    this.lock = new ConnectionLock(acquireTimeoutMs);
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
        : await this.pglite.query<R>(compiledQuery.sql, [...compiledQuery.parameters]);
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
