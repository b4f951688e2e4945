import type { Readable } from 'node:stream';
import { inTransaction } from '../../db/transaction.js';
import { ApiError, badRequest, notFound } from '../../http/errors.js';
import { idPrefixes, newId } from '../../ids.js';
import { enqueueJob } from '../../jobs/queue.js';
import { loadPropertyCatalogue } from '../people/values.js';
import type { ImportDelimiter } from '../../db/schema.js';
import { knownColumnNames, resolveHeader } from './columns.js';
import { describeCsvError, readHeaderRow } from './csv.js';
import * as queries from './queries.js';
import { IMPORT_ERRORS_KEPT_MAX } from './queries.js';
import { formatCount, LineCounter, NotText, SpreadsheetFile, textPieces } from './text.js';
import type { CallContext as SharedCallContext } from '../../context.js';

export const IMPORT_QUEUE = 'people.import';
/** The largest CSV file an import takes by default (IMPORT_MAX_BYTES); issue 32: it was 2 GiB. */
export const IMPORT_BYTES_MAX = 256 * 1024 ** 2;
/** Stored chunks are about this size: big enough for few rows, small enough for short statements. */
export const IMPORT_CHUNK_BYTES = 1024 * 1024;
/**
 * The chunk size on the embedded store: each chunk's insert holds its one connection, and runs on
 * the event loop, for as long as it takes (issue 32: about 0.1 ms a KiB under load, so a 1 MiB
 * chunk kept every other workspace waiting ~100 ms; 32 KiB, a few ms).
 */
export const EMBEDDED_IMPORT_CHUNK_BYTES = 32 * 1024;
/**
 * Rows per committed batch of the import job. Measured (bench/import.ts): batches of 1000 spent
 * about a tenth more CPU than 5000, and waited for a commit's flush five times as often.
 */
export const IMPORT_BATCH_ROWS = 5000;
/** A header row longer than this is not a header a person wrote. */
const HEADER_BYTES_MAX = 64 * 1024;

export type CallContext = Pick<SharedCallContext, 'db' | 'clock' | 'workspaceId' | 'userId'>;

/** The 413 naming the limit: "The CSV file is larger than the limit of 268,435,456 bytes (the instance's IMPORT_MAX_BYTES)". */
export const tooLarge = (maxBytes: number) =>
  new ApiError('PAYLOAD_TOO_LARGE', [{ message: `The CSV file is larger than the limit of ${formatCount(maxBytes)} bytes (the instance's IMPORT_MAX_BYTES)`, path: [] }]);

const saveAs = 'Save it from the spreadsheet program as "CSV UTF-8" (comma, semicolon or tab separated) and upload that file.';

/** The 400 for a file that is not the text it says it is, at the 1-based `line` (counted over the bytes before the bad one). */
function notTextError(error: NotText | SpreadsheetFile, line: number) {
  if (error instanceof SpreadsheetFile) return badRequest(`${error.message}. ${saveAs}`, []);
  if (error.encoding === 'UTF-16') {
    return badRequest(`The file starts with a UTF-16 byte-order mark but is not valid UTF-16 text, at or after line ${formatCount(line)}. ${saveAs}`, []);
  }
  return badRequest(
    `The file is not UTF-8 text: line ${formatCount(line)} has a byte that is not UTF-8, as in a file saved in another encoding (Windows-1252, Latin-1, Mac Roman). ${saveAs}`,
    [],
  );
}

const isNotText = (error: unknown): error is NotText | SpreadsheetFile => error instanceof NotText || error instanceof SpreadsheetFile;

/**
 * Reads the file's text up to the end of the header row (a line break outside quotes), without
 * taking more than HEADER_BYTES_MAX, and reads the header with the separator it uses. Returns the
 * bytes read so far (the header and whatever came with it), which still belong to the file.
 */
