import type { LookupAddress } from 'node:dns';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type Tenant, type TestService } from '../../../test/harness.js';
import { describeSecurity } from '../../../test/security.js';
import { idPrefixes, newId } from '../../ids.js';
import { systemResolver } from './targets.js';
import { createEndpoint, walk } from './test-support.js';

/** DNS as these tests see it: names of the example, `localhost` as the system resolves it, nothing else. */
const dns: Record<string, LookupAddress[]> = {
  'hooks.example.com': [{ address: '93.184.216.34', family: 4 }],
  'v6.example.com': [{ address: '2606:2800:220:1:248:1893:25c8:1946', family: 6 }],
  'intranet.example.com': [{ address: '192.168.1.10', family: 4 }],
  'metadata.example.com': [{ address: '169.254.169.254', family: 4 }],
  'half-private.example.com': [
    { address: '93.184.216.34', family: 4 },
    { address: '10.1.2.3', family: 4 },
  ],
  'empty.example.com': [],
  'compat.example.com': [{ address: '::7f00:1', family: 6 }],
  'nat64.example.com': [{ address: '64:ff9b::a9fe:a9fe', family: 6 }],
};
const resolver = async (host: string): Promise<LookupAddress[]> => {
  if (host === 'localhost') return systemResolver(host);
  const found = dns[host];
  if (found === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return found;
};

let service: TestService;
beforeAll(async () => {
  // The defaults: https only, public targets only.
  service = await startTestService({ webhookAllowPrivateTargets: false, webhookAllowHttp: false }, { webhookResolver: resolver });
});
afterAll(async () => service.stop());
afterEach(() => service.deps.clock.reset());

const url = 'https://hooks.example.com/recruit';
const notFound = { errors: [{ message: 'Webhook endpoint not found', path: ['endpointId'] }] };
const unknownId = () => newId(idPrefixes.webhookEndpoint);

async function list(tenant: Tenant) {
  const response = await call(service, 'GET', '/webhook-endpoints', { token: tenant.token, query: { size: '100' } });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<{ results: Record<string, unknown>[]; total: number }>();
}

async function read(tenant: Tenant, endpointId: string) {
  const response = await call(service, 'GET', `/webhook-endpoints/${endpointId}`, { token: tenant.token });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<Record<string, unknown>>();
}

const patch = (tenant: Tenant, endpointId: string, body: unknown) => call(service, 'PATCH', `/webhook-endpoints/${endpointId}`, { token: tenant.token, body });

// Where an endpoint may not point, with the service's defaults: each is a 400 on `url`.
const refusedUrls: [string, string][] = [
  ['an http URL', 'http://hooks.example.com/recruit'],
  ['a URL with credentials', 'https://user:pw@example.com/x'],
  ['a URL with a user only', 'https://user@hooks.example.com/x'],
  ['not a URL', 'hooks.example.com/recruit'],
  ['an ftp URL', 'ftp://hooks.example.com/x'],
  ['a loopback address', 'https://127.0.0.1/x'],
  ['the IPv6 loopback', 'https://[::1]/x'],
  ['loopback mapped into IPv6', 'https://[::ffff:127.0.0.1]/x'],
  ['loopback as a decimal number', 'https://2130706433/x'],
  ['the unspecified address', 'https://0.0.0.0/x'],
  ['the cloud metadata address', 'https://169.254.169.254/latest/meta-data'],
  ['a private address', 'https://10.0.0.5/x'],
  ['a unique-local IPv6 address', 'https://[fd00::1]/x'],
  ['carrier-grade NAT', 'https://100.64.0.1/x'],
  ['localhost', 'https://localhost/x'],
  ['a name that does not resolve', 'https://nowhere.example.com/x'],
  ['a name with no address', 'https://empty.example.com/x'],
  ['a name resolving to a private address', 'https://intranet.example.com/x'],
  ['a name resolving to the metadata address', 'https://metadata.example.com/x'],
  ['a name with one private address among public ones', 'https://half-private.example.com/x'],
  // Issue 32, item 7: IPv6 forms that carry an IPv4 address (targets.test.ts tries every special block).
  ['IPv4-compatible loopback', 'https://[::7f00:1]/x'],
  ['IPv4-compatible loopback, dotted', 'https://[::127.0.0.1]/x'],
  ['IPv4-compatible metadata address', 'https://[::a9fe:a9fe]/x'],
  ['NAT64 loopback', 'https://[64:ff9b::7f00:1]/x'],
  ['6to4 loopback', 'https://[2002:7f00:1::]/x'],
  ['Teredo', 'https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/x'],
  ['a name resolving to IPv4-compatible loopback', 'https://compat.example.com/x'],
  ['a name resolving to a NAT64 metadata address', 'https://nat64.example.com/x'],
];

describe('POST /webhook-endpoints', () => {
  it('creates an endpoint and answers its secret once: neither GET nor the list shows it again', async () => {
    const tenant = await createTenant(service);
    service.deps.clock.set(new Date('2026-11-22T10:00:00.000Z'));
    const created = await createEndpoint(service, tenant, { url, description: 'Scheduling tool', eventTypes: ['study.status_changed', 'person.opted_out'] });
    expect(created).toEqual({
      endpointId: expect.stringMatching(/^whe_/),
      url,
      description: 'Scheduling tool',
      eventTypes: ['study.status_changed', 'person.opted_out'],
      enabled: true,
      disabledReason: null,
      previousSecretExpiresAt: null,
      createdAt: '2026-11-22T10:00:00.000Z',
      updatedAt: '2026-11-22T10:00:00.000Z',
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/),
    });
    const { secret, ...shown } = created;
    const got = await call(service, 'GET', `/webhook-endpoints/${created.endpointId}`, { token: tenant.token });
    expect(got.json()).toEqual(shown);
    expect(got.body).not.toContain(secret.slice(6));
    const listed = await call(service, 'GET', '/webhook-endpoints', { token: tenant.token });
    expect(listed.json().results).toEqual([shown]);
    expect(listed.body).not.toContain(secret.slice(6));
    // Stored encrypted, not as given.
    const row = await service.deps.db.selectFrom('webhook_endpoints').where('endpoint_id', '=', created.endpointId).select('secret_ciphertext').executeTakeFirstOrThrow();
    expect(row.secret_ciphertext).not.toContain(secret.slice(6));
  });

  it('defaults the description to empty, the event types to every type and enabled to true; each endpoint has its own secret', async () => {
    const tenant = await createTenant(service);
    const first = await createEndpoint(service, tenant, { url });
    const second = await createEndpoint(service, tenant, { url });
    expect(first).toMatchObject({ description: '', eventTypes: [], enabled: true, disabledReason: null });
    expect(second.endpointId).not.toBe(first.endpointId);
    expect(second.secret).not.toBe(first.secret);
  });

  it('creates a disabled endpoint, with no reason given', async () => {
    const tenant = await createTenant(service);
    expect(await createEndpoint(service, tenant, { url, enabled: false })).toMatchObject({ enabled: false, disabledReason: null });
  });

  it.each([
    ['a name resolving to a public address', 'https://hooks.example.com/recruit?x=1'],
    ['a name resolving to a public IPv6 address', 'https://v6.example.com/x'],
    ['a public address', 'https://93.184.216.34/x'],
    ['a public IPv6 address', 'https://[2606:2800:220:1:248:1893:25c8:1946]:8443/x'],
  ])('accepts %s', async (_case, target) => {
    const tenant = await createTenant(service);
    expect((await createEndpoint(service, tenant, { url: target })).url).toBe(target);
  });

  it.each(refusedUrls)('refuses %s with 400 on url, creating nothing', async (_case, target) => {
    const tenant = await createTenant(service);
    const response = await call(service, 'POST', '/webhook-endpoints', { token: tenant.token, body: { url: target } });
    expect(response.statusCode, response.body).toBe(400);
    expect(response.json()).toEqual({ errors: [{ message: expect.stringMatching(/^url /), path: ['url'] }] });
    expect((await list(tenant)).total).toBe(0);
  });

  it.each([
    ['no url', {}, ['url']],
    ['an empty url', { url: '' }, ['url']],
    ['a url of 2001 characters', { url: `https://hooks.example.com/${'x'.repeat(1975)}` }, ['url']],
    ['an unknown event type', { url, eventTypes: ['study.status_changed', 'study.exploded'] }, ['eventTypes', '1']],
    ['the test event type, which no endpoint subscribes to', { url, eventTypes: ['webhook.test'] }, ['eventTypes', '0']],
    ['an event type twice', { url, eventTypes: ['person.opted_in', 'person.opted_in'] }, ['eventTypes']],
    ['event types as a string', { url, eventTypes: 'study.status_changed' }, ['eventTypes']],
    ['a description of 501 characters', { url, description: 'x'.repeat(501) }, ['description']],
    ['a NUL in the description', { url, description: 'a\u0000b' }, ['description']],
    ['enabled as text', { url, enabled: 'yes' }, ['enabled']],
    ['an unknown field', { url, secret: 'whsec_mine' }, ['secret']],
  ])('refuses %s with 400, creating nothing', async (_case, body, path) => {
    const tenant = await createTenant(service);
    const response = await call(service, 'POST', '/webhook-endpoints', { token: tenant.token, body });
    expect(response.statusCode, response.body).toBe(400);
    expect(response.json()).toEqual({ errors: [{ message: expect.any(String), path }] });
    expect((await list(tenant)).total).toBe(0);
  });
});

