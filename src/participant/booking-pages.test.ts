import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, type Tenant, type TestService, startTestService, testDatabaseUrl } from '../../test/harness.js';
import { createPerson } from '../../test/people-factory.js';
import { addParticipants, createStudy } from '../../test/participants-factory.js';
import { type SmtpReceiver, smtpConfig, startSmtpReceiver } from '../../test/smtp-receiver.js';
import { type Database, openDatabase } from '../db/database.js';
import { createTemplate, runMail, sendMessages } from '../families/messages/test-support.js';
import ICAL from 'ical.js';
import { bookingCalendarFile } from '../families/scheduling/icalendar.js';
import { bookingZoneScriptPath } from './booking-routes.js';

/**
 * The person's side of booking (issue 34, items 2 and 4) through HTTP, on both stores: a
 * SCHEDULING link's open times in the person's zone beside the host's, booking, the session's
 * page and calendar file, moving and canceling it, a time taken meanwhile, the study's window for
 * changes, the screener's booking step, the message's links.scheduling, and every refusal
 * (forged link, form token, cross-site post, another workspace, rate limit).
 */
let service: TestService;
let receiver: SmtpReceiver;
let pool: Database | undefined;
// A Monday, 06:00 UTC (07:00 in Berlin, winter time; 11:45 in Kathmandu).
const now = new Date('2027-01-04T06:00:00.000Z');
beforeAll(async () => {
  receiver = await startSmtpReceiver();
  pool = testDatabaseUrl ? await openDatabase({ databaseUrl: testDatabaseUrl, poolSize: 8, applicationName: 'booking-pages-test' }) : undefined;
  service = await startTestService(smtpConfig(receiver), pool ? { database: pool } : {});
  service.deps.clock.set(now);
});
afterAll(async () => {
  await service?.stop();
  await pool?.close();
  await receiver?.close();
});

const berlinMornings = { MONDAY: [{ start: '09:00', end: '12:00' }], TUESDAY: [{ start: '09:00', end: '12:00' }], WEDNESDAY: [{ start: '09:00', end: '12:00' }] };

interface World {
  tenant: Tenant;
  studyId: string;
  hostUserId: string;
  participantIds: string[];
}

/** An ACTIVE interview study hosted by one user in Berlin (09:00–12:00, Monday to Wednesday, 45-minute sessions on the hour), with `people` participants. */
async function world(options: { people?: number; schedule?: Record<string, unknown>; tenant?: Tenant; studyPlan?: Record<string, unknown>; screener?: Record<string, unknown> } = {}, target = service): Promise<World> {
  const tenant = options.tenant ?? (await createTenant(target));
  const hostUserId = (await tenant.tokenFor('RESEARCHER')).userId;
  const studyId = await createStudy(target, tenant, { studyType: 'INTERVIEWS', studyPlan: { externalName: 'Checkout interviews', scheduler: { interviewDurationMinutes: 45 }, ...options.studyPlan } });
  if (options.screener) {
    const screener = await call(target, 'PUT', `/studies/${studyId}/screener`, { token: tenant.token, body: options.screener });
    expect(screener.statusCode, screener.body).toBe(200);
  }
  expect((await call(target, 'POST', `/studies/${studyId}/launch`, { token: tenant.token })).statusCode).toBe(200);
  const put = await call(target, 'PUT', `/studies/${studyId}/schedule`, {
    token: tenant.token,
    body: { slotIntervalMinutes: 60, ...options.schedule, hosts: [{ userId: hostUserId, timeZone: 'Europe/Berlin', weeklyHours: berlinMornings, overrides: [] }] },
  });
  expect(put.statusCode, put.body).toBe(200);
  const people = await Promise.all(Array.from({ length: options.people ?? 1 }, () => createPerson(target, tenant, {})));
  const participants = people.length === 0 ? [] : await addParticipants(target, tenant, studyId, people.map((person) => person.personId));
  return { tenant, studyId, hostUserId, participantIds: participants.map((participant) => participant.participantId) };
}

async function linkOf(w: World, participantId = w.participantIds[0]!, purpose = 'SCHEDULING', target = service) {
  const response = await call(target, 'POST', `/studies/${w.studyId}/participants/${participantId}/links`, { token: w.tenant.token, body: { purpose } });
  expect(response.statusCode, response.body).toBe(201);
  return new URL(response.json<{ url: string }>().url).pathname;
}

