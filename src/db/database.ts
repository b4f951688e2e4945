import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { type DatabaseConnection, type Dialect, type Driver, Kysely, PostgresDialect, PostgresDriver, type PostgresPool, type PostgresPoolClient } from 'kysely';
import { LRUCache } from 'lru-cache';
import pg from 'pg';
import { DataDirLockedError, lockDataDir } from './data-dir-lock.js';
import { type ConnectionQueue, PGliteDialect } from './pglite-dialect.js';
import type { DB } from './schema.js';
import { preparedStatementName } from './reusable-statement.js';
import { ScopedDriver } from './tenancy.js';

export type StoreKind = 'postgres' | 'embedded';

/**
 * How the store's connections are doing, for the metrics: PostgreSQL's pool, or the queue in
 * which the embedded store serializes transactions on its single connection.
 */
export type ConnectionState =
  | { kind: 'pool'; pool: { readonly totalCount: number; readonly idleCount: number; readonly waitingCount: number }; max: number }
  | { kind: 'queue'; queue: ConnectionQueue };

export interface Database {
  /** The owner's handle: migrations, background jobs, token lookup, public forms. */
  db: Kysely<DB>;
  /**
   * The workspace's handle: the same store, with each connection it takes switched to the tenant
   * role and the workspace, under row-level security (src/db/tenancy.ts).
   */
  forTenant(workspaceId: string): Kysely<DB>;
  /**
   * The owner's handle (null) or a workspace's, for background work (an import's upload and its
   * job): on the embedded store its statements take the one connection after everyone else's
   * waiting ones (src/db/pglite-dialect.ts), so an interactive request waits for at most the
   * statement or transaction holding it. On PostgreSQL, the ordinary handle: a pool has no queue.
   */
  background(workspaceId: string | null): Kysely<DB>;
  /**
   * A handle that takes each connection in whatever role and workspace it is in, switching
   * nothing: only for statements that answer the same in every scope, i.e. calls of a SECURITY
   * DEFINER lookup such as participant_link_by_digest. A page's link lookup through it leaves a
   * busy pool's connections in the workspace they serve (two round trips fewer a page).
   */
  anyScope: Kysely<DB>;
  kind: StoreKind;
  connections: ConnectionState;
  /**
   * Calls `onNotification` for each NOTIFY on `channel` (a plain identifier), after the notifying
   * transaction commits, in this process or, on PostgreSQL, in any instance; answers how to stop.
   * On PostgreSQL it holds a connection of its own, outside the pool, and reconnects after a loss
   * (calling onNotification once reconnected, since notifications sent meanwhile are gone).
   */
  listen(channel: string, onNotification: () => void): Promise<() => Promise<void>>;
  /** The embedded store's data as a tarball (tests start their stores from a migrated one). */
  dump?: () => Promise<Blob | File>;
  close(): Promise<void>;
}

export { DataDirLockedError };

/** Type OIDs whose default JavaScript conversions lose information or surprise callers. */
const TIMESTAMPTZ = 1184;
const TIMESTAMP = 1114;
const DATE = 1082;
const INT8 = 20;
const TEXT_ARRAY = 1009;

/**
 * PostgreSQL's text form of a timestamptz (session time zone UTC) as an ISO 8601 string; its
 * infinities, which only stored sort keys hold (20261130000000_stored_sort_keys), as they are.
 */
export function isoFromPostgresTimestamp(text: string): string {
  // The usual form, 'YYYY-MM-DD HH:MM:SS[.ffffff]+00', rewritten without a Date: a 1000-row page
  // carries thousands of instants, and parsing each into a Date was 5% of the search bench's
  // service time. A Date keeps milliseconds and drops the digits past them, as this does.
  const { length } = text;
  if (length >= 22 && length <= 29 && text.charCodeAt(4) === 45 && text.charCodeAt(10) === 32 && text.endsWith('+00') && (length === 22 || text.charCodeAt(19) === 46)) {
    const milliseconds = length === 22 ? '000' : `${text.slice(20, length - 3)}00`.slice(0, 3);
    return `${text.slice(0, 10)}T${text.slice(11, 19)}.${milliseconds}Z`;
  }
  if (text === 'infinity' || text === '-infinity') return text;
  const withZone = /[+-]\d\d$/.test(text) ? `${text}:00` : text;
  return new Date(withZone.replace(' ', 'T')).toISOString();
}

