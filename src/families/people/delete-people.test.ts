import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type Tenant, type TestService } from '../../../test/harness.js';
import { createPerson, createPopulation, createProperties, getPerson } from '../../../test/people-factory.js';
import { describeSecurity } from '../../../test/security.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service.stop());

const bulkDelete = (tenant: Tenant, body: unknown) => call(service, 'POST', '/people/delete', { token: tenant.token, body });

describe('DELETE /people/{personId}', () => {
  it('deletes the person: 404 afterwards, their email and unique values free again', async () => {
    const tenant = await createTenant(service);
    const { Code } = await createProperties(service, tenant, [{ name: 'Code', propertyType: 'STRING', isUnique: true }]);
    const populationId = await createPopulation(service, tenant);
    const person = await createPerson(service, tenant, { properties: { [Code!]: 'X' }, populationIds: [populationId] });
    const response = await call(service, 'DELETE', `/people/${person.personId}`, { token: tenant.token });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ personsDeletedCount: 1 });
    expect((await getPerson(service, tenant, person.personId)).statusCode).toBe(404);
    expect((await call(service, 'GET', `/people/${person.personId}/opted-out`, { token: tenant.token })).statusCode).toBe(404);
    // Deleted people are no members either.
    const members = await call(service, 'POST', `/populations/${populationId}/members`, { token: tenant.token, body: { personIds: [person.personId] } });
    expect(members.json()).toEqual({ added: [], errors: [{ message: 'Person not found', path: ['personIds', '0'] }] });
    const again = await createPerson(service, tenant, { email: person.email, properties: { [Code!]: 'X' } });
    expect(again.personId).not.toBe(person.personId);
  });

  it('answers 404 for an unknown id and for a second delete', async () => {
    const tenant = await createTenant(service);
    const person = await createPerson(service, tenant);
    await call(service, 'DELETE', `/people/${person.personId}`, { token: tenant.token });
    for (const personId of ['per_unknown', person.personId]) {
      const response = await call(service, 'DELETE', `/people/${personId}`, { token: tenant.token });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({ errors: [{ message: 'Person not found', path: ['personId'] }] });
    }
  });
});

describe('POST /people/delete', () => {
  it('deletes by email (case-insensitive) and by id, counting each person once', async () => {
    const tenant = await createTenant(service);
    const [a, b, c, kept] = [await createPerson(service, tenant), await createPerson(service, tenant), await createPerson(service, tenant), await createPerson(service, tenant)];
    const response = await bulkDelete(tenant, { emails: [a!.email.toUpperCase(), b!.email, 'nobody@example.org'], personIds: [b!.personId, c!.personId, 'per_unknown'] });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toEqual({ personsDeletedCount: 3 });
    for (const person of [a, b, c]) expect((await getPerson(service, tenant, person!.personId)).statusCode).toBe(404);
    expect((await getPerson(service, tenant, kept!.personId)).statusCode).toBe(200);
    expect((await bulkDelete(tenant, { personIds: [a!.personId] })).json()).toEqual({ personsDeletedCount: 0 });
  });

  it("never deletes another workspace's people", async () => {
    const tenant = await createTenant(service);
    const other = await createTenant(service, 'Other');
    const theirs = await createPerson(service, other);
    expect((await bulkDelete(tenant, { emails: [theirs.email], personIds: [theirs.personId] })).json()).toEqual({ personsDeletedCount: 0 });
    expect((await getPerson(service, other, theirs.personId)).statusCode).toBe(200);
  });

  it('counts 0 for an empty body or empty lists', async () => {
    const tenant = await createTenant(service);
    await createPerson(service, tenant);
    expect((await bulkDelete(tenant, {})).json()).toEqual({ personsDeletedCount: 0 });
    expect((await bulkDelete(tenant, { emails: [], personIds: [] })).json()).toEqual({ personsDeletedCount: 0 });
  });

  it.each([
    ['an unknown field', { ids: [] }, ['ids']],
    ['a string as emails', { emails: 'a@example.org' }, ['emails']],
    ['1001 person ids', { personIds: Array.from({ length: 1001 }, (_, index) => `per_${index}`) }, ['personIds']],
  ])('refuses %s with 400', async (_case, body, path) => {
    const tenant = await createTenant(service);
    const response = await bulkDelete(tenant, body);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ errors: [{ message: expect.any(String), path }] });
  });
});

describeSecurity('DELETE /people/{personId}', () => service, {
  method: 'DELETE',
  right: 'people:delete',
  addressesResource: true,
  request: async (tenant, svc) => ({ url: `/people/${(await createPerson(svc, tenant)).personId}` }),
});

describeSecurity('POST /people/delete', () => service, {
  method: 'POST',
  right: 'people:delete',
  addressesResource: false,
  request: async (tenant, svc) => ({ url: '/people/delete', body: { personIds: [(await createPerson(svc, tenant)).personId] } }),
});
