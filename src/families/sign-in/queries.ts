import type { Insertable, Kysely } from 'kysely';
import type { DB, SsoSettingsTable, SsoSignInAttemptsTable, UserRole, UserSessionMethod } from '../../db/schema.js';
import { idPrefixes, newId } from '../../ids.js';

type Executor = Kysely<DB>;

/**
 * The sign-in family's SQL: links emailed to users, console sessions and passwords. Links and
 * sessions are found by their digest across workspaces (on the owner's handle: the workspace is
 * not known before); everything else carries the workspace in its WHERE.
 */

export async function findUserByEmail(db: Executor, workspaceId: string, email: string) {
  return db
    .selectFrom('users')
    .where('workspace_id', '=', workspaceId)
    .where((eb) => eb(eb.fn('lower', ['email']), '=', email.toLowerCase()))
    .select(['user_id as userId', 'status', 'email'])
    .executeTakeFirst();
}

export async function findUser(db: Executor, workspaceId: string, userId: string) {
  return db.selectFrom('users').where('workspace_id', '=', workspaceId).where('user_id', '=', userId).select(['user_id as userId', 'status', 'email', 'fullname']).executeTakeFirst();
}

export async function findWorkspaceBySlug(db: Executor, slug: string) {
  return db.selectFrom('workspaces').where('slug', '=', slug).select(['workspace_id as workspaceId', 'name']).executeTakeFirst();
}

/** The user of this address with their password hash, when ACTIVE and a password is set. */
export async function findPasswordOfEmail(db: Executor, workspaceId: string, email: string) {
  return db
    .selectFrom('users as u')
    .innerJoin('user_passwords as p', (join) => join.onRef('p.workspace_id', '=', 'u.workspace_id').onRef('p.user_id', '=', 'u.user_id'))
    .where('u.workspace_id', '=', workspaceId)
    .where((eb) => eb(eb.fn('lower', ['u.email']), '=', email.toLowerCase()))
    .where('u.status', '=', 'ACTIVE')
    .select(['u.user_id as userId', 'p.password_hash as passwordHash'])
    .executeTakeFirst();
}

export async function findPasswordHash(db: Executor, workspaceId: string, userId: string) {
  return (await db.selectFrom('user_passwords').where('workspace_id', '=', workspaceId).where('user_id', '=', userId).select('password_hash').executeTakeFirst())?.password_hash;
}

export async function setPasswordHash(db: Executor, workspaceId: string, userId: string, hash: string, at: string) {
  await db
    .insertInto('user_passwords')
    .values({ workspace_id: workspaceId, user_id: userId, password_hash: hash, updated_at: at })
    .onConflict((oc) => oc.columns(['workspace_id', 'user_id']).doUpdateSet({ password_hash: hash, updated_at: at }))
    .execute();
}

export async function insertLink(db: Executor, link: { workspaceId: string; linkId: string; userId: string; purpose: 'INVITATION' | 'SIGN_IN'; tokenSha256: Buffer; createdAt: string; expiresAt: string }) {
  await db
    .insertInto('user_sign_in_links')
    .values({ workspace_id: link.workspaceId, link_id: link.linkId, user_id: link.userId, purpose: link.purpose, token_sha256: link.tokenSha256, created_at: link.createdAt, expires_at: link.expiresAt })
    .execute();
}

/** Removes the user's links of this purpose not yet spent: a new one replaces them. */
export async function deleteOpenLinks(db: Executor, workspaceId: string, userId: string, purpose: 'INVITATION' | 'SIGN_IN') {
  await db.deleteFrom('user_sign_in_links').where('workspace_id', '=', workspaceId).where('user_id', '=', userId).where('purpose', '=', purpose).where('used_at', 'is', null).execute();
}

export async function deleteLink(db: Executor, workspaceId: string, linkId: string) {
  await db.deleteFrom('user_sign_in_links').where('workspace_id', '=', workspaceId).where('link_id', '=', linkId).execute();
}

