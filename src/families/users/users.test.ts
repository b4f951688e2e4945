import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type Tenant, type TestService } from '../../../test/harness.js';
import { describeSecurity } from '../../../test/security.js';
import { createCustomRole } from '../workspaces/service.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service.stop());

const admin = (tenant: Tenant) => ({ token: tenant.token });

describe('GET /users', () => {
  it("lists the workspace's users with their teams, keyset-paged, filtered by status, role and team", async () => {
    const tenant = await createTenant(service);
    const researcher = await tenant.tokenFor('RESEARCHER');
    const observer = await tenant.tokenFor('OBSERVER');
    const team = (await call(service, 'POST', '/teams', { ...admin(tenant), body: { name: 'Discovery' } })).json();
    expect((await call(service, 'PUT', `/teams/${team.teamId}/members/${researcher.userId}`, admin(tenant))).statusCode).toBe(200);
    await call(service, 'POST', `/users/${observer.userId}/deactivate`, admin(tenant));

    const first = await call(service, 'GET', '/users', { ...admin(tenant), query: { size: '2' } });
    expect(first.statusCode, first.body).toBe(200);
    const page = first.json();
    expect(page.total).toBe(3);
    expect(page.results.map((user: { userId: string }) => user.userId)).toEqual([tenant.userId, researcher.userId]);
    expect(page.results[1]).toMatchObject({ role: 'RESEARCHER', customRoleId: null, teams: [{ teamId: team.teamId, name: 'Discovery' }] });
    expect(page.pageInfo.hasNextPage).toBe(true);
    const second = await call(service, 'GET', '/users', { ...admin(tenant), query: { size: '2', startCursor: page.pageInfo.endCursor } });
    expect(second.json().results.map((user: { userId: string }) => user.userId)).toEqual([observer.userId]);

    const byFilter = async (query: Record<string, string>) => (await call(service, 'GET', '/users', { ...admin(tenant), query })).json().results.map((user: { userId: string }) => user.userId);
    expect(await byFilter({ status: 'DEACTIVATED' })).toEqual([observer.userId]);
    expect(await byFilter({ role: 'SUPER_ADMIN' })).toEqual([tenant.userId]);
    expect(await byFilter({ teamId: team.teamId })).toEqual([researcher.userId]);
    // A cursor of another filter does not verify.
    const crossed = await call(service, 'GET', '/users', { ...admin(tenant), query: { status: 'ACTIVE', startCursor: page.pageInfo.endCursor } });
    expect(crossed.statusCode).toBe(400);
  });

  it('refuses an unknown filter value, naming the field and what is allowed', async () => {
    const tenant = await createTenant(service);
    const response = await call(service, 'GET', '/users', { ...admin(tenant), query: { role: 'KING' } });
    expect(response.statusCode).toBe(400);
    expect(response.json().errors[0]).toMatchObject({ path: ['role'], message: expect.stringContaining('SUPER_ADMIN') });
  });
});

