import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, type Tenant, type TestService, startTestService } from '../../../test/harness.js';
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

const putScreener = (tenant: Tenant, studyId: string, body: unknown) => call(service, 'PUT', `/studies/${studyId}/screener`, { token: tenant.token, body });

async function getStudy(tenant: Tenant, studyId: string) {
  const response = await call(service, 'GET', `/studies/${studyId}`, { token: tenant.token });
  expect(response.statusCode, response.body).toBe(200);
  return response.json();
}

const firstQuestions = [
  { name: 'How often do you shop online?', type: 'SINGLE_SELECT', category: 'simple', isRequired: true, description: 'Pick one' },
  { name: 'Your email', type: 'EMAIL', category: 'contact', isRequired: true, mappedToPropertyId: 'prop_email' },
  { name: 'Anything else?', type: 'LONG_FORM', category: 'simple', isRequired: false, questionTemplateId: 'qt_1' },
];

describe('PUT /studies/{studyId}/screener', () => {
  it('creates a SERVICE screener with the questions in order and sets includeScreener true', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(tenant);
    expect((await getStudy(tenant, studyId)).studyPlan.includeScreener).toBe(false);

    const response = await putScreener(tenant, studyId, { qualifyByDefault: true, showSchedulerToQualified: true, questions: firstQuestions });
    expect(response.statusCode, response.body).toBe(200);
    const screener = response.json();
    expect(screener).toMatchObject({
      workspaceId: tenant.workspaceId,
      studyId,
      type: 'SERVICE',
      qualifyByDefault: true,
      showSchedulerToQualified: true,
      externalSurveyId: null,
      externalSurveySetupStatus: null,
    });
    expect(screener.questions).toEqual([
      { ...firstQuestions[0], id: expect.stringMatching(/^sqn_/), workspaceId: tenant.workspaceId, mappedToPropertyId: null, questionTemplateId: null },
      { ...firstQuestions[1], id: expect.stringMatching(/^sqn_/), workspaceId: tenant.workspaceId, description: null, questionTemplateId: null },
      { ...firstQuestions[2], id: expect.stringMatching(/^sqn_/), workspaceId: tenant.workspaceId, description: null, mappedToPropertyId: null },
    ]);
    expect(new Date(screener.createdAt).toISOString()).toBe(screener.createdAt);

    const study = await getStudy(tenant, studyId);
    expect(study.studyPlan.includeScreener).toBe(true);
    expect(study.screener).toEqual(screener);
  });

  it('replaces the questions in the new order, keeping the screener and unsent settings', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(tenant);
    const first = (await putScreener(tenant, studyId, { qualifyByDefault: true, questions: firstQuestions })).json();

    const replacement = [
      { name: 'Which devices?', type: 'MULTI_SELECT', category: 'simple', isRequired: false },
      { name: 'How often do you shop online?', type: 'SINGLE_SELECT', category: 'simple', isRequired: true },
    ];
    const response = await putScreener(tenant, studyId, { showSchedulerToQualified: true, questions: replacement });
    expect(response.statusCode, response.body).toBe(200);
    const second = response.json();
    expect(second.id).toBe(first.id);
    expect(second.createdAt).toBe(first.createdAt);
    expect(second).toMatchObject({ qualifyByDefault: true, showSchedulerToQualified: true });
    expect(second.questions.map((question: { name: string }) => question.name)).toEqual(replacement.map((question) => question.name));
    const firstIds = first.questions.map((question: { id: string }) => question.id);
    for (const question of second.questions) expect(firstIds).not.toContain(question.id);
    expect((await getStudy(tenant, studyId)).screener).toEqual(second);

    const stored = await service.deps.db.selectFrom('screener_questions').where('workspace_id', '=', tenant.workspaceId).where('screener_id', '=', first.id).select('name').execute();
    expect(stored).toHaveLength(2);
  });

  it('fills the empty screener that includeScreener made, and accepts an empty question list', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(tenant, { studyPlan: { name: 'Screened', includeScreener: true } });
    const empty = (await getStudy(tenant, studyId)).screener;
    const filled = await putScreener(tenant, studyId, { questions: [{ name: 'Age?', type: 'NUMBER' }] });
    expect(filled.statusCode, filled.body).toBe(200);
    expect(filled.json().id).toBe(empty.id);
    expect(filled.json().questions).toEqual([expect.objectContaining({ name: 'Age?', type: 'NUMBER', category: 'simple', isRequired: false })]);
    const emptied = await putScreener(tenant, studyId, { questions: [] });
    expect(emptied.statusCode, emptied.body).toBe(200);
    expect(emptied.json().questions).toEqual([]);
  });

  it('leaves one screener holding one request\'s questions when requests race', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(tenant);
    const bodies = Array.from({ length: 6 }, (_, index) => ({ questions: [{ name: `Q${index}a`, type: 'SHORT_FORM' }, { name: `Q${index}b`, type: 'NUMBER' }] }));
    const responses = await Promise.all(bodies.map((body) => putScreener(tenant, studyId, body)));
    for (const response of responses) expect(response.statusCode, response.body).toBe(200);
    const screener = (await getStudy(tenant, studyId)).screener;
    expect(new Set(responses.map((response) => response.json().id))).toEqual(new Set([screener.id]));
    const names = screener.questions.map((question: { name: string }) => question.name);
    expect(bodies.map((body) => body.questions.map((question) => question.name))).toContainEqual(names);
  });

  it('refuses a study that is not in draft with exactly the draft-status error', async () => {
    const tenant = await createTenant(service);
    for (const move of [
      { path: 'launch', body: undefined },
      { path: 'status', body: { status: 'PAUSED' } },
      { path: 'status', body: { status: 'CLOSED' } },
    ]) {
      const studyId = await createStudy(tenant);
      const moved = await call(service, 'POST', `/studies/${studyId}/${move.path}`, { token: tenant.token, body: move.body });
      expect(moved.statusCode, moved.body).toBe(200);
      const response = await putScreener(tenant, studyId, { questions: firstQuestions });
      expect(response.statusCode).toBe(409);
      expect(response.json()).toEqual({ errors: [{ message: 'Study is not in draft status', path: ['studyId'] }] });
      expect((await getStudy(tenant, studyId)).screener).toBeNull();
    }
  });

  it('refuses a SURVEY study (400)', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(tenant, { studyType: 'SURVEY' });
    const response = await putScreener(tenant, studyId, { questions: firstQuestions });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ errors: [{ message: expect.any(String), path: ['studyId'] }] });
    const study = await getStudy(tenant, studyId);
    expect(study.screener).toBeNull();
    expect(study.studyPlan.includeScreener).toBe(false);
  });

  it.each([
    ['missing questions', {}, ['questions']],
    ['an unknown field', { questions: [], intro: 'Hi' }, ['intro']],
    ['an unknown question field', { questions: [{ name: 'x', type: 'SHORT_FORM', options: [] }] }, ['questions', '0', 'options']],
    ['an unknown question type', { questions: [{ name: 'ok', type: 'SHORT_FORM' }, { name: 'x', type: 'ESSAY' }] }, ['questions', '1', 'type']],
    ['an unknown category', { questions: [{ name: 'x', type: 'SHORT_FORM', category: 'complex' }] }, ['questions', '0', 'category']],
    ['a question without a name', { questions: [{ type: 'SHORT_FORM' }] }, ['questions', '0', 'name']],
    ['an empty name', { questions: [{ name: '', type: 'SHORT_FORM' }] }, ['questions', '0', 'name']],
    ['isRequired as text', { questions: [{ name: 'x', type: 'SHORT_FORM', isRequired: 'true' }] }, ['questions', '0', 'isRequired']],
    ['questions as an object', { questions: { name: 'x' } }, ['questions']],
  ])('refuses %s with 400 naming its path and writes nothing', async (_what, body, path) => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(tenant);
    const response = await putScreener(tenant, studyId, body);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ errors: [{ message: expect.any(String), path }] });
    expect((await getStudy(tenant, studyId)).screener).toBeNull();
  });

  it('refuses more than 200 questions (400)', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(tenant);
    const questions = Array.from({ length: 201 }, (_, index) => ({ name: `Q${index}`, type: 'SHORT_FORM' }));
    const response = await putScreener(tenant, studyId, { questions });
    expect(response.statusCode).toBe(400);
    expect(response.json().errors[0].path).toEqual(['questions']);
    const accepted = await putScreener(tenant, studyId, { questions: questions.slice(0, 200) });
    expect(accepted.statusCode, accepted.body).toBe(200);
    expect(accepted.json().questions.map((question: { name: string }) => question.name)).toEqual(questions.slice(0, 200).map((question) => question.name));
  });

  it('answers an unknown id with 404 naming studyId', async () => {
    const tenant = await createTenant(service);
    const response = await putScreener(tenant, 'stu_doesnotexist', { questions: [] });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ errors: [{ message: 'Study not found', path: ['studyId'] }] });
  });

  it('answers null to a token that may write screeners but not read them, and still writes', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(tenant);
    const { token } = await tenant.tokenFor('SUPER_ADMIN', { canReadScreeners: false });
    const response = await call(service, 'PUT', `/studies/${studyId}/screener`, { token, body: { questions: [{ name: 'Age?', type: 'NUMBER' }] } });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toBeNull();
    expect((await getStudy(tenant, studyId)).screener.questions).toEqual([expect.objectContaining({ name: 'Age?' })]);
  });
});

describeSecurity('PUT /studies/{studyId}/screener', () => service, {
  method: 'PUT',
  right: 'screeners:write',
  addressesResource: true,
  request: async (tenant) => ({ url: `/studies/${await createStudy(tenant)}/screener`, body: { questions: firstQuestions } }),
});
