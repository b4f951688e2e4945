import type { Readable } from 'node:stream';
import type { CallContext as SharedCallContext } from '../../context.js';
import type { ImportDelimiter } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { ApiError, badRequest, notFound } from '../../http/errors.js';
import { idPrefixes, newId } from '../../ids.js';
import { enqueueJob } from '../../jobs/queue.js';
import { describeCsvError, readHeaderRow } from '../imports/csv.js';
import { formatCount, LineCounter, NotText, SpreadsheetFile, textPieces } from '../imports/text.js';
import { knownBackfillColumns, resolveBackfillHeader } from './columns.js';
import * as queries from './queries.js';
import { BACKFILL_ERRORS_KEPT_MAX } from './queries.js';

export const BACKFILL_QUEUE = 'backfills.run';
/** Stored chunks of the file: the same sizes as the people import's (src/families/imports/service.ts). */
export const BACKFILL_CHUNK_BYTES = 1024 * 1024;
export const EMBEDDED_BACKFILL_CHUNK_BYTES = 32 * 1024;
/** Rows per committed batch: each batch is a handful of set-based statements, whatever its size. */
export const BACKFILL_BATCH_ROWS = 5000;
const HEADER_BYTES_MAX = 64 * 1024;

export type CallContext = Pick<SharedCallContext, 'db' | 'clock' | 'workspaceId' | 'userId'>;

export const tooLarge = (maxBytes: number) =>
  new ApiError('PAYLOAD_TOO_LARGE', [{ message: `The CSV file is larger than the limit of ${formatCount(maxBytes)} bytes (the instance's IMPORT_MAX_BYTES)`, path: [] }]);

const saveAs = 'Save it from the spreadsheet program as "CSV UTF-8" (comma, semicolon or tab separated) and upload that file.';

function notTextError(error: NotText | SpreadsheetFile, line: number) {
  if (error instanceof SpreadsheetFile) return badRequest(`${error.message}. ${saveAs}`, []);
  return badRequest(`The file is not ${error.encoding} text: line ${formatCount(line)} has a byte that is not ${error.encoding}. ${saveAs}`, []);
}

const isNotText = (error: unknown): error is NotText | SpreadsheetFile => error instanceof NotText || error instanceof SpreadsheetFile;

/** The text up to the header row's end (a line break outside quotes), its cells and separator, and the bytes read so far. */
async function readHeader(text: AsyncIterator<Buffer>): Promise<{ header: string[]; delimiter: ImportDelimiter; bytes: Buffer[]; ended: boolean }> {
  const bytes: Buffer[] = [];
  let inQuotes = false;
  let scanned = 0;
  const cells = (line: Buffer) => {
    const textLine = line.toString('utf8');
    if (textLine.replace(/^\uFEFF/, '').trim() === '') throw badRequest('The CSV file has no header row', ['header']);
    const read = readHeaderRow(textLine, knownBackfillColumns);
    if (!read.ok) throw badRequest(`The header row is not valid CSV. ${describeCsvError(read.error, { row: 1, line: 1 })}`, ['header']);
    return { header: read.cells, delimiter: read.delimiter };
  };
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
    if (next.done) return { ...cells(Buffer.concat(bytes)), bytes, ended: true };
    bytes.push(next.value);
    const all = Buffer.concat(bytes);
    for (; scanned < all.length; scanned++) {
      const byte = all[scanned];
      if (byte === 0x22) inQuotes = !inQuotes;
      else if (!inQuotes && (byte === 0x0a || byte === 0x0d)) return { ...cells(all.subarray(0, scanned)), bytes, ended: false };
    }
    if (all.length > HEADER_BYTES_MAX) throw badRequest(`The header row is longer than ${HEADER_BYTES_MAX} bytes`, ['header']);
  }
}

/**
 * Receives a backfill's file: checks its text and header as it arrives, stores it in chunks (one
 * short statement each, so memory stays flat in the file's size), then marks the backfill QUEUED
 * and enqueues its job in one transaction. A refused file leaves nothing behind.
 */
