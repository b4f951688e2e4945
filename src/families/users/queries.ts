import { type Kysely, sql } from 'kysely';
import type { DB } from '../../db/schema.js';
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
