import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { ServiceDeps } from '../../context.js';
import { principalOf } from '../../http/auth.js';
import { pageOf, startAfter } from '../../http/pagination.js';
import { errorResponse, ListQuery } from '../../http/schemas.js';
import { CreatePopulationBody, Population, PopulationList } from './schemas.js';
import * as service from './service.js';

const tags = ['Populations'];
const invalid = errorResponse('Invalid input; `path` names the offending field or parameter.');

export const populationsRoutes: FastifyPluginAsyncTypebox<{ deps: ServiceDeps }> = async (app, { deps }) => {
  const context = (request: FastifyRequest): service.CallContext => ({ db: deps.db, clock: deps.clock, workspaceId: principalOf(request).workspaceId });

  app.get(
    '/populations',
    {
      config: { right: 'populations:read' },
      schema: {
        operationId: 'listPopulations',
        'x-reference-id': 'E22',
        summary: 'List populations',
        description: 'Populations of the workspace in the order they were made, keyset-paged: pass `pageInfo.endCursor` as `startCursor`.',
        tags,
        querystring: ListQuery,
        response: { 200: PopulationList, 400: invalid },
      },
    },
    async (request) => {
      const scope = 'populations';
      const after = startAfter(deps.cursors, scope, request.query.startCursor, ['startCursor']);
      const page = await service.listPopulations(context(request), after, request.query.size ?? 25);
      return pageOf(deps.cursors, scope, page.rows, (population) => population.populationId, page.hasNextPage, page.total);
    },
  );

  app.post(
    '/populations',
    {
      config: { right: 'populations:write' },
      schema: {
        operationId: 'createPopulation',
        summary: 'Create a population',
        description: 'Makes an empty population. Names need not be unique; `description` defaults to empty.',
        tags,
        body: CreatePopulationBody,
        response: { 201: Type.Ref(Population), 400: invalid },
      },
    },
    async (request, reply) => reply.code(201).send(await service.createPopulation(context(request), request.body)),
  );
};
