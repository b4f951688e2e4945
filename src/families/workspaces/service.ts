import type { Kysely } from 'kysely';
import type { DB, UserRole, UsersTable } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { digestToken, generateToken } from '../../http/tokens.js';
import { idPrefixes, newId } from '../../ids.js';
import { AdminError } from './errors.js';

export { AdminError };

/** Workspace administration: what the CLI does, and what tests and the demo seed build on. */

function slugify(name: string): string {
  const base = name
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40);
  return base || 'workspace';
}

export interface NewUser {
  workspaceId: string;
  email: string;
  role: UserRole;
  fullName?: string;
  seat?: UsersTable['seat'];
  teams?: string[];
  status?: UsersTable['status'];
  jobRole?: string;
  /** The custom role of a CUSTOM user (required for CUSTOM, refused for any other role). */
  customRoleId?: string;
}

export function createUser(db: Kysely<DB>, user: NewUser, at: Date = new Date()): Promise<{ userId: string }> {
  return inTransaction(db, (trx) => insertUser(trx, user, at));
}

/** A user, inside the caller's transaction. */
async function insertUser(trx: Kysely<DB>, user: NewUser, at: Date): Promise<{ userId: string }> {
  const workspace = await trx.selectFrom('workspaces').where('workspace_id', '=', user.workspaceId).select('workspace_id').executeTakeFirst();
  if (!workspace) throw new AdminError(`Workspace ${user.workspaceId} not found`);
  const taken = await trx
    .selectFrom('users')
    .where('workspace_id', '=', user.workspaceId)
    .where((eb) => eb(eb.fn('lower', ['email']), '=', user.email.toLowerCase()))
    .select('user_id')
    .executeTakeFirst();
  if (taken) throw new AdminError(`A user with email ${user.email} already exists in this workspace`);
  if ((user.role === 'CUSTOM') !== (user.customRoleId !== undefined)) throw new AdminError('A CUSTOM user needs a custom role (--custom-role), and only a CUSTOM user may have one');
  if (user.customRoleId !== undefined) {
    const customRole = await trx
      .selectFrom('custom_roles')
      .where('workspace_id', '=', user.workspaceId)
      .where('custom_role_id', '=', user.customRoleId)
      .select('custom_role_id')
      .executeTakeFirst();
    if (!customRole) throw new AdminError(`Custom role ${user.customRoleId} not found in this workspace`);
  }
  const userId = newId(idPrefixes.user);
  const iso = at.toISOString();
  await trx
    .insertInto('users')
    .values({
      workspace_id: user.workspaceId,
      user_id: userId,
      email_account_id: newId(idPrefixes.emailAccount),
      email: user.email,
      fullname: user.fullName ?? user.email.split('@')[0]!,
      job_role: user.jobRole ?? '',
      status: user.status ?? 'ACTIVE',
      seat: user.seat ?? null,
      role: user.role,
      custom_role_id: user.customRoleId ?? null,
      created_at: iso,
      updated_at: iso,
    })
    .execute();
  for (const teamName of user.teams ?? []) {
    const teamId = await ensureTeam(trx, user.workspaceId, teamName, iso);
    await trx.insertInto('team_members').values({ workspace_id: user.workspaceId, team_id: teamId, user_id: userId }).execute();
  }
  return { userId };
}

/** The team of that name (case-insensitive), created if the workspace has none. */
export async function ensureTeam(db: Kysely<DB>, workspaceId: string, name: string, at: string): Promise<string> {
  const existing = await db
    .selectFrom('teams')
    .where('workspace_id', '=', workspaceId)
    .where((eb) => eb(eb.fn('lower', ['name']), '=', name.toLowerCase()))
    .select('team_id')
    .executeTakeFirst();
  if (existing) return existing.team_id;
  const teamId = newId(idPrefixes.team);
  await db.insertInto('teams').values({ workspace_id: workspaceId, team_id: teamId, name, created_at: at }).execute();
  return teamId;
}

/** A custom role (a set of the API's rights, see assignableRights), as the CLI and tests make one. */
export async function createCustomRole(db: Kysely<DB>, workspaceId: string, name: string, rights: readonly string[], at: Date = new Date()): Promise<{ customRoleId: string }> {
  const customRoleId = newId(idPrefixes.customRole);
  await db
    .insertInto('custom_roles')
    .values({ workspace_id: workspaceId, custom_role_id: customRoleId, name, rights: [...rights], created_at: at.toISOString(), updated_at: at.toISOString() })
    .execute();
  return { customRoleId };
}

export interface TokenRights {
  canReadPersonalData?: boolean;
  canReadScreeners?: boolean;
  /** The rights the key is limited to; absent: all of its user's. */
  rights?: readonly string[];
  name?: string;
  expiresAt?: string;
}

