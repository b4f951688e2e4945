import { CsvError, parse } from 'csv-parse';
import type { Kysely } from 'kysely';
import type { Clock } from '../../clock.js';
import type { DB } from '../../db/schema.js';
import type { Job, JobHandler } from '../../jobs/queue.js';
import { describeCsvError, errorCounters, parserOptions } from '../imports/csv.js';
import { formatCount } from '../imports/text.js';
import { type BackfillColumn, checkBackfillRow, resolveBackfillHeader } from './columns.js';
import * as queries from './queries.js';
import { BACKFILL_ERRORS_KEPT_MAX } from './queries.js';
import { BACKFILL_BATCH_ROWS, BACKFILL_QUEUE } from './service.js';
import { type CheckedRow, type RowFailure, writeBackfillBatch } from './writer.js';

export interface BackfillPayload {
  backfillId: string;
}

export interface BackfillJobOptions {
  /** Rows per committed batch (default BACKFILL_BATCH_ROWS; 500 on the embedded store, whose one connection every request shares). */
  batchSize?: number;
  /** Called after each committed batch (1-based): tests throw here to stop midway, as a crash would. */
  afterBatch?: (backfillId: string, batch: number) => void | Promise<void>;
}

/** Another run of the same backfill committed meanwhile (this one's lease had lapsed): it stops. */
class BackfillSuperseded extends Error {
  constructor() {
    super('Another run of this backfill advanced it; this run stops');
  }
}

interface Batch {
  rows: CheckedRow[];
  failures: RowFailure[];
  count: number;
  lastRow: number;
}

/**
 * The backfill job: parses the stored file a piece at a time and writes its rows in batches. Each
 * batch is one transaction that also advances the backfill's committed row offset (checked first,
 * so a stale run stops instead of writing twice) and its counters: a crash loses no committed row,
 * and a rerun resumes after the last one. Rows already written are skipped by their natural key
 * anyway, so even a batch written twice would change nothing.
 */
export function backfillJobHandler(db: Kysely<DB>, clock: Clock, options: BackfillJobOptions = {}): JobHandler<BackfillPayload> {
  return {
    queue: BACKFILL_QUEUE,
    async run(job) {
      try {
        return await runBackfill(db, clock, job, options);
      } catch (error) {
        if (job.attempt >= job.maxAttempts && !job.signal.aborted && !(error instanceof BackfillSuperseded)) {
          const reason = `Its background work failed ${job.attempt} times; the last time: ${error instanceof Error ? error.message : String(error)}`.slice(0, 1000);
          await queries.finishBackfill(db, job.workspaceId, job.payload.backfillId, 'FAILED', clock.now().toISOString(), { reason });
        }
        throw error;
      }
    },
  };
}

