/**
 * A team signs in (issue 36, items 1 and 2): invitations, sign-in by emailed link and by password,
 * and console sessions. This family is the only code that writes user_sign_in_links,
 * user_sessions and user_passwords.
 *
 * - An invitation makes the user INVITED and emails a link valid INVITATION_DAYS (7 days); a
 *   resend replaces the link (the old one stops working); a revoke removes the invited user.
 * - A sign-in link is emailed on request to an ACTIVE user, valid LINK_MINUTES (15 minutes).
 * - Every link is 32 random bytes (base64url), only its SHA-256 stored, spent once by one
 *   conditional update: of racing posts exactly one wins.
 * - A session is another 32 random bytes in a cookie, only the digest stored; it ends after
 *   SESSION_IDLE_HOURS (12 h) without a request, SESSION_DAYS (7 days) after it began, at sign-out,
 *   at "sign out everywhere", and as soon as its user is no longer ACTIVE.
 */
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Clock } from '../../clock.js';
import type { DB, UserRole, UsersTable, UserSessionMethod } from '../../db/schema.js';
import { ApiError, badRequest, conflict, notFound } from '../../http/errors.js';
import type { Principal } from '../../http/auth.js';
import { effectiveRights } from '../../http/rights.js';
import { csrfTokenOf, sessionDigest } from '../../http/session-cookie.js';
import { idPrefixes, newId } from '../../ids.js';
import { enqueueJob } from '../../jobs/queue.js';
import { linkTokenDigest, isLinkTokenShaped } from '../participant-links/tokens.js';
import { hashPassword, verifyPassword } from './passwords.js';
import * as queries from './queries.js';

export const USER_MAIL_QUEUE = 'sign-in.user-mail';
export const INVITATION_DAYS = 7;
export const LINK_MINUTES = 15;
export const SESSION_IDLE_HOURS = 12;
export const SESSION_DAYS = 7;
/** The session id prefix the contract names (the audit trail tells sessions from keys by it). */
export const SESSION_ID_PREFIX = 'ses';

export type LinkPurpose = 'INVITATION' | 'SIGN_IN';
export interface UserMailPayload {
  userId: string | null;
  purpose: LinkPurpose;
}

/** The one refusal of a link that cannot be spent: unknown, forged, used, expired or replaced. */
export const invalidLink = () => badRequest('The link is not valid: it is unknown, used, replaced or expired. Ask for a new one.', ['token']);

interface AdminContext {
  db: Kysely<DB>;
  clock: Clock;
  workspaceId: string;
  smtpConfigured: boolean;
}

export interface Invitation {
  email: string;
  role: UserRole;
  seat?: Exclude<UsersTable['seat'], null>;
  fullname?: string;
  /** With role CUSTOM only: the custom role the user holds. */
  customRoleId?: string;
  teamIds?: string[];
}

const smtpNeeded = () => conflict('Invitations are emailed: the service has no SMTP settings (SMTP_HOST)', ['email']);

