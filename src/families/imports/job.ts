import { CsvError, parse } from 'csv-parse';
import { type Kysely, sql } from 'kysely';
import type { Clock } from '../../clock.js';
import type { DB } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import type { Job, JobHandler } from '../../jobs/queue.js';
import { loadPropertyCatalogue, type PropertyCatalogue } from '../people/values.js';
import { type PersonUpsert, refreshPeopleStatistics, upsertPeopleBatch } from '../people/writer.js';
import { checkRow, type Column, type ImportedRow, resolveHeader } from './columns.js';
import * as queries from './queries.js';
import { IMPORT_ERRORS_KEPT_MAX } from './queries.js';
import { IMPORT_BATCH_ROWS, IMPORT_QUEUE } from './service.js';

/** The parser is fed stored chunks in slices of this size. */
const PARSE_SLICE_BYTES = 64 * 1024;

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
  /** Told the rows of each committed batch (also the row where a broken file stops): the metrics count them. */
  onRowsCommitted?: (rows: CommittedRows) => void;
}

/** Rows one transaction of an import committed: people upserted, and rows refused. */
export interface CommittedRows {
  imported: number;
  failed: number;
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

async function runImport(db: Kysely<DB>, clock: Clock, job: Job<ImportPayload>, batchSize: number, options: ImportJobOptions) {
  const { afterBatch, onRowsCommitted } = options;
  const { workspaceId } = job;
  const { importId } = job.payload;
  const started = await db
    .updateTable('imports')
    .set({ status: 'RUNNING', updated_at: clock.now().toISOString() })
    .where('workspace_id', '=', workspaceId)
    .where('import_id', '=', importId)
    .where('status', 'in', ['QUEUED', 'RUNNING'])
    .returning(['rows_committed', 'chunk_count', 'population_id'])
    .executeTakeFirst();
  // Finished, or gone: the work is done.
  if (!started) return { importId, skipped: true };

  const catalogue = await loadPropertyCatalogue(db, workspaceId);
  // Records are taken as the parser finds them (on_record), not from its readable side: a stream
  // that fails drops what it had buffered, and the rows before a broken one must still go in.
  let found: string[][] = [];
  const parser = parse({
    bom: true,
    relax_column_count: true,
    skip_empty_lines: true,
    on_record: (record: string[]) => {
      found.push(record);
      return null;
    },
  });
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
  let batch: RowOutcome[] = [];
  let batches = 0;
  const batchContext = { attempt: job.attempt, workspaceId, importId, populationId: started.population_id, catalogue };
  // One batch commits while the next is parsed: batches still commit one after another, in order,
  // each from the offset the previous one left.
  let inFlight: Promise<void> = Promise.resolve();
  let written = 0;
  let analyzeAt = batchSize;
  const commit = async () => {
    if (batch.length === 0) return;
    const rows = batch;
    const from = offset;
    const next = offset + rows.length;
    batch = [];
    offset = next;
    const previous = inFlight;
    inFlight = (async () => {
      await previous;
      if (columns?.some((column) => column.kind === 'property' && column.property.isUnique) && written >= analyzeAt) {
        await refreshPeopleStatistics(db);
        analyzeAt = written * 2;
      }
      // Committed first, then told: an optional call would skip the commit with no listener.
      const committed = await commitBatch(db, clock, batchContext, rows, from, next);
      onRowsCommitted?.(committed);
      written += rows.length;
      batches++;
      await afterBatch?.(importId, batches);
      job.signal.throwIfAborted();
    })();
    // Awaited below or at the end; a failure must not also surface as an unhandled rejection.
    inFlight.catch(() => {});
    await previous;
  };
  const take = async () => {
    const records = found;
    found = [];
    for (const record of records) {
      if (columns === undefined) {
        const header = resolveHeader(record, catalogue, { ignoreUnknown: true });
        // The upload checked the header; only a since-deleted property can differ, and it is ignored.
        if (!header.ok) throw new Error(`The header of import ${importId} no longer resolves`);
        columns = header.columns;
        continue;
      }
      dataRows++;
      if (dataRows <= resumeAfter) continue;
      const checked = checkRow(columns, record);
      batch.push(checked.ok ? { rowNumber: dataRows, row: checked.row } : { rowNumber: dataRows, message: checked.message });
      if (batch.length >= batchSize) await commit();
    }
  };

  let broken = false;
  try {
    // One stored chunk at a time (memory stays flat in the file's size), the next one read while
    // this one is parsed and its batches commit. The parser gets a chunk in slices, and its
    // records are taken after each: a whole chunk's records at once would all live long enough
    // to be promoted to the old generation of the heap, which then grows before it is collected.
    const readStored = (index: number) => {
      const reading = queries.readChunk(db, workspaceId, importId, index).then((stored) => {
        if (!stored) throw new Error(`Chunk ${index} of import ${importId} is missing`);
        return Buffer.from(stored.buffer, stored.byteOffset, stored.byteLength);
      });
      // Awaited in the loop below; a run that stops before then must not leave it unhandled.
      reading.catch(() => {});
      return reading;
    };
    let reading = started.chunk_count > 0 ? readStored(0) : undefined;
    for (let index = 0; index <= started.chunk_count && !broken; index++) {
      const slices: (Buffer | undefined)[] = [];
      if (reading) {
        const data = await reading;
        reading = index + 1 < started.chunk_count ? readStored(index + 1) : undefined;
        for (let start = 0; start < data.length; start += PARSE_SLICE_BYTES) slices.push(data.subarray(start, start + PARSE_SLICE_BYTES));
      } else {
        slices.push(undefined);
      }
      for (const slice of slices) {
        try {
          await feed(slice);
        } catch (error) {
          if (!(error instanceof CsvError)) throw error;
          broken = true;
        }
        await take();
        if (broken) break;
        // Parsing settles through callbacks and promises alone, which never let the event loop
        // read a socket: the database's answers to the batch in flight would wait for a whole
        // chunk's parsing, and the database with them. A turn of the loop per slice lets the
        // batch's next statement go out as soon as its last one is done.
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    }
  } catch (error) {
    // No commit of this run may land after it has given up: the next run starts from what is committed.
    await inFlight.catch(() => {});
    throw error;
  }
  await commit();
  await inFlight;
  if (broken) {
    // The file itself is broken here: what came before went in; the rest cannot be read reliably.
    await recordError(db, clock, batchContext, offset, dataRows + 1, 'The file is not valid CSV from this row on; the import stopped here');
    onRowsCommitted?.({ imported: 0, failed: 1 });
    await queries.finishImport(db, workspaceId, importId, 'FAILED', clock.now().toISOString(), {
      rowsTotal: dataRows + 1,
      reason: `The file is not valid CSV from row ${dataRows + 1} on; the rows before it went in`,
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
      .set((eb) => ({ rows_failed: eb('rows_failed', '+', 1) }))
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

async function commitBatch(db: Kysely<DB>, clock: Clock, context: BatchContext, batch: RowOutcome[], expectedOffset: number, nextOffset: number): Promise<CommittedRows> {
  const { workspaceId, importId, catalogue } = context;
  const now = clock.now().toISOString();
  return inTransaction(db, async (transaction) => {
    const guard = await fence(transaction, context, expectedOffset, now);

    const upserts = new Map<string, Upsert>();
    const failures: { rowNumber: number; message: string }[] = [];
    for (const outcome of batch) {
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

    const imported = good.reduce((sum, upsert) => sum + upsert.rowNumbers.length, 0);
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
        rows_imported: eb('rows_imported', '+', imported),
        rows_failed: eb('rows_failed', '+', failures.length),
        error_count: eb('error_count', '+', kept.length),
      }))
      .where('workspace_id', '=', workspaceId)
      .where('import_id', '=', importId)
      .execute();
    return { imported, failed: failures.length };
  });
}
