import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { requestContext, type ServiceDeps } from '../../context.js';
import { attributeWrite } from '../../http/audit-actor.js';
import { setRateLimitHeaders } from '../../http/auth.js';
import { ApiError, sendError } from '../../http/errors.js';
import { plainErrors, rateLimitHeaders } from '../../http/openapi.js';
import { cursorScope, listPage } from '../../http/pagination.js';
import { errorResponse, ListQuery, plainText } from '../../http/schemas.js';
import {
  CreateSignupFormBody,
  PublicSubmissionBody,
  ReviewSubmissionBody,
  SignupForm,
  SignupFormList,
  SignupFormParams,
  SignupSubmission,
  SubmissionCreated,
  SubmissionParams,
} from './schemas.js';
import * as service from './service.js';

const tags = ['Forms'];
const invalid = errorResponse('Invalid input; `path` names the offending field or parameter.');
const formNotFound = errorResponse("Signup form not found (also another workspace's).");
const submissionNotFound = errorResponse(
  'The signup form (path ["signupFormId"]) or the submission (path ["submissionId"]) does not exist; a submission of a deleted person, or of another form, is not found either.',
);

/** The public route's documented answers: it has no token, so the shared enrichment adds none of these. */
const withLimitHeaders = <T extends object>(response: T) => ({ ...response, headers: rateLimitHeaders });
const publicResponses = {
  201: withLimitHeaders({ ...SubmissionCreated, description: 'Created' }),
  400: withLimitHeaders(invalid),
  404: withLimitHeaders(errorResponse('No signup form has this id (path ["signupFormId"]), or a property of `properties` does not exist (path ["properties", propertyId]).')),
  413: withLimitHeaders(errorResponse('The request body is larger than 1 MiB.')),
  415: withLimitHeaders(errorResponse('The request body is not application/json.')),
  429: {
    ...plainText('Too Many Requests: this client address has sent its budget of submissions for the window; retry after Retry-After seconds.', 'Too Many Requests'),
    headers: plainErrors[429].headers,
  },
  500: plainErrors[500],
  503: plainText('Service Unavailable: the instance is shutting down; retry on another.', 'Service Unavailable'),
};

