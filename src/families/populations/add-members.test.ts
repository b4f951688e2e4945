import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type Tenant, type TestService } from '../../../test/harness.js';
import { createPerson, createPopulation, getPerson } from '../../../test/people-factory.js';
import { describeSecurity } from '../../../test/security.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service.stop());

const addMembers = (tenant: Tenant, populationId: string, body: unknown) => call(service, 'POST', `/populations/${populationId}/members`, { token: tenant.token, body });

describe('POST /populations/{populationId}/members', () => {
  it('adds people, idempotently; unknown, deleted and foreign people are error items', async () => {
    const tenant = await createTenant(service);
    const other = await createTenant(service, 'Other');
    const populationId = await createPopulation(service, tenant);
    const [a, b, deleted] = [await createPerson(service, tenant), await createPerson(service, tenant, { populationIds: [populationId] }), await createPerson(service, tenant)];
    const foreign = await createPerson(service, other);
    await call(service, 'DELETE', `/people/${deleted!.personId}`, { token: tenant.token });
    const response = await addMembers(tenant, populationId, { personIds: [a!.personId, 'per_unknown', b!.personId, deleted!.personId, a!.personId, foreign.personId] });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toEqual({
      added: [a!.personId, b!.personId],
      errors: [
        { message: 'Person not found', path: ['personIds', '1'] },
        { message: 'Person not found', path: ['personIds', '3'] },
        { message: 'Person not found', path: ['personIds', '5'] },
      ],
    });
    expect((await getPerson(service, tenant, a!.personId)).json().populationIds).toEqual([populationId]);
    expect((await getPerson(service, tenant, b!.personId)).json().populationIds).toEqual([populationId]);
    expect((await addMembers(tenant, populationId, { personIds: [a!.personId] })).json()).toEqual({ added: [a!.personId], errors: [] });
  });

  it("answers 404 for an unknown population or another workspace's", async () => {
    const tenant = await createTenant(service);
    const other = await createTenant(service, 'Other');
    const theirs = await createPopulation(service, other);
    const person = await createPerson(service, tenant);
    for (const populationId of ['pop_unknown', theirs]) {
      const response = await addMembers(tenant, populationId, { personIds: [person.personId] });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({ errors: [{ message: 'Population not found', path: ['populationId'] }] });
    }
  });

  it.each([
    ['an empty list', { personIds: [] }, ['personIds']],
    ['1001 ids', { personIds: Array.from({ length: 1001 }, (_, index) => `per_${index}`) }, ['personIds']],
    ['no personIds', {}, ['personIds']],
    ['an unknown field', { personIds: ['per_x'], emails: [] }, ['emails']],
  ])('refuses %s with 400', async (_case, body, path) => {
    const tenant = await createTenant(service);
    const populationId = await createPopulation(service, tenant);
    const response = await addMembers(tenant, populationId, body);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ errors: [{ message: expect.any(String), path }] });
  });

  it('takes 1000 people in one request', async () => {
    const tenant = await createTenant(service);
    const populationId = await createPopulation(service, tenant);
    const person = await createPerson(service, tenant);
    const personIds = [person.personId, ...Array.from({ length: 999 }, (_, index) => `per_missing_${index}`)];
    const response = await addMembers(tenant, populationId, { personIds });
    expect(response.statusCode).toBe(200);
    expect(response.json().added).toEqual([person.personId]);
    expect(response.json().errors).toHaveLength(999);
  });
});

describeSecurity('POST /populations/{populationId}/members', () => service, {
  method: 'POST',
  right: 'populations:write',
  addressesResource: true,
  request: async (tenant, svc) => ({
    url: `/populations/${await createPopulation(svc, tenant)}/members`,
    body: { personIds: [(await createPerson(svc, tenant)).personId] },
  }),
});
