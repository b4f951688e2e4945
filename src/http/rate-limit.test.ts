import { randomBytes } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type Tenant, type TestService } from '../../test/harness.js';

const max = 3;
const windowSeconds = 60;
const redisUrl = process.env.REDIS_URL;

function budget(response: LightMyRequestResponse) {
  const header = (name: string) => {
    const value = response.headers[name];
    expect(value, `${name} on a ${response.statusCode}`).toMatch(/^\d+$/);
    return Number(value);
  };
  return { limit: header('x-ratelimit-limit'), remaining: header('x-ratelimit-remaining'), reset: header('x-ratelimit-reset') };
}

/** Reset is Unix epoch seconds: not before the request, and no later than one window after it. */
function expectResetWithinWindow(reset: number, sentAtMs: number, answeredAtMs: number) {
  expect(reset).toBeGreaterThanOrEqual(Math.floor(sentAtMs / 1000));
  expect(reset).toBeLessThanOrEqual(Math.ceil(answeredAtMs / 1000) + windowSeconds);
}

function expectTooManyRequests(response: LightMyRequestResponse) {
  expect(response.statusCode).toBe(429);
  expect(response.headers['content-type']).toMatch(/^text\/plain/);
  expect(response.body).toBe('Too Many Requests');
  expect(response.headers['retry-after']).toMatch(/^\d+$/);
  const retryAfter = Number(response.headers['retry-after']);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(windowSeconds);
  expect(budget(response)).toMatchObject({ limit: max, remaining: 0 });
  return retryAfter;
}

/** A request with a bad token from one client address (inject's stand-in for the socket's). */
const fromAddress = (service: TestService, remoteAddress: string, token?: string) =>
  service.app.inject({ method: 'GET', url: '/v1/me', remoteAddress, headers: token ? { authorization: `Bearer ${token}` } : {} });

