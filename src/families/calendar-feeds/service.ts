import type { Kysely } from 'kysely';
import type { CallContext } from '../../context.js';
import type { DB } from '../../db/schema.js';
import { conflict, notFound } from '../../http/errors.js';
import { idPrefixes, newUnguessableId } from '../../ids.js';
import { isLinkTokenShaped, linkTokenDigest, newLinkToken } from '../participant-links/tokens.js';
import { feedIcs } from '../scheduling/icalendar.js';
import * as queries from './queries.js';

/** The most unrevoked feeds a user may hold: one per calendar application is the use; more is a leak waiting to happen. */
export const MAX_ACTIVE_FEEDS = 10;
/** How far back a feed reaches: the last month's sessions stay in the calendar, older ones leave it. */
export const FEED_PAST_DAYS = 30;
/** The most sessions one feed answers (the earliest first from FEED_PAST_DAYS ago). */
export const FEED_SESSIONS_MAX = 2000;

const present = (row: { feed_id: string; user_id: string; created_at: string; last_used_at: string | null }) => ({
  feedId: row.feed_id,
  userId: row.user_id,
  createdAt: row.created_at,
  lastUsedAt: row.last_used_at,
});

/** The feed's URL: `PUBLIC_URL/calendar/<token>.ics`. */
export function calendarFeedUrl(publicUrl: string, token: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/calendar/${token}.ics`;
}

/**
 * POST /calendar-feeds: a new feed of the caller's hosted sessions. Its token is made as a
 * participant link's (32 random bytes, base64url; only the SHA-256 kept) and is in this answer
 * only.
 */
export async function createFeed(context: CallContext, publicUrl: string) {
  return context.db.transaction().execute(async (transaction) => {
    if ((await queries.countActiveFeeds(transaction, context.workspaceId, context.userId)) >= MAX_ACTIVE_FEEDS) {
      throw conflict(`A user holds at most ${MAX_ACTIVE_FEEDS} calendar feeds: revoke one first`, ['calendarFeeds']);
    }
    const { token, sha256 } = newLinkToken();
    const at = context.clock.now();
    // Unguessable: the id of a feed tells nothing of the next one's.
    const row = await queries.insertFeed(transaction, { workspaceId: context.workspaceId, feedId: newUnguessableId(idPrefixes.calendarFeed, at.getTime()), userId: context.userId, sha256, at: at.toISOString() });
    return { ...present(row), url: calendarFeedUrl(publicUrl, token) };
  });
}

export async function listFeeds(context: CallContext) {
  return { calendarFeeds: (await queries.listActiveFeeds(context.db, context.workspaceId, context.userId)).map(present) };
}

/** DELETE /calendar-feeds/{feedId}: the caller's own feed stops answering at once; another user's is a 404, as one that never was. */
export async function revokeFeed(context: CallContext, feedId: string) {
  const row = await queries.revokeFeed(context.db, context.workspaceId, context.userId, feedId, context.clock.now().toISOString());
  if (!row) throw notFound('Calendar feed', ['feedId']);
  return { feedId: row.feed_id, revokedAt: row.revoked_at! };
}

export interface FeedFound {
  workspaceId: string;
  feedId: string;
}

/**
 * The feed a token opens, or undefined for a token that is malformed, unknown, revoked, or whose
 * user is deactivated: the caller answers all of these alike.
 */
export async function resolveFeed(ownerDb: Kysely<DB>, token: string) {
  if (!isLinkTokenShaped(token)) return undefined;
  const feed = await queries.findFeedByDigest(ownerDb, linkTokenDigest(token));
  if (!feed || feed.revoked_at !== null || feed.user_status === 'DEACTIVATED') return undefined;
  return feed;
}

type ResolvedFeed = NonNullable<Awaited<ReturnType<typeof resolveFeed>>>;

const places = (count: number) => (count === 1 ? '1 place' : `${count} places`);

/**
 * The feed's calendar: the user's hosted sessions with at least one live booking, in every study
 * of the workspace, from FEED_PAST_DAYS ago on. Counts of places only: the URL is a bearer secret
 * that a calendar application keeps (and may sync to other devices or share), so it names no
 * participant, by name, address or id. The team reads who booked in the console or the API.
 * Written for the team (in English, as the API and the console are).
 */
export async function feedCalendar(db: Kysely<DB>, feed: ResolvedFeed, now: Date, publicUrl: string): Promise<string> {
  const from = new Date(now.getTime() - FEED_PAST_DAYS * 86_400_000).toISOString();
  const sessions = await queries.hostedSessions(db, feed.workspace_id, feed.user_id, from, FEED_SESSIONS_MAX);
  await queries.touchFeed(db, feed.workspace_id, feed.feed_id, now.toISOString());
  const privacy = 'This calendar names no participant: its address opens it without signing in. Who booked is in the console.';
  return feedIcs({
    name: `Sessions you host (${feed.workspace_name})`,
    description: `The sessions ${feed.fullname} hosts with at least one booking, from ${FEED_PAST_DAYS} days ago on, with the places booked. ${privacy}`,
    publicUrl,
    stamp: now,
    sessions: sessions.map((session) => {
      const booked = Number(session.live_bookings);
      const study = session.plan?.name ?? session.plan?.externalName ?? session.study_id;
      return {
        sessionId: session.session_id,
        startsAt: session.starts_at,
        endsAt: session.ends_at,
        updatedAt: session.updated_at,
        summary: `${study} (${booked} of ${places(session.capacity)} booked)`,
        description: `${study}: ${booked} of ${places(session.capacity)} booked. ${privacy}`,
      };
    }),
  });
}
