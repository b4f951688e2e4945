import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, type Tenant, type TestService, startTestService, testDatabaseUrl } from '../../../test/harness.js';
import { createPerson } from '../../../test/people-factory.js';
import { addParticipants, createStudy, patchParticipantResponse, statusEventsOf } from '../../../test/participants-factory.js';
import { describeSecurity } from '../../../test/security.js';
import { type Database, openDatabase } from '../../db/database.js';
import * as scheduling from './service.js';

/**
 * The team's side of scheduling: a study's hosts and hours, its open times, and bookings made,
 * moved and canceled through the API; exactly one booking per place under concurrency (both
 * stores; two instances on PostgreSQL).
 */
let service: TestService;
let pool: Database | undefined;
// A Monday, 06:00 UTC (07:00 in Berlin, winter time).
const now = new Date('2027-01-04T06:00:00.000Z');
beforeAll(async () => {
  pool = testDatabaseUrl ? await openDatabase({ databaseUrl: testDatabaseUrl, poolSize: 16, applicationName: 'bookings-test' }) : undefined;
  service = await startTestService({ publicUrl: 'https://recruit.example.test' }, pool ? { database: pool } : {});
  service.deps.clock.set(now);
});
afterAll(async () => {
  await service?.stop();
  await pool?.close();
});

const berlinMornings = { MONDAY: [{ start: '09:00', end: '12:00' }], TUESDAY: [{ start: '09:00', end: '12:00' }], WEDNESDAY: [{ start: '09:00', end: '12:00' }] };

interface World {
  tenant: Tenant;
  studyId: string;
  hostUserId: string;
  participantIds: string[];
}

/** An ACTIVE interview study hosted by one user in Berlin (09:00–12:00, Monday to Wednesday), with `people` participants. */
async function world(options: { people?: number; studyType?: 'INTERVIEWS' | 'GROUP_INTERVIEW'; schedule?: Record<string, unknown>; tenant?: Tenant; hostUserId?: string } = {}, target = service): Promise<World> {
  const tenant = options.tenant ?? (await createTenant(target));
  const hostUserId = options.hostUserId ?? (await tenant.tokenFor('RESEARCHER')).userId;
  const studyId = await createStudy(target, tenant, { studyType: options.studyType ?? 'INTERVIEWS', launch: true, studyPlan: { externalName: 'Checkout interviews', scheduler: { interviewDurationMinutes: 45 } } });
  const put = await call(target, 'PUT', `/studies/${studyId}/schedule`, {
    token: tenant.token,
    body: { slotIntervalMinutes: 60, ...options.schedule, hosts: [{ userId: hostUserId, timeZone: 'Europe/Berlin', weeklyHours: berlinMornings, overrides: [] }] },
  });
  expect(put.statusCode, put.body).toBe(200);
  const people = await Promise.all(Array.from({ length: options.people ?? 2 }, () => createPerson(target, tenant, {})));
  const participants = people.length === 0 ? [] : await addParticipants(target, tenant, studyId, people.map((person) => person.personId));
  return { tenant, studyId, hostUserId, participantIds: participants.map((participant) => participant.participantId) };
}

const slots = async (w: World, query: Record<string, string> = {}, target = service) => {
  const response = await call(target, 'GET', `/studies/${w.studyId}/slots`, { token: w.tenant.token, query });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<{ timeZone: string; slots: { startTime: string; endTime: string; hostUserId: string; localStartTime: string; hostLocalStartTime: string; remaining: number }[] }>();
};
const book = (w: World, body: Record<string, unknown>, target = service) => call(target, 'POST', `/studies/${w.studyId}/bookings`, { token: w.tenant.token, body });
const participantOf = async (w: World, participantId: string) =>
  (await call(service, 'GET', `/studies/${w.studyId}/participants/${participantId}`, { token: w.tenant.token })).json<{ status: string; interviewStartTime: string | null }>();

