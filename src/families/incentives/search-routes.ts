import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { searchPageWeight } from '../../http/heavy-work.js';
import { requestContext, type ServiceDeps } from '../../context.js';
import { maskingNote } from '../../http/masking.js';
import { errorResponse, PageInfo } from '../../http/schemas.js';
import { MAX_FILTERS, MAX_GROUP_LEVEL, searchBody } from '../../search/schemas.js';
import { Incentive } from './schemas.js';
import { searchIncentives } from './search.js';
import { presentedAnswers } from '../../http/serialization.js';

export const SearchIncentivesBody = searchBody(
  { studyId: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Only the incentives sent for this study.' })) },
  { studyId: 'stu_01JD0000000000000000000000' },
);

const IncentiveList = Type.Object(
  {
    results: Type.Array(Type.Ref(Incentive)),
    total: Type.Integer({ minimum: 0, description: 'Every incentive that matches, not only this page.' }),
    pageInfo: Type.Ref(PageInfo),
  },
  { title: 'IncentiveList' },
);

const description = [
  'Incentives of the workspace (of one study with `studyId`) matching `filter`, one keyset page at a time, with `total` the exact number of matches. ' +
    "An incentive stays after its recipient is deleted: its recipientEmail is then null, the recipient's own PERSON fields read as empty and counts derived from their history as 0.",
  'The filter language: INCENTIVE names read the incentive itself; PARTICIPANT names the participant it was sent to; PERSON names its recipient (see RootFilter for every name). ' +
    `At most ${MAX_FILTERS} Filters counted through every level, FilterGroups nested at most ${MAX_GROUP_LEVEL} levels below the RootFilter.`,
  'Sort: nulls last in both directions, ties broken by incentiveId; the default is incentiveId ascending (the order incentives were sent). A cursor is bound to its study, filter and sort.',
  `Filtering or sorting on personal data (INCENTIVE.EMAIL, PERSON.EMAIL, names, phones, properties flagged isPII or isPHI) needs the personal-data right (403 otherwise). ${maskingNote}`,
].join('\n\n');

/** E7: POST /incentives/search. */
export const incentivesSearchRoutes: FastifyPluginAsyncTypebox<{ deps: ServiceDeps }> = async (app, { deps }) => {
  app.post(
    '/incentives/search',
    {
      ...presentedAnswers(app),
      config: { right: 'incentives:read', heavyWeight: searchPageWeight },
      preValidation: async (request) => {
        request.body ??= {};
      },
      schema: {
        operationId: 'searchIncentives',
        'x-reference-id': 'E7',
        summary: 'Search incentives',
        description,
        tags: ['Incentives'],
        body: SearchIncentivesBody,
        response: {
          200: IncentiveList,
          400: errorResponse('Invalid filter, page size or cursor; `path` names the offending part.'),
          404: errorResponse('Study not found (path ["studyId"]), or an id named in a membership filter (path names the value).'),
        },
      },
    },
    async (request) => {
      const { filter, studyId, pageInfo } = request.body;
      return searchIncentives(requestContext(deps, request), deps.cursors, studyId, filter, { startCursor: pageInfo?.startCursor, size: pageInfo?.size ?? 25 });
    },
  );
};
