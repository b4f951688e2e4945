import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { requestContext, type ServiceDeps } from '../../context.js';
import { cursorScope, listPage } from '../../http/pagination.js';
import { errorResponse, ListQuery } from '../../http/schemas.js';
import { logoMaxBytes } from './images.js';
import { BrandingConfig, BrandingConfigList, brandingConfigIdNote, BrandingConfigParams, CreateBrandingConfigBody, UpdateBrandingConfigBody } from './schemas.js';
import * as service from './service.js';

const tags = ['Branding configs'];
const invalidContent = errorResponse(
  'Invalid input; `path` names the offending field: a display name out of 1–100 characters; an `accentColor` that is not `#rrggbb` or that cannot keep 4.5:1 contrast with the pages\' white background and its white text (the message gives the ratio and what is allowed); ' +
    `a \`logo.contentType\` other than image/png, image/jpeg or image/webp (SVG is refused); \`logo.data\` that is not base64, larger than ${logoMaxBytes / 1024} KiB, not an image of the type named (checked by its magic bytes), or larger than 4096 pixels on a side.`,
);
const configNotFound = errorResponse("Branding config not found (also another workspace's); path [\"brandingConfigId\"].");

export const brandingRoutes: FastifyPluginAsyncTypebox<{ deps: ServiceDeps }> = async (app, { deps }) => {
  const context = (request: FastifyRequest) => requestContext(deps, request);

  app.post(
    '/branding-configs',
    {
      config: { right: 'branding:write' },
      schema: {
        operationId: 'createBrandingConfig',
        summary: 'Create a branding config',
        description:
          "Creates a look for the participant pages: the name they show instead of the workspace's, an accent colour checked for contrast, and a logo sent as base64 inside the JSON. " +
          `A study wears it when its \`studyPlan.brandingConfigId\` names it. ${brandingConfigIdNote}`,
        tags,
        body: CreateBrandingConfigBody,
        response: { 201: Type.Ref(BrandingConfig), 400: invalidContent },
      },
    },
    async (request, reply) => reply.code(201).send(await service.createConfig(context(request), request.body)),
  );

  app.get(
    '/branding-configs',
    {
      config: { right: 'branding:read' },
      schema: {
        operationId: 'listBrandingConfigs',
        summary: 'List branding configs',
        description: "The workspace's branding configs in the order they were made, keyset-paged: pass `pageInfo.endCursor` as `startCursor`.",
        tags,
        querystring: ListQuery,
        response: { 200: BrandingConfigList, 400: errorResponse('Invalid input (a size out of 1–100, or a startCursor not of this list); `path` names the parameter.') },
      },
    },
    async (request) =>
      listPage(deps.cursors, cursorScope(context(request).workspaceId, 'branding-configs'), request.query, (config) => config.brandingConfigId, (after, size) =>
        service.listConfigs(context(request), after, size),
      ),
  );

  app.get(
    '/branding-configs/:brandingConfigId',
    {
      config: { right: 'branding:read' },
      schema: {
        operationId: 'getBrandingConfig',
        summary: 'Read a branding config',
        description: "The config, its logo described (type, size, dimensions, hash) with the path the pages serve it at; the logo's bytes are not in the answer.",
        tags,
        params: BrandingConfigParams,
        response: { 200: Type.Ref(BrandingConfig), 400: errorResponse('Invalid input; `path` names the parameter.'), 404: configNotFound },
      },
    },
    async (request) => service.getConfig(context(request), request.params.brandingConfigId),
  );

  app.patch(
    '/branding-configs/:brandingConfigId',
    {
      config: { right: 'branding:write' },
      schema: {
        operationId: 'updateBrandingConfig',
        summary: 'Update a branding config',
        description:
          'Only the fields given change; null removes an accent colour, the logo or its text. A new logo gets a new path (the path is its hash), so pages already in a browser keep the old one until reloaded. ' +
          'The studies that name the config wear the change at their next page.',
        tags,
        params: BrandingConfigParams,
        body: UpdateBrandingConfigBody,
        response: { 200: Type.Ref(BrandingConfig), 400: invalidContent, 404: configNotFound },
      },
    },
    async (request) => service.updateConfig(context(request), request.params.brandingConfigId, request.body),
  );

  app.delete(
    '/branding-configs/:brandingConfigId',
    {
      config: { right: 'branding:write' },
      schema: {
        operationId: 'deleteBrandingConfig',
        summary: 'Delete a branding config',
        description:
          "Studies that name it keep their `brandingConfigId` as written (it is free text) and their pages fall back to the workspace's defaults; its logo's path then answers 404 unless another config holds the same image.",
        tags,
        params: BrandingConfigParams,
        response: { 200: Type.Object({ brandingConfigId: Type.String() }, { examples: [{ brandingConfigId: 'brc_01JD0000000000000000000000' }] }), 404: configNotFound },
      },
    },
    async (request) => service.deleteConfig(context(request), request.params.brandingConfigId),
  );
};
