import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type TestService, uniqueEmail } from '../../../test/harness.js';
import { describeSecurity } from '../../../test/security.js';
import { allRoles } from '../../http/rights.js';
import { createToken, createUser } from '../workspaces/service.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service.stop());

async function slugOf(workspaceId: string) {
  const row = await service.deps.db.selectFrom('workspaces').where('workspace_id', '=', workspaceId).select('slug').executeTakeFirstOrThrow();
  return row.slug;
}

async function teamIdsByName(workspaceId: string) {
  const rows = await service.deps.db.selectFrom('teams').where('workspace_id', '=', workspaceId).select(['team_id', 'name']).execute();
  return Object.fromEntries(rows.map((row) => [row.name, row.team_id]));
}

describe('GET /me (E14)', () => {
  it("returns the workspace's first user with every field of the reference", async () => {
    const tenant = await createTenant(service, 'Acme Research!');
    const response = await call(service, 'GET', '/me', { token: tenant.token });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    const me = response.json();
    expect(Object.keys(me).sort()).toEqual(
      ['email', 'fullname', 'jobRole', 'profilePic', 'role', 'seat', 'status', 'teams', 'userId', 'workspaceId', 'workspaceSlug'].sort(),
    );
    expect(me).toMatchObject({
      userId: tenant.userId,
      workspaceId: tenant.workspaceId,
      role: 'SUPER_ADMIN',
      status: 'ACTIVE',
      seat: 'RESEARCHER_PAID',
      jobRole: '',
      profilePic: '',
      teams: [],
    });
    expect(me.email).toMatch(/^admin\..*@example\.test$/);
    // The slug is readable (from the name) and unique (a suffix of the workspace id).
    expect(me.workspaceSlug).toMatch(/^acme-research-[a-z0-9]{6}$/);
    expect(me.workspaceSlug).toBe(await slugOf(tenant.workspaceId));
  });

  it('returns the fields the user was created with, and only their own teams, sorted by name case-insensitively', async () => {
    const tenant = await createTenant(service);
    const email = uniqueEmail('Grace.Hopper');
    // Another member's team must not appear in this user's list.
    await createUser(service.deps.db, { workspaceId: tenant.workspaceId, email: uniqueEmail('other'), role: 'OBSERVER', teams: ['Billing'] });
    const { userId } = await createUser(service.deps.db, {
      workspaceId: tenant.workspaceId,
      email,
      role: 'RESEARCHER',
      fullName: 'Grace Hopper',
      jobRole: 'Staff researcher',
      seat: 'LITE',
      teams: ['Zeta squad', 'alpha', 'Mid-market'],
    });
    const { token } = await createToken(service.deps.db, tenant.workspaceId, userId);
    const response = await call(service, 'GET', '/me', { token });
    expect(response.statusCode, response.body).toBe(200);
    const ids = await teamIdsByName(tenant.workspaceId);
    expect(response.json()).toEqual({
      userId,
      workspaceId: tenant.workspaceId,
      workspaceSlug: await slugOf(tenant.workspaceId),
      fullname: 'Grace Hopper',
      email,
      jobRole: 'Staff researcher',
      profilePic: '',
      status: 'ACTIVE',
      seat: 'LITE',
      role: 'RESEARCHER',
      teams: [
        { teamId: ids.alpha, name: 'alpha' },
        { teamId: ids['Mid-market'], name: 'Mid-market' },
        { teamId: ids['Zeta squad'], name: 'Zeta squad' },
      ],
    });
  });

  it('gives seat null and the INVITED status as stored', async () => {
    const tenant = await createTenant(service);
    const { userId } = await createUser(service.deps.db, { workspaceId: tenant.workspaceId, email: uniqueEmail('invited'), role: 'COLLABORATOR', status: 'INVITED' });
    const { token } = await createToken(service.deps.db, tenant.workspaceId, userId);
    const response = await call(service, 'GET', '/me', { token });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({ userId, status: 'INVITED', seat: null, role: 'COLLABORATOR', teams: [] });
  });

  it('shows every role its own user, in one workspace', async () => {
    const tenant = await createTenant(service);
    for (const role of allRoles) {
      const { token, userId } = await tenant.tokenFor(role);
      const response = await call(service, 'GET', '/me', { token });
      expect(response.statusCode, `${role}: ${response.body}`).toBe(200);
      expect(response.json(), role).toMatchObject({ userId, role, workspaceId: tenant.workspaceId });
    }
  });

  it('ignores query parameters it does not define and carries the rate-limit headers', async () => {
    const tenant = await createTenant(service);
    const response = await call(service, 'GET', '/me', { token: tenant.token, query: { userId: 'usr_someone_else' } });
    expect(response.statusCode).toBe(200);
    expect(response.json().userId).toBe(tenant.userId);
    expect(Number(response.headers['x-ratelimit-limit'])).toBeGreaterThan(0);
    expect(response.headers['x-ratelimit-remaining']).toBeDefined();
    expect(response.headers['x-ratelimit-reset']).toBeDefined();
  });
});

describeSecurity('GET /me', () => service, {
  method: 'GET',
  right: 'users:read',
  addressesResource: false,
  request: async () => ({ url: '/me' }),
});
