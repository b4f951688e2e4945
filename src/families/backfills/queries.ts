import { recordServiceChanges } from '../audit/recorder.js';
import { type Kysely, sql } from 'kysely';
import type { DB } from '../../db/schema.js';
import { LineCounter } from '../imports/text.js';

type Executor = Kysely<DB>;

/** The refused rows a backfill keeps (rows_failed counts every one). */
export const BACKFILL_ERRORS_KEPT_MAX = 10_000;

export type BackfillRowWithJob = NonNullable<Awaited<ReturnType<typeof findBackfill>>>;

export async function findBackfill(db: Executor, workspaceId: string, backfillId: string) {
  return db
    .selectFrom('backfills as b')
    .leftJoin('jobs as j', (join) => join.onRef('j.workspace_id', '=', 'b.workspace_id').onRef('j.job_id', '=', 'b.job_id'))
    .where('b.workspace_id', '=', workspaceId)
    .where('b.backfill_id', '=', backfillId)
    .selectAll('b')
    .select('j.state as job_state')
    .executeTakeFirst();
}

export async function listBackfills(db: Executor, workspaceId: string, afterId: string | undefined, limit: number) {
  let query = db
    .selectFrom('backfills as b')
    .leftJoin('jobs as j', (join) => join.onRef('j.workspace_id', '=', 'b.workspace_id').onRef('j.job_id', '=', 'b.job_id'))
    .where('b.workspace_id', '=', workspaceId)
    .where('b.status', '<>', 'RECEIVING')
    .selectAll('b')
    .select('j.state as job_state');
  if (afterId !== undefined) query = query.where('b.backfill_id', '<', afterId);
  const [rows, counted] = await Promise.all([
    query.orderBy('b.backfill_id', 'desc').limit(limit).execute(),
    db.selectFrom('backfills').where('workspace_id', '=', workspaceId).where('status', '<>', 'RECEIVING').select((eb) => eb.fn.countAll<string>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(counted.total) };
}

export async function findBackfillErrors(db: Executor, workspaceId: string, backfillId: string, afterRow: number, limit: number) {
  return db
    .selectFrom('backfill_errors')
    .where('workspace_id', '=', workspaceId)
    .where('backfill_id', '=', backfillId)
    .where('row_number', '>', afterRow)
    .select(['row_number', 'column_name', 'message'])
    .orderBy('row_number')
    .limit(limit)
    .execute();
}

export async function insertChunk(db: Executor, workspaceId: string, backfillId: string, chunkIndex: number, data: Uint8Array) {
  await db.insertInto('backfill_chunks').values({ workspace_id: workspaceId, backfill_id: backfillId, chunk_index: chunkIndex, data }).execute();
}

/** Up to 48 KiB of a stored chunk from `start` (see imports' CHUNK_PIECE_BYTES: short strings die young). */
export const CHUNK_PIECE_BYTES = 48 * 1024;

export async function readChunkPiece(db: Executor, workspaceId: string, backfillId: string, chunkIndex: number, start: number): Promise<Uint8Array | undefined> {
  const row = await db
    .selectFrom('backfill_chunks')
    .where('workspace_id', '=', workspaceId)
    .where('backfill_id', '=', backfillId)
    .where('chunk_index', '=', chunkIndex)
    .select(sql<Uint8Array>`substring(data from ${start + 1} for ${CHUNK_PIECE_BYTES})`.as('piece'))
    .executeTakeFirst();
  return row?.piece;
}

/** The lines of the stored chunks and the chunk being filled: only a refusal asks, to name the line. */
export async function countLines(db: Executor, workspaceId: string, backfillId: string, chunks: number, tail: Uint8Array): Promise<LineCounter> {
  const lines = new LineCounter();
  for (let index = 0; index < chunks; index++) {
    const row = await db.selectFrom('backfill_chunks').where('workspace_id', '=', workspaceId).where('backfill_id', '=', backfillId).where('chunk_index', '=', index).select('data').executeTakeFirst();
    if (row) lines.add(row.data);
  }
  lines.add(tail);
  return lines;
}

/** Ends a backfill that has not ended yet and drops its stored file, in one transaction; false when it had already ended. */
export async function finishBackfill(
  db: Executor,
  workspaceId: string,
  backfillId: string,
  status: 'COMPLETED' | 'FAILED',
  at: string,
  options: { rowsTotal?: number; reason?: string; service?: string } = {},
) {
  return db.transaction().execute(async (transaction) => {
    const ended = await transaction
      .updateTable('backfills')
      .set({
        status,
        finished_at: at,
        updated_at: at,
        ...(options.rowsTotal !== undefined ? { rows_total: options.rowsTotal } : {}),
        ...(status === 'FAILED' ? { failure_reason: options.reason ?? 'The backfill stopped' } : {}),
      })
      .where('workspace_id', '=', workspaceId)
      .where('backfill_id', '=', backfillId)
      .where('status', 'in', ['RECEIVING', 'QUEUED', 'RUNNING'])
      .returning('backfill_id')
      .executeTakeFirst();
    await transaction.deleteFrom('backfill_chunks').where('workspace_id', '=', workspaceId).where('backfill_id', '=', backfillId).execute();
    if (ended === undefined) return false;
    await recordServiceChanges(transaction, [
      { workspaceId, at, service: options.service ?? 'backfills.run', operationId: status === 'COMPLETED' ? 'completeBackfill' : 'failBackfill', resourceType: 'backfill', resourceId: backfillId, after: status },
    ]);
    return true;
  });
}

/** Backfills that can no longer finish: an upload that died before `receivingBefore`, or background work that failed for good (or vanished). */
export async function findAbandonedBackfills(db: Executor, receivingBefore: string, limit: number, workspaceId?: string) {
  const { rows } = await sql<{ workspace_id: string; backfill_id: string; status: string }>`
    select b.workspace_id, b.backfill_id, b.status from backfills b
    left join jobs j on j.workspace_id = b.workspace_id and j.job_id = b.job_id
    where b.status in ('RECEIVING', 'QUEUED', 'RUNNING') ${workspaceId === undefined ? sql`` : sql`and b.workspace_id = ${workspaceId}`}
      and ((b.status = 'RECEIVING' and b.updated_at < ${receivingBefore}) or (b.status <> 'RECEIVING' and (j.job_id is null or j.state = 'failed')))
    limit ${limit}
  `.execute(db);
  return rows;
}