describe('GET /webhook-endpoints', () => {
  it("walks every endpoint one page at a time, in creation order, with the total, and shows no other workspace's", async () => {
    const tenant = await createTenant(service);
    const other = await createTenant(service, 'Other workspace');
    await createEndpoint(service, other, { url });
    const made = [];
    for (const description of ['one', 'two', 'three', 'four']) made.push((await createEndpoint(service, tenant, { url, description })).endpointId);
    const { results, totals, pages } = await walk<{ endpointId: string; description: string }>(service, tenant, '/webhook-endpoints');
    expect(results.map((endpoint) => endpoint.endpointId)).toEqual(made);
    expect(results.map((endpoint) => endpoint.description)).toEqual(['one', 'two', 'three', 'four']);
    expect(totals).toEqual([4, 4, 4, 4]);
    expect(pages).toBe(4);
    expect(results.every((endpoint) => !('secret' in endpoint))).toBe(true);
    expect((await list(other)).total).toBe(1);
  });

  it('answers an empty page for a workspace without endpoints', async () => {
    const tenant = await createTenant(service);
    const response = await call(service, 'GET', '/webhook-endpoints', { token: tenant.token });
    expect(response.json()).toEqual({ results: [], total: 0, pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: '', endCursor: '' } });
  });

  it("refuses another workspace's cursor, a size of 0 and an unknown parameter (400)", async () => {
    const tenant = await createTenant(service);
    const other = await createTenant(service, 'Other workspace');
    await createEndpoint(service, other, { url });
    await createEndpoint(service, other, { url });
    const page = await call(service, 'GET', '/webhook-endpoints', { token: other.token, query: { size: '1' } });
    const endCursor = page.json<{ pageInfo: { endCursor: string } }>().pageInfo.endCursor;
    for (const [query, path] of [
      [{ startCursor: endCursor }, ['startCursor']],
      [{ size: '0' }, ['size']],
      [{ enabled: 'true' }, ['enabled']],
    ] as const) {
      const response = await call(service, 'GET', '/webhook-endpoints', { token: tenant.token, query });
      expect(response.statusCode, response.body).toBe(400);
      expect(response.json()).toEqual({ errors: [{ message: expect.any(String), path }] });
    }
  });
});

