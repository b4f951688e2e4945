import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type Tenant, type TestService, uniqueEmail } from '../../../test/harness.js';
import { describeSecurity } from '../../../test/security.js';
import { type SmtpReceiver, smtpConfig, startSmtpReceiver } from '../../../test/smtp-receiver.js';
import { setUserStatus } from '../workspaces/service.js';

/**
 * A team signs in (issue 36, items 1 and 2) through HTTP: invitations (create, resend, revoke,
 * accept), sign-in by emailed link and by password, the session cookie and its CSRF token, its
 * idle and absolute ends, sign-out (everywhere), deactivation, enumeration and rate limits.
 */

let receiver: SmtpReceiver;
let service: TestService;
beforeAll(async () => {
  receiver = await startSmtpReceiver();
  service = await startTestService({ ...smtpConfig(receiver), signInRateLimitMax: 100_000 });
});
afterAll(async () => {
  service?.deps.clock.reset();
  await service?.stop();
  await receiver?.close();
});

type Headers = Record<string, string>;
const inject = (method: string, url: string, options: { body?: unknown; headers?: Headers } = {}) =>
  service.app.inject({ method: method as 'GET', url: `/v1${url}`, headers: options.headers ?? {}, ...(options.body !== undefined ? { payload: options.body as object } : {}) });
const runJobs = (tenant: Tenant) => service.jobs.runDue({ workspaceId: tenant.workspaceId });
const slugOf = async (tenant: Tenant) => (await service.deps.db.selectFrom('workspaces').where('workspace_id', '=', tenant.workspaceId).select('slug').executeTakeFirstOrThrow()).slug;
/** The token of the last link emailed to the address whose URL path is `path`. */
function linkToken(email: string, path: string): string {
  const mail = receiver.to(email).at(-1);
  expect(mail, `a mail to ${email}`).toBeDefined();
  const match = new RegExp(`https://recruit\\.example\\.test${path}#([A-Za-z0-9_-]{43})`).exec(mail!.parsed.text ?? '');
  expect(match, mail!.parsed.text).not.toBeNull();
  return match![1]!;
}
/** The session cookie a sign-in answer set (`name=value`), checking its attributes. */
function cookieOf(response: LightMyRequestResponse): string {
  const header = String(response.headers['set-cookie']);
  expect(header).toMatch(/^recruit_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=604800; Secure$/);
  return header.split(';')[0]!;
}
interface Signed {
  cookie: string;
  csrf: string;
  sessionId: string;
}
const signed = (response: LightMyRequestResponse): Signed => {
  expect(response.statusCode, response.body).toBe(200);
  const body = response.json<{ csrfToken: string; sessionId: string }>();
  expect(body.sessionId).toMatch(/^ses_[0-9A-Z]{26}$/);
  return { cookie: cookieOf(response), csrf: body.csrfToken, sessionId: body.sessionId };
};
const withSession = (session: Signed, csrf = true): Headers => ({ cookie: session.cookie, ...(csrf ? { 'x-csrf-token': session.csrf } : {}) });

async function invite(tenant: Tenant, body: Record<string, unknown> = {}) {
  const email = uniqueEmail('invitee');
  const response = await call(service, 'POST', '/users/invitations', { token: tenant.token, body: { email, role: 'RESEARCHER', ...body } });
  expect(response.statusCode, response.body).toBe(201);
  await runJobs(tenant);
  return { email, userId: response.json<{ userId: string }>().userId };
}

async function activeUser(tenant: Tenant, password = 'a long enough password') {
  const { email, userId } = await invite(tenant);
  const accepted = signed(await inject('POST', '/session/invitation', { body: { token: linkToken(email, '/console/invitation'), password } }));
  return { email, userId, password, session: accepted };
}

