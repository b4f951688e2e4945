import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, testDatabaseUrl, type TestService } from '../../../test/harness.js';
import { startSession } from '../sign-in/service.js';

/**
 * Two instances on one PostgreSQL database and one Redis, each caching principals for an hour:
 * a deactivation, a role change or a revocation made through one is refused by the other at
 * once (the invalidation is broadcast), not an hour later.
 */
const redisUrl = process.env.REDIS_URL;
describe.skipIf(!testDatabaseUrl || !redisUrl)('Invalidation across instances (PostgreSQL and Redis)', () => {
  let first: TestService;
  let second: TestService;
  beforeAll(async () => {
    const options = { rateLimitKeyPrefix: `accounts-${randomBytes(6).toString('hex')}` };
    first = await startTestService({ redisUrl, authCacheSeconds: 3600 }, options);
    second = await startTestService({ redisUrl, authCacheSeconds: 3600 }, options);
  });
  afterAll(async () => {
    await first?.stop();
    await second?.stop();
  });

  /** The status the second instance answers, polled for up to a second (a broadcast takes a few ms). */
  async function secondAnswers(url: string, token: string, status: number) {
    let last = 0;
    for (let attempt = 0; attempt < 50; attempt++) {
      last = (await call(second, 'GET', url, { token })).statusCode;
      if (last === status) return last;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return last;
  }

  it("stops a deactivated user's key on the other instance at once", async () => {
    const tenant = await createTenant(first);
    const user = await tenant.tokenFor('RESEARCHER');
    expect((await call(second, 'GET', '/me', { token: user.token })).statusCode).toBe(200);
    expect((await call(first, 'POST', `/users/${user.userId}/deactivate`, { token: tenant.token })).statusCode).toBe(200);
    expect(await secondAnswers('/me', user.token, 401)).toBe(401);
  });

  it('holds a role change on the other instance at once', async () => {
    const tenant = await createTenant(first);
    const user = await tenant.tokenFor('RESEARCHER');
    expect((await call(second, 'GET', '/studies', { token: user.token })).statusCode).toBe(200);
    await call(first, 'PATCH', `/users/${user.userId}`, { token: tenant.token, body: { role: 'CUSTOM', customRoleId: (await call(first, 'POST', '/custom-roles', { token: tenant.token, body: { name: 'Nothing much', rights: ['users:read'] } })).json().customRoleId } });
    expect(await secondAnswers('/studies', user.token, 403)).toBe(403);
  });

  it('refuses a revoked key on the other instance at once', async () => {
    const tenant = await createTenant(first);
    const key = (await call(first, 'POST', '/api-keys', { token: tenant.token, body: { name: 'Shared' } })).json();
    expect((await call(second, 'GET', '/me', { token: key.secret })).statusCode).toBe(200);
    expect((await call(first, 'DELETE', `/api-keys/${key.keyId}`, { token: tenant.token })).statusCode).toBe(200);
    expect(await secondAnswers('/me', key.secret, 401)).toBe(401);
  });

  /** The status the second instance answers to a request with this session cookie, polled as above. */
  async function secondAnswersSession(cookie: string, status: number) {
    let last = 0;
    for (let attempt = 0; attempt < 50; attempt++) {
      last = (await second.app.inject({ method: 'GET', url: '/v1/me', headers: { cookie } })).statusCode;
      if (last === status) return last;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return last;
  }

  it("ends a deactivated user's console session on the other instance at once, and sign-out everywhere too", async () => {
    const tenant = await createTenant(first);
    const user = await tenant.tokenFor('RESEARCHER');
    const cookieOf = async () => `recruit_session=${(await startSession(first.deps.db, { workspaceId: tenant.workspaceId, userId: user.userId }, 'PASSWORD', new Date().toISOString())).secret}`;
    const session = await cookieOf();
    expect((await second.app.inject({ method: 'GET', url: '/v1/me', headers: { cookie: session } })).statusCode).toBe(200);
    expect((await call(first, 'POST', `/users/${user.userId}/deactivate`, { token: tenant.token })).statusCode).toBe(200);
    expect(await secondAnswersSession(session, 401)).toBe(401);

    expect((await call(first, 'POST', `/users/${user.userId}/reactivate`, { token: tenant.token })).statusCode).toBe(200);
    const again = await cookieOf();
    const info = await first.app.inject({ method: 'GET', url: '/v1/session', headers: { cookie: again } });
    expect((await second.app.inject({ method: 'GET', url: '/v1/me', headers: { cookie: again } })).statusCode).toBe(200);
    const ended = await first.app.inject({ method: 'POST', url: '/v1/session/sign-out-everywhere', headers: { cookie: again, 'x-csrf-token': info.json().csrfToken } });
    expect(ended.statusCode, ended.body).toBe(200);
    expect(await secondAnswersSession(again, 401)).toBe(401);
  });
});
