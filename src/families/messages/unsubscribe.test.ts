import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type Tenant, type TestService } from '../../../test/harness.js';
import { getPerson } from '../../../test/people-factory.js';
import { startPrivateTestService } from '../../../test/private-database.js';
import { type SmtpReceiver, smtpConfig, startSmtpReceiver, unsubscribeLinkOf } from '../../../test/smtp-receiver.js';
import { createTemplate, runMail, sendMessages, studyWith } from './test-support.js';

let receiver: SmtpReceiver;
let service: TestService;

beforeAll(async () => {
  receiver = await startSmtpReceiver();
  service = await startTestService(smtpConfig(receiver));
});
afterAll(async () => {
  await service.stop();
  await receiver.close();
});

const email = (name: string) => `${name}.${Math.random().toString(36).slice(2, 8)}@example.test`;

/** A message delivered to a new participant: its unsubscribe link's path below /v1, and the person. */
async function delivered(tenant: Tenant) {
  const templateId = await createTemplate(service, tenant, { name: 'Plain', subject: 'Hello', textBody: 'No link placed by the template.' });
  const address = email('unsub');
  const { studyId, persons, participants } = await studyWith(service, tenant, [{ email: address }]);
  // Queued, not skipped (a CI run once found nothing to send here): say so before sending.
  const queued = await sendMessages(service, tenant, studyId, { templateId, participantIds: [participants[0]!.participantId] });
  expect(queued.json(), queued.body).toMatchObject({ queued: 1 });
  expect(await runMail(service, tenant)).toMatchObject({ sent: 1 });
  const [mail] = receiver.to(address);
  const link = unsubscribeLinkOf(mail!);
  expect(link.startsWith('https://recruit.example.test/v1/unsubscribe/')).toBe(true);
  // A template that does not place the link gets it as the body's last line.
  expect(mail!.parsed.text).toContain(`Unsubscribe: ${link}`);
  return { path: new URL(link).pathname, token: link.split('/').at(-1)!, personId: persons[0]!.personId, studyId, participantId: participants[0]!.participantId, templateId };
}

const oneClick = (path: string, payload = 'List-Unsubscribe=One-Click', contentType = 'application/x-www-form-urlencoded') =>
  service.app.inject({ method: 'POST', url: path, headers: { 'content-type': contentType }, payload });

async function optedOutEvents(tenant: Tenant, personId: string) {
  const { rows } = await sql<{ payload: { data: { personId: string } } }>`select payload from webhook_messages where workspace_id = ${tenant.workspaceId} and event_type = 'person.opted_out'`.execute(service.deps.db);
  return rows.filter((row) => row.payload.data.personId === personId).length;
}

