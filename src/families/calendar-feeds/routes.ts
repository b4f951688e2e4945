import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { requestContext, type ServiceDeps } from '../../context.js';
import { ApiError, notFound, sendError } from '../../http/errors.js';
import { errorResponse } from '../../http/schemas.js';
import { CalendarFeedList, CalendarFeedParams, CreatedCalendarFeed, RevokedCalendarFeed } from './schemas.js';
import * as service from './service.js';

const tags = ['Calendar feeds'];

/** The origin feed URLs point at: PUBLIC_URL, else the one this request came to (a single instance, tried locally). */
function publicUrlOf(deps: ServiceDeps, request: FastifyRequest): string {
  return deps.config.publicUrl ?? `${request.protocol}://${request.host}`;
}

const whatItHolds =
  "The calendar holds the user's hosted sessions that have at least one live booking, in every study of the workspace, from 30 days ago on: each with the study's name and the places booked, " +
  'never a participant (no name, address or id: the URL opens it without signing in). Guide: docs/api/scheduling.md#calendar.';

/**
 * The API of a user's calendar feeds (under /v1). Making one takes studies:write, the right of
 * the roles that run sessions (not OBSERVER nor CUSTOM): a feed is a long-lived bearer URL, a
 * credential, even if what it shows is only the caller's own sessions and counts of places.
 * Listing and revoking one's own take studies:read: any user may see and stop what they hold.
 */
export const calendarFeedsRoutes: FastifyPluginAsyncTypebox<{ deps: ServiceDeps }> = async (app, { deps }) => {
  const context = (request: FastifyRequest) => requestContext(deps, request);

  app.post(
    '/calendar-feeds',
    {
      config: { right: 'studies:write' },
      schema: {
        operationId: 'createCalendarFeed',
        summary: 'Make a calendar feed of the sessions you host',
        description:
          "Makes a subscribable calendar (iCalendar, METHOD:PUBLISH) of the calling token's user's hosted sessions and answers its `url`, once: the service keeps only the SHA-256 of its token. " +
          `A user holds at most ${service.MAX_ACTIVE_FEEDS} unrevoked feeds (409). ${whatItHolds} ` +
          'The origin of `url` is PUBLIC_URL, or the one this request came to when PUBLIC_URL is not set.',
        tags,
        response: {
          201: Type.Ref(CreatedCalendarFeed),
          409: errorResponse(`The user already holds ${service.MAX_ACTIVE_FEEDS} unrevoked feeds; \`path\` is ["calendarFeeds"].`),
        },
      },
    },
    async (request, reply) => reply.code(201).send(await service.createFeed(context(request), publicUrlOf(deps, request))),
  );

  app.get(
    '/calendar-feeds',
    {
      config: { right: 'studies:read' },
      schema: {
        operationId: 'listCalendarFeeds',
        summary: 'List your calendar feeds',
        description: "The calling token's user's unrevoked feeds, oldest first, without their URLs (which only their creation answers).",
        tags,
        response: { 200: CalendarFeedList },
      },
    },
    async (request) => service.listFeeds(context(request)),
  );

  app.delete(
    '/calendar-feeds/:feedId',
    {
      config: { right: 'studies:read' },
      schema: {
        operationId: 'revokeCalendarFeed',
        summary: 'Revoke a calendar feed',
        description: 'Its URL answers 404 from now on, as an unknown one does. Only the feed\'s own user revokes it (anyone who can see it may stop it).',
        tags,
        params: CalendarFeedParams,
        response: {
          200: RevokedCalendarFeed,
          404: errorResponse("Calendar feed not found: another user's or another workspace's, or revoked already; `path` is [\"feedId\"]."),
        },
      },
    },
    async (request) => service.revokeFeed(context(request), request.params.feedId),
  );
};

/**
 * The public feed: `GET /calendar/<token>.ics`, for calendar applications (no API token: the URL
 * is the credential). Rate-limited per client address before any lookup, and per feed after.
 * A malformed, unknown or revoked token, or one of a deactivated user, gets the same 404.
 */
export const calendarFeedPublicRoutes: FastifyPluginAsyncTypebox<{ deps: ServiceDeps }> = async (app, { deps }) => {
  const perAddress = deps.limiter.withBudget({ name: 'calendar-feed-address', max: deps.config.participantRateLimitMax });
  const perFeed = deps.limiter.withBudget({ name: 'calendar-feed', max: deps.config.participantLinkRateLimitMax });

  const setHeaders = (reply: FastifyReply) => {
    // The URL holds the feed's token: it goes to no other site, and no shared cache keeps it.
    reply.header('Referrer-Policy', 'no-referrer');
    reply.header('X-Content-Type-Options', 'nosniff');
    reply.header('Cache-Control', 'private, no-store');
  };
  const refuse = (reply: FastifyReply, retryAfterSeconds: number) => {
    reply.header('Retry-After', retryAfterSeconds);
    return sendError(reply, new ApiError('TOO_MANY_REQUESTS'));
  };
  const unknown = (reply: FastifyReply) => sendError(reply, notFound('Calendar feed', ['token']));

  app.get<{ Params: { file: string } }>(
    '/calendar/:file',
    { config: { public: true }, schema: { hide: true } },
    async (request, reply) => {
      setHeaders(reply);
      const byAddress = await perAddress.consume(`address:${request.ip}`);
      if (!byAddress.allowed) return refuse(reply, byAddress.retryAfterSeconds);
      // Accepted in the one spelling the service wrote: a percent-encoded path is another spelling.
      const spelled = (request.raw.url ?? '').split('?')[0]!.split('/')[2];
      const file = spelled === request.params.file ? request.params.file : '';
      const token = file.endsWith('.ics') ? file.slice(0, -'.ics'.length) : '';
      const feed = await service.resolveFeed(deps.db, token);
      if (!feed) return unknown(reply);
      const byFeed = await perFeed.consume(`feed:${feed.feed_id}`);
      if (!byFeed.allowed) return refuse(reply, byFeed.retryAfterSeconds);
      const ics = await service.feedCalendar(deps.tenantDb(feed.workspace_id), feed, deps.clock.now(), publicUrlOf(deps, request));
      reply.header('Content-Disposition', 'inline; filename="sessions.ics"');
      return reply.type('text/calendar; charset=utf-8').send(ics);
    },
  );
};
