import { type Expression, type Insertable, type Kysely, sql } from 'kysely';
import { jsonArrayFrom } from 'kysely/helpers/postgres';
import type { DB, PersonPropertiesTable, PropertyOptionsTable, PropertyScopeType } from '../../db/schema.js';

type Executor = Kysely<DB>;

/**
 * Serializes the changes that must see every property of the workspace (name uniqueness, the
 * unique-property limit, the default group) across concurrent requests and instances. NO KEY
 * UPDATE leaves the foreign-key checks of inserts elsewhere in the workspace unblocked.
 */
export async function lockPropertyCatalogue(db: Executor, workspaceId: string) {
  await db.selectFrom('workspaces').where('workspace_id', '=', workspaceId).select('workspace_id').forNoKeyUpdate().execute();
}

/**
 * The database's case-folding of each text, in order: the same `lower()` that the unique
 * indexes use, so a check in code can never disagree with the index (JavaScript folds some
 * letters differently).
 */
export async function foldCase(db: Executor, texts: readonly string[]): Promise<string[]> {
  if (texts.length === 0) return [];
  const { rows } = await sql<{ folded: string }>`
    select lower(t) as folded from unnest(cast(${[...texts]} as text[])) with ordinality as u(t, n) order by n
  `.execute(db);
  return rows.map((row) => row.folded);
}

/** Which of the case-folded names are taken by a property of the workspace. */
export async function findTakenNames(db: Executor, workspaceId: string, foldedNames: readonly string[]): Promise<Set<string>> {
  if (foldedNames.length === 0) return new Set();
  const rows = await db
    .selectFrom('person_properties')
    .where('workspace_id', '=', workspaceId)
    .where(sql<string>`lower(name)`, 'in', foldedNames)
    .select(sql<string>`lower(name)`.as('folded'))
    .execute();
  return new Set(rows.map((row) => row.folded));
}

