import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type Tenant, type TestService } from '../../../test/harness.js';
import { createParticipant, incentiveRow, sendIncentive } from '../../../test/incentives-factory.js';
import { describeSecurity } from '../../../test/security.js';
import { TremendousFake } from '../../../test/fakes/tremendous-fake.js';
import { buildService } from '../../app.js';
import { ACCOUNT_CACHE_MS } from '../../providers/accounts.js';
import { CredentialBox } from '../../providers/credentials.js';
import { IncentiveProviders } from '../../providers/index.js';

let service: TestService;
let fake: TremendousFake;
beforeAll(async () => {
  fake = await TremendousFake.start();
  service = await startTestService({ providerApiUrls: { tremendous: fake.url } }, { providers: new IncentiveProviders('sandbox', { timeoutMs: 2_000 }) });
});
afterAll(async () => {
  await service?.stop();
  await fake?.close();
});

const put = (tenant: Tenant, body: object, token = tenant.token) => call(service, 'PUT', '/incentive-provider', { token, body });
const get = (tenant: Tenant) => call(service, 'GET', '/incentive-provider', { token: tenant.token });
const credentials = (apiKey = fake.apiKey) => ({ apiKey, campaignId: 'CAMPAIGN1', webhookSecret: 'whsec-private-key-of-the-webhook' });

describe('GET/PUT/DELETE /v1/incentive-provider', () => {
  it('reads the configured default until the workspace names its own', async () => {
    const tenant = await createTenant(service);
    const response = await get(tenant);
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toEqual({ provider: 'sandbox', source: 'CONFIGURATION', environment: null, credentialsSet: [], credentialsMissing: [], webhookUrl: null, version: null, updatedAt: null });
  });

  it('stores the credentials sealed, answers their names only, and says where to send webhooks', async () => {
    const tenant = await createTenant(service);
    const response = await put(tenant, { provider: 'tremendous', credentials: credentials() });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({
      provider: 'tremendous',
      source: 'WORKSPACE',
      environment: 'SANDBOX',
      credentialsSet: ['apiKey', 'campaignId', 'webhookSecret'],
      credentialsMissing: [],
      version: 1,
    });
    expect(response.json<{ webhookUrl: string }>().webhookUrl).toMatch(new RegExp(`/v1/provider-webhooks/tremendous/${tenant.workspaceId}$`));
    expect(response.body).not.toContain(fake.apiKey);
    expect((await get(tenant)).body).not.toContain(fake.apiKey);
    const stored = await service.deps.db.selectFrom('incentive_provider_accounts').selectAll().where('workspace_id', '=', tenant.workspaceId).executeTakeFirstOrThrow();
    expect(stored.credentials_ciphertext).not.toContain(fake.apiKey);
    expect(stored.credentials_ciphertext.startsWith(`${stored.credentials_key_id}.`)).toBe(true);
    // Orders go to Tremendous from now on, with the key given.
    const participant = await createParticipant(service, tenant);
    const incentive = await sendIncentive(service, tenant, participant.participantId);
    expect(await incentiveRow(service, tenant, incentive.incentiveId)).toMatchObject({ provider: 'tremendous', provider_state: 'ORDERED' });
    expect(fake.orderOf(incentive.incentiveId)?.rewards[0]?.value).toEqual({ denomination: 50, currency_code: 'USD' });
  });

  it('refuses a missing or unknown credential, naming it', async () => {
    const tenant = await createTenant(service);
    const missing = await put(tenant, { provider: 'tremendous', credentials: { apiKey: 'k', campaignId: 'c' } });
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toEqual({ errors: [{ message: 'tremendous needs the credentials webhookSecret', path: ['credentials', 'webhookSecret'] }] });
    const unknown = await put(tenant, { provider: 'tremendous', credentials: { ...credentials(), password: 'x' } });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json<{ errors: { path: string[] }[] }>().errors[0]!.path).toEqual(['credentials', 'password']);
    const sandbox = await put(tenant, { provider: 'sandbox', credentials: { apiKey: 'x' } });
    expect(sandbox.statusCode).toBe(400);
    const url = await put(tenant, { provider: 'tremendous', credentials: credentials(), apiBaseUrl: 'http://169.254.169.254' });
    expect(url.statusCode, 'no workspace chooses a URL').toBe(400);
    expect((await get(tenant)).json()).toMatchObject({ source: 'CONFIGURATION' });
  });

  it('keeps stored credentials when switching back, bumps the version, and DELETE returns to the default', async () => {
    const tenant = await createTenant(service);
    expect((await put(tenant, { provider: 'tremendous', credentials: credentials() })).statusCode).toBe(200);
    expect((await put(tenant, { provider: 'sandbox' })).json()).toMatchObject({ provider: 'sandbox', source: 'WORKSPACE' });
    const back = await put(tenant, { provider: 'tremendous', environment: 'PRODUCTION' });
    expect(back.statusCode, back.body).toBe(200);
    expect(back.json()).toMatchObject({ provider: 'tremendous', environment: 'PRODUCTION', version: 2, credentialsSet: ['apiKey', 'campaignId', 'webhookSecret'] });
    const cleared = await call(service, 'DELETE', '/incentive-provider', { token: tenant.token });
    expect(cleared.statusCode).toBe(200);
    expect(cleared.json()).toMatchObject({ provider: 'sandbox', source: 'CONFIGURATION' });
    // The account stays (unselected), for the incentives ordered through it.
    const rows = await service.deps.db.selectFrom('incentive_provider_accounts').select(['provider', 'selected']).where('workspace_id', '=', tenant.workspaceId).orderBy('provider').execute();
    expect(rows).toEqual([
      { provider: 'sandbox', selected: false },
      { provider: 'tremendous', selected: false },
    ]);
  });

  it('takes two changes sent at once naming different providers one after the other: both answered, one selected', async () => {
    const tenant = await createTenant(service);
    for (let round = 0; round < 3; round++) {
      const answers = await Promise.all([put(tenant, { provider: 'tremendous', credentials: credentials() }), put(tenant, { provider: 'sandbox' })]);
      expect(answers.map((answer) => answer.statusCode)).toEqual([200, 200]);
      const selected = await service.deps.db.selectFrom('incentive_provider_accounts').select('provider').where('workspace_id', '=', tenant.workspaceId).where('selected', '=', true).execute();
      expect(selected).toHaveLength(1);
      expect((await get(tenant)).json()).toMatchObject({ provider: selected[0]!.provider, source: 'WORKSPACE' });
    }
  });

  it('a credential change reaches another instance within the cache time: its next order uses the new key', { timeout: 30_000 }, async () => {
    const tenant = await createTenant(service);
    const original = fake.apiKey;
    expect((await put(tenant, { provider: 'tremendous', credentials: credentials() })).statusCode).toBe(200);
    const other = await buildService({ config: service.deps.config, database: service.database, clock: service.deps.clock, migrate: false, logger: false, providers: new IncentiveProviders('sandbox', { timeoutMs: 2_000 }) });
    try {
      const onOther = (participantId: string) =>
        other.app.inject({ method: 'POST', url: '/v1/incentives', headers: { authorization: `Bearer ${tenant.token}` }, payload: { participantId, type: 'MONEY_OR_GIFT_CARD', amountCents: 1000 } });
      const first = await onOther((await createParticipant(service, tenant)).participantId);
      expect(first.json()).toMatchObject({ status: 'UNCLAIMED' });
      // The key is rotated at Tremendous and in the workspace (through this instance).
      const newKey = `TEST_rotated_${Date.now()}`;
      fake.apiKeys.add(newKey);
      expect((await put(tenant, { provider: 'tremendous', credentials: credentials(newKey) })).json()).toMatchObject({ version: 2 });
      fake.apiKeys.delete(original);
      await sleep(ACCOUNT_CACHE_MS + 200);
      const second = await onOther((await createParticipant(service, tenant)).participantId);
      expect(second.statusCode, second.body).toBe(201);
      const stored = await incentiveRow(service, tenant, second.json<{ incentiveId: string }>().incentiveId);
      expect(stored.provider_state, 'ordered with the new key (the old one is refused 401)').toBe('ORDERED');
    } finally {
      fake.apiKeys.clear();
      fake.apiKeys.add(original);
      await other.close();
    }
  });
});

