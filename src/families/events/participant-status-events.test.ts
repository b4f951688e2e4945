import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { call, createTenant, startTestService, type TestService } from '../../../test/harness.js';
import { describeSecurity } from '../../../test/security.js';
import { createStudy, EVENT_TEST_TIMEOUT_MS, insertParticipant, insertParticipantEvents, poll, pollUntil } from './test-support.js';

vi.setConfig({ testTimeout: EVENT_TEST_TIMEOUT_MS });

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service.stop());

const stream = '/participant-status-events';

describe('GET /participant-status-events', () => {
  it("gives every change of a participant's status, approval status and screener state, oldest first", async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(service, tenant);
    const participant = await insertParticipant(service, tenant, studyId);
    const ids = await insertParticipantEvents(service.deps.db, tenant.workspaceId, participant, [
      { field: 'status', from: 'NOT_STARTED', to: 'INVITED' },
      { field: 'screenerState', from: 'NOT_SENT', to: 'SCREENER_SENT' },
      { field: 'approvalStatus', from: 'PENDING_REVIEW', to: 'APPROVED' },
    ]);
    const { events } = await pollUntil(service, tenant.token, stream, { count: 3 });
    expect(events).toEqual([
      { eventId: ids[0], occurredAt: expect.any(String), ...participant, field: 'status', from: 'NOT_STARTED', to: 'INVITED', actor: { kind: null, userId: null } },
      { eventId: ids[1], occurredAt: expect.any(String), ...participant, field: 'screenerState', from: 'NOT_SENT', to: 'SCREENER_SENT', actor: { kind: null, userId: null } },
      { eventId: ids[2], occurredAt: expect.any(String), ...participant, field: 'approvalStatus', from: 'PENDING_REVIEW', to: 'APPROVED', actor: { kind: null, userId: null } },
    ]);
  });

  it('pages 3 at a time: each event once, none missed, also while events are written between pages; filters by studyId', async () => {
    const tenant = await createTenant(service);
    const [first, second] = [await createStudy(service, tenant, 'First'), await createStudy(service, tenant, 'Second')];
    const inFirst = await insertParticipant(service, tenant, first);
    const inSecond = await insertParticipant(service, tenant, second);
    const written: string[] = [];
    for (let round = 0; round < 4; round++) {
      written.push(...(await insertParticipantEvents(service.deps.db, tenant.workspaceId, inFirst, [{ field: 'status', from: null, to: `R${round}` }])));
      written.push(...(await insertParticipantEvents(service.deps.db, tenant.workspaceId, inSecond, [{ field: 'status', from: null, to: `R${round}` }])));
    }
    const { events } = await pollUntil(service, tenant.token, stream, {
      count: 10,
      size: 3,
      betweenPages: async (page) => {
        if (page === 1) written.push(...(await insertParticipantEvents(service.deps.db, tenant.workspaceId, inFirst, [{ field: 'status', from: null, to: 'LATE1' }, { field: 'status', from: null, to: 'LATE2' }])));
      },
    });
    expect(events.map((event) => event.eventId)).toEqual(written);

    const filtered = await pollUntil(service, tenant.token, stream, { count: 6, size: 4, query: { studyId: first } });
    expect(filtered.events.map((event) => event.to)).toEqual(['R0', 'R1', 'R2', 'R3', 'LATE1', 'LATE2']);
    expect(filtered.events.every((event) => event.studyId === first && event.participantId === inFirst.participantId)).toBe(true);
  });

  it("leaves out a deleted person's events at once", async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(service, tenant);
    const kept = await insertParticipant(service, tenant, studyId);
    const gone = await insertParticipant(service, tenant, studyId);
    await insertParticipantEvents(service.deps.db, tenant.workspaceId, gone, [{ field: 'status', from: 'NOT_STARTED', to: 'INVITED' }]);
    const [keptEvent] = await insertParticipantEvents(service.deps.db, tenant.workspaceId, kept, [{ field: 'status', from: 'NOT_STARTED', to: 'INVITED' }]);
    await pollUntil(service, tenant.token, stream, { count: 2 });
    expect((await call(service, 'DELETE', `/people/${gone.personId}`, { token: tenant.token })).statusCode).toBe(200);
    expect((await poll(service, tenant.token, stream)).results.map((event) => event.eventId)).toEqual([keptEvent]);
  });

  it("answers an empty page with a usable endCursor, and never shows another workspace's events", async () => {
    const tenant = await createTenant(service);
    const stranger = await createTenant(service, 'Other workspace');
    const studyId = await createStudy(service, tenant);
    const participant = await insertParticipant(service, tenant, studyId);
    const empty = await poll(service, tenant.token, stream);
    expect(empty.results).toEqual([]);
    expect(empty.pageInfo.hasNextPage).toBe(false);
    const [eventId] = await insertParticipantEvents(service.deps.db, tenant.workspaceId, participant, [{ field: 'status', from: 'NOT_STARTED', to: 'INVITED' }]);
    const { events, endCursor } = await pollUntil(service, tenant.token, stream, { count: 1, startCursor: empty.pageInfo.endCursor });
    expect(events.map((event) => event.eventId)).toEqual([eventId]);
    const idle = await poll(service, tenant.token, stream, { startCursor: endCursor });
    expect(idle.results).toEqual([]);
    expect(idle.pageInfo.endCursor).toBe(endCursor);
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
    ['an unknown parameter', { participantId: 'ptc_x' }, ['participantId']],
  ])('refuses %s with 400', async (_case, query, path) => {
    const tenant = await createTenant(service);
    const response = await call(service, 'GET', stream, { token: tenant.token, query });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ errors: [{ message: expect.any(String), path }] });
  });

  it("refuses the study stream's cursor", async () => {
    const tenant = await createTenant(service);
    const studyCursor = (await poll(service, tenant.token, '/study-status-events')).pageInfo.endCursor;
    const response = await call(service, 'GET', stream, { token: tenant.token, query: { startCursor: studyCursor } });
    expect(response.statusCode).toBe(400);
    expect(response.json().errors[0].path).toEqual(['startCursor']);
  });
});

describeSecurity('GET /participant-status-events', () => service, {
  method: 'GET',
  right: 'events:read',
  addressesResource: false,
  request: async () => ({ url: stream }),
});

describeSecurity('GET /participant-status-events?studyId', () => service, {
  method: 'GET',
  right: 'events:read',
  addressesResource: true,
  request: async (tenant) => ({ url: stream, query: { studyId: await createStudy(service, tenant) } }),
});
