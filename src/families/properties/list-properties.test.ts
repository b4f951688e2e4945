import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type Tenant, type TestService } from '../../../test/harness.js';
import { describeSecurity } from '../../../test/security.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service.stop());

interface PropertyPage {
  results: { propertyId: string; name: string; propertyType: string; propertyOptions: { name: string; order: string }[]; propertyGroupId: string }[];
  total: number;
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string; endCursor: string };
}

/** Creates the properties, one request per 10, and returns their ids in order. */
async function addProperties(tenant: Tenant, count: number, prefix = 'Property') {
  const ids: string[] = [];
  for (let start = 0; start < count; start += 10) {
    const items = Array.from({ length: Math.min(10, count - start) }, (_, index) => ({ name: `${prefix} ${start + index}`, propertyType: 'STRING' }));
    const response = await call(service, 'POST', '/properties/import', { token: tenant.token, body: items });
    expect(response.statusCode, response.body).toBe(200);
    ids.push(...response.json<{ results: { personProperty: { propertyId: string } }[] }>().results.map((result) => result.personProperty.propertyId));
  }
  expect(ids).toHaveLength(count);
  return ids;
}

async function list(tenant: Tenant, query: Record<string, string> = {}) {
  const response = await call(service, 'GET', '/properties', { token: tenant.token, query });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<PropertyPage>();
}

async function readAll(tenant: Tenant, query: Record<string, string>, between: () => Promise<void> = async () => {}) {
  const pages: PropertyPage[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await list(tenant, cursor === undefined ? query : { ...query, startCursor: cursor });
    pages.push(page);
    if (!page.pageInfo.hasNextPage) return pages;
    await between();
    cursor = page.pageInfo.endCursor;
    expect(pages.length).toBeLessThan(20);
  }
}

describe('GET /properties (E10)', () => {
  it('lists the properties with their options in the order they were made, with the exact total', async () => {
    const tenant = await createTenant(service);
    const imported = await call(service, 'POST', '/properties/import', {
      token: tenant.token,
      body: [
        { name: 'Age', propertyType: 'NUMBER' },
        { name: 'Plan', propertyType: 'SINGLE_SELECT', propertyOptions: [{ name: 'Free' }, { name: 'Paid' }] },
      ],
    });
    expect(imported.statusCode, imported.body).toBe(200);
    const page = await list(tenant);
    expect(page.results).toEqual(imported.json<{ results: { personProperty: unknown }[] }>().results.map((result) => result.personProperty));
    expect(page.results[1]!.propertyOptions.map((option) => [option.name, option.order])).toEqual([
      ['Free', '0'],
      ['Paid', '1'],
    ]);
    expect(page.total).toBe(2);
    expect(page.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: false });
  });

  it('gives an empty page for a workspace without properties', async () => {
    const tenant = await createTenant(service);
    expect(await list(tenant)).toEqual({ results: [], total: 0, pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: '', endCursor: '' } });
  });

  it("never shows another workspace's properties", async () => {
    const tenant = await createTenant(service);
    const other = await createTenant(service, 'Other workspace');
    const mine = await addProperties(tenant, 1, 'Mine');
    await addProperties(other, 2, 'Theirs');
    const page = await list(tenant);
    expect(page.results.map((property) => property.propertyId)).toEqual(mine);
    expect(page.total).toBe(1);
  });

  it('pages through 7 properties 3 at a time, each exactly once, and ends on a full page without an extra one', async () => {
    const tenant = await createTenant(service);
    const ids = await addProperties(tenant, 7);
    const pages = await readAll(tenant, { size: '3' });
    expect(pages.map((page) => page.results.length)).toEqual([3, 3, 1]);
    expect(pages.map((page) => page.total)).toEqual([7, 7, 7]);
    expect(pages.flatMap((page) => page.results.map((property) => property.propertyId))).toEqual(ids);

    const six = await createTenant(service);
    await addProperties(six, 6);
    expect((await readAll(six, { size: '3' })).map((page) => page.results.length)).toEqual([3, 3]);
  });

  it('sees every existing property exactly once while properties are added and deleted between pages', async () => {
    const tenant = await createTenant(service);
    const existing = await addProperties(tenant, 9);
    const doomed = existing.splice(7, 1)[0]!;
    let added = 0;
    const pages = await readAll(tenant, { size: '3' }, async () => {
      await addProperties(tenant, 1, `Added ${added++}`);
      if (added === 1) expect((await call(service, 'DELETE', `/properties/${doomed}`, { token: tenant.token })).statusCode).toBe(200);
    });
    const seen = pages.flatMap((page) => page.results.map((property) => property.propertyId));
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.filter((propertyId) => existing.includes(propertyId))).toEqual(existing);
    expect(seen).not.toContain(doomed);
  });

  describe('size', () => {
    it('accepts 1 and 100 and defaults to 25', async () => {
      const tenant = await createTenant(service);
      await addProperties(tenant, 26);
      expect((await list(tenant)).results).toHaveLength(25);
      expect((await list(tenant, { size: '1' })).results).toHaveLength(1);
      const all = await list(tenant, { size: '100' });
      expect(all.results).toHaveLength(26);
      expect(all.pageInfo.hasNextPage).toBe(false);
    });

    it.each(['0', '101', '-1', '2.5', 'ten'])('refuses size=%s with 400 naming ["size"]', async (size) => {
      const tenant = await createTenant(service);
      const response = await call(service, 'GET', '/properties', { token: tenant.token, query: { size } });
      expect(response.statusCode).toBe(400);
      expect(response.json()).toEqual({ errors: [{ message: expect.any(String), path: ['size'] }] });
    });
  });

  it('refuses an unknown query parameter', async () => {
    const tenant = await createTenant(service);
    const response = await call(service, 'GET', '/properties', { token: tenant.token, query: { propertyGroupId: 'prg_x' } });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ errors: [{ message: expect.any(String), path: ['propertyGroupId'] }] });
  });

  it("refuses a tampered cursor, and another list's, with 400 naming startCursor", async () => {
    const tenant = await createTenant(service);
    await addProperties(tenant, 3);
    const cursor = (await list(tenant, { size: '1' })).pageInfo.endCursor;
    const [payload, signature] = cursor.split('.') as [string, string];
    const populations = await call(service, 'POST', '/populations', { token: tenant.token, body: { name: 'A' } });
    expect(populations.statusCode).toBe(201);
    await call(service, 'POST', '/populations', { token: tenant.token, body: { name: 'B' } });
    const populationCursor = (await call(service, 'GET', '/populations', { token: tenant.token, query: { size: '1' } })).json<PropertyPage>().pageInfo.endCursor;
    for (const startCursor of [`${payload}x.${signature}`, cursor.slice(0, -1), 'not-a-cursor', '', populationCursor]) {
      const response = await call(service, 'GET', '/properties', { token: tenant.token, query: { startCursor } });
      expect(response.statusCode, startCursor).toBe(400);
      expect(response.json()).toEqual({ errors: [{ message: expect.any(String), path: ['startCursor'] }] });
    }
  });
});

describeSecurity('GET /properties', () => service, {
  method: 'GET',
  right: 'properties:read',
  addressesResource: false,
  request: async () => ({ url: '/properties' }),
});
