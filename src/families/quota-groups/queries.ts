import { type Insertable, type Kysely, type RawBuilder, type Selectable, type SqlBool, sql } from 'kysely';
import type { DB, QuotaGroupsTable } from '../../db/schema.js';

export type QuotaGroupRow = Selectable<QuotaGroupsTable>;

/** A study's groups in their order of evaluation. */
export async function listGroups(db: Kysely<DB>, workspaceId: string, studyId: string, options: { forUpdate?: boolean } = {}): Promise<QuotaGroupRow[]> {
  let query = db.selectFrom('quota_groups').selectAll().where('workspace_id', '=', workspaceId).where('study_id', '=', studyId).orderBy('position').orderBy('quota_group_id');
  if (options.forUpdate) query = query.forUpdate();
  return query.execute();
}

export async function insertGroups(db: Kysely<DB>, rows: Insertable<QuotaGroupsTable>[]): Promise<void> {
  if (rows.length === 0) return;
  await db.insertInto('quota_groups').values(rows).execute();
}

export async function updateGroup(
  db: Kysely<DB>,
  workspaceId: string,
  quotaGroupId: string,
  changes: Pick<Insertable<QuotaGroupsTable>, 'name' | 'position' | 'cap' | 'answers' | 'filter' | 'uses_personal_data' | 'updated_at'>,
): Promise<void> {
  await db.updateTable('quota_groups').set(changes).where('workspace_id', '=', workspaceId).where('quota_group_id', '=', quotaGroupId).execute();
}

export async function deleteGroups(db: Kysely<DB>, workspaceId: string, quotaGroupIds: string[]): Promise<void> {
  if (quotaGroupIds.length === 0) return;
  await db.deleteFrom('quota_groups').where('workspace_id', '=', workspaceId).where('quota_group_id', 'in', quotaGroupIds).execute();
}

/**
 * Takes one place in the group when it has one: a single conditional update, so the database
 * decides. Concurrent takers of the last place queue on the row's lock; each re-reads `filled`
 * once the one before it commits (or rolls back, which gives the place back) and only one of
 * them finds it below the cap. The group's name when a place was taken, else undefined.
 */
export async function takePlace(db: Kysely<DB>, workspaceId: string, quotaGroupId: string, at: string): Promise<string | undefined> {
  const row = await db
    .updateTable('quota_groups')
    .set((eb) => ({ filled: eb('filled', '+', 1), updated_at: at }))
    .where('workspace_id', '=', workspaceId)
    .where('quota_group_id', '=', quotaGroupId)
    .whereRef('filled', '<', 'cap')
    .returning('name')
    .executeTakeFirst();
  return row?.name;
}

/**
 * Which of the conditions (each over `people as p`) the person matches, in one statement: the
 * filter language compiled as the people search compiles it, evaluated for one row.
 */
export async function personMatches(db: Kysely<DB>, workspaceId: string, personId: string, conditions: RawBuilder<SqlBool>[]): Promise<boolean[]> {
  if (conditions.length === 0) return [];
  const columns = sql.join(conditions.map((condition, index) => sql`coalesce((${condition}), false) as ${sql.ref(`m${index}`)}`));
  const result = await sql<Record<string, boolean>>`
    select ${columns} from people as p where p.workspace_id = ${workspaceId} and p.person_id = ${personId} and p.deleted_at is null
  `.execute(db);
  const row = result.rows[0];
  return conditions.map((_, index) => row?.[`m${index}`] === true);
}