describe('invitations', () => {
  it('invites by email (INVITED, a 7-day single-use link), and accepting makes the user ACTIVE and signs them in', async () => {
    const tenant = await createTenant(service);
    const team = await service.deps.db.insertInto('teams').values({ workspace_id: tenant.workspaceId, team_id: 'tem_01JD00000000000000000000T1', name: 'Discovery', created_at: new Date().toISOString() }).execute();
    expect(team).toBeDefined();
    const email = uniqueEmail('grace');
    const created = await call(service, 'POST', '/users/invitations', { token: tenant.token, body: { email, role: 'OPS_MANAGER', seat: 'RESEARCHER_PAID', fullname: 'Grace Hopper', teamIds: ['tem_01JD00000000000000000000T1'] } });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json()).toEqual({ userId: expect.stringMatching(/^usr_/), status: 'INVITED', expiresInDays: 7 });
    await runJobs(tenant);
    const mail = receiver.to(email).at(-1)!;
    expect(mail.parsed.subject).toBe('You are invited to Test workspace');
    const token = linkToken(email, '/console/invitation');
    const links = await service.deps.db.selectFrom('user_sign_in_links').selectAll().where('workspace_id', '=', tenant.workspaceId).execute();
    expect(links).toHaveLength(1);
    expect(JSON.stringify(links)).not.toContain(token);
    expect(new Date(links[0]!.expires_at).getTime() - new Date(links[0]!.created_at).getTime()).toBe(7 * 86_400_000);

    const accepted = signed(await inject('POST', '/session/invitation', { body: { token, password: 'correct horse battery staple' } }));
    const me = await inject('GET', '/me', { headers: withSession(accepted) });
    expect(me.statusCode, me.body).toBe(200);
    expect(me.json()).toMatchObject({ email, fullname: 'Grace Hopper', status: 'ACTIVE', role: 'OPS_MANAGER', seat: 'RESEARCHER_PAID', teams: [{ name: 'Discovery' }] });
    const stored = await service.deps.db.selectFrom('user_passwords').select('password_hash').executeTakeFirstOrThrow();
    expect(stored.password_hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    // Used once: the second time, the one generic refusal.
    const again = await inject('POST', '/session/invitation', { body: { token } });
    expect(again.statusCode).toBe(400);
    expect(again.json()).toEqual({ errors: [{ message: expect.stringContaining('The link is not valid'), path: ['token'] }] });
  });

  it('refuses an address already a user (409), an unknown team (404) and a bad role (400), changing nothing', async () => {
    const tenant = await createTenant(service);
    const { email } = await invite(tenant);
    const taken = await call(service, 'POST', '/users/invitations', { token: tenant.token, body: { email: email.toUpperCase(), role: 'RESEARCHER' } });
    expect(taken.statusCode).toBe(409);
    expect(taken.json()).toEqual({ errors: [{ message: 'A user with this email already exists in this workspace', path: ['email'] }] });
    const other = uniqueEmail();
    const team = await call(service, 'POST', '/users/invitations', { token: tenant.token, body: { email: other, role: 'RESEARCHER', teamIds: ['tem_01JD0000000000000000000000'] } });
    expect(team.statusCode).toBe(404);
    expect(team.json()).toEqual({ errors: [{ message: 'Team not found', path: ['teamIds', '0'] }] });
    const role = await call(service, 'POST', '/users/invitations', { token: tenant.token, body: { email: other, role: 'KING' } });
    expect(role.statusCode).toBe(400);
    expect(role.json<{ errors: { path: string[] }[] }>().errors[0]!.path).toEqual(['role']);
    const users = await service.deps.db.selectFrom('users').where('workspace_id', '=', tenant.workspaceId).where('email', '=', other).select('user_id').execute();
    expect(users).toEqual([]);
  });

  it('invites a CUSTOM user with one of the custom roles, whose session then holds that role\'s rights alone', async () => {
    const tenant = await createTenant(service);
    const role = await call(service, 'POST', '/custom-roles', { token: tenant.token, body: { name: 'Study reader', rights: ['studies:read', 'users:read'] } });
    expect(role.statusCode, role.body).toBe(201);
    const customRoleId = role.json<{ customRoleId: string }>().customRoleId;
    const missing = await call(service, 'POST', '/users/invitations', { token: tenant.token, body: { email: uniqueEmail(), role: 'CUSTOM' } });
    expect(missing.statusCode).toBe(400);
    expect(missing.json<{ errors: { path: string[] }[] }>().errors[0]!.path).toEqual(['customRoleId']);
    const stray = await call(service, 'POST', '/users/invitations', { token: tenant.token, body: { email: uniqueEmail(), role: 'RESEARCHER', customRoleId } });
    expect(stray.statusCode).toBe(400);
    const unknown = await call(service, 'POST', '/users/invitations', { token: tenant.token, body: { email: uniqueEmail(), role: 'CUSTOM', customRoleId: 'crl_01JD0000000000000000000000' } });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ errors: [{ message: 'Custom role not found', path: ['customRoleId'] }] });

    const { email } = await invite(tenant, { role: 'CUSTOM', customRoleId });
    const session = signed(await inject('POST', '/session/invitation', { body: { token: linkToken(email, '/console/invitation') } }));
    expect((await inject('GET', '/studies', { headers: withSession(session) })).statusCode).toBe(200);
    const refused = await inject('GET', '/properties', { headers: withSession(session) });
    expect(refused.statusCode).toBe(403);
  });

  it('resends a new link (the old one stops working) and revokes (the link dies, the address may be invited again)', async () => {
    const tenant = await createTenant(service);
    const { email, userId } = await invite(tenant);
    const first = linkToken(email, '/console/invitation');
    const resent = await call(service, 'POST', `/users/${userId}/invitation`, { token: tenant.token });
    expect(resent.statusCode, resent.body).toBe(202);
    expect((await inject('POST', '/session/invitation', { body: { token: first } })).statusCode, 'replaced at once').toBe(400);
    await runJobs(tenant);
    const second = linkToken(email, '/console/invitation');
    expect(second).not.toBe(first);
    const revoked = await call(service, 'DELETE', `/users/${userId}/invitation`, { token: tenant.token });
    expect(revoked.statusCode, revoked.body).toBe(200);
    expect(revoked.json()).toEqual({ userId, revoked: true });
    expect((await inject('POST', '/session/invitation', { body: { token: second } })).statusCode).toBe(400);
    expect((await call(service, 'DELETE', `/users/${userId}/invitation`, { token: tenant.token })).statusCode).toBe(404);
    expect((await call(service, 'POST', '/users/invitations', { token: tenant.token, body: { email, role: 'OBSERVER' } })).statusCode).toBe(201);
  });

  it('answers 409 for a user no longer INVITED, and an expired link gets the generic refusal', async () => {
    const tenant = await createTenant(service);
    const { userId } = await activeUser(tenant);
    expect((await call(service, 'POST', `/users/${userId}/invitation`, { token: tenant.token })).statusCode).toBe(409);
    expect((await call(service, 'DELETE', `/users/${userId}/invitation`, { token: tenant.token })).statusCode).toBe(409);
    const { email } = await invite(tenant);
    const token = linkToken(email, '/console/invitation');
    service.deps.clock.set(new Date(Date.now() + 7 * 86_400_000 + 60_000));
    try {
      expect((await inject('POST', '/session/invitation', { body: { token } })).statusCode).toBe(400);
    } finally {
      service.deps.clock.reset();
    }
    const forged = await inject('POST', '/session/invitation', { body: { token: 'A'.repeat(43) } });
    expect(forged.statusCode).toBe(400);
    expect(forged.json()).toEqual((await inject('POST', '/session/invitation', { body: { token: 'not-a-token' } })).json());
  });
});

