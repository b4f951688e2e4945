import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { requestContext, type ServiceDeps } from '../../context.js';
import { ApiError } from '../../http/errors.js';
import { maskingNote, personalLookupNote } from '../../http/masking.js';
import { ErrorBody, errorResponse } from '../../http/schemas.js';

import * as service from '../people/service.js';

const tags = ['Person'];
const Email = Type.String({ format: 'email', maxLength: 320, examples: ['grace@example.org'] });
const personNotFound = errorResponse('No person with this email (path ["email"]).');
const EmailAndOptedOut = Type.Object({ email: Type.String(), optedOut: Type.Boolean() }, { examples: [{ email: 'grace@example.org', optedOut: true }] });

/** E2's own answer for an empty `emails`: a message object, not the validation body. */
export const emptyEmailsMessage = 'emails field cannot be empty';

/** The deprecated Person operations (E2, E15, E23), kept working on top of the People family. */
export const personRoutes: FastifyPluginAsyncTypebox<{ deps: ServiceDeps }> = async (app, { deps }) => {
  const context = (request: FastifyRequest) => requestContext(deps, request);

  app.post(
    '/person/delete',
    {
      config: { right: 'people:delete' },
      schema: {
        operationId: 'deletePersonsByEmail',
        'x-reference-id': 'E2',
        deprecated: true,
        summary: 'Delete people by email (deprecated)',
        description:
          'Deprecated: use POST /people/delete or DELETE /people/{personId}. Deletes the people with these emails (case-insensitive): ' +
          'they disappear at once from every read, and their personal data is erased at once (as DELETE /people/{personId} does). ' +
          '`personsDeletedCount` counts the people deleted by this request, so it needs the personal-data right (403 otherwise). An empty `emails` is a 400 with `{"message":"emails field cannot be empty"}`.',
        tags,
        body: Type.Object(
          { emails: Type.Array(Type.String({ maxLength: 320 }), { maxItems: 1000, description: 'Email addresses, at least one.' }) },
          { additionalProperties: false, examples: [{ emails: ['grace@example.org'] }] },
        ),
        response: {
          200: Type.Object({ personsDeletedCount: Type.Integer() }, { examples: [{ personsDeletedCount: 1 }] }),
          400: {
            description: 'An empty `emails` (a message object), or another invalid input (the validation body).',
            anyOf: [
              Type.Object({ message: Type.String() }, { examples: [{ message: emptyEmailsMessage }] }),
              Type.Ref(ErrorBody),
            ],
          },
        },
      },
    },
    async (request) => {
      if (request.body.emails.length === 0) throw new ApiError('BAD_REQUEST_MESSAGE', [], emptyEmailsMessage);
      return service.deletePeople(context(request), { emails: request.body.emails });
    },
  );

  app.get(
    '/person',
    {
      config: { right: 'people:read' },
      schema: {
        operationId: 'getPersonByEmail',
        'x-reference-id': 'E15',
        deprecated: true,
        summary: 'Get a person by email (deprecated)',
        description: `Deprecated: use GET /people/{personIdOrEmail}/opted-out. The person's email and opted-out flag, looked up case-insensitively. ${personalLookupNote} ${maskingNote}`,
        tags,
        querystring: Type.Object({ email: Email }, { additionalProperties: false }),
        response: { 200: EmailAndOptedOut, 404: personNotFound },
      },
    },
    async (request) => service.getOptedOutByEmail(context(request), request.query.email),
  );

  app.post(
    '/person',
    {
      config: { right: 'people:write' },
      schema: {
        operationId: 'setPersonOptedOutByEmail',
        'x-reference-id': 'E23',
        deprecated: true,
        summary: "Update a person's opted-out status (deprecated)",
        description:
          'Deprecated: use PUT /people/{personId}/opted-out. Sets the opted-out flag of the person with this email, and with it the contact status ' +
          `(OPTED_OUT, or CONTACTABLE when opting back in). ${personalLookupNote} ${maskingNote}`,
        tags,
        body: Type.Object({ email: Email, optedOut: Type.Boolean() }, { additionalProperties: false, examples: [{ email: 'grace@example.org', optedOut: true }] }),
        response: { 200: EmailAndOptedOut, 404: personNotFound },
      },
    },
    async (request) => {
      const status = await service.setOptedOutByEmail(context(request), request.body.email, request.body.optedOut);
      return { email: status.email, optedOut: status.isOptedOut };
    },
  );
};
