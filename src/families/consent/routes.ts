import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { requestContext, type ServiceDeps } from '../../context.js';
import { cursorScope, listPage } from '../../http/pagination.js';
import { errorResponse } from '../../http/schemas.js';
import { ConsentListQuery, ConsentParams, ConsentSubmission, ConsentSubmissionList, RecordConsentBody } from './schemas.js';
import * as service from './service.js';

const tags = ['Consent'];

export const consentRoutes: FastifyPluginAsyncTypebox<{ deps: ServiceDeps }> = async (app, { deps }) => {
  const context = (request: FastifyRequest) => requestContext(deps, request);

  app.post(
    '/consent-submissions',
    {
      config: { right: 'consent:write' },
      schema: {
        operationId: 'recordConsentSubmission',
        summary: "Record a person's consent",
        description:
          "Records that a live person of the workspace consented: to a study's consent form (`studyId`) or on a signup form (`signupFormId`), exactly one of them. " +
          'Which wording they agreed to is kept as `consentFormId`, `formVersion` and the SHA-256 of the text shown (give `text`, which is hashed and not kept, or its `textSha256`). ' +
          "For a study, `consentFormId` defaults to the study plan's, and when the person is a participant of the study their participant's `consentFormSubmittedAt` is set " +
          '(the earliest consent recorded wins), so PARTICIPANT.CONSENT_FORM_SUBMITTED and PERSON.CONSENT_SUBMISSIONS / CONSENT_FORM_WAS_SUBMITTED find it at once. ' +
          'A `consent.submitted` webhook event is recorded in the same transaction. Consents are kept until the person is deleted and purged.',
        tags,
        body: RecordConsentBody,
        response: {
          201: Type.Ref(ConsentSubmission),
          400: errorResponse(
            'Invalid input; `path` names the offending field. Also: neither or both of `studyId` and `signupFormId` (path ["studyId"] or ["signupFormId"]), both `text` and `textSha256` (["text"]), a `submittedAt` more than 5 minutes ahead of the service clock (["submittedAt"]).',
          ),
          404: errorResponse("Person (also a deleted one), study or signup form not found (also another workspace's); `path` says which."),
        },
      },
    },
    async (request, reply) => reply.code(201).send(await service.recordConsent(context(request), request.body)),
  );

  app.get(
    '/consent-submissions',
    {
      config: { right: 'consent:read' },
      schema: {
        operationId: 'listConsentSubmissions',
        summary: 'List consent submissions',
        description:
          "The workspace's consents in the order they were recorded, keyset-paged (pass `pageInfo.endCursor` as `startCursor`, with the same filters): " +
          "all of them, or one person's, one study's or one signup form's (filters combine). Consents of deleted people are left out.",
        tags,
        querystring: ConsentListQuery,
        response: {
          200: ConsentSubmissionList,
          400: errorResponse('Invalid input (a size out of 1–100, or a startCursor that is not one of this query: other filters, or altered); `path` names the parameter.'),
          404: errorResponse("A filter names no person (also a deleted one), study or signup form of the workspace; `path` names the parameter."),
        },
      },
    },
    async (request) => {
      const call = context(request);
      const { personId, studyId, signupFormId } = request.query;
      const scope = cursorScope(call.workspaceId, `consent-submissions:${JSON.stringify([personId ?? null, studyId ?? null, signupFormId ?? null])}`);
      return listPage(deps.cursors, scope, request.query, (consent) => consent.consentSubmissionId, async (after, size) =>
        service.listConsents(call, await service.checkListFilter(call, request.query), after, size),
      );
    },
  );

  app.get(
    '/consent-submissions/:consentSubmissionId',
    {
      config: { right: 'consent:read' },
      schema: {
        operationId: 'getConsentSubmission',
        summary: 'Read a consent submission',
        tags,
        params: ConsentParams,
        response: {
          200: Type.Ref(ConsentSubmission),
          400: errorResponse('Invalid input; `path` names the parameter.'),
          404: errorResponse("Consent submission not found (also another workspace's, and a deleted person's)."),
        },
      },
    },
    async (request) => service.getConsent(context(request), request.params.consentSubmissionId),
  );
};
