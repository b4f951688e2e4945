import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
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
    expect(limiter.state('a')).toMatchObject({ used: 2000, waiting: 2 });
    const other = await limiter.acquire('b', 1000);
    expect(limiter.state('b')).toMatchObject({ used: 1000, waiting: 0 });
    first();
    first();
    (await third)();
    expect(order).toEqual(['third']);
    second();
    (await small)();
    expect(order).toEqual(['third', 'small']);
    expect(limiter.state('a')).toMatchObject({ used: 0, waiting: 0 });
    other();
  });

  it('lets work heavier than the capacity run alone, and refuses a wait longer than waitMs', async () => {
    const limiter = new WorkspaceWorkLimiter({ capacity: 1000, queueMax: 5, waitMs: 30 });
    const huge = await limiter.acquire('a', 5000);
    expect(limiter.state('a').used).toBe(1000);
    await expect(limiter.acquire('a', 1)).rejects.toBeInstanceOf(TooBusy);
    expect(limiter.state('a')).toMatchObject({ used: 1000, waiting: 0 });
    huge();
  });
});

// The weight alone still let two 1000-row searches at a time take the process (another workspace
// waited 1.0 s at the median on the embedded store): each heavy request is charged its time.
describe('WorkspaceWorkLimiter’s budget of time', () => {
  afterEach(() => {
    vi.useRealTimers();
  });
  const limiter = (waitMs = 10_000) => new WorkspaceWorkLimiter({ capacity: 2000, queueMax: 4, waitMs, budgetMsPerSecond: 100, burstMs: 100, now: () => Date.now() });
  const settled = async () => {
    for (let turn = 0; turn < 5; turn++) await Promise.resolve();
  };

  it('charges each request the time it held, and starts nothing more of that workspace until the budget has refilled; another workspace is not held', async () => {
    vi.useFakeTimers();
    const work = limiter();
    const first = await work.acquire('a', 1000);
    vi.advanceTimersByTime(300);
    first();
    // 100 ms of credit, 300 ms spent: 200 ms of debt, which takes 2 s at 100 ms a second.
    expect(work.state('a').creditMs).toBeCloseTo(-200, 5);
    let started = false;
    const next = work.acquire('a', 25).then((release) => ((started = true), release));
    const other = await work.acquire('b', 1000);
    await settled();
    expect(started).toBe(false);
    expect(work.state('a')).toMatchObject({ used: 0, waiting: 1 });
    await vi.advanceTimersByTimeAsync(1990);
    expect(started).toBe(false);
    await vi.advanceTimersByTimeAsync(20);
    expect(started).toBe(true);
    (await next)();
    other();
  });

  it('keeps a workspace’s debt while it is idle, and refuses a wait for the budget longer than waitMs', async () => {
    vi.useFakeTimers();
    const work = limiter(500);
    const first = await work.acquire('a', 1000);
    vi.advanceTimersByTime(300);
    first();
    await vi.advanceTimersByTimeAsync(100);
    expect(work.state('a').creditMs).toBeCloseTo(-190, 5);
    const refused = expect(work.acquire('a', 1000)).rejects.toBeInstanceOf(TooBusy);
    await vi.advanceTimersByTimeAsync(501);
    await refused;
    expect(work.state('a').waiting).toBe(0);
  });

  it('lets a workspace with credit left run up to its weight at once, each charged on release', async () => {
    vi.useFakeTimers();
    const work = limiter();
    const first = await work.acquire('a', 1000);
    const second = await work.acquire('a', 1000);
    vi.advanceTimersByTime(40);
    first();
    second();
    expect(work.state('a').creditMs).toBeCloseTo(20, 5);
    (await work.acquire('a', 1000))();
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

describe('search routes over HTTP', () => {
  it('POST /people/search over a socket holds its weight until its answer is sent: of four at once with room for one and no queue, the others are refused', async () => {
    // Node destroys a request once its body has been read: a test of request.raw.destroyed gave
    // every search's weight back as it started, over a socket (never under inject).
    const listening = await startTestService({ searchWeightPerWorkspace: 1000, searchQueuePerWorkspace: 0, searchWaitMs: 0 });
    try {
      const tenant = await createTenant(listening);
      const origin = await listening.app.listen({ port: 0, host: '127.0.0.1' });
      const search = async () => {
        const answer = await fetch(`${origin}/v1/people/search`, { method: 'POST', headers: { authorization: `Bearer ${tenant.token}`, 'content-type': 'application/json' }, body: JSON.stringify({ pageInfo: { size: 1000 } }) });
        await answer.arrayBuffer();
        return answer.status;
      };
      const statuses = await Promise.all([search(), search(), search(), search()]);
      expect(statuses.filter((status) => status === 200).length).toBeGreaterThanOrEqual(1);
      expect(statuses.filter((status) => status === 429).length).toBeGreaterThanOrEqual(1);
      expect(listening.heavyWork.state(tenant.workspaceId)).toMatchObject({ used: 0, waiting: 0 });
    } finally {
      await listening.stop();
    }
  });
});

describe('search routes under the per-workspace budget of time', () => {
  let service: TestService;
  beforeAll(async () => {
    // A millisecond a second: any 1000-row search leaves a debt of many seconds.
    service = await startTestService({ searchBudgetMsPerSecond: 1, searchBudgetBurstMs: 1, searchWaitMs: 300 });
  });
  afterAll(async () => service.stop());

  it('POST /people/search: a workspace that spent its budget is refused 429 with Retry-After once the wait is up; another workspace is served', async () => {
    const heavy = await createTenant(service);
    const other = await createTenant(service);
    const search = (token: string) => call(service, 'POST', '/people/search', { token, body: { pageInfo: { size: 1000 } } });
    expect((await search(heavy.token)).statusCode).toBe(200);
    expect(service.heavyWork.state(heavy.workspaceId).creditMs).toBeLessThan(0);
    const refused = await search(heavy.token);
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBe('1');
    expect((await search(other.token)).statusCode).toBe(200);
    // The workspace's other requests are not charged.
    expect((await call(service, 'GET', '/me', { token: heavy.token })).statusCode).toBe(200);
  });
});
