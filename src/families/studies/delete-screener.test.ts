import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, type Tenant, type TestService, startTestService } from '../../../test/harness.js';
import { describeSecurity } from '../../../test/security.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service.stop());

const questions = [
  { name: 'How often do you shop online?', type: 'SINGLE_SELECT', category: 'simple', isRequired: true, choices: [{ id: 'weekly', label: 'Every week', rule: 'NEUTRAL' }, { id: 'rarely', label: 'Rarely', rule: 'NEUTRAL' }] },
  { name: 'Which devices?', type: 'MULTI_SELECT', category: 'simple', isRequired: false, choices: [{ id: 'phone', label: 'Phone', rule: 'NEUTRAL' }, { id: 'laptop', label: 'Laptop', rule: 'NEUTRAL' }] },
];

async function createStudy(tenant: Tenant, body: object = {}) {
  const response = await call(service, 'POST', '/studies', {
    token: tenant.token,
    body: { studyType: 'INTERVIEWS', recruitmentStrategy: 'IN_SERVICE', studyPlan: { name: 'Checkout interviews' }, ...body },
  });
  expect(response.statusCode, response.body).toBe(201);
  return response.json<{ studyId: string }>().studyId;
}

/** A draft study with a SERVICE screener of two questions; returns the study and screener ids. */
async function screenedStudy(tenant: Tenant) {
  const studyId = await createStudy(tenant);
  const response = await call(service, 'PUT', `/studies/${studyId}/screener`, { token: tenant.token, body: { questions } });
  expect(response.statusCode, response.body).toBe(200);
  return { studyId, screenerId: response.json<{ id: string }>().id };
}

const deleteScreener = (tenant: Tenant, studyId: string) => call(service, 'DELETE', `/studies/${studyId}/screener`, { token: tenant.token });

async function getStudy(tenant: Tenant, studyId: string) {
  const response = await call(service, 'GET', `/studies/${studyId}`, { token: tenant.token });
  expect(response.statusCode, response.body).toBe(200);
  return response.json();
}

async function storedQuestions(tenant: Tenant, screenerId: string) {
  return service.deps.db
    .selectFrom('screener_questions')
    .where('workspace_id', '=', tenant.workspaceId)
    .where('screener_id', '=', screenerId)
    .select('question_id')
    .execute();
}

describe('DELETE /studies/{studyId}/screener (E21)', () => {
  it('deletes the screener and its questions and sets includeScreener false', async () => {
    const tenant = await createTenant(service);
    const { studyId, screenerId } = await screenedStudy(tenant);
    expect(await storedQuestions(tenant, screenerId)).toHaveLength(2);

    const response = await deleteScreener(tenant, studyId);
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toEqual({ success: true, studyId });

    const study = await getStudy(tenant, studyId);
    expect(study.screener).toBeNull();
    expect(study.studyPlan.includeScreener).toBe(false);
    expect(study.studyPlan.name).toBe('Checkout interviews');
    expect(await storedQuestions(tenant, screenerId)).toEqual([]);
  });

  it('deletes the empty screener includeScreener made, and a new one can be put afterwards', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(tenant, { studyPlan: { name: 'Screened', includeScreener: true } });
    expect((await deleteScreener(tenant, studyId)).statusCode).toBe(200);
    const put = await call(service, 'PUT', `/studies/${studyId}/screener`, { token: tenant.token, body: { questions } });
    expect(put.statusCode, put.body).toBe(200);
    expect((await getStudy(tenant, studyId)).studyPlan.includeScreener).toBe(true);
  });

  it('answers a study without a screener with 404, also on a second delete', async () => {
    const tenant = await createTenant(service);
    const { studyId } = await screenedStudy(tenant);
    expect((await deleteScreener(tenant, studyId)).statusCode).toBe(200);
    const again = await deleteScreener(tenant, studyId);
    expect(again.statusCode).toBe(404);
    expect(again.json()).toEqual({ errors: [{ message: 'Screener not found', path: ['studyId'] }] });

    const bare = await createStudy(tenant);
    const response = await deleteScreener(tenant, bare);
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ errors: [{ message: 'Screener not found', path: ['studyId'] }] });
  });

  it('refuses a study that is not in draft with exactly the draft-status error, keeping the screener', async () => {
    const tenant = await createTenant(service);
    for (const move of [
      { path: 'launch', body: undefined },
      { path: 'status', body: { status: 'PAUSED' } },
      { path: 'status', body: { status: 'CLOSED' } },
    ]) {
      const { studyId, screenerId } = await screenedStudy(tenant);
      const moved = await call(service, 'POST', `/studies/${studyId}/${move.path}`, { token: tenant.token, body: move.body });
      expect(moved.statusCode, moved.body).toBe(200);
      const response = await deleteScreener(tenant, studyId);
      expect(response.statusCode).toBe(409);
      expect(response.json()).toEqual({ errors: [{ message: 'Study is not in draft status', path: ['studyId'] }] });
      const study = await getStudy(tenant, studyId);
      expect(study.screener.id).toBe(screenerId);
      expect(study.studyPlan.includeScreener).toBe(true);
      expect(await storedQuestions(tenant, screenerId)).toHaveLength(2);
    }
  });

  it('refuses a SURVEY study (400), keeping its screener, though that screener is of type SERVICE', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(tenant, { studyType: 'SURVEY', studyPlan: { name: 'Survey', includeScreener: true } });
    const response = await deleteScreener(tenant, studyId);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ errors: [{ message: 'Screeners of survey studies cannot be deleted', path: ['studyId'] }] });
    const study = await getStudy(tenant, studyId);
    expect(study.screener).toMatchObject({ type: 'SERVICE', questions: [] });
    expect(study.studyPlan.includeScreener).toBe(true);
  });

  it('refuses a screener that is not of type SERVICE (400)', async () => {
    const tenant = await createTenant(service);
    const { studyId, screenerId } = await screenedStudy(tenant);
    // No route makes such a screener on a non-survey study today; the rule must hold regardless.
    await service.deps.db
      .updateTable('screeners')
      .set({ type: 'EXTERNAL_SURVEY' })
      .where('workspace_id', '=', tenant.workspaceId)
      .where('screener_id', '=', screenerId)
      .execute();
    const response = await deleteScreener(tenant, studyId);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ errors: [{ message: 'Only screeners of type SERVICE can be deleted', path: ['studyId'] }] });
    expect((await getStudy(tenant, studyId)).screener.id).toBe(screenerId);
  });

  it('refuses a body with fields (400) and deletes nothing', async () => {
    const tenant = await createTenant(service);
    const { studyId } = await screenedStudy(tenant);
    const response = await call(service, 'DELETE', `/studies/${studyId}/screener`, { token: tenant.token, body: { force: true } });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ errors: [{ message: 'force is not a known field', path: ['force'] }] });
    expect((await getStudy(tenant, studyId)).screener).not.toBeNull();
  });

  it('answers an unknown id with 404 naming studyId', async () => {
    const tenant = await createTenant(service);
    const response = await deleteScreener(tenant, 'stu_doesnotexist');
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ errors: [{ message: 'Study not found', path: ['studyId'] }] });
  });
});

describeSecurity('DELETE /studies/{studyId}/screener', () => service, {
  method: 'DELETE',
  right: 'screeners:write',
  addressesResource: true,
  request: async (tenant) => ({ url: `/studies/${(await screenedStudy(tenant)).studyId}/screener` }),
});
