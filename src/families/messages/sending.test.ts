import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, callTestHelper, createTenant, startTestService, type Tenant, type TestService } from '../../../test/harness.js';
import { createPerson, getPerson } from '../../../test/people-factory.js';
import { addParticipants, createStudy } from '../../../test/participants-factory.js';
import { describeSecurity } from '../../../test/security.js';
import { type SmtpReceiver, smtpConfig, startSmtpReceiver, unfoldedHeaders } from '../../../test/smtp-receiver.js';
import { mailRetryDelaysSeconds } from './dispatcher.js';
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

async function messagesOf(tenant: Tenant, query: Record<string, string> = {}) {
  const response = await call(service, 'GET', '/messages', { token: tenant.token, query });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<{ results: { messageId: string; status: string; personId: string; origin: string; countsAsContact: boolean; attempts: number; nextAttemptAt: string | null }[]; total: number }>();
}

async function contactsOf(tenant: Tenant, personId: string) {
  const response = await call(service, 'POST', '/people/search', {
    token: tenant.token,
    body: { filter: { filters: [{ property: { propertyGroup: 'PERSON', propertyName: 'TOTAL_NUMBER_OF_CONTACT' }, comparison: 'GREATER_THAN_OR_EQUAL', value: 1 }] }, pageInfo: { size: 100 } },
  });
  expect(response.statusCode, response.body).toBe(200);
  const last = await service.deps.db.selectFrom('people').where('person_id', '=', personId).select('last_contact_at').executeTakeFirstOrThrow();
  const counted = await sql<{ total: number }>`
    select ((select count(*) from participant_status_events e where e.person_id = ${personId} and e.is_contact)
      + (select count(*) from messages m where m.person_id = ${personId} and m.counts_as_contact and m.status = 'SENT'))::int as total`.execute(service.deps.db);
  return { found: response.json<{ results: { personId: string }[] }>().results.some((person) => person.personId === personId), lastContactAt: last.last_contact_at, total: counted.rows[0]!.total };
}

