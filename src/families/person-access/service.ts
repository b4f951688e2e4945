/**
 * A page of the person's own (issue 34, item 6), its way in: a sign-in link emailed to the
 * address the person types, and the session that link starts. The participant's hub pages
 * (src/participant/hub/) call these; this family is the only code that writes its two tables.
 *
 * - A link: 32 random bytes (base64url), only its SHA-256 stored, bound to one workspace and one
 *   person, valid 15 minutes, spent once by one conditional update (used_at is null and not
 *   expired), so two racing posts start one session.
 * - A session: another 32 random bytes in a cookie, only the digest stored; it ends after 30
 *   minutes without a request, 8 hours after it began whatever happens, at sign-out, and when the
 *   person is erased.
 */
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Clock } from '../../clock.js';
import type { DB } from '../../db/schema.js';
import { enqueueJob } from '../../jobs/queue.js';
import { newId } from '../../ids.js';
import { findPersonOfEmail } from '../people/service.js';
import { isLinkTokenShaped, linkTokenDigest } from '../participant-links/tokens.js';
import * as queries from './queries.js';

export const SIGN_IN_QUEUE = 'person-access.sign-in';
export const linkLifetimeMinutes = 15;
export const sessionIdleMinutes = 30;
export const sessionLifetimeHours = 8;

/** A new random token and its digest: what goes to the person, and what is kept. */
export function newAccessToken(): { token: string; sha256: Buffer } {
  const token = randomBytes(32).toString('base64url');
  return { token, sha256: linkTokenDigest(token) };
}

/** The digest of a token as given (a link's path, a cookie), or undefined when it has not a token's shape. */
export function digestOf(token: string | undefined): Buffer | undefined {
  return token !== undefined && isLinkTokenShaped(token) ? linkTokenDigest(token) : undefined;
}

export async function findWorkspaceName(db: Kysely<DB>, workspaceId: string): Promise<string | undefined> {
  return (await db.selectFrom('workspaces').where('workspace_id', '=', workspaceId).select('name').executeTakeFirst())?.name;
}

/**
 * A sign-in asked for with an address: a job is queued whether or not the address is a live
 * person's of the workspace (its payload holds the person's id, or null, and the page's language:
 * never the address), so the request does the same work either way and answers the same page.
 * The job makes the link and sends it (signInHandler).
 */
export async function requestSignIn(db: Kysely<DB>, clock: Clock, request: { workspaceId: string; email: string; locale: string }): Promise<void> {
  const person = await findPersonOfEmail(db, request.workspaceId, request.email);
  await enqueueJob(db, clock, {
    queue: SIGN_IN_QUEUE,
    workspaceId: request.workspaceId,
    payload: { personId: person?.personId ?? null, locale: request.locale },
    maxAttempts: 5,
    backoffSeconds: 30,
  });
}

/** Makes a link for the person; the token is in the answer only (the email carries it). */
export async function issueSignInLink(db: Kysely<DB>, workspaceId: string, personId: string, at: string): Promise<{ linkId: string; token: string; expiresAt: string }> {
  const { token, sha256 } = newAccessToken();
  const linkId = newId('pal', Date.parse(at));
  const expiresAt = new Date(Date.parse(at) + linkLifetimeMinutes * 60_000).toISOString();
  await queries.insertLink(db, { workspaceId, linkId, personId, tokenSha256: sha256, createdAt: at, expiresAt });
  return { linkId, token, expiresAt };
}

export const withdrawSignInLink = (db: Kysely<DB>, workspaceId: string, linkId: string) => queries.deleteLink(db, workspaceId, linkId);

export type LinkState = { kind: 'VALID'; workspaceId: string; personId: string } | { kind: 'USED' } | { kind: 'EXPIRED' } | { kind: 'UNKNOWN' };

/** What a link's GET shows: it reads, never spends (mail scanners open links). */
export async function inspectLink(ownerDb: Kysely<DB>, token: string, at: string): Promise<LinkState> {
  const digest = digestOf(token);
  if (!digest) return { kind: 'UNKNOWN' };
  const link = await queries.findLinkByDigest(ownerDb, digest);
  if (!link) return { kind: 'UNKNOWN' };
  if (link.used_at !== null) return { kind: 'USED' };
  if (Date.parse(link.expires_at) <= Date.parse(at)) return { kind: 'EXPIRED' };
  return { kind: 'VALID', workspaceId: link.workspace_id, personId: link.person_id };
}

/**
 * Spends the link and starts a session, or answers why not. Exactly once: the conditional update
 * hands the row to one caller, however many race.
 */
export async function spendLinkForSession(ownerDb: Kysely<DB>, token: string, at: string): Promise<{ kind: 'STARTED'; sessionToken: string; workspaceId: string; personId: string; expiresAt: string } | Exclude<LinkState, { kind: 'VALID' }>> {
  const digest = digestOf(token);
  if (!digest) return { kind: 'UNKNOWN' };
  return ownerDb.transaction().execute(async (transaction) => {
    const spent = await queries.spendLink(transaction, digest, at);
    if (!spent) {
      const state = await inspectLink(transaction, token, at);
      return state.kind === 'VALID' ? { kind: 'USED' as const } : state;
    }
    const session = newAccessToken();
    const expiresAt = new Date(Date.parse(at) + sessionLifetimeHours * 3_600_000).toISOString();
    await queries.insertSession(transaction, { workspaceId: spent.workspace_id, sessionId: newId('pss', Date.parse(at)), personId: spent.person_id, tokenSha256: session.sha256, createdAt: at, expiresAt });
    return { kind: 'STARTED' as const, sessionToken: session.token, workspaceId: spent.workspace_id, personId: spent.person_id, expiresAt };
  });
}

export interface PersonSession {
  workspaceId: string;
  sessionId: string;
  personId: string;
}

/** The live session of a cookie's token (its idle clock restarted), or undefined. */
export async function resumeSession(ownerDb: Kysely<DB>, token: string | undefined, at: string): Promise<PersonSession | undefined> {
  const digest = digestOf(token);
  if (!digest) return undefined;
  const idleSince = new Date(Date.parse(at) - sessionIdleMinutes * 60_000).toISOString();
  const row = await queries.touchSession(ownerDb, digest, at, idleSince);
  return row ? { workspaceId: row.workspace_id, sessionId: row.session_id, personId: row.person_id } : undefined;
}

export async function endSession(ownerDb: Kysely<DB>, token: string | undefined, at: string): Promise<void> {
  const digest = digestOf(token);
  if (digest) await queries.endSession(ownerDb, digest, at);
}

/** Every link and session of these people goes (their erasure, in its transaction). */
export const deleteAccessOfPeople = queries.deleteAccessOfPeople;

/** The workspace of a link's token, whatever its state (a used or expired link's page offers that workspace's sign-in). */
export async function workspaceOfLink(ownerDb: Kysely<DB>, token: string): Promise<string | undefined> {
  const digest = digestOf(token);
  return digest ? (await queries.findLinkByDigest(ownerDb, digest))?.workspace_id : undefined;
}
