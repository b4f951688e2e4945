import { CsvError, parse } from 'csv-parse';
import { type Kysely, sql } from 'kysely';
import type { Clock } from '../../clock.js';
import type { DB } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import type { Job, JobHandler } from '../../jobs/queue.js';
import { loadPropertyCatalogue, type PropertyCatalogue } from '../people/values.js';
import { PeopleRecords, type PersonUpsert, refreshPeopleStatistics, upsertPeopleBatch, upsertPeopleRecords } from '../people/writer.js';
import { checkRow, type Column, type ImportedRow, resolveHeader } from './columns.js';
import { describeCsvError, errorCounters, parserOptions } from './csv.js';
import * as queries from './queries.js';
import { IMPORT_ERRORS_KEPT_MAX } from './queries.js';
import { IMPORT_BATCH_ROWS, IMPORT_QUEUE } from './service.js';
import { formatCount } from './text.js';

export interface ImportPayload {
  importId: string;
}

export interface ImportJobOptions {
  /** Rows per committed batch (default IMPORT_BATCH_ROWS). */
  batchSize?: number;
  /**
   * Called after each committed batch (1-based). Tests make it throw to stop an import midway,
   * as a crash between batches would.
   */
  afterBatch?: (importId: string, batch: number) => void | Promise<void>;
  /**
   * Batches written at once, each in its own transaction (default 1). On PostgreSQL the service
   * writes two: one backend writing an import's people was the import's bottleneck, with a core
   * to spare (issue 9). The embedded store has one connection, so more would only wait.
   */
  concurrentBatches?: number;
  /** Told the rows of each committed batch (also the row where a broken file stops): the metrics count them. */
  onRowsCommitted?: (rows: CommittedRows) => void;
  /**
   * A budget of time for writing one batch's people (ms), on the embedded store: its one connection
   * is held, and its event loop busy, for the whole transaction, and every other workspace's request
   * waits that long (issue 32). Each batch is then sized from the last one's measured time per row,
   * between MIN_BATCH_ROWS and `batchSize`.
   */
  batchBudgetMs?: number;
  /**
   * The most bytes of the file parsed in one go (default: a stored piece, 48 KiB), with a turn of
   * the event loop between: parsing and checking rows runs on the event loop every request shares.
   */
  parseSliceBytes?: number;
}

/** The fewest rows a batch sized by its budget of time holds: a transaction's own statements cost the same for one row as for many. */
export const MIN_BATCH_ROWS = 10;

/** Rows one transaction of an import committed: people upserted, and rows refused. */
export interface CommittedRows {
  imported: number;
  failed: number;
}

/** A committed batch, and how long writing its people took (ms; the part of its transaction that grows with its rows). */
interface CommittedBatch extends CommittedRows {
  writeMs: number;
}

/** A batch being written. */
interface Writing {
  batch: Batch;
  /** Its first row's offset. */
  from: number;
  /** Resolved once its transaction holds its batch lock (or it failed before). */
  started: Promise<void>;
  /** Settles once it has committed and been told of, or failed. */
  settled: Promise<void>;
}

/** Another run of the same import committed meanwhile (this one's lease had lapsed): it stops. */
class ImportSuperseded extends Error {
  constructor() {
    super('Another run of this import advanced it; this run stops');
  }
}

interface RowOutcome {
  rowNumber: number;
  row?: ImportedRow;
  message?: string;
}

interface RowFailure {
  rowNumber: number;
  message: string;
}

/**
 * The rows of one batch. A file naming a unique property keeps its checked rows (`outcomes`, the
 * refused ones among them): the unique claims are checked against the batch's people. Any other
 * file's people go into `records` as they are checked, and its refused rows into `failures`.
 */
type Batch = ({ outcomes: RowOutcome[] } | { records: PeopleRecords; failures: RowFailure[] }) & {
  rows: number;
  /** The file's row number of its last row (the report's `lastRow` once it commits). */
  lastRow: number;
};

/**
 * The import job: parses the stored file and upserts people by email, in batches. Each batch is
 * one transaction that also advances the import's committed row offset and counters, so a crash
 * loses no committed row and leaves no half-written one, and a rerun (a retry, or another
 * instance after the lease lapsed) skips the rows already committed. The offset check in that
 * transaction makes a stale run that wakes up late stop instead of writing twice.
 */
