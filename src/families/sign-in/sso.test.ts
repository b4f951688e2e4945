import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type Tenant, type TestService, uniqueEmail } from '../../../test/harness.js';
import { signInAtProvider, startIdentityProvider, type TestIdentityProvider } from '../../../test/oidc-provider.js';
import { describeSecurity } from '../../../test/security.js';
import { CredentialBox } from '../../providers/credentials.js';
import { createUser, setUserStatus } from '../workspaces/service.js';
import { SingleSignOn } from './sso.js';

/**
 * Single sign-on with OpenID Connect (issue 36, item 2), against a real provider (`oidc-provider`)
 * on loopback: the workspace's settings, the browser's way there and back (PKCE, state, nonce, the
 * flow cookie), finding the user by a verified address or by the provider's subject,
 * just-in-time membership for the workspace's domains, and every way it refuses.
 */

const publicUrl = 'http://127.0.0.1:4599';
const redirectUri = `${publicUrl}/v1/session/oidc/callback`;
let service: TestService;
let idp: TestIdentityProvider;
beforeAll(async () => {
  idp = await startIdentityProvider({ redirectUris: [redirectUri] });
  service = await startTestService({ publicUrl, oidcAllowHttp: true, oidcAllowPrivateIssuers: true, signInRateLimitMax: 100_000 });
});
afterAll(async () => {
  service?.deps.clock.reset();
  await service?.stop();
  await idp?.close();
});

const slugOf = async (tenant: Tenant) => (await service.deps.db.selectFrom('workspaces').where('workspace_id', '=', tenant.workspaceId).select('slug').executeTakeFirstOrThrow()).slug;
const settingsBody = (extra: Record<string, unknown> = {}) => ({ issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret, ...extra });

async function withSso(extra: Record<string, unknown> = {}) {
  const tenant = await createTenant(service);
  const put = await call(service, 'PUT', '/sso-settings', { token: tenant.token, body: settingsBody(extra) });
  expect(put.statusCode, put.body).toBe(200);
  return { tenant, slug: await slugOf(tenant) };
}

interface Outcome {
  location: string;
  sessionCookie?: string;
}

/** A browser's whole sign-in: start, the provider's page with `login`, and back to the callback. */
async function signInBySso(slug: string, login: string, tamper: (callback: URL, flowCookie: string) => { url: URL; cookie: string } = (url, cookie) => ({ url, cookie })): Promise<Outcome> {
  const start = await service.app.inject({ method: 'GET', url: `/v1/session/oidc/start?workspace=${encodeURIComponent(slug)}` });
  expect(start.statusCode, start.body).toBe(303);
  const location = String(start.headers.location);
  if (!location.startsWith(idp.issuer)) return { location };
  const flowCookie = String(start.headers['set-cookie']);
  expect(flowCookie).toMatch(/^recruit_sso=[A-Za-z0-9_-]{43}; Path=\/v1\/session\/oidc; HttpOnly; SameSite=Lax; Max-Age=600$/);
  const callback = await signInAtProvider(location, login, redirectUri);
  const sent = tamper(callback, flowCookie.split(';')[0]!);
  return finish(sent.url, sent.cookie);
}

async function finish(url: URL, cookie: string): Promise<Outcome> {
  const back = await service.app.inject({ method: 'GET', url: `${url.pathname}${url.search}`, headers: { cookie } });
  expect(back.statusCode, back.body).toBe(303);
  const cookies = ([] as string[]).concat(back.headers['set-cookie'] ?? []);
  expect(cookies.some((line) => line.startsWith('recruit_sso=; Path=/v1/session/oidc') && line.includes('Max-Age=0')), 'the flow cookie is cleared').toBe(true);
  const session = cookies.find((line) => line.startsWith('recruit_session='));
  return { location: String(back.headers.location), ...(session ? { sessionCookie: session.split(';')[0]! } : {}) };
}

const usersOf = (tenant: Tenant) => service.deps.db.selectFrom('users').where('workspace_id', '=', tenant.workspaceId).select(['user_id', 'email', 'status', 'role', 'fullname']).execute();