describe('GET and PUT /studies/{studyId}/schedule', () => {
  it('answers the defaults and no host for a study never set, the session length from the study plan', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(service, tenant, { studyType: 'INTERVIEWS', studyPlan: { scheduler: { interviewDurationMinutes: 45 } } });
    const response = await call(service, 'GET', `/studies/${studyId}/schedule`, { token: tenant.token });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({
      studyId,
      durationMinutes: 45,
      bufferBeforeMinutes: 0,
      bufferAfterMinutes: 0,
      minimumNoticeMinutes: 240,
      horizonDays: 30,
      dailyCap: null,
      capacity: 1,
      slotIntervalMinutes: null,
      personChangeCutoffMinutes: 1440,
      reminderOffsetsMinutes: [1440, 60],
      hosts: [],
      updatedAt: null,
    });
  });

  it('sets the rules and the hosts; fields left out keep their value; GET answers the same', async () => {
    const w = await world({ people: 0, schedule: { bufferAfterMinutes: 15, dailyCap: 3, personChangeCutoffMinutes: null } });
    const first = await call(service, 'GET', `/studies/${w.studyId}/schedule`, { token: w.tenant.token });
    expect(first.json()).toMatchObject({ durationMinutes: 45, bufferAfterMinutes: 15, dailyCap: 3, personChangeCutoffMinutes: null, slotIntervalMinutes: 60, hosts: [{ userId: w.hostUserId, timeZone: 'Europe/Berlin', weeklyHours: berlinMornings, overrides: [] }] });
    const again = await call(service, 'PUT', `/studies/${w.studyId}/schedule`, { token: w.tenant.token, body: { durationMinutes: 30, hosts: [] } });
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json()).toMatchObject({ durationMinutes: 30, bufferAfterMinutes: 15, dailyCap: 3, personChangeCutoffMinutes: null, hosts: [] });
    expect((await call(service, 'GET', `/studies/${w.studyId}/schedule`, { token: w.tenant.token })).json()).toEqual(again.json());
  });

  it('refuses what cannot be booked, naming the field, and changes nothing', async () => {
    const tenant = await createTenant(service);
    const { userId } = await tenant.tokenFor('RESEARCHER');
    const studyId = await createStudy(service, tenant, { studyType: 'INTERVIEWS' });
    const host = { userId, timeZone: 'Europe/Berlin', weeklyHours: berlinMornings, overrides: [] };
    const put = (body: unknown) => call(service, 'PUT', `/studies/${studyId}/schedule`, { token: tenant.token, body });
    const cases: [unknown, number, string[]][] = [
      [{ capacity: 3, hosts: [host] }, 400, ['capacity']],
      [{ hosts: [host, host] }, 400, ['hosts', '1', 'userId']],
      [{ hosts: [{ ...host, timeZone: 'Mars/Olympus' }] }, 400, ['hosts', '0', 'timeZone']],
      [{ hosts: [{ ...host, weeklyHours: { MONDAY: [{ start: '12:00', end: '09:00' }] } }] }, 400, ['hosts', '0', 'weeklyHours', 'MONDAY', '0']],
      [{ hosts: [{ ...host, weeklyHours: { MONDAY: [{ start: '9:00', end: '12:00' }] } }] }, 400, ['hosts', '0', 'weeklyHours', 'MONDAY', '0', 'start']],
      [{ hosts: [{ ...host, userId: 'usr_nobody' }] }, 404, ['hosts', '0', 'userId']],
      [{ horizonDays: 0, hosts: [] }, 400, ['horizonDays']],
    ];
    for (const [body, status, path] of cases) {
      const response = await put(body);
      expect(response.statusCode, JSON.stringify(body)).toBe(status);
      const paths = response.json<{ errors: { path: string[] }[] }>().errors.map((error) => error.path);
      expect(paths.some((given) => path.every((part, index) => given[index] === part)), `${JSON.stringify(paths)} names ${path.join('/')}`).toBe(true);
    }
    expect((await call(service, 'GET', `/studies/${studyId}/schedule`, { token: tenant.token })).json()).toMatchObject({ updatedAt: null, hosts: [] });
    const survey = await createStudy(service, tenant, { studyType: 'SURVEY' });
    const refused = await call(service, 'PUT', `/studies/${survey}/schedule`, { token: tenant.token, body: { hosts: [host] } });
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toMatchObject({ errors: [{ path: ['studyId'] }] });
  });
});