/** Spends a link of this purpose: one conditional update, so of any number of racing posts exactly one gets the row back. */
export async function spendLink(db: Executor, tokenSha256: Buffer, purpose: 'INVITATION' | 'SIGN_IN', at: string) {
  return db
    .updateTable('user_sign_in_links')
    .set({ used_at: at })
    .where('token_sha256', '=', tokenSha256)
    .where('purpose', '=', purpose)
    .where('used_at', 'is', null)
    .where('expires_at', '>', at)
    .returning(['workspace_id as workspaceId', 'user_id as userId'])
    .executeTakeFirst();
}

/** INVITED → ACTIVE; undefined when the user is no longer INVITED (revoked, or accepted meanwhile). */
export async function activateInvitedUser(db: Executor, workspaceId: string, userId: string, at: string) {
  return db
    .updateTable('users')
    .set({ status: 'ACTIVE', updated_at: at })
    .where('workspace_id', '=', workspaceId)
    .where('user_id', '=', userId)
    .where('status', '=', 'INVITED')
    .returning('user_id')
    .executeTakeFirst();
}

export async function userStatus(db: Executor, workspaceId: string, userId: string) {
  return (await db.selectFrom('users').where('workspace_id', '=', workspaceId).where('user_id', '=', userId).select('status').executeTakeFirst())?.status;
}

export async function insertSession(db: Executor, session: { workspaceId: string; sessionId: string; userId: string; method: UserSessionMethod; tokenSha256: Buffer; createdAt: string; expiresAt: string }) {
  await db
    .insertInto('user_sessions')
    .values({
      workspace_id: session.workspaceId,
      session_id: session.sessionId,
      user_id: session.userId,
      method: session.method,
      token_sha256: session.tokenSha256,
      created_at: session.createdAt,
      last_seen_at: session.createdAt,
      expires_at: session.expiresAt,
    })
    .execute();
}

export interface LiveSession {
  workspaceId: string;
  sessionId: string;
  userId: string;
  role: UserRole;
  /** The rights of the user's custom role (role CUSTOM), else null. */
  customRoleRights: string[] | null;
  method: UserSessionMethod;
  createdAt: string | Date;
  expiresAt: string | Date;
}

/**
 * The live session of this digest, its last-seen time moved to `at`: one update that holds every
 * rule (not ended, before its hard end, seen within the idle limit, its user ACTIVE) and answers
 * nothing otherwise.
 */
export async function touchSession(db: Executor, tokenSha256: Buffer, at: string, idleSince: string): Promise<LiveSession | undefined> {
  return db
    .updateTable('user_sessions as s')
    .from('users as u')
    .set({ last_seen_at: at })
    .whereRef('u.workspace_id', '=', 's.workspace_id')
    .whereRef('u.user_id', '=', 's.user_id')
    .where('u.status', '=', 'ACTIVE')
    .where('s.token_sha256', '=', tokenSha256)
    .where('s.ended_at', 'is', null)
    .where('s.expires_at', '>', at)
    .where('s.last_seen_at', '>', idleSince)
    .returning((eb) => [
      's.workspace_id as workspaceId',
      's.session_id as sessionId',
      's.user_id as userId',
      'u.role as role',
      eb
        .selectFrom('custom_roles as r')
        .whereRef('r.workspace_id', '=', 'u.workspace_id')
        .whereRef('r.custom_role_id', '=', 'u.custom_role_id')
        .select('r.rights')
        .as('customRoleRights'),
      's.method as method',
      's.created_at as createdAt',
      's.expires_at as expiresAt',
    ])
    .executeTakeFirst();
}

export async function endSessionByDigest(db: Executor, tokenSha256: Buffer, at: string) {
  return db.updateTable('user_sessions').set({ ended_at: at }).where('token_sha256', '=', tokenSha256).where('ended_at', 'is', null).returning(['workspace_id as workspaceId', 'user_id as userId']).executeTakeFirst();
}

export async function endSessionsOfUser(db: Executor, workspaceId: string, userId: string, at: string): Promise<number> {
  const ended = await db.updateTable('user_sessions').set({ ended_at: at }).where('workspace_id', '=', workspaceId).where('user_id', '=', userId).where('ended_at', 'is', null).executeTakeFirst();
  return Number(ended.numUpdatedRows);
}

