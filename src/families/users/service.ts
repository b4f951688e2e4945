import type { Kysely } from 'kysely';
import type { Clock } from '../../clock.js';
import type { DB, UserRole, UsersTable } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import type { Principal, PrincipalCache } from '../../http/auth.js';
import { badRequest, conflict, notFound } from '../../http/errors.js';
import { allRights, assignableRights } from '../../http/rights.js';
import { generateToken } from '../../http/tokens.js';
import { idPrefixes, newId } from '../../ids.js';
import * as queries from './queries.js';
import { MAX_KEY_LIFETIME_DAYS } from './schemas.js';

/** What the accounts' operations need: the caller, the workspace's handle and the cache to invalidate. */
export interface AccountsContext {
  db: Kysely<DB>;
  clock: Clock;
  principal: Principal;
  principals: PrincipalCache;
}

const isUniqueViolation = (error: unknown, index: string) => {
  const fields = error as { code?: string; constraint?: string; message?: string };
  return fields.code === '23505' && (fields.constraint === index || (fields.message ?? '').includes(index));
};

/* ---------- Users ---------- */

export async function getUser(context: AccountsContext, userId: string) {
  const user = await queries.findWorkspaceUser(context.db, context.principal.workspaceId, userId);
  if (!user) throw notFound('User', ['userId']);
  return user;
}

export interface UserChange {
  role?: UserRole | undefined;
  customRoleId?: string | null | undefined;
  seat?: UsersTable['seat'] | undefined;
  fullname?: string | undefined;
  jobRole?: string | undefined;
}

const lastSuperAdmin = (path: string[]) =>
  conflict("This is the workspace's last active SUPER_ADMIN: make another user SUPER_ADMIN first, so that someone can still administer it", path);

/**
 * Changes a user's role, custom role, seat, name or job role. A CUSTOM user holds a custom role
 * (customRoleId, given or already held); any other role holds none. The last active SUPER_ADMIN
 * cannot be demoted (409). A change of rights reaches every instance's credentials at once.
 */
export async function updateUser(context: AccountsContext, userId: string, change: UserChange) {
  const { workspaceId } = context.principal;
  const rightsChanged = await inTransaction(context.db, async (trx) => {
    const user = await queries.findUserForUpdate(trx, workspaceId, userId);
    if (!user) throw notFound('User', ['userId']);
    const role = change.role ?? user.role;
    let customRoleId: string | null;
    if (role === 'CUSTOM') {
      customRoleId = change.customRoleId === undefined ? user.custom_role_id : change.customRoleId;
      if (customRoleId === null) throw badRequest('customRoleId is required with role CUSTOM: the id of one of the workspace\'s custom roles (GET /custom-roles)', ['customRoleId']);
      const held = await queries.customRoleRows(trx, workspaceId).where('custom_role_id', '=', customRoleId).executeTakeFirst();
      if (!held) throw notFound('Custom role', ['customRoleId']);
    } else {
      if (change.customRoleId !== undefined && change.customRoleId !== null) {
        throw badRequest(`customRoleId is only for role CUSTOM (the user's role ${change.role === undefined ? 'is' : 'would be'} ${role}): give role CUSTOM, or leave customRoleId out`, ['customRoleId']);
      }
      customRoleId = null;
    }
    if (user.role === 'SUPER_ADMIN' && role !== 'SUPER_ADMIN' && user.status === 'ACTIVE') {
      const admins = await queries.lockActiveSuperAdmins(trx, workspaceId);
      if (admins.every((id) => id === userId)) throw lastSuperAdmin(['role']);
    }
    await trx
      .updateTable('users')
      .set({
        role,
        custom_role_id: customRoleId,
        ...(change.seat !== undefined ? { seat: change.seat } : {}),
        ...(change.fullname !== undefined ? { fullname: change.fullname } : {}),
        ...(change.jobRole !== undefined ? { job_role: change.jobRole } : {}),
        updated_at: context.clock.now().toISOString(),
      })
      .where('workspace_id', '=', workspaceId)
      .where('user_id', '=', userId)
      .execute();
    return role !== user.role || customRoleId !== user.custom_role_id;
  });
  // After the commit: an instance that looks the user up again finds the new rights.
  if (rightsChanged) context.principals.invalidateUser(workspaceId, userId);
  return getUser(context, userId);
}