describe('GET /studies/{studyId}/slots', () => {
  it("lists open times from the minimum notice on, in the zone asked for and the host's", async () => {
    const w = await world({ people: 0 });
    const listed = await slots(w, { timeZone: 'America/New_York', to: '2027-01-06T00:00:00.000Z' });
    expect(listed.timeZone).toBe('America/New_York');
    // Monday: 09:00–12:00 Berlin is 08:00–11:00 UTC; four hours' notice from 06:00 UTC leaves 10:00 UTC (11:00 Berlin). Tuesday: all three.
    expect(listed.slots.map((slot) => slot.startTime)).toEqual(['2027-01-04T10:00:00.000Z', '2027-01-05T08:00:00.000Z', '2027-01-05T09:00:00.000Z', '2027-01-05T10:00:00.000Z']);
    expect(listed.slots[0]).toEqual({
      startTime: '2027-01-04T10:00:00.000Z',
      endTime: '2027-01-04T10:45:00.000Z',
      hostUserId: w.hostUserId,
      hostTimeZone: 'Europe/Berlin',
      hostLocalStartTime: '2027-01-04T11:00:00.000+01:00',
      localStartTime: '2027-01-04T05:00:00.000-05:00',
      remaining: 1,
    });
  });

  it('refuses an unknown zone and a window too long or backwards, naming the parameter', async () => {
    const w = await world({ people: 0 });
    for (const [query, path] of [
      [{ timeZone: 'Nowhere/Special' }, 'timeZone'],
      [{ from: '2027-01-05T00:00:00.000Z', to: '2027-01-04T00:00:00.000Z' }, 'to'],
      [{ from: '2027-01-05T00:00:00.000Z', to: '2027-06-05T00:00:00.000Z' }, 'to'],
      [{ from: 'yesterday' }, 'from'],
    ] as const) {
      const response = await call(service, 'GET', `/studies/${w.studyId}/slots`, { token: w.tenant.token, query });
      expect(response.statusCode, JSON.stringify(query)).toBe(400);
      expect(JSON.stringify(response.json())).toContain(path);
    }
  });
});