/** A new token for the user. The token is returned once; only its digest is stored. */
export async function createToken(db: Kysely<DB>, workspaceId: string, userId: string, rights: TokenRights = {}, at: Date = new Date()) {
  const user = await db.selectFrom('users').where('workspace_id', '=', workspaceId).where('user_id', '=', userId).select('user_id').executeTakeFirst();
  if (!user) throw new AdminError(`User ${userId} not found`);
  const { token, digest } = generateToken(workspaceId);
  const tokenId = newId(idPrefixes.token);
  await db
    .insertInto('api_tokens')
    .values({
      workspace_id: workspaceId,
      token_id: tokenId,
      user_id: userId,
      token_digest: digest,
      can_read_personal_data: rights.canReadPersonalData ?? true,
      can_read_screeners: rights.canReadScreeners ?? true,
      created_at: at.toISOString(),
      revoked_at: null,
      name: rights.name ?? '',
      rights: rights.rights === undefined ? null : [...rights.rights],
      expires_at: rights.expiresAt ?? null,
    })
    .execute();
  return { token, tokenId };
}

/** A token as the CLI lists it: never the token or its digest. */
export interface TokenListing {
  tokenId: string;
  workspaceId: string;
  userId: string;
  canReadPersonalData: boolean;
  canReadScreeners: boolean;
  createdAt: string;
  revokedAt: string | null;
}

/** The tokens of a user, or of every user of a workspace, oldest first (the CLI's `token list`). */
export async function listTokens(db: Kysely<DB>, filter: { userId: string } | { workspaceId: string }): Promise<TokenListing[]> {
  const rows = await db
    .selectFrom('api_tokens')
    .$if('userId' in filter, (query) => query.where('user_id', '=', (filter as { userId: string }).userId))
    .$if('workspaceId' in filter, (query) => query.where('workspace_id', '=', (filter as { workspaceId: string }).workspaceId))
    .select(['token_id', 'workspace_id', 'user_id', 'can_read_personal_data', 'can_read_screeners', 'created_at', 'revoked_at'])
    .orderBy('token_id')
    .execute();
  return rows.map((row) => ({
    tokenId: row.token_id,
    workspaceId: row.workspace_id,
    userId: row.user_id,
    canReadPersonalData: row.can_read_personal_data,
    canReadScreeners: row.can_read_screeners,
    createdAt: new Date(row.created_at).toISOString(),
    revokedAt: row.revoked_at === null ? null : new Date(row.revoked_at).toISOString(),
  }));
}

/**
 * Revokes one token, named by its id or by the token itself (only its digest is compared): it
 * answers 401 from then on (within AUTH_CACHE_SECONDS on other running instances). Revoking a
 * revoked token changes nothing and answers when it was revoked.
 */
export async function revokeToken(db: Kysely<DB>, which: { tokenId: string } | { token: string }, at: Date = new Date()): Promise<{ tokenId: string; userId: string; revokedAt: string }> {
  const byId = 'tokenId' in which;
  const row = await db
    .selectFrom('api_tokens')
    .$if(byId, (query) => query.where('token_id', '=', (which as { tokenId: string }).tokenId))
    .$if(!byId, (query) => query.where('token_digest', '=', digestToken((which as { token: string }).token)))
    .select(['workspace_id', 'token_id', 'user_id', 'revoked_at'])
    .executeTakeFirst();
  if (!row) throw new AdminError(byId ? `Token ${(which as { tokenId: string }).tokenId} not found` : 'No such token');
  if (row.revoked_at !== null) return { tokenId: row.token_id, userId: row.user_id, revokedAt: new Date(row.revoked_at).toISOString() };
  await db
    .updateTable('api_tokens')
    .set({ revoked_at: at.toISOString() })
    .where('workspace_id', '=', row.workspace_id)
    .where('token_id', '=', row.token_id)
    .where('revoked_at', 'is', null)
    .execute();
  return { tokenId: row.token_id, userId: row.user_id, revokedAt: at.toISOString() };
}

/** The user's workspace, found from the user id alone (the CLI's `token create --user`). */
export async function findUserWorkspace(db: Kysely<DB>, userId: string): Promise<string | undefined> {
  const row = await db.selectFrom('users').where('user_id', '=', userId).select('workspace_id').executeTakeFirst();
  return row?.workspace_id;
}

export async function createWorkspace(
  db: Kysely<DB>,
  input: { name: string; email: string; fullName?: string },
  at: Date = new Date(),
): Promise<{ workspaceId: string; userId: string; token: string }> {
  const workspaceId = newId(idPrefixes.workspace);
  const slug = `${slugify(input.name)}-${workspaceId.slice(-6).toLowerCase()}`;
  // All or nothing: a workspace without its first user and token would be unreachable.
  return inTransaction(db, async (trx) => {
    await trx.insertInto('workspaces').values({ workspace_id: workspaceId, name: input.name, slug, created_at: at.toISOString() }).execute();
    const { userId } = await insertUser(trx, { workspaceId, email: input.email, role: 'SUPER_ADMIN', fullName: input.fullName, seat: 'RESEARCHER_PAID' }, at);
    const { token } = await createToken(trx, workspaceId, userId, {}, at);
    return { workspaceId, userId, token };
  });
}

export async function setUserStatus(db: Kysely<DB>, workspaceId: string, userId: string, status: UsersTable['status'], at: Date = new Date()) {
  const result = await db
    .updateTable('users')
    .set({ status, updated_at: at.toISOString() })
    .where('workspace_id', '=', workspaceId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  if (result.numUpdatedRows === 0n) throw new AdminError(`User ${userId} not found`);
}
