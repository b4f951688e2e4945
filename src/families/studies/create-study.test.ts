import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, type Tenant, type TestService, startTestService, uniqueEmail } from '../../../test/harness.js';
import { describeSecurity } from '../../../test/security.js';
import { idPrefixes, newId } from '../../ids.js';
import { createUser, setUserStatus } from '../workspaces/service.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service.stop());

const interviews = { studyType: 'INTERVIEWS', recruitmentStrategy: 'IN_SERVICE', studyPlan: { name: 'Checkout interviews' } };

async function createStudy(tenant: Tenant, body: object = interviews) {
  const response = await call(service, 'POST', '/studies', { token: tenant.token, body });
  expect(response.statusCode, response.body).toBe(201);
  return response.json<{ studyId: string }>().studyId;
}

async function getStudy(tenant: Tenant, studyId: string) {
  const response = await call(service, 'GET', `/studies/${studyId}`, { token: tenant.token });
  expect(response.statusCode, response.body).toBe(200);
  return response.json();
}

async function studyCount(tenant: Tenant) {
  const response = await call(service, 'GET', '/studies', { token: tenant.token });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<{ total: number }>().total;
}

async function statusEvents(workspaceId: string, studyId?: string) {
  return service.deps.db
    .selectFrom('study_status_events')
    .where('workspace_id', '=', workspaceId)
    .$if(studyId !== undefined, (query) => query.where('study_id', '=', studyId!))
    .select(['study_id', 'field', 'from_status', 'to_status', 'user_id'])
    .orderBy('event_id')
    .execute();
}

async function addPopulation(workspaceId: string) {
  const populationId = newId(idPrefixes.population);
  await service.deps.db
    .insertInto('populations')
    .values({ workspace_id: workspaceId, population_id: populationId, name: 'Shoppers', created_at: new Date().toISOString() })
    .execute();
  return populationId;
}

async function addTeam(tenant: Tenant, name: string) {
  await createUser(service.deps.db, { workspaceId: tenant.workspaceId, email: uniqueEmail('member'), role: 'RESEARCHER', teams: [name] });
  const response = await call(service, 'GET', '/teams', { token: tenant.token });
  expect(response.statusCode, response.body).toBe(200);
  const team = response.json<{ results: { teamId: string; name: string }[] }>().results.find((item) => item.name === name);
  expect(team).toBeDefined();
  return team!.teamId;
}

/** Sends a create that must fail, and checks it left no study and no status event behind. */
async function refusedCreate(tenant: Tenant, body: unknown) {
  const studiesBefore = await studyCount(tenant);
  const eventsBefore = (await statusEvents(tenant.workspaceId)).length;
  const response = await call(service, 'POST', '/studies', { token: tenant.token, body });
  expect(await studyCount(tenant)).toBe(studiesBefore);
  expect((await statusEvents(tenant.workspaceId)).length).toBe(eventsBefore);
  return response;
}