// pg's TypeId names scalar types only; text[] is parsed by its general array parser.
const parseTextArray = (pg.types.getTypeParser as (oid: number, format: 'text') => (text: string) => string[])(TEXT_ARRAY, 'text');

const parsers: Record<number, (text: string) => unknown> = {
  [TIMESTAMPTZ]: isoFromPostgresTimestamp,
  [TIMESTAMP]: (text) => isoFromPostgresTimestamp(`${text}+00`),
  [DATE]: (text) => text,
  [INT8]: (text) => Number(text),
  // Most people's additional emails and phones are empty: a 1000-row page parsed 2,000 '{}' through
  // the general array parser, a tenth of what the page allocated.
  [TEXT_ARRAY]: (text) => (text === '{}' ? [] : parseTextArray(text)),
};

/**
 * bytea on the embedded store, as hex text both ways, by Buffer's native codec. PGlite's own
 * serializer maps every byte through toString(16) and joins them (about 2 s for an import's 1 MB
 * chunk, with the one connection held and the event loop blocked throughout: issue 32, another
 * workspace's p99 at 171x during an upload), and its parser calls parseInt per byte.
 */
const BYTEA = 17;
const embeddedSerializers: Record<number, (value: unknown) => string> = {
  [BYTEA]: (value) => {
    if (!(value instanceof Uint8Array)) throw new Error('Invalid input for bytea type');
    return `\\x${Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('hex')}`;
  },
};
const embeddedParsers: Record<number, (text: string) => unknown> = {
  ...parsers,
  [BYTEA]: (text) => {
    // A buffer of its own (not a slice of Node's shared pool), as PGlite's parser gave.
    const bytes = new Uint8Array((text.length - 2) / 2);
    Buffer.from(bytes.buffer).write(text.slice(2), 'hex');
    return bytes;
  },
};

export interface OpenOptions {
  /** Names this pool's sessions in pg_stat_activity (PostgreSQL only). */
  applicationName?: string;
  /** Told about errors on idle connections (a restart or failover of PostgreSQL); stderr by default. */
  onConnectionError?: (error: Error) => void;
  databaseUrl?: string;
  dataDir?: string;
  /** In-memory embedded store, for tests: no directory and no lock. */
  inMemory?: boolean;
  /**
   * A new embedded store (in memory, or a data directory that holds none yet) starts as a copy of
   * this dump (PGlite's dumpDataDir): tests skip initdb and migrations. A data directory that
   * already holds a store opens as it is.
   */
  startFrom?: Blob;
  poolSize?: number;
}

export async function openDatabase(options: OpenOptions): Promise<Database> {
  if (options.databaseUrl) return openPostgres(options.databaseUrl, options.poolSize ?? 10, options.onConnectionError, options.applicationName);
  return openEmbedded(options);
}

const reportToStderr = (error: Error): void => {
  process.stderr.write(`database connection error: ${error.message}\n`);
};

