import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { call, createTenant, startTestService, type TestService } from '../../../test/harness.js';
import { describeSecurity } from '../../../test/security.js';
import { createStudy, EVENT_TEST_TIMEOUT_MS, moveStudy, poll, pollUntil } from './test-support.js';

vi.setConfig({ testTimeout: EVENT_TEST_TIMEOUT_MS });

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service.stop());

const stream = '/study-status-events';

describe('GET /study-status-events', () => {
  it('gives every status change of the studies, oldest first, made through the study routes', async () => {
    const tenant = await createTenant(service);
    const before = Date.now();
    const studyId = await createStudy(service, tenant);
    await moveStudy(service, tenant, studyId, 'ACTIVE');
    await moveStudy(service, tenant, studyId, 'PAUSED');
    await moveStudy(service, tenant, studyId, 'CLOSED');
    const { events } = await pollUntil(service, tenant.token, stream, { count: 4 });
    expect(events).toEqual(
      [
        [null, 'DRAFT'],
        ['DRAFT', 'ACTIVE'],
        ['ACTIVE', 'PAUSED'],
        ['PAUSED', 'CLOSED'],
      ].map(([from, to]) => ({ eventId: expect.stringMatching(/^\d+$/), occurredAt: expect.any(String), studyId, field: 'status', from, to, actor: { kind: 'USER', userId: tenant.userId } })),
    );
    for (const event of events) expect(Date.parse(event.occurredAt)).toBeGreaterThanOrEqual(before - 1000);
    expect(new Set(events.map((event) => event.eventId)).size).toBe(4);
  });

  it('pages 2 at a time: each event once, none missed, also while events are written between pages', async () => {
    const tenant = await createTenant(service);
    const studies = [await createStudy(service, tenant, 'One'), await createStudy(service, tenant, 'Two'), await createStudy(service, tenant, 'Three')];
    for (const studyId of studies) await moveStudy(service, tenant, studyId, 'ACTIVE');
    const late = await createStudy(service, tenant, 'Late');
    const { events, pages } = await pollUntil(service, tenant.token, stream, {
      count: 8,
      size: 2,
      betweenPages: async (page) => {
        if (page === 1) await moveStudy(service, tenant, late, 'ACTIVE');
      },
    });
    // Commit order: each route call commits before the next one starts.
    expect(events.map((event) => `${event.studyId} ${event.to}`)).toEqual([
      ...studies.map((studyId) => `${studyId} DRAFT`),
      ...studies.map((studyId) => `${studyId} ACTIVE`),
      `${late} DRAFT`,
      `${late} ACTIVE`,
    ]);
    expect(new Set(events.map((event) => event.eventId)).size).toBe(8);
    expect(pages).toBeGreaterThanOrEqual(4);
  });

  it('answers an empty page with an endCursor to poll from: later events arrive from it, exactly once', async () => {
    const tenant = await createTenant(service);
    const empty = await poll(service, tenant.token, stream);
    expect(empty.results).toEqual([]);
    expect(empty.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: false });
    expect(empty.pageInfo.endCursor).not.toBe('');

    const studyId = await createStudy(service, tenant);
    const first = await pollUntil(service, tenant.token, stream, { count: 1, startCursor: empty.pageInfo.endCursor });
    expect(first.events.map((event) => event.to)).toEqual(['DRAFT']);

    // Nothing new: the page is empty and its endCursor is the cursor it was asked with.
    const idle = await poll(service, tenant.token, stream, { startCursor: first.endCursor });
    expect(idle).toEqual({ results: [], pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: first.endCursor, endCursor: first.endCursor } });

    await moveStudy(service, tenant, studyId, 'ACTIVE');
    const second = await pollUntil(service, tenant.token, stream, { count: 1, startCursor: idle.pageInfo.endCursor });
    expect(second.events.map((event) => event.to)).toEqual(['ACTIVE']);
  });

  it('filters by studyId; the cursor belongs to the filter it was read with', async () => {
    const tenant = await createTenant(service);
    const mine = await createStudy(service, tenant, 'Mine');
    const other = await createStudy(service, tenant, 'Other');
    await moveStudy(service, tenant, mine, 'ACTIVE');
    await moveStudy(service, tenant, other, 'ACTIVE');
    const filtered = await pollUntil(service, tenant.token, stream, { count: 2, query: { studyId: mine } });
    expect(filtered.events.map((event) => [event.studyId, event.to])).toEqual([
      [mine, 'DRAFT'],
      [mine, 'ACTIVE'],
    ]);
    const unfiltered = await call(service, 'GET', stream, { token: tenant.token, query: { startCursor: filtered.endCursor } });
    expect(unfiltered.statusCode).toBe(400);
    expect(unfiltered.json()).toEqual({ errors: [{ message: expect.any(String), path: ['startCursor'] }] });
    const otherFilter = await call(service, 'GET', stream, { token: tenant.token, query: { startCursor: filtered.endCursor, studyId: other } });
    expect(otherFilter.statusCode).toBe(400);
  });

  it("never shows another workspace's events", async () => {
    const tenant = await createTenant(service);
    const stranger = await createTenant(service, 'Other workspace');
    const studyId = await createStudy(service, tenant);
    await moveStudy(service, tenant, studyId, 'ACTIVE');
    await pollUntil(service, tenant.token, stream, { count: 2 });
    // Everything the owner sees has settled, so the stranger's empty page is not "not yet".
    expect((await poll(service, stranger.token, stream)).results).toEqual([]);
  });

  it("answers 404 naming studyId for an unknown study, or another workspace's", async () => {
    const tenant = await createTenant(service);
    const stranger = await createTenant(service, 'Other workspace');
    const theirs = await createStudy(service, stranger);
    for (const studyId of ['stu_nope', theirs]) {
      const response = await call(service, 'GET', stream, { token: tenant.token, query: { studyId } });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({ errors: [{ message: 'Study not found', path: ['studyId'] }] });
    }
  });

  it.each([
    ['size=0', { size: '0' }, ['size']],
    ['size=101', { size: '101' }, ['size']],
    ['a cursor that is not one', { startCursor: 'nope' }, ['startCursor']],
    ['an unknown parameter', { since: '2026-01-01' }, ['since']],
  ])('refuses %s with 400', async (_case, query, path) => {
    const tenant = await createTenant(service);
    const response = await call(service, 'GET', stream, { token: tenant.token, query });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ errors: [{ message: expect.any(String), path }] });
  });

  it("refuses a tampered cursor and the other stream's cursor", async () => {
    const tenant = await createTenant(service);
    await createStudy(service, tenant);
    const { endCursor } = await pollUntil(service, tenant.token, stream, { count: 1 });
    const [payload, signature] = endCursor.split('.');
    const forged = `${Buffer.from(JSON.stringify(['0', '0'])).toString('base64url')}.${signature}`;
    const participantCursor = (await poll(service, tenant.token, '/participant-status-events')).pageInfo.endCursor;
    for (const startCursor of [`${payload}x.${signature}`, forged, participantCursor]) {
      const response = await call(service, 'GET', stream, { token: tenant.token, query: { startCursor } });
      expect(response.statusCode, startCursor).toBe(400);
    }
  });

  it('defaults size to 25 and accepts 100', async () => {
    const tenant = await createTenant(service);
    for (let index = 0; index < 13; index++) {
      const studyId = await createStudy(service, tenant, `Study ${index}`);
      await moveStudy(service, tenant, studyId, 'ACTIVE');
    }
    await pollUntil(service, tenant.token, stream, { count: 26, size: 100 });
    expect((await poll(service, tenant.token, stream)).results).toHaveLength(25);
    expect((await poll(service, tenant.token, stream, { size: '100' })).results).toHaveLength(26);
  });
});

describeSecurity('GET /study-status-events', () => service, {
  method: 'GET',
  right: 'events:read',
  addressesResource: false,
  request: async () => ({ url: stream }),
});

describeSecurity('GET /study-status-events?studyId', () => service, {
  method: 'GET',
  right: 'events:read',
  addressesResource: true,
  request: async (tenant) => ({ url: stream, query: { studyId: await createStudy(service, tenant) } }),
});
