import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type TestService } from '../../../test/harness.js';
import { createPerson, createPopulation, createProperties, getPerson } from '../../../test/people-factory.js';
import { describeSecurity } from '../../../test/security.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service.stop());

describe('GET /people/{personId}', () => {
  it('reads a person with their populations in id order', async () => {
    const tenant = await createTenant(service);
    const first = await createPopulation(service, tenant, 'First');
    const second = await createPopulation(service, tenant, 'Second');
    const person = await createPerson(service, tenant, { firstName: 'Ada', populationIds: [second, first] });
    const response = await getPerson(service, tenant, person.personId);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ ...person, populationIds: [first, second] });
    expect(response.json()).toMatchObject({ name: 'Ada', lastName: null });
  });

  it('answers 404 for an unknown id and for a deleted person', async () => {
    const tenant = await createTenant(service);
    const unknown = await getPerson(service, tenant, 'per_unknown');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ errors: [{ message: 'Person not found', path: ['personId'] }] });
    const person = await createPerson(service, tenant);
    expect((await call(service, 'DELETE', `/people/${person.personId}`, { token: tenant.token })).statusCode).toBe(200);
    expect((await getPerson(service, tenant, person.personId)).statusCode).toBe(404);
  });

  it('masks personal data and PII/PHI property values for a token without the personal-data right', async () => {
    const tenant = await createTenant(service);
    const { Secret, Plain } = await createProperties(service, tenant, [
      { name: 'Secret', propertyType: 'LOCATION', isPII: true },
      { name: 'Plain', propertyType: 'BOOLEAN' },
    ]);
    const person = await createPerson(service, tenant, {
      firstName: 'Grace',
      phone: '123',
      additionalEmails: ['x@example.org'],
      properties: { [Secret!]: { country: 'GB' }, [Plain!]: true },
    });
    const { token } = await tenant.tokenFor('OBSERVER', { canReadPersonalData: false });
    const masked = (await getPerson(service, tenant, person.personId, token)).json();
    expect(masked).toEqual({
      ...person,
      email: '***@***',
      firstName: '***',
      name: '***',
      phone: '***',
      additionalEmails: ['***@***'],
      properties: { [Secret!]: '***', [Plain!]: true },
    });
    expect(JSON.stringify(masked)).not.toContain('Grace');
  });
});

describeSecurity('GET /people/{personId}', () => service, {
  method: 'GET',
  right: 'people:read',
  addressesResource: true,
  request: async (tenant, svc) => ({ url: `/people/${(await createPerson(svc, tenant)).personId}` }),
});
