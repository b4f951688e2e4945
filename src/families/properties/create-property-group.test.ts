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
  isDefault: boolean;
}

async function addPopulation(tenant: Tenant, name = 'Customers') {
  const response = await call(service, 'POST', '/populations', { token: tenant.token, body: { name } });
  expect(response.statusCode, response.body).toBe(201);
  return response.json<{ populationId: string }>().populationId;
}

async function addProperties(tenant: Tenant, names: string[]) {
  const response = await call(service, 'POST', '/properties/import', { token: tenant.token, body: names.map((name) => ({ name, propertyType: 'STRING' })) });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<{ results: { personProperty: { propertyId: string } }[] }>().results.map((result) => result.personProperty.propertyId);
}

async function groups(tenant: Tenant) {
  const response = await call(service, 'GET', '/property-groups', { token: tenant.token });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<{ results: Group[] }>().results;
}

async function groupOf(tenant: Tenant, propertyId: string) {
  const response = await call(service, 'GET', '/properties', { token: tenant.token, query: { size: '100' } });
  return response.json<{ results: { propertyId: string; propertyGroupId: string }[] }>().results.find((property) => property.propertyId === propertyId)?.propertyGroupId;
}

const createGroup = (tenant: Tenant, body: unknown) => call(service, 'POST', '/property-groups', { token: tenant.token, body });

