import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type Tenant, type TestService } from '../../../test/harness.js';
import { describeSecurity } from '../../../test/security.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service.stop());

async function populations(tenant: Tenant) {
  const response = await call(service, 'GET', '/populations', { token: tenant.token, query: { size: '100' } });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<{ results: { populationId: string; name: string; description: string }[]; total: number }>();
}

const createPopulation = (tenant: Tenant, body: unknown) => call(service, 'POST', '/populations', { token: tenant.token, body });

describe('POST /populations', () => {
  it('creates a population, listed afterwards', async () => {
    const tenant = await createTenant(service);
    const response = await createPopulation(tenant, { name: 'Customers', description: 'Bought in the last two years' });
    expect(response.statusCode, response.body).toBe(201);
    const population = response.json();
    expect(population).toEqual({ populationId: expect.stringMatching(/^pop_/), name: 'Customers', description: 'Bought in the last two years' });
    expect((await populations(tenant)).results).toEqual([population]);
  });

  it('defaults the description to empty and allows a name twice', async () => {
    const tenant = await createTenant(service);
    const first = await createPopulation(tenant, { name: 'Panel' });
    const second = await createPopulation(tenant, { name: 'Panel' });
    expect([first.statusCode, second.statusCode]).toEqual([201, 201]);
    expect(first.json().description).toBe('');
    expect(second.json().populationId).not.toBe(first.json().populationId);
    expect((await populations(tenant)).total).toBe(2);
  });

  it('can be used by a study as its population', async () => {
    const tenant = await createTenant(service);
    const { populationId } = (await createPopulation(tenant, { name: 'Sign-ups' })).json<{ populationId: string }>();
    const study = await call(service, 'POST', '/studies', {
      token: tenant.token,
      body: { studyType: 'SURVEY', recruitmentStrategy: 'IN_SERVICE', studyPlan: { name: 'Survey' }, populationId },
    });
    expect(study.statusCode, study.body).toBe(201);
    const read = await call(service, 'GET', `/studies/${study.json().studyId}`, { token: tenant.token });
    expect(read.json().populationId).toBe(populationId);
  });

  it.each([
    ['no name', {}, ['name']],
    ['an empty name', { name: '' }, ['name']],
    ['a name of 201 characters', { name: 'x'.repeat(201) }, ['name']],
    ['a description of 5001 characters', { name: 'P', description: 'x'.repeat(5001) }, ['description']],
    ['a NUL in the description', { name: 'P', description: 'a\u0000b' }, ['description']],
    ['an unknown field', { name: 'P', personIds: [] }, ['personIds']],
    ['a number name', { name: 5 }, ['name']],
  ])('refuses %s with 400, creating nothing', async (_case, body, path) => {
    const tenant = await createTenant(service);
    const response = await createPopulation(tenant, body);
    expect(response.statusCode, response.body).toBe(400);
    expect(response.json()).toEqual({ errors: [{ message: expect.any(String), path }] });
    expect((await populations(tenant)).total).toBe(0);
  });
});

describeSecurity('POST /populations', () => service, {
  method: 'POST',
  right: 'populations:write',
  addressesResource: false,
  request: async () => ({ url: '/populations', body: { name: 'Customers' } }),
});