/** Creates the INVITED user and queues the invitation's email, in one transaction. */
export async function invite(context: AdminContext, invitation: Invitation): Promise<{ userId: string; status: 'INVITED'; expiresInDays: number }> {
  if (!context.smtpConfigured) throw smtpNeeded();
  const at = context.clock.now().toISOString();
  return context.db.transaction().execute(async (trx) => {
    if (await queries.findUserByEmail(trx, context.workspaceId, invitation.email)) throw conflict('A user with this email already exists in this workspace', ['email']);
    const teamIds = invitation.teamIds ?? [];
    const found = await queries.teamsFound(trx, context.workspaceId, teamIds);
    teamIds.forEach((teamId, index) => {
      if (!found.has(teamId)) throw notFound('Team', ['teamIds', String(index)]);
    });
    // A CUSTOM user holds one of the workspace's custom roles; any other role holds none (as PATCH /users/{userId}).
    if (invitation.role === 'CUSTOM') {
      if (invitation.customRoleId === undefined) throw badRequest("customRoleId is required with role CUSTOM: the id of one of the workspace's custom roles (GET /custom-roles)", ['customRoleId']);
      const held = await trx.selectFrom('custom_roles').where('workspace_id', '=', context.workspaceId).where('custom_role_id', '=', invitation.customRoleId).select('custom_role_id').executeTakeFirst();
      if (!held) throw notFound('Custom role', ['customRoleId']);
    } else if (invitation.customRoleId !== undefined) {
      throw badRequest(`customRoleId is only for role CUSTOM (the invitation's role is ${invitation.role}): give role CUSTOM, or leave customRoleId out`, ['customRoleId']);
    }
    const userId = newId(idPrefixes.user);
    await trx
      .insertInto('users')
      .values({
        workspace_id: context.workspaceId,
        user_id: userId,
        email_account_id: newId(idPrefixes.emailAccount),
        email: invitation.email,
        fullname: invitation.fullname ?? invitation.email.split('@')[0]!,
        status: 'INVITED',
        seat: invitation.seat ?? null,
        role: invitation.role,
        custom_role_id: invitation.role === 'CUSTOM' ? invitation.customRoleId! : null,
        created_at: at,
        updated_at: at,
      })
      .execute();
    if (teamIds.length > 0) await trx.insertInto('team_members').values(teamIds.map((teamId) => ({ workspace_id: context.workspaceId, team_id: teamId, user_id: userId }))).execute();
    await queueUserMail(trx, context.clock, context.workspaceId, { userId, purpose: 'INVITATION' });
    return { userId, status: 'INVITED' as const, expiresInDays: INVITATION_DAYS };
  });
}

async function invitedUser(db: Kysely<DB>, workspaceId: string, userId: string) {
  const user = await queries.findUser(db, workspaceId, userId);
  if (!user) throw notFound('User', ['userId']);
  if (user.status !== 'INVITED') throw conflict(`The user is ${user.status}, not INVITED: there is no invitation`, ['userId']);
  return user;
}

/** A new link for the invitation: the earlier links stop working now, the new one is emailed. */
export async function resendInvitation(context: AdminContext, userId: string) {
  if (!context.smtpConfigured) throw smtpNeeded();
  return context.db.transaction().execute(async (trx) => {
    await invitedUser(trx, context.workspaceId, userId);
    await queries.deleteOpenLinks(trx, context.workspaceId, userId, 'INVITATION');
    await queueUserMail(trx, context.clock, context.workspaceId, { userId, purpose: 'INVITATION' });
    return { userId, status: 'INVITED' as const, expiresInDays: INVITATION_DAYS };
  });
}

/** Withdraws the invitation: the invited user goes (their links and team memberships with them), so the address can be invited again. */
export async function revokeInvitation(context: AdminContext, userId: string) {
  return context.db.transaction().execute(async (trx) => {
    await invitedUser(trx, context.workspaceId, userId);
    await trx.deleteFrom('team_members').where('workspace_id', '=', context.workspaceId).where('user_id', '=', userId).execute();
    await trx.deleteFrom('api_tokens').where('workspace_id', '=', context.workspaceId).where('user_id', '=', userId).execute();
    await trx.deleteFrom('users').where('workspace_id', '=', context.workspaceId).where('user_id', '=', userId).where('status', '=', 'INVITED').execute();
    return { userId, revoked: true as const };
  });
}

async function queueUserMail(db: Kysely<DB>, clock: Clock, workspaceId: string, payload: UserMailPayload) {
  await enqueueJob(db, clock, { queue: USER_MAIL_QUEUE, workspaceId, payload, maxAttempts: 5, backoffSeconds: 30 });
}

/**
 * A sign-in link asked for: a job is queued whether or not the address is an ACTIVE user's (its
 * payload holds the user's id or null, never the address), so the request does the same work
 * either way and answers the same. The job makes the link and sends it.
 */
