import { idPrefixes, newId } from '../../ids.js';
import * as queries from './queries.js';
import type { CreatePopulationBody } from './schemas.js';
import type { CallContext as SharedCallContext } from '../../context.js';

export type CallContext = Pick<SharedCallContext, 'db' | 'clock' | 'workspaceId'>;

export async function createPopulation(context: CallContext, body: CreatePopulationBody) {
  const population = { populationId: newId(idPrefixes.population), name: body.name, description: body.description ?? '' };
  await queries.insertPopulation(context.db, {
    workspace_id: context.workspaceId,
    population_id: population.populationId,
    name: population.name,
    description: population.description,
    created_at: context.clock.now().toISOString(),
  });
  return population;
}

export async function listPopulations(context: CallContext, afterPopulationId: string | undefined, size: number) {
  const { rows, total } = await queries.listPopulations(context.db, context.workspaceId, afterPopulationId, size);
  return { rows: rows.slice(0, size), hasNextPage: rows.length > size, total };
}