describe('CredentialBox', () => {
  const scope = { workspaceId: 'wsp_a', provider: 'tremendous' };
  const key = (byte: number) => Buffer.alloc(32, byte);

  it('opens what it sealed, for the same workspace and provider only', () => {
    const box = CredentialBox.fromRoot(key(1));
    const sealed = box.seal({ apiKey: 'secret' }, scope);
    expect(box.open(sealed, scope)).toEqual({ apiKey: 'secret' });
    expect(() => box.open(sealed, { ...scope, workspaceId: 'wsp_b' })).toThrow();
    expect(() => box.open(sealed, { ...scope, provider: 'tango' })).toThrow();
  });

  it('after a rotation opens with the previous key, seals with the new one, and says what needs sealing again', () => {
    const before = CredentialBox.fromRoot(key(1));
    const sealed = before.seal({ apiKey: 'secret' }, scope);
    const after = CredentialBox.fromRoot(key(2), key(1));
    expect(after.open(sealed, scope)).toEqual({ apiKey: 'secret' });
    expect(after.needsResealing(before.keyId)).toBe(true);
    expect(after.seal({ apiKey: 'secret' }, scope).startsWith(`${after.keyId}.`)).toBe(true);
    expect(() => CredentialBox.fromRoot(key(3)).open(sealed, scope)).toThrow(/no longer has/);
  });
});

describeSecurity('GET /incentive-provider', () => service, {
  method: 'GET',
  right: 'incentive-providers:manage',
  addressesResource: false,
  request: async () => ({ url: '/incentive-provider' }),
});

describeSecurity('PUT /incentive-provider', () => service, {
  method: 'PUT',
  right: 'incentive-providers:manage',
  addressesResource: false,
  request: async () => ({ url: '/incentive-provider', body: { provider: 'sandbox' } }),
});

describeSecurity('DELETE /incentive-provider', () => service, {
  method: 'DELETE',
  right: 'incentive-providers:manage',
  addressesResource: false,
  request: async () => ({ url: '/incentive-provider' }),
});