describe('bookings through the API', () => {
  it('books an open time: the participant SCHEDULED at it with an event, the time no longer open, booking.created and the invitation queued', async () => {
    const w = await world();
    const response = await book(w, { participantId: w.participantIds[0], startTime: '2027-01-05T09:00:00.000Z', personTimeZone: 'America/New_York' });
    expect(response.statusCode, response.body).toBe(201);
    const booking = response.json<scheduling.BookingView>();
    expect(booking).toMatchObject({
      bookingId: expect.stringMatching(/^bkg_/),
      sessionId: expect.stringMatching(/^ses_/),
      studyId: w.studyId,
      participantId: w.participantIds[0],
      hostUserId: w.hostUserId,
      startTime: '2027-01-05T09:00:00.000Z',
      endTime: '2027-01-05T09:45:00.000Z',
      status: 'BOOKED',
      bookedBy: 'TEAM',
      bookedByUserId: w.tenant.userId,
      personTimeZone: 'America/New_York',
      sequence: 0,
      cancelReason: null,
    });
    expect(await participantOf(w, w.participantIds[0]!)).toMatchObject({ status: 'SCHEDULED', interviewStartTime: '2027-01-05T09:00:00.000Z' });
    const events = await statusEventsOf(service, w.tenant, w.participantIds[0]!);
    expect(events.map((event) => [event.field, event.to_value])).toContainEqual(['status', 'SCHEDULED']);
    expect((await slots(w)).slots.map((slot) => slot.startTime)).not.toContain('2027-01-05T09:00:00.000Z');
    const outbox = await service.deps.db.selectFrom('webhook_messages').select(['event_type']).where('workspace_id', '=', w.tenant.workspaceId).execute();
    expect(outbox.map((row) => row.event_type)).toEqual(expect.arrayContaining(['booking.created', 'participant.status_changed']));
    const jobs = await service.deps.db.selectFrom('jobs').select(['queue', 'payload']).where('workspace_id', '=', w.tenant.workspaceId).where('queue', '=', 'booking.notify').execute();
    expect(jobs).toHaveLength(1);
    expect(jobs[0]!.payload).toMatchObject({ bookingId: booking.bookingId, sequence: 0, method: 'REQUEST' });
    const read = await call(service, 'GET', `/studies/${w.studyId}/bookings/${booking.bookingId}`, { token: w.tenant.token });
    expect(read.json()).toEqual(booking);
    const listed = await call(service, 'GET', `/studies/${w.studyId}/bookings`, { token: w.tenant.token, query: { status: 'BOOKED' } });
    expect(listed.json()).toMatchObject({ total: 1, results: [booking] });
  });

  it('refuses, changing nothing: a taken time, a time not open, a participant booked already, an unknown participant or host', async () => {
    const w = await world({ people: 3 });
    expect((await book(w, { participantId: w.participantIds[0], startTime: '2027-01-05T09:00:00.000Z' })).statusCode).toBe(201);
    const refusals: [Record<string, unknown>, number, string][] = [
      [{ participantId: w.participantIds[1], startTime: '2027-01-05T09:00:00.000Z' }, 409, 'startTime'],
      [{ participantId: w.participantIds[1], startTime: '2027-01-04T08:00:00.000Z' }, 409, 'startTime'], // inside the minimum notice
      [{ participantId: w.participantIds[1], startTime: '2027-01-05T09:30:00.000Z' }, 409, 'startTime'], // not a start the interval offers
      [{ participantId: w.participantIds[1], startTime: '2027-01-07T09:00:00.000Z' }, 409, 'startTime'], // Thursday: no hours
      [{ participantId: w.participantIds[1], startTime: '2027-03-09T09:00:00.000Z' }, 409, 'startTime'], // beyond the horizon
      [{ participantId: w.participantIds[0], startTime: '2027-01-05T10:00:00.000Z' }, 409, 'participantId'],
      [{ participantId: 'ptc_nobody', startTime: '2027-01-05T10:00:00.000Z' }, 404, 'participantId'],
      [{ participantId: w.participantIds[1], startTime: '2027-01-05T10:00:00.000Z', hostUserId: w.tenant.userId }, 404, 'hostUserId'],
      [{ participantId: w.participantIds[1], startTime: '2027-01-05T10:00:00.000Z', personTimeZone: 'Moon/Base' }, 400, 'personTimeZone'],
    ];
    for (const [body, status, path] of refusals) {
      const response = await book(w, body);
      expect(response.statusCode, JSON.stringify(body)).toBe(status);
      expect(response.json<{ errors: { path: string[] }[] }>().errors[0]!.path).toEqual([path]);
    }
    expect(await participantOf(w, w.participantIds[1]!)).toMatchObject({ status: 'NOT_STARTED', interviewStartTime: null });
    const count = await service.deps.db.selectFrom('bookings').select((eb) => eb.fn.countAll<string>().as('n')).where('workspace_id', '=', w.tenant.workspaceId).executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(1);
  });

  it("refuses an opted-out person and a study that is not ACTIVE (the state table's rules)", async () => {
    const w = await world({ people: 2 });
    const person = (await call(service, 'GET', `/studies/${w.studyId}/participants/${w.participantIds[0]}`, { token: w.tenant.token })).json<{ personId: string }>().personId;
    const optOut = await call(service, 'PUT', `/people/${person}/opted-out`, { token: w.tenant.token, body: { isOptedOut: true } });
    expect(optOut.statusCode, optOut.body).toBe(200);
    const optedOut = await book(w, { participantId: w.participantIds[0], startTime: '2027-01-05T09:00:00.000Z' });
    expect(optedOut.statusCode).toBe(409);
    expect(optedOut.body).toContain('opted out');
    expect((await call(service, 'POST', `/studies/${w.studyId}/status`, { token: w.tenant.token, body: { status: 'PAUSED' } })).statusCode).toBe(200);
    const paused = await book(w, { participantId: w.participantIds[1], startTime: '2027-01-05T09:00:00.000Z' });
    expect(paused.statusCode).toBe(409);
    expect(paused.body).toContain('ACTIVE');
  });

  it('moves a booking: the old time opens again at once, the new one is taken, the sequence rises; a taken time refuses and changes nothing', async () => {
    const w = await world({ people: 2 });
    const booked = (await book(w, { participantId: w.participantIds[0], startTime: '2027-01-05T09:00:00.000Z' })).json<scheduling.BookingView>();
    expect((await book(w, { participantId: w.participantIds[1], startTime: '2027-01-05T10:00:00.000Z' })).statusCode).toBe(201);
    const blocked = await call(service, 'POST', `/studies/${w.studyId}/bookings/${booked.bookingId}/move`, { token: w.tenant.token, body: { startTime: '2027-01-05T10:00:00.000Z' } });
    expect(blocked.statusCode).toBe(409);
    expect((await call(service, 'GET', `/studies/${w.studyId}/bookings/${booked.bookingId}`, { token: w.tenant.token })).json()).toEqual(booked);
    const moved = await call(service, 'POST', `/studies/${w.studyId}/bookings/${booked.bookingId}/move`, { token: w.tenant.token, body: { startTime: '2027-01-06T08:00:00.000Z' } });
    expect(moved.statusCode, moved.body).toBe(200);
    expect(moved.json()).toMatchObject({ bookingId: booked.bookingId, startTime: '2027-01-06T08:00:00.000Z', sequence: 1, status: 'BOOKED' });
    expect(await participantOf(w, w.participantIds[0]!)).toMatchObject({ status: 'SCHEDULED', interviewStartTime: '2027-01-06T08:00:00.000Z' });
    const open = (await slots(w)).slots.map((slot) => slot.startTime);
    expect(open).toContain('2027-01-05T09:00:00.000Z');
    expect(open).not.toContain('2027-01-06T08:00:00.000Z');
    const same = await call(service, 'POST', `/studies/${w.studyId}/bookings/${booked.bookingId}/move`, { token: w.tenant.token, body: { startTime: '2027-01-06T08:00:00.000Z' } });
    expect(same.statusCode).toBe(409);
  });

  it('cancels a booking: the place freed at once, the reason kept, the participant CANCELED; a second cancel refuses', async () => {
    const w = await world({ people: 1 });
    const booked = (await book(w, { participantId: w.participantIds[0], startTime: '2027-01-05T09:00:00.000Z' })).json<scheduling.BookingView>();
    const canceled = await call(service, 'POST', `/studies/${w.studyId}/bookings/${booked.bookingId}/cancel`, { token: w.tenant.token, body: { reason: 'The host is ill' } });
    expect(canceled.statusCode, canceled.body).toBe(200);
    expect(canceled.json()).toMatchObject({ status: 'CANCELED', cancelReason: 'The host is ill', canceledBy: 'TEAM', canceledAt: now.toISOString(), sequence: 1 });
    expect(await participantOf(w, w.participantIds[0]!)).toMatchObject({ status: 'CANCELED' });
    expect((await slots(w)).slots.map((slot) => slot.startTime)).toContain('2027-01-05T09:00:00.000Z');
    expect((await call(service, 'POST', `/studies/${w.studyId}/bookings/${booked.bookingId}/cancel`, { token: w.tenant.token, body: {} })).statusCode).toBe(409);
    const jobs = await service.deps.db.selectFrom('jobs').select(['payload']).where('workspace_id', '=', w.tenant.workspaceId).where('queue', '=', 'booking.notify').orderBy('created_at').execute();
    expect(jobs.map((job) => (job.payload as { method: string }).method)).toEqual(['REQUEST', 'CANCEL']);
  });

  it("masks the person's own cancellation reason for a token without the personal-data right", async () => {
    const w = await world({ people: 1 });
    const booked = (await book(w, { participantId: w.participantIds[0], startTime: '2027-01-05T09:00:00.000Z' })).json<scheduling.BookingView>();
    await scheduling.cancel(service.deps.tenantDb(w.tenant.workspaceId), service.deps.clock, { workspaceId: w.tenant.workspaceId, studyId: w.studyId, bookingId: booked.bookingId, reason: 'My daughter is ill', actor: { by: 'PERSON' } });
    const { token } = await w.tenant.tokenFor('RESEARCHER', { canReadPersonalData: false });
    expect((await call(service, 'GET', `/studies/${w.studyId}/bookings/${booked.bookingId}`, { token })).json()).toMatchObject({ cancelReason: '***', canceledBy: 'PERSON' });
    expect((await call(service, 'GET', `/studies/${w.studyId}/bookings/${booked.bookingId}`, { token: w.tenant.token })).json()).toMatchObject({ cancelReason: 'My daughter is ill' });
  });

  it('a time set by PATCH holds no place; a booked time is moved or canceled through its booking only', async () => {
    const w = await world({ people: 2 });
    const patched = await patchParticipantResponse(service, w.tenant, w.studyId, w.participantIds[0]!, { status: 'SCHEDULED', interviewStartTime: '2027-01-05T09:00:00.000Z' });
    expect(patched.statusCode, patched.body).toBe(200);
    expect((await slots(w)).slots.map((slot) => slot.startTime)).toContain('2027-01-05T09:00:00.000Z');
    const jobs = await service.deps.db.selectFrom('jobs').select('job_id').where('workspace_id', '=', w.tenant.workspaceId).where('queue', '=', 'booking.notify').execute();
    expect(jobs).toEqual([]);
    // A participant SCHEDULED by PATCH may still book: the booking's time replaces the one recorded.
    expect((await book(w, { participantId: w.participantIds[0], startTime: '2027-01-05T10:00:00.000Z' })).statusCode).toBe(201);
    const moveByPatch = await patchParticipantResponse(service, w.tenant, w.studyId, w.participantIds[0]!, { interviewStartTime: '2027-01-06T09:00:00.000Z' });
    expect(moveByPatch.statusCode).toBe(409);
    expect(moveByPatch.json()).toMatchObject({ errors: [{ path: ['interviewStartTime'] }] });
    const cancelByPatch = await patchParticipantResponse(service, w.tenant, w.studyId, w.participantIds[0]!, { status: 'CANCELED' });
    expect(cancelByPatch.statusCode).toBe(409);
    expect(cancelByPatch.json()).toMatchObject({ errors: [{ path: ['status'] }] });
    // After the session, the team marks it as today.
    service.deps.clock.set(new Date('2027-01-05T12:00:00.000Z'));
    try {
      expect((await patchParticipantResponse(service, w.tenant, w.studyId, w.participantIds[0]!, { status: 'COMPLETED' })).statusCode).toBe(200);
    } finally {
      service.deps.clock.set(now);
    }
  });

  it("keeps one host's sessions in two studies apart, with the buffers", async () => {
    const a = await world({ people: 1, schedule: { bufferAfterMinutes: 30 } });
    const b = await world({ people: 1, tenant: a.tenant, hostUserId: a.hostUserId, schedule: { slotIntervalMinutes: 15 } });
    expect((await book(a, { participantId: a.participantIds[0], startTime: '2027-01-05T09:00:00.000Z' })).statusCode).toBe(201);
    // A's session runs 09:00–09:45 with 30 minutes after: B's 45-minute sessions may not start before 10:15.
    const open = (await slots(b, { to: '2027-01-05T11:00:00.000Z', from: '2027-01-05T08:00:00.000Z' })).slots.map((slot) => slot.startTime);
    // Starts from 08:00 every 15 minutes: those ending by 09:00 keep clear of A's session; 10:15 is the first after A's buffer.
    expect(open).toEqual(['2027-01-05T08:00:00.000Z', '2027-01-05T08:15:00.000Z', '2027-01-05T10:15:00.000Z']);
    expect((await book(b, { participantId: b.participantIds[0], startTime: '2027-01-05T09:30:00.000Z' })).statusCode).toBe(409);
  });

  it('fills a GROUP_INTERVIEW session up to its capacity', async () => {
    const w = await world({ people: 4, studyType: 'GROUP_INTERVIEW', schedule: { capacity: 3 } });
    for (const participantId of w.participantIds.slice(0, 3)) {
      expect((await book(w, { participantId, startTime: '2027-01-05T09:00:00.000Z' })).statusCode).toBe(201);
      const slot = (await slots(w)).slots.find((candidate) => candidate.startTime === '2027-01-05T09:00:00.000Z');
      expect(slot?.remaining ?? 0).toBe(3 - w.participantIds.indexOf(participantId) - 1);
    }
    expect((await book(w, { participantId: w.participantIds[3], startTime: '2027-01-05T09:00:00.000Z' })).statusCode).toBe(409);
    const sessions = await service.deps.db.selectFrom('sessions').select(['booked', 'capacity']).where('workspace_id', '=', w.tenant.workspaceId).execute();
    expect(sessions).toEqual([{ booked: 3, capacity: 3 }]);
  });
});