describe('PATCH /users/{userId}', () => {
  it('changes role, seat, name and job role; a role change holds at once for the user\'s keys', async () => {
    const tenant = await createTenant(service);
    const user = await tenant.tokenFor('OBSERVER');
    // Cached as an OBSERVER: cannot write studies.
    expect((await call(service, 'POST', '/studies', { token: user.token, body: { name: 'x' } })).statusCode).toBe(403);
    const response = await call(service, 'PATCH', `/users/${user.userId}`, { ...admin(tenant), body: { role: 'RESEARCHER', seat: 'LITE', fullname: 'Grace Hopper', jobRole: 'Researcher' } });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({ userId: user.userId, role: 'RESEARCHER', seat: 'LITE', fullname: 'Grace Hopper', jobRole: 'Researcher', customRoleId: null });
    const studies = await call(service, 'GET', '/studies', { token: user.token });
    expect(studies.statusCode).toBe(200);
    const teams = await call(service, 'POST', '/teams', { token: user.token, body: { name: 'Mine' } });
    expect(teams.statusCode).toBe(403);
  });

  it('gives a CUSTOM user exactly the rights of their custom role, and takes them back when the role changes', async () => {
    const tenant = await createTenant(service);
    const user = await tenant.tokenFor('OBSERVER');
    const role = (await call(service, 'POST', '/custom-roles', { ...admin(tenant), body: { name: 'Team admin', rights: ['users:read', 'studies:read'] } })).json();
    const missing = await call(service, 'PATCH', `/users/${user.userId}`, { ...admin(tenant), body: { role: 'CUSTOM' } });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().errors[0].path).toEqual(['customRoleId']);
    const made = await call(service, 'PATCH', `/users/${user.userId}`, { ...admin(tenant), body: { role: 'CUSTOM', customRoleId: role.customRoleId } });
    expect(made.json()).toMatchObject({ role: 'CUSTOM', customRoleId: role.customRoleId });
    expect((await call(service, 'GET', '/studies', { token: user.token })).statusCode).toBe(200);
    // OBSERVER's other read rights are not the custom role's.
    expect((await call(service, 'GET', '/populations', { token: user.token })).statusCode).toBe(403);
    await call(service, 'PATCH', `/custom-roles/${role.customRoleId}`, { ...admin(tenant), body: { rights: ['users:read', 'populations:read'] } });
    expect((await call(service, 'GET', '/studies', { token: user.token })).statusCode).toBe(403);
    expect((await call(service, 'GET', '/populations', { token: user.token })).statusCode).toBe(200);
    // Another role: the custom role goes.
    const back = await call(service, 'PATCH', `/users/${user.userId}`, { ...admin(tenant), body: { role: 'OBSERVER' } });
    expect(back.json()).toMatchObject({ role: 'OBSERVER', customRoleId: null });
    const wrong = await call(service, 'PATCH', `/users/${user.userId}`, { ...admin(tenant), body: { role: 'OBSERVER', customRoleId: role.customRoleId } });
    expect(wrong.statusCode).toBe(400);
    const unknownRole = await call(service, 'PATCH', `/users/${user.userId}`, { ...admin(tenant), body: { role: 'CUSTOM', customRoleId: 'crl_none' } });
    expect(unknownRole.statusCode).toBe(404);
    expect(unknownRole.json().errors[0].path).toEqual(['customRoleId']);
  });

  it("refuses to demote the last active SUPER_ADMIN (409), and changes nothing", async () => {
    const tenant = await createTenant(service);
    const response = await call(service, 'PATCH', `/users/${tenant.userId}`, { ...admin(tenant), body: { role: 'OPS_MANAGER', fullname: 'Changed' } });
    expect(response.statusCode).toBe(409);
    expect(response.json().errors[0]).toMatchObject({ path: ['role'], message: expect.stringContaining('last active SUPER_ADMIN') });
    const user = (await call(service, 'GET', `/users/${tenant.userId}`, admin(tenant))).json();
    expect(user).toMatchObject({ role: 'SUPER_ADMIN', fullname: expect.not.stringMatching(/^Changed$/) });
    // With a second SUPER_ADMIN the first may step down.
    await tenant.tokenFor('SUPER_ADMIN');
    expect((await call(service, 'PATCH', `/users/${tenant.userId}`, { ...admin(tenant), body: { role: 'OPS_MANAGER' } })).statusCode).toBe(200);
  });

  it('refuses an empty body and unknown fields, naming them', async () => {
    const tenant = await createTenant(service);
    expect((await call(service, 'PATCH', `/users/${tenant.userId}`, { ...admin(tenant), body: {} })).statusCode).toBe(400);
    const unknown = await call(service, 'PATCH', `/users/${tenant.userId}`, { ...admin(tenant), body: { status: 'ACTIVE' } });
    expect(unknown.statusCode).toBe(400);
    const role = await call(service, 'PATCH', `/users/${tenant.userId}`, { ...admin(tenant), body: { role: 'KING' } });
    expect(role.json().errors[0]).toMatchObject({ path: ['role'], message: expect.stringContaining('OBSERVER') });
  });
});