describe('unsubscribe links', () => {
  it('GET shows a page with a button and changes nothing; the one-click POST (RFC 8058) opts the person out as PUT /people/{id}/opted-out does, with the person.opted_out event and an UNSUBSCRIBED event; again, nothing more', async () => {
    const tenant = await createTenant(service, 'Acme <Research>');
    const { path, personId } = await delivered(tenant);
    const page = await service.app.inject({ method: 'GET', url: path });
    expect(page.statusCode, page.body).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.body).toContain('Stop emails from Acme &lt;Research&gt;?');
    expect(page.body).toContain('<form method="post">');
    expect((await getPerson(service, tenant, personId)).json()).toMatchObject({ isOptedOut: false, contactStatus: 'CONTACTABLE' });

    const done = await oneClick(path);
    expect(done.statusCode, done.body).toBe(200);
    expect(done.body).toContain('You are unsubscribed');
    expect((await getPerson(service, tenant, personId)).json()).toMatchObject({ isOptedOut: true, contactStatus: 'OPTED_OUT' });
    expect(await optedOutEvents(tenant, personId)).toBe(1);
    const [message] = (await call(service, 'GET', '/messages', { token: tenant.token })).json<{ results: { messageId: string; unsubscribedAt: string | null }[] }>().results;
    expect(message!.unsubscribedAt).not.toBeNull();
    const detail = (await call(service, 'GET', `/messages/${message!.messageId}`, { token: tenant.token })).json<{ events: { type: string }[] }>();
    expect(detail.events.map((event) => event.type)).toEqual(['SENT', 'UNSUBSCRIBED']);

    // Idempotent: a mail client retrying, or the person clicking twice.
    expect((await oneClick(path)).statusCode).toBe(200);
    expect(await optedOutEvents(tenant, personId)).toBe(1);
    const again = (await call(service, 'GET', `/messages/${message!.messageId}`, { token: tenant.token })).json<{ events: { type: string }[] }>();
    expect(again.events).toHaveLength(2);
    expect((await service.app.inject({ method: 'GET', url: path })).body).toContain('You are unsubscribed');
  });

  it('takes the page button, multipart and JSON bodies and an empty one; refuses another value with 400', async () => {
    for (const [payload, contentType] of [
      ['List-Unsubscribe=One-Click', 'application/x-www-form-urlencoded'],
      ['--b\r\nContent-Disposition: form-data; name="List-Unsubscribe"\r\n\r\nOne-Click\r\n--b--\r\n', 'multipart/form-data; boundary=b'],
      ['{"List-Unsubscribe":"One-Click"}', 'application/json'],
    ] as const) {
      const tenant = await createTenant(service);
      const { path, personId } = await delivered(tenant);
      const response = await oneClick(path, payload, contentType);
      expect(response.statusCode, `${contentType}: ${response.body}`).toBe(200);
      expect((await getPerson(service, tenant, personId)).json()).toMatchObject({ isOptedOut: true });
    }
    const tenant = await createTenant(service);
    const { path, personId } = await delivered(tenant);
    expect((await service.app.inject({ method: 'POST', url: path })).statusCode).toBe(200);
    expect((await getPerson(service, tenant, personId)).json()).toMatchObject({ isOptedOut: true });
    const wrong = await oneClick(path, 'List-Unsubscribe=Maybe');
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json()).toEqual({ errors: [{ message: expect.any(String), path: ['List-Unsubscribe'] }] });
  });

  it('refuses a forged or altered link with 404, changing nothing', async () => {
    const tenant = await createTenant(service);
    const first = await delivered(tenant);
    const second = await delivered(tenant);
    const [workspaceId, messageId, mac] = first.token.split('.') as [string, string, string];
    const otherTenant = await createTenant(service);
    const flipped = `${mac.slice(0, -2)}${mac.at(-2) === 'A' ? 'B' : 'A'}${mac.at(-1)}`;
    const forged = [
      `${workspaceId}.${messageId}.${flipped}`,
      // Another message's MAC, or another workspace named, with a genuine MAC.
      `${workspaceId}.${messageId}.${second.token.split('.')[2]}`,
      `${workspaceId}.${second.token.split('.')[1]}.${mac}`,
      `${otherTenant.workspaceId}.${messageId}.${mac}`,
      `${workspaceId}.${messageId}.${mac.slice(0, -1)}`,
      `${workspaceId}.${messageId}`,
      'not-a-token',
      `${workspaceId}.eml_00000000000000000000000000.${mac}`,
    ];
    for (const token of forged) {
      for (const method of ['GET', 'POST'] as const) {
        const response = await service.app.inject({ method, url: `/v1/unsubscribe/${encodeURIComponent(token)}`, ...(method === 'POST' ? { headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'List-Unsubscribe=One-Click' } : {}) });
        expect(response.statusCode, `${method} ${token}`).toBe(404);
        expect(response.json()).toEqual({ errors: [{ message: 'Unsubscribe link not found', path: ['token'] }] });
      }
    }
    expect((await call(service, 'GET', '/messages', { token: tenant.token, query: { size: '100' } })).json<{ results: { unsubscribedAt: string | null }[] }>().results.every((m) => m.unsubscribedAt === null)).toBe(true);
    for (const { personId } of [first, second]) expect((await getPerson(service, tenant, personId)).json()).toMatchObject({ isOptedOut: false });
    expect((await service.app.inject({ method: 'GET', url: `/v1/unsubscribe/${'x'.repeat(201)}` })).statusCode).toBe(400);
  });

  it('accepts a link in exactly one spelling: case, padding, percent-encoding and the MAC\'s spare bits are other spellings, refused with 404 (issue 32, item 7)', async () => {
    const tenant = await createTenant(service);
    const { token, personId } = await delivered(tenant);
    const [workspaceId, messageId, mac] = token.split('.') as [string, string, string];
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    // 16 bytes in 22 characters: the last one carries 2 bits and 4 spare ones, so 15 other characters decode the same.
    const lastIndex = alphabet.indexOf(mac.at(-1)!);
    const spareBits = Array.from({ length: 16 }, (_, spare) => alphabet[(lastIndex & 0b110000) | spare]!).filter((character) => character !== mac.at(-1));
    expect(spareBits).toHaveLength(15);
    const percent = (text: string) => [...text].map((character) => `%${character.charCodeAt(0).toString(16).padStart(2, '0')}`).join('');
    const spellings = [
      ...spareBits.map((character) => `${workspaceId}.${messageId}.${mac.slice(0, -1)}${character}`),
      `${workspaceId}.${messageId}.${mac}=`,
      `${workspaceId}.${messageId}.${mac}==`,
      `${workspaceId.toLowerCase()}.${messageId}.${mac}`,
      `${workspaceId}.${messageId.toLowerCase()}.${mac}`,
      `${workspaceId}.${messageId}.${mac.toUpperCase() === mac ? mac.toLowerCase() : mac.toUpperCase()}`,
      `${workspaceId}.${messageId}.${Buffer.from(mac, 'base64url').toString('base64').replace(/=+$/, '')}`,
      `${workspaceId}%2E${messageId}%2E${mac}`,
      `${workspaceId}%2e${messageId}%2e${mac}`,
      `${workspaceId}.${messageId}.${percent(mac.slice(0, 1))}${mac.slice(1)}`,
      percent(token),
      `${workspaceId}.${messageId}.${mac}%00`,
      ` ${token}`.replace(' ', '%20'),
    ].filter((spelling) => spelling !== token);
    for (const spelling of spellings) {
      for (const method of ['GET', 'POST'] as const) {
        const response = await service.app.inject({ method, url: `/v1/unsubscribe/${spelling}`, ...(method === 'POST' ? { headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'List-Unsubscribe=One-Click' } : {}) });
        expect([404, 400], `${method} ${spelling}: ${response.body}`).toContain(response.statusCode);
      }
    }
    expect((await getPerson(service, tenant, personId)).json()).toMatchObject({ isOptedOut: false });
    // The one spelling the service wrote works.
    const genuine = await service.app.inject({ method: 'POST', url: `/v1/unsubscribe/${token}`, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'List-Unsubscribe=One-Click' });
    expect(genuine.statusCode, genuine.body).toBe(200);
    expect((await getPerson(service, tenant, personId)).json()).toMatchObject({ isOptedOut: true });
  });

  it('needs no token, and a link opted out of stays refused a new message', async () => {
    const tenant = await createTenant(service);
    const { path, studyId, participantId, templateId } = await delivered(tenant);
    expect((await service.app.inject({ method: 'POST', url: path, headers: { authorization: 'Bearer nonsense', 'content-type': 'application/x-www-form-urlencoded' }, payload: 'List-Unsubscribe=One-Click' })).statusCode).toBe(200);
    const next = await sendMessages(service, tenant, studyId, { templateId, participantIds: [participantId] });
    expect(next.json()).toMatchObject({ queued: 0, skipped: { OPTED_OUT: 1 } });
  });
});

