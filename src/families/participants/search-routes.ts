import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { searchPageWeight } from '../../http/heavy-work.js';
import { requestContext, type ServiceDeps } from '../../context.js';
import { maskingNote } from '../../http/masking.js';
import { errorResponse, PageInfo } from '../../http/schemas.js';
import { MAX_FILTERS, MAX_GROUP_LEVEL, searchBody } from '../../search/schemas.js';
import { StudyParams } from './requests.js';
import { Participant } from './schemas.js';
import { searchParticipants } from './search.js';
import { serverTiming } from '../../search/run.js';
import { presentedAnswers } from '../../http/serialization.js';

export const SearchParticipantsBody = searchBody({}, {});

const ParticipantList = Type.Object(
  {
    results: Type.Array(Type.Ref(Participant)),
    total: Type.Integer({ minimum: 0, description: 'Every participant that matches, not only this page.' }),
    pageInfo: Type.Ref(PageInfo),
  },
  { title: 'ParticipantList' },
);

const description = [
  "The study's participants matching `filter` (all of them without one), one keyset page at a time, with `total` the exact number of matches. Participants whose person was deleted never appear.",
  `The filter language: PERSON, PARTICIPANT and INCENTIVE names and custom person properties (see RootFilter for every name, its type and meaning), at most ${MAX_FILTERS} Filters counted through every level, FilterGroups nested at most ${MAX_GROUP_LEVEL} levels below the RootFilter. ` +
    "PARTICIPANT names read the participant of this study; INCENTIVE names read the participant's most recent incentive (empty when there is none).",
  'Sort: nulls last in both directions, ties broken by participantId; the default is participantId ascending (the order participants were added). ' +
    'Paging through a result while participants are added or removed shows no one twice and misses no one who matched throughout; a cursor is bound to its study, filter and sort (another\'s is a 400).',
  `Filtering or sorting on personal data (EMAIL, PHONE, NAME, FIRST_NAME, LAST_NAME, INCENTIVE.EMAIL, properties flagged isPII or isPHI) needs the personal-data right (403 otherwise). ${maskingNote}`,
].join('\n\n');

/** E1: POST /studies/{studyId}/participants/search. */
export const participantsSearchRoutes: FastifyPluginAsyncTypebox<{ deps: ServiceDeps }> = async (app, { deps }) => {
  app.post(
    '/studies/:studyId/participants/search',
    {
      ...presentedAnswers(app),
      config: { right: 'participants:read', heavyWeight: searchPageWeight },
      // The body is optional as a whole: a bare POST reads the first page of every participant.
      preValidation: async (request) => {
        request.body ??= {};
      },
      schema: {
        operationId: 'searchParticipants',
        'x-reference-id': 'E1',
        summary: 'Search participants of a study',
        description,
        tags: ['Participants'],
        params: StudyParams,
        body: SearchParticipantsBody,
        response: {
          200: ParticipantList,
          400: errorResponse('Invalid filter, page size or cursor; `path` names the offending part, e.g. ["filter","filters","3","comparison"].'),
          404: errorResponse('Study not found (path ["studyId"]), or a population, study or segment named in a membership filter (path names the value).'),
        },
      },
    },
    async (request, reply) => {
      const startedAt = performance.now();
      const { filter, pageInfo } = request.body;
      const found = await searchParticipants(requestContext(deps, request), deps.cursors, request.params.studyId, filter, { startCursor: pageInfo?.startCursor, size: pageInfo?.size ?? 25 });
      void reply.header('server-timing', serverTiming(found.countedBy, startedAt, found.pagePath));
      return { results: found.results, total: found.total, pageInfo: found.pageInfo };
    },
  );
};