describe('GET /webhook-endpoints/{endpointId}', () => {
  it('refuses an id of 101 characters (400 on endpointId)', async () => {
    const tenant = await createTenant(service);
    const response = await call(service, 'GET', `/webhook-endpoints/whe_${'X'.repeat(97)}`, { token: tenant.token });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ errors: [{ message: expect.any(String), path: ['endpointId'] }] });
  });

  it("answers 404 for an unknown id and for another workspace's", async () => {
    const tenant = await createTenant(service);
    const other = await createTenant(service, 'Other workspace');
    const theirs = await createEndpoint(service, other, { url });
    for (const endpointId of [unknownId(), theirs.endpointId]) {
      const response = await call(service, 'GET', `/webhook-endpoints/${endpointId}`, { token: tenant.token });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual(notFound);
    }
  });
});

describe('PATCH /webhook-endpoints/{endpointId}', () => {
  it('changes the fields given, keeps the others and moves updatedAt', async () => {
    const tenant = await createTenant(service);
    service.deps.clock.set(new Date('2026-11-22T10:00:00.000Z'));
    const created = await createEndpoint(service, tenant, { url, description: 'Before', eventTypes: ['person.opted_out'] });
    service.deps.clock.set(new Date('2026-11-22T11:00:00.000Z'));
    const response = await patch(tenant, created.endpointId, { url: 'https://v6.example.com/new', eventTypes: [] });
    expect(response.statusCode, response.body).toBe(200);
    const { secret: _secret, ...before } = created;
    const expected = { ...before, url: 'https://v6.example.com/new', eventTypes: [], updatedAt: '2026-11-22T11:00:00.000Z' };
    expect(response.json()).toEqual(expected);
    expect(await read(tenant, created.endpointId)).toEqual(expected);
    const described = await patch(tenant, created.endpointId, { description: 'After', enabled: false });
    expect(described.json()).toMatchObject({ description: 'After', enabled: false, url: 'https://v6.example.com/new' });
  });

  it('enabling clears the reason the service disabled it for, and the failing streak', async () => {
    const tenant = await createTenant(service);
    const { endpointId } = await createEndpoint(service, tenant, { url });
    const reason = 'Disabled at 2026-11-27T10:00:00Z: every attempt failed since 2026-11-22T10:00:00Z (last: HTTP 500)';
    await service.deps.db
      .updateTable('webhook_endpoints')
      .set({ enabled: false, disabled_reason: reason, failing_since: '2026-11-22T10:00:00.000Z' })
      .where('workspace_id', '=', tenant.workspaceId)
      .where('endpoint_id', '=', endpointId)
      .execute();
    expect(await read(tenant, endpointId)).toMatchObject({ enabled: false, disabledReason: reason });
    const response = await patch(tenant, endpointId, { enabled: true });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({ enabled: true, disabledReason: null });
    expect(await read(tenant, endpointId)).toMatchObject({ enabled: true, disabledReason: null });
    const row = await service.deps.db.selectFrom('webhook_endpoints').where('endpoint_id', '=', endpointId).select('failing_since').executeTakeFirstOrThrow();
    expect(row.failing_since).toBeNull();
  });

  it('keeps the reason when only the description changes', async () => {
    const tenant = await createTenant(service);
    const { endpointId } = await createEndpoint(service, tenant, { url });
    await service.deps.db.updateTable('webhook_endpoints').set({ enabled: false, disabled_reason: 'Disabled by the service' }).where('endpoint_id', '=', endpointId).execute();
    expect((await patch(tenant, endpointId, { description: 'Renamed' })).json()).toMatchObject({ enabled: false, disabledReason: 'Disabled by the service' });
  });

  it.each(refusedUrls)('refuses %s as the new url with 400 on url, changing nothing', async (_case, target) => {
    const tenant = await createTenant(service);
    const { secret: _secret, ...created } = await createEndpoint(service, tenant, { url });
    const response = await patch(tenant, created.endpointId, { url: target, description: 'Changed' });
    expect(response.statusCode, response.body).toBe(400);
    expect(response.json()).toEqual({ errors: [{ message: expect.stringMatching(/^url /), path: ['url'] }] });
    expect(await read(tenant, created.endpointId)).toEqual(created);
  });

  it.each([
    ['an empty body', {}, []],
    ['an unknown event type', { eventTypes: ['study.exploded'] }, ['eventTypes', '0']],
    ['an event type twice', { eventTypes: ['study.status_changed', 'study.status_changed'] }, ['eventTypes']],
    ['a null url', { url: null }, ['url']],
    ['an unknown field', { secret: 'whsec_mine' }, ['secret']],
  ])('refuses %s with 400, changing nothing', async (_case, body, path) => {
    const tenant = await createTenant(service);
    const { secret: _secret, ...created } = await createEndpoint(service, tenant, { url });
    const response = await patch(tenant, created.endpointId, body);
    expect(response.statusCode, response.body).toBe(400);
    expect(response.json()).toEqual({ errors: [{ message: expect.any(String), path }] });
    expect(await read(tenant, created.endpointId)).toEqual(created);
  });

  it("answers 404 for an unknown id and for another workspace's, changing nothing", async () => {
    const tenant = await createTenant(service);
    const other = await createTenant(service, 'Other workspace');
    const { secret: _secret, ...theirs } = await createEndpoint(service, other, { url, description: 'Theirs' });
    for (const endpointId of [unknownId(), theirs.endpointId]) {
      const response = await patch(tenant, endpointId, { description: 'Mine now' });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual(notFound);
    }
    expect(await read(other, theirs.endpointId)).toEqual(theirs);
  });
});

