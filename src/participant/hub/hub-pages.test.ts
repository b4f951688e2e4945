import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type Tenant, type TestService } from '../../../test/harness.js';
import { createPerson } from '../../../test/people-factory.js';
import { addParticipants, createStudy } from '../../../test/participants-factory.js';
import { type SmtpReceiver, smtpConfig, startSmtpReceiver } from '../../../test/smtp-receiver.js';
import { signInPerEmailMax } from './routes.js';

/**
 * A page of the person's own (issue 34, item 6) through HTTP: sign-in by an emailed link (same
 * answer for known and unknown addresses, the link spent once by POST, forged, used and expired
 * links), the session cookie, the hub's every change (withdraw, details, stop messages, opt out,
 * erase) with its event, the data download, and the walls: form tokens, cross-site posts, another
 * person's ids, another workspace, rate limits.
 */

let receiver: SmtpReceiver;
let service: TestService;
beforeAll(async () => {
  receiver = await startSmtpReceiver();
  service = await startTestService(smtpConfig(receiver));
});
afterAll(async () => {
  service?.deps.clock.reset();
  await service?.stop();
  await receiver?.close();
});

const get = (path: string, headers: Record<string, string> = {}) => service.app.inject({ method: 'GET', url: path, headers });
function post(path: string, fields: [string, string][], headers: Record<string, string> = {}) {
  return service.app.inject({ method: 'POST', url: path, headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin', ...headers }, payload: new URLSearchParams(fields).toString() });
}
const field = (body: string, name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(body)?.[1];
/** The form token of the form posting to `action`. */
const tokenOf = (body: string, action: string) => new RegExp(`action="${action.replace(/[.?]/g, '\\$&')}"[^>]*>\\s*<input type="hidden" name="formToken" value="([^"]*)"`).exec(body)?.[1];
const signInMails = (email: string) => receiver.to(email).filter((mail) => (mail.parsed.subject ?? '').startsWith('Your link to sign in'));
const runJobs = (tenant: Tenant) => service.jobs.runDue({ workspaceId: tenant.workspaceId });
const webhookTypes = async (tenant: Tenant) => (await service.deps.db.selectFrom('webhook_messages').select(['event_type', 'payload']).where('workspace_id', '=', tenant.workspaceId).orderBy('message_id').execute());

const consentForm = {
  name: 'Interview consent',
  title: 'Consent to take part',
  body: 'We talk for 45 minutes.',
  language: 'en',
  requiredStatements: [{ id: 'read', text: 'I have read this.' }],
  optionalChoices: [],
};

/** A workspace with a person in a study (signed consent on the page, a scheduled session), an editable and a locked property. */
async function world(name = 'Acme Research') {
  const tenant = await createTenant(service, name);
  const imported = await call(service, 'POST', '/properties/import', {
    token: tenant.token,
    body: [
      { name: 'Favourite shop', propertyType: 'STRING', editableByPerson: true, description: 'Where you shop most' },
      { name: 'Household size', propertyType: 'NUMBER', editableByPerson: true },
      { name: 'Panel score', propertyType: 'NUMBER' },
    ],
  });
  expect(imported.statusCode, imported.body).toBe(200);
  const [shop, household, score] = imported.json<{ results: { personProperty: { propertyId: string; editableByPerson: boolean } }[] }>().results.map((result) => result.personProperty);
  const created = await call(service, 'POST', '/consent-forms', { token: tenant.token, body: consentForm });
  const form = created.json<{ consentFormId: string }>();
  const studyId = await createStudy(service, tenant, { studyType: 'INTERVIEWS', screener: false, launch: true, studyPlan: { externalName: 'Checkout interviews', consentFormId: form.consentFormId } });
  const otherStudyId = await createStudy(service, tenant, { studyType: 'INTERVIEWS', screener: false, launch: true, studyPlan: { externalName: 'Delivery diaries' } });
  const email = `ottoline.${Math.random().toString(36).slice(2)}@example.test`;
  const person = await createPerson(service, tenant, { firstName: 'Ottoline', lastName: 'Featherstone', email, properties: { [score!.propertyId]: 7 } });
  const [participant] = await addParticipants(service, tenant, studyId, [person.personId]);
  const [otherParticipant] = await addParticipants(service, tenant, otherStudyId, [person.personId]);
  // Signed on the participant's page, through a consent link.
  const link = await call(service, 'POST', `/studies/${studyId}/participants/${participant!.participantId}/links`, { token: tenant.token, body: { purpose: 'CONSENT' } });
  const path = new URL(link.json<{ url: string }>().url).pathname;
  const page = await get(path);
  const signed = await post(`${path}/consent`, [['formToken', field(page.body, 'formToken')!], ['version', '1'], ['statement', 'read'], ['signedName', 'Ottoline Featherstone']]);
  expect(signed.statusCode, signed.body).toBe(200);
  const scheduled = await call(service, 'PATCH', `/studies/${otherStudyId}/participants/${otherParticipant!.participantId}`, { token: tenant.token, body: { status: 'SCHEDULED', interviewStartTime: '2031-03-04T10:00:00.000Z' } });
  expect(scheduled.statusCode, scheduled.body).toBe(200);
  const consentId = (await service.deps.db.selectFrom('consent_submissions').select('consent_submission_id').where('person_id', '=', person.personId).executeTakeFirstOrThrow()).consent_submission_id;
  return { tenant, email, person, studyId, otherStudyId, participantId: participant!.participantId, otherParticipantId: otherParticipant!.participantId, consentId, shop: shop!, household: household!, score: score! };
}

/** Asks for a link, runs the job, and answers the link's path from the email. */
async function requestLink(workspaceId: string, email: string, tenant: Tenant) {
  const page = await get(`/me/${workspaceId}`);
  const asked = await post(`/me/${workspaceId}`, [['formToken', field(page.body, 'formToken')!], ['email', email]]);
  expect(asked.statusCode, asked.body).toBe(200);
  await runJobs(tenant);
  const mail = signInMails(email).at(-1);
  expect(mail, 'a sign-in email').toBeDefined();
  const url = /https:\/\/recruit\.example\.test\/me\/link\/[A-Za-z0-9_-]{43}/.exec(mail!.parsed.text ?? '')?.[0];
  expect(url, mail!.parsed.text).toBeDefined();
  return new URL(url!).pathname;
}

/** Signs in through the link: the session cookie's header value. */
async function signIn(workspaceId: string, email: string, tenant: Tenant) {
  const path = await requestLink(workspaceId, email, tenant);
  const page = await get(path);
  expect(page.statusCode, page.body).toBe(200);
  const continued = await post(path, [['formToken', field(page.body, 'formToken')!]]);
  expect(continued.statusCode, continued.body).toBe(303);
  const cookie = String(continued.headers['set-cookie']).split(';')[0]!;
  return { cookie, path };
}

describe('sign-in', () => {
  it('asks for an address in the browser\'s language, under the workspace\'s name; an unknown workspace is 404', async () => {
    const { tenant } = await world();
    const page = await get(`/me/${tenant.workspaceId}`);
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-security-policy']).toContain("default-src 'none'");
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    expect(page.body).toContain('<title>See what we hold about you – Acme Research</title>');
    expect(page.body).toContain('<label for="email">Email address</label>');
    const german = await get(`/me/${tenant.workspaceId}`, { 'accept-language': 'de-DE,de;q=0.9' });
    expect(german.body).toContain('<html lang="de" dir="ltr">');
    expect((await get('/me/wsp_nothing_here')).statusCode).toBe(404);
  });

  it('answers the same page for a known and an unknown address, queues a job for each, and emails a link only to the known one', async () => {
    const { tenant, email } = await world();
    const page = await get(`/me/${tenant.workspaceId}`);
    const token = field(page.body, 'formToken')!;
    const known = await post(`/me/${tenant.workspaceId}`, [['formToken', token], ['email', email.toUpperCase()]]);
    const unknown = await post(`/me/${tenant.workspaceId}`, [['formToken', token], ['email', 'nobody.here@example.test']]);
    expect(known.statusCode).toBe(200);
    expect(unknown.statusCode).toBe(200);
    expect(known.body).toBe(unknown.body);
    expect(known.body).toContain('If this address is known to Acme Research, a link to sign in is on its way.');
    const jobs = await service.deps.db.selectFrom('jobs').select(['payload']).where('workspace_id', '=', tenant.workspaceId).where('queue', '=', 'person-access.sign-in').execute();
    expect(jobs).toHaveLength(2);
    expect(JSON.stringify(jobs)).not.toContain('@');
    await runJobs(tenant);
    expect(receiver.to('nobody.here@example.test')).toEqual([]);
    const [mail] = signInMails(email);
    expect(mail!.parsed.subject).toBe('Your link to sign in to Acme Research');
    const token43 = /\/me\/link\/([A-Za-z0-9_-]{43})/.exec(mail!.parsed.text ?? '')![1]!;
    // Only the digest is stored.
    const links = await service.deps.db.selectFrom('person_access_links').selectAll().where('workspace_id', '=', tenant.workspaceId).execute();
    expect(links).toHaveLength(1);
    expect(JSON.stringify(links)).not.toContain(token43);
    expect(Date.parse(links[0]!.expires_at) - Date.parse(links[0]!.created_at)).toBe(15 * 60_000);
  });

  it('refuses an address of the wrong form (400, naming the field), a missing form token and a cross-site post (403)', async () => {
    const { tenant } = await world();
    const page = await get(`/me/${tenant.workspaceId}`);
    const token = field(page.body, 'formToken')!;
    const wrong = await post(`/me/${tenant.workspaceId}`, [['formToken', token], ['email', 'not an address']]);
    expect(wrong.statusCode).toBe(400);
    expect(wrong.body).toContain('<a href="#email">Email address — Enter an email address in the right form, like name@example.com</a>');
    expect(wrong.body).toContain('aria-invalid="true"');
    expect((await post(`/me/${tenant.workspaceId}`, [['email', 'a@example.test']])).statusCode).toBe(403);
    expect((await post(`/me/${tenant.workspaceId}`, [['formToken', token], ['email', 'a@example.test']], { 'sec-fetch-site': 'cross-site' })).statusCode).toBe(403);
    // Another workspace's form token is no token here.
    const other = await createTenant(service);
    expect((await post(`/me/${other.workspaceId}`, [['formToken', token], ['email', 'a@example.test']])).statusCode).toBe(403);
  });

  it('limits the links asked for one address (429 with Retry-After)', async () => {
    const { tenant } = await world();
    const page = await get(`/me/${tenant.workspaceId}`);
    const token = field(page.body, 'formToken')!;
    const address = `limited.${Date.now()}@example.test`;
    for (let index = 0; index < signInPerEmailMax; index++) expect((await post(`/me/${tenant.workspaceId}`, [['formToken', token], ['email', address]])).statusCode).toBe(200);
    const refused = await post(`/me/${tenant.workspaceId}`, [['formToken', token], ['email', address.toUpperCase()]]);
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBeDefined();
  });
});

describe('the link', () => {
  it('shows Continue on GET (spending nothing), spends it on POST into a session cookie, and refuses it a second time (410)', async () => {
    const { tenant, email } = await world();
    const path = await requestLink(tenant.workspaceId, email, tenant);
    const first = await get(path);
    const again = await get(path);
    expect(again.statusCode).toBe(200);
    expect(first.body).toContain('>Continue</button>');
    const continued = await post(path, [['formToken', field(first.body, 'formToken')!]]);
    expect(continued.statusCode).toBe(303);
    expect(continued.headers.location).toBe('/me');
    const cookie = String(continued.headers['set-cookie']);
    expect(cookie).toMatch(/^me_session=[A-Za-z0-9_-]{43}; Path=\/me; HttpOnly; SameSite=Lax; Max-Age=28800; Secure$/);
    const session = await service.deps.db.selectFrom('person_sessions').selectAll().where('workspace_id', '=', tenant.workspaceId).executeTakeFirstOrThrow();
    expect(JSON.stringify(session)).not.toContain(cookie.split(';')[0]!.split('=')[1]!);
    const reused = await post(path, [['formToken', field(first.body, 'formToken')!]]);
    expect(reused.statusCode).toBe(410);
    expect(reused.body).toContain('This link has already been used');
    expect(reused.body).toContain(`href="/me/${tenant.workspaceId}"`);
    expect((await get(path)).statusCode).toBe(410);
  });

  it('starts exactly one session when many posts race', async () => {
    const { tenant, email } = await world();
    const path = await requestLink(tenant.workspaceId, email, tenant);
    const token = field((await get(path)).body, 'formToken')!;
    const answers = await Promise.all(Array.from({ length: 8 }, () => post(path, [['formToken', token]])));
    expect(answers.filter((answer) => answer.statusCode === 303)).toHaveLength(1);
    expect(answers.filter((answer) => answer.statusCode === 410)).toHaveLength(7);
    expect(await service.deps.db.selectFrom('person_sessions').select('session_id').where('workspace_id', '=', tenant.workspaceId).execute()).toHaveLength(1);
  });

  it('refuses a forged token (404), an expired link (410), and a post without the link\'s form token (403)', async () => {
    const { tenant, email } = await world();
    expect((await get(`/me/link/${'A'.repeat(43)}`)).statusCode).toBe(404);
    expect((await get('/me/link/short')).statusCode).toBe(404);
    const path = await requestLink(tenant.workspaceId, email, tenant);
    const token = field((await get(path)).body, 'formToken')!;
    expect((await post(path, [])).statusCode).toBe(403);
    expect((await post(path, [['formToken', token]], { 'sec-fetch-site': 'cross-site' })).statusCode).toBe(403);
    service.deps.clock.set(new Date(Date.now() + 16 * 60_000));
    try {
      const expired = await post(path, [['formToken', token]]);
      expect(expired.statusCode).toBe(410);
      expect(expired.body).toContain('Sign-in links work for 15 minutes.');
    } finally {
      service.deps.clock.reset();
    }
  });
});

describe('the hub', () => {
  it('shows the person\'s studies, sessions, consents, editable details and choices; without a session, 401', async () => {
    const w = await world();
    expect((await get('/me')).statusCode).toBe(401);
    expect((await get('/me', { cookie: `me_session=${'B'.repeat(43)}` })).statusCode).toBe(401);
    const { cookie } = await signIn(w.tenant.workspaceId, w.email, w.tenant);
    const page = await get('/me', { cookie });
    expect(page.statusCode, page.body).toBe(200);
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.body).toContain('<h1>Your page</h1>');
    expect(page.body).toContain('Checkout interviews');
    expect(page.body).toContain('Delivery diaries');
    expect(page.body).toContain('Session booked');
    expect(page.body).toContain('<time datetime="2031-03-04T10:00:00.000Z">Tuesday, March 4, 2031 at 10:00 AM UTC</time>');
    expect(page.body).toContain(`href="/me/consents/${w.consentId}/copy.pdf"`);
    expect(page.body).toContain('Withdraw my consent to Checkout interviews');
    expect(page.body).toContain(`<label for="property-${w.shop.propertyId}">Favourite shop</label>`);
    expect(page.body).not.toContain('Panel score');
    expect(page.body).toContain('Stop messages about Delivery diaries');
  });

  it("lists the person's booking in their zone, with its calendar file and a button to its own page (move, cancel); another's booking is 404", async () => {
    /** A booking of the world's person in a study of its own, hosted every hour of every day, made through the API. */
    const bookFor = async (w: Awaited<ReturnType<typeof world>>) => {
      const studyId = await createStudy(service, w.tenant, { studyType: 'INTERVIEWS', launch: true, studyPlan: { externalName: 'Kitchen interviews' } });
      const allDay = [{ start: '00:00', end: '24:00' }];
      const weeklyHours = Object.fromEntries(['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY', 'SUNDAY'].map((day) => [day, allDay]));
      expect((await call(service, 'PUT', `/studies/${studyId}/schedule`, { token: w.tenant.token, body: { hosts: [{ userId: w.tenant.userId, timeZone: 'Europe/Berlin', weeklyHours, overrides: [] }] } })).statusCode).toBe(200);
      const [participant] = await addParticipants(service, w.tenant, studyId, [w.person.personId]);
      // Two days ahead: the person may still change it (the default window closes 24 hours before).
      const open = (await call(service, 'GET', `/studies/${studyId}/slots`, { token: w.tenant.token })).json<{ slots: { startTime: string }[] }>().slots;
      const startTime = open.find((slot) => Date.parse(slot.startTime) > Date.now() + 2 * 86_400_000)!.startTime;
      const booked = await call(service, 'POST', `/studies/${studyId}/bookings`, { token: w.tenant.token, body: { participantId: participant!.participantId, startTime, personTimeZone: 'Asia/Kathmandu' } });
      expect(booked.statusCode, booked.body).toBe(201);
      return { bookingId: booked.json<{ bookingId: string }>().bookingId, startTime };
    };
    const w = await world();
    const { bookingId, startTime } = await bookFor(w);
    const { cookie } = await signIn(w.tenant.workspaceId, w.email, w.tenant);
    const page = await get('/me', { cookie });
    expect(page.body).toContain(`<time datetime="${startTime}">`);
    expect(page.body).toMatch(/GMT\+5:45<\/time>/);
    expect(page.body).toContain('Change or cancel the Kitchen interviews session');
    const calendar = await get(`/me/sessions/${bookingId}/calendar.ics`, { cookie });
    expect(calendar.statusCode).toBe(200);
    expect(calendar.headers['content-type']).toBe('text/calendar; charset=utf-8');
    expect(calendar.body).toContain(`UID:${bookingId}@recruit.example.test`);
    const manageToken = tokenOf(page.body, `/me/sessions/${bookingId}/manage`)!;
    const manage = await post(`/me/sessions/${bookingId}/manage`, [['formToken', manageToken]], { cookie });
    expect(manage.statusCode, manage.body).toBe(303);
    const sessionPage = await get(String(manage.headers.location));
    expect(sessionPage.statusCode).toBe(200);
    expect(sessionPage.body).toContain('Change the time');
    expect(sessionPage.body).toContain('Cancel the session');
    // The walls: no form token, another person's booking (for reading and for its page), an id that is no booking.
    expect((await post(`/me/sessions/${bookingId}/manage`, [], { cookie })).statusCode).toBe(403);
    const other = await world();
    const foreign = await bookFor(other);
    expect((await post(`/me/sessions/${foreign.bookingId}/manage`, [['formToken', manageToken]], { cookie })).statusCode).toBe(404);
    expect((await get(`/me/sessions/${foreign.bookingId}/calendar.ics`, { cookie })).statusCode).toBe(404);
    expect((await get('/me/sessions/not-a-booking/calendar.ics', { cookie })).statusCode).toBe(404);
    expect((await get(`/me/sessions/${bookingId}/calendar.ics`)).statusCode).toBe(401);
  });

  it('downloads the signed copy of the person\'s own consent, and 404s another\'s', async () => {
    const w = await world();
    const other = await world();
    const { cookie } = await signIn(w.tenant.workspaceId, w.email, w.tenant);
    const pdf = await get(`/me/consents/${w.consentId}/copy.pdf`, { cookie });
    expect(pdf.statusCode).toBe(200);
    expect(pdf.headers['content-type']).toBe('application/pdf');
    expect(pdf.headers['content-disposition']).toMatch(/^attachment; filename="consent-cfm_[A-Z0-9]+-v1\.pdf"$/);
    expect(pdf.rawPayload.subarray(0, 5).toString()).toBe('%PDF-');
    // Another workspace's consent, through this session: nothing.
    expect((await get(`/me/consents/${other.consentId}/copy.pdf`, { cookie })).statusCode).toBe(404);
  });

  it('withdraws the person\'s consent through the withdrawal path (event as from the link), and 404s another person\'s', async () => {
    const w = await world();
    const other = await world();
    const { cookie } = await signIn(w.tenant.workspaceId, w.email, w.tenant);
    const page = await get('/me', { cookie });
    const token = tokenOf(page.body, `/me/consents/${w.consentId}/withdraw`)!;
    expect((await post(`/me/consents/${other.consentId}/withdraw`, [['formToken', token]], { cookie })).statusCode).toBe(404);
    expect((await post(`/me/consents/${w.consentId}/withdraw`, [], { cookie })).statusCode).toBe(403);
    const withdrawn = await post(`/me/consents/${w.consentId}/withdraw`, [['formToken', token]], { cookie });
    expect(withdrawn.statusCode).toBe(303);
    expect(withdrawn.headers.location).toBe('/me?done=withdrawn');
    const row = await service.deps.db.selectFrom('consent_submissions').select('withdrawn_at').where('consent_submission_id', '=', w.consentId).executeTakeFirstOrThrow();
    expect(row.withdrawn_at).not.toBeNull();
    expect((await webhookTypes(w.tenant)).map((event) => event.event_type)).toContain('consent.withdrawn');
    const after = await get('/me?done=withdrawn', { cookie });
    expect(after.body).toContain('Your consent is withdrawn.');
    expect(after.body).toContain('Withdrawn on');
  });

  it('saves the editable details through the people writer (person.updated, actor PERSON); a bad value is a 400 naming the field; a locked property is left alone', async () => {
    const w = await world();
    const { cookie } = await signIn(w.tenant.workspaceId, w.email, w.tenant);
    const token = tokenOf((await get('/me', { cookie })).body, '/me/details')!;
    const bad = await post('/me/details', [['formToken', token], [`p_${w.shop.propertyId}`, 'Corner shop'], [`p_${w.household.propertyId}`, 'three']], { cookie });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain(`<a href="#property-${w.household.propertyId}">Household size — Enter a number, like 12 or 3.5</a>`);
    expect(bad.body).toContain('value="three"');
    const saved = await post('/me/details', [['formToken', token], [`p_${w.shop.propertyId}`, 'Corner shop'], [`p_${w.household.propertyId}`, '3'], [`p_${w.score.propertyId}`, '99']], { cookie });
    expect(saved.statusCode, saved.body).toBe(303);
    const person = await call(service, 'GET', `/people/${w.person.personId}`, { token: w.tenant.token });
    expect(person.json<{ properties: Record<string, unknown> }>().properties).toMatchObject({ [w.shop.propertyId]: 'Corner shop', [w.household.propertyId]: 3, [w.score.propertyId]: 7 });
    const event = (await webhookTypes(w.tenant)).find((row) => row.event_type === 'person.updated');
    expect(event?.payload).toMatchObject({ data: { personId: w.person.personId, actor: 'PERSON', fields: [`properties.${w.shop.propertyId}`, `properties.${w.household.propertyId}`] } });
    expect((await post('/me/details', [[`p_${w.shop.propertyId}`, 'x']], { cookie })).statusCode).toBe(403);
  });

  it('stops one study\'s messages (the sender skips them), 404s another person\'s participant, and opts out of all', async () => {
    const w = await world();
    const other = await world();
    const { cookie } = await signIn(w.tenant.workspaceId, w.email, w.tenant);
    const page = await get('/me', { cookie });
    const token = tokenOf(page.body, `/me/studies/${w.participantId}/stop-messages`)!;
    expect((await post(`/me/studies/${other.participantId}/stop-messages`, [['formToken', token]], { cookie })).statusCode).toBe(404);
    const stopped = await post(`/me/studies/${w.participantId}/stop-messages`, [['formToken', token]], { cookie });
    expect(stopped.statusCode).toBe(303);
    const row = await service.deps.db.selectFrom('participants').select('messages_stopped_at').where('participant_id', '=', w.participantId).executeTakeFirstOrThrow();
    expect(row.messages_stopped_at).not.toBeNull();
    expect((await webhookTypes(w.tenant)).find((event) => event.event_type === 'participant.messages_stopped')?.payload).toMatchObject({ data: { participantId: w.participantId, actor: 'PERSON' } });
    // The team sends to the study: this participant is skipped as opted out.
    const template = await call(service, 'POST', '/message-templates', { token: w.tenant.token, body: { name: 'Reminder', subject: 'Hello', textBody: 'Hello {{ person.firstName }}' } });
    expect(template.statusCode, template.body).toBe(201);
    const sent = await call(service, 'POST', `/studies/${w.studyId}/messages`, { token: w.tenant.token, body: { templateId: template.json<{ templateId: string }>().templateId, participantIds: [w.participantId] } });
    expect(sent.statusCode, sent.body).toBe(200);
    expect(sent.json()).toMatchObject({ recipients: 1, queued: 0, skipped: { OPTED_OUT: 1 } });

    const all = await post('/me/messages/stop', [['formToken', tokenOf(page.body, '/me/messages/stop')!]], { cookie });
    expect(all.statusCode).toBe(303);
    const status = await call(service, 'GET', `/people/${w.person.personId}/opted-out`, { token: w.tenant.token });
    expect(status.json()).toMatchObject({ isOptedOut: true });
    // An opted-out person still signs in and sees their page.
    const again = await signIn(w.tenant.workspaceId, w.email, w.tenant);
    expect((await get('/me', { cookie: again.cookie })).body).toContain('You get no messages about studies from Acme Research.');
  });

  it('downloads everything held about the person as JSON', async () => {
    const w = await world();
    const { cookie } = await signIn(w.tenant.workspaceId, w.email, w.tenant);
    const data = await get('/me/data.json', { cookie });
    expect(data.statusCode).toBe(200);
    expect(data.headers['content-disposition']).toBe('attachment; filename="my-data.json"');
    const document = data.json();
    expect(document.person).toMatchObject({ personId: w.person.personId, email: w.email, firstName: 'Ottoline' });
    expect(document.properties).toContainEqual({ propertyId: w.score.propertyId, name: 'Panel score', value: 7 });
    expect(document.participations.map((row: { study: string }) => row.study).sort()).toEqual(['Checkout interviews', 'Delivery diaries']);
    expect(document.consents[0]).toMatchObject({ consentSubmissionId: w.consentId, signedName: 'Ottoline Featherstone', source: 'PARTICIPANT_PAGE' });
    expect(document.events.length).toBeGreaterThan(0);
    expect(document).toHaveProperty('messages');
    expect(document).toHaveProperty('screenerAnswers');
  });

  it('erases the person after a confirmation page, with person.deleted, and the session ends', async () => {
    const w = await world();
    const { cookie } = await signIn(w.tenant.workspaceId, w.email, w.tenant);
    const confirm = await get('/me/erase', { cookie });
    expect(confirm.statusCode).toBe(200);
    expect(confirm.body).toContain('Yes, delete everything about me');
    const erased = await post('/me/erase', [['formToken', tokenOf(confirm.body, '/me/erase')!]], { cookie });
    expect(erased.statusCode).toBe(200);
    expect(erased.body).toContain('Everything about you is deleted');
    expect(String(erased.headers['set-cookie'])).toContain('Max-Age=0');
    expect((await call(service, 'GET', `/people/${w.person.personId}`, { token: w.tenant.token })).statusCode).toBe(404);
    expect((await webhookTypes(w.tenant)).map((event) => event.event_type)).toContain('person.deleted');
    expect((await get('/me', { cookie })).statusCode).toBe(401);
    expect(await service.deps.db.selectFrom('person_sessions').select('session_id').where('person_id', '=', w.person.personId).execute()).toEqual([]);
  });

  it('signs out; a session ends after 30 idle minutes and after 8 hours', async () => {
    const w = await world();
    const { cookie } = await signIn(w.tenant.workspaceId, w.email, w.tenant);
    const token = tokenOf((await get('/me', { cookie })).body, '/me/sign-out')!;
    expect((await post('/me/sign-out', [['formToken', token]], { cookie })).statusCode).toBe(200);
    expect((await get('/me', { cookie })).statusCode).toBe(401);

    const idle = await signIn(w.tenant.workspaceId, w.email, w.tenant);
    const start = Date.now();
    try {
      service.deps.clock.set(new Date(start + 29 * 60_000));
      expect((await get('/me', { cookie: idle.cookie })).statusCode).toBe(200);
      service.deps.clock.set(new Date(start + 60 * 60_000));
      expect((await get('/me', { cookie: idle.cookie })).statusCode).toBe(401);
    } finally {
      service.deps.clock.reset();
    }
    const long = await signIn(w.tenant.workspaceId, w.email, w.tenant);
    try {
      for (let minutes = 25; minutes <= 8 * 60; minutes += 25) {
        service.deps.clock.set(new Date(start + minutes * 60_000));
        expect((await get('/me', { cookie: long.cookie })).statusCode, `at ${minutes} minutes`).toBe(200);
      }
      service.deps.clock.set(new Date(start + 8 * 60 * 60_000 + 60_000));
      expect((await get('/me', { cookie: long.cookie })).statusCode).toBe(401);
    } finally {
      service.deps.clock.reset();
    }
  });

  it('refuses a cross-site post and a forged form token on every change', async () => {
    const w = await world();
    const { cookie } = await signIn(w.tenant.workspaceId, w.email, w.tenant);
    const page = await get('/me', { cookie });
    for (const action of [`/me/consents/${w.consentId}/withdraw`, `/me/studies/${w.participantId}/stop-messages`, '/me/messages/stop', '/me/details', '/me/erase', '/me/sign-out']) {
      expect((await post(action, [['formToken', 'forged']], { cookie })).statusCode, action).toBe(403);
      expect((await post(action, [['formToken', tokenOf(page.body, '/me/sign-out')!]], { cookie, 'sec-fetch-site': 'cross-site' })).statusCode, action).toBe(403);
    }
    // Nothing changed.
    expect((await get('/me', { cookie })).statusCode).toBe(200);
  });
});
