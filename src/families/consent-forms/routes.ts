import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { requestContext, type ServiceDeps } from '../../context.js';
import { cursorScope, listPage } from '../../http/pagination.js';
import { errorResponse, ListQuery } from '../../http/schemas.js';
import {
  consentFormIdNote,
  ConsentForm,
  ConsentFormList,
  ConsentFormParams,
  ConsentFormVersion,
  ConsentFormVersionParams,
  contentHashDescription,
  CreateConsentFormBody,
  PublishVersionBody,
  versionsMax,
} from './schemas.js';
import * as service from './service.js';

const tags = ['Consent forms'];
const invalidContent = errorResponse(
  'Invalid input; `path` names the offending field: a title, body or statement out of its limits, a language that is not a short code, more than 20 statements or choices, ' +
    'or an id used twice among a version\'s statements and choices (the path names the second: `["optionalChoices","0","id"]`).',
);
const formNotFound = errorResponse("Consent form not found (also another workspace's).");

export const consentFormsRoutes: FastifyPluginAsyncTypebox<{ deps: ServiceDeps }> = async (app, { deps }) => {
  const context = (request: FastifyRequest) => requestContext(deps, request);

  app.post(
    '/consent-forms',
    {
      config: { right: 'consent-forms:write' },
      schema: {
        operationId: 'createConsentForm',
        summary: 'Create a consent form',
        description:
          'Creates a consent form with its first version (version 1): a title, a Markdown body, the statements a person must tick and the choices they may, and the language. ' +
          `The answer carries the body rendered to safe HTML (\`bodyHtml\`) and the content's hash. ${consentFormIdNote}`,
        tags,
        body: CreateConsentFormBody,
        response: { 201: Type.Ref(ConsentForm), 400: invalidContent },
      },
    },
    async (request, reply) => reply.code(201).send(await service.createForm(context(request), request.body)),
  );

  app.get(
    '/consent-forms',
    {
      config: { right: 'consent-forms:read' },
      schema: {
        operationId: 'listConsentForms',
        summary: 'List consent forms',
        description: "The workspace's consent forms in the order they were made, each with its current version's summary, keyset-paged: pass `pageInfo.endCursor` as `startCursor`.",
        tags,
        querystring: ListQuery,
        response: { 200: ConsentFormList, 400: errorResponse('Invalid input (a size out of 1–100, or a startCursor not of this list); `path` names the parameter.') },
      },
    },
    async (request) =>
      listPage(deps.cursors, cursorScope(context(request).workspaceId, 'consent-forms'), request.query, (form) => form.consentFormId, (after, size) =>
        service.listForms(context(request), after, size),
      ),
  );

  app.get(
    '/consent-forms/:consentFormId',
    {
      config: { right: 'consent-forms:read' },
      schema: {
        operationId: 'getConsentForm',
        summary: 'Read a consent form',
        description: 'The form with its current version whole (text and `bodyHtml`) and the summary of every version, newest first.',
        tags,
        params: ConsentFormParams,
        response: { 200: Type.Ref(ConsentForm), 400: errorResponse('Invalid input; `path` names the parameter.'), 404: formNotFound },
      },
    },
    async (request) => service.getForm(context(request), request.params.consentFormId),
  );

  app.post(
    '/consent-forms/:consentFormId/versions',
    {
      config: { right: 'consent-forms:write' },
      schema: {
        operationId: 'publishConsentFormVersion',
        summary: 'Publish a new version of a consent form',
        description:
          'Publishes the next version (numbered on from the last) with the content given whole, and makes it the current one: the one the consent page asks people to sign from then on. ' +
          'Published versions never change (there is no route to change one, and the database refuses it), so a consent that names a version and its `contentSha256` names exactly what was shown. ' +
          `Concurrent publishes of one form each get their own number. A form keeps at most ${versionsMax} versions.\n\n${contentHashDescription}`,
        tags,
        params: ConsentFormParams,
        body: PublishVersionBody,
        response: {
          201: Type.Ref(ConsentFormVersion),
          400: invalidContent,
          404: formNotFound,
          409: errorResponse(`The form already has ${versionsMax} versions: create a new form (path ["consentFormId"]).`),
        },
      },
    },
    async (request, reply) => reply.code(201).send(await service.publishVersion(context(request), request.params.consentFormId, request.body)),
  );

  app.get(
    '/consent-forms/:consentFormId/versions/:version',
    {
      config: { right: 'consent-forms:read' },
      schema: {
        operationId: 'getConsentFormVersion',
        summary: 'Read a version of a consent form',
        description: 'One version whole, current or not: its text, `bodyHtml` and hash.',
        tags,
        params: ConsentFormVersionParams,
        response: {
          200: Type.Ref(ConsentFormVersion),
          400: errorResponse('Invalid input; `path` names the parameter (a version is a whole number from 1).'),
          404: errorResponse("Consent form not found (also another workspace's; path [\"consentFormId\"]), or it has no such version (path [\"version\"])."),
        },
      },
    },
    async (request) => service.getVersion(context(request), request.params.consentFormId, request.params.version),
  );
};
