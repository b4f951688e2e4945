import type { Insertable, Kysely } from 'kysely';
import type { DB, PopulationsTable } from '../../db/schema.js';

type Executor = Kysely<DB>;

const populationColumns = ['population_id as populationId', 'name', 'description'] as const;

export async function insertPopulation(db: Executor, population: Insertable<PopulationsTable>) {
  await db.insertInto('populations').values(population).execute();
}

export async function findPopulation(db: Executor, workspaceId: string, populationId: string) {
  return db
    .selectFrom('populations')
    .where('workspace_id', '=', workspaceId)
    .where('population_id', '=', populationId)
    .select(populationColumns)
    .executeTakeFirst();
}

/** Which of `populationIds` exist in the workspace. */
export async function findPopulationIds(db: Executor, workspaceId: string, populationIds: readonly string[]): Promise<Set<string>> {
  if (populationIds.length === 0) return new Set();
  const rows = await db
    .selectFrom('populations')
    .where('workspace_id', '=', workspaceId)
    .where('population_id', 'in', populationIds)
    .select('population_id')
    .execute();
  return new Set(rows.map((row) => row.population_id));
}

/** A page of populations in the order they were made, after the keyset `afterPopulationId`; plus the exact total. */
export async function listPopulations(db: Executor, workspaceId: string, afterPopulationId: string | undefined, size: number) {
  const base = db.selectFrom('populations').where('workspace_id', '=', workspaceId);
  const [rows, count] = await Promise.all([
    base
      .$if(afterPopulationId !== undefined, (query) => query.where('population_id', '>', afterPopulationId!))
      .select(populationColumns)
      .orderBy('population_id')
      .limit(size + 1)
      .execute(),
    base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.total) };
}
