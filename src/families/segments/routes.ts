import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { requestContext, type ServiceDeps } from '../../context.js';
import { cursorScope, listPage } from '../../http/pagination.js';
import { errorResponse, ListQuery } from '../../http/schemas.js';
import { CreateSegmentBody, Segment, SegmentList, SegmentParams, UpdateSegmentBody } from './schemas.js';
import * as service from './service.js';

const tags = ['Segments'];
const invalid = errorResponse('Invalid input; `path` names the offending field, e.g. ["filter","filters","0","comparison"].');
const segmentNotFound = errorResponse("Segment not found (also another workspace's).");
const filterRules =
  'The filter is checked as POST /people/search checks one, with the caller\'s rights (filtering on personal data needs the personal-data right): PERSON names and custom properties; ' +
  'no `sort` (a segment is a set) and no SEGMENT_MEMBERSHIP (a segment is not defined by segments). Unknown population or study ids named in it are a 404. ' +
  'Relative comparisons (IN_LAST_DAYS, the _L90 counts) are evaluated when a search uses the segment. A segment whose filter names a property deleted since matches nobody.';

export const segmentsRoutes: FastifyPluginAsyncTypebox<{ deps: ServiceDeps }> = async (app, { deps }) => {
  const context = (request: FastifyRequest) => requestContext(deps, request);

  app.post(
    '/segments',
    {
      config: { right: 'people:write' },
      schema: {
        operationId: 'createSegment',
        summary: 'Create a segment',
        description: `Saves a people filter under a name. Its members are whoever matches it at the time of a search: filter on them with PERSON.SEGMENT_MEMBERSHIP. ${filterRules}`,
        tags,
        body: CreateSegmentBody,
        response: { 201: Type.Ref(Segment), 400: invalid, 404: errorResponse('A population or study named in the filter does not exist; `path` names the value.') },
      },
    },
    async (request, reply) => reply.code(201).send(await service.createSegment(context(request), request.body)),
  );

  app.get(
    '/segments',
    {
      config: { right: 'people:read' },
      schema: {
        operationId: 'listSegments',
        summary: 'List segments',
        description: 'Segments of the workspace in the order they were made, keyset-paged: pass `pageInfo.endCursor` as `startCursor`.',
        tags,
        querystring: ListQuery,
        response: { 200: SegmentList, 400: invalid },
      },
    },
    async (request) => {
      return listPage(deps.cursors, cursorScope(context(request).workspaceId, 'segments'), request.query, (segment) => segment.segmentId, (after, size) => service.listSegments(context(request), after, size));
    },
  );

  app.get(
    '/segments/:segmentId',
    {
      config: { right: 'people:read' },
      schema: { operationId: 'getSegment', summary: 'Get a segment', tags, params: SegmentParams, response: { 200: Type.Ref(Segment), 404: segmentNotFound } },
    },
    async (request) => service.getSegment(context(request), request.params.segmentId),
  );

  app.patch(
    '/segments/:segmentId',
    {
      config: { right: 'people:write' },
      schema: {
        operationId: 'updateSegment',
        summary: 'Update a segment',
        description: `Only the fields given change; a new filter replaces the old one. ${filterRules}`,
        tags,
        params: SegmentParams,
        body: UpdateSegmentBody,
        response: { 200: Type.Ref(Segment), 400: invalid, 404: errorResponse('The segment (path ["segmentId"]), or a population or study named in the filter, does not exist.') },
      },
    },
    async (request) => service.updateSegment(context(request), request.params.segmentId, request.body),
  );

  app.delete(
    '/segments/:segmentId',
    {
      config: { right: 'people:write' },
      schema: {
        operationId: 'deleteSegment',
        summary: 'Delete a segment',
        description: 'A filter that names the deleted segment in SEGMENT_MEMBERSHIP is then a 404, as for any unknown segment.',
        tags,
        params: SegmentParams,
        response: { 200: Type.Object({ segmentId: Type.String() }, { examples: [{ segmentId: 'seg_01JD0000000000000000000000' }] }), 404: segmentNotFound },
      },
    },
    async (request) => service.deleteSegment(context(request), request.params.segmentId),
  );
};
