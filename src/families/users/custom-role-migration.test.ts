import { Migrator, sql } from 'kysely';
import { expect, it } from 'vitest';
import { openDatabase } from '../../db/database.js';
import { migrateToLatest } from '../../db/migrate.js';
import { migrations } from '../../db/migrations/index.js';

it('gives the CUSTOM users made before custom roles a read-only custom role of the rights they had (OBSERVER\'s reads)', async () => {
  const database = await openDatabase({ inMemory: true });
  try {
    const migrator = new Migrator({ db: database.db, provider: { getMigrations: async () => migrations } });
    const before = await migrator.migrateTo('20261210000000_link_lookup_function');
    expect(before.error).toBeUndefined();
    await sql`
      insert into workspaces (workspace_id, name, slug, created_at) values ('wsp_A', 'A', 'a', now()), ('wsp_B', 'B', 'b', now());
      insert into users (workspace_id, user_id, email_account_id, email, fullname, status, role, created_at, updated_at) values
        ('wsp_A', 'usr_1', 'eac_1', 'one@a.test', 'One', 'ACTIVE', 'CUSTOM', now(), now()),
        ('wsp_A', 'usr_2', 'eac_2', 'two@a.test', 'Two', 'ACTIVE', 'CUSTOM', now(), now()),
        ('wsp_A', 'usr_3', 'eac_3', 'three@a.test', 'Three', 'ACTIVE', 'RESEARCHER', now(), now()),
        ('wsp_B', 'usr_4', 'eac_4', 'four@b.test', 'Four', 'ACTIVE', 'OBSERVER', now(), now());
    `.execute(database.db);
    await migrateToLatest(database.db);
    const roles = await database.db.selectFrom('custom_roles').selectAll().execute();
    expect(roles).toHaveLength(1);
    expect(roles[0]).toMatchObject({ workspace_id: 'wsp_A', name: 'Read only (before custom roles)' });
    expect(roles[0]!.rights).toEqual(expect.arrayContaining(['studies:read', 'people:read', 'users:read']));
    expect(roles[0]!.rights.every((right) => right.endsWith(':read') && right !== 'webhooks:read')).toBe(true);
    const users = await database.db.selectFrom('users').select(['user_id', 'custom_role_id']).orderBy('user_id').execute();
    expect(users).toEqual([
      { user_id: 'usr_1', custom_role_id: roles[0]!.custom_role_id },
      { user_id: 'usr_2', custom_role_id: roles[0]!.custom_role_id },
      { user_id: 'usr_3', custom_role_id: null },
      { user_id: 'usr_4', custom_role_id: null },
    ]);
    // From now on a CUSTOM user without a custom role, or another role with one, cannot be stored.
    await expect(sql`update users set custom_role_id = null where user_id = 'usr_1'`.execute(database.db)).rejects.toThrow(/users_custom_role_with_role/);
  } finally {
    await database.close();
  }
});
