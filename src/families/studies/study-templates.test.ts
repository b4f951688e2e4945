import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, type Tenant, type TestService, startTestService } from '../../../test/harness.js';
import { describeSecurity } from '../../../test/security.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service.stop());

interface TemplatePage {
  results: { studyTemplateId: string; name: string }[];
  total: number;
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string; endCursor: string };
}

const plan = { name: 'Checkout interviews', description: 'Why carts are abandoned', participationLimit: 12, incentive: { amount: 40 }, language: 'en' };
const questions = [
  { name: 'How often do you shop online?', type: 'SINGLE_SELECT', category: 'simple', isRequired: true, choices: [{ id: 'weekly', label: 'Every week', rule: 'NEUTRAL' }, { id: 'rarely', label: 'Rarely', rule: 'NEUTRAL' }] },
  { name: 'Which devices?', type: 'MULTI_SELECT', category: 'simple', isRequired: false, choices: [{ id: 'phone', label: 'Phone', rule: 'NEUTRAL' }, { id: 'laptop', label: 'Laptop', rule: 'NEUTRAL' }] },
];

async function createStudy(tenant: Tenant, body: object = {}) {
  const response = await call(service, 'POST', '/studies', {
    token: tenant.token,
    body: { studyType: 'INTERVIEWS', recruitmentStrategy: 'EXTERNAL', recruitmentPanelProvider: 'PROVIDER_ONE', studyPlan: plan, ...body },
  });
  expect(response.statusCode, response.body).toBe(201);
  return response.json<{ studyId: string }>().studyId;
}

async function createTemplate(tenant: Tenant, name = 'Standard interview', studyId?: string) {
  const response = await call(service, 'POST', '/study-templates', { token: tenant.token, body: { studyId: studyId ?? (await createStudy(tenant)), name } });
  expect(response.statusCode, response.body).toBe(201);
  return response.json<{ studyTemplateId: string; name: string }>();
}

async function listTemplates(tenant: Tenant, query: Record<string, string> = {}) {
  const response = await call(service, 'GET', '/study-templates', { token: tenant.token, query });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<TemplatePage>();
}

describe('POST /study-templates', () => {
  it("keeps the study's type, recruitment, plan and screener under a name", async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(tenant);
    expect((await call(service, 'PUT', `/studies/${studyId}/screener`, { token: tenant.token, body: { questions } })).statusCode).toBe(200);
    const response = await call(service, 'POST', '/study-templates', { token: tenant.token, body: { studyId, name: 'Standard interview' } });
    expect(response.statusCode, response.body).toBe(201);
    const template = response.json();
    expect(template).toEqual({
      studyTemplateId: expect.stringMatching(/^stt_/),
      name: 'Standard interview',
      studyType: 'INTERVIEWS',
      recruitmentStrategy: 'EXTERNAL',
      recruitmentPanelProvider: 'PROVIDER_ONE',
      studyPlan: { ...plan, includeScreener: true, incentive: { amount: 40, incentiveType: 'MONEY_OR_GIFT_CARD', currency: 'USD' } },
      hasScreener: true,
      createdFromStudyId: studyId,
      createdAt: expect.any(String),
    });
    expect(new Date(template.createdAt).toISOString()).toBe(template.createdAt);

    const fromTemplate = await call(service, 'POST', '/studies', { token: tenant.token, body: { studyTemplateId: template.studyTemplateId, studyPlan: {} } });
    expect(fromTemplate.statusCode, fromTemplate.body).toBe(201);
    const study = (await call(service, 'GET', `/studies/${fromTemplate.json().studyId}`, { token: tenant.token })).json();
    expect(study.screener.questions).toEqual(questions.map((question) => expect.objectContaining(question)));
    expect(study.studyPlan.name).toBe(plan.name);
  });

  it('records hasScreener false for a study without a screener', async () => {
    const tenant = await createTenant(service);
    const template = await createTemplate(tenant);
    expect(template).toMatchObject({ hasScreener: false, studyPlan: { includeScreener: false } });
  });

  it('is a snapshot: later changes to the study do not reach the template', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(tenant);
    const template = await createTemplate(tenant, 'Snapshot', studyId);
    const patched = await call(service, 'PATCH', `/studies/${studyId}`, { token: tenant.token, body: { studyPlan: { name: 'Changed', includeScreener: true } } });
    expect(patched.statusCode, patched.body).toBe(200);
    const got = await call(service, 'GET', `/study-templates/${template.studyTemplateId}`, { token: tenant.token });
    expect(got.json()).toEqual(template);
  });

  it.each([
    ['a missing name', { studyId: 'stu_x' }, ['name']],
    ['an empty name', { studyId: 'stu_x', name: '' }, ['name']],
    ['a missing studyId', { name: 'T' }, ['studyId']],
    ['an unknown field', { studyId: 'stu_x', name: 'T', studyType: 'SURVEY' }, ['studyType']],
  ])('refuses %s with 400 naming it', async (_what, body, path) => {
    const tenant = await createTenant(service);
    const response = await call(service, 'POST', '/study-templates', { token: tenant.token, body });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ errors: [{ message: expect.any(String), path }] });
    expect((await listTemplates(tenant)).total).toBe(0);
  });

  it('answers an unknown study with 404 naming studyId and makes no template', async () => {
    const tenant = await createTenant(service);
    const response = await call(service, 'POST', '/study-templates', { token: tenant.token, body: { studyId: 'stu_doesnotexist', name: 'T' } });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ errors: [{ message: 'Study not found', path: ['studyId'] }] });
    expect((await listTemplates(tenant)).total).toBe(0);
  });
});

