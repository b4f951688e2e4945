import type { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { requestContext, type ServiceDeps } from '../../context.js';
import { principalOf } from '../../http/auth.js';
import { ApiError, personalDataRequired } from '../../http/errors.js';
import { errorResponse } from '../../http/schemas.js';
import { CreateImportQuery, CsvBody, Import, ImportAccepted, ImportIdParams } from './schemas.js';
import * as service from './service.js';

const tags = ['Imports'];

export const importsRoutes: FastifyPluginAsyncTypebox<{ deps: ServiceDeps }> = async (app, { deps }) => {
  // The CSV body is handed to the route unread, so the file streams to storage instead of being
  // buffered whole (Fastify's body limit applies to parsers that read; the route counts bytes itself).
  const csvBodies = new WeakMap<FastifyRequest, Readable>();
  app.addContentTypeParser('text/csv', (request, payload, done) => {
    csvBodies.set(request, payload);
    done(null);
  });

  app.post(
    '/imports',
    {
      // No Idempotency-Key: the CSV streams to storage unread by the hooks, so it cannot be
      // fingerprinted (src/http/idempotency/plugin.ts); the header is refused rather than ignored.
      config: { right: 'imports:write', idempotency: false },
      bodyLimit: deps.config.importMaxBytes,
      schema: {
        operationId: 'createImport',
        summary: 'Import people from a CSV file',
        description:
          'Stores the file, then imports it in the background: poll `GET /imports/{importId}`. The file is checked as the upload ' +
          'arrives: its encoding (every byte, a 400 naming the first line that is not UTF-8) and its header (every unknown, unnamed or ' +
          'repeated column in one 400, with the columns allowed); a refused file changes nothing. Data rows are checked by the import: a bad ' +
          'row is reported by its row number while the good rows go in. A row where the file stops being valid CSV (a quote never closed, ' +
          'say) ends the import, FAILED: the rows before it stay imported, the rows after it are not read, and the report says so. ' +
          `Rows are committed in batches of ${service.IMPORT_BATCH_ROWS} (500 on the embedded store, whose one connection other requests wait for): a crash or restart resumes after the last committed row. ` +
          'A token without the personal-data right may not import (403): rows upsert by email, so each would answer whether its email is in the panel.',
        tags,
        querystring: CreateImportQuery,
        body: { content: { 'text/csv': { schema: CsvBody } } },
        response: {
          202: Type.Ref(ImportAccepted),
          400: errorResponse(
            'The header: unknown, unnamed or repeated columns, or no `email` column (one error each, `path` `["header", column]`), or no header ' +
              'row, or a header that is not valid CSV. The file: bytes that are not UTF-8 (or UTF-16 after its byte-order mark), or a spreadsheet ' +
              'workbook (.xlsx, .xls) rather than CSV. Or an invalid query parameter.',
          ),
          404: errorResponse('The population `populationId` does not exist.'),
          413: errorResponse('The file is larger than the instance\'s limit (IMPORT_MAX_BYTES, 256 MiB unless configured); the message names it.'),
          415: errorResponse('The request body is not `text/csv`.'),
        },
      },
    },
    async (request, reply) => {
      // Rows upsert by email and claim unique values: each row's outcome would say whether someone holds them.
      if (!principalOf(request).canReadPersonalData) throw personalDataRequired('Importing people');
      const body = csvBodies.get(request);
      if (!body) {
        throw new ApiError('UNSUPPORTED_MEDIA_TYPE', [{ message: `Unsupported content type ${request.headers['content-type'] ?? ''}; send text/csv`.trim(), path: [] }]);
      }
      const length = Number(request.headers['content-length']);
      const maxBytes = deps.config.importMaxBytes;
      if (Number.isFinite(length) && length > maxBytes) throw service.tooLarge(maxBytes);
      // Uploads received at once, per workspace and per process (issue 32), shared with backfills.
      const workspaceId = requestContext(deps, request).workspaceId;
      const giveBack = deps.uploads.take(workspaceId);
      if (!giveBack) {
        reply.header('Retry-After', 10);
        // The body is not read: the connection closes after the answer instead of draining it.
        reply.header('Connection', 'close');
        throw new ApiError('TOO_MANY_REQUESTS');
      }
      try {
        // Background work: on the embedded store the chunks' inserts wait behind interactive
        // statements, and are small enough to hold its one connection a few ms each.
        const context = { ...requestContext(deps, request), db: deps.backgroundDb(workspaceId) };
        const chunkBytes = deps.storeKind === 'embedded' ? service.EMBEDDED_IMPORT_CHUNK_BYTES : service.IMPORT_CHUNK_BYTES;
        return reply.code(202).send(await service.receiveImport(context, body, request.query.populationId, maxBytes, chunkBytes));
      } finally {
        giveBack();
      }
    },
  );

  app.get(
    '/imports/:importId',
    {
      config: { right: 'people:read' },
      schema: {
        operationId: 'getImport',
        summary: 'Read an import',
        description:
          'Progress and outcome of a CSV import: the rows read, imported and refused, each refused row by its number (the header is row 1), ' +
          'the first 1000 of them listed, and, once FAILED, why it stopped.',
        tags,
        params: ImportIdParams,
        response: { 200: Type.Ref(Import), 404: errorResponse('The import does not exist.') },
      },
    },
    async (request) => service.getImport(requestContext(deps, request), request.params.importId),
  );
};