describe('sign-in by emailed link', () => {
  it('answers the same 202 for every address, emails only an ACTIVE user, and the link starts a session once', async () => {
    const tenant = await createTenant(service);
    const { email } = await activeUser(tenant);
    const workspace = await slugOf(tenant);
    const unknown = uniqueEmail('nobody');
    const known = await inject('POST', '/session/link', { body: { workspace, email } });
    const stranger = await inject('POST', '/session/link', { body: { workspace, email: unknown } });
    expect(known.statusCode).toBe(202);
    expect(stranger.statusCode).toBe(202);
    expect(stranger.body).toBe(known.body);
    const jobs = await service.deps.db.selectFrom('jobs').select('payload').where('workspace_id', '=', tenant.workspaceId).where('queue', '=', 'sign-in.user-mail').orderBy('job_id').execute();
    expect(JSON.stringify(jobs)).not.toContain(unknown);
    await runJobs(tenant);
    expect(receiver.to(unknown)).toEqual([]);
    const token = linkToken(email, '/console/sign-in/link');
    const session = signed(await inject('POST', '/session/link/redeem', { body: { token } }));
    expect((await inject('GET', '/session', { headers: withSession(session, false) })).json()).toMatchObject({ method: 'LINK', idleTimeoutSeconds: 43200, sessionId: session.sessionId });
    const reused = await inject('POST', '/session/link/redeem', { body: { token } });
    expect(reused.statusCode).toBe(400);
    expect(reused.json()).toEqual((await inject('POST', '/session/link/redeem', { body: { token: 'B'.repeat(43) } })).json());
  });

  it('refuses a link after 15 minutes, and an invitation link is no sign-in link', async () => {
    const tenant = await createTenant(service);
    const { email } = await activeUser(tenant);
    expect((await inject('POST', '/session/link', { body: { workspace: await slugOf(tenant), email } })).statusCode).toBe(202);
    await runJobs(tenant);
    const token = linkToken(email, '/console/sign-in/link');
    service.deps.clock.set(new Date(Date.now() + 16 * 60_000));
    try {
      expect((await inject('POST', '/session/link/redeem', { body: { token } })).statusCode).toBe(400);
    } finally {
      service.deps.clock.reset();
    }
    const invited = await invite(tenant);
    expect((await inject('POST', '/session/link/redeem', { body: { token: linkToken(invited.email, '/console/invitation') } })).statusCode).toBe(400);
  });
});