/** `people` bookings of one time at once, spread over the instances: exactly `capacity` succeed. */
async function race(targets: TestService[], options: { people: number; capacity: number }) {
  const primary = targets[0]!;
  const w = await world({ people: options.people, studyType: options.capacity > 1 ? 'GROUP_INTERVIEW' : 'INTERVIEWS', schedule: { capacity: options.capacity } }, primary);
  const responses = await Promise.all(w.participantIds.map((participantId, index) => book(w, { participantId, startTime: '2027-01-05T09:00:00.000Z' }, targets[index % targets.length])));
  const statuses = responses.map((response) => response.statusCode);
  expect(statuses.filter((status) => status === 201)).toHaveLength(options.capacity);
  expect(statuses.filter((status) => status !== 201 && status !== 409)).toEqual([]);
  const sessions = await primary.deps.db.selectFrom('sessions').select(['booked']).where('workspace_id', '=', w.tenant.workspaceId).execute();
  expect(sessions).toEqual([{ booked: options.capacity }]);
  const live = await primary.deps.db.selectFrom('bookings').select('booking_id').where('workspace_id', '=', w.tenant.workspaceId).where('status', '=', 'BOOKED').execute();
  expect(live).toHaveLength(options.capacity);
  return w;
}

describe('exactly once under concurrency', () => {
  it('books one place of one time for 20 simultaneous requests', async () => {
    await race([service], { people: 20, capacity: 1 });
  }, 60_000);

  it('books exactly 3 places of a group session for 20 simultaneous requests', async () => {
    await race([service], { people: 20, capacity: 3 });
  }, 60_000);

  it("books one host's overlapping times in two studies once", async () => {
    const a = await world({ people: 10 });
    const b = await world({ people: 10, tenant: a.tenant, hostUserId: a.hostUserId });
    const responses = await Promise.all(
      a.participantIds.flatMap((participantId, index) => [book(a, { participantId, startTime: '2027-01-05T09:00:00.000Z' }), book(b, { participantId: b.participantIds[index], startTime: '2027-01-05T09:00:00.000Z' })]),
    );
    expect(responses.filter((response) => response.statusCode === 201)).toHaveLength(1);
    const sessions = await service.deps.db.selectFrom('sessions').select(['booked']).where('workspace_id', '=', a.tenant.workspaceId).where('booked', '>', 0).execute();
    expect(sessions).toEqual([{ booked: 1 }]);
  }, 60_000);
});