export const signupsRoutes: FastifyPluginAsyncTypebox<{ deps: ServiceDeps }> = async (app, { deps }) => {
  const context = (request: FastifyRequest) => requestContext(deps, request);
  // Public submissions draw on a budget of their own per client address (SIGNUP_RATE_LIMIT_MAX
  // per window): far smaller than a token's, since each one may add a person to the panel.
  const signupLimiter = deps.limiter.withBudget({ name: 'signup', max: deps.config.signupRateLimitMax });
  const limitByAddress = async (request: FastifyRequest, reply: FastifyReply) => {
    const decision = await signupLimiter.consume(`address:${request.ip}`);
    setRateLimitHeaders(reply, decision);
    if (decision.allowed) return;
    reply.header('Retry-After', decision.retryAfterSeconds);
    return sendError(reply, new ApiError('TOO_MANY_REQUESTS'));
  };

  app.post(
    '/signups',
    {
      config: { right: 'signups:write' },
      schema: {
        operationId: 'createSignupForm',
        summary: 'Create a signup form',
        description:
          'Makes a public signup form whose senders join `populationId`. Its `signupFormId` is public: anyone holding it may send the form, without a token, through POST /public/signups/{signupFormId}/submissions.',
        tags,
        body: CreateSignupFormBody,
        response: { 201: Type.Ref(SignupForm), 400: invalid, 404: errorResponse('The population does not exist (path ["populationId"]).') },
      },
    },
    async (request, reply) => reply.code(201).send(await service.createForm(context(request), request.body)),
  );

  app.get(
    '/signups',
    {
      config: { right: 'signups:read' },
      schema: {
        operationId: 'listSignupForms',
        summary: 'List signup forms',
        description:
          'Signup forms of the workspace in the order they were made (to the millisecond: form ids are random within one), keyset-paged: pass `pageInfo.endCursor` as `startCursor`.',
        tags,
        querystring: ListQuery,
        response: { 200: SignupFormList, 400: invalid },
      },
    },
    async (request) => {
      return listPage(deps.cursors, cursorScope(context(request).workspaceId, 'signups'), request.query, (form) => form.signupFormId, (after, size) => service.listForms(context(request), after, size));
    },
  );

  app.get(
    '/signups/:signupFormId',
    {
      config: { right: 'signups:read' },
      schema: {
        operationId: 'getSignupForm',
        summary: 'Get a signup form',
        description: 'A signup form of the workspace.',
        tags,
        params: SignupFormParams,
        response: { 200: Type.Ref(SignupForm), 404: formNotFound },
      },
    },
    async (request) => service.getForm(context(request), request.params.signupFormId),
  );

  app.get(
    '/signups/:signupFormId/submissions/:submissionId',
    {
      config: { right: 'signups:read' },
      schema: {
        operationId: 'getSignupSubmission',
        summary: 'Get a signup-form submission',
        description: 'One submission of the form, with its review.',
        tags,
        params: SubmissionParams,
        response: { 200: Type.Ref(SignupSubmission), 404: submissionNotFound },
      },
    },
    async (request) => service.getSubmission(context(request), request.params.signupFormId, request.params.submissionId),
  );

  app.patch(
    '/signups/:signupFormId/submissions/:submissionId',
    {
      config: { right: 'signups:write' },
      schema: {
        operationId: 'reviewSignupSubmission',
        summary: 'Review a signup-form submission',
        description:
          'Sets the approval status. APPROVED or REJECTED stamps `reviewedAt` (and the reviewing user); back to PENDING_REVIEW clears it. ' +
          'Setting the status the submission already has changes nothing. The review changes neither the person nor their memberships.',
        tags,
        params: SubmissionParams,
        body: ReviewSubmissionBody,
        response: { 200: Type.Ref(SignupSubmission), 400: invalid, 404: submissionNotFound },
      },
    },
    async (request) => service.reviewSubmission(context(request), request.params.signupFormId, request.params.submissionId, request.body),
  );

  app.post(
    '/public/signups/:signupFormId/submissions',
    {
      config: { public: true },
      onRequest: limitByAddress,
      schema: {
        operationId: 'submitSignupForm',
        summary: 'Send a signup form (public, no token)',
        description:
          'What a signup form\'s page posts: no token is needed, the form\'s id says the workspace. ' +
          'A new email makes a new person; an email the panel knows (case-insensitively) updates that person, but only fills what is empty: ' +
          'a name or phone only where none is held, a property only where it is unset. It never overwrites, never changes the email, never changes opted-out status. ' +
          'A value of a unique property that another person holds is left out (no 409, which would tell who holds it). ' +
          'Either way the person joins the form\'s population and the submission is recorded PENDING_REVIEW, with the referral code and, given a `consentFormId`, a consent submission. ' +
          'The answer is the same for a new and a known email.\n\n' +
          'Rate-limited per client address (SIGNUP_RATE_LIMIT_MAX submissions per window, default 30 a minute): every answer carries X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset; a 429 adds Retry-After.',
        tags,
        params: SignupFormParams,
        body: PublicSubmissionBody,
        response: publicResponses,
      },
    },
    async (request, reply) => {
      const submitted = await service.submitForm({ db: deps.db, clock: deps.clock }, request.params.signupFormId, request.body);
      // The form's id names its workspace (submitForm refused it otherwise); who sent it is not known to the trail, only the submission.
      const workspaceId = service.workspaceOfSignupForm(request.params.signupFormId);
      if (workspaceId !== undefined) attributeWrite(request, { workspaceId, actor: { kind: 'PARTICIPANT' }, resourceType: 'signupSubmission', resourceId: submitted.submissionId });
      return reply.code(201).send(submitted);
    },
  );
};