async function readHeader(text: AsyncIterator<Buffer>, known: ReadonlySet<string>): Promise<{ header: string[]; delimiter: ImportDelimiter; bytes: Buffer[]; ended: boolean }> {
  const bytes: Buffer[] = [];
  let length = 0;
  let inQuotes = false;
  let scanned = 0;
  for (;;) {
    let next: IteratorResult<Buffer>;
    try {
      next = await text.next();
    } catch (error) {
      if (!isNotText(error)) throw error;
      const lines = new LineCounter();
      for (const piece of bytes) lines.add(piece);
      throw notTextError(error, lines.line);
    }
    if (next.done) return { ...headerCells(Buffer.concat(bytes), known), bytes, ended: true };
    bytes.push(next.value);
    length += next.value.length;
    const all = bytes.length === 1 ? next.value : Buffer.concat(bytes);
    for (; scanned < all.length; scanned++) {
      const byte = all[scanned];
      if (byte === 0x22) inQuotes = !inQuotes;
      else if (!inQuotes && (byte === 0x0a || byte === 0x0d)) return { ...headerCells(all.subarray(0, scanned), known), bytes, ended: false };
    }
    if (length > HEADER_BYTES_MAX) throw badRequest(`The header row is longer than ${HEADER_BYTES_MAX} bytes`, ['header']);
  }
}

function headerCells(line: Buffer, known: ReadonlySet<string>): { header: string[]; delimiter: ImportDelimiter } {
  // UTF-16 without a byte-order mark reads as text with a NUL between its letters.
  if (line.includes(0)) {
    throw badRequest(`The header row holds NUL characters: the file looks like UTF-16 text without a byte-order mark. ${saveAs}`, ['header']);
  }
  const text = line.toString('utf8');
  if (text.replace(/^\uFEFF/, '').trim() === '') throw badRequest('The CSV file has no header row', ['header']);
  const read = readHeaderRow(text, known);
  if (!read.ok) throw badRequest(`The header row is not valid CSV. ${describeCsvError(read.error, { row: 1, line: 1 })}`, ['header']);
  return { header: read.cells, delimiter: read.delimiter };
}

/**
 * Receives a CSV import: reads the file as UTF-8 text (transcoding UTF-16), checks the header
 * against the workspace's properties, streams the file into import_chunks (one short transaction
 * per chunk, so memory stays flat in the file's size), then marks the import QUEUED and enqueues
 * its job in one transaction. Anything that goes wrong before that (bytes that are not text, say)
 * deletes what was stored: the client never saw the import's id, and nothing changed.
 */