function openPostgres(
  connectionString: string,
  poolSize: number,
  onConnectionError: (error: Error) => void = reportToStderr,
  applicationName = 'recruit-ops',
): Database {
  const pool = new pg.Pool({
    connectionString,
    max: poolSize,
    // No JIT: the service's statements are short, and compiling one cost more than it saved (a
    // 1000-row search page at 1,000,000 people: 14 to 46 ms of its 160 to 220 ms was JIT).
    options: '-c TimeZone=UTC -c jit=off',
    application_name: applicationName,
    // A connection attempt (or a wait for a free client) that takes this long fails, and the
    // request answers 503: an unreachable database must not hang every request.
    connectionTimeoutMillis: 10_000,
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        parsers[oid] ?? pg.types.getTypeParser(oid, format ?? 'text')) as typeof pg.types.getTypeParser,
    },
  });
  // An idle client dropped by the server emits 'error' on the pool; unheard, Node would crash.
  // The pool discards that client and connects anew for the next query.
  pool.on('error', onConnectionError);
  // A client checked out but between queries when the server goes away (a restart, a failover)
  // emits 'error' on itself, not on the pool: unheard, that too would crash the process. Its
  // next query fails (the request answers 503) and the pool discards it on release.
  pool.on('connect', (client) => client.on('error', onConnectionError));
  const prepared = preparingPool(pool);
  const { db, forTenant, background, anyScope } = scopedHandles(new PostgresDialect({ pool: prepared }), new PostgresDriver({ pool: prepared }), (connection) => connection, { queued: false });
  return {
    db,
    forTenant,
    background,
    anyScope,
    kind: 'postgres',
    connections: { kind: 'pool', pool, max: poolSize },
    listen: (channel, onNotification) => listenOnPostgres(connectionString, applicationName, channel, onNotification, onConnectionError),
    close: () => db.destroy(),
  };
}

/** Workspaces whose handles are kept; one evicted is rebuilt at its next request (a few microseconds). */
const TENANT_HANDLES = 10_000;
/** Workspaces whose background handles are kept (uploads at once are few: IMPORT_UPLOADS_PER_PROCESS). */
const BACKGROUND_HANDLES = 100;

/**
 * The owner's handle and the workspaces' handles over one store driver (its pool, or the embedded
 * store's queue): each handle's driver switches the connections it takes to its own scope.
 */
function scopedHandles(
  dialect: Dialect,
  store: Driver,
  sessionOf: (connection: DatabaseConnection) => object,
  { queued }: { queued: boolean },
): Pick<Database, 'db' | 'forTenant' | 'background' | 'anyScope'> {
  const handle = (scope: string | null, background = false, anyScope = false) =>
    new Kysely<DB>({
      dialect: {
        createAdapter: () => dialect.createAdapter(),
        createQueryCompiler: () => dialect.createQueryCompiler(),
        createIntrospector: (db) => dialect.createIntrospector(db),
        createDriver: () => new ScopedDriver(store, scope, sessionOf, background, anyScope),
      },
    });
  const cached = (max: number, background: boolean) => {
    const handles = new LRUCache<string, Kysely<DB>>({ max });
    return (workspaceId: string) => {
      let tenant = handles.get(workspaceId);
      if (!tenant) handles.set(workspaceId, (tenant = handle(workspaceId, background)));
      return tenant;
    };
  };
  const db = handle(null);
  const forTenant = cached(TENANT_HANDLES, false);
  const anyScope = handle(null, false, true);
  if (!queued) return { db, forTenant, anyScope, background: (workspaceId) => (workspaceId === null ? db : forTenant(workspaceId)) };
  const owner = handle(null, true);
  const tenants = cached(BACKGROUND_HANDLES, true);
  return { db, forTenant, anyScope, background: (workspaceId) => (workspaceId === null ? owner : tenants(workspaceId)) };
}

/**
 * pg's pool as Kysely sees it, except that a reusable statement (src/db/reusable-statement.ts)
 * goes as a named statement: each connection parses and plans it once, and PostgreSQL settles on
 * a generic plan after five runs. Kysely keeps one connection per client it is handed, so each
 * client keeps one adapter.
 */
function preparingPool(pool: pg.Pool): PostgresPool {
  const adapters = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  const adapt = (client: pg.PoolClient): PostgresPoolClient => {
    let adapter = adapters.get(client);
    if (!adapter) {
      const query = (sqlOrCursor: string | pg.Submittable, parameters?: readonly unknown[]) => {
        if (typeof sqlOrCursor !== 'string') return client.query(sqlOrCursor);
        const name = preparedStatementName(sqlOrCursor);
        return client.query(name === undefined ? { text: sqlOrCursor, values: parameters as unknown[] } : { name, text: sqlOrCursor, values: parameters as unknown[] });
      };
      adapter = { query: query as unknown as PostgresPoolClient['query'], release: () => client.release() };
      adapters.set(client, adapter);
    }
    return adapter;
  };
  return { connect: async () => adapt(await pool.connect()), end: () => pool.end() };
}