describe.skipIf(!testDatabaseUrl)('exactly once across two instances (PostgreSQL)', () => {
  let poolA: Database;
  let poolB: Database;
  let a: TestService;
  let b: TestService;
  beforeAll(async () => {
    poolA = await openDatabase({ databaseUrl: testDatabaseUrl!, poolSize: 8, applicationName: 'bookings-instance-a' });
    poolB = await openDatabase({ databaseUrl: testDatabaseUrl!, poolSize: 8, applicationName: 'bookings-instance-b' });
    a = await startTestService({ publicUrl: 'https://recruit.example.test' }, { database: poolA });
    b = await startTestService({ publicUrl: 'https://recruit.example.test' }, { database: poolB });
    a.deps.clock.set(now);
    b.deps.clock.set(now);
  });
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await poolA?.close();
    await poolB?.close();
  });

  it('books one place for 30 requests alternating between two instances', async () => {
    await race([a, b], { people: 30, capacity: 1 });
  }, 120_000);

  it('books exactly 4 places of a group session across two instances', async () => {
    await race([a, b], { people: 30, capacity: 4 });
  }, 120_000);
});

describeSecurity('GET /studies/{studyId}/schedule', () => service, {
  method: 'GET',
  right: 'studies:read',
  addressesResource: true,
  request: async (tenant) => ({ url: `/studies/${await createStudy(service, tenant, { studyType: 'INTERVIEWS' })}/schedule` }),
});

