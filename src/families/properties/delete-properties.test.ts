import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type Tenant, type TestService } from '../../../test/harness.js';
import { describeSecurity } from '../../../test/security.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service.stop());

async function addProperties(tenant: Tenant, count: number, prefix = 'Property') {
  const items = Array.from({ length: count }, (_, index) => ({ name: `${prefix} ${index}`, propertyType: 'SINGLE_SELECT', propertyOptions: [{ name: 'Yes' }] }));
  const response = await call(service, 'POST', '/properties/import', { token: tenant.token, body: items });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<{ results: { personProperty: { propertyId: string } }[] }>().results.map((result) => result.personProperty.propertyId);
}

async function propertyIds(tenant: Tenant) {
  const response = await call(service, 'GET', '/properties', { token: tenant.token, query: { size: '100' } });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<{ results: { propertyId: string }[] }>().results.map((property) => property.propertyId);
}

const deleteProperties = (tenant: Tenant, body: unknown) => call(service, 'POST', '/properties/delete', { token: tenant.token, body });

describe('POST /properties/delete (E8)', () => {
  it('deletes every property named, in the order given', async () => {
    const tenant = await createTenant(service);
    const [first, second, third] = await addProperties(tenant, 3);
    const response = await deleteProperties(tenant, { propertyIds: [third, first] });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toEqual({ deleted: [third, first], errors: [] });
    expect(await propertyIds(tenant)).toEqual([second]);
  });

  it("reports unknown, already deleted and another workspace's ids as errors, deleting the rest", async () => {
    const tenant = await createTenant(service);
    const other = await createTenant(service, 'Other workspace');
    const [first, second, third] = await addProperties(tenant, 3);
    const [theirs] = await addProperties(other, 1);
    expect((await deleteProperties(tenant, { propertyIds: [second] })).statusCode).toBe(200);
    const response = await deleteProperties(tenant, { propertyIds: [first, second, 'prp_nothere', theirs, third] });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toEqual({
      deleted: [first, third],
      errors: [
        { message: 'Property not found', path: ['propertyIds', '1'] },
        { message: 'Property not found', path: ['propertyIds', '2'] },
        { message: 'Property not found', path: ['propertyIds', '3'] },
      ],
    });
    expect(await propertyIds(tenant)).toEqual([]);
    expect(await propertyIds(other)).toEqual([theirs]);
  });

  it('answers 200 with only errors when nothing matches', async () => {
    const tenant = await createTenant(service);
    const response = await deleteProperties(tenant, { propertyIds: ['prp_a'] });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ deleted: [], errors: [{ message: 'Property not found', path: ['propertyIds', '0'] }] });
  });

  it('deletes each property once when requests race', async () => {
    const tenant = await createTenant(service);
    const ids = await addProperties(tenant, 4);
    const responses = await Promise.all([deleteProperties(tenant, { propertyIds: ids }), deleteProperties(tenant, { propertyIds: [...ids].reverse() })]);
    const deleted = responses.flatMap((response) => response.json<{ deleted: string[] }>().deleted);
    expect(deleted.sort()).toEqual([...ids].sort());
    expect(await propertyIds(tenant)).toEqual([]);
  });

  describe('400', () => {
    it.each([
      ['no propertyIds', {}, ['propertyIds']],
      ['an empty list', { propertyIds: [] }, ['propertyIds']],
      ['101 ids', { propertyIds: Array.from({ length: 101 }, (_, index) => `prp_${index}`) }, ['propertyIds']],
      ['a repeated id', { propertyIds: ['prp_a', 'prp_a'] }, ['propertyIds']],
      ['an empty id', { propertyIds: [''] }, ['propertyIds', '0']],
      ['a number', { propertyIds: [5] }, ['propertyIds', '0']],
      ['an unknown field', { propertyIds: ['prp_a'], force: true }, ['force']],
      ['an array body', ['prp_a'], []],
    ])('refuses %s', async (_case, body, path) => {
      const tenant = await createTenant(service);
      const [kept] = await addProperties(tenant, 1);
      const response = await deleteProperties(tenant, body);
      expect(response.statusCode, response.body).toBe(400);
      expect(response.json()).toEqual({ errors: [{ message: expect.any(String), path }] });
      expect(await propertyIds(tenant)).toEqual([kept]);
    });
  });
});

describeSecurity('POST /properties/delete', () => service, {
  method: 'POST',
  right: 'properties:write',
  addressesResource: false,
  request: async (tenant) => ({ url: '/properties/delete', body: { propertyIds: await addProperties(tenant, 1) } }),
});
