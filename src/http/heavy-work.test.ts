import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type TestService } from '../../test/harness.js';
import { TooBusy, WorkspaceWorkLimiter } from './heavy-work.js';

// Issue 32: 16 concurrent 1000-row searches from one token moved another workspace's median from 5 ms to 860 ms.
describe('WorkspaceWorkLimiter', () => {
  it('runs a workspace’s work up to its capacity by weight, queues the rest in order, and never holds up another workspace', async () => {
    const limiter = new WorkspaceWorkLimiter({ capacity: 2000, queueMax: 2, waitMs: 10_000 });
    const first = await limiter.acquire('a', 1000);
    const second = await limiter.acquire('a', 1000);
    const order: string[] = [];
    const third = limiter.acquire('a', 1000).then((release) => (order.push('third'), release));
    const small = limiter.acquire('a', 50).then((release) => (order.push('small'), release));
    await expect(limiter.acquire('a', 50)).rejects.toBeInstanceOf(TooBusy);
    expect(limiter.state('a')).toEqual({ used: 2000, waiting: 2 });
    const other = await limiter.acquire('b', 1000);
    expect(limiter.state('b')).toEqual({ used: 1000, waiting: 0 });
    first();
    first();
    (await third)();
    expect(order).toEqual(['third']);
    second();
    (await small)();
    expect(order).toEqual(['third', 'small']);
    expect(limiter.state('a')).toEqual({ used: 0, waiting: 0 });
    other();
  });

  it('lets work heavier than the capacity run alone, and refuses a wait longer than waitMs', async () => {
    const limiter = new WorkspaceWorkLimiter({ capacity: 1000, queueMax: 5, waitMs: 30 });
    const huge = await limiter.acquire('a', 5000);
    expect(limiter.state('a').used).toBe(1000);
    await expect(limiter.acquire('a', 1)).rejects.toBeInstanceOf(TooBusy);
    expect(limiter.state('a')).toEqual({ used: 1000, waiting: 0 });
    huge();
  });
});

describe('search routes under the per-workspace weight', () => {
  let service: TestService;
  beforeAll(async () => {
    service = await startTestService({ searchWeightPerWorkspace: 1000, searchQueuePerWorkspace: 1, searchWaitMs: 20_000 });
  });
  afterAll(async () => service.stop());

  it.each([
    ['POST /people/search', '/people/search'],
    ['POST /incentives/search', '/incentives/search'],
  ])('%s: a second 1000-row search waits, a third is refused 429 with Retry-After; another workspace is served meanwhile', async (_name, path) => {
    const heavy = await createTenant(service);
    const other = await createTenant(service);
    const search = (token: string, size: number) => call(service, 'POST', path, { token, body: { pageInfo: { size } } });
    // A 1000-row search of the workspace in flight (held here, so that the test does not race it).
    const inFlight = await service.heavyWork.acquire(heavy.workspaceId, 1000);
    let waited = false;
    const waiting = search(heavy.token, 1000).then((answer) => ((waited = true), answer));
    await new Promise((resolve) => setTimeout(resolve, 200));
    const refused = await search(heavy.token, 25);
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.body).toBe('Too Many Requests');
    expect((await search(other.token, 1000)).statusCode).toBe(200);
    expect(waited).toBe(false);
    inFlight();
    expect((await waiting).statusCode).toBe(200);
    // All given back: the workspace may search again.
    expect((await search(heavy.token, 1000)).statusCode).toBe(200);
  });
});
