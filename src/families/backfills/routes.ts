import type { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { requestContext, type ServiceDeps } from '../../context.js';
import { principalOf } from '../../http/auth.js';
import { ApiError, personalDataRequired } from '../../http/errors.js';
import { cursorScope, listPage } from '../../http/pagination.js';
import { errorResponse, ListQuery } from '../../http/schemas.js';
import { Backfill, BackfillAccepted, BackfillCsvBody, BackfillErrorList, BackfillIdParams, BackfillList } from './schemas.js';
import * as service from './service.js';

const tags = ['Backfills'];
const notFound = errorResponse('The backfill does not exist (or is another workspace\'s).');

export const backfillsRoutes: FastifyPluginAsyncTypebox<{ deps: ServiceDeps }> = async (app, { deps }) => {
  // The CSV body is handed to the route unread and streams to storage (as POST /imports does).
  const csvBodies = new WeakMap<FastifyRequest, Readable>();
  app.addContentTypeParser('text/csv', (request, payload, done) => {
    csvBodies.set(request, payload);
    done(null);
  });

  app.post(
    '/backfills',
    {
      config: { right: 'backfills:write', idempotency: false },
      bodyLimit: deps.config.importMaxBytes,
      schema: {
        operationId: 'createBackfill',
        summary: "Bring a panel's history from a CSV file (restricted access)",
        description:
          'SUPER_ADMIN only. Stores the file, then writes it in the background: poll `GET /backfills/{backfillId}`. Each row is one participation ' +
          '(a person in a past study) with its status, dates and incentive paid; it is written as the same studies, participants, status events and ' +
          'incentives the service writes itself, marked backfilled, so every derived name and search count reads the history as if it had happened ' +
          'here. A row whose person already takes part in the study is skipped: the same file twice changes nothing. The header is checked as the ' +
          'upload arrives (every unknown, unnamed or repeated column, or a missing required one, in one 400); a bad data row is reported by its row ' +
          `number and column while the good rows go in, in batches of ${service.BACKFILL_BATCH_ROWS}. No webhooks are sent for history. ` +
          'A token without the personal-data right may not backfill (403): rows match people by email. Uploads share the people import\'s slots: ' +
          'a 429 with `Retry-After` while the workspace is already sending a file (IMPORT_UPLOADS_PER_WORKSPACE) or the instance receives as many as it takes (IMPORT_UPLOADS_PER_PROCESS).',
        tags,
        body: { content: { 'text/csv': { schema: BackfillCsvBody } } },
        response: {
          202: Type.Ref(BackfillAccepted),
          400: errorResponse('The header (`path` `["header", column]`), or a file that is not UTF-8 CSV text.'),
          413: errorResponse("The file is larger than the instance's limit (IMPORT_MAX_BYTES)."),
          415: errorResponse('The request body is not `text/csv`.'),
        },
      },
    },
    async (request, reply) => {
      if (!principalOf(request).canReadPersonalData) throw personalDataRequired('Backfilling history');
      const body = csvBodies.get(request);
      if (!body) {
        throw new ApiError('UNSUPPORTED_MEDIA_TYPE', [{ message: `Unsupported content type ${request.headers['content-type'] ?? ''}; send text/csv`.trim(), path: [] }]);
      }
      const maxBytes = deps.config.importMaxBytes;
      const length = Number(request.headers['content-length']);
      if (Number.isFinite(length) && length > maxBytes) throw service.tooLarge(maxBytes);
      const workspaceId = requestContext(deps, request).workspaceId;
      // The same slots as people imports: uploads received at once, per workspace and per process.
      const giveBack = deps.uploads.take(workspaceId);
      if (!giveBack) {
        reply.header('Retry-After', 10);
        // The body is not read: the connection closes after the answer instead of draining it.
        reply.header('Connection', 'close');
        throw new ApiError('TOO_MANY_REQUESTS');
      }
      try {
        const context = { ...requestContext(deps, request), db: deps.backgroundDb(workspaceId) };
        const chunkBytes = deps.storeKind === 'embedded' ? service.EMBEDDED_BACKFILL_CHUNK_BYTES : service.BACKFILL_CHUNK_BYTES;
        return reply.code(202).send(await service.receiveBackfill(context, body, maxBytes, chunkBytes));
      } finally {
        giveBack();
      }
    },
  );

  app.get(
    '/backfills',
    {
      config: { right: 'backfills:write' },
      schema: {
        operationId: 'listBackfills',
        summary: 'List backfills (restricted access)',
        description: "The workspace's backfills, newest first, keyset-paged: pass `pageInfo.endCursor` as `startCursor`.",
        tags,
        querystring: ListQuery,
        response: { 200: BackfillList, 400: errorResponse('Invalid input (a size out of 1–100, or a startCursor not of this list); `path` names the parameter.') },
      },
    },
    async (request) => {
      const context = requestContext(deps, request);
      return listPage(deps.cursors, cursorScope(context.workspaceId, 'backfills'), request.query, (backfill) => backfill.backfillId, (after, size) =>
        service.listBackfills(context, after, size),
      );
    },
  );

  app.get(
    '/backfills/:backfillId',
    {
      config: { right: 'backfills:write' },
      schema: {
        operationId: 'getBackfill',
        summary: 'Read a backfill (restricted access)',
        description: 'Progress and outcome: rows read, written, skipped (already there) and refused, studies made and incentives recorded.',
        tags,
        params: BackfillIdParams,
        response: { 200: Type.Ref(Backfill), 404: notFound },
      },
    },
    async (request) => service.getBackfill(requestContext(deps, request), request.params.backfillId),
  );

  app.get(
    '/backfills/:backfillId/errors',
    {
      config: { right: 'backfills:write' },
      schema: {
        operationId: 'listBackfillErrors',
        summary: "A backfill's refused rows (restricted access)",
        description: 'Each refused row by its number (the header is row 1) and column, with what is allowed, in row order, keyset-paged; the first 10,000 are kept.',
        tags,
        params: BackfillIdParams,
        querystring: ListQuery,
        response: { 200: BackfillErrorList, 400: errorResponse('Invalid input; `path` names the parameter.'), 404: notFound },
      },
    },
    async (request) => {
      const context = requestContext(deps, request);
      const scope = cursorScope(context.workspaceId, `backfill-errors:${request.params.backfillId}`);
      return listPage(deps.cursors, scope, request.query, (error) => String(error.row), (after, size) => service.listBackfillErrors(context, request.params.backfillId, after, size));
    },
  );
};