describe('POST /studies/{studyId}/messages', () => {
  it('renders the template for each participant and delivers it through SMTP with the From, the unsubscribe link and the RFC 8058 headers; the message is recorded SENT and is a contact', async () => {
    const tenant = await createTenant(service, 'Acme Research');
    const templateId = await createTemplate(service, tenant);
    const adaEmail = email('ada');
    const { studyId, persons, participants } = await studyWith(service, tenant, [{ email: adaEmail, firstName: 'Ada' }]);
    const sent = await sendMessages(service, tenant, studyId, { templateId, participantIds: [participants[0]!.participantId] });
    expect(sent.statusCode, sent.body).toBe(200);
    expect(sent.json()).toEqual({ recipients: 1, queued: 1, notSent: 0, notSentReason: null, skipped: { OPTED_OUT: 0, DELETED: 0, UNREACHABLE: 0, NO_EMAIL: 0 } });
    expect((await messagesOf(tenant)).results).toMatchObject([{ status: 'QUEUED', origin: 'SEND', countsAsContact: true }]);

    expect(await runMail(service, tenant)).toEqual({ attempted: 1, sent: 1, retrying: 0, failed: 0, notSent: 0 });
    const [mail] = receiver.to(adaEmail);
    expect(receiver.to(adaEmail)).toHaveLength(1);
    const { parsed } = mail!;
    expect(parsed.subject).toBe('Join Paying online, Ada');
    expect(parsed.from?.text).toBe('"Research Team" <research@example.test>');
    expect(mail!.from).toBe('research@example.test');
    const headers = unfoldedHeaders(mail!.raw);
    const unsubscribe = /^List-Unsubscribe: <(https:\/\/recruit\.example\.test\/v1\/unsubscribe\/wsp_[0-9A-Z]+\.eml_[0-9A-Z]+\.[A-Za-z0-9_-]{22})>$/m.exec(headers);
    expect(headers).toMatch(/^List-Unsubscribe-Post: List-Unsubscribe=One-Click$/m);
    expect(unsubscribe).not.toBeNull();
    expect(parsed.text).toContain('Hi Ada, Acme Research invites you to Paying online.');
    expect(parsed.text).toContain(`Unsubscribe: ${unsubscribe![1]}`);
    expect(parsed.html).toContain(`<a href="${unsubscribe![1]}">Unsubscribe</a>`);

    const [listed] = (await messagesOf(tenant)).results;
    expect(headers).toMatch(new RegExp(`^X-Recruit-Message-ID: ${listed!.messageId}$`, 'm'));
    const detail = await call(service, 'GET', `/messages/${listed!.messageId}`, { token: tenant.token });
    expect(detail.statusCode, detail.body).toBe(200);
    expect(detail.json()).toMatchObject({
      status: 'SENT',
      attempts: 1,
      personId: persons[0]!.personId,
      studyId,
      participantId: participants[0]!.participantId,
      templateId,
      templateName: 'Invitation',
      recipientEmail: adaEmail,
      subject: 'Join Paying online, Ada',
      sentAt: expect.any(String),
      lastSmtpCode: 250,
      events: [{ type: 'SENT', smtpCode: 250 }],
    });
    // Delivered on its own, the message is a contact: LAST_CONTACT_DATE and the contact counts read it.
    expect(await contactsOf(tenant, persons[0]!.personId)).toEqual({ found: true, lastContactAt: detail.json<{ sentAt: string }>().sentAt, total: 1 });
    // Nothing is due any more: a second run sends nothing.
    expect((await runMail(service, tenant)).attempted).toBe(0);
  });

  it('never sends to the opted-out, deleted or unreachable, and says how many were skipped and why; by filter too', async () => {
    const tenant = await createTenant(service);
    const templateId = await createTemplate(service, tenant);
    const emails = [email('kept'), email('optedout'), email('deleted'), email('unreachable')];
    const { studyId, persons, participants } = await studyWith(service, tenant, emails.map((address) => ({ email: address })));
    expect((await call(service, 'PUT', `/people/${persons[1]!.personId}/opted-out`, { token: tenant.token, body: { isOptedOut: true } })).statusCode).toBe(200);
    expect((await call(service, 'DELETE', `/people/${persons[2]!.personId}`, { token: tenant.token })).statusCode).toBe(200);
    await sql`update people set contact_status = 'UNREACHABLE' where person_id = ${persons[3]!.personId}`.execute(service.deps.db);
    const byIds = await sendMessages(service, tenant, studyId, { templateId, participantIds: participants.map((participant) => participant.participantId) });
    expect(byIds.statusCode, byIds.body).toBe(200);
    expect(byIds.json()).toEqual({ recipients: 4, queued: 1, notSent: 0, notSentReason: null, skipped: { OPTED_OUT: 1, DELETED: 1, UNREACHABLE: 1, NO_EMAIL: 0 } });
    // The filter chooses as the participants search does: a deleted person is no longer a participant it finds.
    const byFilter = await sendMessages(service, tenant, studyId, { templateId, filter: { filters: [] } });
    expect(byFilter.statusCode, byFilter.body).toBe(200);
    expect(byFilter.json()).toEqual({ recipients: 3, queued: 1, notSent: 0, notSentReason: null, skipped: { OPTED_OUT: 1, DELETED: 0, UNREACHABLE: 1, NO_EMAIL: 0 } });
    const narrowed = await sendMessages(service, tenant, studyId, {
      templateId,
      filter: { filters: [{ property: { propertyGroup: 'PERSON', propertyName: 'EMAIL' }, comparison: 'EQUALS', value: emails[0] }] },
    });
    expect(narrowed.json()).toMatchObject({ recipients: 1, queued: 1 });
    expect(await runMail(service, tenant)).toMatchObject({ attempted: 3, sent: 3 });
    expect(receiver.to(emails[0]!)).toHaveLength(3);
    for (const address of emails.slice(1)) expect(receiver.to(address)).toHaveLength(0);
  });

  it('does not send to a person who opted out between the request and the sending: NOT_SENT, saying why', async () => {
    const tenant = await createTenant(service);
    const templateId = await createTemplate(service, tenant);
    const address = email('late');
    const { studyId, persons, participants } = await studyWith(service, tenant, [{ email: address }]);
    expect((await sendMessages(service, tenant, studyId, { templateId, participantIds: [participants[0]!.participantId] })).json()).toMatchObject({ queued: 1 });
    expect((await call(service, 'PUT', `/people/${persons[0]!.personId}/opted-out`, { token: tenant.token, body: { isOptedOut: true } })).statusCode).toBe(200);
    expect(await runMail(service, tenant)).toMatchObject({ attempted: 1, notSent: 1, sent: 0 });
    expect(receiver.to(address)).toHaveLength(0);
    const [message] = (await messagesOf(tenant)).results;
    expect(message).toMatchObject({ status: 'NOT_SENT', notSentReason: 'The person opted out before the message was sent' });
  });

  it('retries a temporary failure (4xx) on the schedule and delivers the message once', async () => {
    const tenant = await createTenant(service);
    const templateId = await createTemplate(service, tenant);
    const address = email('retry');
    const { studyId, participants } = await studyWith(service, tenant, [{ email: address }]);
    await sendMessages(service, tenant, studyId, { templateId, participantIds: [participants[0]!.participantId] });
    receiver.refuseNextData(1, { code: 451, message: '4.3.0 Try again later' });
    const started = service.deps.clock.now();
    expect(await runMail(service, tenant)).toMatchObject({ attempted: 1, retrying: 1 });
    const [queued] = (await messagesOf(tenant)).results;
    expect(queued).toMatchObject({ status: 'QUEUED', attempts: 1, lastSmtpCode: 451 });
    const delay = (Date.parse(queued!.nextAttemptAt!) - started.getTime()) / 1000;
    expect(delay).toBeGreaterThanOrEqual(mailRetryDelaysSeconds[0] * 0.9 - 1);
    expect(delay).toBeLessThanOrEqual(mailRetryDelaysSeconds[0] * 1.1 + 5);
    // Not due yet.
    expect((await runMail(service, tenant)).attempted).toBe(0);
    try {
      await callTestHelper(service, 'POST', '/clock', { body: { now: new Date(started.getTime() + 2 * mailRetryDelaysSeconds[0] * 1000).toISOString() } });
      expect(await runMail(service, tenant)).toMatchObject({ attempted: 1, sent: 1 });
    } finally {
      await callTestHelper(service, 'DELETE', '/clock');
    }
    expect(receiver.to(address)).toHaveLength(1);
    const detail = (await call(service, 'GET', `/messages/${queued!.messageId}`, { token: tenant.token })).json<{ status: string; attempts: number; events: { type: string }[] }>();
    expect(detail).toMatchObject({ status: 'SENT', attempts: 2 });
    expect(detail.events.map((event) => event.type)).toEqual(['RETRYING', 'SENT']);
  });

  it('records a permanent failure: a recipient refused with 5xx is FAILED and the person UNREACHABLE, skipped from then on; a 5xx of the content fails the message only', async () => {
    const tenant = await createTenant(service);
    const templateId = await createTemplate(service, tenant);
    const bounced = email('bounce');
    const refusedContent = email('content');
    const { studyId, persons, participants } = await studyWith(service, tenant, [{ email: bounced }, { email: refusedContent }]);
    receiver.refuseRecipient(bounced, { code: 550, message: '5.1.1 No such user' });
    await sendMessages(service, tenant, studyId, { templateId, participantIds: [participants[0]!.participantId] });
    expect(await runMail(service, tenant)).toMatchObject({ attempted: 1, failed: 1 });
    const [failed] = (await messagesOf(tenant, { status: 'FAILED' })).results;
    expect(failed).toMatchObject({ status: 'FAILED', attempts: 1, lastSmtpCode: 550, lastError: "The recipient's mail server refused the address", failedAt: expect.any(String) });
    expect((await getPerson(service, tenant, persons[0]!.personId)).json()).toMatchObject({ contactStatus: 'UNREACHABLE' });
    expect(await contactsOf(tenant, persons[0]!.personId)).toMatchObject({ lastContactAt: null, total: 0 });
    const again = await sendMessages(service, tenant, studyId, { templateId, participantIds: [participants[0]!.participantId] });
    expect(again.json()).toMatchObject({ queued: 0, skipped: { UNREACHABLE: 1 } });

    await sendMessages(service, tenant, studyId, { templateId, participantIds: [participants[1]!.participantId] });
    receiver.refuseNextData(1, { code: 554, message: '5.7.1 Message rejected as spam' });
    expect(await runMail(service, tenant)).toMatchObject({ attempted: 1, failed: 1 });
    expect((await getPerson(service, tenant, persons[1]!.personId)).json()).toMatchObject({ contactStatus: 'CONTACTABLE' });
  });

  it('is limited per workspace: MAIL_RATE_PER_MINUTE attempts a minute, the rest wait', async () => {
    const limited = await startTestService({ ...smtpConfig(receiver), mailRatePerMinute: 2 });
    try {
      const tenant = await createTenant(limited);
      const templateId = await createTemplate(limited, tenant);
      const { studyId, participants } = await studyWith(limited, tenant, [{ email: email('r1') }, { email: email('r2') }, { email: email('r3') }]);
      await sendMessages(limited, tenant, studyId, { templateId, participantIds: participants.map((p) => p.participantId) });
      expect(await runMail(limited, tenant)).toMatchObject({ attempted: 2, sent: 2 });
      expect((await runMail(limited, tenant)).attempted).toBe(0);
      await callTestHelper(limited, 'POST', '/clock', { body: { now: new Date(Date.now() + 61_000).toISOString() } });
      expect(await runMail(limited, tenant)).toMatchObject({ attempted: 1, sent: 1 });
    } finally {
      await limited.stop();
    }
  });

  it('without SMTP configured records the messages NOT_SENT and says so; it never pretends to send', async () => {
    const unconfigured = await startTestService();
    try {
      const tenant = await createTenant(unconfigured);
      const templateId = await createTemplate(unconfigured, tenant);
      const { studyId, participants } = await studyWith(unconfigured, tenant, [{ email: email('nosmtp') }]);
      const response = await sendMessages(unconfigured, tenant, studyId, { templateId, participantIds: [participants[0]!.participantId] });
      expect(response.statusCode, response.body).toBe(200);
      expect(response.json()).toEqual({ recipients: 1, queued: 0, notSent: 1, notSentReason: 'SMTP is not configured (SMTP_HOST): the message was recorded, not sent', skipped: { OPTED_OUT: 0, DELETED: 0, UNREACHABLE: 0, NO_EMAIL: 0 } });
      const listed = await call(unconfigured, 'GET', '/messages', { token: tenant.token });
      expect(listed.json()).toMatchObject({ total: 1, results: [{ status: 'NOT_SENT', notSentReason: expect.stringMatching(/^SMTP is not configured/), sentAt: null }] });
      expect(await runMail(unconfigured, tenant)).toEqual({ attempted: 0, sent: 0, retrying: 0, failed: 0, notSent: 0 });
    } finally {
      await unconfigured.stop();
    }
  });

  it('refuses both or neither of participantIds and filter, an unknown participant, study or template, and a template whose link would open a page with nothing to do', async () => {
    const tenant = await createTenant(service);
    const other = await createTenant(service);
    const templateId = await createTemplate(service, tenant);
    const theirTemplate = await createTemplate(service, other);
    const { studyId, participants } = await studyWith(service, tenant, [{ email: email('v') }]);
    const theirs = await studyWith(service, other, [{ email: email('w') }]);
    const participantId = participants[0]!.participantId;
    const screenerTemplate = await createTemplate(service, tenant, { name: 'Screener', subject: 'Screener', textBody: 'Answer: {{ links.screener }}' });
    const consentTemplate = await createTemplate(service, tenant, { name: 'Consent', subject: 'Consent', textBody: 'Sign: {{ links.consent }}' });
    const schedulingTemplate = await createTemplate(service, tenant, { name: 'Book', subject: 'Book', textBody: 'Book: {{ links.scheduling }}' });
    const cases: [string, object, number, string[]][] = [
      [studyId, { templateId, participantIds: [participantId], filter: { filters: [] } }, 400, ['filter']],
      [studyId, { templateId }, 400, ['participantIds']],
      [studyId, { templateId, participantIds: [] }, 400, ['participantIds']],
      [studyId, { participantIds: [participantId] }, 400, ['templateId']],
      [studyId, { templateId, participantIds: [participantId], extra: 1 }, 400, ['extra']],
      [studyId, { templateId, filter: { filters: [{ property: { propertyGroup: 'PERSON', propertyName: 'NOPE' }, comparison: 'EQUALS', value: 1 }] } }, 400, ['filter', 'filters', '0', 'property', 'propertyName']],
      // The study has no screener: its link would open a page with nothing to answer.
      [studyId, { templateId: screenerTemplate, participantIds: [participantId] }, 400, ['templateId']],
      // Nor a consent form.
      [studyId, { templateId: consentTemplate, participantIds: [participantId] }, 400, ['templateId']],
      // The study has no host to book with.
      [studyId, { templateId: schedulingTemplate, participantIds: [participantId] }, 400, ['templateId']],
      [studyId, { templateId, participantIds: [participantId, 'ptc_unknown'] }, 404, ['participantIds', '1']],
      [studyId, { templateId, participantIds: [theirs.participants[0]!.participantId] }, 404, ['participantIds', '0']],
      [studyId, { templateId: theirTemplate, participantIds: [participantId] }, 404, ['templateId']],
      [theirs.studyId, { templateId, participantIds: [participantId] }, 404, ['studyId']],
      ['stu_unknown', { templateId, participantIds: [participantId] }, 404, ['studyId']],
    ];
    for (const [study, body, status, path] of cases) {
      const response = await sendMessages(service, tenant, study, body);
      expect(response.statusCode, `${JSON.stringify(body)}: ${response.body}`).toBe(status);
      expect(response.json<{ errors: { path: string[] }[] }>().errors[0]!.path, JSON.stringify(body)).toEqual(path);
    }
    expect((await messagesOf(tenant)).total).toBe(0);
  });
});

