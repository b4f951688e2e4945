import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';

type Executor = Kysely<DB>;

/**
 * The person-access family's SQL: sign-in links and person sessions. Tokens are looked up by their
 * digest across workspaces (the token names its workspace), on the owner's handle; everything else
 * carries the workspace in its WHERE.
 */

export async function insertLink(db: Executor, link: { workspaceId: string; linkId: string; personId: string; tokenSha256: Buffer; createdAt: string; expiresAt: string }) {
  await db
    .insertInto('person_access_links')
    .values({ workspace_id: link.workspaceId, link_id: link.linkId, person_id: link.personId, token_sha256: link.tokenSha256, created_at: link.createdAt, expires_at: link.expiresAt })
    .execute();
}

export async function findLinkByDigest(db: Executor, tokenSha256: Buffer) {
  return db.selectFrom('person_access_links').where('token_sha256', '=', tokenSha256).select(['workspace_id', 'link_id', 'person_id', 'expires_at', 'used_at']).executeTakeFirst();
}

/** Spends the link: one conditional update, so of any number of racing posts exactly one gets the row back. */
export async function spendLink(db: Executor, tokenSha256: Buffer, at: string) {
  return db
    .updateTable('person_access_links')
    .set({ used_at: at })
    .where('token_sha256', '=', tokenSha256)
    .where('used_at', 'is', null)
    .where('expires_at', '>', at)
    .returning(['workspace_id', 'link_id', 'person_id'])
    .executeTakeFirst();
}

export async function deleteLink(db: Executor, workspaceId: string, linkId: string) {
  await db.deleteFrom('person_access_links').where('workspace_id', '=', workspaceId).where('link_id', '=', linkId).execute();
}

export async function insertSession(db: Executor, session: { workspaceId: string; sessionId: string; personId: string; tokenSha256: Buffer; createdAt: string; expiresAt: string }) {
  await db
    .insertInto('person_sessions')
    .values({
      workspace_id: session.workspaceId,
      session_id: session.sessionId,
      person_id: session.personId,
      token_sha256: session.tokenSha256,
      created_at: session.createdAt,
      last_seen_at: session.createdAt,
      expires_at: session.expiresAt,
    })
    .execute();
}

/**
 * The live session of this digest, its last-seen time moved to `at`: one update that holds the
 * rules (not ended, before its hard end, seen within the idle limit) and answers nothing otherwise.
 */
export async function touchSession(db: Executor, tokenSha256: Buffer, at: string, idleSince: string) {
  return db
    .updateTable('person_sessions as s')
    .set({ last_seen_at: at })
    .where('s.token_sha256', '=', tokenSha256)
    .where('s.ended_at', 'is', null)
    .where('s.expires_at', '>', at)
    .where('s.last_seen_at', '>', idleSince)
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('people as p')
          .whereRef('p.workspace_id', '=', 's.workspace_id')
          .whereRef('p.person_id', '=', 's.person_id')
          .where('p.deleted_at', 'is', null)
          .select('p.person_id'),
      ),
    )
    .returning(['s.workspace_id', 's.session_id', 's.person_id'])
    .executeTakeFirst();
}

export async function endSession(db: Executor, tokenSha256: Buffer, at: string) {
  await db.updateTable('person_sessions').set({ ended_at: at }).where('token_sha256', '=', tokenSha256).where('ended_at', 'is', null).execute();
}

/** Removes every link and session of these people (their erasure: no way in stays). */
export async function deleteAccessOfPeople(db: Executor, workspaceId: string, personIds: readonly string[]) {
  if (personIds.length === 0) return;
  await db.deleteFrom('person_sessions').where('workspace_id', '=', workspaceId).where('person_id', 'in', personIds).execute();
  await db.deleteFrom('person_access_links').where('workspace_id', '=', workspaceId).where('person_id', 'in', personIds).execute();
}
