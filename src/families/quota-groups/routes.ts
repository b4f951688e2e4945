import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { requestContext, type ServiceDeps } from '../../context.js';
import { errorResponse } from '../../http/schemas.js';
import { PutQuotaGroupsBody, QuotaGroupList, QuotaGroupsParams } from './schemas.js';
import * as service from './service.js';

const tags = ['Studies'];
const placement =
  'A qualified screener submission joins the first group, in order, whose conditions the person meets (every answer condition, and the filter over their properties) and that has a place: ' +
  "the participant's quotaGroup becomes the group's name. When the study has groups and none the person meets has a place (or they meet none), the submission is OVER_QUOTA: " +
  'the participant is DISQUALIFIED and the person is told the study is full. Places are exact under concurrency and are never given back (a deleted person\'s place stays filled). Guide: docs/api/screeners.md#quotas.';

export const quotaGroupsRoutes: FastifyPluginAsyncTypebox<{ deps: ServiceDeps }> = async (app, { deps }) => {
  const context = (request: FastifyRequest) => requestContext(deps, request);

  app.get(
    '/studies/:studyId/quota-groups',
    {
      config: { right: 'studies:read' },
      schema: {
        operationId: 'listStudyQuotaGroups',
        summary: "List a study's quota groups",
        description: `The study's quota groups in their order of evaluation, each with its cap and the places filled. ${placement}`,
        tags,
        params: QuotaGroupsParams,
        response: { 200: QuotaGroupList, 404: errorResponse("Study not found (also for another workspace's study).") },
      },
    },
    async (request) => service.listQuotaGroups(context(request), request.params.studyId),
  );

  app.put(
    '/studies/:studyId/quota-groups',
    {
      config: { right: 'screeners:write' },
      schema: {
        operationId: 'putStudyQuotaGroups',
        summary: "Replace a study's quota groups",
        description:
          'Sets every quota group of the study, in order: a group named by `quotaGroupId` is kept (with its places filled) and changed, the others are new, and groups left out are deleted. ' +
          "Answer conditions name questions of the study's current screener by key; the filter is checked as a segment's is, with the caller's rights. " +
          'A cap may be lowered below the places filled (the group then takes nobody more); a group with places filled keeps its name (409). The whole list is checked before anything changes. ' +
          placement,
        tags,
        params: QuotaGroupsParams,
        body: PutQuotaGroupsBody,
        response: {
          200: QuotaGroupList,
          400: errorResponse('Invalid input; `path` names the offending field, e.g. ["quotaGroups","1","answers","0","questionKey"].'),
          404: errorResponse("Study not found (also for another workspace's study), a quotaGroupId that is not a group of the study, or a population or study named in a filter; `path` names it."),
          409: errorResponse('A group with places filled was renamed; `path` names its name.'),
        },
      },
    },
    async (request) => service.putQuotaGroups(context(request), request.params.studyId, request.body),
  );
};