describe("links to the participant's pages", () => {
  /** A launched study with a screener and a consent form, and one participant of it with an email. */
  async function studyWithPages(tenant: Tenant, address: string) {
    const form = await call(service, 'POST', '/consent-forms', {
      token: tenant.token,
      body: { name: 'Interview consent', title: 'Taking part', body: 'We record the call.', language: 'en', requiredStatements: [{ id: 'take-part', text: 'I agree to take part' }], optionalChoices: [] },
    });
    expect(form.statusCode, form.body).toBe(201);
    const consentFormId = form.json<{ consentFormId: string }>().consentFormId;
    const studyId = await createStudy(service, tenant, { studyType: 'INTERVIEWS', screener: true, launch: true, studyPlan: { externalName: 'Paying online', consentFormId } });
    const person = await createPerson(service, tenant, { email: address, firstName: 'Ada' });
    const [participant] = await addParticipants(service, tenant, studyId, [person.personId]);
    return { studyId, participantId: participant!.participantId };
  }
  const linksIn = (text: string) => [...text.matchAll(/https:\/\/[^\s]+\/p\/([A-Za-z0-9_-]{43})/g)].map((match) => new URL(match[0]).pathname);
  const linksOfMessage = (messageId: string) => service.deps.db.selectFrom('participant_links').where('message_id', '=', messageId).select(['purpose', 'participant_id']).orderBy('purpose').execute();

  it("puts the participant's own screener and consent links in the message; each opens that person's page", async () => {
    const tenant = await createTenant(service);
    const address = email('links');
    const { studyId, participantId } = await studyWithPages(tenant, address);
    const templateId = await createTemplate(service, tenant, {
      name: 'Screener',
      subject: 'Tell us about you',
      textBody: 'Answer: {{ links.screener }}\nSign: {{ links.consent }}',
      htmlBody: '<a href="{{ links.screener }}">Answer</a>',
    });
    const sent = await sendMessages(service, tenant, studyId, { templateId, participantIds: [participantId] });
    expect(sent.statusCode, sent.body).toBe(200);
    expect(await runMail(service, tenant)).toMatchObject({ sent: 1 });
    const [mail] = receiver.to(address);
    const [screenerPath, consentPath] = linksIn(mail!.parsed.text!);
    expect(screenerPath).toBeDefined();
    expect(consentPath).toBeDefined();
    expect(screenerPath).not.toBe(consentPath);
    // The HTML body carries the same screener link as the text: one link per message and purpose.
    expect(String(mail!.parsed.html)).toContain(screenerPath);
    const { messageId } = (await messagesOf(tenant)).results[0]!;
    expect(await linksOfMessage(messageId)).toEqual([
      { purpose: 'CONSENT', participant_id: participantId },
      { purpose: 'SCREENER', participant_id: participantId },
    ]);
    const page = await service.app.inject({ method: 'GET', url: screenerPath! });
    expect(page.statusCode, page.body).toBe(200);
    expect(page.body).toContain('How often do you shop online?');
  });

  it('a retried message carries new links and the links of the refused attempt open nothing', async () => {
    const tenant = await createTenant(service);
    const address = email('relink');
    const { studyId, participantId } = await studyWithPages(tenant, address);
    const templateId = await createTemplate(service, tenant, { name: 'Screener', subject: 'Tell us', textBody: 'Answer: {{ links.screener }}' });
    await sendMessages(service, tenant, studyId, { templateId, participantIds: [participantId] });
    receiver.refuseNextData(1, { code: 451, message: '4.3.0 Try again later' });
    const started = service.deps.clock.now();
    expect(await runMail(service, tenant)).toMatchObject({ retrying: 1 });
    const { messageId } = (await messagesOf(tenant)).results[0]!;
    // The refused mail's link was made (its token went out in the refused DATA only).
    const firstLinks = await service.deps.db.selectFrom('participant_links').where('message_id', '=', messageId).select('link_id').execute();
    expect(firstLinks).toHaveLength(1);
    try {
      await callTestHelper(service, 'POST', '/clock', { body: { now: new Date(started.getTime() + 2 * mailRetryDelaysSeconds[0] * 1000).toISOString() } });
      expect(await runMail(service, tenant)).toMatchObject({ sent: 1 });
    } finally {
      await callTestHelper(service, 'DELETE', '/clock');
    }
    const [secondPath] = linksIn(receiver.to(address)[0]!.parsed.text!);
    const secondLinks = await service.deps.db.selectFrom('participant_links').where('message_id', '=', messageId).select('link_id').execute();
    expect(secondLinks).toHaveLength(1);
    expect(secondLinks[0]!.link_id).not.toBe(firstLinks[0]!.link_id);
    expect((await service.app.inject({ method: 'GET', url: secondPath! })).statusCode).toBe(200);
  });

  it('moves the participant to SCREENER_SENT with a message that carries the screener link', async () => {
    const tenant = await createTenant(service);
    const address = email('move');
    const { studyId, participantId } = await studyWithPages(tenant, address);
    const templateId = await createTemplate(service, tenant, { name: 'Screener', subject: 'Tell us', textBody: 'Answer: {{ links.screener }}' });
    const moved = await call(service, 'PATCH', `/studies/${studyId}/participants/${participantId}`, { token: tenant.token, body: { screenerState: 'SCREENER_SENT', sendMessage: { templateId } } });
    expect(moved.statusCode, moved.body).toBe(200);
    expect(moved.json()).toMatchObject({ screenerState: 'SCREENER_SENT', message: { status: 'QUEUED' } });
    expect(await runMail(service, tenant)).toMatchObject({ sent: 1 });
    const [path] = linksIn(receiver.to(address)[0]!.parsed.text!);
    expect((await service.app.inject({ method: 'GET', url: path! })).statusCode).toBe(200);
  });
});

