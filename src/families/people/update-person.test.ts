import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type Tenant, type TestService, uniqueEmail } from '../../../test/harness.js';
import { createPerson, createPopulation, createProperties, createPropertyOfEveryType, getPerson } from '../../../test/people-factory.js';
import { describeSecurity } from '../../../test/security.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service.stop());

const patch = (tenant: Tenant, personId: string, body: unknown, token = tenant.token) => call(service, 'PATCH', `/people/${personId}`, { token, body });

describe('PATCH /people/{personId}', () => {
  it('changes only the fields given', async () => {
    const tenant = await createTenant(service);
    const person = await createPerson(service, tenant, { firstName: 'Grace', lastName: 'Hopper', phone: '1' });
    const response = await patch(tenant, person.personId, { lastName: 'Murray', phone: null, additionalPhones: ['2'] });
    expect(response.statusCode, response.body).toBe(200);
    const updated = response.json();
    expect(updated).toEqual({ ...person, lastName: 'Murray', name: 'Grace Murray', phone: null, additionalPhones: ['2'], updatedAt: expect.any(String) });
    expect((await getPerson(service, tenant, person.personId)).json()).toEqual(updated);
  });

  it('merges properties key by key; null removes a value', async () => {
    const tenant = await createTenant(service);
    const ids = await createPropertyOfEveryType(service, tenant);
    const person = await createPerson(service, tenant, { properties: { [ids.STRING]: 'a', [ids.NUMBER]: 1, [ids.BOOLEAN]: true } });
    const response = await patch(tenant, person.personId, { properties: { [ids.NUMBER]: 2, [ids.BOOLEAN]: null, [ids.MULTI_SELECT]: ['Red'] } });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json().properties).toEqual({ [ids.STRING]: 'a', [ids.NUMBER]: 2, [ids.MULTI_SELECT]: ['Red'] });
  });

  it('replaces the memberships with populationIds', async () => {
    const tenant = await createTenant(service);
    const [a, b, c] = [await createPopulation(service, tenant, 'A'), await createPopulation(service, tenant, 'B'), await createPopulation(service, tenant, 'C')];
    const person = await createPerson(service, tenant, { populationIds: [a, b] });
    expect((await patch(tenant, person.personId, { populationIds: [c!, b!] })).json().populationIds).toEqual([b, c]);
    expect((await patch(tenant, person.personId, { populationIds: [] })).json().populationIds).toEqual([]);
  });

  it('changes the email, refusing one another person has (409), case-insensitively', async () => {
    const tenant = await createTenant(service);
    const taken = await createPerson(service, tenant);
    const person = await createPerson(service, tenant);
    const conflict = await patch(tenant, person.personId, { email: taken.email.toUpperCase() });
    expect(conflict.statusCode).toBe(409);
    expect(conflict.json()).toEqual({ errors: [{ message: expect.any(String), path: ['email'] }] });
    // Its own email in another case is fine.
    expect((await patch(tenant, person.personId, { email: person.email.toUpperCase() })).statusCode).toBe(200);
    const fresh = uniqueEmail('fresh');
    expect((await patch(tenant, person.personId, { email: fresh })).json().email).toBe(fresh);
  });

  it('moves unique values: a released value becomes free, a held one is 409', async () => {
    const tenant = await createTenant(service);
    const { Code } = await createProperties(service, tenant, [{ name: 'Code', propertyType: 'NUMBER', isUnique: true }]);
    const first = await createPerson(service, tenant, { properties: { [Code!]: 1 } });
    const second = await createPerson(service, tenant, { properties: { [Code!]: 2 } });
    const held = await patch(tenant, second.personId, { properties: { [Code!]: 1 } });
    expect(held.statusCode).toBe(409);
    expect(held.json()).toEqual({ errors: [{ message: expect.any(String), path: ['properties', Code] }] });
    expect((await getPerson(service, tenant, second.personId)).json().properties).toEqual({ [Code!]: 2 });
    expect((await patch(tenant, first.personId, { properties: { [Code!]: null } })).statusCode).toBe(200);
    expect((await patch(tenant, second.personId, { properties: { [Code!]: 1 } })).statusCode).toBe(200);
    // Keeping one's own value is no conflict.
    expect((await patch(tenant, second.personId, { properties: { [Code!]: 1 } })).statusCode).toBe(200);
  });

  it('answers 404 for an unknown or deleted person, an unknown population or property', async () => {
    const tenant = await createTenant(service);
    const person = await createPerson(service, tenant);
    const cases: [string, unknown, string[], string][] = [
      ['per_unknown', { firstName: 'X' }, ['personId'], 'Person not found'],
      [person.personId, { populationIds: ['pop_unknown'] }, ['populationIds', '0'], 'Population not found'],
      [person.personId, { properties: { prp_unknown: 1 } }, ['properties', 'prp_unknown'], 'Property not found'],
    ];
    for (const [personId, body, path, message] of cases) {
      const response = await patch(tenant, personId, body);
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({ errors: [{ message, path }] });
    }
    await call(service, 'DELETE', `/people/${person.personId}`, { token: tenant.token });
    expect((await patch(tenant, person.personId, { firstName: 'X' })).statusCode).toBe(404);
  });

  it.each([
    ['a null email', { email: null }, ['email']],
    ['an unknown field', { contactStatus: 'OPTED_OUT' }, ['contactStatus']],
    ['a string as additionalEmails', { additionalEmails: 'a@example.org' }, ['additionalEmails']],
    // Property ids are jsonb keys: PostgreSQL would refuse these as a 500.
    ['a NUL in a property id', { properties: { '\u0000': 'x' } }, ['properties']],
    ['an unpaired surrogate in a property id', { properties: { 'prp_\ud800': 'x' } }, ['properties']],
    ['a property id over 100 characters', { properties: { ['p'.repeat(101)]: 'x' } }, ['properties', 'p'.repeat(101)]],
  ])('refuses %s with 400', async (_case, body, path) => {
    const tenant = await createTenant(service);
    const person = await createPerson(service, tenant);
    const response = await patch(tenant, person.personId, body);
    expect(response.statusCode, response.body).toBe(400);
    expect(response.json()).toEqual({ errors: [{ message: expect.any(String), path }] });
  });

  it('refuses a property value of the wrong type with 400, changing nothing', async () => {
    const tenant = await createTenant(service);
    const ids = await createPropertyOfEveryType(service, tenant);
    const person = await createPerson(service, tenant, { firstName: 'Same' });
    const response = await patch(tenant, person.personId, { firstName: 'Changed', properties: { [ids.NUMBER]: 'x' } });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ errors: [{ message: expect.any(String), path: ['properties', ids.NUMBER] }] });
    expect((await getPerson(service, tenant, person.personId)).json()).toEqual(person);
  });

  it('answers masked for a token without the personal-data right', async () => {
    const tenant = await createTenant(service);
    const person = await createPerson(service, tenant);
    const { token } = await tenant.tokenFor('DEVELOPER', { canReadPersonalData: false });
    const response = await patch(tenant, person.personId, { firstName: 'Hidden' }, token);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({ email: '***@***', firstName: '***' });
  });
});

describeSecurity('PATCH /people/{personId}', () => service, {
  method: 'PATCH',
  right: 'people:write',
  addressesResource: true,
  request: async (tenant, svc) => ({ url: `/people/${(await createPerson(svc, tenant)).personId}`, body: { firstName: 'Ada' } }),
});
