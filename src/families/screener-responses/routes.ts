import { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { requestContext, type ServiceDeps } from '../../context.js';
import { cursorScope, listPage } from '../../http/pagination.js';
import { errorResponse } from '../../http/schemas.js';
import { rateLimitHeaders } from '../../http/openapi.js';
import { ParticipantParams, StudyParams } from '../participants/requests.js';
import { ScreenerExportQuery, ScreenerFunnel, ScreenerResponse, ScreenerResponseList, ScreenerResponsesQuery } from './schemas.js';
import * as service from './service.js';

const tags = ['Screener responses'];
const maskingOfAnswers =
  'Answers to questions mapped to a property flagged isPII or isPHI (or to one since deleted), and to EMAIL and PHONE_NUMBER questions, are masked for a token without the personal-data right ("***", "***@***").';
const screenersRight = 'A token made with `--no-screeners` sees no screener, so neither its questions nor their answers: 403 naming `scope="screeners"`.';
const studyNotFound = errorResponse("Study not found (also another workspace's); path [\"studyId\"].");

export const screenerResponsesRoutes: FastifyPluginAsyncTypebox<{ deps: ServiceDeps }> = async (app, { deps }) => {
  const context = (request: FastifyRequest) => requestContext(deps, request);

  app.get(
    '/studies/:studyId/participants/:participantId/screener-response',
    {
      config: { right: 'participants:read' },
      schema: {
        operationId: 'getScreenerResponse',
        summary: "Read a participant's screener answers",
        description:
          "The participant's answers to the study's screener, each with the question as it was asked (its text, type and choices at that version), the outcome and the rule that decided it " +
          `(for the team: the person is never shown it), when the page was served and the answers sent, and whether the hidden field robots fill was filled. ${maskingOfAnswers} ${screenersRight}`,
        tags,
        params: ParticipantParams,
        response: {
          200: Type.Ref(ScreenerResponse),
          404: errorResponse(
            "Study not found (path [\"studyId\"]); Participant not found (path [\"participantId\"]: not a participant of this study, another workspace's, or one whose person was deleted); or Screener response not found (path [\"participantId\"]: the participant has not sent the screener).",
          ),
        },
      },
    },
    async (request) => service.getResponse(context(request), request.params.studyId, request.params.participantId),
  );

  app.get(
    '/studies/:studyId/screener-responses',
    {
      config: { right: 'participants:read' },
      schema: {
        operationId: 'listScreenerResponses',
        summary: "List a study's screener responses",
        description:
          "The study's screener responses with their answers, in participant id order, keyset-paged (pass `pageInfo.endCursor` as `startCursor`, with the same `outcome`), all of them or those with one `outcome`. " +
          `Deleted people's responses are erased with them. ${maskingOfAnswers} ${screenersRight}`,
        tags,
        params: StudyParams,
        querystring: ScreenerResponsesQuery,
        response: {
          200: ScreenerResponseList,
          400: errorResponse('Invalid input (a size out of 1–100, an unknown outcome, or a startCursor that is not one of this query: another study or outcome, or altered); `path` names the parameter.'),
          404: studyNotFound,
        },
      },
    },
    async (request) => {
      const call = context(request);
      const { studyId } = request.params;
      const { outcome } = request.query;
      const scope = cursorScope(call.workspaceId, `screener-responses:${JSON.stringify([studyId, outcome ?? null])}`);
      return listPage(deps.cursors, scope, request.query, (response) => response.participantId, (after, size) => service.listResponses(call, studyId, outcome, after, size));
    },
  );

  app.get(
    '/studies/:studyId/screener-responses/export',
    {
      config: { right: 'participants:read' },
      schema: {
        operationId: 'exportScreenerResponses',
        summary: "Export a study's screener responses as CSV",
        description:
          'The responses (all, or those with one `outcome`) as a CSV download (RFC 4180, UTF-8, comma separated, CRLF), streamed: one row per response in participant id order. ' +
          'Columns: participantId, personId, submittedAt, startedAt, secondsToComplete, outcome, decidedBy (JSON), suspectedBot, revision, then one per question by its key: ' +
          "the current revision's in order, then older questions no longer asked; each headed by its latest text (with its key in brackets when two share a text). " +
          'A choice is written as its label at the version answered (several joined by "; "); a question not shown or not asked in that revision is an empty cell. ' +
          "A cell a spreadsheet would read as a formula (starting with =, +, -, @, a tab or a carriage return) is prefixed with a single quote. Rows are read in batches, so a response recorded during the download may or may not be in it. " +
          `${maskingOfAnswers} ${screenersRight}`,
        tags,
        params: StudyParams,
        querystring: ScreenerExportQuery,
        response: {
          200: {
            description: 'The CSV; `Content-Disposition: attachment` names a file screener-responses-{studyId}.csv.',
            headers: rateLimitHeaders,
            content: { 'text/csv': { schema: { type: 'string', examples: ['participantId,personId,submittedAt,startedAt,secondsToComplete,outcome,decidedBy,suspectedBot,revision,How often do you shop online?\r\n'] } } },
          },
          400: errorResponse('Invalid input (an unknown outcome); `path` names the parameter.'),
          404: studyNotFound,
        },
      },
    },
    async (request, reply) => {
      const { studyId } = request.params;
      const records = await service.exportResponses(context(request), studyId, request.query.outcome);
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="screener-responses-${studyId.replace(/[^A-Za-z0-9_-]/g, '_')}.csv"`)
        .header('cache-control', 'no-store')
        .send(Readable.from(records));
    },
  );

  app.get(
    '/studies/:studyId/screener-funnel',
    {
      config: { right: 'participants:read' },
      schema: {
        operationId: 'getScreenerFunnel',
        summary: "A study's screener funnel",
        description:
          'How many of the study\'s participants reached each stage of the screener: sent, opened, started, submitted, and the outcomes (qualified, disqualified, needs review, over quota), with the participants placed in each quota group. ' +
          'Counts only, so any token with participants:read may read it. The definitions are in the fields\' descriptions.',
        tags,
        params: StudyParams,
        response: { 200: Type.Ref(ScreenerFunnel), 404: studyNotFound },
      },
    },
    async (request) => service.getFunnel(context(request), request.params.studyId),
  );
};
