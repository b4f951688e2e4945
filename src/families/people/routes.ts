import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { requestContext, type ServiceDeps } from '../../context.js';
import { maskingNote, personalLookupNote } from '../../http/masking.js';
import { errorResponse } from '../../http/schemas.js';
import { CreatePersonBody, DeletePeopleBody, OptedOutBody, OptedOutStatus, PeopleDeleted, PersonIdOrEmailParams, PersonIdParams, UpdatePersonBody } from './requests.js';
import { Person } from './schemas.js';
import * as service from './service.js';

const tags = ['People'];
const personNotFound = errorResponse("Person not found (also for a deleted person, or another workspace's).");
const invalid = errorResponse('Invalid input; `path` names the offending field or parameter.');

export const peopleRoutes: FastifyPluginAsyncTypebox<{ deps: ServiceDeps }> = async (app, { deps }) => {
  const context = (request: FastifyRequest) => requestContext(deps, request);

  app.post(
    '/people',
    {
      config: { right: 'people:write' },
      schema: {
        operationId: 'createPerson',
        summary: 'Create a person',
        description: `Adds a person to the panel, CONTACTABLE and not opted out, in the populations given. A token without the personal-data right may not create people (403): the 409 of a taken email would say who is in the panel. ${maskingNote}`,
        tags,
        body: CreatePersonBody,
        response: {
          201: Type.Ref(Person),
          400: invalid,
          404: errorResponse('A population (path ["populationIds", index]) or property (path ["properties", propertyId]) does not exist.'),
          409: errorResponse('Another person has this email (path ["email"]) or this value of a unique property (path ["properties", propertyId]).'),
        },
      },
    },
    async (request, reply) => reply.code(201).send(await service.createPerson(context(request), request.body)),
  );

  app.get(
    '/people/:personId',
    {
      config: { right: 'people:read' },
      schema: {
        operationId: 'getPerson',
        summary: 'Get a person',
        description: `A person of the panel. Deleted people are not found. ${maskingNote} Values of properties flagged isPII or isPHI are masked the same way ("***").`,
        tags,
        params: PersonIdParams,
        response: { 200: Type.Ref(Person), 404: personNotFound },
      },
    },
    async (request) => service.getPerson(context(request), request.params.personId),
  );

  app.patch(
    '/people/:personId',
    {
      config: { right: 'people:write' },
      schema: {
        operationId: 'updatePerson',
        summary: 'Update a person',
        description:
          'Only the fields given change. `properties` merges key by key into the stored values (null removes one); ' +
          '`populationIds` replaces the memberships; null clears firstName, lastName or phone. ' +
          'Opted-out status has its own operation (PUT /people/{personId}/opted-out). A token without the personal-data right may change names, phones and ' +
          'other values blind (the answer is masked), but not the email nor a value of a unique property flagged isPII or isPHI (403): the 409 of a taken value would say who holds it.',
        tags,
        params: PersonIdParams,
        body: UpdatePersonBody,
        response: {
          200: Type.Ref(Person),
          400: invalid,
          404: errorResponse('The person (path ["personId"]), a population (["populationIds", index]) or a property (["properties", propertyId]) does not exist.'),
          409: errorResponse('Another person has this email (path ["email"]) or this value of a unique property (path ["properties", propertyId]).'),
        },
      },
    },
    async (request) => service.updatePerson(context(request), request.params.personId, request.body),
  );

  app.delete(
    '/people/:personId',
    {
      config: { right: 'people:delete' },
      schema: {
        operationId: 'deletePerson',
        summary: 'Delete a person',
        description:
          'The person disappears at once from every read, search, count and export; their email and unique values are free again. ' +
          "Their personal data is erased at once, in the same transaction, every copy of it (their messages' address and bodies, notes on their participations, " +
          'consents, memberships, kept idempotent answers); an anonymous row stays so history that refers to it stays whole, and background work vacuums the ' +
          'old row versions within the hour. Answers `{"personsDeletedCount":1}`.',
        tags,
        params: PersonIdParams,
        response: { 200: PeopleDeleted, 404: personNotFound },
      },
    },
    async (request) => service.deletePerson(context(request), request.params.personId),
  );

  app.post(
    '/people/delete',
    {
      config: { right: 'people:delete' },
      schema: {
        operationId: 'deletePeople',
        summary: 'Delete people by email and/or id',
        description:
          'Deletes every person matching one of `emails` (case-insensitive) or `personIds` (at most 1000 of each), as DELETE /people/{personId} does. ' +
          'Unknown or already deleted entries are not errors; they are simply not counted. Supersedes POST /person/delete. ' +
          'Deleting by `emails` needs the personal-data right (403 otherwise): the count would say whether each email was in the panel.',
        tags,
        body: DeletePeopleBody,
        response: { 200: PeopleDeleted, 400: invalid },
      },
    },
    async (request) => service.deletePeople(context(request), request.body),
  );

  app.put(
    '/people/:personIdOrEmail/opted-out',
    {
      config: { right: 'people:write' },
      schema: {
        operationId: 'setPersonOptedOut',
        summary: "Set a person's opted-out status",
        description:
          'Opting out sets the contact status to OPTED_OUT and keeps the person out of studies; opting back in makes them CONTACTABLE. ' +
          'Setting the status the person already has changes nothing. `personIdOrEmail` is the person id or, as in GET, an email address. ' +
          `Answers the shape of GET /people/{personIdOrEmail}/opted-out. Supersedes POST /person. ${personalLookupNote} ${maskingNote}`,
        tags,
        params: PersonIdOrEmailParams,
        body: OptedOutBody,
        response: { 200: OptedOutStatus, 404: errorResponse('No person with this id or email (path ["personIdOrEmail"]).') },
      },
    },
    async (request) => service.setOptedOut(context(request), request.params.personIdOrEmail, request.body.isOptedOut),
  );

  app.get(
    '/people/:personIdOrEmail/opted-out',
    {
      config: { right: 'people:read' },
      schema: {
        operationId: 'getPersonOptedOut',
        'x-reference-id': 'E18',
        summary: 'Opted-out status by id or email',
        description: `\`personIdOrEmail\` is a person id, or an email address (a value that is a valid email is looked up as one, case-insensitively). ${personalLookupNote} ${maskingNote}`,
        tags,
        params: PersonIdOrEmailParams,
        response: { 200: OptedOutStatus, 404: errorResponse('No person with this id or email (path ["personIdOrEmail"]).') },
      },
    },
    async (request) => service.getOptedOut(context(request), request.params.personIdOrEmail),
  );
};