export async function receiveBackfill(context: CallContext, body: Readable, maxBytes: number, chunkBytes = BACKFILL_CHUNK_BYTES) {
  const { db, workspaceId } = context;
  const text = textPieces((body as AsyncIterable<Buffer>)[Symbol.asyncIterator]());
  const { header, delimiter, bytes, ended } = await readHeader(text);
  const checked = resolveBackfillHeader(header);
  if (!checked.ok) throw new ApiError('VALIDATION', checked.problems.map((problem) => ({ message: problem.message, path: ['header', problem.column] })));

  const backfillId = newId(idPrefixes.backfill);
  const now = context.clock.now().toISOString();
  await db.insertInto('backfills').values({ workspace_id: workspaceId, backfill_id: backfillId, status: 'RECEIVING', delimiter, created_by_user_id: context.userId, created_at: now, updated_at: now }).execute();
  const chunk = Buffer.allocUnsafe(chunkBytes);
  let filled = 0;
  let chunkIndex = 0;
  try {
    let total = 0;
    const take = async (piece: Buffer) => {
      total += piece.length;
      if (total > maxBytes) throw tooLarge(maxBytes);
      for (let at = 0; at < piece.length; ) {
        const copied = piece.copy(chunk, filled, at);
        filled += copied;
        at += copied;
        if (filled === chunkBytes) {
          await queries.insertChunk(db, workspaceId, backfillId, chunkIndex++, chunk);
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
    if (filled > 0) await queries.insertChunk(db, workspaceId, backfillId, chunkIndex++, chunk.subarray(0, filled));
    const chunkCount = chunkIndex;
    await inTransaction(db, async (transaction) => {
      const { jobId } = await enqueueJob(transaction, context.clock, { queue: BACKFILL_QUEUE, workspaceId, payload: { backfillId }, singletonKey: backfillId });
      await transaction
        .updateTable('backfills')
        .set({ status: 'QUEUED', byte_count: total, chunk_count: chunkCount, job_id: jobId, updated_at: context.clock.now().toISOString() })
        .where('workspace_id', '=', workspaceId)
        .where('backfill_id', '=', backfillId)
        .execute();
    });
  } catch (error) {
    let refusal = error;
    if (isNotText(error)) refusal = notTextError(error, (await queries.countLines(db, workspaceId, backfillId, chunkIndex, chunk.subarray(0, filled))).line);
    await db.deleteFrom('backfills').where('workspace_id', '=', workspaceId).where('backfill_id', '=', backfillId).execute();
    throw refusal;
  }
  return { backfillId, status: 'QUEUED' as const };
}

export type BackfillView = {
  backfillId: string;
  status: 'QUEUED' | 'RUNNING' | 'COMPLETED' | 'FAILED';
  rowsTotal: number;
  rowsWritten: number;
  rowsSkipped: number;
  rowsFailed: number;
  studiesCreated: number;
  incentivesWritten: number;
  errorsListed: number;
  lastRow?: number;
  failureReason?: string;
  createdByUserId: string;
  createdAt: string;
  finishedAt?: string;
};

const JOB_FAILED_REASON = 'Its background work failed for good';

function present(row: queries.BackfillRowWithJob): BackfillView {
  const status = (row.status === 'QUEUED' || row.status === 'RUNNING') && row.job_state === 'failed' ? 'FAILED' : (row.status as BackfillView['status']);
  return {
    backfillId: row.backfill_id,
    status,
    rowsTotal: row.rows_total ?? row.rows_committed,
    rowsWritten: row.rows_written,
    rowsSkipped: row.rows_skipped,
    rowsFailed: row.rows_failed,
    studiesCreated: row.studies_created,
    incentivesWritten: row.incentives_written,
    errorsListed: row.error_count,
    ...(row.last_row_number !== null ? { lastRow: row.last_row_number } : {}),
    ...(status === 'FAILED' ? { failureReason: row.failure_reason ?? JOB_FAILED_REASON } : {}),
    createdByUserId: row.created_by_user_id,
    createdAt: new Date(row.created_at).toISOString(),
    ...(row.finished_at !== null ? { finishedAt: new Date(row.finished_at).toISOString() } : {}),
  };
}

export async function getBackfill(context: Pick<CallContext, 'db' | 'workspaceId'>, backfillId: string): Promise<BackfillView> {
  const row = await queries.findBackfill(context.db, context.workspaceId, backfillId);
  if (!row || row.status === 'RECEIVING') throw notFound('Backfill', ['backfillId']);
  return present(row);
}

/** Backfills newest first (ids grow with time), keyset-paged by id: `afterId` is the last id of the page before. */
export async function listBackfills(context: Pick<CallContext, 'db' | 'workspaceId'>, afterId: string | undefined, size: number) {
  const { rows, total } = await queries.listBackfills(context.db, context.workspaceId, afterId, size + 1);
  return { rows: rows.slice(0, size).map(present), hasNextPage: rows.length > size, total };
}

export type BackfillErrorView = { row: number; column?: string; message: string };

/** A backfill's refused rows in row order (the first BACKFILL_ERRORS_KEPT_MAX are kept), keyset-paged by row number. */
export async function listBackfillErrors(context: Pick<CallContext, 'db' | 'workspaceId'>, backfillId: string, afterRow: string | undefined, size: number) {
  const backfill = await getBackfill(context, backfillId);
  const after = afterRow === undefined ? 0 : Number(afterRow);
  const rows = await queries.findBackfillErrors(context.db, context.workspaceId, backfillId, Number.isSafeInteger(after) ? after : 0, size + 1);
  const results: BackfillErrorView[] = rows.slice(0, size).map((row) => ({ row: row.row_number, ...(row.column_name !== null ? { column: row.column_name } : {}), message: row.message }));
  return { rows: results, hasNextPage: rows.length > size, total: backfill.errorsListed };
}

export { BACKFILL_ERRORS_KEPT_MAX };
