import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { requestContext, type ServiceDeps } from '../../context.js';
import { errorResponse } from '../../http/schemas.js';
import { eventsDescription, EventsQuery, ParticipantStatusEventPage, StudyStatusEventPage } from './schemas.js';
import * as service from './service.js';

const invalid = errorResponse('Invalid input (a size out of 1–100, or a startCursor that is not one of this query: another stream, another studyId, or altered).');
const studyNotFound = errorResponse('The studyId filter names no study of the workspace (path ["studyId"]).');

export const eventsRoutes: FastifyPluginAsyncTypebox<{ deps: ServiceDeps }> = async (app, { deps }) => {
  app.get(
    '/participant-status-events',
    {
      config: { right: 'events:read' },
      schema: {
        operationId: 'pollParticipantStatusEvents',
        summary: 'Poll participant status events',
        description: `Every change of a participant's status, approval status or screener state, in the whole workspace or one study. ${eventsDescription}`,
        tags: ['Participant Status Events'],
        querystring: EventsQuery,
        response: { 200: ParticipantStatusEventPage, 400: invalid, 404: studyNotFound },
      },
    },
    async (request) => service.pollParticipantEvents(requestContext(deps, request), deps.cursors, request.query),
  );

  app.get(
    '/study-status-events',
    {
      config: { right: 'events:read' },
      schema: {
        operationId: 'pollStudyStatusEvents',
        summary: 'Poll study status events',
        description: `Every change of a study's status (its creation as DRAFT, launch, pause, close), in the whole workspace or one study. ${eventsDescription}`,
        tags: ['Study Status Events'],
        querystring: EventsQuery,
        response: { 200: StudyStatusEventPage, 400: invalid, 404: studyNotFound },
      },
    },
    async (request) => service.pollStudyEvents(requestContext(deps, request), deps.cursors, request.query),
  );
};