export async function receiveImport(context: CallContext, body: Readable, populationId: string | undefined, maxBytes = IMPORT_BYTES_MAX, chunkBytes = IMPORT_CHUNK_BYTES) {
  const { db, workspaceId } = context;
  if (populationId !== undefined) {
    const population = await db.selectFrom('populations').select('population_id').where('workspace_id', '=', workspaceId).where('population_id', '=', populationId).executeTakeFirst();
    if (!population) throw notFound('Population', ['populationId']);
  }
  const text = textPieces((body as AsyncIterable<Buffer>)[Symbol.asyncIterator]());
  const catalogue = await loadPropertyCatalogue(db, workspaceId);
  const { header, delimiter, bytes, ended } = await readHeader(text, knownColumnNames(catalogue));
  const checked = resolveHeader(header, catalogue);
  if (!checked.ok) throw new ApiError('VALIDATION', checked.problems.map((problem) => ({ message: problem.message, path: ['header', problem.column] })));

  const importId = newId(idPrefixes.import);
  const now = context.clock.now().toISOString();
  await db
    .insertInto('imports')
    .values({ workspace_id: workspaceId, import_id: importId, status: 'RECEIVING', delimiter, population_id: populationId ?? null, created_by_user_id: context.userId, created_at: now, updated_at: now })
    .execute();
  // One chunk's bytes, filled and stored again and again: a new buffer per chunk (and the
  // pieces concatenated into it) left a megabyte or two of garbage outside V8's heap per
  // chunk, which the heap's collections free only now and then (issue 12: peak RSS).
  const chunk = Buffer.allocUnsafe(chunkBytes);
  let filled = 0;
  let chunkIndex = 0;
  try {
    let total = 0;
    // Chunks are exactly chunkBytes (the last one less), however the body arrives.
    const take = async (piece: Buffer) => {
      total += piece.length;
      if (total > maxBytes) throw tooLarge(maxBytes);
      for (let at = 0; at < piece.length; ) {
        const copied = piece.copy(chunk, filled, at);
        filled += copied;
        at += copied;
        if (filled === chunkBytes) {
          await queries.insertChunk(db, workspaceId, importId, chunkIndex++, chunk);
          filled = 0;
        }
      }
    };
    for (const piece of bytes) await take(piece);
    if (!ended) {
      for (;;) {
        const next = await text.next();
        if (next.done) break;
        await take(next.value);
      }
    }
    if (filled > 0) await queries.insertChunk(db, workspaceId, importId, chunkIndex++, chunk.subarray(0, filled));
    const chunkCount = chunkIndex;
    await inTransaction(db, async (transaction) => {
      const { jobId } = await enqueueJob(transaction, context.clock, { queue: IMPORT_QUEUE, workspaceId, payload: { importId }, singletonKey: importId });
      await transaction
        .updateTable('imports')
        .set({ status: 'QUEUED', byte_count: total, chunk_count: chunkCount, job_id: jobId, updated_at: context.clock.now().toISOString() })
        .where('workspace_id', '=', workspaceId)
        .where('import_id', '=', importId)
        .execute();
    });
  } catch (error) {
    let refusal = error;
    if (isNotText(error)) {
      // The text before the bad bytes is all taken: stored, or in the chunk being filled.
      const lines = await queries.countLines(db, workspaceId, importId, chunkIndex);
      lines.add(chunk.subarray(0, filled));
      refusal = notTextError(error, lines.line);
    }
    await db.deleteFrom('imports').where('workspace_id', '=', workspaceId).where('import_id', '=', importId).execute();
    throw refusal;
  }
  return { importId, status: 'QUEUED' as const };
}

export type ImportView = {
  importId: string;
  status: 'QUEUED' | 'RUNNING' | 'COMPLETED' | 'FAILED';
  rowsTotal: number;
  rowsImported: number;
  rowsFailed: number;
  errors: { row: number; message: string }[];
  errorsOmitted?: number;
  lastRow?: number;
  failureReason?: string;
};

/** What the sweep records for an import whose job failed for good (src/families/people/purge.ts); read the same before it runs. */
const JOB_FAILED_REASON = 'Its background work failed for good';

/**
 * An import as the API shows it. An import still being received is not one yet (404). One whose
 * job failed for good reads FAILED even before the recurring sweep records it (a lease that ran
 * out on the last attempt never reaches the import's handler).
 */
export async function getImport(context: Pick<CallContext, 'db' | 'workspaceId'>, importId: string): Promise<ImportView> {
  const row = await queries.findImport(context.db, context.workspaceId, importId);
  if (!row || row.status === 'RECEIVING') throw notFound('Import', ['importId']);
  const errors = row.error_count > 0 ? await queries.findImportErrors(context.db, context.workspaceId, importId) : [];
  const status = (row.status === 'QUEUED' || row.status === 'RUNNING') && row.job_state === 'failed' ? 'FAILED' : row.status;
  const listed = errors.slice(0, IMPORT_ERRORS_KEPT_MAX).map((error) => ({ row: error.row_number, message: error.message }));
  return {
    importId: row.import_id,
    status,
    rowsTotal: row.rows_total ?? row.rows_committed,
    rowsImported: row.rows_imported,
    rowsFailed: row.rows_failed,
    errors: listed,
    ...(row.rows_failed > listed.length ? { errorsOmitted: row.rows_failed - listed.length } : {}),
    ...(row.last_row_number !== null ? { lastRow: row.last_row_number } : {}),
    ...(status === 'FAILED' ? { failureReason: row.failure_reason ?? JOB_FAILED_REASON } : {}),
  };
}
