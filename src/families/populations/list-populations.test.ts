import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type Tenant, type TestService } from '../../../test/harness.js';
import { describeSecurity } from '../../../test/security.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service.stop());

interface PopulationPage {
  results: { populationId: string; name: string; description: string }[];
  total: number;
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string; endCursor: string };
}

async function addPopulations(tenant: Tenant, count: number, prefix = 'Population') {
  const ids: string[] = [];
  for (let index = 0; index < count; index++) {
    const response = await call(service, 'POST', '/populations', { token: tenant.token, body: { name: `${prefix} ${index}` } });
    expect(response.statusCode, response.body).toBe(201);
    ids.push(response.json<{ populationId: string }>().populationId);
  }
  return ids;
}

async function list(tenant: Tenant, query: Record<string, string> = {}) {
  const response = await call(service, 'GET', '/populations', { token: tenant.token, query });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<PopulationPage>();
}

describe('GET /populations (E22)', () => {
  it('lists the populations in the order they were made, with the exact total', async () => {
    const tenant = await createTenant(service);
    const ids = await addPopulations(tenant, 3);
    const body = await list(tenant);
    expect(body.results).toEqual(ids.map((populationId, index) => ({ populationId, name: `Population ${index}`, description: '' })));
    expect(body.total).toBe(3);
    expect(body.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: false });
  });

  it("gives an empty page for a workspace without populations and never shows another workspace's", async () => {
    const tenant = await createTenant(service);
    const other = await createTenant(service, 'Other workspace');
    await addPopulations(other, 2);
    expect(await list(tenant)).toEqual({ results: [], total: 0, pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: '', endCursor: '' } });
  });

  it('pages 7 populations 3 at a time, each exactly once, also while new ones are made between pages', async () => {
    const tenant = await createTenant(service);
    const existing = await addPopulations(tenant, 7);
    const seen: string[] = [];
    const totals: number[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const body = await list(tenant, cursor === undefined ? { size: '3' } : { size: '3', startCursor: cursor });
      pages++;
      totals.push(body.total);
      seen.push(...body.results.map((population) => population.populationId));
      cursor = body.pageInfo.hasNextPage ? body.pageInfo.endCursor : undefined;
      if (pages === 1) await addPopulations(tenant, 1, 'Added');
    } while (cursor !== undefined && pages < 10);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.slice(0, 7)).toEqual(existing);
    expect(seen).toHaveLength(8);
    expect(totals).toEqual([7, 8, 8]);
  });

  it('defaults size to 25 and accepts 100', async () => {
    const tenant = await createTenant(service);
    await addPopulations(tenant, 26);
    expect((await list(tenant)).results).toHaveLength(25);
    expect((await list(tenant, { size: '100' })).results).toHaveLength(26);
  });

  it.each([
    ['size=0', { size: '0' }, ['size']],
    ['size=101', { size: '101' }, ['size']],
    ['a bad cursor', { startCursor: 'nope' }, ['startCursor']],
    ['an unknown parameter', { name: 'x' }, ['name']],
  ])('refuses %s with 400', async (_case, query, path) => {
    const tenant = await createTenant(service);
    const response = await call(service, 'GET', '/populations', { token: tenant.token, query });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ errors: [{ message: expect.any(String), path }] });
  });

  it('refuses a tampered cursor', async () => {
    const tenant = await createTenant(service);
    await addPopulations(tenant, 2);
    const cursor = (await list(tenant, { size: '1' })).pageInfo.endCursor;
    const response = await call(service, 'GET', '/populations', { token: tenant.token, query: { startCursor: `x${cursor}` } });
    expect(response.statusCode).toBe(400);
  });
});

describeSecurity('GET /populations', () => service, {
  method: 'GET',
  right: 'populations:read',
  addressesResource: false,
  request: async () => ({ url: '/populations' }),
});
