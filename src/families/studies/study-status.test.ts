import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, type Tenant, type TestService, startTestService } from '../../../test/harness.js';
import { describeSecurity } from '../../../test/security.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service.stop());

type Status = 'DRAFT' | 'ACTIVE' | 'PAUSED' | 'CLOSED';

async function createStudy(tenant: Tenant) {
  const response = await call(service, 'POST', '/studies', {
    token: tenant.token,
    body: { studyType: 'INTERVIEWS', recruitmentStrategy: 'IN_SERVICE', studyPlan: { name: 'Checkout interviews', includeScreener: true } },
  });
  expect(response.statusCode, response.body).toBe(201);
  return response.json<{ studyId: string }>().studyId;
}

const setStatus = (tenant: Tenant, studyId: string, body: unknown) => call(service, 'POST', `/studies/${studyId}/status`, { token: tenant.token, body });

/** A new study brought to `status` through the API. */
async function studyIn(tenant: Tenant, status: Status) {
  const studyId = await createStudy(tenant);
  if (status === 'ACTIVE' || status === 'PAUSED') {
    const launched = await call(service, 'POST', `/studies/${studyId}/launch`, { token: tenant.token });
    expect(launched.statusCode, launched.body).toBe(200);
  }
  if (status === 'PAUSED' || status === 'CLOSED') {
    const changed = await setStatus(tenant, studyId, { status });
    expect(changed.statusCode, changed.body).toBe(200);
  }
  return studyId;
}

async function statusEvents(tenant: Tenant, studyId: string) {
  const rows = await service.deps.db
    .selectFrom('study_status_events')
    .where('workspace_id', '=', tenant.workspaceId)
    .where('study_id', '=', studyId)
    .select(['from_status', 'to_status', 'field', 'user_id', 'occurred_at'])
    .orderBy('event_id')
    .execute();
  return rows.map((row) => ({ ...row, occurred_at: new Date(row.occurred_at).toISOString() }));
}

describe('POST /studies/{studyId}/status (E5)', () => {
  for (const from of ['DRAFT', 'ACTIVE', 'PAUSED'] as const) {
    for (const to of ['PAUSED', 'CLOSED'] as const) {
      if (from === to) continue;
      it(`moves a ${from} study to ${to}, returns it without screener and records one event`, async () => {
        const tenant = await createTenant(service);
        const studyId = await studyIn(tenant, from);
        const eventsBefore = await statusEvents(tenant, studyId);
        const response = await setStatus(tenant, studyId, { status: to });
        expect(response.statusCode, response.body).toBe(200);
        const study = response.json();
        expect(study).toMatchObject({ studyId, status: to, studyType: 'INTERVIEWS', studyPlan: { name: 'Checkout interviews' }, owners: [{ userId: tenant.userId }] });
        expect(study).not.toHaveProperty('screener');

        const got = await call(service, 'GET', `/studies/${studyId}`, { token: tenant.token });
        expect(got.json().status).toBe(to);
        const { screener, ...withoutScreener } = got.json();
        expect(screener).not.toBeNull();
        expect(study).toEqual(withoutScreener);

        const events = await statusEvents(tenant, studyId);
        expect(events.slice(0, eventsBefore.length)).toEqual(eventsBefore);
        expect(events.slice(eventsBefore.length)).toEqual([{ from_status: from, to_status: to, field: 'status', user_id: tenant.userId, occurred_at: expect.any(String) }]);
      });
    }
  }

  it('records who made the change', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(tenant);
    const researcher = await tenant.tokenFor('RESEARCHER');
    const response = await call(service, 'POST', `/studies/${studyId}/status`, { token: researcher.token, body: { status: 'PAUSED' } });
    expect(response.statusCode, response.body).toBe(200);
    expect((await statusEvents(tenant, studyId)).at(-1)).toMatchObject({ from_status: 'DRAFT', to_status: 'PAUSED', user_id: researcher.userId });
  });

  it.each(['PAUSED', 'CLOSED'] as const)('treats %s → the same status as a no-op that returns the study and records nothing', async (status) => {
    const tenant = await createTenant(service);
    const studyId = await studyIn(tenant, status);
    const eventsBefore = await statusEvents(tenant, studyId);
    const response = await setStatus(tenant, studyId, { status });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({ studyId, status });
    expect(response.json()).not.toHaveProperty('screener');
    expect(await statusEvents(tenant, studyId)).toEqual(eventsBefore);
  });

  it('refuses to leave CLOSED (409) and changes nothing', async () => {
    const tenant = await createTenant(service);
    const studyId = await studyIn(tenant, 'CLOSED');
    const eventsBefore = await statusEvents(tenant, studyId);
    const response = await setStatus(tenant, studyId, { status: 'PAUSED' });
    expect(response.statusCode).toBe(409);
    expect(response.json()).toEqual({ errors: [{ message: 'A closed study cannot change status', path: ['status'] }] });
    const got = await call(service, 'GET', `/studies/${studyId}`, { token: tenant.token });
    expect(got.json().status).toBe('CLOSED');
    expect(await statusEvents(tenant, studyId)).toEqual(eventsBefore);
  });

  it.each([
    ['ACTIVE', { status: 'ACTIVE' }, ['status']],
    ['DRAFT', { status: 'DRAFT' }, ['status']],
    ['a lower-case status', { status: 'paused' }, ['status']],
    ['a missing status', {}, ['status']],
    ['an unknown field', { status: 'PAUSED', reason: 'holiday' }, ['reason']],
  ])('refuses %s with 400 and changes nothing', async (_what, body, path) => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(tenant);
    const response = await setStatus(tenant, studyId, body);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ errors: [{ message: expect.any(String), path }] });
    expect((await statusEvents(tenant, studyId)).map((event) => event.to_status)).toEqual(['DRAFT']);
  });

  it('refuses a bare JSON string as the body (400)', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(tenant);
    const response = await call(service, 'POST', `/studies/${studyId}/status`, {
      token: tenant.token,
      body: '"PAUSED"',
      headers: { 'content-type': 'application/json' },
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ errors: [{ message: expect.any(String), path: [] }] });
  });

  it('keeps the event history a consistent chain under concurrent changes', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(tenant);
    const requests = Array.from({ length: 12 }, (_, index) =>
      index % 3 === 0
        ? call(service, 'POST', `/studies/${studyId}/launch`, { token: tenant.token })
        : setStatus(tenant, studyId, { status: index % 3 === 1 ? 'PAUSED' : 'CLOSED' }),
    );
    const responses = await Promise.all(requests);
    for (const response of responses) expect([200, 409], response.body).toContain(response.statusCode);
    const events = await statusEvents(tenant, studyId);
    for (let index = 1; index < events.length; index++) {
      expect(events[index]!.from_status).toBe(events[index - 1]!.to_status);
      expect(events[index]!.to_status).not.toBe(events[index]!.from_status);
    }
    const got = await call(service, 'GET', `/studies/${studyId}`, { token: tenant.token });
    expect(got.json().status).toBe(events.at(-1)!.to_status);
  });

  it('answers an unknown id with 404 naming studyId', async () => {
    const tenant = await createTenant(service);
    const response = await setStatus(tenant, 'stu_doesnotexist', { status: 'PAUSED' });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ errors: [{ message: 'Study not found', path: ['studyId'] }] });
  });
});

describeSecurity('POST /studies/{studyId}/status', () => service, {
  method: 'POST',
  right: 'studies:write',
  addressesResource: true,
  request: async (tenant) => ({ url: `/studies/${await createStudy(tenant)}/status`, body: { status: 'PAUSED' } }),
});
