import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, type Tenant, type TestService, startTestService } from '../../../test/harness.js';
import { describeSecurity } from '../../../test/security.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service.stop());

const fullPlan = {
  name: 'Checkout interviews',
  externalName: 'Tell us about paying online',
  description: 'Why carts are abandoned',
  externalDescription: 'A 30-minute chat',
  startDate: '2026-12-01',
  endDate: '2026-12-20',
  researchPlanUrl: 'https://example.org/plan',
  participationLimit: 12,
  consentFormId: 'cf_1',
  incentive: { amount: 50, incentiveBudgetId: 'bud_1' },
  brandingConfigId: 'br_1',
  language: 'en',
  scheduler: { interviewDurationMinutes: 30 },
};

async function createStudy(tenant: Tenant, body: object = {}) {
  const response = await call(service, 'POST', '/studies', {
    token: tenant.token,
    body: { studyType: 'INTERVIEWS', recruitmentStrategy: 'IN_SERVICE', studyPlan: fullPlan, ...body },
  });
  expect(response.statusCode, response.body).toBe(201);
  return response.json<{ studyId: string }>().studyId;
}

async function patch(tenant: Tenant, studyId: string, body: unknown) {
  return call(service, 'PATCH', `/studies/${studyId}`, { token: tenant.token, body });
}

async function getStudy(tenant: Tenant, studyId: string) {
  const response = await call(service, 'GET', `/studies/${studyId}`, { token: tenant.token });
  expect(response.statusCode, response.body).toBe(200);
  return response.json();
}