export async function teamsFound(db: Executor, workspaceId: string, teamIds: readonly string[]): Promise<Set<string>> {
  if (teamIds.length === 0) return new Set();
  const rows = await db.selectFrom('teams').where('workspace_id', '=', workspaceId).where('team_id', 'in', teamIds).select('team_id').execute();
  return new Set(rows.map((row) => row.team_id));
}

// Single sign-on (sso.ts): the workspace's provider, attempts in flight, and users' identities at the provider.

const ssoSettingsColumns = ['workspace_id', 'issuer', 'client_id', 'client_secret_sealed', 'jit_domains', 'jit_role', 'enabled', 'version', 'updated_at'] as const;

export async function findSsoSettings(db: Executor, workspaceId: string) {
  return db.selectFrom('sso_settings').where('workspace_id', '=', workspaceId).select(ssoSettingsColumns).executeTakeFirst();
}

export async function upsertSsoSettings(db: Executor, row: Insertable<SsoSettingsTable>) {
  const { workspace_id: _workspace, ...changes } = row;
  return db
    .insertInto('sso_settings')
    .values(row)
    .onConflict((oc) => oc.column('workspace_id').doUpdateSet(changes))
    .returning(ssoSettingsColumns)
    .executeTakeFirstOrThrow();
}

export async function deleteSsoSettings(db: Executor, workspaceId: string): Promise<boolean> {
  const deleted = await db.deleteFrom('sso_settings').where('workspace_id', '=', workspaceId).executeTakeFirst();
  await db.deleteFrom('sso_sign_in_attempts').where('workspace_id', '=', workspaceId).execute();
  return Number(deleted.numDeletedRows) > 0;
}

/** Keeps an attempt; the workspace's attempts past their time go first (no sweep needed). */
export async function insertSsoAttempt(db: Executor, row: Insertable<SsoSignInAttemptsTable>) {
  await db.deleteFrom('sso_sign_in_attempts').where('workspace_id', '=', row.workspace_id).where('expires_at', '<=', row.created_at).execute();
  await db.insertInto('sso_sign_in_attempts').values(row).execute();
}

/** Spends the attempt of this flow digest: one delete, so of racing callbacks exactly one gets it. */
export async function spendSsoAttempt(db: Executor, flowSha256: Buffer, at: string) {
  const spent = await db
    .deleteFrom('sso_sign_in_attempts')
    .where('flow_sha256', '=', flowSha256)
    .returning(['workspace_id', 'settings_version', 'state', 'nonce', 'code_verifier', 'redirect_uri', 'expires_at'])
    .executeTakeFirst();
  return spent && new Date(spent.expires_at).getTime() > Date.parse(at) ? spent : undefined;
}

export async function findUserBySsoIdentity(db: Executor, workspaceId: string, issuer: string, subject: string) {
  return db
    .selectFrom('user_sso_identities as i')
    .innerJoin('users as u', (join) => join.onRef('u.workspace_id', '=', 'i.workspace_id').onRef('u.user_id', '=', 'i.user_id'))
    .where('i.workspace_id', '=', workspaceId)
    .where('i.issuer', '=', issuer)
    .where('i.subject', '=', subject)
    .select(['u.user_id as userId', 'u.status', 'u.email'])
    .executeTakeFirst();
}

export async function insertSsoIdentity(db: Executor, identity: { workspaceId: string; issuer: string; subject: string; userId: string; at: string }) {
  await db
    .insertInto('user_sso_identities')
    .values({ workspace_id: identity.workspaceId, issuer: identity.issuer, subject: identity.subject, user_id: identity.userId, created_at: identity.at })
    .execute();
}

/** A member by just-in-time membership: ACTIVE at once, the workspace's chosen role. */
export async function insertJitUser(db: Executor, user: { workspaceId: string; email: string; fullname: string; role: UserRole; at: string }) {
  const userId = newId(idPrefixes.user);
  await db
    .insertInto('users')
    .values({
      workspace_id: user.workspaceId,
      user_id: userId,
      email_account_id: newId(idPrefixes.emailAccount),
      email: user.email,
      fullname: user.fullname,
      status: 'ACTIVE',
      seat: null,
      role: user.role,
      custom_role_id: null,
      created_at: user.at,
      updated_at: user.at,
    })
    .execute();
  return { userId, status: 'ACTIVE' as const, email: user.email };
}