describe('the wake-up path', () => {
  it('a commit that queues messages wakes the dispatcher of a service that sends in the background (its poll is a minute away)', async () => {
    const local = await startSmtpReceiver();
    const background = await startPrivateTestService({ ...smtpConfig(local), mailDelivery: true }, { mailPollMs: 60_000 });
    try {
      const tenant = await createTenant(background);
      const templateId = await createTemplate(background, tenant);
      const address = email('woken');
      const { studyId, participants } = await studyWith(background, tenant, [{ email: address }]);
      // The first poll runs at start; wait for it to be over so only the notification can send.
      await new Promise((resolve) => setTimeout(resolve, 200));
      const started = Date.now();
      expect((await sendMessages(background, tenant, studyId, { templateId, participantIds: [participants[0]!.participantId] })).json()).toMatchObject({ queued: 1 });
      while (local.to(address).length === 0 && Date.now() - started < 10_000) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(local.to(address)).toHaveLength(1);
      expect(Date.now() - started).toBeLessThan(10_000);
      const deadline = Date.now() + 5_000;
      let status = '';
      while (status !== 'SENT' && Date.now() < deadline) {
        status = (await call(background, 'GET', '/messages', { token: tenant.token })).json<{ results: { status: string }[] }>().results[0]!.status;
        if (status !== 'SENT') await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(status).toBe('SENT');
    } finally {
      await background.stop();
      await local.close();
    }
  });
});