describe('PATCH /studies/{studyId}/participants/{participantId} with sendMessage', () => {
  it('queues the message in the move to INVITED; the move is the contact, the message is not a second one', async () => {
    const tenant = await createTenant(service);
    const templateId = await createTemplate(service, tenant);
    const address = email('invite');
    const { studyId, persons, participants } = await studyWith(service, tenant, [{ email: address, firstName: 'Grace' }]);
    const moved = await call(service, 'PATCH', `/studies/${studyId}/participants/${participants[0]!.participantId}`, { token: tenant.token, body: { status: 'INVITED', sendMessage: { templateId } } });
    expect(moved.statusCode, moved.body).toBe(200);
    expect(moved.json()).toMatchObject({ status: 'INVITED', message: { messageId: expect.stringMatching(/^eml_/), status: 'QUEUED', reason: null } });
    expect(await runMail(service, tenant)).toMatchObject({ sent: 1 });
    expect(receiver.to(address)[0]!.parsed.subject).toBe('Join Paying online, Grace');
    expect((await messagesOf(tenant)).results).toMatchObject([{ origin: 'INVITED', countsAsContact: false, status: 'SENT' }]);
    expect((await contactsOf(tenant, persons[0]!.personId)).total).toBe(1);
    // Moving again to what it already is moves nothing, so nothing is sent.
    const again = await call(service, 'PATCH', `/studies/${studyId}/participants/${participants[0]!.participantId}`, { token: tenant.token, body: { status: 'INVITED', sendMessage: { templateId } } });
    expect(again.json()).toMatchObject({ message: { messageId: null, status: 'SKIPPED', reason: 'NO_MOVE' } });
    // Without sendMessage the answer is the Participant as before.
    const plain = await call(service, 'PATCH', `/studies/${studyId}/participants/${participants[0]!.participantId}`, { token: tenant.token, body: { note: 'called' } });
    expect(plain.json()).not.toHaveProperty('message');
  });

  it('refuses sendMessage without a move that reaches out (400), and an unknown template (404), changing nothing', async () => {
    const tenant = await createTenant(service);
    const { studyId, participants } = await studyWith(service, tenant, [{ email: email('x') }]);
    const url = `/studies/${studyId}/participants/${participants[0]!.participantId}`;
    const withoutMove = await call(service, 'PATCH', url, { token: tenant.token, body: { note: 'x', sendMessage: { templateId: 'mtp_x' } } });
    expect(withoutMove.statusCode).toBe(400);
    expect(withoutMove.json()).toEqual({ errors: [{ message: expect.any(String), path: ['sendMessage'] }] });
    const unknown = await call(service, 'PATCH', url, { token: tenant.token, body: { status: 'INVITED', sendMessage: { templateId: 'mtp_unknown' } } });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ errors: [{ message: 'Message template not found', path: ['sendMessage', 'templateId'] }] });
    expect((await call(service, 'GET', url, { token: tenant.token })).json()).toMatchObject({ status: 'NOT_STARTED', note: null });
  });
  it('refuses sendMessage to a role that may move participants but not send messages (COLLABORATOR): 403, nothing moved or queued', async () => {
    const tenant = await createTenant(service);
    const templateId = await createTemplate(service, tenant);
    const { studyId, participants } = await studyWith(service, tenant, [{ email: email('collab') }]);
    const { token } = await tenant.tokenFor('COLLABORATOR');
    const url = `/studies/${studyId}/participants/${participants[0]!.participantId}`;
    const refused = await call(service, 'PATCH', url, { token, body: { status: 'INVITED', sendMessage: { templateId } } });
    expect(refused.statusCode).toBe(403);
    expect((await call(service, 'GET', url, { token: tenant.token })).json()).toMatchObject({ status: 'NOT_STARTED' });
    expect((await messagesOf(tenant)).results).toEqual([]);
    const moved = await call(service, 'PATCH', url, { token, body: { status: 'INVITED' } });
    expect(moved.statusCode, moved.body).toBe(200);
  });
});

