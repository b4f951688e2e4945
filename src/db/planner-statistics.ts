import { type Kysely, sql } from 'kysely';
import type { DB } from './schema.js';

/**
 * Keeps the planner's statistics of the service's tables fresh, as autovacuum's ANALYZE does on a
 * PostgreSQL server that runs it. The embedded store never runs autovacuum, and a PostgreSQL
 * server may have it off (this machine class's has): a table that was filled but never analyzed
 * is planned as if each of a workspace's rows were the only one. A study's participants added
 * after start were searched by STUDY_MEMBERSHIP in 16.5–21.4 s on the embedded store (3.1–8.4 s on
 * PostgreSQL with autovacuum off): the planner scanned every person of the workspace and, for
 * each, every participant of the workspace, 3 million buffers; analyzed, 6,700 buffers and 11 ms.
 *
 * A table is analyzed when it holds rows and was never analyzed, when its size moved by more than
 * a tenth (and a page) since its statistics were taken, or, where the server counts changes
 * (PostgreSQL; PGlite keeps no such counts), when more rows changed than autovacuum's default
 * threshold (50 rows and a tenth of the table).
 */

const GROWTH_FRACTION = 0.1;
const CHANGED_ROWS_BASE = 50;
/** Any key, held for the duration of one pass: instances sharing a database take turns rather than analyze the same tables together. */
const PASS_LOCK_KEY = 7_264_118_031;

export interface StaleTable {
  table: string;
  reason: 'never analyzed' | 'size changed' | 'rows changed';
}

interface TableState {
  table: string;
  reltuples: number;
  relpages: number;
  pages: number;
  changed: number | null;
}

export function staleness(state: TableState): StaleTable['reason'] | undefined {
  if (state.pages === 0) return undefined;
  if (state.reltuples < 0) return 'never analyzed';
  if (Math.abs(state.pages - state.relpages) > Math.max(1, GROWTH_FRACTION * state.relpages)) return 'size changed';
  if (state.changed !== null && state.changed > CHANGED_ROWS_BASE + GROWTH_FRACTION * state.reltuples) return 'rows changed';
  return undefined;
}

/** The service's tables whose statistics are stale, by the rules above: one catalogue query. */
export async function staleTables(db: Kysely<DB>): Promise<StaleTable[]> {
  const { rows } = await sql<{ table: string; reltuples: number; relpages: number; pages: number; changed: string | null }>`
    select c.relname as table, c.reltuples, c.relpages,
      cast(pg_relation_size(c.oid) / current_setting('block_size')::int as int) as pages,
      s.n_mod_since_analyze as changed
    from pg_class as c
      join pg_namespace as n on n.oid = c.relnamespace
      left join pg_stat_user_tables as s on s.relid = c.oid
    where n.nspname = current_schema() and c.relkind = 'r'
    order by c.relname`.execute(db);
  const stale: StaleTable[] = [];
  for (const row of rows) {
    // PGlite reports zero changes whatever was written: only sizes count there.
    const reason = staleness({ ...row, reltuples: Number(row.reltuples), changed: row.changed === null ? null : Number(row.changed) });
    if (reason) stale.push({ table: row.table, reason });
  }
  return stale;
}

/**
 * One pass: analyzes each stale table (on PostgreSQL only while holding a session-wide advisory
 * lock, so that of several instances one analyzes at a time and the others skip the pass).
 */
export async function analyzeStaleTables(db: Kysely<DB>, storeKind: 'postgres' | 'embedded'): Promise<StaleTable[]> {
  const analyze = async (handle: Kysely<DB>) => {
    const stale = await staleTables(handle);
    // Table by table: the embedded store's other work runs between them.
    for (const { table } of stale) await sql`analyze ${sql.table(table)}`.execute(handle);
    return stale;
  };
  // The embedded store belongs to this process alone.
  if (storeKind === 'embedded') return analyze(db);
  return db.connection().execute(async (connection) => {
    const { rows } = await sql<{ locked: boolean }>`select pg_try_advisory_lock(${PASS_LOCK_KEY}) as locked`.execute(connection);
    if (!rows[0]?.locked) return [];
    try {
      return await analyze(connection);
    } finally {
      await sql`select pg_advisory_unlock(${PASS_LOCK_KEY})`.execute(connection);
    }
  });
}

export interface PlannerStatisticsKeeper {
  /** The first pass, started with the keeper; resolves when it is done (failures are logged, not thrown). */
  readonly firstPass: Promise<void>;
  stop(): Promise<void>;
}

/** A pass at start and every `everyMs` until stopped; a pass that fails is logged and the next one tries again. */
export function keepPlannerStatistics(options: {
  db: Kysely<DB>;
  storeKind: 'postgres' | 'embedded';
  everyMs: number;
  log: { info(object: object, message: string): void; warn(object: object, message: string): void };
}): PlannerStatisticsKeeper {
  let running: Promise<void> | undefined;
  let stopped = false;
  const pass = () => {
    running = (async () => {
      try {
        const analyzed = await analyzeStaleTables(options.db, options.storeKind);
        if (analyzed.length > 0) options.log.info({ analyzed }, 'planner statistics taken afresh');
      } catch (error) {
        if (!stopped) options.log.warn({ err: error }, 'planner statistics pass failed; the next one tries again');
      } finally {
        running = undefined;
      }
    })();
    return running;
  };
  const firstPass = pass();
  // A pass still running when the next is due is not doubled.
  const timer = setInterval(() => {
    if (!stopped && !running) void pass();
  }, options.everyMs);
  timer.unref();
  return {
    firstPass,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