export async function requestSignInLink(db: Kysely<DB>, clock: Clock, request: { workspace: string; email: string }): Promise<{ workspaceId: string; userId: string | null } | undefined> {
  const workspace = await queries.findWorkspaceBySlug(db, request.workspace);
  if (!workspace) return undefined;
  const user = await queries.findUserByEmail(db, workspace.workspaceId, request.email);
  const userId = user?.status === 'ACTIVE' ? user.userId : null;
  await queueUserMail(db, clock, workspace.workspaceId, { userId, purpose: 'SIGN_IN' });
  return { workspaceId: workspace.workspaceId, userId };
}

/** Makes a link for the user; the token is in the answer only (the email carries it). */
export async function issueLink(db: Kysely<DB>, workspaceId: string, userId: string, purpose: LinkPurpose, at: string) {
  const token = randomBytes(32).toString('base64url');
  const linkId = newId('usl', Date.parse(at));
  const lifetimeMs = purpose === 'INVITATION' ? INVITATION_DAYS * 86_400_000 : LINK_MINUTES * 60_000;
  const expiresAt = new Date(Date.parse(at) + lifetimeMs).toISOString();
  await db.transaction().execute(async (trx) => {
    await queries.deleteOpenLinks(trx, workspaceId, userId, purpose);
    await queries.insertLink(trx, { workspaceId, linkId, userId, purpose, tokenSha256: linkTokenDigest(token), createdAt: at, expiresAt });
  });
  return { linkId, token, expiresAt };
}

export interface StartedSession {
  secret: string;
  info: SessionInfo;
}

export interface SessionInfo {
  sessionId: string;
  userId: string;
  workspaceId: string;
  method: UserSessionMethod;
  createdAt: string;
  expiresAt: string;
  idleTimeoutSeconds: number;
  csrfToken: string;
}

export function sessionInfo(secret: string, session: { sessionId: string; userId: string; workspaceId: string; method: UserSessionMethod; createdAt: string | Date; expiresAt: string | Date }): SessionInfo {
  return {
    sessionId: session.sessionId,
    userId: session.userId,
    workspaceId: session.workspaceId,
    method: session.method,
    createdAt: new Date(session.createdAt).toISOString(),
    expiresAt: new Date(session.expiresAt).toISOString(),
    idleTimeoutSeconds: SESSION_IDLE_HOURS * 3600,
    csrfToken: csrfTokenOf(secret),
  };
}

/** A new session (a new id and secret at every sign-in), inside the caller's transaction. */
export async function startSession(db: Kysely<DB>, user: { workspaceId: string; userId: string }, method: UserSessionMethod, at: string): Promise<StartedSession> {
  const secret = randomBytes(32).toString('base64url');
  const session = { workspaceId: user.workspaceId, userId: user.userId, sessionId: newId(SESSION_ID_PREFIX, Date.parse(at)), method, createdAt: at, expiresAt: new Date(Date.parse(at) + SESSION_DAYS * 86_400_000).toISOString() };
  await queries.insertSession(db, { ...session, tokenSha256: sessionDigest(secret) });
  return { secret, info: sessionInfo(secret, session) };
}

const linkDigest = (token: string) => (isLinkTokenShaped(token) ? linkTokenDigest(token) : undefined);

/**
 * Accepts an invitation: spends the link, makes the user ACTIVE, keeps the password when one is
 * given, and starts a session; all or nothing.
 */
export async function acceptInvitation(ownerDb: Kysely<DB>, clock: Clock, body: { token: string; password?: string }): Promise<StartedSession> {
  const digest = linkDigest(body.token);
  if (!digest) throw invalidLink();
  // Hashed before the transaction, which then holds no connection for the hash's time.
  const passwordHash = body.password === undefined ? undefined : await hashPassword(body.password);
  const at = clock.now().toISOString();
  return ownerDb.transaction().execute(async (trx) => {
    const spent = await queries.spendLink(trx, digest, 'INVITATION', at);
    if (!spent) throw invalidLink();
    if (!(await queries.activateInvitedUser(trx, spent.workspaceId, spent.userId, at))) throw invalidLink();
    if (passwordHash !== undefined) await queries.setPasswordHash(trx, spent.workspaceId, spent.userId, passwordHash, at);
    return startSession(trx, spent, 'INVITATION', at);
  });
}

