import { type Insertable, type Kysely, type Selectable, sql, type Updateable } from 'kysely';
import type { DB, PeopleTable } from '../../db/schema.js';

type Executor = Kysely<DB>;

export type PersonRow = Selectable<PeopleTable>;

/** Every read starts here: a deleted person is invisible at once, to every query. */
export function livePeople(db: Executor, workspaceId: string) {
  return db.selectFrom('people').where('people.workspace_id', '=', workspaceId).where('people.deleted_at', 'is', null);
}

export async function findPersonById(db: Executor, workspaceId: string, personId: string, options: { forUpdate?: boolean } = {}) {
  return livePeople(db, workspaceId)
    .where('person_id', '=', personId)
    .selectAll()
    .$if(options.forUpdate === true, (query) => query.forUpdate())
    .executeTakeFirst();
}

/** The live person with this email (case-insensitive, as the unique index compares). */
export async function findPersonByEmail(db: Executor, workspaceId: string, email: string, options: { forUpdate?: boolean } = {}) {
  return livePeople(db, workspaceId)
    .where(sql<string>`email_key`, '=', sql<string>`lower(${email})`)
    .selectAll()
    .$if(options.forUpdate === true, (query) => query.forUpdate())
    .executeTakeFirst();
}

/** Which of these person ids are live people of the workspace. */
export async function findLivePersonIds(db: Executor, workspaceId: string, personIds: readonly string[]): Promise<Set<string>> {
  if (personIds.length === 0) return new Set();
  const rows = await livePeople(db, workspaceId).where('person_id', 'in', personIds).select('person_id').execute();
  return new Set(rows.map((row) => row.person_id));
}

/** The population ids of many people in one query, each list in id order. */
export async function findPopulationIdsOf(db: Executor, workspaceId: string, personIds: readonly string[]): Promise<Map<string, string[]>> {
  const byPerson = new Map<string, string[]>();
  if (personIds.length === 0) return byPerson;
  const rows = await db
    .selectFrom('population_members')
    .where('workspace_id', '=', workspaceId)
    // One array parameter, not one per id: a 1000-row page's ids were 1,000 parameters to bind and plan.
    .where('person_id', '=', sql<string>`any(cast(${personIds} as text[]))`)
    .select(['person_id', 'population_id'])
    .orderBy('person_id')
    .orderBy('population_id')
    .execute();
  for (const row of rows) {
    const list = byPerson.get(row.person_id);
    if (list) list.push(row.population_id);
    else byPerson.set(row.person_id, [row.population_id]);
  }
  return byPerson;
}

export async function insertPerson(db: Executor, person: Insertable<PeopleTable>) {
  return db.insertInto('people').values(person).returningAll().executeTakeFirstOrThrow();
}

export async function updatePerson(db: Executor, workspaceId: string, personId: string, changes: Updateable<PeopleTable>) {
  return db
    .updateTable('people')
    .set(changes)
    .where('workspace_id', '=', workspaceId)
    .where('person_id', '=', personId)
    .where('deleted_at', 'is', null)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Adds memberships; existing ones stay as they were. */
export async function addMembers(db: Executor, workspaceId: string, populationId: string, personIds: readonly string[], addedAt: string) {
  if (personIds.length === 0) return;
  await db
    .insertInto('population_members')
    .values(personIds.map((personId) => ({ workspace_id: workspaceId, population_id: populationId, person_id: personId, added_at: addedAt })))
    .onConflict((oc) => oc.doNothing())
    .execute();
}

export async function addMemberships(db: Executor, workspaceId: string, personId: string, populationIds: readonly string[], addedAt: string) {
  if (populationIds.length === 0) return;
  await db
    .insertInto('population_members')
    .values(populationIds.map((populationId) => ({ workspace_id: workspaceId, population_id: populationId, person_id: personId, added_at: addedAt })))
    .onConflict((oc) => oc.doNothing())
    .execute();
}

/** Makes the person's memberships exactly `populationIds`. */
export async function replaceMemberships(db: Executor, workspaceId: string, personId: string, populationIds: readonly string[], addedAt: string) {
  await db
    .deleteFrom('population_members')
    .where('workspace_id', '=', workspaceId)
    .where('person_id', '=', personId)
    .$if(populationIds.length > 0, (query) => query.where('population_id', 'not in', populationIds))
    .execute();
  await addMemberships(db, workspaceId, personId, populationIds, addedAt);
}

/**
 * Soft-deletes the live people matched by id or by email (case-insensitive) and returns their
 * ids. Their memberships stay until the purge; every read filters on deleted_at.
 */
export async function softDeletePeople(db: Executor, workspaceId: string, match: { personIds?: readonly string[]; emails?: readonly string[] }, deletedAt: string) {
  const personIds = match.personIds ?? [];
  const emails = match.emails ?? [];
  if (personIds.length === 0 && emails.length === 0) return [];
  const rows = await db
    .updateTable('people')
    .set({ deleted_at: deletedAt, updated_at: deletedAt })
    .where('workspace_id', '=', workspaceId)
    .where('deleted_at', 'is', null)
    .where((eb) =>
      eb.or([
        ...(personIds.length > 0 ? [eb('person_id', 'in', personIds)] : []),
        ...(emails.length > 0 ? [eb(sql<string>`email_key`, 'in', emails.map((email) => sql<string>`lower(${email})`))] : []),
      ]),
    )
    .returning('person_id')
    .execute();
  return rows.map((row) => row.person_id);
}

/** Removes a deleted property's value from every person of the workspace, in one statement. */
export async function removePropertyValues(db: Executor, workspaceId: string, propertyIds: readonly string[]) {
  if (propertyIds.length === 0) return;
  await db
    .updateTable('people')
    .set({ properties: sql`properties - cast(${[...propertyIds]} as text[])` })
    .where('workspace_id', '=', workspaceId)
    .where(sql<boolean>`properties ?| cast(${[...propertyIds]} as text[])`)
    .execute();
}
