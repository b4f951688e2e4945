import { auditEntriesOf } from '../../../test/audit-entries.js';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bookSession, cancelBooking, createBookablePerson, createSchedulingStudy, moveBooking, type SchedulingStudy } from '../../../test/reminder-rows-factory.js';
import { call, callTestHelper, createTenant, startTestService, storeKind, type Tenant, type TestService } from '../../../test/harness.js';
import { setClock } from '../../../test/incentives-factory.js';
import { type SmtpReceiver, smtpConfig, startSmtpReceiver, unfoldedHeaders } from '../../../test/smtp-receiver.js';
import { runMail } from '../messages/test-support.js';
import { resolveLink } from '../participant-links/service.js';
import { dueRemindersStatement } from './reminders-queries.js';
import { REMINDER_LATENESS_SECONDS_MAX, REMINDER_QUEUE, sweepReminders } from './reminders.js';

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

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const email = (name: string) => `${name}.${Math.random().toString(36).slice(2, 8)}@example.test`;
const minus = (at: string, ms: number) => new Date(Date.parse(at) - ms).toISOString();
const plus = (at: string, ms: number) => new Date(Date.parse(at) + ms).toISOString();

/** Sets the clock, runs the tenant's due jobs (its slot of the reminders' sweep among them) and sends its queued mail. */
async function runAt(tenant: Tenant, at: string) {
  await setClock(service, at);
  const jobs = await callTestHelper(service, 'POST', '/jobs/run', { query: { workspaceId: tenant.workspaceId } });
  expect(jobs.statusCode, jobs.body).toBe(200);
  const runs = jobs.json<{ jobs: { queue: string; outcome: string }[] }>().jobs.filter((run) => run.queue === REMINDER_QUEUE);
  expect(runs.map((run) => run.outcome)).toEqual(['completed']);
  return runMail(service, tenant);
}

interface ListedMessage {
  messageId: string;
  status: string;
  origin: string;
  personId: string;
  templateId: string | null;
  templateName: string;
  notSentReason: string | null;
  countsAsContact: boolean;
}

async function messagesOf(tenant: Tenant): Promise<ListedMessage[]> {
  const response = await call(service, 'GET', '/messages', { token: tenant.token, query: { size: '100' } });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<{ results: ListedMessage[] }>().results;
}

async function remindersOf(tenant: Tenant) {
  return service.deps.db.selectFrom('session_reminders').selectAll().where('workspace_id', '=', tenant.workspaceId).orderBy('due_at').execute();
}

async function bookedPerson(tenant: Tenant, study: SchedulingStudy, name: string, startsAt: string, options: { at?: string; personTimeZone?: string | null } = {}) {
  const address = email(name);
  const participant = await createBookablePerson(service, tenant, study.studyId, { email: address, firstName: name });
  const booking = await bookSession(service, tenant, study, participant, { startsAt, at: options.at ?? minus(startsAt, 10 * 24 * HOUR_MS), personTimeZone: options.personTimeZone ?? null });
  return { ...participant, ...booking, email: address };
}

