import type { Insertable, Kysely, Selectable, Updateable } from 'kysely';
import type { DB, SegmentsTable } from '../../db/schema.js';

type Executor = Kysely<DB>;

const columns = ['segment_id', 'name', 'description', 'filter', 'uses_personal_data', 'created_at', 'updated_at'] as const;

export type SegmentRow = Pick<Selectable<SegmentsTable>, 'segment_id' | 'name' | 'description' | 'filter' | 'uses_personal_data' | 'created_at' | 'updated_at'>;

export async function insertSegment(db: Executor, segment: Insertable<SegmentsTable>): Promise<SegmentRow> {
  return db.insertInto('segments').values(segment).returning(columns).executeTakeFirstOrThrow();
}

export async function findSegment(db: Executor, workspaceId: string, segmentId: string, options: { forUpdate?: boolean } = {}): Promise<SegmentRow | undefined> {
  return db
    .selectFrom('segments')
    .where('workspace_id', '=', workspaceId)
    .where('segment_id', '=', segmentId)
    .select(columns)
    .$if(options.forUpdate === true, (query) => query.forUpdate())
    .executeTakeFirst();
}

export async function updateSegment(db: Executor, workspaceId: string, segmentId: string, changes: Updateable<SegmentsTable>): Promise<SegmentRow> {
  return db.updateTable('segments').set(changes).where('workspace_id', '=', workspaceId).where('segment_id', '=', segmentId).returning(columns).executeTakeFirstOrThrow();
}

export async function deleteSegment(db: Executor, workspaceId: string, segmentId: string): Promise<boolean> {
  const result = await db.deleteFrom('segments').where('workspace_id', '=', workspaceId).where('segment_id', '=', segmentId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** A page of segments in the order they were made, after the keyset `afterSegmentId`; plus the exact total. */
export async function listSegments(db: Executor, workspaceId: string, afterSegmentId: string | undefined, size: number) {
  const base = db.selectFrom('segments').where('workspace_id', '=', workspaceId);
  const [rows, count] = await Promise.all([
    base
      .$if(afterSegmentId !== undefined, (query) => query.where('segment_id', '>', afterSegmentId!))
      .select(columns)
      .orderBy('segment_id')
      .limit(size + 1)
      .execute(),
    base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.total) };
}
