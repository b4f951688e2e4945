import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { requestContext, type ServiceDeps } from '../../context.js';
import { lookupSessionPrincipal, type Principal, setRateLimitHeaders } from '../../http/auth.js';
import { ApiError, sendError } from '../../http/errors.js';
import { errorResponse, plainText } from '../../http/schemas.js';
import { presentsCsrfToken, sessionSecretOf, setSessionCookie } from '../../http/session-cookie.js';
import { attributeWrite } from '../../http/audit-actor.js';
import {
  AcceptInvitationBody,
  ChangePasswordBody,
  InvitationBody,
  InvitationRevoked,
  InvitationSent,
  LinkRequestBody,
  LinkRequested,
  PasswordChanged,
  PasswordSignInBody,
  RedeemBody,
  SessionInfo,
  SignedOut,
  UserIdParams,
} from './schemas.js';
import * as service from './service.js';

const invalid = errorResponse('Invalid input; `path` names the offending field.');
const noSession = plainText('Unauthorized: no live session cookie (signed out, idle for 12 hours, 7 days old, or its user is no longer ACTIVE).', 'Unauthorized');
const noCsrf = plainText('Forbidden: the X-CSRF-Token header is missing or is not the session\'s (GET /v1/session answers it).', 'Forbidden');
const tooMany = { ...plainText('Too Many Requests: this client address or this account has spent its sign-in attempts for the window (SIGN_IN_RATE_LIMIT_MAX); retry after Retry-After seconds.', 'Too Many Requests') };
const sessionStarted = { ...Type.Ref(SessionInfo), description: 'Signed in: the answer sets the session cookie (HttpOnly, SameSite=Lax, Path=/, Secure under https) and carries the CSRF token.' };
const linkRefused = errorResponse('The link is not valid (path ["token"]): unknown, forged, used, replaced or expired; one answer for all.');