export async function countUniqueProperties(db: Executor, workspaceId: string): Promise<number> {
  const row = await db
    .selectFrom('person_properties')
    .where('workspace_id', '=', workspaceId)
    .where('is_unique', '=', true)
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

export async function insertProperties(db: Executor, properties: Insertable<PersonPropertiesTable>[]) {
  if (properties.length === 0) return;
  await db.insertInto('person_properties').values(properties).execute();
}

export async function insertOptions(db: Executor, options: Insertable<PropertyOptionsTable>[]) {
  if (options.length === 0) return;
  await db.insertInto('property_options').values(options).execute();
}

function optionsOf(db: Executor, workspaceId: Expression<string>, propertyId: Expression<string>) {
  return jsonArrayFrom(
    db
      .selectFrom('property_options as o')
      .whereRef('o.workspace_id', '=', workspaceId)
      .whereRef('o.property_id', '=', propertyId)
      .select(['o.option_id as propertyOptionId', 'o.name', 'o.color', 'o.position'])
      .orderBy('o.position'),
  );
}

function selectProperties(db: Executor, workspaceId: string) {
  return db
    .selectFrom('person_properties as p')
    .where('p.workspace_id', '=', workspaceId)
    .select((eb) => [
      'p.property_id as propertyId',
      'p.name',
      'p.property_type as propertyType',
      'p.is_unique as isUnique',
      'p.is_phi as isPHI',
      'p.is_pii as isPII',
      'p.description',
      'p.property_group_id as propertyGroupId',
      'p.editable_by_person as editableByPerson',
      optionsOf(db, eb.ref('p.workspace_id'), eb.ref('p.property_id')).as('options'),
    ]);
}

export type PropertyRecord = Awaited<ReturnType<typeof findProperties>>[number];

/** The properties with these ids, with their options, in id order. */
export async function findProperties(db: Executor, workspaceId: string, propertyIds: readonly string[]) {
  if (propertyIds.length === 0) return [];
  return selectProperties(db, workspaceId).where('p.property_id', 'in', propertyIds).orderBy('p.property_id').execute();
}

/**
 * A page of properties (of one group, or all) in the order they were made, after the keyset
 * `afterPropertyId`; plus the exact total.
 */
export async function listProperties(db: Executor, workspaceId: string, propertyGroupId: string | undefined, afterPropertyId: string | undefined, size: number) {
  const [rows, count] = await Promise.all([
    selectProperties(db, workspaceId)
      .$if(propertyGroupId !== undefined, (query) => query.where('p.property_group_id', '=', propertyGroupId!))
      .$if(afterPropertyId !== undefined, (query) => query.where('p.property_id', '>', afterPropertyId!))
      .orderBy('p.property_id')
      .limit(size + 1)
      .execute(),
    db
      .selectFrom('person_properties')
      .where('workspace_id', '=', workspaceId)
      .$if(propertyGroupId !== undefined, (query) => query.where('property_group_id', '=', propertyGroupId!))
      .select((eb) => eb.fn.countAll<number>().as('total'))
      .executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.total) };
}

/** Deletes the properties (their options go with them) and says which existed. */
export async function deleteProperties(db: Executor, workspaceId: string, propertyIds: readonly string[]): Promise<Set<string>> {
  if (propertyIds.length === 0) return new Set();
  const rows = await db
    .deleteFrom('person_properties')
    .where('workspace_id', '=', workspaceId)
    .where('property_id', 'in', propertyIds)
    .returning('property_id')
    .execute();
  return new Set(rows.map((row) => row.property_id));
}

/** Locks the properties that exist among `propertyIds` (against a concurrent delete) and says which they are. */
export async function lockProperties(db: Executor, workspaceId: string, propertyIds: readonly string[]): Promise<Set<string>> {
  if (propertyIds.length === 0) return new Set();
  const rows = await db
    .selectFrom('person_properties')
    .where('workspace_id', '=', workspaceId)
    .where('property_id', 'in', propertyIds)
    .select('property_id')
    .orderBy('property_id')
    .forUpdate()
    .execute();
  return new Set(rows.map((row) => row.property_id));
}

export async function moveProperties(db: Executor, workspaceId: string, propertyIds: readonly string[], propertyGroupId: string, updatedAt: string) {
  if (propertyIds.length === 0) return;
  await db
    .updateTable('person_properties')
    .set({ property_group_id: propertyGroupId, updated_at: updatedAt })
    .where('workspace_id', '=', workspaceId)
    .where('property_id', 'in', propertyIds)
    .execute();
}

/** Which of `propertyGroupIds` exist in the workspace. */
export async function findGroupIds(db: Executor, workspaceId: string, propertyGroupIds: readonly string[]): Promise<Set<string>> {
  if (propertyGroupIds.length === 0) return new Set();
  const rows = await db
    .selectFrom('property_groups')
    .where('workspace_id', '=', workspaceId)
    .where('property_group_id', 'in', propertyGroupIds)
    .select('property_group_id')
    .execute();
  return new Set(rows.map((row) => row.property_group_id));
}

export async function findDefaultGroupId(db: Executor, workspaceId: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('property_groups')
    .where('workspace_id', '=', workspaceId)
    .where('is_default', '=', true)
    .select('property_group_id')
    .executeTakeFirst();
  return row?.property_group_id;
}

export async function insertGroup(
  db: Executor,
  group: { workspaceId: string; propertyGroupId: string; name: string; scopeType: PropertyScopeType; isDefault: boolean; createdAt: string; populationIds: readonly string[] },
) {
  await db
    .insertInto('property_groups')
    .values({
      workspace_id: group.workspaceId,
      property_group_id: group.propertyGroupId,
      name: group.name,
      scope_type: group.scopeType,
      is_default: group.isDefault,
      created_at: group.createdAt,
    })
    .execute();
  if (group.populationIds.length === 0) return;
  await db
    .insertInto('property_group_populations')
    .values(group.populationIds.map((populationId) => ({ workspace_id: group.workspaceId, property_group_id: group.propertyGroupId, population_id: populationId })))
    .execute();
}

/** Groups with their population and property ids: all of them, one, or those that apply to a population. */
export async function findGroups(db: Executor, workspaceId: string, filter: { propertyGroupId?: string; populationId?: string }) {
  return db
    .selectFrom('property_groups as g')
    .where('g.workspace_id', '=', workspaceId)
    .$if(filter.propertyGroupId !== undefined, (query) => query.where('g.property_group_id', '=', filter.propertyGroupId!))
    .$if(filter.populationId !== undefined, (query) =>
      query.where((eb) =>
        eb.or([
          eb('g.scope_type', '=', 'ALL'),
          eb.exists(
            eb
              .selectFrom('property_group_populations as gp')
              .whereRef('gp.workspace_id', '=', 'g.workspace_id')
              .whereRef('gp.property_group_id', '=', 'g.property_group_id')
              .where('gp.population_id', '=', filter.populationId!)
              .select(sql<number>`1`.as('found')),
          ),
        ]),
      ),
    )
    .select((eb) => [
      'g.property_group_id as propertyGroupId',
      'g.name',
      'g.scope_type as scopeType',
      'g.is_default as isDefault',
      jsonArrayFrom(
        eb
          .selectFrom('property_group_populations as gp')
          .whereRef('gp.workspace_id', '=', 'g.workspace_id')
          .whereRef('gp.property_group_id', '=', 'g.property_group_id')
          .select('gp.population_id as id')
          .orderBy('gp.population_id'),
      ).as('populations'),
      jsonArrayFrom(
        eb
          .selectFrom('person_properties as p')
          .whereRef('p.workspace_id', '=', 'g.workspace_id')
          .whereRef('p.property_group_id', '=', 'g.property_group_id')
          .select('p.property_id as id')
          .orderBy('p.property_id'),
      ).as('properties'),
    ])
    .orderBy('g.property_group_id')
    .execute();
}

export type GroupRecord = Awaited<ReturnType<typeof findGroups>>[number];

/** Changes a property's own fields; answers whether it exists. */
export async function updateProperty(db: Executor, workspaceId: string, propertyId: string, changes: { editable_by_person?: boolean; description?: string }, updatedAt: string): Promise<boolean> {
  const row = await db
    .updateTable('person_properties')
    .set({ ...changes, updated_at: updatedAt })
    .where('workspace_id', '=', workspaceId)
    .where('property_id', '=', propertyId)
    .returning('property_id')
    .executeTakeFirst();
  return row !== undefined;
}

/** The properties the person may edit on their page, with their options, in the order they were made. */
export async function findEditableByPerson(db: Executor, workspaceId: string) {
  return selectProperties(db, workspaceId).where('p.editable_by_person', '=', true).orderBy('p.property_id').execute();
}

/** Every property's id, name and type (what the person's data download names their values with). */
export async function findPropertyNames(db: Executor, workspaceId: string) {
  return db.selectFrom('person_properties').where('workspace_id', '=', workspaceId).select(['property_id', 'name', 'property_type']).orderBy('property_id').execute();
}
