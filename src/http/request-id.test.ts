import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type Tenant, type TestService } from '../../test/harness.js';
import { LogCapture } from '../../test/log-capture.js';

let service: TestService;
let tenant: Tenant;
const logs = new LogCapture();
const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

beforeAll(async () => {
  service = await startTestService({ logLevel: 'info', rateLimitMax: 8 }, { logger: true, logStream: logs });
  tenant = await createTenant(service);
});
afterAll(async () => service.stop());

describe('X-Request-Id', () => {
  it('is on every response: success, client errors, plain errors, unknown routes, health', async () => {
    const responses = [
      await call(service, 'GET', '/me', { token: tenant.token }),
      await call(service, 'GET', '/studies', { token: tenant.token, query: { size: 'abc' } }),
      await call(service, 'GET', '/studies/stu_missing', { token: tenant.token }),
      await call(service, 'GET', '/me'),
      await call(service, 'GET', '/me', { token: 'rk_nonsense' }),
      await call(service, 'GET', '/no-such-route'),
      await service.app.inject({ method: 'GET', url: '/healthz' }),
      await service.app.inject({ method: 'GET', url: '/v1/studies/%E0%A4%A' }),
    ];
    const ids = responses.map((response) => response.headers['x-request-id']);
    for (const id of ids) expect(id).toMatch(uuid);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('is on a 429', async () => {
    const { token } = await tenant.tokenFor('OBSERVER');
    let last = await call(service, 'GET', '/me', { token });
    for (let attempt = 0; attempt < 8; attempt++) last = await call(service, 'GET', '/me', { token });
    expect(last.statusCode).toBe(429);
    expect(last.headers['x-request-id']).toMatch(uuid);
  });

  it("echoes a caller's sane id", async () => {
    const { token } = await tenant.tokenFor('OBSERVER');
    for (const given of ['abc-123', 'trace:01JD.span_7', 'a'.repeat(128), '6f1c2a1e-6b9d-4b7e-9d3c-2f5b8e1a7c44']) {
      const response = await call(service, 'GET', '/me', { token, headers: { 'x-request-id': given } });
      expect(response.statusCode).toBe(200);
      expect(response.headers['x-request-id']).toBe(given);
    }
  });

  it('replaces an insane one', async () => {
    const { token } = await tenant.tokenFor('OBSERVER');
    for (const given of ['', 'has space', 'a'.repeat(129), 'line\tbreak', '<script>', 'ünïcode', 'a,b']) {
      const response = await call(service, 'GET', '/me', { token, headers: { 'x-request-id': given } });
      expect(response.statusCode).toBe(200);
      expect(response.headers['x-request-id'], JSON.stringify(given)).toMatch(uuid);
    }
  });
});

describe('logs', () => {
  it('are JSON lines, and each line about a request carries its id', async () => {
    const { token } = await tenant.tokenFor('OBSERVER');
    const before = logs.raw.length;
    const response = await call(service, 'GET', '/studies/stu_missing', { token, headers: { 'x-request-id': 'log-join-1' } });
    expect(response.statusCode).toBe(404);

    const text = logs.raw.slice(before).join('');
    expect(text.endsWith('\n')).toBe(true);
    const lines = logs.lines();
    const mine = logs.forRequest('log-join-1');
    expect(mine.map((line) => line.msg)).toEqual(['incoming request', 'request completed']);
    expect(mine[1]).toMatchObject({ res: { statusCode: 404 } });
    // Every line about a request, this one's or another's, names its request.
    for (const line of lines) {
      if ('req' in line || 'res' in line) expect(typeof line.reqId).toBe('string');
    }
  });

  it('never write the token', async () => {
    const { token } = await tenant.tokenFor('OBSERVER');
    await call(service, 'GET', '/me', { token, headers: { 'x-request-id': 'log-secret-1' } });
    expect(logs.forRequest('log-secret-1').length).toBeGreaterThan(0);
    const written = logs.raw.join('');
    expect(written).not.toContain(token);
    expect(written).not.toContain(tenant.token);
  });
});
