import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, type Tenant, type TestService, startTestService } from '../../../test/harness.js';
import { describeSecurity } from '../../../test/security.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service.stop());

interface StudyPage {
  results: { studyId: string; status: string; studyType: string; studyPlan: { name: string } }[];
  total: number;
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string; endCursor: string };
}

async function createStudy(tenant: Tenant, name: string, studyType = 'INTERVIEWS') {
  const response = await call(service, 'POST', '/studies', {
    token: tenant.token,
    body: { studyType, recruitmentStrategy: 'IN_SERVICE', studyPlan: { name, includeScreener: studyType !== 'SURVEY' } },
  });
  expect(response.statusCode, response.body).toBe(201);
  return response.json<{ studyId: string }>().studyId;
}

async function setStatus(tenant: Tenant, studyId: string, status: 'PAUSED' | 'CLOSED') {
  const response = await call(service, 'POST', `/studies/${studyId}/status`, { token: tenant.token, body: { status } });
  expect(response.statusCode, response.body).toBe(200);
}

async function list(tenant: Tenant, query: Record<string, string> = {}) {
  const response = await call(service, 'GET', '/studies', { token: tenant.token, query });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<StudyPage>();
}

/** Reads every page, `between` running after each page but the last. */
async function readAll(tenant: Tenant, query: Record<string, string>, between: (page: number) => Promise<void> = async () => {}) {
  const pages: StudyPage[] = [];
  let cursor: string | undefined;
  for (;;) {
    const page = await list(tenant, cursor === undefined ? query : { ...query, startCursor: cursor });
    pages.push(page);
    if (!page.pageInfo.hasNextPage) return pages;
    await between(pages.length);
    cursor = page.pageInfo.endCursor;
    expect(pages.length).toBeLessThan(20);
  }
}