describe('session reminders', () => {
  it("sends two reminders, 24 h and 1 h before, through SMTP in the study's language with the time in the person's zone (Europe/Berlin, Asia/Kathmandu); each is a message with its events", async () => {
    const tenant = await createTenant(service, 'Acme Research');
    const study = await createSchedulingStudy(service, tenant, { language: 'de', hostTimeZone: 'Europe/London', externalName: 'Bezahlen im Netz' });
    const startsAt = '2026-12-10T09:15:00.000Z';
    const berlin = await bookedPerson(tenant, study, 'berlin', startsAt, { personTimeZone: 'Europe/Berlin' });
    const kathmandu = await bookedPerson(tenant, study, 'kathmandu', startsAt, { personTimeZone: 'Asia/Kathmandu' });

    // A minute before the 24 h reminder: nothing is due.
    expect(await runAt(tenant, minus(startsAt, 24 * HOUR_MS + MINUTE_MS))).toMatchObject({ attempted: 0 });
    // 50 seconds late (less than the sweep's interval): sent.
    expect(await runAt(tenant, plus(minus(startsAt, 24 * HOUR_MS), 50_000))).toMatchObject({ attempted: 2, sent: 2 });
    expect(receiver.to(berlin.email)).toHaveLength(1);
    expect(receiver.to(kathmandu.email)).toHaveLength(1);
    const [toBerlin] = receiver.to(berlin.email);
    const [toKathmandu] = receiver.to(kathmandu.email);
    expect(toBerlin!.parsed.subject).toBe('Erinnerung: Bezahlen im Netz am Donnerstag, 10. Dezember 2026 um 10:15 MEZ');
    expect(toBerlin!.parsed.text).toContain('wir erinnern Sie an Ihren Termin für Bezahlen im Netz am Donnerstag, 10. Dezember 2026 um 10:15 MEZ (Zeitzone Europe/Berlin)');
    expect(toKathmandu!.parsed.subject).toBe('Erinnerung: Bezahlen im Netz am Donnerstag, 10. Dezember 2026 um 15:00 GMT+5:45');
    expect(toKathmandu!.parsed.text).toContain('(Zeitzone Asia/Kathmandu)');
    // A fresh SCHEDULING link to move or cancel, and the unsubscribe link in the body and headers.
    const link = /https:\/\/recruit\.example\.test\/p\/(\S+)/.exec(toBerlin!.parsed.text ?? '');
    expect(link).not.toBeNull();
    const links = await service.deps.db.selectFrom('participant_links').select(['purpose', 'message_id']).where('workspace_id', '=', tenant.workspaceId).where('participant_id', '=', berlin.participantId).execute();
    expect(links).toHaveLength(1);
    expect(links[0]!.purpose).toBe('SCHEDULING');
    const resolved = await resolveLink(service.deps.db, link![1]!, plus(startsAt, -HOUR_MS));
    expect(resolved).toMatchObject({ link: { purpose: 'SCHEDULING', participantId: berlin.participantId, studyId: study.studyId } });
    expect(toBerlin!.parsed.text).toContain('Wenn Sie keine Nachrichten über Studien mehr erhalten möchten: https://recruit.example.test/v1/unsubscribe/');
    expect(unfoldedHeaders(toBerlin!.raw)).toMatch(/^List-Unsubscribe: <https:\/\/recruit\.example\.test\/v1\/unsubscribe\//m);

    // The hour between: nothing more.
    expect(await runAt(tenant, minus(startsAt, 2 * HOUR_MS))).toMatchObject({ attempted: 0 });
    expect(await runAt(tenant, plus(minus(startsAt, HOUR_MS), 5_000))).toMatchObject({ attempted: 2, sent: 2 });
    expect(await runAt(tenant, plus(minus(startsAt, HOUR_MS), 2 * MINUTE_MS))).toMatchObject({ attempted: 0 });
    expect(receiver.to(berlin.email)).toHaveLength(2);
    expect(receiver.to(kathmandu.email)).toHaveLength(2);

    const messages = await messagesOf(tenant);
    expect(messages).toHaveLength(4);
    for (const message of messages) {
      expect(message).toMatchObject({ status: 'SENT', origin: 'REMINDER', templateId: null, templateName: 'Session reminder', countsAsContact: false, notSentReason: null });
    }
    const detail = await call(service, 'GET', `/messages/${messages.find((message) => message.personId === berlin.personId)!.messageId}`, { token: tenant.token });
    expect(detail.statusCode, detail.body).toBe(200);
    expect(detail.json()).toMatchObject({ origin: 'REMINDER', status: 'SENT', subject: toBerlin!.parsed.subject, events: [{ type: 'SENT', smtpCode: 250 }] });
    expect((await remindersOf(tenant)).map((row) => [row.offset_minutes, row.skip_reason])).toEqual([
      [1440, null],
      [1440, null],
      [60, null],
      [60, null],
    ]);
    // The trail: each reminder the sweep queued is the service's entry, naming its message.
    const queued = await auditEntriesOf(service.deps.db, tenant.workspaceId, 'queueReminder');
    expect(queued.map((entry) => [entry.actor_kind, entry.actor_service, entry.resource_type])).toEqual(Array(4).fill(['SERVICE', 'scheduling.reminders', 'message']));
    expect(new Set(queued.map((entry) => entry.resource_id))).toEqual(new Set(messages.map((message) => message.messageId)));
  });

  it("without the person's zone, writes the time in the host's; without a study language, in English", async () => {
    const tenant = await createTenant(service);
    const study = await createSchedulingStudy(service, tenant, { hostTimeZone: 'America/New_York' });
    const startsAt = '2026-12-10T15:30:00.000Z';
    const person = await bookedPerson(tenant, study, 'nozone', startsAt);
    expect(await runAt(tenant, minus(startsAt, 24 * HOUR_MS))).toMatchObject({ sent: 1 });
    const [mail] = receiver.to(person.email);
    expect(mail!.parsed.subject).toBe('Reminder: Paying online on Thursday, December 10, 2026 at 10:30 AM EST');
    expect(mail!.parsed.text).toContain('(time zone America/New_York)');
  });

  it('sends none for a canceled booking; one queued just before the cancel is recorded NOT_SENT, not sent', async () => {
    const tenant = await createTenant(service);
    const study = await createSchedulingStudy(service, tenant);
    const startsAt = '2026-12-11T10:00:00.000Z';
    const early = await bookedPerson(tenant, study, 'early', startsAt);
    const late = await bookedPerson(tenant, study, 'late', startsAt);
    await cancelBooking(service, tenant, early.bookingId, minus(startsAt, 3 * 24 * HOUR_MS));

    // The sweep queues the late one's reminder; the cancel comes before the dispatcher sends it.
    await setClock(service, minus(startsAt, 24 * HOUR_MS));
    expect(await sweepReminders(service.deps.db, service.deps.clock, { workspaceId: tenant.workspaceId, smtpConfigured: true })).toEqual({ queued: 1, skipped: 0, takenByOthers: 0 });
    await cancelBooking(service, tenant, late.bookingId, plus(minus(startsAt, 24 * HOUR_MS), 1_000));
    expect(await runMail(service, tenant)).toMatchObject({ attempted: 1, sent: 0, notSent: 1 });
    expect(await runAt(tenant, minus(startsAt, HOUR_MS))).toMatchObject({ attempted: 0 });

    expect(receiver.to(early.email)).toEqual([]);
    expect(receiver.to(late.email)).toEqual([]);
    const [message] = await messagesOf(tenant);
    expect(message).toMatchObject({ personId: late.personId, status: 'NOT_SENT', origin: 'REMINDER', notSentReason: 'The booking was canceled before the reminder was sent' });
    const detail = await call(service, 'GET', `/messages/${message!.messageId}`, { token: tenant.token });
    expect(detail.json()).toMatchObject({ events: [{ type: 'NOT_SENT', detail: 'BOOKING_CANCELED' }] });
  });

  it('sends a moved booking reminders for its new time only; one queued for the old time is recorded NOT_SENT', async () => {
    const tenant = await createTenant(service);
    const study = await createSchedulingStudy(service, tenant, { hostTimeZone: 'UTC' });
    const oldStart = '2026-12-14T10:00:00.000Z';
    const newStart = '2026-12-16T14:00:00.000Z';
    const person = await bookedPerson(tenant, study, 'mover', oldStart);

    // The old time's 24 h reminder is queued, then the booking moves before it goes.
    await setClock(service, minus(oldStart, 24 * HOUR_MS));
    expect(await sweepReminders(service.deps.db, service.deps.clock, { workspaceId: tenant.workspaceId, smtpConfigured: true })).toMatchObject({ queued: 1 });
    await moveBooking(service, tenant, study, person.bookingId, { startsAt: newStart, at: plus(minus(oldStart, 24 * HOUR_MS), 1_000) });
    expect(await runMail(service, tenant)).toMatchObject({ attempted: 1, notSent: 1 });
    // The old time's 1 h: nothing.
    expect(await runAt(tenant, minus(oldStart, HOUR_MS))).toMatchObject({ attempted: 0 });
    expect(await runAt(tenant, minus(newStart, 24 * HOUR_MS))).toMatchObject({ sent: 1 });
    expect(await runAt(tenant, minus(newStart, HOUR_MS))).toMatchObject({ sent: 1 });

    const mails = receiver.to(person.email);
    expect(mails.map((mail) => mail.parsed.subject)).toEqual([
      'Reminder: Paying online on Wednesday, December 16, 2026 at 2:00 PM UTC',
      'Reminder: Paying online on Wednesday, December 16, 2026 at 2:00 PM UTC',
    ]);
    const messages = await messagesOf(tenant);
    expect(messages.map((message) => [message.status, message.notSentReason])).toEqual([
      ['NOT_SENT', 'The booking moved to another time before the reminder was sent: the new time has reminders of its own'],
      ['SENT', null],
      ['SENT', null],
    ]);
    expect((await remindersOf(tenant)).map((row) => [row.sequence, row.offset_minutes])).toEqual([
      [0, 1440],
      [1, 1440],
      [1, 60],
    ]);
  });

  it('does not send a reminder whose time had passed when the booking was made; one late by less than the sweep interval goes', async () => {
    const tenant = await createTenant(service);
    const study = await createSchedulingStudy(service, tenant);
    const startsAt = '2026-12-12T12:00:00.000Z';
    // Booked 58 minutes before its session: the sweep reaches its 1 h reminder (2 min 30 s late), but its time had passed at the booking.
    const lateBooked = await bookedPerson(tenant, study, 'latebooked', startsAt, { at: minus(startsAt, 58 * MINUTE_MS) });
    // Booked long before; its 1 h reminder is due at 10:57 and the sweep comes 30 seconds late: it goes.
    const onTime = await bookedPerson(tenant, study, 'ontime', plus(startsAt, 3 * MINUTE_MS));
    expect(await runAt(tenant, plus(minus(startsAt, 57 * MINUTE_MS), 30_000))).toMatchObject({ attempted: 1, sent: 1 });
    expect(receiver.to(lateBooked.email)).toEqual([]);
    expect(receiver.to(onTime.email)).toHaveLength(1);
    expect((await remindersOf(tenant)).map((row) => [row.booking_id, row.offset_minutes, row.skip_reason])).toEqual([
      [lateBooked.bookingId, 60, 'BOOKED_AFTER_DUE'],
      [onTime.bookingId, 60, null],
    ]);

    // Booked 30 minutes before its session: its 1 h reminder was due half an hour before; no sweep sends it.
    const thirty = await bookedPerson(tenant, study, 'thirty', plus(startsAt, 30 * MINUTE_MS), { at: startsAt });
    for (const minutes of [1, 2, 10, 29]) expect(await runAt(tenant, plus(startsAt, minutes * MINUTE_MS))).toMatchObject({ attempted: 0 });
    expect(receiver.to(thirty.email)).toEqual([]);

    // Nor is one the sweep reaches more than REMINDER_LATENESS_SECONDS_MAX late (the service was down).
    const down = await bookedPerson(tenant, study, 'down', '2026-12-13T12:00:00.000Z');
    expect(await runAt(tenant, plus(minus('2026-12-13T12:00:00.000Z', 24 * HOUR_MS), (REMINDER_LATENESS_SECONDS_MAX + 1) * 1000))).toMatchObject({ attempted: 0 });
    expect(receiver.to(down.email)).toEqual([]);
    expect(await remindersOf(tenant)).toHaveLength(2);
  });

  it('sends none to an opted-out person: skipped at the sweep, or NOT_SENT when they opt out between the sweep and the sending', async () => {
    const tenant = await createTenant(service);
    const study = await createSchedulingStudy(service, tenant);
    const startsAt = '2026-12-15T09:00:00.000Z';
    const before = await bookedPerson(tenant, study, 'before', startsAt);
    const between = await bookedPerson(tenant, study, 'between', startsAt);
    const optOut = async (personId: string) => {
      const response = await call(service, 'PUT', `/people/${personId}/opted-out`, { token: tenant.token, body: { isOptedOut: true } });
      expect(response.statusCode, response.body).toBe(200);
    };
    await optOut(before.personId);
    await setClock(service, minus(startsAt, 24 * HOUR_MS));
    expect(await sweepReminders(service.deps.db, service.deps.clock, { workspaceId: tenant.workspaceId, smtpConfigured: true })).toEqual({ queued: 1, skipped: 1, takenByOthers: 0 });
    await optOut(between.personId);
    expect(await runMail(service, tenant)).toMatchObject({ attempted: 1, notSent: 1 });
    expect(await runAt(tenant, minus(startsAt, HOUR_MS))).toMatchObject({ attempted: 0 });
    expect(receiver.to(before.email)).toEqual([]);
    expect(receiver.to(between.email)).toEqual([]);
    expect((await messagesOf(tenant)).map((message) => [message.personId, message.status, message.notSentReason])).toEqual([
      [between.personId, 'NOT_SENT', 'The person opted out before the message was sent'],
    ]);
    expect((await remindersOf(tenant)).filter((row) => row.booking_id === before.bookingId).map((row) => [row.offset_minutes, row.skip_reason])).toEqual([
      [1440, 'OPTED_OUT'],
      [60, 'OPTED_OUT'],
    ]);
  });

  it('queues each reminder once when sweeps race, and the dispatchers send each once', async () => {
    const tenant = await createTenant(service);
    const study = await createSchedulingStudy(service, tenant);
    const startsAt = '2026-12-17T09:00:00.000Z';
    const people = [];
    for (let index = 0; index < 12; index++) people.push(await bookedPerson(tenant, study, `race${index}`, startsAt));
    await setClock(service, minus(startsAt, 24 * HOUR_MS));
    const sweep = () => sweepReminders(service.deps.db, service.deps.clock, { workspaceId: tenant.workspaceId, smtpConfigured: true, batch: 5 });
    const results = await Promise.all([sweep(), sweep(), sweep(), sweep()]);
    expect(results.reduce((sum, result) => sum + result.queued, 0)).toBe(12);
    await Promise.all([runMail(service, tenant), runMail(service, tenant)]);
    for (const person of people) expect(receiver.to(person.email)).toHaveLength(1);
    expect(await messagesOf(tenant)).toHaveLength(12);
  });

  it.skipIf(storeKind !== 'postgres')('two service instances, each on its own connections, sweep and send at once: each reminder once', async () => {
    const other = await startTestService(smtpConfig(receiver));
    try {
      const tenant = await createTenant(service);
      const study = await createSchedulingStudy(service, tenant);
      const startsAt = '2026-12-18T09:00:00.000Z';
      const people = [];
      for (let index = 0; index < 20; index++) people.push(await bookedPerson(tenant, study, `twin${index}`, startsAt));
      const at = minus(startsAt, HOUR_MS);
      service.deps.clock.set(new Date(at));
      other.deps.clock.set(new Date(at));
      const sweeps = await Promise.all(
        [service, other].flatMap((instance) => [1, 2].map(() => sweepReminders(instance.deps.db, instance.deps.clock, { workspaceId: tenant.workspaceId, smtpConfigured: true, batch: 3 }))),
      );
      expect(sweeps.reduce((sum, result) => sum + result.queued, 0)).toBe(20);
      const sent = await Promise.all([service, other].map((instance) => instance.mail.dispatcher!.runDue(tenant.workspaceId)));
      expect(sent.reduce((sum, report) => sum + report.sent, 0)).toBe(20);
      for (const person of people) expect(receiver.to(person.email)).toHaveLength(1);
      // Their jobs' runs too: the slot's job runs once however many instances drain it.
      const drains = await Promise.all([service, other].map((instance) => instance.jobs.runDue({ workspaceId: tenant.workspaceId })));
      expect(drains.flatMap((drain) => drain.jobs).filter((run) => run.queue === REMINDER_QUEUE)).toHaveLength(1);
      expect(await messagesOf(tenant)).toHaveLength(20);
    } finally {
      await other.stop();
    }
  });

  it('finds due reminders of every workspace by the index on sessions.starts_at (EXPLAIN)', async () => {
    const tenant = await createTenant(service);
    const study = await createSchedulingStudy(service, tenant);
    // A year of booked sessions, one an hour: the sweep must read a few minutes of them, not all.
    const base = Date.parse('2027-01-01T00:00:00.000Z');
    const at = new Date().toISOString();
    await sql`
      insert into sessions (workspace_id, session_id, study_id, host_user_id, starts_at, ends_at, buffer_before_minutes, buffer_after_minutes, capacity, booked, created_at, updated_at)
      select ${tenant.workspaceId}, 'ses_explain_' || n, ${study.studyId}, ${study.hostUserId},
        to_timestamp(${base / 1000} + n * 3600), to_timestamp(${base / 1000} + n * 3600 + 2700), 0, 0, 1, 1, ${at}::timestamptz, ${at}::timestamptz
      from generate_series(1, 8760) as n
    `.execute(service.deps.db);
    await sql`analyze sessions`.execute(service.deps.db);
    const statement = dueRemindersStatement({ now: '2027-03-01T00:00:00.000Z', latenessSecondsMax: REMINDER_LATENESS_SECONDS_MAX, workspaceId: undefined, limit: 1000 });
    const { rows } = await sql<{ 'QUERY PLAN': string }>`explain ${statement}`.execute(service.deps.db);
    const plan = rows.map((row) => row['QUERY PLAN']).join('\n');
    expect(plan).toMatch(/Index (Only )?Scan using sessions_by_start on sessions|Bitmap Index Scan on sessions_by_start/);
    expect(plan).not.toMatch(/Seq Scan on sessions/);
  });
});