/** Invitations (right users:write) and the console's session: sign-in by link, by password, sign-out. */
export const signInRoutes: FastifyPluginAsyncTypebox<{ deps: ServiceDeps; findSessionOwner: (digest: Buffer) => Promise<Principal | undefined> }> = async (app, { deps, findSessionOwner }) => {
  const adminContext = (request: FastifyRequest) => {
    const call = requestContext(deps, request);
    return { db: call.db, clock: call.clock, workspaceId: call.workspaceId, smtpConfigured: deps.config.smtpHost !== undefined };
  };
  const secureCookie = (deps.config.publicUrl ?? '').startsWith('https:');
  const signInLimiter = deps.limiter.withBudget({ name: 'sign-in', max: deps.config.signInRateLimitMax });
  /** Draws on the sign-in budget of the client address and of the account named: a refusal (429) when either is spent. */
  const limitAttempts = async (request: FastifyRequest, reply: FastifyReply, account: string): Promise<boolean> => {
    for (const key of [`address:${request.ip}`, `account:${account.toLowerCase()}`]) {
      const decision = await signInLimiter.consume(key);
      setRateLimitHeaders(reply, decision);
      if (!decision.allowed) {
        reply.header('Retry-After', decision.retryAfterSeconds);
        sendError(reply, new ApiError('TOO_MANY_REQUESTS'));
        return false;
      }
    }
    return true;
  };
  /** The request's live session, or an answer sent (401; 403 for a write without its CSRF token). */
  const sessionOf = async (request: FastifyRequest, reply: FastifyReply, write: boolean): Promise<{ principal: Principal; secret: string } | undefined> => {
    const secret = sessionSecretOf(request);
    const principal = secret === undefined ? undefined : await lookupSessionPrincipal(findSessionOwner, deps.principals, secret);
    if (!principal || secret === undefined) {
      sendError(reply, new ApiError('UNAUTHORIZED'));
      return undefined;
    }
    if (write && !presentsCsrfToken(request, secret)) {
      sendError(reply, new ApiError('FORBIDDEN', [], 'the X-CSRF-Token header is missing or wrong'));
      return undefined;
    }
    return { principal, secret };
  };
  /** The session of a request to a cookie-authenticated route, resolved before its body is read (onRequest). */
  const sessions = new WeakMap<FastifyRequest, { principal: Principal; secret: string }>();
  const requireSession = async (request: FastifyRequest, reply: FastifyReply) => {
    const session = await sessionOf(request, reply, request.method !== 'GET' && request.method !== 'HEAD');
    if (session) sessions.set(request, session);
    return session ? undefined : reply;
  };
  const sessionOfRequest = (request: FastifyRequest) => {
    const session = sessions.get(request);
    if (!session) throw new Error('A session route ran without its session');
    return session;
  };
  /** The audit trail's actor of a cookie-authenticated write: the session's user, by the session. */
  const attributeSession = (request: FastifyRequest, principal: Principal, resourceType: string, resourceId: string) =>
    attributeWrite(request, { workspaceId: principal.workspaceId, actor: { kind: 'USER', userId: principal.userId, credentialId: principal.tokenId }, resourceType, resourceId });
  /** Sets the new session's cookie; a session the browser still presented ends (a new session at every sign-in). */
  const begin = async (request: FastifyRequest, reply: FastifyReply, started: service.StartedSession) => {
    const previous = sessionSecretOf(request);
    if (previous !== undefined) {
      const ended = await service.endSession(deps.db, deps.clock, previous);
      if (ended) deps.principals.invalidateUser(ended.workspaceId, ended.userId);
    }
    setSessionCookie(reply, started.secret, service.SESSION_DAYS * 86_400, secureCookie);
    reply.header('Cache-Control', 'no-store');
    const { workspaceId, userId, sessionId } = started.info;
    attributeWrite(request, { workspaceId, actor: { kind: 'USER', userId, credentialId: sessionId }, resourceType: 'session', resourceId: sessionId });
    return started.info;
  };

  app.post(
    '/users/invitations',
    {
      config: { right: 'users:write' },
      schema: {
        operationId: 'inviteUser',
        summary: 'Invite a user by email',
        description:
          'Creates the user INVITED and emails them a link to accept (single use, valid 7 days; only its digest is stored). Needs the SMTP settings. ' +
          'Accepting (POST /v1/session/invitation) makes the user ACTIVE and signs them in.',
        tags: ['Users'],
        body: InvitationBody,
        response: {
          201: Type.Ref(InvitationSent),
          400: invalid,
          404: errorResponse('A team of `teamIds` does not exist (path ["teamIds", index]).'),
          409: errorResponse('The email is already a user of the workspace (path ["email"]), or the service has no SMTP settings.'),
        },
      },
    },
    async (request, reply) => reply.code(201).send(await service.invite(adminContext(request), request.body)),
  );

  app.post(
    '/users/:userId/invitation',
    {
      config: { right: 'users:write' },
      schema: {
        operationId: 'resendInvitation',
        summary: 'Send an invitation again',
        description: 'Emails a new link to the INVITED user; the links sent before stop working at once.',
        tags: ['Users'],
        params: UserIdParams,
        response: {
          202: Type.Ref(InvitationSent),
          404: errorResponse("User not found (also another workspace's)."),
          409: errorResponse('The user is not INVITED (already ACTIVE or DEACTIVATED), or the service has no SMTP settings.'),
        },
      },
    },
    async (request, reply) => reply.code(202).send(await service.resendInvitation(adminContext(request), request.params.userId)),
  );

  app.delete(
    '/users/:userId/invitation',
    {
      config: { right: 'users:write' },
      schema: {
        operationId: 'revokeInvitation',
        summary: 'Withdraw an invitation',
        description: 'Removes the INVITED user, their links and team memberships: the emailed link stops working, and the address may be invited again.',
        tags: ['Users'],
        params: UserIdParams,
        response: {
          200: Type.Ref(InvitationRevoked),
          404: errorResponse("User not found (also another workspace's)."),
          409: errorResponse('The user is not INVITED (already ACTIVE or DEACTIVATED).'),
        },
      },
    },
    async (request) => service.revokeInvitation(adminContext(request), request.params.userId),
  );

  app.post(
    '/session/invitation',
    {
      config: { public: true },
      schema: {
        operationId: 'acceptInvitation',
        summary: 'Accept an invitation',
        description: "Spends the invitation link's token: the user becomes ACTIVE, keeps `password` when given, and is signed in (a session cookie).",
        tags: ['Session'],
        body: AcceptInvitationBody,
        response: { 200: sessionStarted, 400: linkRefused },
      },
    },
    async (request, reply) => begin(request, reply, await service.acceptInvitation(deps.db, deps.clock, request.body)),
  );

  app.post(
    '/session/link',
    {
      config: { public: true },
      schema: {
        operationId: 'requestSignInLink',
        summary: 'Email a sign-in link',
        description:
          'Emails a single-use sign-in link (valid 15 minutes) when the address is an ACTIVE user of the workspace. The answer is the same 202 whatever the address, and the work the same, so it tells nothing of who is a user.',
        tags: ['Session'],
        body: LinkRequestBody,
        response: { 202: Type.Ref(LinkRequested), 400: invalid, 429: tooMany },
      },
    },
    async (request, reply) => {
      if (!(await limitAttempts(request, reply, `${request.body.workspace}:${request.body.email}`))) return reply;
      const asked = await service.requestSignInLink(deps.db, deps.clock, request.body);
      // Whoever asked is not signed in: a visitor, on the user the address names (if it names one).
      if (asked) attributeWrite(request, { workspaceId: asked.workspaceId, actor: { kind: 'VISITOR' }, resourceType: 'user', ...(asked.userId ? { resourceId: asked.userId } : {}) });
      return reply.code(202).send({ message: 'If this address belongs to an active user of the workspace, a sign-in link is on its way.' });
    },
  );

  app.post(
    '/session/link/redeem',
    {
      config: { public: true },
      schema: {
        operationId: 'redeemSignInLink',
        summary: 'Sign in with an emailed link',
        description: "Spends the sign-in link's token and starts a session (a cookie).",
        tags: ['Session'],
        body: RedeemBody,
        response: { 200: sessionStarted, 400: linkRefused },
      },
    },
    async (request, reply) => begin(request, reply, await service.redeemSignInLink(deps.db, deps.clock, request.body.token)),
  );

  app.post(
    '/session/password',
    {
      config: { public: true },
      schema: {
        operationId: 'signInWithPassword',
        summary: 'Sign in with a password',
        description:
          'Starts a session (a cookie) for the ACTIVE user of this address with this password. A wrong password, an unknown address or workspace, and a user without a password all get the same 401 after the same work. ' +
          'Attempts are limited per client address and per account (SIGN_IN_RATE_LIMIT_MAX per window).',
        tags: ['Session'],
        body: PasswordSignInBody,
        response: { 200: sessionStarted, 400: invalid, 401: plainText('Unauthorized: the email or the password is wrong (one answer for every reason).', 'Unauthorized'), 429: tooMany },
      },
    },
    async (request, reply) => {
      if (!(await limitAttempts(request, reply, `${request.body.workspace}:${request.body.email}`))) return reply;
      return begin(request, reply, await service.signInWithPassword(deps.db, deps.clock, request.body));
    },
  );

  app.put(
    '/session/password',
    {
      config: { public: true, sessionCookie: true },
      onRequest: requireSession,
      schema: {
        operationId: 'setPassword',
        summary: "Set the signed-in user's password",
        description: 'With the session cookie and its X-CSRF-Token. When a password is set already, `currentPassword` must be it.',
        tags: ['Session'],
        body: ChangePasswordBody,
        response: { 200: Type.Ref(PasswordChanged), 400: invalid, 401: noSession, 403: noCsrf, 429: tooMany },
      },
    },
    async (request, reply) => {
      const session = sessionOfRequest(request);
      if (!(await limitAttempts(request, reply, `${session.principal.workspaceId}:${session.principal.userId}`))) return reply;
      attributeSession(request, session.principal, 'user', session.principal.userId);
      return service.changePassword(deps.tenantDb(session.principal.workspaceId), deps.clock, session.principal, request.body);
    },
  );

  app.get(
    '/session',
    {
      config: { public: true, sessionCookie: true },
      onRequest: requireSession,
      schema: {
        operationId: 'getSession',
        summary: 'The current console session',
        description: 'The session of the cookie: its user, its ends, and the CSRF token to send in X-CSRF-Token with every write made with the cookie.',
        tags: ['Session'],
        response: { 200: Type.Ref(SessionInfo), 401: noSession },
      },
    },
    async (request, reply) => {
      const session = sessionOfRequest(request);
      const { principal, secret } = session;
      const row = await deps
        .tenantDb(principal.workspaceId)
        .selectFrom('user_sessions')
        .where('workspace_id', '=', principal.workspaceId)
        .where('session_id', '=', principal.tokenId)
        .select(['session_id as sessionId', 'user_id as userId', 'workspace_id as workspaceId', 'method', 'created_at as createdAt', 'expires_at as expiresAt'])
        .executeTakeFirst();
      if (!row) return sendError(reply, new ApiError('UNAUTHORIZED'));
      reply.header('Cache-Control', 'no-store');
      return service.sessionInfo(secret, row);
    },
  );

  app.delete(
    '/session',
    {
      config: { public: true, sessionCookie: true },
      onRequest: requireSession,
      schema: {
        operationId: 'signOut',
        summary: 'Sign out',
        description: 'Ends the session of the cookie and clears the cookie. With its X-CSRF-Token.',
        tags: ['Session'],
        response: { 200: Type.Ref(SignedOut), 401: noSession, 403: noCsrf },
      },
    },
    async (request, reply) => {
      const session = sessionOfRequest(request);
      await service.endSession(deps.tenantDb(session.principal.workspaceId), deps.clock, session.secret);
      attributeSession(request, session.principal, 'session', session.principal.tokenId);
      deps.principals.invalidateUser(session.principal.workspaceId, session.principal.userId);
      setSessionCookie(reply, '', 0, secureCookie);
      return { sessionsEnded: 1 };
    },
  );

  app.post(
    '/session/sign-out-everywhere',
    {
      config: { public: true, sessionCookie: true },
      onRequest: requireSession,
      schema: {
        operationId: 'signOutEverywhere',
        summary: 'Sign out everywhere',
        description: "Ends every session of the signed-in user, on every device, and clears this one's cookie. With its X-CSRF-Token. API keys are not touched.",
        tags: ['Session'],
        response: { 200: Type.Ref(SignedOut), 401: noSession, 403: noCsrf },
      },
    },
    async (request, reply) => {
      const session = sessionOfRequest(request);
      const { workspaceId, userId } = session.principal;
      attributeSession(request, session.principal, 'user', userId);
      const sessionsEnded = await service.endSessionsOfUser(deps.tenantDb(workspaceId), deps.clock, workspaceId, userId);
      deps.principals.invalidateUser(workspaceId, userId);
      setSessionCookie(reply, '', 0, secureCookie);
      return { sessionsEnded };
    },
  );
};