describe('DELETE /webhook-endpoints/{endpointId}', () => {
  it('deletes the endpoint: it is gone from GET and the list, and a second delete is a 404', async () => {
    const tenant = await createTenant(service);
    const kept = await createEndpoint(service, tenant, { url });
    const { endpointId } = await createEndpoint(service, tenant, { url });
    const response = await call(service, 'DELETE', `/webhook-endpoints/${endpointId}`, { token: tenant.token });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toEqual({ endpointId });
    expect((await call(service, 'GET', `/webhook-endpoints/${endpointId}`, { token: tenant.token })).statusCode).toBe(404);
    expect((await list(tenant)).results.map((endpoint) => endpoint.endpointId)).toEqual([kept.endpointId]);
    const again = await call(service, 'DELETE', `/webhook-endpoints/${endpointId}`, { token: tenant.token });
    expect(again.statusCode).toBe(404);
    expect(again.json()).toEqual(notFound);
  });

  it("answers 404 for another workspace's endpoint, which stays", async () => {
    const tenant = await createTenant(service);
    const other = await createTenant(service, 'Other workspace');
    const theirs = await createEndpoint(service, other, { url });
    const response = await call(service, 'DELETE', `/webhook-endpoints/${theirs.endpointId}`, { token: tenant.token });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual(notFound);
    expect((await list(other)).total).toBe(1);
  });
});