describe('the settings', () => {
  it('are set, read without the secret, sealed at rest, and removed', async () => {
    const tenant = await createTenant(service);
    expect((await call(service, 'GET', '/sso-settings', { token: tenant.token })).statusCode).toBe(404);
    const put = await call(service, 'PUT', '/sso-settings', { token: tenant.token, body: settingsBody({ jitDomains: ['Example.ORG', 'lab.example.test'], jitRole: 'RESEARCHER' }) });
    expect(put.statusCode, put.body).toBe(200);
    const expected = { issuer: idp.issuer, clientId: idp.clientId, clientSecretSet: true, jitDomains: ['example.org', 'lab.example.test'], jitRole: 'RESEARCHER', enabled: true, redirectUri, version: 1, updatedAt: expect.any(String) };
    expect(put.json()).toEqual(expected);
    expect((await call(service, 'GET', '/sso-settings', { token: tenant.token })).json()).toEqual(expected);
    const stored = await service.deps.db.selectFrom('sso_settings').where('workspace_id', '=', tenant.workspaceId).selectAll().executeTakeFirstOrThrow();
    expect(stored.client_secret_sealed).not.toContain(idp.clientSecret);
    expect(JSON.stringify(stored)).not.toContain(idp.clientSecret);
    // Left out, the secret stays; null removes it.
    const kept = await call(service, 'PUT', '/sso-settings', { token: tenant.token, body: { issuer: idp.issuer, clientId: idp.clientId } });
    expect(kept.json()).toMatchObject({ clientSecretSet: true, version: 2, jitDomains: [], jitRole: 'OBSERVER' });
    const none = await call(service, 'PUT', '/sso-settings', { token: tenant.token, body: { issuer: idp.issuer, clientId: idp.clientId, clientSecret: null } });
    expect(none.json()).toMatchObject({ clientSecretSet: false, version: 3 });
    expect((await call(service, 'DELETE', '/sso-settings', { token: tenant.token })).json()).toEqual({ deleted: true });
    expect((await call(service, 'DELETE', '/sso-settings', { token: tenant.token })).statusCode).toBe(404);
  });

  it('refuses an issuer that cannot be discovered, and bad fields by name; a refused PUT changes nothing', async () => {
    const { tenant } = await withSso();
    const unreachable = await call(service, 'PUT', '/sso-settings', { token: tenant.token, body: settingsBody({ issuer: 'http://127.0.0.1:9/nothing-here', clientSecret: 'another secret' }) });
    expect(unreachable.statusCode).toBe(400);
    expect(unreachable.json().errors[0]).toMatchObject({ path: ['issuer'], message: expect.stringContaining('discovery document') });
    // A document served at another issuer's address does not pass as this issuer's.
    const elsewhere = await call(service, 'PUT', '/sso-settings', { token: tenant.token, body: settingsBody({ issuer: `${idp.issuer}/other` }) });
    expect(elsewhere.statusCode).toBe(400);
    for (const [body, path] of [
      [{ clientId: 'x' }, 'issuer'],
      [{ issuer: 'not a url', clientId: 'x' }, 'issuer'],
      [{ issuer: idp.issuer, clientId: '' }, 'clientId'],
      [{ issuer: idp.issuer, clientId: 'x', jitDomains: ['not a domain'] }, 'jitDomains'],
      [{ issuer: idp.issuer, clientId: 'x', jitRole: 'SUPER_ADMIN' }, 'jitRole'],
      [{ issuer: idp.issuer, clientId: 'x', extra: 1 }, 'extra'],
    ] as const) {
      const refused = await call(service, 'PUT', '/sso-settings', { token: tenant.token, body });
      expect(refused.statusCode, JSON.stringify(body)).toBe(400);
      expect(JSON.stringify(refused.json().errors)).toContain(path);
    }
    expect((await call(service, 'GET', '/sso-settings', { token: tenant.token })).json()).toMatchObject({ version: 1, clientSecretSet: true, issuer: idp.issuer });
  });

  it('keeps providers at https and public addresses unless the operator allows otherwise', async () => {
    const box = new CredentialBox(Buffer.alloc(32, 7));
    const strict = new SingleSignOn(box, { allowHttp: false, allowPrivate: false, resolve: async () => [{ address: '10.0.0.5', family: 4 }] });
    expect(await strict.refusal('http://login.example.org')).toBe('must be an https URL');
    expect(await strict.refusal('https://127.0.0.1')).toMatch(/private address/);
    expect(await strict.refusal('https://[::ffff:7f00:1]')).toMatch(/private address/);
    expect(await strict.refusal('https://login.example.org')).toMatch(/resolves to/);
    const intranet = new SingleSignOn(box, { allowHttp: false, allowPrivate: true });
    expect(await intranet.refusal('https://10.0.0.5')).toBeUndefined();
    expect(await intranet.refusal('http://10.0.0.5')).toBe('must be an https URL');
  });
});