/** Spends an emailed sign-in link of an ACTIVE user and starts a session. */
export async function redeemSignInLink(ownerDb: Kysely<DB>, clock: Clock, token: string): Promise<StartedSession> {
  const digest = linkDigest(token);
  if (!digest) throw invalidLink();
  const at = clock.now().toISOString();
  return ownerDb.transaction().execute(async (trx) => {
    const spent = await queries.spendLink(trx, digest, 'SIGN_IN', at);
    if (!spent || (await queries.userStatus(trx, spent.workspaceId, spent.userId)) !== 'ACTIVE') throw invalidLink();
    return startSession(trx, spent, 'LINK', at);
  });
}

/**
 * Signs in by password. An unknown workspace or address, a user not ACTIVE or without a password,
 * and a wrong password all get the same 401 after the same work (a hash verified).
 */
export async function signInWithPassword(ownerDb: Kysely<DB>, clock: Clock, body: { workspace: string; email: string; password: string }): Promise<StartedSession> {
  const workspace = await queries.findWorkspaceBySlug(ownerDb, body.workspace);
  const user = workspace ? await queries.findPasswordOfEmail(ownerDb, workspace.workspaceId, body.email) : undefined;
  const matches = await verifyPassword(user?.passwordHash, body.password);
  if (!workspace || !user || !matches) throw new ApiError('UNAUTHORIZED');
  const at = clock.now().toISOString();
  return ownerDb.transaction().execute((trx) => startSession(trx, { workspaceId: workspace.workspaceId, userId: user.userId }, 'PASSWORD', at));
}

/** Sets the user's password; when one is set, `currentPassword` must be it. */
export async function changePassword(db: Kysely<DB>, clock: Clock, principal: Principal, body: { currentPassword?: string; newPassword: string }) {
  const stored = await queries.findPasswordHash(db, principal.workspaceId, principal.userId);
  if (stored !== undefined) {
    if (body.currentPassword === undefined) throw badRequest('The current password is required to change it', ['currentPassword']);
    if (!(await verifyPassword(stored, body.currentPassword))) throw badRequest('The current password is wrong', ['currentPassword']);
  }
  const hash = await hashPassword(body.newPassword);
  await queries.setPasswordHash(db, principal.workspaceId, principal.userId, hash, clock.now().toISOString());
  return { passwordSet: true as const };
}

/**
 * The principal of a live session (its idle clock restarted), or undefined: what the auth hook's
 * session lookup runs, through the PrincipalCache. A session carries the full personal-data and
 * screener rights of its user's role.
 */
export async function findSessionPrincipal(ownerDb: Kysely<DB>, clock: Clock, digest: Buffer): Promise<Principal | undefined> {
  const now = clock.now();
  const idleSince = new Date(now.getTime() - SESSION_IDLE_HOURS * 3_600_000).toISOString();
  const session = await queries.touchSession(ownerDb, digest, now.toISOString(), idleSince);
  if (!session) return undefined;
  return {
    workspaceId: session.workspaceId,
    userId: session.userId,
    tokenId: session.sessionId,
    role: session.role,
    // A session holds its user's rights whole: the role's, or the custom role's for CUSTOM.
    rights: effectiveRights(session.role, session.customRoleRights ?? null, null),
    canReadPersonalData: true,
    canReadScreeners: true,
    via: 'SESSION',
  };
}

/** Ends the session of this secret (sign-out); answers its user, to drop them from the cache. */
export const endSession = (ownerDb: Kysely<DB>, clock: Clock, secret: string) => queries.endSessionByDigest(ownerDb, sessionDigest(secret), clock.now().toISOString());

/** Ends every session of the user (sign out everywhere): how many were live. */
export const endSessionsOfUser = (db: Kysely<DB>, clock: Clock, workspaceId: string, userId: string) => queries.endSessionsOfUser(db, workspaceId, userId, clock.now().toISOString());