describe('POST /webhook-endpoints/{endpointId}/rotate-secret', () => {
  it('answers a new secret; GET shows until when the previous one still signs, and no longer once that has passed', async () => {
    const tenant = await createTenant(service);
    const created = await createEndpoint(service, tenant, { url });
    service.deps.clock.set(new Date('2026-11-22T10:00:00.000Z'));
    const response = await call(service, 'POST', `/webhook-endpoints/${created.endpointId}/rotate-secret`, { token: tenant.token });
    expect(response.statusCode, response.body).toBe(200);
    const rotated = response.json<{ secret: string; previousSecretExpiresAt: string }>();
    expect(rotated).toEqual({ secret: expect.stringMatching(/^whsec_[A-Za-z0-9+/]{43}=$/), previousSecretExpiresAt: '2026-11-23T10:00:00.000Z' });
    expect(rotated.secret).not.toBe(created.secret);
    const got = await read(tenant, created.endpointId);
    expect(got).toMatchObject({ previousSecretExpiresAt: '2026-11-23T10:00:00.000Z', updatedAt: '2026-11-22T10:00:00.000Z' });
    expect(JSON.stringify(got)).not.toContain(rotated.secret.slice(6));
    service.deps.clock.set(new Date('2026-11-23T09:59:59.999Z'));
    expect((await read(tenant, created.endpointId)).previousSecretExpiresAt).toBe('2026-11-23T10:00:00.000Z');
    expect((await list(tenant)).results[0]!.previousSecretExpiresAt).toBe('2026-11-23T10:00:00.000Z');
    service.deps.clock.set(new Date('2026-11-23T10:00:00.000Z'));
    expect((await read(tenant, created.endpointId)).previousSecretExpiresAt).toBeNull();
    expect((await list(tenant)).results[0]!.previousSecretExpiresAt).toBeNull();
  });

  it("answers 404 for an unknown id and for another workspace's, whose secret stays", async () => {
    const tenant = await createTenant(service);
    const other = await createTenant(service, 'Other workspace');
    const theirs = await createEndpoint(service, other, { url });
    for (const endpointId of [unknownId(), theirs.endpointId]) {
      const response = await call(service, 'POST', `/webhook-endpoints/${endpointId}/rotate-secret`, { token: tenant.token });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual(notFound);
    }
    expect((await read(other, theirs.endpointId)).previousSecretExpiresAt).toBeNull();
  });

  it('refuses a body (400)', async () => {
    const tenant = await createTenant(service);
    const { endpointId } = await createEndpoint(service, tenant, { url });
    const response = await call(service, 'POST', `/webhook-endpoints/${endpointId}/rotate-secret`, { token: tenant.token, body: { secret: 'whsec_mine' } });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ errors: [{ message: expect.any(String), path: ['secret'] }] });
  });
});