/**
 * Deactivates a user: every key and session of theirs stops at once, on every instance. The
 * last active SUPER_ADMIN cannot be deactivated (409). Deactivating a deactivated user changes nothing.
 */
export async function deactivateUser(context: AccountsContext, userId: string) {
  const { workspaceId } = context.principal;
  await inTransaction(context.db, async (trx) => {
    const user = await queries.findUserForUpdate(trx, workspaceId, userId);
    if (!user) throw notFound('User', ['userId']);
    if (user.status === 'DEACTIVATED') return;
    if (user.role === 'SUPER_ADMIN' && user.status === 'ACTIVE') {
      const admins = await queries.lockActiveSuperAdmins(trx, workspaceId);
      if (admins.every((id) => id === userId)) throw lastSuperAdmin(['userId']);
    }
    await trx
      .updateTable('users')
      .set({ status: 'DEACTIVATED', updated_at: context.clock.now().toISOString() })
      .where('workspace_id', '=', workspaceId)
      .where('user_id', '=', userId)
      .execute();
  });
  context.principals.invalidateUser(workspaceId, userId);
  return getUser(context, userId);
}

/** Reactivates a deactivated user (ACTIVE again; their unrevoked keys work again). Only a DEACTIVATED user: else 409. */
export async function reactivateUser(context: AccountsContext, userId: string) {
  const { workspaceId } = context.principal;
  await inTransaction(context.db, async (trx) => {
    const user = await queries.findUserForUpdate(trx, workspaceId, userId);
    if (!user) throw notFound('User', ['userId']);
    if (user.status !== 'DEACTIVATED') throw conflict(`The user is ${user.status}, not DEACTIVATED: there is nothing to reactivate`, ['userId']);
    await trx
      .updateTable('users')
      .set({ status: 'ACTIVE', updated_at: context.clock.now().toISOString() })
      .where('workspace_id', '=', workspaceId)
      .where('user_id', '=', userId)
      .execute();
  });
  context.principals.invalidateUser(workspaceId, userId);
  return getUser(context, userId);
}

/* ---------- Teams ---------- */

const teamNameTaken = (name: string) => conflict(`A team named "${name}" already exists in this workspace (names are compared case-insensitively)`, ['name']);

async function nameTaken(db: Kysely<DB>, workspaceId: string, name: string, exceptTeamId?: string) {
  const row = await db
    .selectFrom('teams')
    .where('workspace_id', '=', workspaceId)
    .where((eb) => eb(eb.fn('lower', ['name']), '=', name.toLowerCase()))
    .$if(exceptTeamId !== undefined, (query) => query.where('team_id', '!=', exceptTeamId!))
    .select('team_id')
    .executeTakeFirst();
  return row !== undefined;
}

export async function createTeam(context: AccountsContext, name: string) {
  const { workspaceId } = context.principal;
  const team = { teamId: newId(idPrefixes.team), name: name.trim() };
  try {
    await inTransaction(context.db, async (trx) => {
      if (await nameTaken(trx, workspaceId, team.name)) throw teamNameTaken(team.name);
      await trx.insertInto('teams').values({ workspace_id: workspaceId, team_id: team.teamId, name: team.name, created_at: context.clock.now().toISOString() }).execute();
    });
  } catch (error) {
    if (isUniqueViolation(error, 'teams_name_unique')) throw teamNameTaken(team.name);
    throw error;
  }
  return team;
}

export async function renameTeam(context: AccountsContext, teamId: string, name: string) {
  const { workspaceId } = context.principal;
  const trimmed = name.trim();
  try {
    await inTransaction(context.db, async (trx) => {
      if (await nameTaken(trx, workspaceId, trimmed, teamId)) throw teamNameTaken(trimmed);
      const result = await trx.updateTable('teams').set({ name: trimmed }).where('workspace_id', '=', workspaceId).where('team_id', '=', teamId).executeTakeFirst();
      if (result.numUpdatedRows === 0n) throw notFound('Team', ['teamId']);
    });
  } catch (error) {
    if (isUniqueViolation(error, 'teams_name_unique')) throw teamNameTaken(trimmed);
    throw error;
  }
  return { teamId, name: trimmed };
}

