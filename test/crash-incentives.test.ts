import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operatorToken, storeKind } from './harness.js';
import { FakeProvider } from './http-provider.js';
import { type RunningServer, startServer } from './processes.js';
import { apiOf, type CrashStorage, createCrashStorage, createWorkspaceWithCli, killHard, stopGracefully, until } from './crash-support.js';

/**
 * kill -9 of a real server process while incentive orders are in flight at the provider, and a
 * restart on the same storage: no incentive is ordered twice. The provider runs in the test's
 * process (test/http-provider.ts), so what it received survives the kill; the server reaches it
 * through an HTTP adapter installed in place of the sandbox (test/server-with-http-provider.ts).
 *
 * What the design guarantees: the incentive is committed (PENDING at the provider) before the
 * provider is called, and every call for it carries the same idempotency key
 * (`workspaceId:incentiveId`). An order whose answer the kill lost is therefore asked again after
 * the restart, with the same key, and the provider answers its first order: at least once at the
 * provider's door, exactly one order per incentive, deduplicated by the provider as the adapter
 * contract (src/providers/provider.ts) requires.
 */

interface IncentiveView {
  incentiveId: string;
  status: string;
  participantId: string;
}

const CONFIRMED = 4;
const IN_FLIGHT = 8;

describe(`kill -9 of the server mid-incentive-order, then a restart (${storeKind} store)`, () => {
  let storage: CrashStorage;
  let provider: FakeProvider;
  let workspace: { workspaceId: string; token: string };
  const servers: RunningServer[] = [];
  const serverEnv = () => ({ ...storage.env, TEST_PROVIDER_URL: provider.url, TEST_HELPERS: '1', TEST_HELPERS_TOKEN: operatorToken, JOBS: 'on', JOB_POLL_SECONDS: '0.2', RATE_LIMIT_MAX: '100000' });
  const start = async () => {
    const server = await startServer(serverEnv(), 'warn', 'test/server-with-http-provider.ts');
    servers.push(server);
    return server;
  };

  beforeAll(async () => {
    storage = await createCrashStorage('recruit-ops-crash-incentives');
    provider = await FakeProvider.start();
    workspace = await createWorkspaceWithCli(storage, 'Crash incentives');
  }, 120_000);
  afterAll(async () => {
    for (const server of servers) if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
    await Promise.all(servers.map((server) => server.exited));
    await provider?.close();
    await storage?.dispose();
  });

  it('orders each incentive exactly once at the provider: the lost answers are asked again with the same key', { timeout: 180_000 }, async () => {
    const first = await start();
    let api = apiOf(first, workspace.token);
    const study = await api<{ studyId: string }>('POST', '/studies', { body: { studyType: 'INTERVIEWS', recruitmentStrategy: 'IN_SERVICE', studyPlan: { name: 'Paid interviews' } } });
    expect(study.status, study.text).toBe(201);
    const personIds: string[] = [];
    for (let index = 0; index < CONFIRMED + IN_FLIGHT; index++) {
      const person = await api<{ personId: string }>('POST', '/people', { body: { email: `paid-${index}@crash.example`, firstName: `Paid${index}` } });
      expect(person.status, person.text).toBe(201);
      personIds.push(person.body.personId);
    }
    const added = await api<{ results: { participantId: string }[] }>('POST', `/studies/${study.body.studyId}/participants`, { body: { personIds } });
    expect(added.status, added.text).toBe(200);
    const participantIds = added.body.results.map((participant) => participant.participantId);
    const send = (participantId: string, key: string) =>
      api<IncentiveView>('POST', '/incentives', { body: { participantId, type: 'MONEY_OR_GIFT_CARD', amountCents: 5000 }, headers: { 'idempotency-key': key } });

    // Ordered and confirmed before the kill.
    const confirmed: string[] = [];
    for (let index = 0; index < CONFIRMED; index++) {
      const sent = await send(participantIds[index]!, `confirmed-${index}`);
      expect(sent.status, sent.text).toBe(201);
      expect(sent.body.status).toBe('UNCLAIMED');
      confirmed.push(sent.body.incentiveId);
    }
    expect(provider.orders.size).toBe(CONFIRMED);

    // In flight: the provider has placed each order and holds its answer back; then the kill.
    provider.hold = true;
    const inFlightKeys = participantIds.slice(CONFIRMED).map((_, index) => `in-flight-${index}`);
    const requests = participantIds.slice(CONFIRMED).map((participantId, index) => send(participantId, inFlightKeys[index]!).then(() => 'answered', () => 'connection lost'));
    await until(first, 'every in-flight order reached the provider', () => provider.receipts.length === CONFIRMED + IN_FLIGHT);
    await killHard(first);
    expect(await Promise.all(requests)).toEqual(inFlightKeys.map(() => 'connection lost'));
    provider.hold = false;
    const inFlight = provider.receipts.slice(CONFIRMED).map((receipt) => receipt.incentiveId);
    expect(new Set(inFlight).size).toBe(IN_FLIGHT);
    expect(provider.receipts.slice(CONFIRMED).every((receipt) => !receipt.answered)).toBe(true);

    const second = await start();
    api = apiOf(second, workspace.token);
    // Past the first retry of the provider work (30 s after sending), by the service's clock.
    // The clock is the operator's (TEST_HELPERS_TOKEN), no workspace token's.
    const moved = await apiOf(second, operatorToken)('POST', '/test-helpers/clock', { body: { now: new Date(Date.now() + 10 * 60_000).toISOString() } });
    expect(moved.status, moved.text).toBe(200);

    // The restarted server's background work orders the unconfirmed ones again.
    await until(second, 'the provider work ordered the in-flight incentives again', () => inFlight.every((incentiveId) => provider.receiptsOf(incentiveId).some((receipt) => receipt.answered)));
    const receiptsAfterWork = provider.receipts.length;

    // The client retries its lost requests with their keys. A key stays reserved by the killed
    // request for its lease (60 s of real time: the idempotency layer does not follow the test
    // clock), answered 409 meanwhile; then each retry answers the incentive recorded before the
    // kill: no second incentive, and no order from the retry itself.
    const pending = new Map(inFlightKeys.map((key, index) => [key, participantIds[CONFIRMED + index]!]));
    const retriedIds: string[] = [];
    await until(
      second,
      'the lost requests were retried',
      async () => {
        for (const [key, participantId] of pending) {
          const retried = await send(participantId, key);
          if (retried.status === 409) {
            expect(retried.text).toContain('still in progress');
            continue;
          }
          expect(retried.status, retried.text).toBe(201);
          expect(retried.body.status).toBe('UNCLAIMED');
          retriedIds.push(retried.body.incentiveId);
          pending.delete(key);
        }
        return pending.size === 0;
      },
      { everyMs: 2000 },
    );
    expect(new Set(retriedIds)).toEqual(new Set(inFlight));
    expect(provider.receipts.length).toBe(receiptsAfterWork);
    await stopGracefully(second);

    // At the provider: one order per incentive; the in-flight ones were asked twice, with one key.
    expect(provider.orders.size).toBe(CONFIRMED + IN_FLIGHT);
    expect(new Set([...provider.orders.values()].map((order) => order.incentiveId))).toEqual(new Set([...confirmed, ...inFlight]));
    for (const incentiveId of confirmed) expect(provider.receiptsOf(incentiveId)).toHaveLength(1);
    for (const incentiveId of inFlight) {
      const receipts = provider.receiptsOf(incentiveId);
      expect(receipts.map((receipt) => receipt.answered)).toEqual([false, true]);
      expect(new Set(receipts.map((receipt) => receipt.key))).toEqual(new Set([`${workspace.workspaceId}:${incentiveId}`]));
    }
    expect(provider.receipts.filter((receipt) => receipt.operation !== 'orders')).toEqual([]);

    // In the store: exactly these incentives, each ORDERED with the provider's one order.
    const database = await storage.open();
    try {
      const rows = await database.db
        .selectFrom('incentives')
        .select(['incentive_id', 'status', 'provider_state', 'provider_reference', 'participant_id', 'idempotency_key'])
        .where('workspace_id', '=', workspace.workspaceId)
        .execute();
      expect(rows).toHaveLength(CONFIRMED + IN_FLIGHT);
      for (const row of rows) {
        const order = provider.orders.get(`${workspace.workspaceId}:${row.incentive_id}`);
        expect(row, JSON.stringify(row)).toMatchObject({ status: 'UNCLAIMED', provider_state: 'ORDERED', provider_reference: order?.orderId });
      }
      expect(new Set(rows.map((row) => row.participant_id)).size).toBe(CONFIRMED + IN_FLIGHT);
    } finally {
      await database.close();
    }
  });
});