export function importJobHandler(db: Kysely<DB>, clock: Clock, options: ImportJobOptions = {}): JobHandler<ImportPayload> {
  const batchSize = options.batchSize ?? IMPORT_BATCH_ROWS;
  return {
    queue: IMPORT_QUEUE,
    async run(job) {
      const { importId } = job.payload;
      try {
        return await runImport(db, clock, job, batchSize, options);
      } catch (error) {
        // Out of attempts: the import says so rather than staying RUNNING.
        if (job.attempt >= job.maxAttempts && !job.signal.aborted && !(error instanceof ImportSuperseded)) {
          const reason = `Its background work failed ${job.attempt} times; the last time: ${error instanceof Error ? error.message : String(error)}`.slice(0, 1000);
          await queries.finishImport(db, job.workspaceId, importId, 'FAILED', clock.now().toISOString(), { reason });
        }
        throw error;
      }
    },
  };
}

async function runImport(db: Kysely<DB>, clock: Clock, job: Job<ImportPayload>, maxBatchRows: number, options: ImportJobOptions) {
  const { afterBatch, onRowsCommitted, batchBudgetMs, parseSliceBytes } = options;
  // Rows for the next batch: maxBatchRows, or what the budget of time allows (sized after each commit).
  let batchSize = batchBudgetMs === undefined ? maxBatchRows : Math.min(maxBatchRows, MIN_BATCH_ROWS * 5);
  const concurrentBatches = Math.max(1, options.concurrentBatches ?? 1);
  const { workspaceId } = job;
  const { importId } = job.payload;
  const started = await db
    .updateTable('imports')
    .set({ status: 'RUNNING', updated_at: clock.now().toISOString() })
    .where('workspace_id', '=', workspaceId)
    .where('import_id', '=', importId)
    .where('status', 'in', ['QUEUED', 'RUNNING'])
    .returning(['rows_committed', 'chunk_count', 'population_id', 'delimiter'])
    .executeTakeFirst();
  // Finished, or gone: the work is done.
  if (!started) return { importId, skipped: true };

  const catalogue = await loadPropertyCatalogue(db, workspaceId);
  // Records are taken as the parser finds them, not from its readable side: a stream that fails
  // drops what it had buffered, and the rows before a broken one must still go in. Each is
  // checked and put in its batch there and then, and is garbage at once (records kept until the
  // parser had finished a piece were promoted to the old generation of V8's heap). The parser
  // hands each record to push: taken there rather than through on_record, which makes two
  // objects of the parser's counters for every record, and V8 took to allocating those straight
  // in the old generation (pretenuring), where they stayed until its next full collection (issue
  // 12: the first seconds of a large import grew the heap by 35 MB).
  const parser = parse(parserOptions(started.delimiter));
  // The parser's counters, updated in place: a row's number is read from them as it is taken.
  const { info } = parser;
  const pushed = parser.push.bind(parser);
  parser.push = (record: string[] | null) => {
    if (record === null) return pushed(null);
    take(record);
    return true;
  };
  parser.on('error', () => {});
  parser.resume();
  const feed = (data?: Buffer) =>
    new Promise<void>((resolve, reject) => {
      const done = (error?: Error | null) => (error ? reject(error) : resolve());
      if (data) parser.write(data, done);
      else parser.end(done);
    });

  const resumeAfter = started.rows_committed;
  let offset = resumeAfter;
  let dataRows = 0;
  let columns: Column[] | undefined;
  let claimsUnique = false;
  // A batch's records keep their bytes for a later batch once committed: two or three in all.
  const spareRecords: PeopleRecords[] = [];
  const newBatch = (): Batch => (claimsUnique ? { rows: 0, lastRow: 0, outcomes: [] } : { rows: 0, lastRow: 0, records: spareRecords.pop() ?? new PeopleRecords(), failures: [] });
  let batch = newBatch();
  /** Batches filled while a piece was parsed, committed once it has been. */
  const filled: Batch[] = [];
  let batches = 0;
  const batchContext = { attempt: job.attempt, workspaceId, importId, populationId: started.population_id, catalogue };
  // Batches commit one after another, in order, each from the offset the previous one left; the
  // next batch is parsed while they run. Up to `concurrentBatches` of them write at once, each in
  // its own transaction on its own connection: one started while its predecessor still writes
  // commits only after it (commitBatch), so what is committed is always a prefix of the file. One
  // naming unique properties, or sharing an email with its predecessor (a later row must win),
  // waits for the predecessor instead.
  const running: Writing[] = [];
  let written = 0;
  let analyzeAt = batchSize;
  /**
   * Waits for a batch in flight (the oldest, or the latest), which then no longer counts as running.
   * Its records serve a later batch only from here: while it was still in `running`, a successor
   * could compare its emails with them (mayWriteBeside).
   */
  const settle = async (writing: Writing) => {
    running.splice(running.indexOf(writing), 1);
    await writing.settled;
    if ('records' in writing.batch) {
      writing.batch.records.clear();
      spareRecords.push(writing.batch.records);
    }
  };
  const commit = async (rows: Batch) => {
    if (rows.rows === 0) return;
    const from = offset;
    const next = offset + rows.rows;
    offset = next;
    while (running.length >= concurrentBatches) await settle(running[0]!);
    const latest = running.at(-1);
    if (latest && !mayWriteBeside(latest.batch, rows)) await settle(latest);
    const predecessor = running.at(-1);
    let announce!: () => void;
    const started = new Promise<void>((resolve) => (announce = resolve));
    const settled = (async () => {
      // Until the predecessor holds its batch lock, this batch takes no lock of its own: its wait
      // for the predecessor then stays one the database sees (see commitBatch).
      if (predecessor) await predecessor.started;
      if (claimsUnique && written >= analyzeAt) {
        await refreshPeopleStatistics(db);
        analyzeAt = written * 2;
      }
      const order = { locked: concurrentBatches > 1, onStarted: announce, predecessor };
      // Committed first, then told: an optional call would skip the commit with no listener.
      const committed = await commitBatch(db, clock, batchContext, rows, from, next, order);
      if (batchBudgetMs !== undefined) {
        // The next batch sized by this one's time per row in writing its people. A transaction's own
        // statements (begin, the fence, the offset, commit) cost the same for one row as for many:
        // counted in, they shrank every batch to the least on a loaded machine, and the import ran
        // three times slower, the connection held about as long.
        const perRow = committed.writeMs / rows.rows;
        batchSize = Math.max(MIN_BATCH_ROWS, Math.min(maxBatchRows, Math.floor(batchBudgetMs / Math.max(perRow, 1e-3))));
      }
      onRowsCommitted?.({ imported: committed.imported, failed: committed.failed });
      written += rows.rows;
      batches++;
      await afterBatch?.(importId, batches);
      job.signal.throwIfAborted();
    })();
    // Awaited before a later batch, or at the end; a failure must not also surface as an unhandled
    // rejection. One that fails before it started lets its successor go on, to fail at its fence.
    settled.catch(() => {}).finally(announce);
    running.push({ batch: rows, from, started, settled });
  };
  /** Every batch in flight, in order: the first failure is thrown, once none of them is still writing. */
  const settleAll = async () => {
    const all = running.splice(0);
    const outcomes = await Promise.allSettled(all.map((entry) => entry.settled));
    const failure = outcomes.find((outcome) => outcome.status === 'rejected');
    if (failure) throw failure.reason;
  };
  /** The header's names, for messages about a broken row's column. */
  let headerNames: string[] = [];
  /** Where the last record read ends (its line break included), and the blank lines skipped until then: a broken row starts after both. */
  let lastRecordEnd = 0;
  let lastEmptyLines = 0;
  const take = (record: string[]) => {
    // The row as a spreadsheet numbers it: every record so far (the header is row 1) and every
    // blank line skipped, which a spreadsheet shows as an empty row. A quoted cell's line breaks
    // make no row.
    const rowNumber = info.records + info.empty_lines;
    lastRecordEnd = info.bytes;
    lastEmptyLines = info.empty_lines;
    if (columns === undefined) {
      headerNames = record;
      const header = resolveHeader(record, catalogue, { ignoreUnknown: true });
      // The upload checked the header; only a since-deleted property can differ, and it is ignored.
      if (!header.ok) throw new Error(`The header of import ${importId} no longer resolves`);
      columns = header.columns;
      claimsUnique = columns.some((column) => column.kind === 'property' && column.property.isUnique);
      if ('records' in batch) spareRecords.push(batch.records);
      batch = newBatch();
      return;
    }
    dataRows++;
    if (dataRows <= resumeAfter) return;
    const checked = checkRow(columns, record);
    if ('outcomes' in batch) batch.outcomes.push(checked.ok ? { rowNumber, row: checked.row } : { rowNumber, message: checked.message });
    else if (checked.ok) batch.records.add(checked.row);
    else batch.failures.push({ rowNumber, message: checked.message });
    batch.rows++;
    batch.lastRow = rowNumber;
    if (batch.rows >= batchSize) {
      filled.push(batch);
      batch = newBatch();
    }
  };
  const commitFilled = async () => {
    for (const rows of filled.splice(0)) await commit(rows);
  };

  let broken: CsvError | undefined;
  try {
    // The stored file a piece at a time (memory stays flat in the file's size), the next piece
    // read while this one is parsed and its batches commit. A whole chunk's bytes at once would
    // live long enough to be promoted to the old generation of the heap, and stay outside it
    // until that is next collected.
    const readPiece = (index: number, start: number) => {
      const reading = queries.readChunkPiece(db, workspaceId, importId, index, start).then((stored) => {
        if (!stored) throw new Error(`Chunk ${index} of import ${importId} is missing`);
        return Buffer.from(stored.buffer, stored.byteOffset, stored.byteLength);
      });
      // Awaited in the loop below; a run that stops before then must not leave it unhandled.
      reading.catch(() => {});
      return { index, start, reading };
    };
    let next = started.chunk_count > 0 ? readPiece(0, 0) : undefined;
    while (!broken) {
      // No piece left: the parser is told the file ended.
      let slice: Buffer | undefined;
      if (next) {
        const { index, start } = next;
        slice = await next.reading;
        // A full piece may be followed by more of its chunk; a shorter one ends it.
        next = slice.length === queries.CHUNK_PIECE_BYTES ? readPiece(index, start + slice.length) : index + 1 < started.chunk_count ? readPiece(index + 1, 0) : undefined;
        if (slice.length === 0) continue;
      }
      try {
        if (slice === undefined || parseSliceBytes === undefined || slice.length <= parseSliceBytes) await feed(slice);
        else {
          // A piece in slices, each parsed in a turn of the event loop of its own, its filled batches committing meanwhile.
          for (let at = 0; at < slice.length; at += parseSliceBytes) {
            await feed(slice.subarray(at, at + parseSliceBytes));
            await commitFilled();
            if (at + parseSliceBytes < slice.length) await new Promise<void>((resolve) => setImmediate(resolve));
          }
        }
      } catch (error) {
        if (!(error instanceof CsvError)) throw error;
        broken = error;
      }
      await commitFilled();
      if (broken || slice === undefined) break;
      // Parsing settles through callbacks and promises alone, which never let the event loop
      // read a socket: the database's answers to the batch in flight would wait for a whole
      // chunk's parsing, and the database with them. A turn of the loop per piece lets the
      // batch's next statement go out as soon as its last one is done.
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  } catch (error) {
    // No commit of this run may land after it has given up: the next run starts from what is committed.
    await settleAll().catch(() => {});
    throw error;
  }
  await commitFilled();
  await commit(batch);
  await settleAll();
  if (broken) {
    // The file itself is broken here: what came before went in; the rest cannot be read reliably
    // (a quote out of place changes what every later cell is). The broken row is a refused row,
    // numbered as its spreadsheet row, and the report says where the file stopped.
    const counters = errorCounters(broken);
    const skipped = counters.emptyLines - lastEmptyLines;
    const row = counters.records + counters.emptyLines + 1;
    const lines = await queries.countLines(db, workspaceId, importId, started.chunk_count, lastRecordEnd);
    const place = { row, line: lines.line + skipped, header: headerNames };
    const what = describeCsvError(broken, place);
    await recordError(db, clock, batchContext, offset, row, `${what}. The import stopped at this row: the rows after it were not read`);
    onRowsCommitted?.({ imported: 0, failed: 1 });
    await queries.finishImport(db, workspaceId, importId, 'FAILED', clock.now().toISOString(), {
      rowsTotal: dataRows + 1,
      reason:
        `${what}. The file is not valid CSV from there on, so the import stopped: ` +
        (dataRows > 0 ? `the rows before row ${formatCount(row)} were read (imported, or refused as listed in errors); ` : '') +
        `row ${formatCount(row)} and the rows after it were not imported`,
    });
    return { importId, status: 'FAILED', rows: dataRows + 1 };
  }
  await queries.finishImport(db, workspaceId, importId, 'COMPLETED', clock.now().toISOString(), { rowsTotal: dataRows });
  // The searches plan by the people table's statistics (the custom properties' among them):
  // take them afresh after a bulk change, as the embedded store never does by itself.
  await sql`analyze people`.execute(db);
  return { importId, status: 'COMPLETED', rows: dataRows };
}

/**
 * The fence of every write of a run, taken first in its transaction and under the import row's
 * lock: only the run at the committed offset writes, and only while its job still runs this
 * attempt (a run whose lease lapsed, and was taken over or failed meanwhile, stops here instead of
 * writing after its successor). Answers the import's count of kept errors.
 */
async function fence(transaction: Kysely<DB>, context: Pick<BatchContext, 'workspaceId' | 'importId' | 'attempt'>, expectedOffset: number, now: string) {
  const guard = await transaction
    .updateTable('imports')
    .set({ updated_at: now })
    .where('workspace_id', '=', context.workspaceId)
    .where('import_id', '=', context.importId)
    .where('rows_committed', '=', expectedOffset)
    .where('status', '=', 'RUNNING')
    .where(({ exists, selectFrom }) =>
      exists(
        selectFrom('jobs')
          .whereRef('jobs.workspace_id', '=', 'imports.workspace_id')
          .whereRef('jobs.job_id', '=', 'imports.job_id')
          .where('jobs.state', '=', 'running')
          .where('jobs.attempts', '=', context.attempt)
          .select('jobs.job_id'),
      ),
    )
    .returning('error_count')
    .executeTakeFirst();
  if (!guard) throw new ImportSuperseded();
  return guard;
}

/** Records the row where the file stops being CSV, under the same fence as the batches: a stale run counts it no second time. */
async function recordError(db: Kysely<DB>, clock: Clock, context: Pick<BatchContext, 'workspaceId' | 'importId' | 'attempt'>, committedOffset: number, rowNumber: number, message: string) {
  const { workspaceId, importId } = context;
  await inTransaction(db, async (transaction) => {
    const { error_count: kept } = await fence(transaction, context, committedOffset, clock.now().toISOString());
    await transaction
      .updateTable('imports')
      .set((eb) => ({ rows_failed: eb('rows_failed', '+', 1), last_row_number: rowNumber }))
      .where('workspace_id', '=', workspaceId)
      .where('import_id', '=', importId)
      .execute();
    if (kept < IMPORT_ERRORS_KEPT_MAX) {
      await transaction.updateTable('imports').set((eb) => ({ error_count: eb('error_count', '+', 1) })).where('workspace_id', '=', workspaceId).where('import_id', '=', importId).execute();
      await transaction.insertInto('import_errors').values({ workspace_id: workspaceId, import_id: importId, row_number: rowNumber, message }).onConflict((oc) => oc.doNothing()).execute();
    }
  });
}

interface BatchContext {
  /** The job's attempt this run is: the fence against a run that lost its lease. */
  attempt: number;
  workspaceId: string;
  importId: string;
  populationId: string | null;
  catalogue: PropertyCatalogue;
}

/** Rows of one batch that upsert the same person (an email repeated in the batch). */
interface Upsert extends PersonUpsert {
  rowNumbers: number[];
}

/**
 * Whether a batch may be written while `predecessor` still is: only people records (a file naming
 * no unique property, whose claims are checked against the batch's people) of distinct emails.
 */
function mayWriteBeside(predecessor: Batch, batch: Batch): boolean {
  return 'records' in predecessor && 'records' in batch && !predecessor.records.sharesEmailWith(batch.records);
}

/** How a batch's transaction orders itself among the batches of its run (commitBatch). */
interface BatchOrder {
  /** Whether it takes its batch lock first, for a successor to wait on (when batches overlap). */
  locked: boolean;
  /** Called once its transaction holds its batch lock (or has begun, when it takes none). */
  onStarted: () => void;
  /** The batch before it, when that one was still being written as this one started. */
  predecessor?: Pick<Writing, 'from' | 'settled'>;
}

/**
 * The batch lock of an import's batch starting at `from`, held until its transaction ends. A
 * successor waits for its predecessor's commit by taking the predecessor's lock: a wait the
 * database sees, so that a cycle through another transaction (a bounce marking two people
 * unreachable, say, one written by each batch) is a deadlock it detects and breaks, where a wait
 * in this process would hang both.
 */
async function takeBatchLock(transaction: Kysely<DB>, importId: string, from: number) {
  await sql`select pg_advisory_xact_lock(hashtext(${`import-batch:${importId}`}), ${from % 2_147_483_647}::integer)`.execute(transaction);
}

/**
 * Writes one batch and advances the import's offset, in one transaction. Fenced first; or, when
 * its predecessor was still being written as it started, written first, then fenced once the
 * predecessor's transaction has ended (its batch lock) and the predecessor was told of: a
 * predecessor that failed fails this batch too, which then writes nothing.
 */
async function commitBatch(db: Kysely<DB>, clock: Clock, context: BatchContext, batch: Batch, expectedOffset: number, nextOffset: number, order: BatchOrder): Promise<CommittedBatch> {
  const { workspaceId, importId } = context;
  const { predecessor } = order;
  const now = clock.now().toISOString();
  let writeMs = 0;
  const committed = await inTransaction(db, async (transaction) => {
    if (order.locked) await takeBatchLock(transaction, importId, expectedOffset);
    order.onStarted();
    const fenceFirst = predecessor === undefined ? await fence(transaction, context, expectedOffset, now) : undefined;
    let imported: number;
    let failures: RowFailure[];
    const writing = performance.now();
    if ('records' in batch) {
      // The people family writes the people, and their memberships.
      await upsertPeopleRecords(transaction, workspaceId, batch.records, { importId, populationId: context.populationId, at: now });
      imported = batch.records.count;
      failures = batch.failures;
    } else {
      ({ imported, failures } = await upsertOutcomes(transaction, context, batch.outcomes, now));
    }
    writeMs = performance.now() - writing;
    if (predecessor) {
      await takeBatchLock(transaction, importId, predecessor.from);
      await predecessor.settled;
    }
    const guard = fenceFirst ?? (await fence(transaction, context, expectedOffset, now));

    failures.sort((a, b) => a.rowNumber - b.rowNumber);
    const kept = failures.slice(0, Math.max(0, IMPORT_ERRORS_KEPT_MAX - guard.error_count));
    if (kept.length > 0) {
      await transaction
        .insertInto('import_errors')
        .values(kept.map((failure) => ({ workspace_id: workspaceId, import_id: importId, row_number: failure.rowNumber, message: failure.message })))
        .onConflict((oc) => oc.doNothing())
        .execute();
    }
    await transaction
      .updateTable('imports')
      .set((eb) => ({
        rows_committed: nextOffset,
        last_row_number: batch.lastRow,
        rows_imported: eb('rows_imported', '+', imported),
        rows_failed: eb('rows_failed', '+', failures.length),
        error_count: eb('error_count', '+', kept.length),
      }))
      .where('workspace_id', '=', workspaceId)
      .where('import_id', '=', importId)
      .execute();
    return { imported, failed: failures.length };
  });
  return { ...committed, writeMs };
}

/** A batch of checked rows (a file naming a unique property): rows of one email merged, then written, some refused. */
async function upsertOutcomes(transaction: Kysely<DB>, context: BatchContext, outcomes: RowOutcome[], now: string) {
  const { workspaceId, importId, catalogue } = context;
  const upserts = new Map<string, Upsert>();
  const failures: RowFailure[] = [];
  for (const outcome of outcomes) {
    if (!outcome.row) {
      failures.push({ rowNumber: outcome.rowNumber, message: outcome.message! });
      continue;
    }
    const row = outcome.row;
    const upsert = upserts.get(row.emailKey) ?? { emailKey: row.emailKey, email: row.email, rowNumbers: [], properties: {} };
    upsert.rowNumbers.push(outcome.rowNumber);
    if (row.firstName !== undefined) upsert.firstName = row.firstName;
    if (row.lastName !== undefined) upsert.lastName = row.lastName;
    if (row.phone !== undefined) upsert.phone = row.phone;
    Object.assign(upsert.properties, row.properties);
    upserts.set(row.emailKey, upsert);
  }

  const all = [...upserts.values()];
  // The people family writes the people: lookups, unique claims, the upsert and memberships.
  const refusals = await upsertPeopleBatch(transaction, workspaceId, all, { catalogue, importId, populationId: context.populationId, at: now });
  const good = all.filter((_, index) => refusals[index] === undefined);
  all.forEach((upsert, index) => {
    const failure = refusals[index];
    if (failure !== undefined) for (const rowNumber of upsert.rowNumbers) failures.push({ rowNumber, message: failure });
  });
  return { imported: good.reduce((sum, upsert) => sum + upsert.rowNumbers.length, 0), failures };
}