describe('GET /study-templates', () => {
  it('lists the templates newest first with the exact total', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(tenant);
    const made = [];
    for (const name of ['A', 'B', 'C']) made.push(await createTemplate(tenant, name, studyId));
    const page = await listTemplates(tenant);
    expect(page.results).toEqual([...made].reverse());
    expect(page.total).toBe(3);
    expect(page.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: false });
  });

  it("never shows another workspace's templates", async () => {
    const tenant = await createTenant(service);
    const other = await createTenant(service, 'Other workspace');
    await createTemplate(other);
    expect(await listTemplates(tenant)).toEqual({ results: [], total: 0, pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: '', endCursor: '' } });
  });

  it('pages through 7 templates 3 at a time, each exactly once, also with one added between pages', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(tenant);
    const existing: string[] = [];
    for (let index = 0; index < 7; index++) existing.push((await createTemplate(tenant, `T${index}`, studyId)).studyTemplateId);
    const seen: string[] = [];
    const totals: number[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 10; pages++) {
      const page = await listTemplates(tenant, cursor === undefined ? { size: '3' } : { size: '3', startCursor: cursor });
      seen.push(...page.results.map((template) => template.studyTemplateId));
      totals.push(page.total);
      if (!page.pageInfo.hasNextPage) break;
      await createTemplate(tenant, `Added ${pages}`, studyId);
      cursor = page.pageInfo.endCursor;
    }
    expect(seen).toEqual([...existing].reverse());
    expect(totals).toEqual([7, 8, 9]);
  });

  it.each(['0', '101'])('refuses size=%s with 400 naming ["size"]', async (size) => {
    const tenant = await createTenant(service);
    const response = await call(service, 'GET', '/study-templates', { token: tenant.token, query: { size } });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ errors: [{ message: expect.any(String), path: ['size'] }] });
  });

  it("refuses a tampered cursor and a cursor of the studies list (400 naming ['startCursor'])", async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(tenant);
    await createStudy(tenant);
    for (let index = 0; index < 2; index++) await createTemplate(tenant, `T${index}`, studyId);
    const cursor = (await listTemplates(tenant, { size: '1' })).pageInfo.endCursor;
    const studiesCursor = (await call(service, 'GET', '/studies', { token: tenant.token, query: { size: '1' } })).json().pageInfo.endCursor;
    for (const startCursor of [cursor.slice(0, -2), `${cursor.startsWith('A') ? 'B' : 'A'}${cursor.slice(1)}`, studiesCursor]) {
      const response = await call(service, 'GET', '/study-templates', { token: tenant.token, query: { startCursor } });
      expect(response.statusCode, startCursor).toBe(400);
      expect(response.json()).toEqual({ errors: [{ message: expect.any(String), path: ['startCursor'] }] });
    }
  });
});

describe('GET /study-templates/{studyTemplateId}', () => {
  it('returns the template', async () => {
    const tenant = await createTenant(service);
    const template = await createTemplate(tenant);
    const response = await call(service, 'GET', `/study-templates/${template.studyTemplateId}`, { token: tenant.token });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual(template);
  });

  it('answers an unknown id with 404 naming studyTemplateId', async () => {
    const tenant = await createTenant(service);
    const response = await call(service, 'GET', '/study-templates/stt_doesnotexist', { token: tenant.token });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ errors: [{ message: 'Study template not found', path: ['studyTemplateId'] }] });
  });
});

describeSecurity('POST /study-templates', () => service, {
  method: 'POST',
  right: 'templates:write',
  addressesResource: true,
  request: async (tenant) => ({ url: '/study-templates', body: { studyId: await createStudy(tenant), name: 'T' } }),
});

describeSecurity('GET /study-templates', () => service, {
  method: 'GET',
  right: 'studies:read',
  addressesResource: false,
  request: async () => ({ url: '/study-templates' }),
});

describeSecurity('GET /study-templates/{studyTemplateId}', () => service, {
  method: 'GET',
  right: 'studies:read',
  addressesResource: true,
  request: async (tenant) => ({ url: `/study-templates/${(await createTemplate(tenant)).studyTemplateId}` }),
});
