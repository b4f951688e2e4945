import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type Tenant, type TestService } from '../../../test/harness.js';
import { describeSecurity } from '../../../test/security.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service.stop());

async function makeKey(token: string, body: Record<string, unknown>) {
  const response = await call(service, 'POST', '/api-keys', { token, body });
  expect(response.statusCode, response.body).toBe(201);
  return response.json<{ keyId: string; secret: string; rights: string[] }>();
}

describe('POST /api-keys', () => {
  it('makes a key of the caller with a subset of their rights, the secret shown once and stored as its digest', async () => {
    const tenant = await createTenant(service);
    const researcher = await tenant.tokenFor('RESEARCHER');
    const key = await makeKey(researcher.token, { name: 'Nightly export', rights: ['studies:read', 'people:read'], canReadPersonalData: false });
    expect(key).toMatchObject({ keyId: expect.stringMatching(/^tok_/), userId: researcher.userId, name: 'Nightly export', rights: ['studies:read', 'people:read'], canReadPersonalData: false, canReadScreeners: true, expiresAt: null, lastUsedAt: null, revokedAt: null });
    expect(key.secret).toMatch(/^rk_wsp_/);
    const stored = await service.deps.db.selectFrom('api_tokens').where('token_id', '=', key.keyId).select('token_digest').executeTakeFirstOrThrow();
    expect(stored.token_digest).toMatch(/^[0-9a-f]{64}$/);
    expect(stored.token_digest).not.toContain(key.secret);
    // Limited to its rights: reads studies, writes nothing, and its personal-data right is off.
    expect((await call(service, 'GET', '/studies', { token: key.secret })).statusCode).toBe(200);
    expect((await call(service, 'POST', '/studies', { token: key.secret, body: { name: 'x' } })).statusCode).toBe(403);
    expect((await call(service, 'GET', '/populations', { token: key.secret })).statusCode).toBe(403);
    const listed = (await call(service, 'GET', '/api-keys', { token: researcher.token })).json();
    expect(listed.results.map((row: { keyId: string }) => row.keyId)).toContain(key.keyId);
    expect(JSON.stringify(listed)).not.toContain(key.secret);
  });

  it("defaults to all of the caller's rights, and a key made with a limited key is limited as much", async () => {
    const tenant = await createTenant(service);
    const observer = await tenant.tokenFor('OBSERVER');
    const all = await makeKey(observer.token, { name: 'All' });
    expect(all.rights).toContain('studies:read');
    expect(all.rights).not.toContain('studies:write');
    const narrow = await makeKey(observer.token, { name: 'Narrow', rights: ['studies:read', 'api-keys:write'] });
    const derived = await makeKey(narrow.secret, { name: 'Derived' });
    expect(derived.rights).toEqual(['studies:read', 'api-keys:write']);
  });

  it("refuses rights the caller lacks, naming the item and listing the caller's own", async () => {
    const tenant = await createTenant(service);
    const observer = await tenant.tokenFor('OBSERVER');
    const response = await call(service, 'POST', '/api-keys', { token: observer.token, body: { name: 'Too much', rights: ['studies:read', 'studies:write'] } });
    expect(response.statusCode).toBe(400);
    expect(response.json().errors[0]).toMatchObject({ path: ['rights', '1'], message: expect.stringContaining('studies:read') });
    const unknown = await call(service, 'POST', '/api-keys', { token: observer.token, body: { name: 'Unknown', rights: ['studies:fly'] } });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().errors[0].path).toEqual(['rights', '0']);
    expect((await call(service, 'GET', '/api-keys', { token: observer.token })).json().total).toBe(1);
  });

  it('gives the personal-data and screener rights only if the caller has them', async () => {
    const tenant = await createTenant(service);
    const limited = await tenant.tokenFor('RESEARCHER', { canReadPersonalData: false, canReadScreeners: false });
    for (const field of ['canReadPersonalData', 'canReadScreeners']) {
      const response = await call(service, 'POST', '/api-keys', { token: limited.token, body: { name: 'Key', [field]: true } });
      expect(response.statusCode, field).toBe(400);
      expect(response.json().errors[0].path).toEqual([field]);
    }
    const key = await makeKey(limited.token, { name: 'Key' });
    expect(key).toMatchObject({ canReadPersonalData: false, canReadScreeners: false });
  });

  it('takes an expiry in the future, at most a year ahead; an expired key answers 401', async () => {
    const tenant = await createTenant(service);
    const now = Date.now();
    for (const expiresAt of [new Date(now - 1000).toISOString(), new Date(now + 400 * 86_400_000).toISOString(), 'tomorrow']) {
      const response = await call(service, 'POST', '/api-keys', { token: tenant.token, body: { name: 'Key', expiresAt } });
      expect(response.statusCode, expiresAt).toBe(400);
      expect(response.json().errors[0].path).toEqual(['expiresAt']);
    }
    const key = await makeKey(tenant.token, { name: 'Short', expiresAt: new Date(now + 3_600_000).toISOString() });
    expect((await call(service, 'GET', '/me', { token: key.secret })).statusCode).toBe(200);
    service.deps.clock.set(new Date(now + 3_600_000));
    try {
      // Refused at once, though its principal is cached.
      expect((await call(service, 'GET', '/me', { token: key.secret })).statusCode).toBe(401);
    } finally {
      service.deps.clock.set(new Date());
    }
  });
});

