import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { requestContext, type ServiceDeps } from '../../context.js';
import { principalOf } from '../../http/auth.js';
import { forbidden } from '../../http/errors.js';
import { maskingNote } from '../../http/masking.js';
import { errorResponse } from '../../http/schemas.js';
import { AddedParticipants, AddParticipantsBody, MAX_PARTICIPANTS_PER_ADD, ParticipantParams, StudyParams, UpdateParticipantBody } from './requests.js';
import { Participant, UpdatedParticipant } from './schemas.js';
import * as service from './service.js';

const tags = ['Participants'];
const invalid = errorResponse('Invalid input; `path` names the offending field or parameter.');
const notFound = errorResponse(
  "Study not found (path [\"studyId\"]), or Participant not found (path [\"participantId\"]): not a participant of this study, another workspace's, or one whose person was deleted.",
);

export const participantsRoutes: FastifyPluginAsyncTypebox<{ deps: ServiceDeps }> = async (app, { deps }) => {
  const context = (request: FastifyRequest) => requestContext(deps, request);

  app.post(
    '/studies/:studyId/participants',
    {
      config: { right: 'participants:write' },
      schema: {
        operationId: 'addParticipants',
        summary: 'Add people to a study',
        description:
          `Adds each person of \`personIds\` (1–${MAX_PARTICIPANTS_PER_ADD}) to the study as a participant: status NOT_STARTED, approvalStatus PENDING_REVIEW, screenerState NOT_SENT. ` +
          'A person who cannot be added is an error item naming their index (`["personIds", "3"]`) and the others are added: an unknown or deleted person ' +
          "(also another workspace's), an opted-out person, a person who already takes part in the study, and a person listed twice (the later listing). " +
          '`results` lists the participants added, in the order of `personIds`. All of it happens in one transaction; concurrent additions of one person to one study add them once. ' +
          `A CLOSED study takes no new participants (409); a DRAFT, ACTIVE or PAUSED one does. ${maskingNote}`,
        tags,
        params: StudyParams,
        body: AddParticipantsBody,
        response: {
          200: AddedParticipants,
          400: invalid,
          404: errorResponse("Study not found (also another workspace's); path [\"studyId\"]."),
          409: errorResponse('The study is CLOSED; path ["studyId"].'),
        },
      },
    },
    async (request) => service.addParticipants(context(request), request.params.studyId, request.body.personIds),
  );

  app.get(
    '/studies/:studyId/participants/:participantId',
    {
      config: { right: 'participants:read' },
      schema: {
        operationId: 'getParticipant',
        summary: 'Get a participant',
        description: `One participant of the study, with their person's contact details. ${maskingNote}`,
        tags,
        params: ParticipantParams,
        response: { 200: Type.Ref(Participant), 404: notFound },
      },
    },
    async (request) => service.getParticipant(context(request), request.params.studyId, request.params.participantId),
  );

  app.patch(
    '/studies/:studyId/participants/:participantId',
    {
      config: { right: 'participants:write' },
      schema: {
        operationId: 'updateParticipant',
        summary: 'Update a participant',
        description:
          'Only the fields given change; giving a field the value it has changes nothing. ' +
          'Each real change of `status`, `approvalStatus` or `screenerState` is recorded as a participant status event (one per field), in the same transaction. ' +
          'A move the rules below do not allow is refused with 409, `path` naming the field; then nothing of the request is applied.\n\n' +
          'Side effects: INVITED sets invitedToStudyAt the first time and, like SCREENER_SENT, records a contact (the person\'s LAST_CONTACT_DATE); ' +
          'SCREENER_SENT sets screenerSentAt; SUBMITTED sets screenerResponseDate; APPROVED sets approvedAt; ' +
          'COMPLETED sets the completion time once (testCompletedAt given or stored, else interviewStartTime in an interview study, else now) ' +
          'and, in an unmoderated test or survey, testCompletedAt to now when it has none; NO_SHOW counts a missed session; ' +
          '`note` records the caller as its author; `consentFormSubmitted: true` records the consent once; `sendMessage` sends a message template with a move to INVITED or SCREENER_SENT, in the same transaction, and needs the right messages:write besides participants:write (403 otherwise, changing nothing).\n\n' +
          'The values of `status`, `approvalStatus` and `screenerState`, what each means and which changes are allowed, are in the descriptions of those fields. ' +
          maskingNote,
        tags,
        params: ParticipantParams,
        body: UpdateParticipantBody,
        response: {
          200: UpdatedParticipant,
          400: invalid,
          404: errorResponse(
            "Study not found (path [\"studyId\"]), or Participant not found (path [\"participantId\"]): not a participant of this study, another workspace's, or one whose person was deleted; or the message template of `sendMessage` (path [\"sendMessage\", \"templateId\"]).",
          ),
          409: errorResponse('A move the rules do not allow; `path` names the field (status, approvalStatus, screenerState or interviewStartTime).'),
        },
      },
    },
    async (request) => {
      // Sending reaches the person: a role that may move participants but not send messages is refused the whole request.
      if (request.body.sendMessage !== undefined && !principalOf(request).rights.has('messages:write')) throw forbidden('messages:write');
      return service.updateParticipant(context(request), request.params.studyId, request.params.participantId, request.body);
    },
  );
};
