import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { requestContext, type ServiceDeps } from '../../context.js';
import { setRateLimitHeaders } from '../../http/auth.js';
import { attributeWrite, recordNothing } from '../../http/audit-actor.js';
import { consolePrefix } from '../../http/console.js';
import { ApiError, badRequest, sendError } from '../../http/errors.js';
import { errorResponse, plainText } from '../../http/schemas.js';
import { cookieOf, sessionSecretOf, setSessionCookie } from '../../http/session-cookie.js';
import { PutSsoSettingsBody, SsoCallbackQuery, SsoSettings, SsoSettingsDeleted, SsoStartQuery } from './schemas.js';
import * as service from './service.js';
import { SSO_ATTEMPT_MINUTES, ssoCallbackPath, SsoFailed, ssoFlowCookieName, SsoSettingsRefused, type SingleSignOn } from './sso.js';

const redirect = (description: string, ...examples: string[]) => ({ description, headers: { Location: { type: 'string', examples } }, type: 'null' });

/**
 * Single sign-on: the workspace's provider settings (right users:write) and the two steps of a
 * browser's sign-in, which answer redirects, never JSON: to the provider, then back to the console.
 */
export const ssoRoutes: FastifyPluginAsyncTypebox<{ deps: ServiceDeps; sso: SingleSignOn }> = async (app, { deps, sso }) => {
  const secureCookies = (deps.config.publicUrl ?? '').startsWith('https:');
  const redirectUriOf = (request: FastifyRequest) => `${deps.config.publicUrl?.replace(/\/+$/, '') ?? `${request.protocol}://${request.host}`}${ssoCallbackPath}`;
  const limiter = deps.limiter.withBudget({ name: 'sign-in', max: deps.config.signInRateLimitMax });
  /** The flow cookie: only the callback's path sees it, for the attempt's 10 minutes. */
  const setFlowCookie = (reply: FastifyReply, value: string, maxAgeSeconds: number) =>
    reply.header('Set-Cookie', `${ssoFlowCookieName}=${value}; Path=/v1/session/oidc; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${secureCookies ? '; Secure' : ''}`);
  /** Back to the console's sign-in page, saying why (its codes are explained there). */
  const failed = (request: FastifyRequest, reply: FastifyReply, failure: SsoFailed) => {
    request.log.info({ reason: failure.reason, err: failure.detail instanceof Error ? failure.detail : undefined, detail: failure.detail instanceof Error ? undefined : failure.detail }, 'single sign-on failed');
    recordNothing(request);
    reply.header('Cache-Control', 'no-store');
    return reply.redirect(`${consolePrefix}/?sso_error=${failure.reason}`, 303);
  };

  app.get(
    '/sso-settings',
    {
      config: { right: 'users:write' },
      schema: {
        operationId: 'getSsoSettings',
        summary: "Read the workspace's single sign-on",
        description: 'The OpenID Connect provider its users sign in with, and the redirect URI to register there. The client secret is never shown.',
        tags: ['Session'],
        response: { 200: Type.Ref(SsoSettings), 404: errorResponse('The workspace has no single sign-on.') },
      },
    },
    async (request) => {
      const context = requestContext(deps, request);
      return sso.getSettings(context.db, context.workspaceId, redirectUriOf(request));
    },
  );

  app.put(
    '/sso-settings',
    {
      config: { right: 'users:write' },
      schema: {
        operationId: 'putSsoSettings',
        summary: "Set the workspace's single sign-on",
        description:
          "Names the workspace's OpenID Connect provider. The issuer's discovery document is read at once: an issuer that cannot be discovered is refused (400, path [\"issuer\"]; the provider's answer goes to the server log). " +
          'Register the answer\'s `redirectUri` at the provider. People at `jitDomains` become users at their first sign-in, with `jitRole`; anyone else must be a user (or invited) already. ' +
          'The client secret is sealed under the service\'s secret key (SECRETS_KEY) and never shown again.',
        tags: ['Session'],
        body: PutSsoSettingsBody,
        response: { 200: Type.Ref(SsoSettings), 400: errorResponse('Invalid input; `path` names the field (["issuer"] also when the issuer is not allowed or cannot be discovered).') },
      },
    },
    async (request) => {
      try {
        return await sso.putSettings(requestContext(deps, request), request.body, redirectUriOf(request));
      } catch (error) {
        if (!(error instanceof SsoSettingsRefused)) throw error;
        request.log.warn({ err: error.detail }, 'single sign-on: the issuer could not be discovered');
        throw badRequest("The issuer's discovery document (<issuer>/.well-known/openid-configuration) could not be read, or it is not a valid OpenID Connect provider's for this issuer", ['issuer']);
      }
    },
  );

  app.delete(
    '/sso-settings',
    {
      config: { right: 'users:write' },
      schema: {
        operationId: 'deleteSsoSettings',
        summary: "Remove the workspace's single sign-on",
        description: "Users sign in by password or emailed link again; their sessions begun by SSO go on until they end. Links to the provider's identities are kept, for settings set again.",
        tags: ['Session'],
        response: { 200: Type.Ref(SsoSettingsDeleted), 404: errorResponse('The workspace has no single sign-on.') },
      },
    },
    async (request) => {
      const context = requestContext(deps, request);
      return sso.deleteSettings(context.db, context.workspaceId);
    },
  );

  app.get(
    '/session/oidc/start',
    {
      config: { public: true },
      schema: {
        operationId: 'startSsoSignIn',
        summary: 'Sign in through the workspace\'s identity provider',
        description:
          `For a browser: sends it (303) to the workspace's OpenID Connect provider, with a cookie that binds the answer to this browser for ${SSO_ATTEMPT_MINUTES} minutes. ` +
          'A workspace without single sign-on, or a provider that cannot be reached, sends it back to the console\'s sign-in page with `?sso_error=` and a reason.',
        tags: ['Session'],
        querystring: SsoStartQuery,
        response: {
          303: redirect(
            "To the provider's authorization endpoint, or back to the console's sign-in page with `?sso_error=`.",
            'https://login.example.org/authorize?client_id=recruit-ops&response_type=code&scope=openid+email+profile&redirect_uri=https%3A%2F%2Frecruit.example.org%2Fv1%2Fsession%2Foidc%2Fcallback&state=…&nonce=…&code_challenge=…&code_challenge_method=S256',
            '/console/?sso_error=unavailable',
          ),
          400: errorResponse('Invalid input (path ["workspace"]).'),
          429: plainText('Too Many Requests: this client address has spent its sign-in attempts for the window; retry after Retry-After seconds.', 'Too Many Requests'),
        },
      },
    },
    async (request, reply) => {
      const decision = await limiter.consume(`address:${request.ip}`);
      setRateLimitHeaders(reply, decision);
      if (!decision.allowed) {
        reply.header('Retry-After', decision.retryAfterSeconds);
        return sendError(reply, new ApiError('TOO_MANY_REQUESTS'));
      }
      try {
        const started = await sso.start(deps.db, deps.clock, request.query.workspace, redirectUriOf(request));
        setFlowCookie(reply, started.flowSecret, SSO_ATTEMPT_MINUTES * 60);
        reply.header('Cache-Control', 'no-store');
        return reply.redirect(started.location, 303);
      } catch (error) {
        if (error instanceof SsoFailed) return failed(request, reply, error);
        throw error;
      }
    },
  );

  app.get(
    '/session/oidc/callback',
    {
      config: { public: true, audit: { resourceType: 'session', writesOnGet: true } },
      schema: {
        operationId: 'finishSsoSignIn',
        summary: "The identity provider's answer",
        description:
          'Where the provider sends the browser back (the redirect URI). With the flow cookie of the same browser, a valid code, state and nonce, and a user the workspace knows (or one of its just-in-time domains): a session cookie, and 303 to the console. ' +
          "Otherwise 303 to the console's sign-in page with `?sso_error=` and a reason: expired (no attempt in this browser, or older than 10 minutes), denied (the provider said no), provider (its answer did not check out), " +
          'unverified_email, no_account, deactivated, unavailable.',
        tags: ['Session'],
        querystring: SsoCallbackQuery,
        response: {
          303: redirect('To the console, signed in; or to its sign-in page with `?sso_error=`.', '/console/?sso=signed-in', '/console/?sso_error=expired'),
          400: errorResponse('Invalid input: a parameter longer than a provider sends (`path` names it).'),
        },
      },
    },
    async (request, reply) => {
      // The query as received: the provider's own parameters (iss, session_state…) are part of what is checked.
      const query = new URL(request.url, 'http://callback.invalid').searchParams;
      setFlowCookie(reply, '', 0);
      try {
        const started = await sso.finish(deps.db, deps.clock, cookieOf(request, ssoFlowCookieName), query);
        const previous = sessionSecretOf(request);
        if (previous !== undefined) {
          const ended = await service.endSession(deps.db, deps.clock, previous);
          if (ended) deps.principals.invalidateUser(ended.workspaceId, ended.userId);
        }
        setSessionCookie(reply, started.secret, service.SESSION_DAYS * 86_400, secureCookies);
        const { workspaceId, userId, sessionId } = started.info;
        attributeWrite(request, { workspaceId, actor: { kind: 'USER', userId, credentialId: sessionId }, resourceType: 'session', resourceId: sessionId });
        reply.header('Cache-Control', 'no-store');
        return reply.redirect(`${consolePrefix}/?sso=signed-in`, 303);
      } catch (error) {
        if (error instanceof SsoFailed) return failed(request, reply, error);
        throw error;
      }
    },
  );
};
