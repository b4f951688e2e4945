import type { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { requestContext, type ServiceDeps } from '../../context.js';
import { ApiError } from '../../http/errors.js';
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
      bodyLimit: service.IMPORT_BYTES_MAX,
      schema: {
        operationId: 'createImport',
        summary: 'Import people from a CSV file',
        description:
          'Stores the file, then imports it in the background: poll `GET /imports/{importId}`. The header is checked as the upload ' +
          'starts (an unknown column is a 400 naming it); bad data rows are reported by row number in the import while the good ' +
          `rows go in. Rows are committed in batches of ${service.IMPORT_BATCH_ROWS}: a crash or restart resumes after the last committed row.`,
        tags,
        querystring: CreateImportQuery,
        body: { content: { 'text/csv': { schema: CsvBody } } },
        response: {
          202: Type.Ref(ImportAccepted),
          400: errorResponse('An unknown, repeated or missing (`email`) column, an empty file, or an invalid query parameter.'),
          404: errorResponse('The population `populationId` does not exist.'),
          413: errorResponse('The file is larger than 2 GiB.'),
          415: errorResponse('The request body is not `text/csv`.'),
        },
      },
    },
    async (request, reply) => {
      const body = csvBodies.get(request);
      if (!body) {
        throw new ApiError('UNSUPPORTED_MEDIA_TYPE', [{ message: `Unsupported content type ${request.headers['content-type'] ?? ''}; send text/csv`.trim(), path: [] }]);
      }
      const length = Number(request.headers['content-length']);
      if (Number.isFinite(length) && length > service.IMPORT_BYTES_MAX) throw new ApiError('PAYLOAD_TOO_LARGE', [{ message: 'The CSV file is larger than 2 GiB', path: [] }]);
      return reply.code(202).send(await service.receiveImport(requestContext(deps, request), body, request.query.populationId));
    },
  );

  app.get(
    '/imports/:importId',
    {
      config: { right: 'people:read' },
      schema: {
        operationId: 'getImport',
        summary: 'Read an import',
        description: 'Progress and outcome of a CSV import, with the first 1000 refused rows.',
        tags,
        params: ImportIdParams,
        response: { 200: Type.Ref(Import), 404: errorResponse('The import does not exist.') },
      },
    },
    async (request) => service.getImport(requestContext(deps, request), request.params.importId),
  );
};