describe('GET /messages and GET /messages/{messageId}', () => {
  it('pages with keyset cursors, filters by study, person and status, masks personal data without the right, and answers 404 for another workspace', async () => {
    const tenant = await createTenant(service);
    const other = await createTenant(service);
    const templateId = await createTemplate(service, tenant);
    const { studyId, persons, participants } = await studyWith(service, tenant, [{ email: email('p1'), firstName: 'Ann' }, { email: email('p2') }, { email: email('p3') }]);
    await sendMessages(service, tenant, studyId, { templateId, participantIds: participants.map((p) => p.participantId) });
    await runMail(service, tenant);
    const first = await call(service, 'GET', '/messages', { token: tenant.token, query: { size: '2' } });
    const firstPage = first.json<{ results: { messageId: string }[]; total: number; pageInfo: { endCursor: string; hasNextPage: boolean } }>();
    expect(firstPage).toMatchObject({ total: 3, pageInfo: { hasNextPage: true } });
    const second = await call(service, 'GET', '/messages', { token: tenant.token, query: { size: '2', startCursor: firstPage.pageInfo.endCursor } });
    const ids = [...firstPage.results, ...second.json<{ results: { messageId: string }[] }>().results].map((m) => m.messageId);
    expect(new Set(ids).size).toBe(3);
    expect((await call(service, 'GET', '/messages', { token: tenant.token, query: { size: '2', startCursor: firstPage.pageInfo.endCursor, status: 'SENT' } })).statusCode).toBe(400);
    expect((await messagesOf(tenant, { personId: persons[0]!.personId })).total).toBe(1);
    expect((await messagesOf(tenant, { studyId, status: 'SENT' })).total).toBe(3);
    expect((await messagesOf(tenant, { status: 'QUEUED' })).total).toBe(0);
    expect((await call(service, 'GET', '/messages', { token: tenant.token, query: { status: 'LOST' } })).json()).toEqual({ errors: [{ message: expect.any(String), path: ['status'] }] });

    const mine = (await messagesOf(tenant, { personId: persons[0]!.personId })).results[0]!.messageId;
    const { token } = await tenant.tokenFor('OBSERVER', { canReadPersonalData: false });
    const masked = await call(service, 'GET', `/messages/${mine}`, { token });
    expect(masked.json()).toMatchObject({ recipientEmail: '***@***', subject: '***', textBody: '***', htmlBody: '***' });
    expect(masked.body).not.toMatch(/Ann|p1\./);
    const theirs = await call(service, 'GET', `/messages/${mine}`, { token: other.token });
    expect(theirs.statusCode).toBe(404);
    expect(theirs.json()).toEqual({ errors: [{ message: 'Message not found', path: ['messageId'] }] });
    expect((await call(service, 'GET', '/messages', { token: other.token })).json()).toMatchObject({ total: 0 });
  });
});

