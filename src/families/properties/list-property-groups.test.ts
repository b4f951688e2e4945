import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type Tenant, type TestService } from '../../../test/harness.js';
import { describeSecurity } from '../../../test/security.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service.stop());

interface Group {
  propertyGroupId: string;
  name: string;
  scopeType: string;
  populationIds: string[];
  propertyIds: string[];
}

async function addPopulation(tenant: Tenant, name = 'Customers') {
  const response = await call(service, 'POST', '/populations', { token: tenant.token, body: { name } });
  expect(response.statusCode, response.body).toBe(201);
  return response.json<{ populationId: string }>().populationId;
}

async function addGroup(tenant: Tenant, body: object) {
  const response = await call(service, 'POST', '/property-groups', { token: tenant.token, body });
  expect(response.statusCode, response.body).toBe(201);
  return response.json<Group>();
}

async function list(tenant: Tenant, query: Record<string, string> = {}) {
  const response = await call(service, 'GET', '/property-groups', { token: tenant.token, query });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<{ results: Group[] }>();
}

describe('GET /property-groups (E11)', () => {
  it('lists every group in the order they were made, without paging', async () => {
    const tenant = await createTenant(service);
    const customers = await addPopulation(tenant);
    const made: Group[] = [];
    for (let index = 0; index < 30; index++) {
      made.push(await addGroup(tenant, index % 3 ? { name: `All ${index}`, scopeType: 'ALL' } : { name: `Specific ${index}`, scopeType: 'SPECIFIC', populationIds: [customers] }));
    }
    const body = await list(tenant);
    expect(Object.keys(body)).toEqual(['results']);
    expect(body.results).toEqual(made);
  });

  it('gives an empty list for a workspace without groups', async () => {
    expect(await list(await createTenant(service))).toEqual({ results: [] });
  });

  it('with populationId, gives the ALL groups and the SPECIFIC groups that name that population', async () => {
    const tenant = await createTenant(service);
    const customers = await addPopulation(tenant, 'Customers');
    const beta = await addPopulation(tenant, 'Beta testers');
    const lonely = await addPopulation(tenant, 'Lonely');
    const everyone = await addGroup(tenant, { name: 'Everyone', scopeType: 'ALL' });
    const forCustomers = await addGroup(tenant, { name: 'Customers only', scopeType: 'SPECIFIC', populationIds: [customers] });
    const forBoth = await addGroup(tenant, { name: 'Customers and beta', scopeType: 'SPECIFIC', populationIds: [beta, customers] });
    const forBeta = await addGroup(tenant, { name: 'Beta only', scopeType: 'SPECIFIC', populationIds: [beta] });
    const ids = (body: { results: Group[] }) => body.results.map((group) => group.name);
    expect(ids(await list(tenant, { populationId: customers }))).toEqual([everyone.name, forCustomers.name, forBoth.name]);
    expect(ids(await list(tenant, { populationId: beta }))).toEqual([everyone.name, forBoth.name, forBeta.name]);
    expect(ids(await list(tenant, { populationId: lonely }))).toEqual([everyone.name]);
    // A group's populationIds are all of its populations, not only the one asked about.
    expect((await list(tenant, { populationId: beta })).results[1]!.populationIds).toEqual([customers, beta]);
  });

  it("never shows another workspace's groups", async () => {
    const tenant = await createTenant(service);
    const other = await createTenant(service, 'Other workspace');
    await addGroup(other, { name: 'Theirs', scopeType: 'ALL' });
    const mine = await addGroup(tenant, { name: 'Mine', scopeType: 'ALL' });
    expect((await list(tenant)).results).toEqual([mine]);
  });

  it("answers an unknown or another workspace's populationId with 404 naming populationId", async () => {
    const tenant = await createTenant(service);
    const other = await createTenant(service, 'Other workspace');
    const theirs = await addPopulation(other);
    for (const populationId of ['pop_nothere', theirs]) {
      const response = await call(service, 'GET', '/property-groups', { token: tenant.token, query: { populationId } });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({ errors: [{ message: 'Population not found', path: ['populationId'] }] });
    }
  });

  it.each([
    ['an empty populationId', { populationId: '' }, ['populationId']],
    ['an unknown parameter', { size: '10' }, ['size']],
  ])('refuses %s with 400', async (_case, query, path) => {
    const tenant = await createTenant(service);
    const response = await call(service, 'GET', '/property-groups', { token: tenant.token, query });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ errors: [{ message: expect.any(String), path }] });
  });
});

describeSecurity('GET /property-groups', () => service, {
  method: 'GET',
  right: 'properties:read',
  addressesResource: false,
  request: async () => ({ url: '/property-groups' }),
});

describeSecurity('GET /property-groups?populationId', () => service, {
  method: 'GET',
  right: 'properties:read',
  addressesResource: true,
  request: async (tenant) => ({ url: '/property-groups', query: { populationId: await addPopulation(tenant) } }),
});