describeSecurity('PUT /studies/{studyId}/schedule', () => service, {
  method: 'PUT',
  right: 'studies:write',
  addressesResource: true,
  request: async (tenant) => ({ url: `/studies/${await createStudy(service, tenant, { studyType: 'INTERVIEWS' })}/schedule`, body: { hosts: [{ userId: tenant.userId, timeZone: 'Asia/Kathmandu', weeklyHours: berlinMornings, overrides: [] }] } }),
});

describeSecurity('GET /studies/{studyId}/slots', () => service, {
  method: 'GET',
  right: 'studies:read',
  addressesResource: true,
  request: async (tenant) => ({ url: `/studies/${(await world({ people: 0, tenant })).studyId}/slots` }),
});

describeSecurity('GET /studies/{studyId}/bookings', () => service, {
  method: 'GET',
  right: 'participants:read',
  addressesResource: true,
  request: async (tenant) => ({ url: `/studies/${(await world({ people: 0, tenant })).studyId}/bookings` }),
});

describeSecurity('POST /studies/{studyId}/bookings', () => service, {
  method: 'POST',
  right: 'participants:write',
  addressesResource: true,
  request: async (tenant) => {
    const w = await world({ people: 1, tenant });
    return { url: `/studies/${w.studyId}/bookings`, body: { participantId: w.participantIds[0], startTime: '2027-01-05T09:00:00.000Z' } };
  },
});