describe('PATCH /studies/{studyId} (E3)', () => {
  it('changes only the supplied fields and returns the study with its screener field', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(tenant);
    const before = await getStudy(tenant, studyId);
    const response = await patch(tenant, studyId, { studyPlan: { description: 'A new angle' } });
    expect(response.statusCode, response.body).toBe(200);
    const study = response.json();
    expect(study).toHaveProperty('screener', null);
    expect(study.studyPlan).toEqual({ ...before.studyPlan, description: 'A new angle' });
    expect(study.studyPlan.name).toBe('Checkout interviews');
    const { studyPlan: _after, ...restAfter } = study;
    const { studyPlan: _before, ...restBefore } = before;
    expect(restAfter).toEqual(restBefore);
    expect(await getStudy(tenant, studyId)).toEqual(study);
  });

  it('changes every plan field the reference lists', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(tenant);
    const changes = {
      name: 'Renamed',
      externalName: 'New external',
      description: 'New description',
      externalDescription: 'New external description',
      startDate: '2027-01-01',
      endDate: '2027-01-31',
      researchPlanUrl: 'https://example.org/new',
      participationLimit: 40,
      consentFormId: 'cf_2',
      brandingConfigId: 'br_2',
      language: 'de',
      scheduler: { interviewDurationMinutes: 60 },
    };
    const response = await patch(tenant, studyId, { studyPlan: changes });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json().studyPlan).toMatchObject(changes);
  });

  it('accepts an empty body and an empty studyPlan, changing nothing', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(tenant);
    const before = await getStudy(tenant, studyId);
    for (const body of [{}, { studyPlan: {} }]) {
      const response = await patch(tenant, studyId, body);
      expect(response.statusCode, response.body).toBe(200);
      expect(response.json()).toEqual(before);
    }
  });

  it('merges the incentive field by field and shows incentiveType and currency', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(tenant);
    const response = await patch(tenant, studyId, { studyPlan: { incentive: { amount: 75 } } });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json().studyPlan.incentive).toEqual({ amount: 75, incentiveBudgetId: 'bud_1', incentiveType: 'MONEY_OR_GIFT_CARD', currency: 'USD' });

    const custom = await patch(tenant, studyId, { studyPlan: { incentive: { customIncentiveId: 'ci_1', defaultCustomIncentiveValue: 'A tote bag' } } });
    expect(custom.statusCode, custom.body).toBe(200);
    expect(custom.json().studyPlan.incentive).toEqual({
      amount: 75,
      incentiveBudgetId: 'bud_1',
      customIncentiveId: 'ci_1',
      defaultCustomIncentiveValue: 'A tote bag',
      incentiveType: 'CUSTOM',
      currency: 'USD',
    });
  });

  it('adds an incentive to a study that had none', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(tenant, { studyPlan: { name: 'Bare' } });
    const response = await patch(tenant, studyId, { studyPlan: { incentive: { amount: 10 } } });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json().studyPlan).toEqual({ name: 'Bare', includeScreener: false, incentive: { amount: 10, incentiveType: 'MONEY_OR_GIFT_CARD', currency: 'USD' } });
  });

  it.each(['incentiveType', 'currency'])('refuses %s in the incentive input (400 naming it)', async (field) => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(tenant);
    const response = await patch(tenant, studyId, { studyPlan: { incentive: { amount: 5, [field]: field === 'currency' ? 'USD' : 'MONEY_OR_GIFT_CARD' } } });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ errors: [{ message: `${field} is not a known field`, path: ['studyPlan', 'incentive', field] }] });
    expect((await getStudy(tenant, studyId)).studyPlan.incentive.amount).toBe(50);
  });

  it('creates an empty screener with includeScreener true, and keeps it when sent again', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(tenant);
    const response = await patch(tenant, studyId, { studyPlan: { includeScreener: true } });
    expect(response.statusCode, response.body).toBe(200);
    const study = response.json();
    expect(study.studyPlan.includeScreener).toBe(true);
    expect(study.screener).toMatchObject({ studyId, type: 'SERVICE', questions: [] });

    const again = await patch(tenant, studyId, { studyPlan: { includeScreener: true } });
    expect(again.json().screener.id).toBe(study.screener.id);
  });

  it('gives a SURVEY study an empty SERVICE screener with includeScreener true, as creating one does', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(tenant, { studyType: 'SURVEY' });
    const response = await patch(tenant, studyId, { studyPlan: { includeScreener: true } });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json().screener).toMatchObject({ studyId, type: 'SERVICE', questions: [], externalSurveySetupStatus: null });
  });

  it('keeps existing questions when includeScreener true is sent', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(tenant);
    const questions = [{ name: 'Age?', type: 'NUMBER', category: 'simple', isRequired: true }];
    expect((await call(service, 'PUT', `/studies/${studyId}/screener`, { token: tenant.token, body: { questions } })).statusCode).toBe(200);
    const response = await patch(tenant, studyId, { studyPlan: { includeScreener: true, name: 'Still screened' } });
    expect(response.json().screener.questions).toEqual([expect.objectContaining(questions[0])]);
  });

  it('gives screener null to a token that cannot read screeners', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(tenant, { studyPlan: { name: 'Screened', includeScreener: true } });
    const { token } = await tenant.tokenFor('SUPER_ADMIN', { canReadScreeners: false });
    const response = await call(service, 'PATCH', `/studies/${studyId}`, { token, body: { studyPlan: { name: 'Renamed' } } });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({ studyPlan: { name: 'Renamed', includeScreener: true }, screener: null });
  });

  it('refuses an endDate before the startDate, also against the stored one (400)', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(tenant);
    const response = await patch(tenant, studyId, { studyPlan: { endDate: '2026-11-30' } });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ errors: [{ message: 'endDate must be on or after startDate', path: ['studyPlan', 'endDate'] }] });
    expect((await getStudy(tenant, studyId)).studyPlan.endDate).toBe('2026-12-20');
  });

  it.each([
    ['an unknown root field', { status: 'ACTIVE' }, ['status']],
    ['an unknown plan field', { studyPlan: { title: 'x' } }, ['studyPlan', 'title']],
    ['an empty name', { studyPlan: { name: '' } }, ['studyPlan', 'name']],
    ['a bad date', { studyPlan: { startDate: '2026-13-01' } }, ['studyPlan', 'startDate']],
    ['a bad URL', { studyPlan: { researchPlanUrl: 'not a url' } }, ['studyPlan', 'researchPlanUrl']],
    ['a negative amount', { studyPlan: { incentive: { amount: -1 } } }, ['studyPlan', 'incentive', 'amount']],
    ['includeScreener as text', { studyPlan: { includeScreener: 'yes' } }, ['studyPlan', 'includeScreener']],
    ['a bad language', { studyPlan: { language: 'English' } }, ['studyPlan', 'language']],
  ])('refuses %s (400 naming its path) and changes nothing', async (_what, body, path) => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(tenant);
    const before = await getStudy(tenant, studyId);
    const response = await patch(tenant, studyId, body);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ errors: [{ message: expect.any(String), path }] });
    expect(await getStudy(tenant, studyId)).toEqual(before);
  });

  it('answers an unknown id with 404 naming studyId', async () => {
    const tenant = await createTenant(service);
    const response = await patch(tenant, 'stu_doesnotexist', { studyPlan: { name: 'x' } });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ errors: [{ message: 'Study not found', path: ['studyId'] }] });
  });
});

describeSecurity('PATCH /studies/{studyId}', () => service, {
  method: 'PATCH',
  right: 'studies:write',
  addressesResource: true,
  request: async (tenant) => ({ url: `/studies/${await createStudy(tenant)}`, body: { studyPlan: { description: 'Changed' } } }),
});