describe('POST /users/{userId}/deactivate and /reactivate', () => {
  it("stops every key of the user at once, and reactivation brings them back", async () => {
    const tenant = await createTenant(service);
    const user = await tenant.tokenFor('RESEARCHER');
    expect((await call(service, 'GET', '/me', { token: user.token })).statusCode).toBe(200);
    const response = await call(service, 'POST', `/users/${user.userId}/deactivate`, admin(tenant));
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({ status: 'DEACTIVATED' });
    expect((await call(service, 'GET', '/me', { token: user.token })).statusCode).toBe(401);
    // Again: nothing changes.
    expect((await call(service, 'POST', `/users/${user.userId}/deactivate`, admin(tenant))).statusCode).toBe(200);
    const back = await call(service, 'POST', `/users/${user.userId}/reactivate`, admin(tenant));
    expect(back.json()).toMatchObject({ status: 'ACTIVE' });
    expect((await call(service, 'GET', '/me', { token: user.token })).statusCode).toBe(200);
    expect((await call(service, 'POST', `/users/${user.userId}/reactivate`, admin(tenant))).statusCode).toBe(409);
  });

  it('refuses to deactivate the last active SUPER_ADMIN (409)', async () => {
    const tenant = await createTenant(service);
    const response = await call(service, 'POST', `/users/${tenant.userId}/deactivate`, admin(tenant));
    expect(response.statusCode).toBe(409);
    expect(response.json().errors[0].message).toContain('last active SUPER_ADMIN');
    expect((await call(service, 'GET', '/me', admin(tenant))).statusCode).toBe(200);
  });
});

describe('Teams', () => {
  it('creates, renames, fills, empties and deletes a team; names are unique case-insensitively', async () => {
    const tenant = await createTenant(service);
    const member = await tenant.tokenFor('RESEARCHER');
    const created = await call(service, 'POST', '/teams', { ...admin(tenant), body: { name: 'Checkout' } });
    expect(created.statusCode, created.body).toBe(201);
    const team = created.json();
    expect(team).toEqual({ teamId: expect.stringMatching(/^tem_/), name: 'Checkout' });
    const clash = await call(service, 'POST', '/teams', { ...admin(tenant), body: { name: 'CHECKOUT' } });
    expect(clash.statusCode).toBe(409);
    expect(clash.json().errors[0].path).toEqual(['name']);
    const other = (await call(service, 'POST', '/teams', { ...admin(tenant), body: { name: 'Growth' } })).json();
    expect((await call(service, 'PATCH', `/teams/${other.teamId}`, { ...admin(tenant), body: { name: 'checkout' } })).statusCode).toBe(409);
    const renamed = await call(service, 'PATCH', `/teams/${team.teamId}`, { ...admin(tenant), body: { name: 'Payments' } });
    expect(renamed.json()).toEqual({ teamId: team.teamId, name: 'Payments' });

    expect((await call(service, 'PUT', `/teams/${team.teamId}/members/${member.userId}`, admin(tenant))).json()).toEqual({ teamId: team.teamId, userId: member.userId });
    expect((await call(service, 'PUT', `/teams/${team.teamId}/members/${member.userId}`, admin(tenant))).statusCode).toBe(200);
    expect((await call(service, 'GET', '/me', { token: member.token })).json().teams).toEqual([{ teamId: team.teamId, name: 'Payments' }]);
    expect((await call(service, 'PUT', `/teams/${team.teamId}/members/usr_nobody`, admin(tenant))).statusCode).toBe(404);
    expect((await call(service, 'DELETE', `/teams/${team.teamId}/members/${member.userId}`, admin(tenant))).statusCode).toBe(200);
    expect((await call(service, 'DELETE', `/teams/${team.teamId}/members/${member.userId}`, admin(tenant))).statusCode).toBe(404);
    await call(service, 'PUT', `/teams/${team.teamId}/members/${member.userId}`, admin(tenant));
    expect((await call(service, 'DELETE', `/teams/${team.teamId}`, admin(tenant))).json()).toEqual({ teamId: team.teamId });
    expect((await call(service, 'GET', '/me', { token: member.token })).json().teams).toEqual([]);
    expect((await call(service, 'DELETE', `/teams/${team.teamId}`, admin(tenant))).statusCode).toBe(404);
  });

  it('keeps a team that still has studies (409, nothing deleted): its studies go to another team first', async () => {
    const tenant = await createTenant(service);
    const team = (await call(service, 'POST', '/teams', { ...admin(tenant), body: { name: 'Owners' } })).json();
    const study = await call(service, 'POST', '/studies', { token: tenant.token, body: { studyType: 'SURVEY', recruitmentStrategy: 'IN_SERVICE', teamId: team.teamId, studyPlan: { name: 'Owned' } } });
    expect(study.statusCode, study.body).toBe(201);
    const refused = await call(service, 'DELETE', `/teams/${team.teamId}`, admin(tenant));
    expect(refused.statusCode, refused.body).toBe(409);
    expect(refused.json()).toEqual({ errors: [{ message: 'The team has 1 study: give them to another team first', path: ['teamId'] }] });
    expect((await call(service, 'GET', '/teams', { token: tenant.token })).json().results).toEqual([team]);
  });

  it('refuses a blank name, naming the field', async () => {
    const tenant = await createTenant(service);
    const response = await call(service, 'POST', '/teams', { ...admin(tenant), body: { name: '   ' } });
    expect(response.statusCode).toBe(400);
    expect(response.json().errors[0].path).toEqual(['name']);
  });
});