async function runBackfill(db: Kysely<DB>, clock: Clock, job: Job<BackfillPayload>, options: BackfillJobOptions) {
  const batchSize = options.batchSize ?? BACKFILL_BATCH_ROWS;
  const { workspaceId } = job;
  const { backfillId } = job.payload;
  const started = await db
    .updateTable('backfills')
    .set({ status: 'RUNNING', updated_at: clock.now().toISOString() })
    .where('workspace_id', '=', workspaceId)
    .where('backfill_id', '=', backfillId)
    .where('status', 'in', ['QUEUED', 'RUNNING'])
    .returning(['rows_committed', 'chunk_count', 'delimiter', 'created_by_user_id'])
    .executeTakeFirst();
  if (!started) return { backfillId, skipped: true };

  // The history's dates are checked against the clock when the job began: none may be in the future.
  const now = clock.now();
  const parser = parse(parserOptions(started.delimiter));
  const { info } = parser;
  let positions: Map<BackfillColumn, number> | undefined;
  let dataRows = 0;
  const resumeAfter = started.rows_committed;
  let offset = resumeAfter;
  const newBatch = (): Batch => ({ rows: [], failures: [], count: 0, lastRow: 0 });
  let batch = newBatch();
  const filled: Batch[] = [];
  // Records are taken as the parser finds them (see the import job: no records buffered on its readable side).
  const pushed = parser.push.bind(parser);
  parser.push = (record: string[] | null) => {
    if (record === null) return pushed(null);
    take(record);
    return true;
  };
  parser.on('error', () => {});
  parser.resume();
  const take = (record: string[]) => {
    const rowNumber = info.records + info.empty_lines;
    if (positions === undefined) {
      const header = resolveBackfillHeader(record);
      if (!header.ok) throw new Error(`The header of backfill ${backfillId} no longer resolves`);
      positions = header.positions;
      return;
    }
    dataRows++;
    if (dataRows <= resumeAfter) return;
    const checked = checkBackfillRow(positions, record, now);
    if (checked.ok) batch.rows.push({ rowNumber, row: checked.row });
    else batch.failures.push({ rowNumber, column: checked.column, message: checked.message });
    batch.count++;
    batch.lastRow = rowNumber;
    if (batch.count >= batchSize) {
      filled.push(batch);
      batch = newBatch();
    }
  };
  const feed = (data?: Uint8Array) =>
    new Promise<void>((resolve, reject) => {
      const done = (error?: Error | null) => (error ? reject(error) : resolve());
      if (data) parser.write(data, done);
      else parser.end(done);
    });
  let batches = 0;
  const commit = async (rows: Batch) => {
    if (rows.count === 0) return;
    const from = offset;
    offset += rows.count;
    await commitBatch(db, clock, { workspaceId, backfillId, userId: started.created_by_user_id }, rows, from, offset);
    batches++;
    await options.afterBatch?.(backfillId, batches);
    job.signal.throwIfAborted();
  };

  let broken: CsvError | undefined;
  try {
    for (let index = 0; index < started.chunk_count; index++) {
      for (let start = 0; ; ) {
        const piece = await queries.readChunkPiece(db, workspaceId, backfillId, index, start);
        if (!piece) throw new Error(`Chunk ${index} of backfill ${backfillId} is missing`);
        if (piece.length === 0) break;
        start += piece.length;
        await feed(piece);
        for (const rows of filled.splice(0)) await commit(rows);
        if (piece.length < queries.CHUNK_PIECE_BYTES) break;
      }
    }
    await feed();
  } catch (error) {
    if (!(error instanceof CsvError)) throw error;
    broken = error;
  }
  for (const rows of filled.splice(0)) await commit(rows);
  if (broken) {
    // The rows before the broken one are in; the broken row is reported, and the rest not read.
    const counters = errorCounters(broken);
    const rowNumber = counters.records + counters.emptyLines + 1;
    const message = describeCsvError(broken, { row: rowNumber, line: rowNumber });
    batch.failures.push({ rowNumber, column: null, message });
    batch.count++;
    batch.lastRow = rowNumber;
    await commit(batch);
    await queries.finishBackfill(db, workspaceId, backfillId, 'FAILED', clock.now().toISOString(), {
      rowsTotal: offset,
      reason: `The file stops being valid CSV at row ${formatCount(rowNumber)}: the rows before it were read, the rows after it were not`,
    });
    return { backfillId, status: 'FAILED' };
  }
  await commit(batch);
  await queries.finishBackfill(db, workspaceId, backfillId, 'COMPLETED', clock.now().toISOString(), { rowsTotal: offset });
  return { backfillId, status: 'COMPLETED', rows: offset };
}

async function commitBatch(db: Kysely<DB>, clock: Clock, context: { workspaceId: string; backfillId: string; userId: string }, batch: Batch, expectedOffset: number, nextOffset: number) {
  const { workspaceId, backfillId } = context;
  await db.transaction().execute(async (transaction) => {
    const now = clock.now().toISOString();
    // The fence: this run still owns the backfill at the offset it expects (the row lock holds it).
    const guard = await transaction
      .selectFrom('backfills')
      .where('workspace_id', '=', workspaceId)
      .where('backfill_id', '=', backfillId)
      .select(['rows_committed', 'error_count', 'status'])
      .forUpdate()
      .executeTakeFirst();
    if (!guard || guard.rows_committed !== expectedOffset || guard.status !== 'RUNNING') throw new BackfillSuperseded();
    const outcome = await writeBackfillBatch(transaction, { ...context, now }, batch.rows);
    const failures = [...batch.failures, ...outcome.failures].sort((a, b) => a.rowNumber - b.rowNumber);
    const kept = failures.slice(0, Math.max(0, BACKFILL_ERRORS_KEPT_MAX - guard.error_count));
    if (kept.length > 0) {
      await transaction
        .insertInto('backfill_errors')
        .values(kept.map((failure) => ({ workspace_id: workspaceId, backfill_id: backfillId, row_number: failure.rowNumber, column_name: failure.column, message: failure.message })))
        .onConflict((oc) => oc.doNothing())
        .execute();
    }
    await transaction
      .updateTable('backfills')
      .set((eb) => ({
        rows_committed: nextOffset,
        last_row_number: batch.lastRow,
        rows_written: eb('rows_written', '+', outcome.written),
        rows_skipped: eb('rows_skipped', '+', outcome.skipped),
        rows_failed: eb('rows_failed', '+', failures.length),
        error_count: eb('error_count', '+', kept.length),
        studies_created: eb('studies_created', '+', outcome.studiesCreated),
        incentives_written: eb('incentives_written', '+', outcome.incentivesWritten),
        updated_at: now,
      }))
      .where('workspace_id', '=', workspaceId)
      .where('backfill_id', '=', backfillId)
      .execute();
  });
}