describe('personal data of deleted people', () => {
  it('the purge erases what their messages hold of them (address, subject, bodies) and keeps the record', async () => {
    const tenant = await createTenant(service);
    const templateId = await createTemplate(service, tenant);
    const address = email('purged');
    const { studyId, persons, participants } = await studyWith(service, tenant, [{ email: address, firstName: 'Erased' }]);
    await sendMessages(service, tenant, studyId, { templateId, participantIds: [participants[0]!.participantId] });
    await runMail(service, tenant);
    expect((await call(service, 'DELETE', `/people/${persons[0]!.personId}`, { token: tenant.token })).statusCode).toBe(200);
    try {
      await callTestHelper(service, 'POST', '/clock', { body: { now: new Date(Date.now() + 31 * 86_400_000).toISOString() } });
      const ran = await callTestHelper(service, 'POST', '/jobs/run', { query: { workspaceId: tenant.workspaceId } });
      expect(ran.statusCode, ran.body).toBe(200);
    } finally {
      await callTestHelper(service, 'DELETE', '/clock');
    }
    const [message] = (await messagesOf(tenant)).results;
    const detail = await call(service, 'GET', `/messages/${message!.messageId}`, { token: tenant.token });
    expect(detail.json()).toMatchObject({ status: 'SENT', recipientEmail: null, subject: null, textBody: null, htmlBody: null, sentAt: expect.any(String) });
    expect(detail.body).not.toContain('Erased');
  });
});

