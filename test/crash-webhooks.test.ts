import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeKind } from './harness.js';
import { type RunningServer, startServer } from './processes.js';
import { apiOf, type CrashStorage, createCrashStorage, createWorkspaceWithCli, killHard, stopGracefully, until } from './crash-support.js';
import { WebhookReceiver } from './webhook-receiver.js';

/**
 * kill -9 of a real server process while webhook deliveries are in flight (sent, unanswered) and
 * more are queued, then a second process on the same storage: every message reaches the receiver.
 * A claim holds a delivery for twice the attempt timeout and 10 s (here 2 s: 14 s); a delivery
 * whose process died comes due again when that lease ends, and the queued ones go out at once.
 */
const STUDIES = 40;
const TIMEOUT_MS = 2_000;

describe(`kill -9 of the server with webhook deliveries in flight, then a restart (${storeKind} store)`, () => {
  let storage: CrashStorage;
  let receiver: WebhookReceiver;
  let workspace: { workspaceId: string; token: string };
  const servers: RunningServer[] = [];
  const start = async () => {
    const server = await startServer({
      ...storage.env,
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'on',
      WEBHOOK_ALLOW_HTTP: 'on',
      WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
      RATE_LIMIT_MAX: '100000',
    });
    servers.push(server);
    return server;
  };

  beforeAll(async () => {
    storage = await createCrashStorage('recruit-ops-crash-webhooks');
    receiver = await WebhookReceiver.start();
    workspace = await createWorkspaceWithCli(storage, 'Crash webhooks');
  }, 120_000);
  afterAll(async () => {
    for (const server of servers) if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
    await Promise.all(servers.map((server) => server.exited));
    await receiver?.close();
    await storage?.dispose();
  });

  it('delivers every message after the restart: the unanswered ones again, the queued ones for the first time', { timeout: 120_000 }, async () => {
    // The receiver takes the first deliveries and does not answer them before the kill.
    receiver.answer = () => ({ status: 200, delayMs: 60_000 });
    const first = await start();
    let api = apiOf(first, workspace.token);
    const endpoint = await api('POST', '/webhook-endpoints', { body: { url: receiver.url() } });
    expect(endpoint.status, endpoint.text).toBe(201);
    for (let index = 0; index < STUDIES; index++) {
      const study = await api('POST', '/studies', { body: { studyType: 'INTERVIEWS', recruitmentStrategy: 'IN_SERVICE', studyPlan: { name: `Study ${index}` } } });
      expect(study.status, study.text).toBe(201);
    }
    await until(first, 'the first deliveries to arrive', () => receiver.received.length >= 8);
    await killHard(first);
    const unanswered = new Set(receiver.received.map((delivery) => String(delivery.headers['webhook-id'])));
    expect(unanswered.size).toBeGreaterThanOrEqual(8);
    expect(unanswered.size).toBeLessThan(STUDIES);

    receiver.answer = () => ({ status: 200 });
    const second = await start();
    api = apiOf(second, workspace.token);
    const messages = await api<{ results: { messageId: string }[]; total: number }>('GET', '/webhook-messages');
    expect(messages.status, messages.text).toBe(200);
    expect(messages.body.total).toBe(STUDIES);
    const all = new Set<string>();
    let cursor: string | undefined;
    for (;;) {
      const page = await api<{ results: { messageId: string }[]; pageInfo: { hasNextPage: boolean; endCursor: string } }>(
        'GET',
        `/webhook-messages?size=100${cursor ? `&startCursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      for (const message of page.body.results) all.add(message.messageId);
      if (!page.body.pageInfo.hasNextPage) break;
      cursor = page.body.pageInfo.endCursor;
    }
    const delivered = () => new Set(receiver.received.slice(unanswered.size).map((delivery) => String(delivery.headers['webhook-id'])));
    await until(second, 'every message delivered after the restart', () => delivered().size === STUDIES, { timeoutMs: 60_000 });
    expect([...delivered()].sort()).toEqual([...all].sort());
    await stopGracefully(second);
  });
});