describe('sign-in by password', () => {
  it('signs in with the right password; a wrong one, an unknown address and a user without password get the same 401 in similar time', async () => {
    const tenant = await createTenant(service);
    const { email, password } = await activeUser(tenant);
    const workspace = await slugOf(tenant);
    const session = signed(await inject('POST', '/session/password', { body: { workspace, email: email.toUpperCase(), password } }));
    expect((await inject('GET', '/me', { headers: withSession(session, false) })).statusCode).toBe(200);
    const noPassword = await invite(tenant);
    await inject('POST', '/session/invitation', { body: { token: linkToken(noPassword.email, '/console/invitation') } });
    /** The answer, and the median time of three tries (after a first, which warms up). */
    const timed = async (body: object) => {
      let response = await inject('POST', '/session/password', { body });
      const times = [];
      for (let i = 0; i < 3; i++) {
        const started = performance.now();
        response = await inject('POST', '/session/password', { body });
        times.push(performance.now() - started);
      }
      return { response, ms: times.sort((a, b) => a - b)[1]! };
    };
    const wrong = await timed({ workspace, email, password: 'not the password at all' });
    const unknown = await timed({ workspace, email: uniqueEmail('nobody'), password: 'not the password at all' });
    const without = await timed({ workspace, email: noPassword.email, password: 'not the password at all' });
    const elsewhere = await timed({ workspace: 'no-such-workspace', email, password });
    for (const { response } of [wrong, unknown, without, elsewhere]) {
      expect(response.statusCode).toBe(401);
      expect(response.body).toBe('Unauthorized');
      expect(response.headers['set-cookie']).toBeUndefined();
    }
    // A hash is verified every time: an unknown address takes about as long as a wrong password
    // (a shared machine's noise allowed for; without the dummy hash it would be ~50 times faster).
    for (const other of [unknown, without, elsewhere]) expect(other.ms).toBeGreaterThan(wrong.ms / 3);
  });

  it('changes the password with the current one, and not without it', async () => {
    const tenant = await createTenant(service);
    const { email, password, session } = await activeUser(tenant);
    const missing = await inject('PUT', '/session/password', { headers: withSession(session), body: { newPassword: 'another long password' } });
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toEqual({ errors: [{ message: 'The current password is required to change it', path: ['currentPassword'] }] });
    const wrong = await inject('PUT', '/session/password', { headers: withSession(session), body: { currentPassword: 'nope nope nope', newPassword: 'another long password' } });
    expect(wrong.json()).toEqual({ errors: [{ message: 'The current password is wrong', path: ['currentPassword'] }] });
    const short = await inject('PUT', '/session/password', { headers: withSession(session), body: { currentPassword: password, newPassword: 'short' } });
    expect(short.statusCode).toBe(400);
    expect(short.json<{ errors: { path: string[] }[] }>().errors[0]!.path).toEqual(['newPassword']);
    expect((await inject('PUT', '/session/password', { headers: withSession(session, false), body: { currentPassword: password, newPassword: 'another long password' } })).statusCode, 'CSRF').toBe(403);
    const changed = await inject('PUT', '/session/password', { headers: withSession(session), body: { currentPassword: password, newPassword: 'another long password' } });
    expect(changed.statusCode, changed.body).toBe(200);
    const workspace = await slugOf(tenant);
    expect((await inject('POST', '/session/password', { body: { workspace, email, password } })).statusCode).toBe(401);
    expect((await inject('POST', '/session/password', { body: { workspace, email, password: 'another long password' } })).statusCode).toBe(200);
  });

  it('limits attempts per account and per client address (429), whatever the address', async () => {
    const limited = await startTestService({ ...smtpConfig(receiver), signInRateLimitMax: 3 });
    try {
      const tenant = await createTenant(limited);
      const workspace = (await limited.deps.db.selectFrom('workspaces').where('workspace_id', '=', tenant.workspaceId).select('slug').executeTakeFirstOrThrow()).slug;
      const attempt = (email: string, ip: string) => limited.app.inject({ method: 'POST', url: '/v1/session/password', remoteAddress: ip, payload: { workspace, email, password: 'guess guess guess' } });
      const target = uniqueEmail('target');
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push((await attempt(target, `10.0.0.${i + 1}`)).statusCode);
      expect(statuses, 'per account, from many addresses').toEqual([401, 401, 401, 429]);
      const spread = [];
      for (let i = 0; i < 4; i++) spread.push((await attempt(uniqueEmail('spray'), '10.9.9.9')).statusCode);
      expect(spread, 'per address, over many accounts').toEqual([401, 401, 401, 429]);
      const refused = await attempt(uniqueEmail('spray'), '10.9.9.9');
      expect(refused.headers['retry-after']).toBeDefined();
    } finally {
      await limited.stop();
    }
  });
});