describe('signing in', () => {
  it('signs in an ACTIVE user by their verified address: a session (method OIDC), the console, one audit entry', async () => {
    const { tenant, slug } = await withSso();
    const email = uniqueEmail('ada');
    const { userId } = await createUser(service.deps.db, { workspaceId: tenant.workspaceId, email, role: 'RESEARCHER' });
    const outcome = await signInBySso(slug, email);
    expect(outcome.location).toBe('/console/?sso=signed-in');
    expect(outcome.sessionCookie).toMatch(/^recruit_session=[A-Za-z0-9_-]{43}$/);
    const session = await service.app.inject({ method: 'GET', url: '/v1/session', headers: { cookie: outcome.sessionCookie! } });
    expect(session.statusCode, session.body).toBe(200);
    expect(session.json()).toMatchObject({ method: 'OIDC', workspaceId: tenant.workspaceId, userId });
    const me = await service.app.inject({ method: 'GET', url: '/v1/me', headers: { cookie: outcome.sessionCookie! } });
    expect(me.json()).toMatchObject({ email });
    const audit = await call(service, 'GET', '/audit-events', { token: tenant.token, query: { operationId: 'finishSsoSignIn' } });
    expect(audit.json().results).toEqual([
      expect.objectContaining({ actor: expect.objectContaining({ kind: 'USER', userId: session.json().userId, credentialId: session.json().sessionId }), resourceType: 'session', resourceId: session.json().sessionId }),
    ]);
    // No attempt is left behind.
    expect(await service.deps.db.selectFrom('sso_sign_in_attempts').where('workspace_id', '=', tenant.workspaceId).select('attempt_id').execute()).toEqual([]);
  });

  it('makes a member of a person at a just-in-time domain, with the chosen role; refuses one elsewhere', async () => {
    const { tenant, slug } = await withSso({ jitDomains: ['jit.example.test'], jitRole: 'RESEARCHER' });
    const email = `grace.${Date.now()}@JIT.example.test`;
    idp.accounts.set(email, { name: 'Grace Hopper' });
    const outcome = await signInBySso(slug, email);
    expect(outcome.location).toBe('/console/?sso=signed-in');
    expect((await usersOf(tenant)).filter((row) => row.email === email)).toEqual([expect.objectContaining({ status: 'ACTIVE', role: 'RESEARCHER', fullname: 'Grace Hopper' })]);
    // The second time, the same user (found by the provider's subject).
    expect((await signInBySso(slug, email)).sessionCookie).toBeDefined();
    expect((await usersOf(tenant)).filter((row) => row.email === email)).toHaveLength(1);

    const before = await usersOf(tenant);
    const outsider = await signInBySso(slug, uniqueEmail('outsider'));
    expect(outsider).toEqual({ location: '/console/?sso_error=no_account' });
    expect(await usersOf(tenant)).toEqual(before);
  });

  it('refuses an address the provider did not verify, even at a just-in-time domain', async () => {
    const { tenant, slug } = await withSso({ jitDomains: ['jit.example.test'] });
    const email = `unverified.${Date.now()}@jit.example.test`;
    idp.accounts.set(email, { email_verified: false });
    const before = await usersOf(tenant);
    expect(await signInBySso(slug, email)).toEqual({ location: '/console/?sso_error=unverified_email' });
    expect(await usersOf(tenant)).toEqual(before);
  });

  it('finds a user by the subject after the provider changed the address; an INVITED user accepts by signing in; a DEACTIVATED one is refused', async () => {
    const { tenant, slug } = await withSso();
    const subject = `subject-${Date.now()}`;
    const email = uniqueEmail('kept');
    await createUser(service.deps.db, { workspaceId: tenant.workspaceId, email, role: 'OBSERVER' });
    idp.accounts.set(subject, { email });
    expect((await signInBySso(slug, subject)).sessionCookie).toBeDefined();
    idp.accounts.set(subject, { email: uniqueEmail('renamed') });
    const again = await signInBySso(slug, subject);
    expect(again.sessionCookie).toBeDefined();
    const me = await service.app.inject({ method: 'GET', url: '/v1/me', headers: { cookie: again.sessionCookie! } });
    expect(me.json()).toMatchObject({ email });

    const invitedEmail = uniqueEmail('invited');
    const invited = await createUser(service.deps.db, { workspaceId: tenant.workspaceId, email: invitedEmail, role: 'OBSERVER', status: 'INVITED' });
    expect((await signInBySso(slug, invitedEmail)).sessionCookie).toBeDefined();
    expect((await usersOf(tenant)).find((row) => row.email === invitedEmail)?.status).toBe('ACTIVE');

    await setUserStatus(service.deps.db, tenant.workspaceId, invited.userId, 'DEACTIVATED');
    expect(await signInBySso(slug, invitedEmail)).toEqual({ location: '/console/?sso_error=deactivated' });
  });

  it('refuses a callback without the flow cookie, with a forged one, spent twice, tampered, or after 10 minutes', async () => {
    const { tenant, slug } = await withSso();
    const email = uniqueEmail('careful');
    await createUser(service.deps.db, { workspaceId: tenant.workspaceId, email, role: 'OBSERVER' });

    expect(await signInBySso(slug, email, (url) => ({ url, cookie: '' }))).toEqual({ location: '/console/?sso_error=expired' });
    expect(await signInBySso(slug, email, (url) => ({ url, cookie: `recruit_sso=${'A'.repeat(43)}` }))).toEqual({ location: '/console/?sso_error=expired' });

    let replay: { url: URL; cookie: string } | undefined;
    const first = await signInBySso(slug, email, (url, cookie) => (replay = { url, cookie }));
    expect(first.sessionCookie).toBeDefined();
    expect(await finish(replay!.url, replay!.cookie)).toEqual({ location: '/console/?sso_error=expired' });

    const tampered = await signInBySso(slug, email, (url, cookie) => {
      const forged = new URL(url);
      forged.searchParams.set('state', 'a-state-of-someone-else');
      return { url: forged, cookie };
    });
    expect(tampered).toEqual({ location: '/console/?sso_error=provider' });

    const late = await signInBySso(slug, email, (url, cookie) => {
      service.deps.clock.set(new Date(Date.now() + 11 * 60_000));
      return { url, cookie };
    });
    service.deps.clock.reset();
    expect(late).toEqual({ location: '/console/?sso_error=expired' });

    // The provider said no.
    const start = await service.app.inject({ method: 'GET', url: `/v1/session/oidc/start?workspace=${slug}` });
    const cookie = String(start.headers['set-cookie']).split(';')[0]!;
    const state = new URL(String(start.headers.location)).searchParams.get('state')!;
    expect(await finish(new URL(`${redirectUri}?error=access_denied&state=${state}`), cookie)).toEqual({ location: '/console/?sso_error=denied' });
  });

  it('sends the browser back when the workspace has no SSO, or it is off; and validates the workspace named', async () => {
    const tenant = await createTenant(service);
    expect((await signInBySso(await slugOf(tenant), 'anyone@example.test')).location).toBe('/console/?sso_error=unavailable');
    expect((await signInBySso('no-such-workspace', 'anyone@example.test')).location).toBe('/console/?sso_error=unavailable');
    const { slug } = await withSso({ enabled: false });
    expect((await signInBySso(slug, 'anyone@example.test')).location).toBe('/console/?sso_error=unavailable');
    const missing = await service.app.inject({ method: 'GET', url: '/v1/session/oidc/start' });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().errors[0].path).toEqual(['workspace']);
  });

  it('keeps workspaces apart: one workspace’s provider signs no one into another', async () => {
    const first = await withSso({ jitDomains: ['shared.example.test'] });
    const second = await createTenant(service);
    const email = `both.${Date.now()}@shared.example.test`;
    expect((await signInBySso(first.slug, email)).sessionCookie).toBeDefined();
    expect((await usersOf(second)).some((row) => row.email === email)).toBe(false);
    expect((await call(service, 'GET', '/sso-settings', { token: second.token })).statusCode).toBe(404);
  });

  it('ends an SSO session when its user is deactivated', async () => {
    const { tenant, slug } = await withSso({ jitDomains: ['stop.example.test'] });
    const email = `stopped.${Date.now()}@stop.example.test`;
    const outcome = await signInBySso(slug, email);
    const userId = (await usersOf(tenant)).find((row) => row.email === email)!.user_id;
    expect((await call(service, 'POST', `/users/${userId}/deactivate`, { token: tenant.token })).statusCode).toBe(200);
    expect((await service.app.inject({ method: 'GET', url: '/v1/session', headers: { cookie: outcome.sessionCookie! } })).statusCode).toBe(401);
  });
});

const ssoSettingsOf = async (tenant: Tenant) => {
  await call(service, 'PUT', '/sso-settings', { token: tenant.token, body: settingsBody() });
  return { url: '/sso-settings' };
};

describeSecurity('GET /sso-settings', () => service, { method: 'GET', right: 'users:write', addressesResource: true, request: ssoSettingsOf });
describeSecurity('PUT /sso-settings', () => service, { method: 'PUT', right: 'users:write', addressesResource: false, request: async () => ({ url: '/sso-settings', body: settingsBody() }) });
describeSecurity('DELETE /sso-settings', () => service, { method: 'DELETE', right: 'users:write', addressesResource: true, request: ssoSettingsOf });