describe('POST /property-groups', () => {
  it('creates a SPECIFIC group for populations and moves the properties named into it', async () => {
    const tenant = await createTenant(service);
    const customers = await addPopulation(tenant, 'Customers');
    const beta = await addPopulation(tenant, 'Beta testers');
    const [age, plan, city] = await addProperties(tenant, ['Age', 'Plan', 'City']);
    const general = await groupOf(tenant, age!);
    const response = await createGroup(tenant, { name: 'Shopping habits', scopeType: 'SPECIFIC', populationIds: [beta, customers], propertyIds: [plan, age] });
    expect(response.statusCode, response.body).toBe(201);
    const group = response.json<Group>();
    expect(group).toEqual({
      propertyGroupId: expect.stringMatching(/^prg_/),
      name: 'Shopping habits',
      scopeType: 'SPECIFIC',
      populationIds: [customers, beta],
      propertyIds: [age, plan],
      isDefault: false,
    });
    expect(await groupOf(tenant, age!)).toBe(group.propertyGroupId);
    expect(await groupOf(tenant, city!)).toBe(general);
    expect(await groups(tenant)).toEqual([
      { propertyGroupId: general, name: 'General', scopeType: 'ALL', populationIds: [], propertyIds: [city], isDefault: true },
      group,
    ]);
  });

  it('creates an empty ALL group, and moves a property from one group to another', async () => {
    const tenant = await createTenant(service);
    const [age] = await addProperties(tenant, ['Age']);
    const first = await createGroup(tenant, { name: 'Profile', scopeType: 'ALL' });
    expect(first.statusCode, first.body).toBe(201);
    expect(first.json()).toMatchObject({ name: 'Profile', scopeType: 'ALL', populationIds: [], propertyIds: [], isDefault: false });
    const second = await createGroup(tenant, { name: 'Profile', scopeType: 'ALL', populationIds: [], propertyIds: [age] });
    expect(second.statusCode, second.body).toBe(201);
    const third = await createGroup(tenant, { name: 'Demographics', scopeType: 'ALL', propertyIds: [age] });
    expect(third.json().propertyIds).toEqual([age]);
    const all = await groups(tenant);
    expect(all.map((group) => [group.name, group.propertyIds])).toEqual([
      ['General', []],
      ['Profile', []],
      ['Profile', []],
      ['Demographics', [age]],
    ]);
  });

  it('refuses a SPECIFIC group without populations and an ALL group with them (400 naming populationIds)', async () => {
    const tenant = await createTenant(service);
    const population = await addPopulation(tenant);
    for (const body of [
      { name: 'G', scopeType: 'SPECIFIC' },
      { name: 'G', scopeType: 'SPECIFIC', populationIds: [] },
      { name: 'G', scopeType: 'ALL', populationIds: [population] },
    ]) {
      const response = await createGroup(tenant, body);
      expect(response.statusCode, JSON.stringify(body)).toBe(400);
      expect(response.json()).toEqual({ errors: [{ message: expect.any(String), path: ['populationIds'] }] });
    }
    expect(await groups(tenant)).toEqual([]);
  });

  it("answers unknown or another workspace's populations and properties with 404 naming the item, changing nothing", async () => {
    const tenant = await createTenant(service);
    const other = await createTenant(service, 'Other workspace');
    const population = await addPopulation(tenant);
    const theirPopulation = await addPopulation(other);
    const [age] = await addProperties(tenant, ['Age']);
    const [theirProperty] = await addProperties(other, ['Age']);
    const general = await groupOf(tenant, age!);
    for (const [body, error] of [
      [{ populationIds: [population, 'pop_nothere'] }, { message: 'Population not found', path: ['populationIds', '1'] }],
      [{ populationIds: [theirPopulation] }, { message: 'Population not found', path: ['populationIds', '0'] }],
      [{ populationIds: [population], propertyIds: [age, 'prp_nothere'] }, { message: 'Property not found', path: ['propertyIds', '1'] }],
      [{ populationIds: [population], propertyIds: [theirProperty, age] }, { message: 'Property not found', path: ['propertyIds', '0'] }],
    ] as const) {
      const response = await createGroup(tenant, { name: 'G', scopeType: 'SPECIFIC', ...body });
      expect(response.statusCode, JSON.stringify(body)).toBe(404);
      expect(response.json()).toEqual({ errors: [error] });
    }
    expect((await groups(tenant)).map((group) => group.name)).toEqual(['General']);
    expect(await groupOf(tenant, age!)).toBe(general);
  });

  describe('400', () => {
    it.each([
      ['no name', { scopeType: 'ALL' }, ['name']],
      ['an empty name', { name: '', scopeType: 'ALL' }, ['name']],
      ['no scopeType', { name: 'G' }, ['scopeType']],
      ['an unknown scopeType', { name: 'G', scopeType: 'SOME' }, ['scopeType']],
      ['a repeated population', { name: 'G', scopeType: 'SPECIFIC', populationIds: ['pop_a', 'pop_a'] }, ['populationIds']],
      ['a repeated property', { name: 'G', scopeType: 'ALL', propertyIds: ['prp_a', 'prp_a'] }, ['propertyIds']],
      ['101 populations', { name: 'G', scopeType: 'SPECIFIC', populationIds: Array.from({ length: 101 }, (_, index) => `pop_${index}`) }, ['populationIds']],
      ['an unknown field', { name: 'G', scopeType: 'ALL', populations: [] }, ['populations']],
    ])('refuses %s', async (_case, body, path) => {
      const tenant = await createTenant(service);
      const response = await createGroup(tenant, body);
      expect(response.statusCode, response.body).toBe(400);
      expect(response.json()).toEqual({ errors: [{ message: expect.any(String), path }] });
    });
  });

  it('leaves each property in exactly one group when requests race to move it', async () => {
    const tenant = await createTenant(service);
    const propertyIds = await addProperties(tenant, ['A', 'B', 'C']);
    const responses = await Promise.all(
      Array.from({ length: 4 }, (_, index) => createGroup(tenant, { name: `Group ${index}`, scopeType: 'ALL', propertyIds: index % 2 ? propertyIds : [...propertyIds].reverse() })),
    );
    expect(responses.map((response) => response.statusCode)).toEqual([201, 201, 201, 201]);
    const held = (await groups(tenant)).flatMap((group) => group.propertyIds);
    expect(held.sort()).toEqual([...propertyIds].sort());
  });
});

describeSecurity('POST /property-groups', () => service, {
  method: 'POST',
  right: 'properties:write',
  addressesResource: true,
  request: async (tenant) => ({ url: '/property-groups', body: { name: 'Profile', scopeType: 'SPECIFIC', populationIds: [await addPopulation(tenant)] } }),
});
