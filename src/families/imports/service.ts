import type { Readable } from 'node:stream';
import { parse as parseCsv } from 'csv-parse/sync';
import { inTransaction } from '../../db/transaction.js';
import { ApiError, badRequest, notFound } from '../../http/errors.js';
import { idPrefixes, newId } from '../../ids.js';
import { enqueueJob } from '../../jobs/queue.js';
import { loadPropertyCatalogue } from '../people/values.js';
import { resolveHeader } from './columns.js';
import * as queries from './queries.js';
import { IMPORT_ERRORS_KEPT_MAX } from './queries.js';
import type { CallContext as SharedCallContext } from '../../context.js';

export const IMPORT_QUEUE = 'people.import';
/** The largest CSV file an import takes. */
export const IMPORT_BYTES_MAX = 2 * 1024 ** 3;
/** Stored chunks are about this size: big enough for few rows, small enough for short statements. */
export const IMPORT_CHUNK_BYTES = 1024 * 1024;
/**
 * Rows per committed batch of the import job. Measured (bench/import.ts): batches of 1000 spent
 * about a tenth more CPU than 5000, and waited for a commit's flush five times as often.
 */
export const IMPORT_BATCH_ROWS = 5000;
/** A header row longer than this is not a header a person wrote. */
const HEADER_BYTES_MAX = 64 * 1024;

export type CallContext = Pick<SharedCallContext, 'db' | 'clock' | 'workspaceId' | 'userId'>;

const tooLarge = () => new ApiError('PAYLOAD_TOO_LARGE', [{ message: `The CSV file is larger than ${IMPORT_BYTES_MAX} bytes`, path: [] }]);

/**
 * Reads the stream up to the end of the header row (a line break outside quotes), without
 * taking more than HEADER_BYTES_MAX. Returns the bytes read so far (the header and whatever came
 * with it), which still belong to the file.
 */
async function readHeader(iterator: AsyncIterator<Buffer>): Promise<{ header: string[]; bytes: Buffer[]; ended: boolean }> {
  const bytes: Buffer[] = [];
  let length = 0;
  let inQuotes = false;
  let scanned = 0;
  for (;;) {
    const next = await iterator.next();
    if (next.done) {
      const text = Buffer.concat(bytes).toString('utf8');
      return { header: headerCells(text), bytes, ended: true };
    }
    const piece = Buffer.isBuffer(next.value) ? next.value : Buffer.from(next.value);
    bytes.push(piece);
    length += piece.length;
    const all = Buffer.concat(bytes);
    for (; scanned < all.length; scanned++) {
      const byte = all[scanned];
      if (byte === 0x22) inQuotes = !inQuotes;
      else if (!inQuotes && (byte === 0x0a || byte === 0x0d)) return { header: headerCells(all.subarray(0, scanned).toString('utf8')), bytes, ended: false };
    }
    if (length > HEADER_BYTES_MAX) throw badRequest(`The header row is longer than ${HEADER_BYTES_MAX} bytes`, ['header']);
  }
}

function headerCells(line: string): string[] {
  if (line.replace(/^\uFEFF/, '').trim() === '') throw badRequest('The CSV file has no header row', ['header']);
  try {
    const records = parseCsv(line, { bom: true, relax_column_count: true }) as string[][];
    return records[0] ?? [];
  } catch {
    throw badRequest('The header row is not valid CSV', ['header']);
  }
}

/**
 * Receives a CSV import: checks the header against the workspace's properties, streams the file
 * into import_chunks (one short transaction per chunk, so memory stays flat in the file's size),
 * then marks the import QUEUED and enqueues its job in one transaction. Anything that goes wrong
 * before that deletes what was stored: the client never saw the import's id.
 */
export async function receiveImport(context: CallContext, body: Readable, populationId: string | undefined) {
  const { db, workspaceId } = context;
  if (populationId !== undefined) {
    const population = await db.selectFrom('populations').select('population_id').where('workspace_id', '=', workspaceId).where('population_id', '=', populationId).executeTakeFirst();
    if (!population) throw notFound('Population', ['populationId']);
  }
  const iterator = (body as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
  const { header, bytes, ended } = await readHeader(iterator);
  const checked = resolveHeader(header, await loadPropertyCatalogue(db, workspaceId));
  if (!checked.ok) throw badRequest(checked.message, ['header', checked.column]);

  const importId = newId(idPrefixes.import);
  const now = context.clock.now().toISOString();
  await db
    .insertInto('imports')
    .values({ workspace_id: workspaceId, import_id: importId, status: 'RECEIVING', population_id: populationId ?? null, created_by_user_id: context.userId, created_at: now, updated_at: now })
    .execute();
  try {
    // One chunk's bytes, filled and stored again and again: a new buffer per chunk (and the
    // pieces concatenated into it) left a megabyte or two of garbage outside V8's heap per
    // chunk, which the heap's collections free only now and then (issue 12: peak RSS).
    const chunk = Buffer.allocUnsafe(IMPORT_CHUNK_BYTES);
    let filled = 0;
    let total = 0;
    let chunkIndex = 0;
    // Chunks are exactly IMPORT_CHUNK_BYTES (the last one less), however the body arrives.
    const take = async (piece: Buffer) => {
      total += piece.length;
      if (total > IMPORT_BYTES_MAX) throw tooLarge();
      for (let at = 0; at < piece.length; ) {
        const copied = piece.copy(chunk, filled, at);
        filled += copied;
        at += copied;
        if (filled === IMPORT_CHUNK_BYTES) {
          await queries.insertChunk(db, workspaceId, importId, chunkIndex++, chunk);
          filled = 0;
        }
      }
    };
    for (const piece of bytes) await take(piece);
    if (!ended) {
      for (;;) {
        const next = await iterator.next();
        if (next.done) break;
        await take(Buffer.isBuffer(next.value) ? next.value : Buffer.from(next.value));
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
    await db.deleteFrom('imports').where('workspace_id', '=', workspaceId).where('import_id', '=', importId).execute();
    throw error;
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
};

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
  return {
    importId: row.import_id,
    status,
    rowsTotal: row.rows_total ?? row.rows_committed,
    rowsImported: row.rows_imported,
    rowsFailed: row.rows_failed,
    errors: errors.slice(0, IMPORT_ERRORS_KEPT_MAX).map((error) => ({ row: error.row_number, message: error.message })),
  };
}
