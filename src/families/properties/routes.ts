import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { requestContext, type ServiceDeps } from '../../context.js';
import { cursorScope, listPage } from '../../http/pagination.js';
import { errorResponse, ListQuery } from '../../http/schemas.js';
import {
  CreatePropertyGroupBody,
  DeletePropertiesBody,
  DeletePropertiesResult,
  DeletePropertyResult,
  PersonProperty,
  ImportBody,
  ImportResult,
  PropertyGroup,
  PropertyGroupList,
  PropertyGroupParams,
  PropertyGroupsQuery,
  PropertyList,
  PropertyParams,
  UpdatePropertyBody,
} from './schemas.js';
import * as service from './service.js';

const propertyTags = ['Person Properties'];
const groupTags = ['Property Groups'];
const invalid = errorResponse('Invalid input; `path` names the offending field or parameter.');

export const propertiesRoutes: FastifyPluginAsyncTypebox<{ deps: ServiceDeps }> = async (app, { deps }) => {
  const context = (request: FastifyRequest) => requestContext(deps, request);

  app.post(
    '/properties/import',
    {
      config: { right: 'properties:write' },
      schema: {
        operationId: 'importPersonProperties',
        'x-reference-id': 'E4',
        summary: 'Create multiple person properties',
        description:
          'Creates up to 10 properties. Items are taken in order, each checked against the workspace as the earlier items left it; ' +
          'an item that breaks a rule is reported in `errors` (one entry per rule, `path` starting with its index, `name` its name) and not created, ' +
          'while the others are created together. Rules: the name is not taken in the workspace or by an earlier item (case-insensitively); ' +
          'propertyOptions (non-empty) only on SINGLE_SELECT and MULTI_SELECT, with distinct names (case-insensitively); isUnique only on STRING, ' +
          'NUMBER and DATETIME, and at most 10 unique properties per workspace; propertyGroupId names a group of the workspace. ' +
          "Without propertyGroupId a property goes to the workspace's default group (scope ALL, named General), made the first time it is needed. " +
          'Option colors default to the palette in turn; `order` is the position from "0".',
        tags: propertyTags,
        body: ImportBody,
        response: { 200: ImportResult, 400: invalid },
      },
    },
    async (request) => service.importProperties(context(request), request.body),
  );

  app.get(
    '/properties',
    {
      config: { right: 'properties:read' },
      schema: {
        operationId: 'listPersonProperties',
        'x-reference-id': 'E10',
        summary: 'List all person properties',
        description: 'Properties of the workspace with their options, in the order they were made, keyset-paged: pass `pageInfo.endCursor` as `startCursor`.',
        tags: propertyTags,
        querystring: ListQuery,
        response: { 200: PropertyList, 400: invalid },
      },
    },
    async (request) => {
      return listPage(deps.cursors, cursorScope(context(request).workspaceId, 'properties'), request.query, (property) => property.propertyId, (after, size) => service.listProperties(context(request), undefined, after, size));
    },
  );

  app.delete(
    '/properties/:propertyId',
    {
      config: { right: 'properties:write' },
      schema: {
        operationId: 'deletePersonProperty',
        'x-reference-id': 'E20',
        summary: 'Delete a person property',
        description: 'Deletes the property with its options.',
        tags: propertyTags,
        params: PropertyParams,
        response: { 200: DeletePropertyResult, 404: errorResponse("Property not found (also for another workspace's property).") },
      },
    },
    async (request) => service.deleteProperty(context(request), request.params.propertyId),
  );

  app.patch(
    '/properties/:propertyId',
    {
      config: { right: 'properties:write' },
      schema: {
        operationId: 'updatePersonProperty',
        summary: 'Update a person property',
        description:
          'Changes the fields given: `editableByPerson` (the person may change their own value on their page, GET /me, through the same checks as PATCH /people/{personId}) ' +
          'and `description`. The name, type, options and uniqueness are not changed here.',
        tags: propertyTags,
        params: PropertyParams,
        body: UpdatePropertyBody,
        response: { 200: Type.Ref(PersonProperty), 400: invalid, 404: errorResponse("Property not found (also for another workspace's property).") },
      },
    },
    async (request) => service.updateProperty(context(request), request.params.propertyId, request.body),
  );

  app.post(
    '/properties/delete',
    {
      config: { right: 'properties:write' },
      schema: {
        operationId: 'deletePersonProperties',
        'x-reference-id': 'E8',
        summary: 'Delete person properties in bulk',
        description: 'Deletes the properties that exist, with their options; each id that does not is an item of `errors` (`path` `["propertyIds", index]`).',
        tags: propertyTags,
        body: DeletePropertiesBody,
        response: { 200: DeletePropertiesResult, 400: invalid },
      },
    },
    async (request) => service.deleteProperties(context(request), request.body.propertyIds),
  );

  app.get(
    '/property-groups',
    {
      config: { right: 'properties:read' },
      schema: {
        operationId: 'listPropertyGroups',
        'x-reference-id': 'E11',
        summary: 'List property groups',
        description:
          'Every property group of the workspace, in the order they were made (not paged). With `populationId`, only the groups that apply to ' +
          'that population: scope ALL, and SPECIFIC groups that name it.',
        tags: groupTags,
        querystring: PropertyGroupsQuery,
        response: { 200: PropertyGroupList, 400: invalid, 404: errorResponse('The population named by `populationId` does not exist.') },
      },
    },
    async (request) => service.listGroups(context(request), request.query.populationId),
  );

  app.post(
    '/property-groups',
    {
      config: { right: 'properties:write' },
      schema: {
        operationId: 'createPropertyGroup',
        summary: 'Create a property group',
        description:
          'A SPECIFIC group needs at least one population; an ALL group takes none (400 otherwise). A property is in one group only: ' +
          'the properties named move into the new group.',
        tags: groupTags,
        body: CreatePropertyGroupBody,
        response: {
          201: Type.Ref(PropertyGroup),
          400: invalid,
          404: errorResponse('A population or property named in the body does not exist; `path` names it.'),
        },
      },
    },
    async (request, reply) => reply.code(201).send(await service.createGroup(context(request), request.body)),
  );

  app.get(
    '/property-groups/:propertyGroupId/properties',
    {
      config: { right: 'properties:read' },
      schema: {
        operationId: 'listPropertyGroupProperties',
        'x-reference-id': 'E9',
        summary: 'Properties of a property group',
        description: "The group's properties with their options, in the order they were made, keyset-paged.",
        tags: groupTags,
        params: PropertyGroupParams,
        querystring: ListQuery,
        response: { 200: PropertyList, 400: invalid, 404: errorResponse("Property group not found (also for another workspace's group).") },
      },
    },
    async (request) => {
      const { propertyGroupId } = request.params;
      return listPage(deps.cursors, cursorScope(context(request).workspaceId, `property-groups:${propertyGroupId}:properties`), request.query, (property) => property.propertyId, (after, size) => service.listGroupProperties(context(request), propertyGroupId, after, size));
    },
  );
};
