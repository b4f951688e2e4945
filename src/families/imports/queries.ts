import { recordServiceChanges } from '../audit/recorder.js';
import { type Kysely, sql } from 'kysely';
import type { DB, ImportStatus } from '../../db/schema.js';
import { recordEvents } from '../webhooks/outbox.js';
import { LineCounter } from './text.js';

type Executor = Kysely<DB>;

/** The first stored row errors an import keeps and answers; rows_failed counts every one. */
export const IMPORT_ERRORS_KEPT_MAX = 1000;

export async function findImport(db: Executor, workspaceId: string, importId: string) {
  return db
    .selectFrom('imports as i')
    .leftJoin('jobs as j', (join) => join.onRef('j.workspace_id', '=', 'i.workspace_id').onRef('j.job_id', '=', 'i.job_id'))
    .where('i.workspace_id', '=', workspaceId)
    .where('i.import_id', '=', importId)
    .selectAll('i')
    .select('j.state as job_state')
    .executeTakeFirst();
}

export async function findImportErrors(db: Executor, workspaceId: string, importId: string) {
  return db
    .selectFrom('import_errors')
    .where('workspace_id', '=', workspaceId)
    .where('import_id', '=', importId)
    .select(['row_number', 'message'])
    .orderBy('row_number')
    .limit(IMPORT_ERRORS_KEPT_MAX)
    .execute();
}

export async function insertChunk(db: Executor, workspaceId: string, importId: string, chunkIndex: number, data: Uint8Array) {
  await db.insertInto('import_chunks').values({ workspace_id: workspaceId, import_id: importId, chunk_index: chunkIndex, data }).execute();
}

/**
 * A stored chunk is read in pieces of this size. node-postgres receives bytea as hex text, and
 * V8 places a string longer than 128 KiB straight in its old generation, there until the next
 * full collection (issue 12: the import's peak RSS): a piece's text stays below that, and dies
 * young.
 */
export const CHUNK_PIECE_BYTES = 48 * 1024;

/**
 * Up to CHUNK_PIECE_BYTES of a stored chunk from byte `start` (from 0; empty past its end), or
 * undefined when the chunk is missing. The column is stored uncompressed, so a piece is read
 * without the rest of its chunk.
 */
export async function readChunkPiece(db: Executor, workspaceId: string, importId: string, chunkIndex: number, start: number): Promise<Uint8Array | undefined> {
  const row = await db
    .selectFrom('import_chunks')
    .where('workspace_id', '=', workspaceId)
    .where('import_id', '=', importId)
    .where('chunk_index', '=', chunkIndex)
    .select(sql<Uint8Array>`substring(data from ${start + 1} for ${CHUNK_PIECE_BYTES})`.as('piece'))
    .executeTakeFirst();
  return row?.piece;
}

/**
 * The line breaks in the first `bytes` bytes of an import's stored file (all of its first
 * `chunks` chunks when `bytes` is not given), a whole chunk at a time. Only errors ask, to name the
 * line where a file breaks: the import's own pass never counts lines.
 */
export async function countLines(db: Executor, workspaceId: string, importId: string, chunks: number, bytes = Number.POSITIVE_INFINITY): Promise<LineCounter> {
  const lines = new LineCounter();
  let left = bytes;
  for (let index = 0; index < chunks && left > 0; index++) {
    const row = await db
      .selectFrom('import_chunks')
      .where('workspace_id', '=', workspaceId)
      .where('import_id', '=', importId)
      .where('chunk_index', '=', index)
      .select('data')
      .executeTakeFirst();
    if (!row) break;
    const data = row.data.subarray(0, Math.min(row.data.length, left));
    lines.add(data);
    left -= data.length;
  }
  return lines;
}

export async function deleteChunks(db: Executor, workspaceId: string, importId: string) {
  await db.deleteFrom('import_chunks').where('workspace_id', '=', workspaceId).where('import_id', '=', importId).execute();
}

/**
 * Ends an import that has not ended yet, drops its stored file and records its webhook event
 * (import.completed, or import.failed with `reason`, which the import's report shows too), all in
 * one transaction; false when it had already ended.
 */
/** The queue of the import's job (job.ts's IMPORT_QUEUE; named here so the SQL imports nothing of the job). */
const IMPORT_JOB_SERVICE = 'people.import';

export async function finishImport(
  db: Executor,
  workspaceId: string,
  importId: string,
  status: Extract<ImportStatus, 'COMPLETED' | 'FAILED'>,
  at: string,
  options: { rowsTotal?: number; reason?: string; service?: string } = {},
) {
  const { rowsTotal } = options;
  return db.transaction().execute(async (transaction) => {
    const ended = await transaction
      .updateTable('imports')
      .set({
        status,
        finished_at: at,
        updated_at: at,
        ...(rowsTotal !== undefined ? { rows_total: rowsTotal } : {}),
        ...(status === 'FAILED' ? { failure_reason: options.reason ?? 'The import stopped' } : {}),
      })
      .where('workspace_id', '=', workspaceId)
      .where('import_id', '=', importId)
      .where('status', 'in', ['RECEIVING', 'QUEUED', 'RUNNING'])
      .returning(['rows_imported', 'rows_failed'])
      .executeTakeFirst();
    await deleteChunks(transaction, workspaceId, importId);
    if (!ended) return false;
    await recordEvents(
      transaction,
      workspaceId,
      [
        status === 'COMPLETED'
          ? { type: 'import.completed', data: { importId, importedCount: ended.rows_imported, errorCount: ended.rows_failed } }
          : { type: 'import.failed', data: { importId, error: options.reason ?? 'The import stopped' } },
      ],
      at,
    );
    // The service ended it (its job, or the purge sweep closing one that died): the trail's entry commits with it.
    await recordServiceChanges(transaction, [
      { workspaceId, at, service: options.service ?? IMPORT_JOB_SERVICE, operationId: status === 'COMPLETED' ? 'completeImport' : 'failImport', resourceType: 'import', resourceId: importId, after: status },
    ]);
    return true;
  });
}

/**
 * Imports that can no longer finish on their own: their job failed for good (a lease that ran out
 * on the last attempt never reaches the handler), or they were never QUEUED (the upload died).
 * Every workspace's, or one workspace's when given.
 */
export async function findAbandonedImports(db: Executor, receivingBefore: string, limit: number, workspaceId?: string) {
  const { rows } = await sql<{ workspace_id: string; import_id: string; status: string }>`
    select i.workspace_id, i.import_id, i.status from imports i
    left join jobs j on j.workspace_id = i.workspace_id and j.job_id = i.job_id
    where i.status in ('RECEIVING', 'QUEUED', 'RUNNING') ${workspaceId === undefined ? sql`` : sql`and i.workspace_id = ${workspaceId}`}
      and ((i.status = 'RECEIVING' and i.updated_at < ${receivingBefore}) or (i.status <> 'RECEIVING' and (j.job_id is null or j.state = 'failed')))
    limit ${limit}
  `.execute(db);
  return rows;
}
