import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type Tenant, type TestService } from '../../../test/harness.js';
import { describeSecurity } from '../../../test/security.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service.stop());

interface PropertyPage {
  results: { propertyId: string; name: string; propertyGroupId: string; propertyOptions: { name: string }[] }[];
  total: number;
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string; endCursor: string };
}

async function addGroup(tenant: Tenant, name = 'Profile', propertyIds: string[] = []) {
  const response = await call(service, 'POST', '/property-groups', { token: tenant.token, body: { name, scopeType: 'ALL', propertyIds } });
  expect(response.statusCode, response.body).toBe(201);
  return response.json<{ propertyGroupId: string }>().propertyGroupId;
}

async function addProperties(tenant: Tenant, propertyGroupId: string | undefined, names: string[]) {
  const response = await call(service, 'POST', '/properties/import', {
    token: tenant.token,
    body: names.map((name) => ({ name, propertyType: 'MULTI_SELECT', propertyOptions: [{ name: 'A' }, { name: 'B' }], ...(propertyGroupId ? { propertyGroupId } : {}) })),
  });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<{ results: { personProperty: { propertyId: string } }[] }>().results.map((result) => result.personProperty.propertyId);
}

async function page(tenant: Tenant, propertyGroupId: string, query: Record<string, string> = {}) {
  const response = await call(service, 'GET', `/property-groups/${propertyGroupId}/properties`, { token: tenant.token, query });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<PropertyPage>();
}

describe('GET /property-groups/{propertyGroupId}/properties (E9)', () => {
  it("lists the group's properties only, with options, in the order they were made", async () => {
    const tenant = await createTenant(service);
    const profile = await addGroup(tenant);
    const mine = await addProperties(tenant, profile, ['Age', 'City']);
    await addProperties(tenant, undefined, ['Elsewhere']);
    const body = await page(tenant, profile);
    expect(body.results.map((property) => property.propertyId)).toEqual(mine);
    expect(body.results.every((property) => property.propertyGroupId === profile)).toBe(true);
    expect(body.results[0]!.propertyOptions.map((option) => option.name)).toEqual(['A', 'B']);
    expect(body.total).toBe(2);
  });

  it('gives an empty page for a group without properties, and follows properties that move in', async () => {
    const tenant = await createTenant(service);
    const [age] = await addProperties(tenant, undefined, ['Age']);
    const empty = await addGroup(tenant, 'Empty');
    expect(await page(tenant, empty)).toEqual({ results: [], total: 0, pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: '', endCursor: '' } });
    const moved = await addGroup(tenant, 'Moved', [age!]);
    expect((await page(tenant, moved)).results.map((property) => property.propertyId)).toEqual([age]);
  });

  it('pages 5 properties 2 at a time, and refuses the cursor of another group', async () => {
    const tenant = await createTenant(service);
    const profile = await addGroup(tenant);
    const ids = await addProperties(tenant, profile, ['P0', 'P1', 'P2', 'P3', 'P4']);
    const other = await addGroup(tenant, 'Other');
    await addProperties(tenant, other, ['Q0', 'Q1', 'Q2']);
    const seen: string[] = [];
    let cursor: string | undefined;
    const sizes: number[] = [];
    do {
      const body = await page(tenant, profile, cursor === undefined ? { size: '2' } : { size: '2', startCursor: cursor });
      sizes.push(body.results.length);
      expect(body.total).toBe(5);
      seen.push(...body.results.map((property) => property.propertyId));
      cursor = body.pageInfo.hasNextPage ? body.pageInfo.endCursor : undefined;
    } while (cursor !== undefined);
    expect(sizes).toEqual([2, 2, 1]);
    expect(seen).toEqual(ids);

    const profileCursor = (await page(tenant, profile, { size: '1' })).pageInfo.endCursor;
    const response = await call(service, 'GET', `/property-groups/${other}/properties`, { token: tenant.token, query: { startCursor: profileCursor } });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ errors: [{ message: expect.any(String), path: ['startCursor'] }] });
  });

  it('answers an unknown group with 404 naming propertyGroupId', async () => {
    const tenant = await createTenant(service);
    const response = await call(service, 'GET', '/property-groups/prg_nothere/properties', { token: tenant.token });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ errors: [{ message: 'Property group not found', path: ['propertyGroupId'] }] });
  });

  it.each([
    ['size=0', { size: '0' }, ['size']],
    ['size=101', { size: '101' }, ['size']],
    ['an unknown parameter', { populationId: 'pop_a' }, ['populationId']],
  ])('refuses %s with 400', async (_case, query, path) => {
    const tenant = await createTenant(service);
    const profile = await addGroup(tenant);
    const response = await call(service, 'GET', `/property-groups/${profile}/properties`, { token: tenant.token, query });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ errors: [{ message: expect.any(String), path }] });
  });
});

describeSecurity('GET /property-groups/{propertyGroupId}/properties', () => service, {
  method: 'GET',
  right: 'properties:read',
  addressesResource: true,
  request: async (tenant) => ({ url: `/property-groups/${await addGroup(tenant)}/properties` }),
});