/** Deletes a team; its memberships go with it (the users stay). */
export async function deleteTeam(context: AccountsContext, teamId: string) {
  const { workspaceId } = context.principal;
  return inTransaction(context.db, async (trx) => {
    const team = await trx.selectFrom('teams').where('workspace_id', '=', workspaceId).where('team_id', '=', teamId).select('team_id').forUpdate().executeTakeFirst();
    if (!team) throw notFound('Team', ['teamId']);
    // A study belongs to its team: the team goes only once its studies are another's (its members simply leave it).
    const { studies } = await trx
      .selectFrom('studies')
      .where('workspace_id', '=', workspaceId)
      .where('team_id', '=', teamId)
      .select((eb) => eb.fn.countAll<string>().as('studies'))
      .executeTakeFirstOrThrow();
    if (Number(studies) > 0) throw conflict(`The team has ${Number(studies)} ${Number(studies) === 1 ? 'study' : 'studies'}: give them to another team first`, ['teamId']);
    await trx.deleteFrom('teams').where('workspace_id', '=', workspaceId).where('team_id', '=', teamId).execute();
    return { teamId };
  });
}

/** Makes the user a member of the team; a member already is one (nothing changes). */
export async function addTeamMember(context: AccountsContext, teamId: string, userId: string) {
  const { workspaceId } = context.principal;
  await inTransaction(context.db, async (trx) => {
    const team = await trx.selectFrom('teams').where('workspace_id', '=', workspaceId).where('team_id', '=', teamId).select('team_id').executeTakeFirst();
    if (!team) throw notFound('Team', ['teamId']);
    const user = await trx.selectFrom('users').where('workspace_id', '=', workspaceId).where('user_id', '=', userId).select('user_id').executeTakeFirst();
    if (!user) throw notFound('User', ['userId']);
    await trx
      .insertInto('team_members')
      .values({ workspace_id: workspaceId, team_id: teamId, user_id: userId })
      .onConflict((oc) => oc.columns(['workspace_id', 'team_id', 'user_id']).doNothing())
      .execute();
  });
  return { teamId, userId };
}