describe('Custom roles', () => {
  it('creates, lists, renames and deletes a custom role; one held by users cannot be deleted (409)', async () => {
    const tenant = await createTenant(service);
    const created = await call(service, 'POST', '/custom-roles', { ...admin(tenant), body: { name: 'Recruiter', rights: ['participants:write', 'studies:read'] } });
    expect(created.statusCode, created.body).toBe(201);
    const role = created.json();
    expect(role).toMatchObject({ customRoleId: expect.stringMatching(/^crl_/), name: 'Recruiter', rights: ['studies:read', 'participants:write'] });
    expect((await call(service, 'POST', '/custom-roles', { ...admin(tenant), body: { name: 'recruiter', rights: [] } })).statusCode).toBe(409);
    expect((await call(service, 'GET', '/custom-roles', admin(tenant))).json().results).toEqual([role]);
    const renamed = await call(service, 'PATCH', `/custom-roles/${role.customRoleId}`, { ...admin(tenant), body: { name: 'Senior recruiter' } });
    expect(renamed.json()).toMatchObject({ name: 'Senior recruiter', rights: role.rights });

    const holder = await tenant.tokenFor('OBSERVER');
    await call(service, 'PATCH', `/users/${holder.userId}`, { ...admin(tenant), body: { role: 'CUSTOM', customRoleId: role.customRoleId } });
    const held = await call(service, 'DELETE', `/custom-roles/${role.customRoleId}`, admin(tenant));
    expect(held.statusCode).toBe(409);
    expect(held.json().errors[0].message).toContain('1 user holds');
    await call(service, 'PATCH', `/users/${holder.userId}`, { ...admin(tenant), body: { role: 'OBSERVER' } });
    expect((await call(service, 'DELETE', `/custom-roles/${role.customRoleId}`, admin(tenant))).statusCode).toBe(200);
    expect((await call(service, 'DELETE', `/custom-roles/${role.customRoleId}`, admin(tenant))).statusCode).toBe(404);
  });

  it('refuses an unknown right or one of SUPER_ADMIN alone, naming the field and listing what is allowed', async () => {
    const tenant = await createTenant(service);
    for (const right of ['studies:fly', 'users:write']) {
      const response = await call(service, 'POST', '/custom-roles', { ...admin(tenant), body: { name: 'Bad', rights: ['studies:read', right] } });
      expect(response.statusCode, right).toBe(400);
      expect(response.json().errors[0]).toMatchObject({ path: ['rights', '1'], message: expect.stringContaining('studies:write') });
      expect(response.json().errors[0].message).not.toContain('users:write');
    }
    expect((await call(service, 'GET', '/custom-roles', admin(tenant))).json().results).toEqual([]);
  });
});

