import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type TestService, uniqueEmail } from '../../../test/harness.js';
import { describeSecurity } from '../../../test/security.js';
import { createToken, createUser } from '../workspaces/service.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service.stop());

const addMember = (workspaceId: string, teams: string[]) =>
  createUser(service.deps.db, { workspaceId, email: uniqueEmail('member'), role: 'RESEARCHER', teams });

describe('GET /teams', () => {
  it('answers a workspace without teams with an empty list', async () => {
    const tenant = await createTenant(service);
    const response = await call(service, 'GET', '/teams', { token: tenant.token });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toEqual({ results: [] });
  });

  it("lists every team of the workspace once, by name case-insensitively, and no other workspace's", async () => {
    const tenant = await createTenant(service);
    const other = await createTenant(service, 'Other workspace');
    await addMember(other.workspaceId, ['Elsewhere', 'Checkout']);
    await addMember(tenant.workspaceId, ['Checkout', 'discovery']);
    // A name that differs only in case joins the existing team rather than making another.
    await addMember(tenant.workspaceId, ['checkout', 'Brand', 'Zebra crossing']);

    const response = await call(service, 'GET', '/teams', { token: tenant.token });
    expect(response.statusCode, response.body).toBe(200);
    const { results } = response.json<{ results: { teamId: string; name: string }[] }>();
    expect(results.map((team) => team.name)).toEqual(['Brand', 'Checkout', 'discovery', 'Zebra crossing']);
    for (const team of results) {
      expect(Object.keys(team).sort()).toEqual(['name', 'teamId']);
      expect(team.teamId).toMatch(/^tem_/);
    }
    const otherTeams = await call(service, 'GET', '/teams', { token: other.token });
    const otherIds = otherTeams.json<{ results: { teamId: string }[] }>().results.map((team) => team.teamId);
    expect(otherIds).toHaveLength(2);
    for (const team of results) expect(otherIds).not.toContain(team.teamId);
  });

  it('gives the same team ids that GET /me shows a member', async () => {
    const tenant = await createTenant(service);
    const { userId } = await addMember(tenant.workspaceId, ['Platform', 'Growth']);
    const { token } = await createToken(service.deps.db, tenant.workspaceId, userId);
    const listed = await call(service, 'GET', '/teams', { token });
    const me = await call(service, 'GET', '/me', { token });
    expect(listed.statusCode).toBe(200);
    expect(me.json().teams).toHaveLength(2);
    expect(listed.json().results).toEqual(me.json().teams);
  });
});

describeSecurity('GET /teams', () => service, {
  method: 'GET',
  right: 'users:read',
  addressesResource: false,
  request: async () => ({ url: '/teams' }),
});
