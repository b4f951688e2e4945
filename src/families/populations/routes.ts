import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { requestContext, type ServiceDeps } from '../../context.js';
import { cursorScope, listPage } from '../../http/pagination.js';
import { errorResponse, ListQuery } from '../../http/schemas.js';
import { CreatePopulationBody, Population, PopulationList } from './schemas.js';
import * as service from './service.js';
import { addPopulationMembers } from '../people/service.js';

const tags = ['Populations'];
const invalid = errorResponse('Invalid input; `path` names the offending field or parameter.');

export const populationsRoutes: FastifyPluginAsyncTypebox<{ deps: ServiceDeps }> = async (app, { deps }) => {
  const context = (request: FastifyRequest) => requestContext(deps, request);

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
      return listPage(deps.cursors, cursorScope(context(request).workspaceId, 'populations'), request.query, (population) => population.populationId, (after, size) => service.listPopulations(context(request), after, size));
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

  app.post(
    '/populations/:populationId/members',
    {
      config: { right: 'populations:write' },
      schema: {
        operationId: 'addPopulationMembers',
        summary: 'Add people to a population',
        description:
          'Each person of `personIds` (at most 1000) joins the population; one already a member stays one (the call is idempotent). ' +
          'An unknown or deleted person is an error item naming its index (`["personIds", "3"]`); the others are added. ' +
          '`added` lists the ids that are members now, each once, in the order given.',
        tags,
        params: Type.Object({ populationId: Type.String({ minLength: 1, maxLength: 100 }) }),
        body: Type.Object(
          { personIds: Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { minItems: 1, maxItems: 1000 }) },
          { additionalProperties: false, examples: [{ personIds: ['per_01JD0000000000000000000000'] }] },
        ),
        response: {
          200: Type.Object(
            {
              added: Type.Array(Type.String()),
              errors: Type.Array(Type.Object({ message: Type.String(), path: Type.Array(Type.String()) })),
            },
            { examples: [{ added: ['per_01JD0000000000000000000000'], errors: [{ message: 'Person not found', path: ['personIds', '1'] }] }] },
          ),
          400: invalid,
          404: errorResponse("Population not found (also another workspace's)."),
        },
      },
    },
    async (request) => addPopulationMembers(requestContext(deps, request), request.params.populationId, request.body.personIds),
  );
};
