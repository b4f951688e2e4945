import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { searchPageWeight } from '../../http/heavy-work.js';
import { requestContext, type ServiceDeps } from '../../context.js';
import { errorResponse, PageInfo } from '../../http/schemas.js';
import { MAX_FILTERS, MAX_GROUP_LEVEL, searchBody } from '../../search/schemas.js';
import { SignupFormParams, SignupSubmission } from './schemas.js';
import { searchSubmissions } from './search.js';
import { presentedAnswers } from '../../http/serialization.js';

export const SearchSubmissionsBody = searchBody(
  {
    studyId: Type.Optional(
      Type.String({ minLength: 1, maxLength: 200, description: 'The study whose participants PARTICIPANT names describe (required to filter or sort by them); INCENTIVE names then read that participant\'s latest incentive.' }),
    ),
  },
  { studyId: 'stu_01JD0000000000000000000000' },
);

const SubmissionList = Type.Object(
  {
    results: Type.Array(Type.Ref(SignupSubmission)),
    total: Type.Integer({ minimum: 0, description: 'Every submission that matches, not only this page.' }),
    pageInfo: Type.Ref(PageInfo),
  },
  { title: 'SubmissionList' },
);

const description = [
  "The form's submissions matching `filter` (all of them without one), one keyset page at a time, with `total` the exact number of matches. Submissions of deleted people never appear.",
  `The filter language: PERSON names read the person who sent the submission; PARTICIPANT names read that person's participant of \`studyId\` (empty when they are none) and need \`studyId\`; ` +
    "INCENTIVE names read that participant's most recent incentive, or without `studyId` the person's most recent one. " +
    `See RootFilter for every name. At most ${MAX_FILTERS} Filters counted through every level, FilterGroups nested at most ${MAX_GROUP_LEVEL} levels below the RootFilter.`,
  'Sort: nulls last in both directions, ties broken by submissionId; the default is submissionId ascending (the order submissions came in). A cursor is bound to its form, study, filter and sort.',
  'Filtering or sorting on personal data needs the personal-data right (403 otherwise); submissions themselves hold none.',
].join('\n\n');

/** E6: POST /signups/{signupFormId}/submissions/search. */
export const submissionsSearchRoutes: FastifyPluginAsyncTypebox<{ deps: ServiceDeps }> = async (app, { deps }) => {
  app.post(
    '/signups/:signupFormId/submissions/search',
    {
      ...presentedAnswers(app),
      config: { right: 'signups:read', heavyWeight: searchPageWeight },
      preValidation: async (request) => {
        request.body ??= {};
      },
      schema: {
        operationId: 'searchSignupSubmissions',
        'x-reference-id': 'E6',
        summary: 'Search signup-form submissions',
        description,
        tags: ['Forms'],
        params: SignupFormParams,
        body: SearchSubmissionsBody,
        response: {
          200: SubmissionList,
          400: errorResponse('Invalid filter, page size or cursor, or a PARTICIPANT name without studyId; `path` names the offending part.'),
          404: errorResponse('Signup form not found (path ["signupFormId"]), Study not found (path ["studyId"]), or an id named in a membership filter (path names the value).'),
        },
      },
    },
    async (request) => {
      const { filter, studyId, pageInfo } = request.body;
      return searchSubmissions(requestContext(deps, request), deps.cursors, request.params.signupFormId, studyId, filter, { startCursor: pageInfo?.startCursor, size: pageInfo?.size ?? 25 });
    },
  );
};
