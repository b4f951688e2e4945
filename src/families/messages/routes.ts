import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { requestContext, type ServiceDeps } from '../../context.js';
import { maskingNote } from '../../http/masking.js';
import { cursorScope, listPage } from '../../http/pagination.js';
import { errorResponse, ListQuery } from '../../http/schemas.js';
import {
  CreateMessageTemplateBody,
  MessagePreview,
  MessageTemplate,
  MessageTemplateList,
  PreviewBody,
  TemplateParams,
  UpdateMessageTemplateBody,
  templateLanguageDescription,
} from './schemas.js';
import * as service from './service.js';

const tags = ['Messages'];
const invalid = errorResponse('Invalid input; `path` names the offending field or parameter.');
const invalidTemplate = errorResponse(
  'Invalid input; `path` names the offending field or parameter. A template field with a syntax error or an unknown variable is refused with its name as the path (`["textBody"]`) and a message naming the variable.',
);
const templateNotFound = errorResponse("Message template not found (also another workspace's).");

export const messagesRoutes: FastifyPluginAsyncTypebox<{ deps: ServiceDeps }> = async (app, { deps }) => {
  const context = (request: FastifyRequest) => requestContext(deps, request);

  app.post(
    '/message-templates',
    {
      config: { right: 'messages:write' },
      schema: {
        operationId: 'createMessageTemplate',
        summary: 'Create a message template',
        description: `A subject, a text body and (optionally) an HTML body, parsed and checked when saved.\n\n${templateLanguageDescription}`,
        tags,
        body: CreateMessageTemplateBody,
        response: { 201: Type.Ref(MessageTemplate), 400: invalidTemplate },
      },
    },
    async (request, reply) => reply.code(201).send(await service.createTemplate(context(request), request.body)),
  );

  app.get(
    '/message-templates',
    {
      config: { right: 'messages:read' },
      schema: {
        operationId: 'listMessageTemplates',
        summary: 'List message templates',
        description: 'Templates of the workspace in the order they were made, keyset-paged: pass `pageInfo.endCursor` as `startCursor`.',
        tags,
        querystring: ListQuery,
        response: { 200: MessageTemplateList, 400: invalid },
      },
    },
    async (request) =>
      listPage(deps.cursors, cursorScope(context(request).workspaceId, 'message-templates'), request.query, (template) => template.templateId, (after, size) =>
        service.listTemplates(context(request), after, size),
      ),
  );

  app.get(
    '/message-templates/:templateId',
    {
      config: { right: 'messages:read' },
      schema: {
        operationId: 'getMessageTemplate',
        summary: 'Read a message template',
        tags,
        params: TemplateParams,
        response: { 200: Type.Ref(MessageTemplate), 400: invalid, 404: templateNotFound },
      },
    },
    async (request) => service.getTemplate(context(request), request.params.templateId),
  );

  app.patch(
    '/message-templates/:templateId',
    {
      config: { right: 'messages:write' },
      schema: {
        operationId: 'updateMessageTemplate',
        summary: 'Update a message template',
        description: 'Only the fields given change, each template field checked as on create; `htmlBody: null` removes the HTML body.',
        tags,
        params: TemplateParams,
        body: UpdateMessageTemplateBody,
        response: { 200: Type.Ref(MessageTemplate), 400: invalidTemplate, 404: templateNotFound },
      },
    },
    async (request) => service.updateTemplate(context(request), request.params.templateId, request.body),
  );

  app.delete(
    '/message-templates/:templateId',
    {
      config: { right: 'messages:write' },
      schema: {
        operationId: 'deleteMessageTemplate',
        summary: 'Delete a message template',
        tags,
        params: TemplateParams,
        response: { 200: Type.Object({ templateId: Type.String() }, { examples: [{ templateId: 'mtp_01JD0000000000000000000000' }] }), 400: invalid, 404: templateNotFound },
      },
    },
    async (request) => {
      await service.deleteTemplate(context(request), request.params.templateId);
      return { templateId: request.params.templateId };
    },
  );

  app.post(
    '/message-templates/:templateId/preview',
    {
      config: { right: 'messages:read' },
      schema: {
        operationId: 'previewMessageTemplate',
        summary: 'Preview a message template for one person',
        description:
          'Renders the subject, text body and HTML body for a person of the workspace and, when given, a study: what a message would say, but sends nothing. ' +
          `The links are placeholders (listed in \`placeholders\`): real ones, signed per person, are made when a message is sent. ${maskingNote}`,
        tags,
        params: TemplateParams,
        body: PreviewBody,
        response: {
          200: MessagePreview,
          400: errorResponse('Invalid input; `path` names the offending field or parameter. Or: the template could not be rendered (a limit of time or size reached; `path` names the field).'),
          404: errorResponse("Message template, person or study not found (also another workspace's, and a deleted person); `path` says which."),
        },
      },
    },
    async (request) => service.previewTemplate(context(request), request.params.templateId, request.body),
  );
};