const bookedOne = async (tenant: Tenant) => {
  const w = await world({ people: 1, tenant });
  const booked = await book(w, { participantId: w.participantIds[0], startTime: '2027-01-05T09:00:00.000Z' });
  expect(booked.statusCode, booked.body).toBe(201);
  return { w, bookingId: booked.json<{ bookingId: string }>().bookingId };
};

describeSecurity('GET /studies/{studyId}/bookings/{bookingId}', () => service, {
  method: 'GET',
  right: 'participants:read',
  addressesResource: true,
  request: async (tenant) => {
    const { w, bookingId } = await bookedOne(tenant);
    return { url: `/studies/${w.studyId}/bookings/${bookingId}` };
  },
});

describeSecurity('POST /studies/{studyId}/bookings/{bookingId}/move', () => service, {
  method: 'POST',
  right: 'participants:write',
  addressesResource: true,
  request: async (tenant) => {
    const { w, bookingId } = await bookedOne(tenant);
    return { url: `/studies/${w.studyId}/bookings/${bookingId}/move`, body: { startTime: '2027-01-05T10:00:00.000Z' } };
  },
});

describeSecurity('POST /studies/{studyId}/bookings/{bookingId}/cancel', () => service, {
  method: 'POST',
  right: 'participants:write',
  addressesResource: true,
  request: async (tenant) => {
    const { w, bookingId } = await bookedOne(tenant);
    return { url: `/studies/${w.studyId}/bookings/${bookingId}/cancel`, body: { reason: 'Host ill' } };
  },
});
