import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TremendousFake } from './fakes/tremendous-fake.js';
import { operatorToken, storeKind } from './harness.js';
import { type RunningServer, startServer } from './processes.js';
import { apiOf, type CrashStorage, createCrashStorage, createWorkspaceWithCli, killHard, stopGracefully, until } from './crash-support.js';

/**
 * The provider suite's kill -9 case for Tremendous: the compiled server (dist/server.js) orders
 * through the Tremendous adapter from a workspace's own account, reaching the fake on loopback
 * (TREMENDOUS_API_URL). The fake creates each order and holds the answer; the server is killed;
 * a restarted server's background work orders again with the same external_id, and Tremendous
 * (the fake, as the documentation says) answers the first order: no double payment.
 */
const CONFIRMED = 2;
const IN_FLIGHT = 6;

describe(`kill -9 of the compiled server between a Tremendous order and its record (${storeKind} store)`, () => {
  let storage: CrashStorage;
  let fake: TremendousFake;
  let workspace: { workspaceId: string; token: string };
  const servers: RunningServer[] = [];
  const start = async () => {
    const server = await startServer(
      { ...storage.env, TREMENDOUS_API_URL: fake.url, TEST_HELPERS: '1', TEST_HELPERS_TOKEN: operatorToken, JOBS: 'on', JOB_POLL_SECONDS: '0.2', RATE_LIMIT_MAX: '100000' },
      'warn',
      'dist/server.js',
    );
    servers.push(server);
    return server;
  };

  beforeAll(async () => {
    storage = await createCrashStorage('recruit-ops-crash-tremendous');
    fake = await TremendousFake.start();
    workspace = await createWorkspaceWithCli(storage, 'Crash Tremendous');
  }, 120_000);
  afterAll(async () => {
    for (const server of servers) if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
    await Promise.all(servers.map((server) => server.exited));
    await fake?.close();
    await storage?.dispose();
  });

  it('orders each incentive once at Tremendous: the lost answers are asked again with the same external_id', { timeout: 180_000 }, async () => {
    const first = await start();
    let api = apiOf(first, workspace.token);
    const configured = await api('PUT', '/incentive-provider', { body: { provider: 'tremendous', credentials: { apiKey: fake.apiKey, campaignId: 'CAMPAIGN1', webhookSecret: 'crash-webhook-key' } } });
    expect(configured.status, configured.text).toBe(200);
    const study = await api<{ studyId: string }>('POST', '/studies', { body: { studyType: 'INTERVIEWS', recruitmentStrategy: 'IN_SERVICE', studyPlan: { name: 'Paid interviews' } } });
    const personIds: string[] = [];
    for (let index = 0; index < CONFIRMED + IN_FLIGHT; index++) {
      const person = await api<{ personId: string }>('POST', '/people', { body: { email: `paid-${index}@crash.example`, firstName: `Paid${index}` } });
      personIds.push(person.body.personId);
    }
    const added = await api<{ results: { participantId: string }[] }>('POST', `/studies/${study.body.studyId}/participants`, { body: { personIds } });
    const participantIds = added.body.results.map((participant) => participant.participantId);
    const send = (participantId: string) => api<{ incentiveId: string; status: string }>('POST', '/incentives', { body: { participantId, type: 'MONEY_OR_GIFT_CARD', amountCents: 5000 } });

    for (let index = 0; index < CONFIRMED; index++) {
      const sent = await send(participantIds[index]!);
      expect(sent.status, sent.text).toBe(201);
    }
    fake.hold = true;
    const requests = participantIds.slice(CONFIRMED).map((participantId) => send(participantId).then(() => 'answered', () => 'connection lost'));
    await until(first, 'every in-flight order was created at the fake', () => fake.createdPerExternalId.size === CONFIRMED + IN_FLIGHT);
    await killHard(first);
    expect(await Promise.all(requests)).toEqual(participantIds.slice(CONFIRMED).map(() => 'connection lost'));
    fake.hold = false;
    const inFlight = fake.receipts.filter((receipt) => receipt.operation === 'order').slice(CONFIRMED).map((receipt) => receipt.externalId!);

    const second = await start();
    api = apiOf(second, workspace.token);
    const moved = await apiOf(second, operatorToken)('POST', '/test-helpers/clock', { body: { now: new Date(Date.now() + 10 * 60_000).toISOString() } });
    expect(moved.status, moved.text).toBe(200);
    await until(second, 'the provider work ordered the in-flight incentives again', () => inFlight.every((externalId) => fake.receiptsOf(externalId).some((receipt) => receipt.status === 201)));
    await stopGracefully(second);

    // At Tremendous (the fake): one order per incentive, the in-flight ones asked twice with one external_id.
    expect(fake.doubleOrders()).toBe(0);
    expect(fake.createdPerExternalId.size).toBe(CONFIRMED + IN_FLIGHT);
    for (const externalId of inFlight) expect(fake.receiptsOf(externalId).map((receipt) => receipt.status)).toEqual([null, 201]);

    const database = await storage.open();
    try {
      const rows = await database.db.selectFrom('incentives').select(['incentive_id', 'status', 'provider', 'provider_state', 'provider_reference']).where('workspace_id', '=', workspace.workspaceId).execute();
      expect(rows).toHaveLength(CONFIRMED + IN_FLIGHT);
      for (const row of rows) {
        expect(row, JSON.stringify(row)).toMatchObject({ status: 'UNCLAIMED', provider: 'tremendous', provider_state: 'ORDERED', provider_reference: fake.orderOf(row.incentive_id)?.rewards[0]?.id });
      }
    } finally {
      await database.close();
    }
  });
});