describe('sessions', () => {
  it('a cookie write needs the CSRF token: without it 403 and nothing changed; bearer keys need none', async () => {
    const tenant = await createTenant(service);
    const { session } = await activeUser(tenant);
    const body = { studyType: 'SURVEY', recruitmentStrategy: 'IN_SERVICE', studyPlan: { name: 'Made in the console' } };
    const forged = await inject('POST', '/studies', { headers: withSession(session, false), body });
    expect(forged.statusCode).toBe(403);
    const wrong = await inject('POST', '/studies', { headers: { ...withSession(session, false), 'x-csrf-token': `${session.csrf.slice(0, -1)}${session.csrf.endsWith('A') ? 'E' : 'A'}` }, body });
    expect(wrong.statusCode).toBe(403);
    expect(await service.deps.db.selectFrom('studies').where('workspace_id', '=', tenant.workspaceId).select('study_id').execute()).toEqual([]);
    const made = await inject('POST', '/studies', { headers: withSession(session), body });
    expect(made.statusCode, made.body).toBe(201);
    expect((await call(service, 'POST', '/studies', { token: tenant.token, body })).statusCode).toBe(201);
  });

  it('ends after 12 idle hours and 7 days whatever happens; each sign-in is a new session', async () => {
    const tenant = await createTenant(service);
    const { email, password, session } = await activeUser(tenant);
    const workspace = await slugOf(tenant);
    const start = Date.now();
    try {
      // Seen every 11 hours: alive until its 7th day.
      for (let hours = 11; hours < 7 * 24; hours += 11) {
        service.deps.clock.set(new Date(start + hours * 3_600_000));
        service.deps.principals.clear();
        expect((await inject('GET', '/me', { headers: withSession(session, false) })).statusCode, `after ${hours} h`).toBe(200);
      }
      service.deps.clock.set(new Date(start + 7 * 86_400_000 + 1000));
      service.deps.principals.clear();
      expect((await inject('GET', '/me', { headers: withSession(session, false) })).statusCode, 'after 7 days').toBe(401);
      service.deps.clock.reset();
      const idle = signed(await inject('POST', '/session/password', { body: { workspace, email, password } }));
      service.deps.clock.set(new Date(Date.now() + 12 * 3_600_000 + 1000));
      service.deps.principals.clear();
      expect((await inject('GET', '/me', { headers: withSession(idle, false) })).statusCode, 'idle 12 h').toBe(401);
      service.deps.clock.reset();
      // A sign-in presenting the old cookie ends that session: a new id and secret each time.
      const first = signed(await inject('POST', '/session/password', { body: { workspace, email, password } }));
      const second = signed(await inject('POST', '/session/password', { headers: { cookie: first.cookie }, body: { workspace, email, password } }));
      expect(second.sessionId).not.toBe(first.sessionId);
      expect(second.cookie).not.toBe(first.cookie);
      expect((await inject('GET', '/me', { headers: withSession(first, false) })).statusCode).toBe(401);
      expect((await inject('GET', '/me', { headers: withSession(second, false) })).statusCode).toBe(200);
    } finally {
      service.deps.clock.reset();
    }
  });

  it('signs out (with CSRF), and signs out everywhere, leaving API keys alone', async () => {
    const tenant = await createTenant(service);
    const { email, password, session } = await activeUser(tenant);
    const workspace = await slugOf(tenant);
    expect((await inject('DELETE', '/session', { headers: withSession(session, false) })).statusCode).toBe(403);
    const out = await inject('DELETE', '/session', { headers: withSession(session) });
    expect(out.statusCode, out.body).toBe(200);
    expect(String(out.headers['set-cookie'])).toMatch(/^recruit_session=; Path=\/; HttpOnly; SameSite=Lax; Max-Age=0/);
    expect((await inject('GET', '/me', { headers: withSession(session, false) })).statusCode).toBe(401);
    expect((await inject('GET', '/session', { headers: withSession(session, false) })).statusCode).toBe(401);
    const laptop = signed(await inject('POST', '/session/password', { body: { workspace, email, password } }));
    const phone = signed(await inject('POST', '/session/password', { body: { workspace, email, password } }));
    await inject('GET', '/me', { headers: withSession(phone, false) });
    const everywhere = await inject('POST', '/session/sign-out-everywhere', { headers: withSession(laptop) });
    expect(everywhere.statusCode, everywhere.body).toBe(200);
    expect(everywhere.json()).toEqual({ sessionsEnded: 2 });
    expect((await inject('GET', '/me', { headers: withSession(phone, false) })).statusCode).toBe(401);
    expect((await inject('GET', '/me', { headers: withSession(laptop, false) })).statusCode).toBe(401);
    expect((await call(service, 'GET', '/me', { token: tenant.token })).statusCode).toBe(200);
  });

  it("a deactivation stops the user's session and keys at once", async () => {
    const tenant = await createTenant(service);
    const { userId, session } = await activeUser(tenant);
    const { createToken } = await import('../workspaces/service.js');
    const { token } = await createToken(service.deps.db, tenant.workspaceId, userId);
    expect((await inject('GET', '/me', { headers: withSession(session, false) })).statusCode).toBe(200);
    expect((await call(service, 'GET', '/me', { token })).statusCode).toBe(200);
    await setUserStatus(service.deps.db, tenant.workspaceId, userId, 'DEACTIVATED');
    service.deps.principals.invalidateUser(tenant.workspaceId, userId);
    expect((await inject('GET', '/me', { headers: withSession(session, false) })).statusCode).toBe(401);
    expect((await call(service, 'GET', '/me', { token })).statusCode).toBe(401);
    const signIn = await inject('POST', '/session/link', { body: { workspace: await slugOf(tenant), email: 'x@example.test' } });
    expect(signIn.statusCode).toBe(202);
  });

  it("a session acts with its role's rights and reads personal data; GET /session answers no one without a cookie", async () => {
    const tenant = await createTenant(service);
    const { email } = await invite(tenant, { role: 'OBSERVER' });
    const session = signed(await inject('POST', '/session/invitation', { body: { token: linkToken(email, '/console/invitation') } }));
    expect((await inject('POST', '/studies', { headers: withSession(session), body: { studyType: 'SURVEY', recruitmentStrategy: 'IN_SERVICE', studyPlan: { name: 'x' } } })).statusCode).toBe(403);
    expect((await inject('GET', '/studies', { headers: withSession(session, false) })).statusCode).toBe(200);
    expect((await inject('GET', '/session')).statusCode).toBe(401);
    expect((await inject('GET', '/session', { headers: { cookie: `recruit_session=${'C'.repeat(43)}` } })).statusCode).toBe(401);
    const info = await inject('GET', '/session', { headers: withSession(session, false) });
    expect(info.json()).toMatchObject({ method: 'INVITATION', csrfToken: session.csrf });
    expect(info.body).not.toContain(session.cookie.split('=')[1]!);
  });
});