describe('POST /studies (E19)', () => {
  it('creates a DRAFT study of every type and both strategies, owned by the caller', async () => {
    const tenant = await createTenant(service);
    for (const studyType of ['SURVEY', 'INTERVIEWS', 'UNMODERATED_TEST', 'GROUP_INTERVIEW']) {
      for (const recruitmentStrategy of ['IN_SERVICE', 'EXTERNAL']) {
        const studyId = await createStudy(tenant, { studyType, recruitmentStrategy, studyPlan: { name: `${studyType} ${recruitmentStrategy}` } });
        expect(studyId).toMatch(/^stu_/);
        const study = await getStudy(tenant, studyId);
        expect(study).toMatchObject({
          studyId,
          studyType,
          recruitmentStrategy,
          recruitmentPanelProvider: recruitmentStrategy === 'EXTERNAL' ? 'PROVIDER_TWO' : null,
          status: 'DRAFT',
          createdFromTemplateId: null,
          teamId: null,
          populationId: null,
          studyPlan: { name: `${studyType} ${recruitmentStrategy}`, includeScreener: false },
          owners: [{ userId: tenant.userId }],
          screener: null,
        });
      }
    }
    expect(await studyCount(tenant)).toBe(8);
  });

  it('keeps every study-plan field it is given', async () => {
    const tenant = await createTenant(service);
    const studyPlan = {
      name: 'Checkout interviews',
      externalName: 'Tell us about paying online',
      description: 'Why carts are abandoned',
      externalDescription: 'A 30-minute chat',
      startDate: '2026-12-01',
      endDate: '2026-12-01',
      researchPlanUrl: 'https://example.org/plan',
      participationLimit: 12,
      consentFormId: 'cf_1',
      incentive: { amount: 50, incentiveBudgetId: 'bud_1' },
      brandingConfigId: 'br_1',
      language: 'pt-BR',
      scheduler: { interviewDurationMinutes: 30 },
    };
    const studyId = await createStudy(tenant, { ...interviews, studyPlan });
    const study = await getStudy(tenant, studyId);
    expect(study.studyPlan).toEqual({
      ...studyPlan,
      includeScreener: false,
      incentive: { amount: 50, incentiveBudgetId: 'bud_1', incentiveType: 'MONEY_OR_GIFT_CARD', currency: 'USD' },
    });
  });

  it('creates every study of concurrent requests, each with its own id and event', async () => {
    const tenant = await createTenant(service);
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, index) =>
        call(service, 'POST', '/studies', { token: tenant.token, body: { ...interviews, studyPlan: { name: `Parallel ${index}`, includeScreener: true } } }),
      ),
    );
    for (const response of responses) expect(response.statusCode, response.body).toBe(201);
    const ids = responses.map((response) => response.json().studyId);
    expect(new Set(ids).size).toBe(10);
    expect(await studyCount(tenant)).toBe(10);
    expect((await statusEvents(tenant.workspaceId)).map((event) => event.study_id).sort()).toEqual([...ids].sort());
  });

  it('records the status event null → DRAFT', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(tenant);
    expect(await statusEvents(tenant.workspaceId, studyId)).toEqual([
      { study_id: studyId, field: 'status', from_status: null, to_status: 'DRAFT', user_id: tenant.userId },
    ]);
  });

  describe('recruitmentPanelProvider', () => {
    it('defaults to PROVIDER_TWO for EXTERNAL recruitment and takes PROVIDER_ONE when given', async () => {
      const tenant = await createTenant(service);
      const byDefault = await createStudy(tenant, { ...interviews, recruitmentStrategy: 'EXTERNAL' });
      expect((await getStudy(tenant, byDefault)).recruitmentPanelProvider).toBe('PROVIDER_TWO');
      const chosen = await createStudy(tenant, { ...interviews, recruitmentStrategy: 'EXTERNAL', recruitmentPanelProvider: 'PROVIDER_ONE' });
      expect((await getStudy(tenant, chosen)).recruitmentPanelProvider).toBe('PROVIDER_ONE');
    });

    it('is refused with IN_SERVICE recruitment (400)', async () => {
      const tenant = await createTenant(service);
      const response = await refusedCreate(tenant, { ...interviews, recruitmentPanelProvider: 'PROVIDER_ONE' });
      expect(response.statusCode).toBe(400);
      expect(response.json().errors).toEqual([{ message: expect.any(String), path: ['recruitmentPanelProvider'] }]);
    });

    it('is refused when not a known provider (400)', async () => {
      const tenant = await createTenant(service);
      const response = await refusedCreate(tenant, { ...interviews, recruitmentStrategy: 'EXTERNAL', recruitmentPanelProvider: 'PROVIDER_THREE' });
      expect(response.statusCode).toBe(400);
      expect(response.json().errors[0].path).toEqual(['recruitmentPanelProvider']);
    });
  });

  describe('validation', () => {
    it.each([
      ['studyType', { recruitmentStrategy: 'IN_SERVICE', studyPlan: { name: 'No type' } }, ['studyType']],
      ['recruitmentStrategy', { studyType: 'SURVEY', studyPlan: { name: 'No strategy' } }, ['recruitmentStrategy']],
      ['studyPlan.name', { studyType: 'SURVEY', recruitmentStrategy: 'IN_SERVICE', studyPlan: { description: 'No name' } }, ['studyPlan', 'name']],
      ['studyPlan', { studyType: 'SURVEY', recruitmentStrategy: 'IN_SERVICE' }, ['studyPlan']],
    ])('refuses a missing %s with 400 naming it', async (_field, body, path) => {
      const tenant = await createTenant(service);
      const response = await refusedCreate(tenant, body);
      expect(response.statusCode).toBe(400);
      expect(response.json()).toEqual({ errors: [{ message: expect.any(String), path }] });
    });

    it.each([
      ['at the root', { ...interviews, colour: 'blue' }, ['colour']],
      ['in studyPlan', { ...interviews, studyPlan: { name: 'Typo', nmae: 'x' } }, ['studyPlan', 'nmae']],
      ['in studyPlan.incentive', { ...interviews, studyPlan: { name: 'x', incentive: { incentiveType: 'CUSTOM' } } }, ['studyPlan', 'incentive', 'incentiveType']],
      ['in owners', { ...interviews, owners: { userIds: ['usr_x'], teamIds: [] } }, ['owners', 'teamIds']],
    ])('refuses an unknown field %s with 400 naming its path', async (_where, body, path) => {
      const tenant = await createTenant(service);
      const response = await refusedCreate(tenant, body);
      expect(response.statusCode).toBe(400);
      expect(response.json()).toEqual({ errors: [{ message: `${path.at(-1)} is not a known field`, path }] });
    });

    it.each([
      ['an unknown studyType', { ...interviews, studyType: 'FOCUS_GROUP' }, ['studyType']],
      ['an unknown recruitmentStrategy', { ...interviews, recruitmentStrategy: 'PANEL' }, ['recruitmentStrategy']],
      ['an empty name', { ...interviews, studyPlan: { name: '' } }, ['studyPlan', 'name']],
      ['a malformed date', { ...interviews, studyPlan: { name: 'x', startDate: '01/12/2026' } }, ['studyPlan', 'startDate']],
      ['a participationLimit of 0', { ...interviews, studyPlan: { name: 'x', participationLimit: 0 } }, ['studyPlan', 'participationLimit']],
      ['a number as text', { ...interviews, studyPlan: { name: 'x', participationLimit: '5' } }, ['studyPlan', 'participationLimit']],
      ['a NUL in text', { ...interviews, studyPlan: { name: 'a\u0000b' } }, ['studyPlan', 'name']],
      ['a duplicated owner', { ...interviews, owners: { userIds: ['usr_a', 'usr_a'] } }, ['owners', 'userIds']],
    ])('refuses %s with 400 naming its path', async (_what, body, path) => {
      const tenant = await createTenant(service);
      const response = await refusedCreate(tenant, body);
      expect(response.statusCode).toBe(400);
      expect(response.json().errors).toEqual([{ message: expect.any(String), path }]);
    });

    it('refuses a researchPlanUrl that is not http(s), such as javascript: (400)', async () => {
      const tenant = await createTenant(service);
      for (const url of ['javascript:alert(1)', 'ftp://example.org/plan', 'not a url']) {
        const response = await refusedCreate(tenant, { ...interviews, studyPlan: { name: 'Links', researchPlanUrl: url } });
        expect(response.statusCode, url).toBe(400);
        expect(response.json().errors[0].path).toEqual(['studyPlan', 'researchPlanUrl']);
      }
    });

    it('refuses an endDate before the startDate (400)', async () => {
      const tenant = await createTenant(service);
      const response = await refusedCreate(tenant, { ...interviews, studyPlan: { name: 'Backwards', startDate: '2026-12-10', endDate: '2026-12-09' } });
      expect(response.statusCode).toBe(400);
      expect(response.json()).toEqual({ errors: [{ message: 'endDate must be on or after startDate', path: ['studyPlan', 'endDate'] }] });
    });

    it('refuses idOfStudyToDuplicate together with studyTemplateId (400)', async () => {
      const tenant = await createTenant(service);
      const original = await createStudy(tenant);
      const template = await call(service, 'POST', '/study-templates', { token: tenant.token, body: { studyId: original, name: 'T' } });
      expect(template.statusCode, template.body).toBe(201);
      const response = await refusedCreate(tenant, {
        studyPlan: { name: 'Both' },
        idOfStudyToDuplicate: original,
        studyTemplateId: template.json().studyTemplateId,
      });
      expect(response.statusCode).toBe(400);
      expect(response.json().errors).toEqual([{ message: expect.any(String), path: ['studyTemplateId'] }]);
    });
  });

  describe('duplicating a study', () => {
    it('copies type, recruitment, plan, screener questions, owners, team and population; studyPlan overrides', async () => {
      const tenant = await createTenant(service);
      const colleague = await tenant.tokenFor('RESEARCHER');
      const teamId = await addTeam(tenant, 'Discovery');
      const populationId = await addPopulation(tenant.workspaceId);
      const original = await createStudy(tenant, {
        studyType: 'UNMODERATED_TEST',
        recruitmentStrategy: 'EXTERNAL',
        recruitmentPanelProvider: 'PROVIDER_ONE',
        studyPlan: { name: 'Original', description: 'Kept', participationLimit: 7, incentive: { amount: 20 } },
        owners: { userIds: [colleague.userId, tenant.userId] },
        teamId,
        populationId,
      });
      const questions = [
        { name: 'How often do you shop online?', type: 'SHORT_FORM', category: 'simple', isRequired: true, description: 'Roughly' },
        { name: 'Which devices?', type: 'MULTI_SELECT', category: 'simple', isRequired: false, choices: [{ id: 'phone', label: 'Phone', rule: 'NEUTRAL' }, { id: 'laptop', label: 'Laptop', rule: 'NEUTRAL' }] },
      ];
      const put = await call(service, 'PUT', `/studies/${original}/screener`, { token: tenant.token, body: { qualifyByDefault: true, questions } });
      expect(put.statusCode, put.body).toBe(200);

      const copy = await createStudy(tenant, { idOfStudyToDuplicate: original, studyPlan: { name: 'Copy', participationLimit: 9 } });
      expect(copy).not.toBe(original);
      const study = await getStudy(tenant, copy);
      expect(study).toMatchObject({
        studyType: 'UNMODERATED_TEST',
        recruitmentStrategy: 'EXTERNAL',
        recruitmentPanelProvider: 'PROVIDER_ONE',
        status: 'DRAFT',
        createdFromTemplateId: null,
        teamId,
        populationId,
        studyPlan: { name: 'Copy', description: 'Kept', participationLimit: 9, includeScreener: true, incentive: { amount: 20 } },
        owners: [{ userId: colleague.userId }, { userId: tenant.userId }],
        screener: { studyId: copy, type: 'SERVICE', qualifyByDefault: true, questions: questions.map((question) => expect.objectContaining(question)) },
      });
      const originalStudy = await getStudy(tenant, original);
      expect(study.screener.id).not.toBe(originalStudy.screener.id);
      expect(study.screener.questions.map((question: { id: string }) => question.id)).not.toContain(originalStudy.screener.questions[0].id);
      expect(originalStudy.studyPlan.name).toBe('Original');
    });

    it('starts the copy in DRAFT whatever the status of the original', async () => {
      const tenant = await createTenant(service);
      const original = await createStudy(tenant);
      expect((await call(service, 'POST', `/studies/${original}/status`, { token: tenant.token, body: { status: 'CLOSED' } })).statusCode).toBe(200);
      const copy = await createStudy(tenant, { idOfStudyToDuplicate: original, studyPlan: {} });
      expect((await getStudy(tenant, copy)).status).toBe('DRAFT');
    });

    it('answers an unknown study id with 404 naming idOfStudyToDuplicate', async () => {
      const tenant = await createTenant(service);
      const response = await refusedCreate(tenant, { idOfStudyToDuplicate: 'stu_doesnotexist', studyPlan: {} });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({ errors: [{ message: 'Study not found', path: ['idOfStudyToDuplicate'] }] });
    });

    it("answers another workspace's study id with 404, as if it did not exist", async () => {
      const owner = await createTenant(service);
      const stranger = await createTenant(service, 'Other workspace');
      const original = await createStudy(owner);
      const response = await refusedCreate(stranger, { idOfStudyToDuplicate: original, studyPlan: { name: 'Stolen' } });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({ errors: [{ message: 'Study not found', path: ['idOfStudyToDuplicate'] }] });
    });
  });

  describe('starting from a template', () => {
    it('takes the template and records createdFromTemplateId; studyPlan overrides', async () => {
      const tenant = await createTenant(service);
      const source = await createStudy(tenant, {
        studyType: 'GROUP_INTERVIEW',
        recruitmentStrategy: 'EXTERNAL',
        studyPlan: { name: 'Source', language: 'en', scheduler: { interviewDurationMinutes: 45 } },
      });
      const questions = [{ name: 'Your role?', type: 'SHORT_FORM', category: 'simple', isRequired: true }];
      expect((await call(service, 'PUT', `/studies/${source}/screener`, { token: tenant.token, body: { questions } })).statusCode).toBe(200);
      const template = await call(service, 'POST', '/study-templates', { token: tenant.token, body: { studyId: source, name: 'Group template' } });
      expect(template.statusCode, template.body).toBe(201);
      const studyTemplateId = template.json().studyTemplateId;

      const studyId = await createStudy(tenant, { studyTemplateId, studyPlan: { name: 'From template', language: 'fr' } });
      expect(await getStudy(tenant, studyId)).toMatchObject({
        studyType: 'GROUP_INTERVIEW',
        recruitmentStrategy: 'EXTERNAL',
        recruitmentPanelProvider: 'PROVIDER_TWO',
        status: 'DRAFT',
        createdFromTemplateId: studyTemplateId,
        studyPlan: { name: 'From template', language: 'fr', includeScreener: true, scheduler: { interviewDurationMinutes: 45 } },
        owners: [{ userId: tenant.userId }],
        screener: { type: 'SERVICE', questions: [expect.objectContaining(questions[0])] },
      });
    });

    it('answers an unknown template id with 404 naming studyTemplateId', async () => {
      const tenant = await createTenant(service);
      const response = await refusedCreate(tenant, { studyTemplateId: 'stt_doesnotexist', studyPlan: { name: 'x' } });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({ errors: [{ message: 'Study template not found', path: ['studyTemplateId'] }] });
    });

    it("answers another workspace's template id with 404", async () => {
      const owner = await createTenant(service);
      const stranger = await createTenant(service, 'Other workspace');
      const template = await call(service, 'POST', '/study-templates', { token: owner.token, body: { studyId: await createStudy(owner), name: 'T' } });
      const response = await refusedCreate(stranger, { studyTemplateId: template.json().studyTemplateId, studyPlan: { name: 'x' } });
      expect(response.statusCode).toBe(404);
      expect(response.json().errors[0].path).toEqual(['studyTemplateId']);
    });
  });

  describe('team, population and owners', () => {
    it('accepts a known team and population', async () => {
      const tenant = await createTenant(service);
      const teamId = await addTeam(tenant, 'Growth');
      const populationId = await addPopulation(tenant.workspaceId);
      const studyId = await createStudy(tenant, { ...interviews, teamId, populationId });
      expect(await getStudy(tenant, studyId)).toMatchObject({ teamId, populationId });
    });

    it('takes the given owners in their order', async () => {
      const tenant = await createTenant(service);
      const first = await tenant.tokenFor('OBSERVER');
      const second = await tenant.tokenFor('RESEARCHER');
      const studyId = await createStudy(tenant, { ...interviews, owners: { userIds: [second.userId, first.userId] } });
      const owners = (await getStudy(tenant, studyId)).owners;
      expect(owners.map((owner: { userId: string }) => owner.userId)).toEqual([second.userId, first.userId]);
      for (const owner of owners) expect(Object.keys(owner).sort()).toEqual(['email', 'emailAccountId', 'fullname', 'userId']);
    });

    it.each([
      ['teamId', { teamId: 'tem_doesnotexist' }, 'Team not found', ['teamId']],
      ['populationId', { populationId: 'pop_doesnotexist' }, 'Population not found', ['populationId']],
      ['owner', { owners: { userIds: ['usr_doesnotexist'] } }, 'User not found', ['owners', 'userIds', '0']],
    ])('answers an unknown %s with 404 naming the field', async (_field, extra, message, path) => {
      const tenant = await createTenant(service);
      const response = await refusedCreate(tenant, { ...interviews, ...extra });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({ errors: [{ message, path }] });
    });

    it('names the index of the first unknown owner', async () => {
      const tenant = await createTenant(service);
      const response = await refusedCreate(tenant, { ...interviews, owners: { userIds: [tenant.userId, 'usr_doesnotexist'] } });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({ errors: [{ message: 'User not found', path: ['owners', 'userIds', '1'] }] });
    });

    it("treats another workspace's team, population and user as unknown (404)", async () => {
      const tenant = await createTenant(service);
      const other = await createTenant(service, 'Other workspace');
      const cases: [object, string[]][] = [
        [{ teamId: await addTeam(other, 'Theirs') }, ['teamId']],
        [{ populationId: await addPopulation(other.workspaceId) }, ['populationId']],
        [{ owners: { userIds: [other.userId] } }, ['owners', 'userIds', '0']],
      ];
      for (const [extra, path] of cases) {
        const response = await refusedCreate(tenant, { ...interviews, ...extra });
        expect(response.statusCode, JSON.stringify(extra)).toBe(404);
        expect(response.json().errors[0].path).toEqual(path);
      }
    });

    it('refuses a deactivated user as owner (404)', async () => {
      const tenant = await createTenant(service);
      const { userId } = await tenant.tokenFor('RESEARCHER');
      await setUserStatus(service.deps.db, tenant.workspaceId, userId, 'DEACTIVATED');
      const response = await refusedCreate(tenant, { ...interviews, owners: { userIds: [userId] } });
      expect(response.statusCode).toBe(404);
      expect(response.json().errors[0].path).toEqual(['owners', 'userIds', '0']);
    });
  });

  describe('includeScreener', () => {
    it('gives a non-survey study an empty SERVICE screener', async () => {
      const tenant = await createTenant(service);
      const studyId = await createStudy(tenant, { ...interviews, studyPlan: { name: 'Screened', includeScreener: true } });
      const study = await getStudy(tenant, studyId);
      expect(study.studyPlan.includeScreener).toBe(true);
      expect(study.screener).toMatchObject({
        studyId,
        workspaceId: tenant.workspaceId,
        type: 'SERVICE',
        questions: [],
        qualifyByDefault: false,
        showSchedulerToQualified: false,
        externalSurveySetupStatus: null,
      });
    });

    it('gives every study type an empty SERVICE screener, a SURVEY study too (contract §3)', async () => {
      const tenant = await createTenant(service);
      for (const studyType of ['SURVEY', 'INTERVIEWS', 'UNMODERATED_TEST', 'GROUP_INTERVIEW']) {
        for (const recruitmentStrategy of ['IN_SERVICE', 'EXTERNAL']) {
          const studyId = await createStudy(tenant, { studyType, recruitmentStrategy, studyPlan: { name: `${studyType} screened`, includeScreener: true } });
          const study = await getStudy(tenant, studyId);
          expect(study.studyPlan.includeScreener, `${studyType} ${recruitmentStrategy}`).toBe(true);
          expect(study.screener, `${studyType} ${recruitmentStrategy}`).toMatchObject({ studyId, type: 'SERVICE', questions: [], externalSurveySetupStatus: null });
        }
      }
    });

    it('gives no screener with includeScreener false', async () => {
      const tenant = await createTenant(service);
      const studyId = await createStudy(tenant, { ...interviews, studyPlan: { name: 'Unscreened', includeScreener: false } });
      const study = await getStudy(tenant, studyId);
      expect(study.studyPlan.includeScreener).toBe(false);
      expect(study.screener).toBeNull();
    });
  });
});

describeSecurity('POST /studies', () => service, {
  method: 'POST',
  right: 'studies:write',
  addressesResource: false,
  request: async () => ({ url: '/studies', body: interviews }),
});