const CHANNEL = /^[a-z_][a-z0-9_]{0,62}$/;
const RECONNECT_MS = 1000;

async function listenOnPostgres(
  connectionString: string,
  applicationName: string,
  channel: string,
  onNotification: () => void,
  onConnectionError: (error: Error) => void,
): Promise<() => Promise<void>> {
  if (!CHANNEL.test(channel)) throw new Error(`Not a plain channel name: ${channel}`);
  let client: pg.Client | undefined;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  const reconnectLater = () => {
    const lost = client;
    client = undefined;
    lost?.end().catch(() => {});
    if (!stopped && retry === undefined) {
      retry = setTimeout(() => {
        retry = undefined;
        void connect();
      }, RECONNECT_MS);
      retry.unref();
    }
  };
  const connect = async () => {
    const candidate = new pg.Client({ connectionString, application_name: `${applicationName}:listen`, connectionTimeoutMillis: 10_000 });
    candidate.on('error', (error) => {
      onConnectionError(error);
      if (client === candidate) reconnectLater();
    });
    candidate.on('notification', () => onNotification());
    try {
      await candidate.connect();
      await candidate.query(`listen ${channel}`);
    } catch (error) {
      onConnectionError(error as Error);
      candidate.end().catch(() => {});
      if (!stopped) reconnectLater();
      return;
    }
    if (stopped) {
      await candidate.end().catch(() => {});
      return;
    }
    client = candidate;
    onNotification();
  };
  await connect();
  return async () => {
    stopped = true;
    clearTimeout(retry);
    await client?.end().catch(() => {});
    client = undefined;
  };
}


async function openEmbedded(options: OpenOptions): Promise<Database> {
  let releaseLock: (() => Promise<void>) | undefined;
  let dataDir: string | undefined;
  if (!options.inMemory) {
    dataDir = path.resolve(options.dataDir ?? './data');
    mkdirSync(dataDir, { recursive: true });
    releaseLock = await lockDataDir(dataDir);
  }
  try {
    // Loaded only for the embedded store: a PostgreSQL deployment need not carry it (about 40 MB).
    const { PGlite } = await import('@electric-sql/pglite');
    // pg_trgm, for the trigram indexes of substring search (migration 20261124100000_text_search).
    const { pg_trgm } = await import('@electric-sql/pglite/contrib/pg_trgm');
    // PGlite's default start parameters turn fsync off; the system of record keeps it on. The
    // session's time zone is a start parameter rather than a SET after start: one statement fewer
    // before the service is ready, and RESET ALL keeps it.
    const embeddedStartParams = [...PGlite.defaultStartParams.filter((parameter) => parameter !== '-F'), '-c', 'TimeZone=UTC'];
    const pglite = await PGlite.create({
      dataDir: dataDir ? path.join(dataDir, 'pgdata') : undefined,
      ...(options.startFrom && (!dataDir || !existsSync(path.join(dataDir, 'pgdata', 'PG_VERSION'))) ? { loadDataDir: options.startFrom } : {}),
      startParams: embeddedStartParams,
      parsers: embeddedParsers,
      serializers: embeddedSerializers,
      extensions: { pg_trgm },
    });
    const dialect = new PGliteDialect(pglite);
    // One session behind every connection object the queue hands out.
    const { db, forTenant, background, anyScope } = scopedHandles(dialect, dialect.createDriver(), () => pglite, { queued: true });
    return {
      db,
      forTenant,
      background,
      anyScope,
      kind: 'embedded',
      connections: { kind: 'queue', queue: dialect.queue },
      listen: async (channel, onNotification) => {
        const stop = await pglite.listen(channel, () => onNotification());
        return async () => {
          // Closing the store ends its listeners with it; stopping after that has nothing to do.
          if (!pglite.closed) await stop();
        };
      },
      dump: async () => pglite.dumpDataDir('none'),
      close: async () => {
        await db.destroy();
        await pglite.close();
        await releaseLock?.();
      },
    };
  } catch (error) {
    await releaseLock?.();
    throw error;
  }
}
