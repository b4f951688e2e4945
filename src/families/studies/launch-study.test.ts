import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, type Tenant, type TestService, startTestService } from '../../../test/harness.js';
import { describeSecurity } from '../../../test/security.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service.stop());

async function createStudy(tenant: Tenant) {
  const response = await call(service, 'POST', '/studies', {
    token: tenant.token,
    body: { studyType: 'INTERVIEWS', recruitmentStrategy: 'IN_SERVICE', studyPlan: { name: 'Checkout interviews', includeScreener: true } },
  });
  expect(response.statusCode, response.body).toBe(201);
  return response.json<{ studyId: string }>().studyId;
}

const launch = (tenant: Tenant, studyId: string) => call(service, 'POST', `/studies/${studyId}/launch`, { token: tenant.token });

async function setStatus(tenant: Tenant, studyId: string, status: 'PAUSED' | 'CLOSED') {
  const response = await call(service, 'POST', `/studies/${studyId}/status`, { token: tenant.token, body: { status } });
  expect(response.statusCode, response.body).toBe(200);
}

async function transitions(tenant: Tenant, studyId: string) {
  const rows = await service.deps.db
    .selectFrom('study_status_events')
    .where('workspace_id', '=', tenant.workspaceId)
    .where('study_id', '=', studyId)
    .select(['from_status', 'to_status'])
    .orderBy('event_id')
    .execute();
  return rows.map((row) => `${row.from_status ?? 'null'}→${row.to_status}`);
}

describe('POST /studies/{studyId}/launch', () => {
  it('moves a DRAFT study to ACTIVE, returns it without screener and records the event', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(tenant);
    const response = await launch(tenant, studyId);
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({ studyId, status: 'ACTIVE', studyPlan: { name: 'Checkout interviews' } });
    expect(response.json()).not.toHaveProperty('screener');
    expect((await call(service, 'GET', `/studies/${studyId}`, { token: tenant.token })).json().status).toBe('ACTIVE');
    expect(await transitions(tenant, studyId)).toEqual(['null→DRAFT', 'DRAFT→ACTIVE']);
  });

  it('moves a PAUSED study back to ACTIVE', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(tenant);
    await setStatus(tenant, studyId, 'PAUSED');
    const response = await launch(tenant, studyId);
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json().status).toBe('ACTIVE');
    expect(await transitions(tenant, studyId)).toEqual(['null→DRAFT', 'DRAFT→PAUSED', 'PAUSED→ACTIVE']);
  });

  it('leaves an ACTIVE study as it is and records nothing', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(tenant);
    expect((await launch(tenant, studyId)).statusCode).toBe(200);
    const response = await launch(tenant, studyId);
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({ studyId, status: 'ACTIVE' });
    expect(await transitions(tenant, studyId)).toEqual(['null→DRAFT', 'DRAFT→ACTIVE']);
  });

  it('refuses a CLOSED study (409) and changes nothing', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(tenant);
    await setStatus(tenant, studyId, 'CLOSED');
    const response = await launch(tenant, studyId);
    expect(response.statusCode).toBe(409);
    expect(response.json()).toEqual({ errors: [{ message: 'A closed study cannot change status', path: ['studyId'] }] });
    expect((await call(service, 'GET', `/studies/${studyId}`, { token: tenant.token })).json().status).toBe('CLOSED');
    expect(await transitions(tenant, studyId)).toEqual(['null→DRAFT', 'DRAFT→CLOSED']);
  });

  it('accepts an empty JSON object as the body', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(tenant);
    const response = await call(service, 'POST', `/studies/${studyId}/launch`, { token: tenant.token, body: {} });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json().status).toBe('ACTIVE');
  });

  it('accepts a JSON content type with an empty body, as clients send on body-less POSTs', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(tenant);
    const response = await service.app.inject({
      method: 'POST',
      url: `/v1/studies/${studyId}/launch`,
      headers: { authorization: `Bearer ${tenant.token}`, 'content-type': 'application/json' },
      payload: '',
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json().status).toBe('ACTIVE');
  });

  it('refuses a body that is not an object (400)', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(tenant);
    const response = await call(service, 'POST', `/studies/${studyId}/launch`, { token: tenant.token, body: [1] });
    expect(response.statusCode).toBe(400);
    expect(await transitions(tenant, studyId)).toEqual(['null→DRAFT']);
  });

  it('refuses a body with fields (400 naming the field)', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(tenant);
    const response = await call(service, 'POST', `/studies/${studyId}/launch`, { token: tenant.token, body: { status: 'ACTIVE' } });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ errors: [{ message: expect.any(String), path: ['status'] }] });
    expect(await transitions(tenant, studyId)).toEqual(['null→DRAFT']);
  });

  it('answers an unknown id with 404 naming studyId', async () => {
    const tenant = await createTenant(service);
    const response = await launch(tenant, 'stu_doesnotexist');
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ errors: [{ message: 'Study not found', path: ['studyId'] }] });
  });
});

describeSecurity('POST /studies/{studyId}/launch', () => service, {
  method: 'POST',
  right: 'studies:write',
  addressesResource: true,
  request: async (tenant) => ({ url: `/studies/${await createStudy(tenant)}/launch` }),
});
