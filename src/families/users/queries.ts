import { type Kysely, sql } from 'kysely';
import type { DB, UserRole } from '../../db/schema.js';
import type { TokenOwner } from '../../http/auth.js';

export type Executor = Kysely<DB>;

/**
 * Teams sort by name, case-insensitively, the same on every store: the byte order ("C") is named
 * because a database's default collation differs between installations (PGlite uses C, a
 * PostgreSQL cluster often en_US), and the team id breaks ties so the order is total.
 */
const teamNameOrder = (column: 't.name' | 'name') => sql`lower(${sql.ref(column)}) collate "C"`;

/** The owner of the unrevoked token with this digest, with what their rights are made of (see principalOfOwner). */
export async function findTokenOwner(db: Executor, workspaceId: string, digest: string): Promise<TokenOwner | undefined> {
  return db
    .selectFrom('api_tokens as t')
    .innerJoin('users as u', (join) => join.onRef('u.workspace_id', '=', 't.workspace_id').onRef('u.user_id', '=', 't.user_id'))
    .leftJoin('custom_roles as r', (join) => join.onRef('r.workspace_id', '=', 'u.workspace_id').onRef('r.custom_role_id', '=', 'u.custom_role_id'))
    .where('t.workspace_id', '=', workspaceId)
    .where('t.token_digest', '=', digest)
    .where('t.revoked_at', 'is', null)
    .select([
      't.workspace_id as workspaceId',
      'u.user_id as userId',
      't.token_id as tokenId',
      'u.role',
      'u.status',
      'r.rights as customRoleRights',
      't.rights as keyRights',
      't.can_read_personal_data as canReadPersonalData',
      't.can_read_screeners as canReadScreeners',
      't.expires_at as expiresAt',
    ])
    .executeTakeFirst();
}

export async function findUserWithTeams(db: Executor, workspaceId: string, userId: string) {
  const user = await db
    .selectFrom('users as u')
    .innerJoin('workspaces as w', 'w.workspace_id', 'u.workspace_id')
    .where('u.workspace_id', '=', workspaceId)
    .where('u.user_id', '=', userId)
    .select([
      'u.user_id as userId',
      'u.workspace_id as workspaceId',
      'w.slug as workspaceSlug',
      'u.fullname',
      'u.email',
      'u.job_role as jobRole',
      'u.profile_pic as profilePic',
      'u.status',
      'u.seat',
      'u.role',
    ])
    .executeTakeFirst();
  if (!user) return undefined;
  const teams = await db
    .selectFrom('team_members as m')
    .innerJoin('teams as t', (join) => join.onRef('t.workspace_id', '=', 'm.workspace_id').onRef('t.team_id', '=', 'm.team_id'))
    .where('m.workspace_id', '=', workspaceId)
    .where('m.user_id', '=', userId)
    .select(['t.team_id as teamId', 't.name'])
    .orderBy(teamNameOrder('t.name'))
    .orderBy('t.team_id')
    .execute();
  return { ...user, teams };
}

export async function listTeams(db: Executor, workspaceId: string) {
  return db
    .selectFrom('teams')
    .where('workspace_id', '=', workspaceId)
    .select(['team_id as teamId', 'name'])
    .orderBy(teamNameOrder('name'))
    .orderBy('team_id')
    .execute();
}

export async function findUsers(db: Executor, workspaceId: string, userIds: string[]) {
  if (userIds.length === 0) return [];
  return db
    .selectFrom('users')
    .where('workspace_id', '=', workspaceId)
    .where('user_id', 'in', userIds)
    .select(['user_id as userId', 'status'])
    .execute();
}

const userColumns = [
  'u.user_id as userId',
  'u.workspace_id as workspaceId',
  'w.slug as workspaceSlug',
  'u.fullname',
  'u.email',
  'u.job_role as jobRole',
  'u.profile_pic as profilePic',
  'u.status',
  'u.seat',
  'u.role',
  'u.custom_role_id as customRoleId',
] as const;

export interface UserFilter {
  status?: 'INVITED' | 'ACTIVE' | 'DEACTIVATED' | undefined;
  role?: UserRole | undefined;
  teamId?: string | undefined;
}