const get = (path: string, headers: Record<string, string> = {}) => service.app.inject({ method: 'GET', url: path, headers });
function post(path: string, fields: [string, string][], headers: Record<string, string> = {}) {
  return service.app.inject({ method: 'POST', url: path, headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin', ...headers }, payload: new URLSearchParams(fields).toString() });
}
const field = (body: string, name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(body)?.[1];
const radios = (body: string) => [...body.matchAll(/type="radio"[^>]*name="startTime" value="([^"]+)"/g)].map((match) => match[1]!);
/** The page's text without tags, its spaces (narrow no-break ones included) as plain spaces. */
const textOf = (body: string) => body.replace(/<[^>]+>/g, ' ').replace(/[\s\u202f\u00a0]+/g, ' ');

/** Books `startTime` from the page at `pagePath` (its form token), as the person. */
async function bookFrom(pagePath: string, startTime: string, tz = 'Europe/Berlin', base = pagePath.replace(/\/book$/, '')) {
  const page = await get(pagePath);
  expect(page.statusCode, page.body).toBe(200);
  return post(`${base}/book`, [['formToken', field(page.body, 'formToken')!], ['startTime', startTime], ['tz', tz]]);
}

const bookingsOf = async (w: World) => (await call(service, 'GET', `/studies/${w.studyId}/bookings`, { token: w.tenant.token })).json<{ results: { bookingId: string; startTime: string; status: string; bookedBy: string; personTimeZone: string | null; sequence: number; cancelReason: string | null; canceledBy: string | null }[] }>().results;
const participantOf = async (w: World, participantId = w.participantIds[0]!) => (await call(service, 'GET', `/studies/${w.studyId}/participants/${participantId}`, { token: w.tenant.token })).json<{ status: string; interviewStartTime: string | null }>();

describe('a SCHEDULING link: the open times and booking', () => {
  it('lists the open times by day in the host’s zone by default, says so, and books one as the person; the page then shows the session', async () => {
    const w = await world();
    const path = await linkOf(w);
    const page = await get(path);
    expect(page.statusCode, page.body).toBe(200);
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    expect(page.body).toContain('<h1>Choose a time for Checkout interviews</h1>');
    const text = textOf(page.body);
    expect(text).toContain('Times are shown in the time zone Europe/Berlin, GMT+1.');
    expect(text).toContain('A session lasts 45 minutes.');
    expect(page.body).toContain('<legend>Monday, January 4, 2027</legend>');
    expect(page.body).toContain('<legend>Tuesday, January 5, 2027</legend>');
    // Four hours' notice from 06:00 UTC leaves Monday 11:00 Berlin; then Tuesday and Wednesday's mornings.
    expect(radios(page.body)).toEqual(['2027-01-04T10:00:00.000Z', '2027-01-05T08:00:00.000Z', '2027-01-05T09:00:00.000Z', '2027-01-05T10:00:00.000Z', '2027-01-06T08:00:00.000Z', '2027-01-06T09:00:00.000Z', '2027-01-06T10:00:00.000Z']);
    expect(text).toMatch(/11:00 AM 11:00 AM for the host, Berlin/);
    expect(page.body).toContain('<option value="Europe/Berlin" selected>Berlin</option>');
    // The zone is only a guess: the one small script may fill it from the browser, and the policy lets this origin's script run.
    expect(page.body).toContain(`<script src="${bookingZoneScriptPath}" defer></script>`);
    expect(page.headers['content-security-policy']).toBe("default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'; script-src 'self'");
    const script = await get(bookingZoneScriptPath);
    expect(script.statusCode).toBe(200);
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(script.body).toContain('resolvedOptions().timeZone');

    const booked = await post(`${path}/book`, [['formToken', field(page.body, 'formToken')!], ['startTime', '2027-01-05T09:00:00.000Z'], ['tz', 'Europe/Berlin']]);
    expect(booked.statusCode, booked.body).toBe(303);
    expect(booked.headers.location).toBe(path);
    const [booking, ...more] = await bookingsOf(w);
    expect(more).toEqual([]);
    expect(booking).toMatchObject({ startTime: '2027-01-05T09:00:00.000Z', status: 'BOOKED', bookedBy: 'PERSON', personTimeZone: 'Europe/Berlin', sequence: 0 });
    expect(await participantOf(w)).toMatchObject({ status: 'SCHEDULED', interviewStartTime: '2027-01-05T09:00:00.000Z' });

    const shown = await get(path);
    expect(shown.statusCode).toBe(200);
    expect(shown.body).toContain('<h1>Your session is booked</h1>');
    expect(textOf(shown.body)).toContain('Tuesday, January 5, 2027, 10:00 – 10:45 AM (Europe/Berlin, GMT+1)');
    expect(shown.body).toContain(`href="${path}/calendar.ics"`);
    expect(shown.body).toContain(`href="${path}/move">Change the time</a>`);
    expect(shown.body).toContain(`href="${path}/cancel">Cancel the session</a>`);
    expect(shown.body).not.toContain('<script');
    expect(shown.headers['content-security-policy']).not.toContain('script-src');

    const calendar = await get(`${path}/calendar.ics`);
    expect(calendar.statusCode).toBe(200);
    expect(calendar.headers['content-type']).toBe('text/calendar; charset=utf-8');
    // The same event as the emailed invitation (its UID and SEQUENCE), published for a calendar app to add.
    const event = new ICAL.Event(new ICAL.Component(ICAL.parse(calendar.body)).getFirstSubcomponent('vevent')!);
    expect(new ICAL.Component(ICAL.parse(calendar.body)).getFirstPropertyValue('method')).toBe('PUBLISH');
    expect(event.uid).toBe(`${booking!.bookingId}@recruit.example.test`);
    expect(event.sequence).toBe(0);
    expect(event.startDate.toJSDate().toISOString()).toBe('2027-01-05T09:00:00.000Z');
    expect(event.endDate.toJSDate().toISOString()).toBe('2027-01-05T09:45:00.000Z');
    expect(event.summary).toBe('Checkout interviews (session)');
    // A second booking from the same page is not made: the page shows the one held.
    const again = await post(`${path}/book`, [['formToken', field(page.body, 'formToken')!], ['startTime', '2027-01-06T09:00:00.000Z'], ['tz', 'Europe/Berlin']]);
    expect(again.statusCode).toBe(303);
    expect(await bookingsOf(w)).toHaveLength(1);
  });

  it("shows a Kathmandu person's times in their zone beside the Berlin host's, keeps the zone chosen, and books with it", async () => {
    const w = await world();
    const path = await linkOf(w);
    const page = await get(`${path}?tz=Asia/Kathmandu`);
    expect(page.statusCode).toBe(200);
    const text = textOf(page.body);
    expect(text).toContain('Times are shown in the time zone Asia/Kathmandu, GMT+5:45.');
    // 10:00 UTC: 3:45 PM in Kathmandu, 11:00 AM in Berlin.
    expect(text).toContain('3:45 PM 11:00 AM for the host, Berlin');
    expect(page.body).toContain('<option value="Asia/Kathmandu" selected>Kathmandu</option>');
    expect(page.body).not.toContain('<script');
    expect(field(page.body, 'tz')).toBe('Asia/Kathmandu');
    // A zone that is no zone is left aside: the host's is shown.
    expect(textOf((await get(`${path}?tz=Mars/Olympus`)).body)).toContain('Times are shown in the time zone Europe/Berlin');

    const booked = await bookFrom(`${path}?tz=Asia/Kathmandu`, '2027-01-04T10:00:00.000Z', 'Asia/Kathmandu', path);
    expect(booked.statusCode, booked.body).toBe(303);
    expect((await bookingsOf(w))[0]).toMatchObject({ personTimeZone: 'Asia/Kathmandu' });
    const shown = textOf((await get(path)).body);
    expect(shown).toContain('Monday, January 4, 2027, 3:45 – 4:30 PM (Asia/Kathmandu, GMT+5:45)');
    expect(shown).toContain('For the host 11:00 AM, Berlin');
  });

  it('shows a week at a time, with links to later and earlier days that keep the zone', async () => {
    const w = await world({ people: 1 });
    const path = await linkOf(w);
    const first = await get(path);
    expect(textOf(first.body)).toContain('Open times from Monday, January 4 to Sunday, January 10');
    expect(first.body).toContain(`<a href="${path}?from=2027-01-11&amp;tz=Europe%2FBerlin">Later days</a>`);
    expect(first.body).not.toContain('Earlier days');
    const second = await get(`${path}?from=2027-01-11&tz=Europe%2FBerlin`);
    expect(second.statusCode).toBe(200);
    expect(radios(second.body)[0]).toBe('2027-01-11T08:00:00.000Z');
    expect(radios(second.body)).toHaveLength(9);
    expect(second.body).toContain(`<a href="${path}?from=2027-01-04&amp;tz=Europe%2FBerlin">Earlier days</a>`);
    // The zone form keeps the day shown.
    expect(second.body).toContain('<input type="hidden" name="from" value="2027-01-11"/>');
    // Past the study's horizon (30 days): no time, and the way back.
    const empty = await get(`${path}?from=2027-03-01`);
    expect(textOf(empty.body)).toContain('There are no open times on these days.');
    expect(empty.body).toContain('Earlier days');
    expect(radios(empty.body)).toEqual([]);
    expect(empty.body).not.toContain('Book this time');
  });

  it('answers a time taken meanwhile with the page again, 409 and an error summary; a post with no time chosen is a 400', async () => {
    const w = await world({ people: 2 });
    const path = await linkOf(w, w.participantIds[0]);
    const page = await get(path);
    const team = await call(service, 'POST', `/studies/${w.studyId}/bookings`, { token: w.tenant.token, body: { participantId: w.participantIds[1], startTime: '2027-01-04T10:00:00.000Z' } });
    expect(team.statusCode, team.body).toBe(201);
    const taken = await post(`${path}/book`, [['formToken', field(page.body, 'formToken')!], ['startTime', '2027-01-04T10:00:00.000Z'], ['tz', 'Europe/Berlin']]);
    expect(taken.statusCode).toBe(409);
    expect(taken.body).toContain('role="alert"');
    expect(textOf(taken.body)).toContain('There is a problem');
    expect(taken.body).toContain('<a href="#slot-0">Choose a time — That time was just taken by someone else. Choose another time.</a>');
    expect(radios(taken.body)).not.toContain('2027-01-04T10:00:00.000Z');
    expect(await participantOf(w)).toMatchObject({ status: 'NOT_STARTED' });
    const none = await post(`${path}/book`, [['formToken', field(page.body, 'formToken')!], ['tz', 'Europe/Berlin']]);
    expect(none.statusCode).toBe(400);
    expect(none.body).toContain('Choose a time — Choose a time.');
  });
});

describe('changing a booking on the page', () => {
  it('moves the session to another open time (303 to the page), the booking’s sequence raised', async () => {
    const w = await world();
    const path = await linkOf(w);
    expect((await bookFrom(path, '2027-01-05T08:00:00.000Z', 'Asia/Kathmandu')).statusCode).toBe(303);
    const page = await get(`${path}/move`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<h1>Choose a new time for Checkout interviews</h1>');
    // The zone of the earlier booking is the page's.
    const text = textOf(page.body);
    expect(text).toContain('Your session is now on Tuesday, January 5, 2027, 1:45 – 2:30 PM (Asia/Kathmandu, GMT+5:45).');
    expect(text).toContain('Times are shown in the time zone Asia/Kathmandu');
    expect(radios(page.body)).not.toContain('2027-01-05T08:00:00.000Z');
    expect(page.body).toContain(`action="${path}/move"`);
    const moved = await post(`${path}/move`, [['formToken', field(page.body, 'formToken')!], ['startTime', '2027-01-06T10:00:00.000Z'], ['tz', 'Asia/Kathmandu']]);
    expect(moved.statusCode, moved.body).toBe(303);
    expect(moved.headers.location).toBe(path);
    expect((await bookingsOf(w))[0]).toMatchObject({ startTime: '2027-01-06T10:00:00.000Z', status: 'BOOKED', sequence: 1 });
    expect(await participantOf(w)).toMatchObject({ interviewStartTime: '2027-01-06T10:00:00.000Z' });
    expect(textOf((await get(path)).body)).toContain('Wednesday, January 6, 2027');
    // A token of another form (or none) moves nothing.
    expect((await post(`${path}/move`, [['formToken', field(page.body, 'formToken')!.slice(1)], ['startTime', '2027-01-05T09:00:00.000Z']])).statusCode).toBe(403);
  });

  it('cancels with a reason: the page says so and that the time is free, the API shows the reason, and the page offers no new booking', async () => {
    const w = await world();
    const path = await linkOf(w);
    expect((await bookFrom(path, '2027-01-05T08:00:00.000Z')).statusCode).toBe(303);
    const page = await get(`${path}/cancel`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<h1>Cancel your session</h1>');
    expect(page.body).toContain('<label for="cancel-reason">Why are you canceling? (optional)</label>');
    expect(page.body).toMatch(/<textarea id="cancel-reason" name="reason" rows="4" maxLength="1000"/i);
    const tooLong = await post(`${path}/cancel`, [['formToken', field(page.body, 'formToken')!], ['reason', 'x'.repeat(1001)]]);
    expect(tooLong.statusCode).toBe(400);
    expect(tooLong.body).toContain('<a href="#cancel-reason">Why are you canceling? (optional) — Write at most 1,000 characters.</a>');
    expect((await bookingsOf(w))[0]!.status).toBe('BOOKED');

    const canceled = await post(`${path}/cancel`, [['formToken', field(page.body, 'formToken')!], ['reason', 'I have a dentist appointment then.']]);
    expect(canceled.statusCode, canceled.body).toBe(200);
    expect(canceled.body).toContain('<h1>Your session is canceled</h1>');
    expect(textOf(canceled.body)).toContain('is canceled, and the time is free for someone else.');
    expect(textOf(canceled.body)).toContain('they can invite you again');
    const [booking] = await bookingsOf(w);
    expect(booking).toMatchObject({ status: 'CANCELED', canceledBy: 'PERSON', cancelReason: 'I have a dentist appointment then.' });
    expect(await participantOf(w)).toMatchObject({ status: 'CANCELED' });
    // The time is open again, to others.
    const slots = await call(service, 'GET', `/studies/${w.studyId}/slots`, { token: w.tenant.token });
    expect(slots.json<{ slots: { startTime: string }[] }>().slots.map((slot) => slot.startTime)).toContain('2027-01-05T08:00:00.000Z');

    const after = await get(path);
    expect(after.statusCode).toBe(200);
    expect(after.body).toContain('<h1>Your session is canceled</h1>');
    expect(after.body).not.toContain('<form');
    // No way to book again from this link: the post is sent back to the page.
    const rebook = await post(`${path}/book`, [['formToken', field((await get(`${path}/cancel`)).body, 'formToken') ?? 'x'], ['startTime', '2027-01-06T08:00:00.000Z']]);
    expect([303, 403]).toContain(rebook.statusCode);
    expect(await bookingsOf(w)).toHaveLength(1);
    expect((await get(`${path}/cancel`)).statusCode).toBe(303);
    expect((await get(`${path}/move`)).headers.location).toBe(path);
  });

  it('keeps the session as it is once the window for changes has closed (personChangeCutoffMinutes)', async () => {
    const w = await world();
    const path = await linkOf(w);
    const page = await get(path);
    // Monday 10:00 UTC is four hours away: within the default 24 hours before a session.
    expect((await post(`${path}/book`, [['formToken', field(page.body, 'formToken')!], ['startTime', '2027-01-04T10:00:00.000Z'], ['tz', 'Europe/Berlin']])).statusCode).toBe(303);
    const shown = await get(path);
    expect(textOf(shown.body)).toContain('This session can no longer be changed online. If you cannot come, reply to the team’s email.');
    expect(shown.body).not.toContain('Change the time');
    expect(shown.body).not.toContain('Cancel the session');
    const movePage = await get(`${path}/move`);
    expect(movePage.statusCode).toBe(200);
    expect(movePage.body).toContain('<h1>This session can no longer be changed online</h1>');
    expect(movePage.body).not.toContain('<form');
    expect((await get(`${path}/cancel`)).body).toContain('<h1>This session can no longer be changed online</h1>');
    // Forms kept from earlier are refused by the service's rule: 409, nothing changed.
    const tokens = await formTokensOf(w, path);
    expect((await post(`${path}/move`, [['formToken', tokens.move], ['startTime', '2027-01-05T08:00:00.000Z']])).statusCode).toBe(409);
    expect((await post(`${path}/cancel`, [['formToken', tokens.cancel], ['reason', 'late']])).statusCode).toBe(409);
    expect((await bookingsOf(w))[0]).toMatchObject({ startTime: '2027-01-04T10:00:00.000Z', status: 'BOOKED' });
  });
});

/** The move and cancel forms' tokens of a link, read from their pages while the window was open (the clock set back a day). */
async function formTokensOf(_w: World, path: string) {
  service.deps.clock.set(new Date(now.getTime() - 86_400_000));
  try {
    return { move: field((await get(`${path}/move`)).body, 'formToken')!, cancel: field((await get(`${path}/cancel`)).body, 'formToken')! };
  } finally {
    service.deps.clock.set(now);
  }
}

describe('who may book', () => {
  it('tells a person who opted out, a paused or closed study, and a rejected, disqualified or completed participant so, kindly, with no form', async () => {
    const w = await world({ people: 4 });
    const [optedOut, rejected, disqualified, completed] = w.participantIds as [string, string, string, string];
    const paths = { optedOut: await linkOf(w, optedOut), rejected: await linkOf(w, rejected), disqualified: await linkOf(w, disqualified), completed: await linkOf(w, completed) };
    const personOf = async (participantId: string) => (await service.deps.db.selectFrom('participants').select('person_id').where('participant_id', '=', participantId).executeTakeFirstOrThrow()).person_id;
    const opted = await call(service, 'PUT', `/people/${await personOf(optedOut)}/opted-out`, { token: w.tenant.token, body: { isOptedOut: true } });
    expect(opted.statusCode, opted.body).toBeLessThan(300);
    await service.deps.db.updateTable('participants').set({ approval_status: 'REJECTED' }).where('participant_id', '=', rejected).execute();
    await service.deps.db.updateTable('participants').set({ screener_state: 'DISQUALIFIED' }).where('participant_id', '=', disqualified).execute();
    await service.deps.db.updateTable('participants').set({ status: 'COMPLETED' }).where('participant_id', '=', completed).execute();
    const optedOutPage = await get(paths.optedOut);
    expect(optedOutPage.statusCode).toBe(200);
    expect(optedOutPage.body).toContain('<h1>You will not be contacted</h1>');
    for (const path of [paths.rejected, paths.disqualified, paths.completed]) {
      const page = await get(path);
      expect(page.statusCode).toBe(200);
      expect(page.body).toContain('<h1>There is no session to book</h1>');
      expect(page.body).not.toMatch(/<form|reject|disqualif|complete/i);
      expect((await get(`${path}/book`)).body).toContain('There is no session to book');
    }
    const fresh = await world();
    const freshPath = await linkOf(fresh);
    const page = await get(freshPath);
    const paused = await call(service, 'POST', `/studies/${fresh.studyId}/status`, { token: fresh.tenant.token, body: { status: 'PAUSED' } });
    expect(paused.statusCode, paused.body).toBe(200);
    const pausedPage = await get(freshPath);
    expect(pausedPage.body).toContain('<h1>This study is paused</h1>');
    expect(pausedPage.body).not.toContain('<form');
    expect((await post(`${freshPath}/book`, [['formToken', field(page.body, 'formToken')!], ['startTime', '2027-01-05T08:00:00.000Z']])).statusCode).toBe(409);
    expect(await bookingsOf(fresh)).toEqual([]);
  });

  it('a study with no open time says so and offers no form', async () => {
    const w = await world({ schedule: { horizonDays: 1, minimumNoticeMinutes: 1440 } });
    const page = await get(await linkOf(w));
    expect(page.statusCode).toBe(200);
    expect(textOf(page.body)).toContain('Every time for Checkout interviews is taken at the moment.');
    expect(page.body).not.toContain('method="post"');
  });
});

describe('the booking step after a qualifying screener', () => {
  const screener = (showSchedulerToQualified: boolean) => ({ qualifyByDefault: true, showSchedulerToQualified, questions: [{ name: 'How often do you shop online?', type: 'SHORT_FORM', isRequired: true }] });

  async function answer(path: string) {
    const page = await get(path);
    expect(page.statusCode, page.body).toBe(200);
    const question = /name="(q_[^"]+)"/.exec(page.body)![1]!;
    return post(path, [['formToken', field(page.body, 'formToken')!], ['startedAt', field(page.body, 'startedAt')!], [question, 'Weekly']]);
  }

  it('sends a qualified person on to /p/<token>/book (303), books there, and the screener link then shows the session', async () => {
    const w = await world({ screener: screener(true) });
    const path = await linkOf(w, undefined, 'SCREENER');
    // Not yet qualified: the booking step sends the person to the questions.
    const early = await get(`${path}/book`);
    expect(early.statusCode).toBe(303);
    expect(early.headers.location).toBe(path);
    const answered = await answer(path);
    expect(answered.statusCode, answered.body).toBe(303);
    expect(answered.headers.location).toBe(`${path}/book`);
    const page = await get(`${path}/book`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<h1>Choose a time for Checkout interviews</h1>');
    expect(page.body).toContain(`action="${path}/book"`);
    const booked = await post(`${path}/book`, [['formToken', field(page.body, 'formToken')!], ['startTime', '2027-01-05T09:00:00.000Z'], ['tz', 'Europe/Berlin']]);
    expect(booked.statusCode).toBe(303);
    expect(booked.headers.location).toBe(path);
    const again = await get(path);
    expect(again.statusCode).toBe(303);
    expect(again.headers.location).toBe(`${path}/book`);
    expect((await get(`${path}/book`)).body).toContain('<h1>Your session is booked</h1>');
    expect((await bookingsOf(w))[0]).toMatchObject({ bookedBy: 'PERSON', startTime: '2027-01-05T09:00:00.000Z' });
  });

  it('goes through the consent form first when the study has one, then to booking', async () => {
    const tenant = await createTenant(service);
    const form = await call(service, 'POST', '/consent-forms', { token: tenant.token, body: { name: 'Consent', title: 'Consent to take part', body: 'We talk.', language: 'en', requiredStatements: [{ id: 'read', text: 'I have read this.' }], optionalChoices: [] } });
    expect(form.statusCode, form.body).toBe(201);
    const w = await world({ tenant, screener: screener(true), studyPlan: { consentFormId: form.json<{ consentFormId: string }>().consentFormId } });
    const path = await linkOf(w, undefined, 'SCREENER');
    const answered = await answer(path);
    expect(answered.headers.location).toBe(`${path}/consent`);
    const consentPage = await get(`${path}/consent`);
    const signed = await post(`${path}/consent`, [['formToken', field(consentPage.body, 'formToken')!], ['version', field(consentPage.body, 'version')!], ['statement', 'read'], ['signedName', 'Sam Signer']]);
    expect(signed.statusCode, signed.body).toBe(303);
    expect(signed.headers.location).toBe(`${path}/book`);
    expect((await get(path)).headers.location).toBe(`${path}/book`);
  });

  it('thanks a qualified person when the screener does not show the scheduler, and never offers booking to others', async () => {
    const w = await world({ screener: screener(false) });
    const path = await linkOf(w, undefined, 'SCREENER');
    const answered = await answer(path);
    expect(answered.statusCode).toBe(200);
    expect(answered.body).toContain('<h1>Thank you</h1>');
    expect((await get(`${path}/book`)).statusCode).toBe(303);
    const consent = await linkOf(w, undefined, 'CONSENT');
    expect((await get(`${consent}/book`)).statusCode).toBe(404);
  });
});

describe('links.scheduling in a message', () => {
  it('makes a SCHEDULING link per message that opens the booking page; refused (400, templateId) for a study with no host', async () => {
    const w = await world({ people: 0 });
    const person = await createPerson(service, w.tenant, { email: `booker-${Date.now()}@example.test`, firstName: 'Bo' });
    const [participant] = await addParticipants(service, w.tenant, w.studyId, [person.personId]);
    const templateId = await createTemplate(service, w.tenant, { name: 'Book', subject: 'Book a time', textBody: 'Book: {{ links.scheduling }}\n{{ links.unsubscribe }}' });
    const sent = await sendMessages(service, w.tenant, w.studyId, { templateId, participantIds: [participant!.participantId] });
    expect(sent.statusCode, sent.body).toBe(200);
    expect((await runMail(service, w.tenant)).sent).toBe(1);
    const [mail] = receiver.to(person.email!);
    const link = /Book: https:\/\/recruit\.example\.test(\/p\/[A-Za-z0-9_-]{43})\n/.exec(mail!.parsed.text ?? '')?.[1];
    expect(link, mail!.parsed.text).toBeDefined();
    const row = await service.deps.db.selectFrom('participant_links').select(['purpose', 'message_id', 'expires_at']).where('participant_id', '=', participant!.participantId).executeTakeFirstOrThrow();
    expect(row.purpose).toBe('SCHEDULING');
    expect(row.message_id).not.toBeNull();
    expect(new Date(row.expires_at!).toISOString()).toBe(new Date(now.getTime() + 180 * 86_400_000).toISOString());
    expect((await get(link!)).body).toContain('<h1>Choose a time for Checkout interviews</h1>');

    const hostless = await createStudy(service, w.tenant, { studyType: 'INTERVIEWS', launch: true });
    const [other] = await addParticipants(service, w.tenant, hostless, [person.personId]);
    const refused = await sendMessages(service, w.tenant, hostless, { templateId, participantIds: [other!.participantId] });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({ errors: [{ path: ['templateId'] }] });
    expect(refused.body).toContain('no host');
  });
});

describe('what the booking pages refuse', () => {
  it('answers a forged or altered link with the plain 404 page, on every booking address and method', async () => {
    const w = await world();
    const path = await linkOf(w);
    const forged = `/p/${'A'.repeat(43)}`;
    const altered = `${path.slice(0, -1)}${path.endsWith('A') ? 'B' : 'A'}`;
    for (const base of [forged, altered]) {
      for (const step of ['', '/book', '/move', '/cancel', '/calendar.ics']) expect((await get(`${base}${step}`)).statusCode, `${base}${step}`).toBe(404);
      for (const step of ['/book', '/move', '/cancel']) expect((await post(`${base}${step}`, [['formToken', 'x'], ['startTime', '2027-01-05T08:00:00.000Z']])).statusCode).toBe(404);
    }
    expect(await bookingsOf(w)).toEqual([]);
    // No booking yet: no calendar file.
    expect((await get(`${path}/calendar.ics`)).statusCode).toBe(404);
  });

  it('refuses a post without its form token, with another form’s or another link’s, and a cross-site post (403), booking nothing', async () => {
    const w = await world({ people: 2 });
    const path = await linkOf(w, w.participantIds[0]);
    const otherPath = await linkOf(w, w.participantIds[1]);
    const token = field((await get(path)).body, 'formToken')!;
    const otherToken = field((await get(otherPath)).body, 'formToken')!;
    const start: [string, string] = ['startTime', '2027-01-05T08:00:00.000Z'];
    expect((await post(`${path}/book`, [start])).statusCode).toBe(403);
    expect((await post(`${path}/book`, [['formToken', ''], start])).statusCode).toBe(403);
    expect((await post(`${path}/book`, [['formToken', otherToken], start])).statusCode).toBe(403);
    expect((await post(`${path}/book`, [['formToken', token], start], { 'sec-fetch-site': 'cross-site' })).statusCode).toBe(403);
    // A browser without Sec-Fetch-Site is judged by its Origin.
    expect((await service.app.inject({ method: 'POST', url: `${path}/book`, headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example' }, payload: new URLSearchParams([['formToken', token], start]).toString() })).statusCode).toBe(403);
    expect(await bookingsOf(w)).toEqual([]);
    const page = await post(`${path}/book`, [['formToken', token], start], { 'sec-fetch-site': 'cross-site' });
    expect(page.body).toContain('Your answers were not sent');
  });

  it("a SCHEDULING link of one workspace cannot touch another workspace's booking", async () => {
    const a = await world();
    const b = await world();
    const pathA = await linkOf(a);
    const pathB = await linkOf(b);
    expect((await bookFrom(pathA, '2027-01-05T08:00:00.000Z')).statusCode).toBe(303);
    expect((await bookFrom(pathB, '2027-01-05T08:00:00.000Z')).statusCode).toBe(303);
    const cancelA = await get(`${pathA}/cancel`);
    // Link A's token on link B's address: refused; link A cancels only its own.
    expect((await post(`${pathB}/cancel`, [['formToken', field(cancelA.body, 'formToken')!], ['reason', 'x']])).statusCode).toBe(403);
    expect((await post(`${pathA}/cancel`, [['formToken', field(cancelA.body, 'formToken')!], ['reason', 'mine']])).statusCode).toBe(200);
    expect((await bookingsOf(a))[0]).toMatchObject({ status: 'CANCELED' });
    expect((await bookingsOf(b))[0]).toMatchObject({ status: 'BOOKED', cancelReason: null });
    expect((await get(pathB)).body).toContain('Your session is booked');
    // Workspace B's API does not see A's booking.
    const bookingA = (await bookingsOf(a))[0]!.bookingId;
    expect((await call(service, 'GET', `/studies/${a.studyId}/bookings/${bookingA}`, { token: b.tenant.token })).statusCode).toBe(404);
  });

  it('refuses past the per-link budget with a 429 page and Retry-After', async () => {
    const limited = await startTestService({ participantRateLimitMax: 100, participantLinkRateLimitMax: 3 }, { rateLimitKeyPrefix: `booking-pages-${Date.now()}`, ...(pool ? { database: pool } : {}) });
    try {
      limited.deps.clock.set(now);
      const w = await world({}, limited);
      const path = await linkOf(w, undefined, 'SCHEDULING', limited);
      const at = (url: string) => limited.app.inject({ method: 'GET', url, remoteAddress: '192.0.2.9' });
      for (let index = 0; index < 3; index++) expect((await at(index === 0 ? path : `${path}/book`)).statusCode).toBe(200);
      const refused = await at(path);
      expect(refused.statusCode).toBe(429);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect(refused.body).toContain('Too many requests');
    } finally {
      await limited.stop();
    }
  });
});

describe('the calendar file', () => {
  it('is the invitation\'s event, published, and CANCELLED once the booking is', () => {
    const text = bookingCalendarFile({ bookingId: 'bkg_1', sequence: 2, publicUrl: 'https://example.test', startsAt: '2027-01-05T08:00:00.000Z', endsAt: '2027-01-05T08:45:00.000Z', summary: `Ünïcode; commas, and a long name ${'x'.repeat(80)}`, canceled: true, stamp: now });
    for (const line of text.split('\r\n')) expect(Buffer.byteLength(line, 'utf8')).toBeLessThanOrEqual(75);
    const event = new ICAL.Event(new ICAL.Component(ICAL.parse(text)).getFirstSubcomponent('vevent')!);
    expect(event.uid).toBe('bkg_1@example.test');
    expect(event.sequence).toBe(2);
    expect(event.summary).toBe(`Ünïcode; commas, and a long name ${'x'.repeat(80)}`);
    expect(event.component.getFirstPropertyValue('status')).toBe('CANCELLED');
  });
});
