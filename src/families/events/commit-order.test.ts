import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTenant, startTestService, storeKind, type Tenant, type TestService } from '../../../test/harness.js';
import { createStudy, EVENT_TEST_TIMEOUT_MS, insertParticipant, insertParticipantEvents, moveStudy, poll, pollUntil, type Stream } from './test-support.js';

vi.setConfig({ testTimeout: EVENT_TEST_TIMEOUT_MS });

/**
 * The exactly-once proof: an event written by a transaction that stays open while later
 * transactions commit theirs must still reach a poller, once, after it commits. A poller that
 * read "every committed event after my cursor" would take the later events, move its cursor past
 * the slow one's position, and skip it for good.
 *
 * Only PostgreSQL runs transactions side by side. The embedded store runs one transaction at a
 * time on its single connection (an open transaction holds every other request back), so no
 * event can commit behind another there and this test has nothing to prove; it is skipped.
 */
describe.skipIf(storeKind === 'embedded')('event polling while a slow transaction is open (PostgreSQL)', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService();
  });
  afterAll(async () => service.stop());

  /** Runs `write` in a transaction that stays open until the returned `commit` is called. */
  async function openTransaction(write: (transaction: TestService['deps']['db']) => Promise<string[]>) {
    let written!: (ids: string[]) => void;
    let commit!: () => void;
    const ids = new Promise<string[]>((resolve) => (written = resolve));
    const released = new Promise<void>((resolve) => (commit = resolve));
    const done = service.deps.db.transaction().execute(async (transaction) => {
      written(await write(transaction));
      await released;
    });
    return { ids: await ids, commit: async () => (commit(), await done) };
  }

  const cases: [Stream, (tenant: Tenant) => Promise<{ slow: (db: TestService['deps']['db']) => Promise<string[]>; later: () => Promise<void>; laterCount: number }>][] = [
    [
      '/participant-status-events',
      async (tenant) => {
        const studyId = await createStudy(service, tenant);
        const participant = await insertParticipant(service, tenant, studyId);
        return {
          slow: (db) => insertParticipantEvents(db, tenant.workspaceId, participant, [{ field: 'status', from: 'NOT_STARTED', to: 'INVITED' }]),
          later: async () => {
            await insertParticipantEvents(service.deps.db, tenant.workspaceId, participant, [{ field: 'screenerState', from: 'NOT_SENT', to: 'SCREENER_SENT' }]);
            await insertParticipantEvents(service.deps.db, tenant.workspaceId, participant, [{ field: 'approvalStatus', from: 'PENDING_REVIEW', to: 'APPROVED' }]);
          },
          laterCount: 2,
        };
      },
    ],
    [
      '/study-status-events',
      async (tenant) => {
        const [slowStudy, otherStudy] = [await createStudy(service, tenant, 'Slow'), await createStudy(service, tenant, 'Other')];
        return {
          // A status change that takes its time to commit, as a slow request's would.
          slow: async (db) => {
            const row = await db
              .insertInto('study_status_events')
              .values({ workspace_id: tenant.workspaceId, study_id: slowStudy, from_status: 'DRAFT', to_status: 'PAUSED', user_id: tenant.userId, occurred_at: new Date().toISOString() })
              .returning('event_id')
              .executeTakeFirstOrThrow();
            return [String(row.event_id)];
          },
          later: async () => {
            await moveStudy(service, tenant, otherStudy, 'ACTIVE');
            await moveStudy(service, tenant, otherStudy, 'PAUSED');
          },
          laterCount: 2,
        };
      },
    ],
  ];

  it.each(cases)('%s: the slow transaction\'s event is not passed over; it arrives after its commit, and every event exactly once', async (stream, setUp) => {
    const tenant = await createTenant(service);
    const { slow, later, laterCount } = await setUp(tenant);
    // Everything made while setting up has settled: the stream's position from here on.
    const settled = await pollUntil(service, tenant.token, stream, { count: stream === '/study-status-events' ? 2 : 0 });

    const open = await openTransaction(slow);
    let whileOpen;
    try {
      await later();
      // The later events are committed, but a transaction older than them is still running: the
      // poller must not take them yet (taking them would move its cursor past the slow event).
      whileOpen = await poll(service, tenant.token, stream, { startCursor: settled.endCursor });
    } finally {
      await open.commit();
    }
    expect(whileOpen.results).toEqual([]);
    expect(whileOpen.pageInfo.endCursor).toBe(settled.endCursor);

    const after = await pollUntil(service, tenant.token, stream, { count: 1 + laterCount, startCursor: whileOpen.pageInfo.endCursor, size: 1 });
    const ids = after.events.map((event) => event.eventId);
    expect(ids).toHaveLength(1 + laterCount);
    expect(new Set(ids).size).toBe(ids.length);
    // Commit order puts the slow transaction first: its id was assigned first.
    expect(ids[0]).toBe(open.ids[0]);
    // And nothing more arrives: every event came exactly once.
    expect((await poll(service, tenant.token, stream, { startCursor: after.endCursor })).results).toEqual([]);
  });
});