export async function removeTeamMember(context: AccountsContext, teamId: string, userId: string) {
  const { workspaceId } = context.principal;
  const team = await context.db.selectFrom('teams').where('workspace_id', '=', workspaceId).where('team_id', '=', teamId).select('team_id').executeTakeFirst();
  if (!team) throw notFound('Team', ['teamId']);
  const result = await context.db
    .deleteFrom('team_members')
    .where('workspace_id', '=', workspaceId)
    .where('team_id', '=', teamId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  if (result.numDeletedRows === 0n) throw notFound('Team member', ['userId']);
  return { teamId, userId };
}

/* ---------- Custom roles ---------- */

type CustomRoleRow = { custom_role_id: string; name: string; rights: string[]; created_at: string; updated_at: string };

/** The rights in the order of the rights table (a stable, readable answer whatever order they were given in). */
const inTableOrder = (rights: readonly string[]) => assignableRights.filter((right) => rights.includes(right));

export const presentCustomRole = (row: CustomRoleRow) => ({
  customRoleId: row.custom_role_id,
  name: row.name,
  rights: inTableOrder(row.rights),
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

const roleNameTaken = (name: string) => conflict(`A custom role named "${name}" already exists in this workspace (names are compared case-insensitively)`, ['name']);

async function roleNameUsed(db: Kysely<DB>, workspaceId: string, name: string, exceptRoleId?: string) {
  const row = await queries
    .customRoleRows(db, workspaceId)
    .where((eb) => eb(eb.fn('lower', ['name']), '=', name.toLowerCase()))
    .$if(exceptRoleId !== undefined, (query) => query.where('custom_role_id', '!=', exceptRoleId!))
    .executeTakeFirst();
  return row !== undefined;
}

export async function listCustomRoles(context: AccountsContext) {
  return { results: (await queries.listCustomRoles(context.db, context.principal.workspaceId)).map(presentCustomRole) };
}

export async function getCustomRole(context: AccountsContext, roleId: string) {
  const row = await queries.customRoleRows(context.db, context.principal.workspaceId).where('custom_role_id', '=', roleId).executeTakeFirst();
  if (!row) throw notFound('Custom role', ['roleId']);
  return presentCustomRole(row);
}

export async function createCustomRole(context: AccountsContext, body: { name: string; rights: string[] }) {
  const { workspaceId } = context.principal;
  const at = context.clock.now().toISOString();
  const row = { workspace_id: workspaceId, custom_role_id: newId(idPrefixes.customRole), name: body.name.trim(), rights: inTableOrder(body.rights), created_at: at, updated_at: at };
  try {
    await inTransaction(context.db, async (trx) => {
      if (await roleNameUsed(trx, workspaceId, row.name)) throw roleNameTaken(row.name);
      await trx.insertInto('custom_roles').values(row).execute();
    });
  } catch (error) {
    if (isUniqueViolation(error, 'custom_roles_name_unique')) throw roleNameTaken(row.name);
    throw error;
  }
  return presentCustomRole(row);
}

/** Renames a custom role or changes its rights: its users' credentials hold the new rights at once, on every instance. */
export async function updateCustomRole(context: AccountsContext, roleId: string, body: { name?: string | undefined; rights?: string[] | undefined }) {
  const { workspaceId } = context.principal;
  const name = body.name?.trim();
  let holders: string[] = [];
  try {
    await inTransaction(context.db, async (trx) => {
      const existing = await queries.customRoleRows(trx, workspaceId).where('custom_role_id', '=', roleId).forUpdate().executeTakeFirst();
      if (!existing) throw notFound('Custom role', ['roleId']);
      if (name !== undefined && (await roleNameUsed(trx, workspaceId, name, roleId))) throw roleNameTaken(name);
      await trx
        .updateTable('custom_roles')
        .set({
          ...(name !== undefined ? { name } : {}),
          ...(body.rights !== undefined ? { rights: inTableOrder(body.rights) } : {}),
          updated_at: context.clock.now().toISOString(),
        })
        .where('workspace_id', '=', workspaceId)
        .where('custom_role_id', '=', roleId)
        .execute();
      if (body.rights !== undefined) {
        const rows = await trx.selectFrom('users').where('workspace_id', '=', workspaceId).where('custom_role_id', '=', roleId).select('user_id').execute();
        holders = rows.map((row) => row.user_id);
      }
    });
  } catch (error) {
    if (name !== undefined && isUniqueViolation(error, 'custom_roles_name_unique')) throw roleNameTaken(name);
    throw error;
  }
  for (const userId of holders) context.principals.invalidateUser(workspaceId, userId);
  return getCustomRole(context, roleId);
}

/** Deletes a custom role no user holds (409 naming how many do, otherwise). */
export async function deleteCustomRole(context: AccountsContext, roleId: string) {
  const { workspaceId } = context.principal;
  await inTransaction(context.db, async (trx) => {
    const existing = await queries.customRoleRows(trx, workspaceId).where('custom_role_id', '=', roleId).forUpdate().executeTakeFirst();
    if (!existing) throw notFound('Custom role', ['roleId']);
    const held = await trx
      .selectFrom('users')
      .where('workspace_id', '=', workspaceId)
      .where('custom_role_id', '=', roleId)
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .executeTakeFirstOrThrow();
    const count = Number(held.count);
    if (count > 0) throw conflict(`${count} user${count === 1 ? ' holds' : 's hold'} this custom role: give them another role first (PATCH /users/{userId})`, ['roleId']);
    await trx.deleteFrom('custom_roles').where('workspace_id', '=', workspaceId).where('custom_role_id', '=', roleId).execute();
  });
  return { customRoleId: roleId };
}

/* ---------- API keys ---------- */

type KeyRow = Awaited<ReturnType<typeof queries.listKeys>>['rows'][number];

export const presentKey = (row: KeyRow) => ({ ...row, rights: row.rights === null ? null : allRights.filter((right) => row.rights!.includes(right)) });

export interface NewKey {
  name: string;
  rights?: string[] | undefined;
  canReadPersonalData?: boolean | undefined;
  canReadScreeners?: boolean | undefined;
  expiresAt?: string | undefined;
}

/**
 * A key of the caller's own, with at most the caller's own rights (their credential's: a key
 * made with a limited key is limited as much), personal-data and screener rights only if the
 * caller's credential has them, and an expiry in the future, at most MAX_KEY_LIFETIME_DAYS ahead.
 * The secret is answered this once; only its digest is stored.
 */
export async function createKey(context: AccountsContext, body: NewKey) {
  const { principal } = context;
  const own = allRights.filter((right) => principal.rights.has(right));
  const rights = body.rights === undefined ? own : allRights.filter((right) => body.rights!.includes(right));
  body.rights?.forEach((right, index) => {
    if (!principal.rights.has(right as (typeof allRights)[number])) {
      throw badRequest(`"${right}" is not a right of your own credential: a key holds a subset of them (${own.join(', ')})`, ['rights', String(index)]);
    }
  });
  for (const field of ['canReadPersonalData', 'canReadScreeners'] as const) {
    if (body[field] === true && !principal[field]) throw badRequest(`${field} can be true only if your own credential has it, and it does not`, [field]);
  }
  const now = context.clock.now();
  if (body.expiresAt !== undefined) {
    const expires = Date.parse(body.expiresAt);
    if (!(expires > now.getTime())) throw badRequest('expiresAt must be in the future', ['expiresAt']);
    if (expires > now.getTime() + MAX_KEY_LIFETIME_DAYS * 86_400_000) throw badRequest(`expiresAt must be at most ${MAX_KEY_LIFETIME_DAYS} days ahead`, ['expiresAt']);
  }
  const { token, digest } = generateToken(principal.workspaceId);
  const row = {
    workspace_id: principal.workspaceId,
    token_id: newId(idPrefixes.token),
    user_id: principal.userId,
    token_digest: digest,
    name: body.name.trim(),
    rights,
    can_read_personal_data: body.canReadPersonalData ?? principal.canReadPersonalData,
    can_read_screeners: body.canReadScreeners ?? principal.canReadScreeners,
    created_at: now.toISOString(),
    expires_at: body.expiresAt === undefined ? null : new Date(body.expiresAt).toISOString(),
    revoked_at: null,
  };
  await context.db.insertInto('api_tokens').values(row).execute();
  return {
    ...presentKey({
      keyId: row.token_id,
      userId: row.user_id,
      name: row.name,
      rights: row.rights,
      canReadPersonalData: row.can_read_personal_data,
      canReadScreeners: row.can_read_screeners,
      createdAt: row.created_at,
      expiresAt: row.expires_at,
      lastUsedAt: null,
      revokedAt: null,
    }),
    secret: token,
  };
}

export async function listKeys(context: AccountsContext, userId: string, after: string | undefined, size: number) {
  const page = await queries.listKeys(context.db, context.principal.workspaceId, userId, after, size);
  return { ...page, rows: page.rows.map(presentKey) };
}

/** The user exists in the workspace (404 otherwise). */
export async function requireUser(context: AccountsContext, userId: string) {
  const row = await context.db.selectFrom('users').where('workspace_id', '=', context.principal.workspaceId).where('user_id', '=', userId).select('user_id').executeTakeFirst();
  if (!row) throw notFound('User', ['userId']);
}

/** Revokes one of the user's keys: it answers 401 at once, on every instance. A revoked key stays revoked (its first revocation time). */
export async function revokeKey(context: AccountsContext, userId: string, keyId: string) {
  const { workspaceId } = context.principal;
  await context.db
    .updateTable('api_tokens')
    .set({ revoked_at: context.clock.now().toISOString() })
    .where('workspace_id', '=', workspaceId)
    .where('user_id', '=', userId)
    .where('token_id', '=', keyId)
    .where('revoked_at', 'is', null)
    .execute();
  const row = await context.db.selectFrom('api_tokens').where('workspace_id', '=', workspaceId).where('user_id', '=', userId).where('token_id', '=', keyId).select(queries.keyColumns).executeTakeFirst();
  if (!row) throw notFound('API key', ['keyId']);
  context.principals.invalidateToken(workspaceId, keyId);
  return presentKey(row);
}
