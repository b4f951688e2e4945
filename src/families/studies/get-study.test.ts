import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type Tenant, type TestService } from '../../../test/harness.js';
import { describeSecurity } from '../../../test/security.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service.stop());

async function createStudy(tenant: Tenant, body: object = {}) {
  const response = await call(service, 'POST', '/studies', {
    token: tenant.token,
    body: { studyType: 'INTERVIEWS', recruitmentStrategy: 'IN_SERVICE', studyPlan: { name: 'Checkout interviews' }, ...body },
  });
  expect(response.statusCode, response.body).toBe(201);
  return response.json<{ studyId: string }>().studyId;
}

describe('GET /studies/{studyId} (E12)', () => {
  it('returns the study with owners and its screener', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(tenant, { studyPlan: { name: 'Checkout interviews', includeScreener: true } });
    const response = await call(service, 'GET', `/studies/${studyId}`, { token: tenant.token });
    expect(response.statusCode).toBe(200);
    const study = response.json();
    expect(study).toMatchObject({
      studyId,
      studyType: 'INTERVIEWS',
      recruitmentStrategy: 'IN_SERVICE',
      status: 'DRAFT',
      createdFromTemplateId: null,
      studyPlan: { name: 'Checkout interviews', includeScreener: true },
      owners: [{ userId: tenant.userId }],
      screener: { studyId, type: 'SERVICE', questions: [] },
    });
    expect(new Date(study.createdAt).toISOString()).toBe(study.createdAt);
  });

  it('gives screener null to a token that cannot read screeners', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(tenant, { studyPlan: { name: 'Screened', includeScreener: true } });
    const { token } = await tenant.tokenFor('SUPER_ADMIN', { canReadScreeners: false });
    const response = await call(service, 'GET', `/studies/${studyId}`, { token });
    expect(response.statusCode).toBe(200);
    expect(response.json().screener).toBeNull();
  });

  it("masks owners' names and emails for a token without the personal-data right, here and in lists", async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(tenant);
    const { token } = await tenant.tokenFor('SUPER_ADMIN', { canReadPersonalData: false });
    const single = (await call(service, 'GET', `/studies/${studyId}`, { token })).json();
    expect(single.owners).toEqual([expect.objectContaining({ userId: tenant.userId, fullname: '***', email: '***@***' })]);
    const listed = (await call(service, 'GET', '/studies', { token })).json();
    expect(listed.results[0].owners[0]).toMatchObject({ fullname: '***', email: '***@***' });
    const clear = (await call(service, 'GET', `/studies/${studyId}`, { token: tenant.token })).json();
    expect(clear.owners[0].email).toMatch(/@example\.test$/);
  });

  it('answers an unknown id with 404 naming studyId', async () => {
    const tenant = await createTenant(service);
    const response = await call(service, 'GET', '/studies/stu_doesnotexist', { token: tenant.token });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ errors: [{ message: 'Study not found', path: ['studyId'] }] });
  });
});

describeSecurity('GET /studies/{studyId}', () => service, {
  method: 'GET',
  right: 'studies:read',
  addressesResource: true,
  request: async (tenant) => ({ url: `/studies/${await createStudy(tenant)}` }),
});