/** One page of the workspace's users, by id (creation order), with the teams of each in one more query. */
export async function listUsers(db: Executor, workspaceId: string, filter: UserFilter, afterUserId: string | undefined, size: number) {
  const base = db
    .selectFrom('users as u')
    .where('u.workspace_id', '=', workspaceId)
    .$if(filter.status !== undefined, (query) => query.where('u.status', '=', filter.status!))
    .$if(filter.role !== undefined, (query) => query.where('u.role', '=', filter.role!))
    .$if(filter.teamId !== undefined, (query) =>
      query.where((eb) =>
        eb.exists(
          eb
            .selectFrom('team_members as m')
            .whereRef('m.workspace_id', '=', 'u.workspace_id')
            .whereRef('m.user_id', '=', 'u.user_id')
            .where('m.team_id', '=', filter.teamId!)
            .select('m.user_id'),
        ),
      ),
    );
  const [rows, total] = await Promise.all([
    base
      .innerJoin('workspaces as w', 'w.workspace_id', 'u.workspace_id')
      .select(userColumns)
      .$if(afterUserId !== undefined, (query) => query.where('u.user_id', '>', afterUserId!))
      .orderBy('u.user_id')
      .limit(size + 1)
      .execute(),
    base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
  ]);
  const page = rows.slice(0, size);
  const teams = await teamsOfUsers(db, workspaceId, page.map((user) => user.userId));
  return { rows: page.map((user) => ({ ...user, teams: teams.get(user.userId) ?? [] })), hasNextPage: rows.length > size, total: Number(total.total) };
}

/** The teams of each of these users, by name (case-insensitive): one query. */
export async function teamsOfUsers(db: Executor, workspaceId: string, userIds: string[]) {
  const byUser = new Map<string, { teamId: string; name: string }[]>();
  if (userIds.length === 0) return byUser;
  const rows = await db
    .selectFrom('team_members as m')
    .innerJoin('teams as t', (join) => join.onRef('t.workspace_id', '=', 'm.workspace_id').onRef('t.team_id', '=', 'm.team_id'))
    .where('m.workspace_id', '=', workspaceId)
    .where('m.user_id', 'in', userIds)
    .select(['m.user_id as userId', 't.team_id as teamId', 't.name'])
    .orderBy(teamNameOrder('t.name'))
    .orderBy('t.team_id')
    .execute();
  for (const row of rows) {
    let list = byUser.get(row.userId);
    if (!list) byUser.set(row.userId, (list = []));
    list.push({ teamId: row.teamId, name: row.name });
  }
  return byUser;
}

export async function findWorkspaceUser(db: Executor, workspaceId: string, userId: string) {
  const user = await db
    .selectFrom('users as u')
    .innerJoin('workspaces as w', 'w.workspace_id', 'u.workspace_id')
    .where('u.workspace_id', '=', workspaceId)
    .where('u.user_id', '=', userId)
    .select(userColumns)
    .executeTakeFirst();
  if (!user) return undefined;
  const teams = await teamsOfUsers(db, workspaceId, [userId]);
  return { ...user, teams: teams.get(userId) ?? [] };
}

/**
 * The workspace's active SUPER_ADMINs, their rows locked until the transaction ends: two
 * demotions at once cannot both see the other still there.
 */
export async function lockActiveSuperAdmins(db: Executor, workspaceId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('users')
    .where('workspace_id', '=', workspaceId)
    .where('role', '=', 'SUPER_ADMIN')
    .where('status', '=', 'ACTIVE')
    .select('user_id')
    .forUpdate()
    .execute();
  return rows.map((row) => row.user_id);
}

export async function findUserForUpdate(db: Executor, workspaceId: string, userId: string) {
  return db
    .selectFrom('users')
    .where('workspace_id', '=', workspaceId)
    .where('user_id', '=', userId)
    .select(['user_id', 'role', 'status', 'custom_role_id'])
    .forUpdate()
    .executeTakeFirst();
}

export function customRoleRows(db: Executor, workspaceId: string) {
  return db.selectFrom('custom_roles').where('workspace_id', '=', workspaceId).selectAll();
}

export async function listCustomRoles(db: Executor, workspaceId: string) {
  return customRoleRows(db, workspaceId).orderBy(sql`lower(name) collate "C"`).orderBy('custom_role_id').execute();
}

/** A key's columns as the API shows them. */
export const keyColumns = [
  'token_id as keyId',
  'user_id as userId',
  'name',
  'rights',
  'can_read_personal_data as canReadPersonalData',
  'can_read_screeners as canReadScreeners',
  'created_at as createdAt',
  'expires_at as expiresAt',
  'last_used_at as lastUsedAt',
  'revoked_at as revokedAt',
] as const;

/** A user's keys (CLI tokens too), newest last, keyset-paged by id. */
export async function listKeys(db: Executor, workspaceId: string, userId: string, afterKeyId: string | undefined, size: number) {
  const base = db.selectFrom('api_tokens').where('workspace_id', '=', workspaceId).where('user_id', '=', userId);
  const [rows, total] = await Promise.all([
    base
      .select(keyColumns)
      .$if(afterKeyId !== undefined, (query) => query.where('token_id', '>', afterKeyId!))
      .orderBy('token_id')
      .limit(size + 1)
      .execute(),
    base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows: rows.slice(0, size), hasNextPage: rows.length > size, total: Number(total.total) };
}
