import { type Kysely, sql } from 'kysely';
import type { DB } from '../../db/schema.js';

const feedColumns = ['feed_id', 'user_id', 'created_at', 'last_used_at'] as const;

export async function countActiveFeeds(db: Kysely<DB>, workspaceId: string, userId: string): Promise<number> {
  const row = await db
    .selectFrom('calendar_feeds')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('workspace_id', '=', workspaceId)
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

export async function insertFeed(db: Kysely<DB>, feed: { workspaceId: string; feedId: string; userId: string; sha256: Buffer; at: string }) {
  return db
    .insertInto('calendar_feeds')
    .values({ workspace_id: feed.workspaceId, feed_id: feed.feedId, user_id: feed.userId, token_sha256: feed.sha256, created_at: feed.at })
    .returning(feedColumns)
    .executeTakeFirstOrThrow();
}

export async function listActiveFeeds(db: Kysely<DB>, workspaceId: string, userId: string) {
  return db
    .selectFrom('calendar_feeds')
    .select(feedColumns)
    .where('workspace_id', '=', workspaceId)
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .orderBy('feed_id')
    .execute();
}

/** Revokes the user's own unrevoked feed; undefined when there is none of that id (another user's, another workspace's, revoked already). */
export async function revokeFeed(db: Kysely<DB>, workspaceId: string, userId: string, feedId: string, at: string) {
  return db
    .updateTable('calendar_feeds')
    .set({ revoked_at: at })
    .where('workspace_id', '=', workspaceId)
    .where('user_id', '=', userId)
    .where('feed_id', '=', feedId)
    .where('revoked_at', 'is', null)
    .returning(['feed_id', 'revoked_at'])
    .executeTakeFirst();
}

/** The feed a token's digest names, in any workspace (read with the owner's handle, before the workspace is known), with its user and workspace. */
export async function findFeedByDigest(ownerDb: Kysely<DB>, sha256: Buffer) {
  return ownerDb
    .selectFrom('calendar_feeds as f')
    .innerJoin('users as u', (join) => join.onRef('u.workspace_id', '=', 'f.workspace_id').onRef('u.user_id', '=', 'f.user_id'))
    .innerJoin('workspaces as w', 'w.workspace_id', 'f.workspace_id')
    .select(['f.workspace_id', 'f.feed_id', 'f.user_id', 'f.revoked_at', 'f.last_used_at', 'u.status as user_status', 'u.fullname', 'w.name as workspace_name'])
    .where('f.token_sha256', '=', sha256)
    .executeTakeFirst();
}

/** Notes a fetch, at most once a quarter hour: a calendar polling often costs no write each time. */
export async function touchFeed(db: Kysely<DB>, workspaceId: string, feedId: string, at: string): Promise<void> {
  const quarterHourAgo = new Date(Date.parse(at) - 15 * 60_000).toISOString();
  await db
    .updateTable('calendar_feeds')
    .set({ last_used_at: at })
    .where('workspace_id', '=', workspaceId)
    .where('feed_id', '=', feedId)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', quarterHourAgo)]))
    .execute();
}

/**
 * The user's hosted sessions, in every study of the workspace, that start at `from` or later and
 * hold at least one live (BOOKED) booking, with that count: no column of a booking or a person
 * leaves this query. Led by sessions_of_host (booked > 0); the count is of the bookings themselves.
 */
export async function hostedSessions(db: Kysely<DB>, workspaceId: string, userId: string, from: string, limit: number) {
  const live = sql<string>`(select count(*) from bookings b where b.workspace_id = s.workspace_id and b.session_id = s.session_id and b.status = 'BOOKED')`;
  return db
    .selectFrom('sessions as s')
    .innerJoin('studies as st', (join) => join.onRef('st.workspace_id', '=', 's.workspace_id').onRef('st.study_id', '=', 's.study_id'))
    .select(['s.session_id', 's.study_id', 's.starts_at', 's.ends_at', 's.capacity', 's.updated_at', 'st.plan', live.as('live_bookings')])
    .where('s.workspace_id', '=', workspaceId)
    .where('s.host_user_id', '=', userId)
    .where('s.booked', '>', 0)
    .where('s.starts_at', '>=', from)
    .where(sql<boolean>`${live} > 0`)
    .orderBy('s.starts_at')
    .limit(limit)
    .execute();
}