describe('without SMTP', () => {
  it('refuses invitations (409: they could not be sent)', async () => {
    const bare = await startTestService();
    try {
      const tenant = await createTenant(bare);
      const response = await call(bare, 'POST', '/users/invitations', { token: tenant.token, body: { email: uniqueEmail(), role: 'RESEARCHER' } });
      expect(response.statusCode).toBe(409);
      expect(response.json<{ errors: { path: string[] }[] }>().errors[0]!.path).toEqual(['email']);
    } finally {
      await bare.stop();
    }
  });
});

describeSecurity('POST /users/invitations', () => service, {
  method: 'POST',
  right: 'users:write',
  addressesResource: false,
  request: async () => ({ url: '/users/invitations', body: { email: uniqueEmail(), role: 'RESEARCHER' } }),
});

const invitedUser = async (tenant: Tenant) => {
  const response = await call(service, 'POST', '/users/invitations', { token: tenant.token, body: { email: uniqueEmail(), role: 'RESEARCHER' } });
  return response.json<{ userId: string }>().userId;
};

describeSecurity('POST /users/{userId}/invitation', () => service, {
  method: 'POST',
  right: 'users:write',
  addressesResource: true,
  request: async (tenant) => ({ url: `/users/${await invitedUser(tenant)}/invitation` }),
});

describeSecurity('DELETE /users/{userId}/invitation', () => service, {
  method: 'DELETE',
  right: 'users:write',
  addressesResource: true,
  request: async (tenant) => ({ url: `/users/${await invitedUser(tenant)}/invitation` }),
});