describe('GET /api-keys and lastUsedAt', () => {
  it("lists the caller's keys only, CLI tokens too, with when each was last used (written at most once a minute)", async () => {
    const tenant = await createTenant(service);
    const other = await tenant.tokenFor('RESEARCHER');
    const key = await makeKey(tenant.token, { name: 'Used' });
    await makeKey(other.token, { name: 'Not mine' });
    await call(service, 'GET', '/me', { token: key.secret });
    await service.keyUsage.flush();
    const listed = (await call(service, 'GET', '/api-keys', { token: tenant.token })).json();
    expect(listed.total).toBe(2);
    expect(listed.results.map((row: { name: string }) => row.name)).toEqual(['', 'Used']);
    const used = listed.results[1];
    expect(used.lastUsedAt).toEqual(expect.any(String));
    // Within the minute, more uses write nothing.
    await call(service, 'GET', '/me', { token: key.secret });
    await service.keyUsage.flush();
    const again = (await call(service, 'GET', '/api-keys', { token: tenant.token })).json();
    expect(again.results[1].lastUsedAt).toBe(used.lastUsedAt);
  });
});

describe('DELETE /api-keys/{keyId}', () => {
  it("revokes one of the caller's keys at once; another user's key is a 404", async () => {
    const tenant = await createTenant(service);
    const other = await tenant.tokenFor('RESEARCHER');
    const key = await makeKey(tenant.token, { name: 'Doomed' });
    const theirs = await makeKey(other.token, { name: 'Theirs' });
    expect((await call(service, 'GET', '/me', { token: key.secret })).statusCode).toBe(200);
    const revoked = await call(service, 'DELETE', `/api-keys/${key.keyId}`, { token: tenant.token });
    expect(revoked.statusCode).toBe(200);
    expect(revoked.json().revokedAt).toEqual(expect.any(String));
    expect((await call(service, 'GET', '/me', { token: key.secret })).statusCode).toBe(401);
    expect((await call(service, 'DELETE', `/api-keys/${key.keyId}`, { token: tenant.token })).json().revokedAt).toBe(revoked.json().revokedAt);
    expect((await call(service, 'DELETE', `/api-keys/${theirs.keyId}`, { token: tenant.token })).statusCode).toBe(404);
    expect((await call(service, 'GET', '/me', { token: theirs.secret })).statusCode).toBe(200);
  });
});

describe("A SUPER_ADMIN and a user's keys", () => {
  it("lists and revokes any user's keys", async () => {
    const tenant = await createTenant(service);
    const other = await tenant.tokenFor('RESEARCHER');
    const theirs = await makeKey(other.token, { name: 'Theirs' });
    const listed = await call(service, 'GET', `/users/${other.userId}/api-keys`, { token: tenant.token });
    expect(listed.json().results.map((row: { name: string }) => row.name)).toEqual(['', 'Theirs']);
    expect((await call(service, 'DELETE', `/users/${other.userId}/api-keys/${theirs.keyId}`, { token: tenant.token })).statusCode).toBe(200);
    expect((await call(service, 'GET', '/me', { token: theirs.secret })).statusCode).toBe(401);
    expect((await call(service, 'GET', '/users/usr_nobody/api-keys', { token: tenant.token })).statusCode).toBe(404);
  });
});

const ownKey = async (tenant: Tenant) => (await makeKey(tenant.token, { name: 'Key' })).keyId;

describeSecurity('POST /api-keys', () => service, { method: 'POST', right: 'api-keys:write', addressesResource: false, request: async () => ({ url: '/api-keys', body: { name: 'Key', rights: ['api-keys:write'] } }) });
describeSecurity('GET /api-keys', () => service, { method: 'GET', right: 'api-keys:write', addressesResource: false, request: async () => ({ url: '/api-keys' }) });
describeSecurity('GET /users/{userId}/api-keys', () => service, { method: 'GET', right: 'users:write', addressesResource: true, request: async (tenant) => ({ url: `/users/${tenant.userId}/api-keys` }) });
describeSecurity('DELETE /users/{userId}/api-keys/{keyId}', () => service, {
  method: 'DELETE',
  right: 'users:write',
  addressesResource: true,
  request: async (tenant) => ({ url: `/users/${tenant.userId}/api-keys/${await ownKey(tenant)}` }),
});