async function sentMessage(tenant: Tenant, serviceUsed: TestService = service) {
  const templateId = await createTemplate(serviceUsed, tenant);
  const { studyId, persons, participants } = await studyWith(serviceUsed, tenant, [{ email: email('sec') }]);
  const response = await sendMessages(serviceUsed, tenant, studyId, { templateId, participantIds: [participants[0]!.participantId] });
  expect(response.statusCode, response.body).toBe(200);
  return { studyId, personId: persons[0]!.personId, participantId: participants[0]!.participantId, templateId };
}

describeSecurity('POST /studies/{studyId}/messages', () => service, {
  method: 'POST',
  right: 'messages:write',
  addressesResource: true,
  request: async (tenant) => {
    const { studyId, participantId, templateId } = await sentMessage(tenant);
    return { url: `/studies/${studyId}/messages`, body: { templateId, participantIds: [participantId] } };
  },
});

describeSecurity('GET /messages', () => service, {
  method: 'GET',
  right: 'messages:read',
  addressesResource: false,
  request: async () => ({ url: '/messages' }),
});

describeSecurity('GET /messages/{messageId}', () => service, {
  method: 'GET',
  right: 'messages:read',
  addressesResource: true,
  request: async (tenant) => {
    await sentMessage(tenant);
    const listed = await call(service, 'GET', '/messages', { token: tenant.token });
    return { url: `/messages/${listed.json<{ results: { messageId: string }[] }>().results[0]!.messageId}` };
  },
});

describeSecurity('POST /test-helpers/mail/run', () => service, {
  method: 'POST',
  right: 'test-helpers:run',
  addressesResource: false,
  success: 200,
  request: async () => ({ url: '/test-helpers/mail/run' }),
});