describe('POST /webhook-endpoints/{endpointId}/test, with the address checks on', () => {
  it('refuses to connect when the name resolves to a private address by the time of sending (DNS rebinding)', async () => {
    const tenant = await createTenant(service);
    dns['rebind.example.com'] = [{ address: '93.184.216.34', family: 4 }];
    const { endpointId } = await createEndpoint(service, tenant, { url: 'https://rebind.example.com/x' });
    dns['rebind.example.com'] = [{ address: '127.0.0.1', family: 4 }];
    const response = await call(service, 'POST', `/webhook-endpoints/${endpointId}/test`, { token: tenant.token });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({ succeeded: false, responseStatus: null, error: expect.stringContaining('Refused to connect: rebind.example.com resolves to 127.0.0.1 is a loopback address') });
  });

  it('refuses to connect to a private address stored before the checks', async () => {
    const tenant = await createTenant(service);
    const { endpointId } = await createEndpoint(service, tenant, { url });
    await service.deps.db.updateTable('webhook_endpoints').set({ url: 'https://169.254.169.254/latest/meta-data' }).where('endpoint_id', '=', endpointId).execute();
    const response = await call(service, 'POST', `/webhook-endpoints/${endpointId}/test`, { token: tenant.token });
    expect(response.json()).toMatchObject({ succeeded: false, responseStatus: null, error: 'Refused to connect: 169.254.169.254 is a linkLocal address' });
  });
});

const endpointOf = async (tenant: Tenant, serviceUnderTest: TestService) => (await createEndpoint(serviceUnderTest, tenant, { url })).endpointId;

describeSecurity('POST /webhook-endpoints', () => service, {
  method: 'POST',
  right: 'webhooks:write',
  addressesResource: false,
  request: async () => ({ url: '/webhook-endpoints', body: { url } }),
});

describeSecurity('GET /webhook-endpoints', () => service, {
  method: 'GET',
  right: 'webhooks:read',
  addressesResource: false,
  request: async () => ({ url: '/webhook-endpoints' }),
});

describeSecurity('GET /webhook-endpoints/{endpointId}', () => service, {
  method: 'GET',
  right: 'webhooks:read',
  addressesResource: true,
  request: async (tenant, serviceUnderTest) => ({ url: `/webhook-endpoints/${await endpointOf(tenant, serviceUnderTest)}` }),
});

describeSecurity('PATCH /webhook-endpoints/{endpointId}', () => service, {
  method: 'PATCH',
  right: 'webhooks:write',
  addressesResource: true,
  request: async (tenant, serviceUnderTest) => ({ url: `/webhook-endpoints/${await endpointOf(tenant, serviceUnderTest)}`, body: { description: 'Changed' } }),
});

describeSecurity('DELETE /webhook-endpoints/{endpointId}', () => service, {
  method: 'DELETE',
  right: 'webhooks:write',
  addressesResource: true,
  request: async (tenant, serviceUnderTest) => ({ url: `/webhook-endpoints/${await endpointOf(tenant, serviceUnderTest)}` }),
});

describeSecurity('POST /webhook-endpoints/{endpointId}/rotate-secret', () => service, {
  method: 'POST',
  right: 'webhooks:write',
  addressesResource: true,
  request: async (tenant, serviceUnderTest) => ({ url: `/webhook-endpoints/${await endpointOf(tenant, serviceUnderTest)}/rotate-secret` }),
});