const resources = {
  async user(tenant: Tenant) {
    return (await tenant.tokenFor('OBSERVER')).userId;
  },
  async team(tenant: Tenant) {
    return (await call(service, 'POST', '/teams', { token: tenant.token, body: { name: `Team ${Math.random()}` } })).json().teamId as string;
  },
  async role(tenant: Tenant) {
    return (await createCustomRole(service.deps.db, tenant.workspaceId, `Role ${Math.random()}`, ['studies:read'])).customRoleId;
  },
};

describeSecurity('GET /users', () => service, { method: 'GET', right: 'users:read', addressesResource: false, request: async () => ({ url: '/users' }) });
describeSecurity('GET /users/{userId}', () => service, { method: 'GET', right: 'users:read', addressesResource: true, request: async (tenant) => ({ url: `/users/${tenant.userId}` }) });
describeSecurity('PATCH /users/{userId}', () => service, {
  method: 'PATCH',
  right: 'users:write',
  addressesResource: true,
  request: async (tenant) => ({ url: `/users/${await resources.user(tenant)}`, body: { seat: 'LITE' } }),
});
describeSecurity('POST /users/{userId}/deactivate', () => service, {
  method: 'POST',
  right: 'users:write',
  addressesResource: true,
  request: async (tenant) => ({ url: `/users/${await resources.user(tenant)}/deactivate` }),
});
describeSecurity('POST /users/{userId}/reactivate', () => service, {
  method: 'POST',
  right: 'users:write',
  addressesResource: true,
  request: async (tenant) => {
    const userId = await resources.user(tenant);
    await call(service, 'POST', `/users/${userId}/deactivate`, { token: tenant.token });
    return { url: `/users/${userId}/reactivate` };
  },
});
describeSecurity('POST /teams', () => service, { method: 'POST', right: 'users:write', addressesResource: false, request: async () => ({ url: '/teams', body: { name: `Team ${Math.random()}` } }) });
describeSecurity('PATCH /teams/{teamId}', () => service, {
  method: 'PATCH',
  right: 'users:write',
  addressesResource: true,
  request: async (tenant) => ({ url: `/teams/${await resources.team(tenant)}`, body: { name: `Renamed ${Math.random()}` } }),
});
describeSecurity('DELETE /teams/{teamId}', () => service, { method: 'DELETE', right: 'users:write', addressesResource: true, request: async (tenant) => ({ url: `/teams/${await resources.team(tenant)}` }) });
describeSecurity('PUT /teams/{teamId}/members/{userId}', () => service, {
  method: 'PUT',
  right: 'users:write',
  addressesResource: true,
  request: async (tenant) => ({ url: `/teams/${await resources.team(tenant)}/members/${await resources.user(tenant)}` }),
});
describeSecurity('DELETE /teams/{teamId}/members/{userId}', () => service, {
  method: 'DELETE',
  right: 'users:write',
  addressesResource: true,
  request: async (tenant) => {
    const teamId = await resources.team(tenant);
    const userId = await resources.user(tenant);
    await call(service, 'PUT', `/teams/${teamId}/members/${userId}`, { token: tenant.token });
    return { url: `/teams/${teamId}/members/${userId}` };
  },
});
describeSecurity('GET /custom-roles', () => service, { method: 'GET', right: 'users:read', addressesResource: false, request: async () => ({ url: '/custom-roles' }) });
describeSecurity('POST /custom-roles', () => service, { method: 'POST', right: 'users:write', addressesResource: false, request: async () => ({ url: '/custom-roles', body: { name: `Role ${Math.random()}`, rights: ['studies:read'] } }) });
describeSecurity('PATCH /custom-roles/{roleId}', () => service, {
  method: 'PATCH',
  right: 'users:write',
  addressesResource: true,
  request: async (tenant) => ({ url: `/custom-roles/${await resources.role(tenant)}`, body: { rights: ['people:read'] } }),
});
describeSecurity('DELETE /custom-roles/{roleId}', () => service, { method: 'DELETE', right: 'users:write', addressesResource: true, request: async (tenant) => ({ url: `/custom-roles/${await resources.role(tenant)}` }) });