describe('GET /studies', () => {
  it('lists the studies newest first, without screeners, with the exact total', async () => {
    const tenant = await createTenant(service);
    const ids: string[] = [];
    for (const name of ['First', 'Second', 'Third']) ids.push(await createStudy(tenant, name));
    const page = await list(tenant);
    expect(page.results.map((study) => study.studyId)).toEqual([...ids].reverse());
    expect(page.results.map((study) => study.studyPlan.name)).toEqual(['Third', 'Second', 'First']);
    for (const study of page.results) expect(study).not.toHaveProperty('screener');
    expect(page.results[0]).toMatchObject({ status: 'DRAFT', studyType: 'INTERVIEWS', owners: [{ userId: tenant.userId }], createdFromTemplateId: null });
    expect(page.total).toBe(3);
    expect(page.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: false });
    expect(page.pageInfo.startCursor).not.toBe('');
    expect(page.pageInfo.endCursor).not.toBe('');
  });

  it('gives an empty page for a workspace without studies', async () => {
    const tenant = await createTenant(service);
    expect(await list(tenant)).toEqual({ results: [], total: 0, pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: '', endCursor: '' } });
  });

  it("never shows another workspace's studies", async () => {
    const tenant = await createTenant(service);
    const other = await createTenant(service, 'Other workspace');
    const mine = await createStudy(tenant, 'Mine');
    await createStudy(other, 'Theirs');
    await createStudy(other, 'Theirs too');
    const page = await list(tenant);
    expect(page.results.map((study) => study.studyId)).toEqual([mine]);
    expect(page.total).toBe(1);
    expect((await list(other)).total).toBe(2);
  });

  it('filters by status and by studyType, alone and together, with the total of the filter', async () => {
    const tenant = await createTenant(service);
    const draftInterview = await createStudy(tenant, 'Draft interview');
    const pausedInterview = await createStudy(tenant, 'Paused interview');
    const pausedSurvey = await createStudy(tenant, 'Paused survey', 'SURVEY');
    const closedSurvey = await createStudy(tenant, 'Closed survey', 'SURVEY');
    await setStatus(tenant, pausedInterview, 'PAUSED');
    await setStatus(tenant, pausedSurvey, 'PAUSED');
    await setStatus(tenant, closedSurvey, 'CLOSED');

    const ids = (page: StudyPage) => page.results.map((study) => study.studyId);
    const paused = await list(tenant, { status: 'PAUSED' });
    expect(ids(paused)).toEqual([pausedSurvey, pausedInterview]);
    expect(paused.total).toBe(2);
    const surveys = await list(tenant, { studyType: 'SURVEY' });
    expect(ids(surveys)).toEqual([closedSurvey, pausedSurvey]);
    expect(surveys.total).toBe(2);
    const pausedSurveys = await list(tenant, { status: 'PAUSED', studyType: 'SURVEY' });
    expect(ids(pausedSurveys)).toEqual([pausedSurvey]);
    expect(pausedSurveys.total).toBe(1);
    const drafts = await list(tenant, { status: 'DRAFT' });
    expect(ids(drafts)).toEqual([draftInterview]);
    expect((await list(tenant, { status: 'ACTIVE' })).total).toBe(0);
  });

  it('pages through 7 studies 3 at a time, each study exactly once', async () => {
    const tenant = await createTenant(service);
    const ids: string[] = [];
    for (let index = 0; index < 7; index++) ids.push(await createStudy(tenant, `Study ${index}`));
    const pages = await readAll(tenant, { size: '3' });
    expect(pages.map((page) => page.results.length)).toEqual([3, 3, 1]);
    expect(pages.map((page) => page.total)).toEqual([7, 7, 7]);
    expect(pages.map((page) => page.pageInfo.hasNextPage)).toEqual([true, true, false]);
    expect(pages.flatMap((page) => page.results.map((study) => study.studyId))).toEqual([...ids].reverse());
  });

  it('ends on a full last page without an empty extra page', async () => {
    const tenant = await createTenant(service);
    for (let index = 0; index < 6; index++) await createStudy(tenant, `Study ${index}`);
    const pages = await readAll(tenant, { size: '3' });
    expect(pages.map((page) => page.results.length)).toEqual([3, 3]);
  });

  it('sees every existing study exactly once while new ones are created between pages', async () => {
    const tenant = await createTenant(service);
    const existing: string[] = [];
    for (let index = 0; index < 7; index++) existing.push(await createStudy(tenant, `Study ${index}`));
    const added: string[] = [];
    const pages = await readAll(tenant, { size: '3' }, async () => {
      added.push(await createStudy(tenant, `Added ${added.length}`));
    });
    const seen = pages.flatMap((page) => page.results.map((study) => study.studyId));
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen.filter((studyId) => existing.includes(studyId))).toEqual([...existing].reverse());
    expect(added.length).toBeGreaterThan(0);
    // The total is exact at the moment of each page, new studies included.
    expect(pages.map((page) => page.total)).toEqual(pages.map((_page, index) => 7 + index));
  });

  it('pages a filtered list with cursors of that filter', async () => {
    const tenant = await createTenant(service);
    const surveys: string[] = [];
    for (let index = 0; index < 5; index++) {
      surveys.push(await createStudy(tenant, `Survey ${index}`, 'SURVEY'));
      await createStudy(tenant, `Interview ${index}`);
    }
    const pages = await readAll(tenant, { size: '2', studyType: 'SURVEY' });
    expect(pages.flatMap((page) => page.results.map((study) => study.studyId))).toEqual([...surveys].reverse());
    expect(pages.every((page) => page.total === 5)).toBe(true);
  });

  describe('size', () => {
    it('accepts 1 and 100 and defaults to 25', async () => {
      const tenant = await createTenant(service);
      for (let index = 0; index < 26; index++) await createStudy(tenant, `Study ${index}`);
      expect((await list(tenant)).results).toHaveLength(25);
      expect((await list(tenant, { size: '1' })).results).toHaveLength(1);
      const all = await list(tenant, { size: '100' });
      expect(all.results).toHaveLength(26);
      expect(all.pageInfo.hasNextPage).toBe(false);
    });

    it.each(['0', '101', '-1', '2.5', 'ten'])('refuses size=%s with 400 naming ["size"]', async (size) => {
      const tenant = await createTenant(service);
      const response = await call(service, 'GET', '/studies', { token: tenant.token, query: { size } });
      expect(response.statusCode).toBe(400);
      expect(response.json()).toEqual({ errors: [{ message: expect.any(String), path: ['size'] }] });
    });
  });

  describe('query validation', () => {
    it.each([
      ['status', { status: 'OPEN' }],
      ['studyType', { studyType: 'FOCUS_GROUP' }],
      ['colour', { colour: 'blue' }],
    ])('refuses a bad %s with 400 naming it', async (name, query) => {
      const tenant = await createTenant(service);
      const response = await call(service, 'GET', '/studies', { token: tenant.token, query });
      expect(response.statusCode).toBe(400);
      expect(response.json()).toEqual({ errors: [{ message: expect.any(String), path: [name] }] });
    });
  });

  describe('startCursor', () => {
    async function firstPage(tenant: Tenant, query: Record<string, string> = {}) {
      for (let index = 0; index < 3; index++) await createStudy(tenant, `Study ${index}`, index % 2 ? 'SURVEY' : 'INTERVIEWS');
      const page = await list(tenant, { size: '1', ...query });
      expect(page.pageInfo.hasNextPage).toBe(true);
      return page.pageInfo.endCursor;
    }

    async function expectCursorRefused(tenant: Tenant, query: Record<string, string>) {
      const response = await call(service, 'GET', '/studies', { token: tenant.token, query });
      expect(response.statusCode, query.startCursor).toBe(400);
      expect(response.json()).toEqual({ errors: [{ message: expect.any(String), path: ['startCursor'] }] });
    }

    it('refuses a tampered or truncated cursor with 400 naming ["startCursor"]', async () => {
      const tenant = await createTenant(service);
      const cursor = await firstPage(tenant);
      const flip = (text: string, at: number) => text.slice(0, at) + (text[at] === 'A' ? 'B' : 'A') + text.slice(at + 1);
      // A cursor is sealed (AES-256-GCM, src/http/cursor.ts): any change to any part of it is refused.
      const forged = Buffer.from(JSON.stringify(['stu_ZZZZZZZZZZZZZZZZZZZZZZZZZZ'])).toString('base64url');
      for (const startCursor of [
        flip(cursor, 0),
        flip(cursor, cursor.length >> 1),
        flip(cursor, cursor.length - 1),
        cursor.slice(0, -1),
        cursor.slice(0, cursor.length >> 1),
        `${cursor}A`,
        forged,
        `${forged}.${cursor}`,
        'not-a-cursor',
      ]) {
        await expectCursorRefused(tenant, { startCursor });
      }
    });

    it('refuses an empty cursor (400 naming ["startCursor"])', async () => {
      const tenant = await createTenant(service);
      await expectCursorRefused(tenant, { startCursor: '' });
    });

    it('refuses a cursor of another filter or of another list', async () => {
      const tenant = await createTenant(service);
      const unfiltered = await firstPage(tenant);
      await expectCursorRefused(tenant, { startCursor: unfiltered, studyType: 'INTERVIEWS' });
      await expectCursorRefused(tenant, { startCursor: unfiltered, status: 'DRAFT' });
      const filtered = (await list(tenant, { size: '1', status: 'DRAFT' })).pageInfo.endCursor;
      await expectCursorRefused(tenant, { startCursor: filtered });
      await expectCursorRefused(tenant, { startCursor: filtered, status: 'PAUSED' });

      const other = await createTenant(service);
      const study = await createStudy(other, 'Template source');
      for (let index = 0; index < 2; index++) {
        const made = await call(service, 'POST', '/study-templates', { token: other.token, body: { studyId: study, name: `T${index}` } });
        expect(made.statusCode, made.body).toBe(201);
      }
      const templates = await call(service, 'GET', '/study-templates', { token: other.token, query: { size: '1' } });
      await expectCursorRefused(other, { startCursor: templates.json().pageInfo.endCursor });
    });

    it('accepts the size changing between pages', async () => {
      const tenant = await createTenant(service);
      const cursor = await firstPage(tenant);
      const rest = await list(tenant, { startCursor: cursor, size: '10' });
      expect(rest.results).toHaveLength(2);
      expect(rest.pageInfo.hasNextPage).toBe(false);
    });
  });
});

describeSecurity('GET /studies', () => service, {
  method: 'GET',
  right: 'studies:read',
  addressesResource: false,
  request: async () => ({ url: '/studies' }),
});