describe('rate limits (in process)', () => {
  let service: TestService;
  let tenant: Tenant;
  beforeAll(async () => {
    service = await startTestService({ rateLimitMax: max, rateLimitWindowSeconds: windowSeconds });
    tenant = await createTenant(service);
  });
  afterAll(async () => service.stop());

  it('answers the request past the budget with 429, Retry-After and the budget headers', async () => {
    const { token } = await tenant.tokenFor('OBSERVER');
    const resets: number[] = [];
    for (let sent = 1; sent <= max; sent++) {
      const sentAt = Date.now();
      const response = await call(service, 'GET', '/me', { token });
      expect(response.statusCode).toBe(200);
      const headers = budget(response);
      expect(headers).toMatchObject({ limit: max, remaining: max - sent });
      expectResetWithinWindow(headers.reset, sentAt, Date.now());
      resets.push(headers.reset);
    }
    const sentAt = Date.now();
    const refused = await call(service, 'GET', '/me', { token });
    const answeredAt = Date.now();
    const retryAfter = expectTooManyRequests(refused);
    const { reset } = budget(refused);
    expectResetWithinWindow(reset, sentAt, answeredAt);
    // One fixed window: the refill time does not move while the budget drains.
    expect(Math.max(...resets, reset) - Math.min(...resets, reset)).toBeLessThanOrEqual(1);
    // Retry-After and Reset tell the same time, give or take the rounding of each.
    expect(Math.abs(reset - (answeredAt / 1000 + retryAfter))).toBeLessThanOrEqual(2);

    // Still refused: a refused request does not open a new window.
    expectTooManyRequests(await call(service, 'GET', '/me', { token }));
  });

  it('gives every token a budget of its own', async () => {
    const first = await tenant.tokenFor('OBSERVER');
    const second = await tenant.tokenFor('OBSERVER');
    for (let sent = 0; sent < max; sent++) expect((await call(service, 'GET', '/me', { token: first.token })).statusCode).toBe(200);
    expectTooManyRequests(await call(service, 'GET', '/me', { token: first.token }));

    const other = await call(service, 'GET', '/me', { token: second.token });
    expect(other.statusCode).toBe(200);
    expect(budget(other)).toMatchObject({ limit: max, remaining: max - 1 });
  });

  it('limits bad and missing tokens per client address', async () => {
    const address = '198.51.100.7';
    const otherAddress = '198.51.100.8';
    const badToken = `rk_${tenant.workspaceId}_${'A'.repeat(43)}`;
    for (let sent = 1; sent <= max; sent++) {
      const response = await fromAddress(service, address, sent === 2 ? undefined : badToken);
      expect(response.statusCode).toBe(401);
      expect(response.body).toBe('Unauthorized');
      expect(budget(response)).toMatchObject({ limit: max, remaining: max - sent });
    }
    expectTooManyRequests(await fromAddress(service, address, 'garbage'));
    expectTooManyRequests(await fromAddress(service, address));

    // Another address has its own budget. From the spent address, a token this instance already
    // knows still works; an unknown one waits for the window, since checking it would cost a
    // database lookup per guess.
    expect((await fromAddress(service, otherAddress, badToken)).statusCode).toBe(401);
    const known = await tenant.tokenFor('OBSERVER');
    expect((await fromAddress(service, otherAddress, known.token)).statusCode).toBe(200);
    expect((await fromAddress(service, address, known.token)).statusCode).toBe(200);
    const unknown = await tenant.tokenFor('OBSERVER');
    expectTooManyRequests(await fromAddress(service, address, unknown.token));
  });

  it('puts the budget headers on every authenticated response: 200, 400, 403, 404', async () => {
    const { token } = await tenant.tokenFor('OBSERVER');
    const responses = [
      await call(service, 'GET', '/me', { token }),
      await call(service, 'GET', '/studies', { token, query: { size: 'abc' } }),
      await call(service, 'GET', '/studies/stu_missing', { token }),
    ];
    expect(responses.map((response) => response.statusCode)).toEqual([200, 400, 404]);
    expect(responses.map((response) => budget(response).remaining)).toEqual([2, 1, 0]);

    const observer = await tenant.tokenFor('OBSERVER');
    const forbidden = await call(service, 'POST', '/studies', {
      token: observer.token,
      body: { studyType: 'INTERVIEWS', recruitmentStrategy: 'IN_SERVICE', studyPlan: { name: 'Not allowed' } },
    });
    expect(forbidden.statusCode).toBe(403);
    expect(budget(forbidden)).toMatchObject({ limit: max, remaining: max - 1 });
  });

  it('does not charge public routes', async () => {
    for (let sent = 0; sent <= max; sent++) {
      const response = await service.app.inject({ method: 'GET', url: '/healthz', remoteAddress: '198.51.100.9' });
      expect(response.statusCode).toBe(200);
    }
    expect((await fromAddress(service, '198.51.100.9')).statusCode).toBe(401);
  });
});

describe.skipIf(!redisUrl)('rate limits shared through Redis', () => {
  let first: TestService;
  let second: TestService;
  let tenant: Tenant;
  beforeAll(async () => {
    // A prefix of this run's own, so that parallel runs on one Redis never share a budget.
    const rateLimitKeyPrefix = `test-rl-${randomBytes(6).toString('hex')}`;
    const overrides = { rateLimitMax: max, rateLimitWindowSeconds: windowSeconds, redisUrl };
    first = await startTestService(overrides, { rateLimitKeyPrefix });
    // The second instance serves the same database, as instances behind one load balancer do.
    second = await startTestService(overrides, { rateLimitKeyPrefix, database: first.database });
    tenant = await createTenant(first);
  });
  afterAll(async () => {
    await second?.stop();
    await first?.stop();
  });

  it("draws one token's requests to two instances from one budget", async () => {
    const { token } = await tenant.tokenFor('OBSERVER');
    const served = [first, second, first];
    for (const [index, instance] of served.entries()) {
      const response = await call(instance, 'GET', '/me', { token });
      expect(response.statusCode).toBe(200);
      expect(budget(response).remaining).toBe(max - 1 - index);
    }
    expectTooManyRequests(await call(second, 'GET', '/me', { token }));
    expectTooManyRequests(await call(first, 'GET', '/me', { token }));
  });

  it("draws one address's bad tokens from one budget across instances", async () => {
    const address = '203.0.113.5';
    for (const instance of [first, second, second]) expect((await fromAddress(instance, address, 'garbage')).statusCode).toBe(401);
    expectTooManyRequests(await fromAddress(first, address, 'garbage'));
  });
});
