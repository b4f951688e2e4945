import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { requestContext, type ServiceDeps } from '../../context.js';
import { cursorScope, listPage } from '../../http/pagination.js';
import { errorResponse, ListQuery } from '../../http/schemas.js';
import {
  CreateStudyBody,
  CreateTemplateBody,
  ListStudiesQuery,
  PutScreenerBody,
  Screener,
  StatusBody,
  Study,
  StudyList,
  StudyParams,
  StudySummary,
  StudyTemplate,
  TemplateList,
  UpdateStudyBody,
} from './schemas.js';
import * as service from './service.js';

const tags = ['Studies'];
const notFound = errorResponse('Study not found (also for another workspace\'s study).');
const invalid = errorResponse('Invalid input; `path` names the offending field or parameter.');

export const studiesRoutes: FastifyPluginAsyncTypebox<{ deps: ServiceDeps }> = async (app, { deps }) => {
  const context = (request: FastifyRequest) => requestContext(deps, request);

  app.post(
    '/studies',
    {
      config: { right: 'studies:write' },
      schema: {
        operationId: 'createStudy',
        'x-reference-id': 'E19',
        summary: 'Create a study',
        description:
          'Creates a study in DRAFT. Either give studyType and recruitmentStrategy, or start from `idOfStudyToDuplicate` ' +
          '(a copy of that study\'s type, plan, screener, owners, team and population) or `studyTemplateId` (never both). ' +
          'Values in studyPlan override the copied ones. EXTERNAL recruitment uses recruitmentPanelProvider, default PROVIDER_TWO. ' +
          'owners defaults to the caller. `includeScreener: true` gives the study an empty screener of type SERVICE, whatever its type.',
        tags,
        body: CreateStudyBody,
        response: {
          201: Type.Object({ studyId: Type.String() }, { description: 'Created.', examples: [{ studyId: 'stu_01JD0000000000000000000000' }] }),
          400: invalid,
          404: errorResponse('A study, template, team, population or owner named in the body does not exist; `path` names it.'),
        },
      },
    },
    async (request, reply) => reply.code(201).send(await service.createStudy(context(request), request.body)),
  );

  app.get(
    '/studies',
    {
      config: { right: 'studies:read' },
      schema: {
        operationId: 'listStudies',
        summary: 'List studies',
        description: 'Studies of the workspace, newest first, optionally of one status and type. Keyset-paged: pass `pageInfo.endCursor` as `startCursor`.',
        tags,
        querystring: ListStudiesQuery,
        response: { 200: StudyList, 400: invalid },
      },
    },
    async (request) => {
      const { status, studyType } = request.query;
      const scope = cursorScope(context(request).workspaceId, `studies:${status ?? ''}:${studyType ?? ''}`);
      return listPage(deps.cursors, scope, request.query, (study) => study.studyId, (after, size) => service.listStudies(context(request), { status, studyType }, after, size));
    },
  );

  app.get(
    '/studies/:studyId',
    {
      config: { right: 'studies:read' },
      schema: {
        operationId: 'getStudy',
        'x-reference-id': 'E12',
        summary: 'Get a study',
        description: 'The study with its owners and screener; `screener` is null when the study has none or the token cannot read screeners.',
        tags,
        params: StudyParams,
        response: { 200: Type.Ref(Study), 404: notFound },
      },
    },
    async (request) => service.getStudy(context(request), request.params.studyId),
  );

  app.patch(
    '/studies/:studyId',
    {
      config: { right: 'studies:write' },
      schema: {
        operationId: 'updateStudy',
        'x-reference-id': 'E3',
        summary: 'Update a study',
        description: 'Only the supplied fields change; `studyPlan.incentive` merges field by field.',
        tags,
        params: StudyParams,
        body: UpdateStudyBody,
        response: { 200: Type.Ref(Study), 400: invalid, 404: notFound },
      },
    },
    async (request) => service.updateStudy(context(request), request.params.studyId, request.body),
  );

  app.post(
    '/studies/:studyId/status',
    {
      config: { right: 'studies:write' },
      schema: {
        operationId: 'updateStudyStatus',
        'x-reference-id': 'E5',
        summary: 'Pause or close a study',
        description: 'Moves the study to PAUSED or CLOSED. CLOSED is final (409 to leave it); asking for the current status changes nothing.',
        tags,
        params: StudyParams,
        body: StatusBody,
        response: { 200: Type.Ref(StudySummary), 400: invalid, 404: notFound, 409: errorResponse('A closed study cannot change status.') },
      },
    },
    async (request) => service.setStudyStatus(context(request), request.params.studyId, request.body.status),
  );

  app.post(
    '/studies/:studyId/launch',
    {
      config: { right: 'studies:write' },
      schema: {
        operationId: 'launchStudy',
        summary: 'Launch a study',
        description: 'Moves a DRAFT or PAUSED study to ACTIVE; an ACTIVE study stays as it is; a CLOSED one is a 409.',
        tags,
        params: StudyParams,
        response: { 200: Type.Ref(StudySummary), 400: invalid, 404: notFound, 409: errorResponse('A closed study cannot be launched.') },
      },
    },
    async (request) => service.launchStudy(context(request), request.params.studyId),
  );

  app.put(
    '/studies/:studyId/screener',
    {
      config: { right: 'screeners:write' },
      schema: {
        operationId: 'putStudyScreener',
        summary: "Create or replace a study's screener",
        description:
          'Creates or replaces the SERVICE screener of a study that is not CLOSED (questions replaced in the given order) and sets includeScreener to true. ' +
          'Each PUT is a new revision: the questions get new ids (versions) and keep their keys; answers keep the version they answered, and versions nobody answered are dropped. ' +
          'Select questions take choices, each with a rule (QUALIFIES, DISQUALIFIES, NEUTRAL); NUMBER and SCALE questions take bounds and ranges with rules; ' +
          '`showWhen` shows a question only when an earlier answer matches; `mappedToPropertyId` must name a property of a compatible type. ' +
          'The whole definition is checked and every problem reported, each with its path; a refused PUT changes nothing. ' +
          'Survey studies screen on their survey platform: 400. The response is the screener, or null for a token that cannot read screeners. Guide: docs/api/screeners.md.',
        tags,
        params: StudyParams,
        body: PutScreenerBody,
        response: {
          200: Type.Union([Type.Ref(Screener), Type.Null()], { description: 'The screener as written (null without the right to read screeners).' }),
          400: invalid,
          404: errorResponse('Study not found (also for another workspace\'s study), or a mappedToPropertyId the workspace does not have; `path` names it.'),
          409: errorResponse('The study is CLOSED.'),
        },
      },
    },
    async (request) => service.putScreener(context(request), request.params.studyId, request.body),
  );

  app.delete(
    '/studies/:studyId/screener',
    {
      config: { right: 'screeners:write' },
      schema: {
        operationId: 'deleteStudyScreener',
        'x-reference-id': 'E21',
        summary: "Delete a study's screener",
        description:
          'Deletes the screener and its questions from a draft study and sets includeScreener to false. Only SERVICE screeners; not for survey studies (400). ' +
          'A screener whose questions have answers is kept (409).',
        tags,
        params: StudyParams,
        response: {
          200: Type.Object({ success: Type.Boolean(), studyId: Type.String() }, { description: 'Deleted.', examples: [{ success: true, studyId: 'stu_01JD0000000000000000000000' }] }),
          400: errorResponse('A survey study, or a screener not of type SERVICE.'),
          404: errorResponse('Study not found, or the study has no screener.'),
          409: errorResponse('Study is not in draft status, or the screener has answers.'),
        },
      },
    },
    async (request) => service.deleteScreener(context(request), request.params.studyId),
  );

  app.post(
    '/study-templates',
    {
      config: { right: 'templates:write' },
      schema: {
        operationId: 'createStudyTemplate',
        summary: 'Make a template from a study',
        description: "Keeps the study's type, recruitment, plan and screener questions under a name; `POST /studies` with `studyTemplateId` starts a study from it.",
        tags,
        body: CreateTemplateBody,
        response: { 201: Type.Ref(StudyTemplate), 400: invalid, 404: notFound },
      },
    },
    async (request, reply) => reply.code(201).send(await service.createTemplate(context(request), request.body)),
  );

  app.get(
    '/study-templates',
    {
      config: { right: 'studies:read' },
      schema: {
        operationId: 'listStudyTemplates',
        summary: 'List study templates',
        description: 'Templates of the workspace, newest first, keyset-paged.',
        tags,
        querystring: ListQuery,
        response: { 200: TemplateList, 400: invalid },
      },
    },
    async (request) => {
      return listPage(deps.cursors, cursorScope(context(request).workspaceId, 'study-templates'), request.query, (template) => template.studyTemplateId, (after, size) => service.listTemplates(context(request), after, size));
    },
  );

  app.get(
    '/study-templates/:studyTemplateId',
    {
      config: { right: 'studies:read' },
      schema: {
        operationId: 'getStudyTemplate',
        summary: 'Get a study template',
        tags,
        params: Type.Object({ studyTemplateId: Type.String({ minLength: 1, maxLength: 200 }) }),
        response: { 200: Type.Ref(StudyTemplate), 404: errorResponse('Study template not found.') },
      },
    },
    async (request) => service.getTemplate(context(request), request.params.studyTemplateId),
  );
};
