import { type Kysely, sql } from 'kysely';
import { DateTime } from 'luxon';
import type { Clock } from '../../clock.js';
import type { CallContext as SharedCallContext } from '../../context.js';
import type { BookingActor, DB, StudyType } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { ApiError, badRequest, conflict, type ErrorItem, notFound } from '../../http/errors.js';
import { maskText } from '../../http/masking.js';
import type { KeysetRows } from '../../http/pagination.js';
import { idPrefixes, newId } from '../../ids.js';
import { enqueueJob } from '../../jobs/queue.js';
import { type LockedParticipant, lockParticipantForSession, recordSessionChange, refusedSession } from '../participants/service.js';
import { recordEvents } from '../webhooks/outbox.js';
import * as queries from './queries.js';
import type { CancelBookingBody, CreateBookingBody, MoveBookingBody, PutStudyScheduleBody } from './schemas.js';
import { MAX_SLOT_WINDOW_DAYS } from './schemas.js';
import { type HostHours, hostHoursProblems, type HostSession, isTimeZone, type OpenSlot, openSlotAt, openSlots, type SlotQuery, type SlotRules } from './slots.js';

export type CallContext = Pick<SharedCallContext, 'db' | 'clock' | 'workspaceId' | 'userId' | 'canReadPersonalData'>;

/** The queue of the emails a booking change sends (the invitation, its update, its cancellation): notify-job.ts. */
export const BOOKING_NOTIFY_QUEUE = 'booking.notify';

export interface BookingNotifyPayload {
  bookingId: string;
  /** The booking's sequence that the change gave it. */
  sequence: number;
  method: 'REQUEST' | 'CANCEL';
}

/** The singleton key of a change's job: one job per change. */
export const bookingNotifyKey = (payload: BookingNotifyPayload) => `${payload.bookingId}:${payload.sequence}:${payload.method}`;

const defaults = {
  durationMinutes: 60,
  bufferBeforeMinutes: 0,
  bufferAfterMinutes: 0,
  minimumNoticeMinutes: 240,
  horizonDays: 30,
  dailyCap: null,
  capacity: 1,
  slotIntervalMinutes: null,
  personChangeCutoffMinutes: 1440,
  reminderOffsetsMinutes: [1440, 60],
} as const;

const interviewTypes: readonly StudyType[] = ['INTERVIEWS', 'GROUP_INTERVIEW'];
const iso = (value: string | Date) => new Date(value).toISOString();

type Plan = NonNullable<Awaited<ReturnType<typeof queries.findSchedulePlan>>>;

export interface StudySchedule {
  studyId: string;
  durationMinutes: number;
  bufferBeforeMinutes: number;
  bufferAfterMinutes: number;
  minimumNoticeMinutes: number;
  horizonDays: number;
  dailyCap: number | null;
  capacity: number;
  slotIntervalMinutes: number | null;
  personChangeCutoffMinutes: number | null;
  reminderOffsetsMinutes: number[];
  hosts: { userId: string; timeZone: string; weeklyHours: HostHours['weeklyHours']; overrides: HostHours['overrides'] }[];
  updatedAt: string | null;
}

function scheduleOf(studyId: string, plan: Plan): StudySchedule {
  const row = plan.schedule;
  const planDuration = plan.plan_duration_minutes === null ? null : Number(plan.plan_duration_minutes);
  const durationMinutes = row?.duration_minutes ?? (planDuration !== null && Number.isInteger(planDuration) && planDuration >= 5 && planDuration <= 720 ? planDuration : defaults.durationMinutes);
  return {
    studyId,
    durationMinutes,
    bufferBeforeMinutes: row?.buffer_before_minutes ?? defaults.bufferBeforeMinutes,
    bufferAfterMinutes: row?.buffer_after_minutes ?? defaults.bufferAfterMinutes,
    minimumNoticeMinutes: row?.minimum_notice_minutes ?? defaults.minimumNoticeMinutes,
    horizonDays: row?.horizon_days ?? defaults.horizonDays,
    dailyCap: row ? row.daily_cap : defaults.dailyCap,
    capacity: row?.capacity ?? defaults.capacity,
    slotIntervalMinutes: row ? row.slot_interval_minutes : defaults.slotIntervalMinutes,
    personChangeCutoffMinutes: row ? row.person_change_cutoff_minutes : defaults.personChangeCutoffMinutes,
    reminderOffsetsMinutes: row?.reminder_offsets_minutes ?? [...defaults.reminderOffsetsMinutes],
    hosts: plan.hosts.map((host) => ({ userId: host.user_id, timeZone: host.time_zone, weeklyHours: host.weekly_hours, overrides: host.overrides })),
    updatedAt: row ? iso(row.updated_at) : null,
  };
}

function rulesOf(schedule: StudySchedule): SlotRules {
  return {
    durationMinutes: schedule.durationMinutes,
    bufferBeforeMinutes: schedule.bufferBeforeMinutes,
    bufferAfterMinutes: schedule.bufferAfterMinutes,
    minimumNoticeMinutes: schedule.minimumNoticeMinutes,
    horizonDays: schedule.horizonDays,
    dailyCap: schedule.dailyCap,
    capacity: schedule.capacity,
    slotIntervalMinutes: schedule.slotIntervalMinutes ?? schedule.durationMinutes,
  };
}

const hostHoursOf = (schedule: StudySchedule): HostHours[] => schedule.hosts.map((host) => ({ hostUserId: host.userId, ...host }));

const sessionsOf = (rows: Awaited<ReturnType<typeof queries.findHostSessions>>): HostSession[] =>
  rows.map((row) => ({
    hostUserId: row.host_user_id,
    studyId: row.study_id,
    start: new Date(row.starts_at),
    end: new Date(row.ends_at),
    booked: row.booked,
    capacity: row.capacity,
    bufferBeforeMinutes: row.buffer_before_minutes,
    bufferAfterMinutes: row.buffer_after_minutes,
  }));

async function planOf(db: Kysely<DB>, workspaceId: string, studyId: string): Promise<Plan> {
  const plan = await queries.findSchedulePlan(db, workspaceId, studyId);
  if (!plan) throw notFound('Study', ['studyId']);
  return plan;
}

export async function getSchedule(context: CallContext, studyId: string): Promise<StudySchedule> {
  return scheduleOf(studyId, await planOf(context.db, context.workspaceId, studyId));
}

/**
 * PUT /studies/{studyId}/schedule: the rules and every host, replaced together. The study must be
 * an interview study; capacity above 1 is for GROUP_INTERVIEW. Bookings made keep their sessions:
 * new rules apply to times booked from now on.
 */
export async function putSchedule(context: CallContext, studyId: string, body: PutStudyScheduleBody): Promise<StudySchedule> {
  const { workspaceId } = context;
  return inTransaction(context.db, async (db) => {
    const plan = await planOf(db, workspaceId, studyId);
    if (!interviewTypes.includes(plan.study_type)) throw conflict(`Sessions are booked in interview studies (INTERVIEWS, GROUP_INTERVIEW); this study is ${plan.study_type}`, ['studyId']);
    const errors: ErrorItem[] = [];
    if (body.capacity !== undefined && body.capacity > 1 && plan.study_type !== 'GROUP_INTERVIEW') errors.push({ message: 'capacity must be 1 in an INTERVIEWS study: a session of several people is a GROUP_INTERVIEW', path: ['capacity'] });
    const seen = new Map<string, number>();
    body.hosts.forEach((host, index) => {
      const earlier = seen.get(host.userId);
      if (earlier !== undefined) errors.push({ message: `Each host is listed once; ${host.userId} is listed at hosts/${earlier} too`, path: ['hosts', String(index), 'userId'] });
      seen.set(host.userId, index);
      for (const problem of hostHoursProblems(host)) errors.push({ message: problem.message, path: ['hosts', String(index), ...problem.path] });
    });
    if (errors.length > 0) throw new ApiError('VALIDATION', errors);
    const active = await queries.findActiveUserIds(db, workspaceId, [...seen.keys()]);
    const unknown = body.hosts.findIndex((host) => !active.has(host.userId));
    if (unknown >= 0) throw notFound('User', ['hosts', String(unknown), 'userId']);

    const at = context.clock.now().toISOString();
    const current = plan.schedule;
    await queries.upsertSchedule(db, {
      workspace_id: workspaceId,
      study_id: studyId,
      duration_minutes: body.durationMinutes ?? current?.duration_minutes ?? null,
      buffer_before_minutes: body.bufferBeforeMinutes ?? current?.buffer_before_minutes ?? defaults.bufferBeforeMinutes,
      buffer_after_minutes: body.bufferAfterMinutes ?? current?.buffer_after_minutes ?? defaults.bufferAfterMinutes,
      minimum_notice_minutes: body.minimumNoticeMinutes ?? current?.minimum_notice_minutes ?? defaults.minimumNoticeMinutes,
      horizon_days: body.horizonDays ?? current?.horizon_days ?? defaults.horizonDays,
      daily_cap: body.dailyCap !== undefined ? body.dailyCap : (current ? current.daily_cap : defaults.dailyCap),
      capacity: body.capacity ?? current?.capacity ?? defaults.capacity,
      slot_interval_minutes: body.slotIntervalMinutes !== undefined ? body.slotIntervalMinutes : (current ? current.slot_interval_minutes : defaults.slotIntervalMinutes),
      person_change_cutoff_minutes: body.personChangeCutoffMinutes !== undefined ? body.personChangeCutoffMinutes : (current ? current.person_change_cutoff_minutes : defaults.personChangeCutoffMinutes),
      reminder_offsets_minutes: body.reminderOffsetsMinutes ?? current?.reminder_offsets_minutes ?? [...defaults.reminderOffsetsMinutes],
      created_at: current ? current.created_at : at,
      updated_at: at,
    });
    await queries.replaceHosts(
      db,
      workspaceId,
      studyId,
      body.hosts.map((host, position) => ({
        workspace_id: workspaceId,
        study_id: studyId,
        user_id: host.userId,
        position,
        time_zone: host.timeZone,
        weekly_hours: JSON.stringify(host.weeklyHours),
        overrides: JSON.stringify(host.overrides),
        created_at: at,
        updated_at: at,
      })),
    );
    return scheduleOf(studyId, await planOf(db, workspaceId, studyId));
  });
}

export interface SlotView {
  startTime: string;
  endTime: string;
  hostUserId: string;
  hostTimeZone: string;
  hostLocalStartTime: string;
  localStartTime: string;
  remaining: number;
}

const localTime = (instant: Date, zone: string) => DateTime.fromJSDate(instant, { zone }).toISO({ suppressMilliseconds: false })!;

export function slotView(slot: OpenSlot, timeZone: string): SlotView {
  return {
    startTime: slot.start.toISOString(),
    endTime: slot.end.toISOString(),
    hostUserId: slot.hostUserId,
    hostTimeZone: slot.hostTimeZone,
    hostLocalStartTime: localTime(slot.start, slot.hostTimeZone),
    localStartTime: localTime(slot.start, timeZone),
    remaining: slot.remaining,
  };
}

/** For the participant's page: the study's schedule (its rules and hosts), without its open times. */
export async function studySchedule(db: Kysely<DB>, workspaceId: string, studyId: string): Promise<StudySchedule> {
  return scheduleOf(studyId, await planOf(db, workspaceId, studyId));
}

/**
 * The study's open times in [from, to): its schedule and its hosts' booked sessions in every
 * study, two statements, then the slot engine. For the API and the participant's page alike.
 */
export async function studySlots(db: Kysely<DB>, workspaceId: string, studyId: string, now: Date, window: { from?: Date; to?: Date } = {}): Promise<{ schedule: StudySchedule; plan: Plan; slots: OpenSlot[] }> {
  const plan = await planOf(db, workspaceId, studyId);
  const schedule = scheduleOf(studyId, plan);
  if (schedule.hosts.length === 0 || !interviewTypes.includes(plan.study_type)) return { schedule, plan, slots: [] };
  const from = window.from && window.from > now ? window.from : now;
  const horizonEnd = new Date(now.getTime() + schedule.horizonDays * 86_400_000);
  const to = window.to && window.to < horizonEnd ? window.to : horizonEnd;
  const sessions = sessionsOf(await queries.findHostSessions(db, workspaceId, schedule.hosts.map((host) => host.userId), from, to));
  return { schedule, plan, slots: openSlots({ studyId, hosts: hostHoursOf(schedule), rules: rulesOf(schedule), sessions, now, from, to }) };
}

/** GET /studies/{studyId}/slots. */
export async function listSlots(context: CallContext, studyId: string, query: { from?: string; to?: string; timeZone?: string }): Promise<{ timeZone: string; slots: SlotView[] }> {
  const timeZone = query.timeZone ?? 'UTC';
  if (!isTimeZone(timeZone)) throw badRequest('timeZone must be an IANA time zone name, such as Europe/Berlin or America/New_York', ['timeZone']);
  const from = query.from === undefined ? undefined : new Date(query.from);
  const to = query.to === undefined ? undefined : new Date(query.to);
  if (from && to && to <= from) throw badRequest('to must be after from', ['to']);
  const start = from ?? context.clock.now();
  if (to && to.getTime() - start.getTime() > MAX_SLOT_WINDOW_DAYS * 86_400_000) throw badRequest(`The window may be at most ${MAX_SLOT_WINDOW_DAYS} days long`, ['to']);
  const { slots } = await studySlots(context.db, context.workspaceId, studyId, context.clock.now(), { ...(from ? { from } : {}), ...(to ? { to } : {}) });
  return { timeZone, slots: slots.map((slot) => slotView(slot, timeZone)) };
}

export interface BookingView {
  bookingId: string;
  studyId: string;
  participantId: string;
  personId: string;
  sessionId: string;
  hostUserId: string;
  startTime: string;
  endTime: string;
  status: 'BOOKED' | 'CANCELED';
  bookedBy: BookingActor;
  bookedByUserId: string | null;
  personTimeZone: string | null;
  sequence: number;
  cancelReason: string | null;
  canceledBy: BookingActor | null;
  canceledAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export function presentBooking(row: queries.BookingRow, canReadPersonalData: boolean): BookingView {
  return {
    bookingId: row.booking_id,
    studyId: row.study_id,
    participantId: row.participant_id,
    personId: row.person_id,
    sessionId: row.session_id,
    hostUserId: row.host_user_id,
    startTime: iso(row.starts_at),
    endTime: iso(row.ends_at),
    status: row.status,
    bookedBy: row.booked_by,
    bookedByUserId: row.booked_by_user_id,
    personTimeZone: row.person_time_zone,
    sequence: row.sequence,
    // A reason the person wrote is their own words: masked as personal data is.
    cancelReason: row.canceled_by === 'PERSON' ? maskText(row.cancel_reason, canReadPersonalData) : row.cancel_reason,
    canceledBy: row.canceled_by,
    canceledAt: row.canceled_at === null ? null : iso(row.canceled_at),
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

/** Who makes a booking change: the person on their page, or a user through the API. */
export type Actor = { by: 'PERSON' } | { by: 'TEAM'; userId: string };
const userOf = (actor: Actor) => (actor.by === 'TEAM' ? actor.userId : null);

/**
 * A place in an open time of the study at `start`, taken in the caller's transaction: the session
 * of that host and start when it holds bookings and has room (one conditional update); else, under
 * the hosts' row locks, the time checked against the rules and every booked session of the host
 * in any study, then the session made (or an empty one renewed) and its place taken. Undefined
 * when the time is not open.
 */
async function takeSlot(db: Kysely<DB>, workspaceId: string, studyId: string, schedule: StudySchedule, start: Date, hostUserId: string | undefined, now: Date, at: string) {
  const hosts = hostUserId === undefined ? schedule.hosts : schedule.hosts.filter((host) => host.userId === hostUserId);
  if (hosts.length === 0) return undefined;
  const startsAt = start.toISOString();
  const notice = now.getTime() + schedule.minimumNoticeMinutes * 60_000;
  const horizon = now.getTime() + schedule.horizonDays * 86_400_000;
  if (start.getTime() < notice || start.getTime() >= horizon) return undefined;
  // A conditional update that finds the session full has still locked its row (PostgreSQL locks the newest version
  // before it re-checks the condition), and would hold it while this transaction waits for the host's lock below,
  // behind a transaction that holds the host and waits for the row: each try is a savepoint, rolled back when it
  // takes nothing, which releases the row.
  for (const host of hosts) {
    await sql`savepoint take_place`.execute(db);
    const taken = await queries.takePlace(db, workspaceId, studyId, host.userId, startsAt, at, false);
    await (taken ? sql`release savepoint take_place` : sql`rollback to savepoint take_place`).execute(db);
    if (taken) return taken;
  }
  const dayMargin = 36 * 3_600_000;
  const around = [new Date(start.getTime() - dayMargin), new Date(start.getTime() + dayMargin)] as const;
  const slotQuery = (of: StudySchedule['hosts'], sessions: HostSession[]): SlotQuery => ({ studyId, hosts: hostHoursOf({ ...schedule, hosts: of }), rules: rulesOf(schedule), sessions, now });
  // Without a host named, the hosts free then (read without a lock) are tried in the study's order.
  let candidates = hosts;
  if (hosts.length > 1) {
    const sessions = sessionsOf(await queries.findHostSessions(db, workspaceId, hosts.map((host) => host.userId), ...around));
    candidates = hosts.filter((host) => openSlotAt(slotQuery(hosts, sessions), start, host.userId) !== undefined);
  }
  // Each under its own lock, checked again against the host's booked sessions in every study; a host no longer free is
  // let go at once (the savepoint's rollback releases its lock), so a booking never holds two hosts and never waits in a cycle.
  for (const host of candidates) {
    await sql`savepoint host_slot`.execute(db);
    await queries.lockHosts(db, workspaceId, [host.userId]);
    const sessions = sessionsOf(await queries.findHostSessions(db, workspaceId, [host.userId], ...around));
    const slot = openSlotAt(slotQuery([host], sessions), start, host.userId);
    if (!slot) {
      await sql`rollback to savepoint host_slot`.execute(db);
      continue;
    }
    await sql`release savepoint host_slot`.execute(db);
    if (!slot.sessionExists) {
      await queries.ensureSession(db, {
        workspace_id: workspaceId,
        session_id: newId(idPrefixes.session, Date.parse(at)),
        study_id: studyId,
        host_user_id: host.userId,
        starts_at: startsAt,
        ends_at: slot.end.toISOString(),
        buffer_before_minutes: schedule.bufferBeforeMinutes,
        buffer_after_minutes: schedule.bufferAfterMinutes,
        capacity: schedule.capacity,
        at,
      });
    }
    return queries.takePlace(db, workspaceId, studyId, host.userId, startsAt, at, true);
  }
  return undefined;
}

const notTheTime = (start: Date) => conflict(`${start.toISOString()} is not an open time of the study (taken meanwhile, outside the hosts' hours, too soon or too far ahead): list open times with GET /studies/{studyId}/slots`, ['startTime']);

async function queueNotice(db: Kysely<DB>, clock: Clock, workspaceId: string, bookingId: string, sequence: number, method: 'REQUEST' | 'CANCEL'): Promise<void> {
  const payload: BookingNotifyPayload = { bookingId, sequence, method };
  await enqueueJob(db, clock, { queue: BOOKING_NOTIFY_QUEUE, workspaceId, payload, singletonKey: bookingNotifyKey(payload), maxAttempts: 8, backoffSeconds: 60 });
}

export interface BookInput {
  workspaceId: string;
  studyId: string;
  participantId: string;
  startTime: string;
  hostUserId?: string | undefined;
  personTimeZone?: string | undefined;
  actor: Actor;
}

/**
 * Books the participant into the open time at `startTime`, in one transaction: the place, the
 * booking, the participant SCHEDULED at that time (with its status event and webhook), a
 * `booking.created` event, and the invitation's job. Refused (409, changing nothing) when the time
 * is not open, the participant already holds a booking, or the state table refuses SCHEDULED.
 */
export async function book(db: Kysely<DB>, clock: Clock, input: BookInput): Promise<queries.BookingRow> {
  const { workspaceId, studyId } = input;
  if (input.personTimeZone !== undefined && !isTimeZone(input.personTimeZone)) throw badRequest('personTimeZone must be an IANA time zone name, such as Europe/Berlin', ['personTimeZone']);
  return inTransaction(db, async (transaction) => {
    const plan = await planOf(transaction, workspaceId, studyId);
    const schedule = scheduleOf(studyId, plan);
    if (!interviewTypes.includes(plan.study_type)) throw conflict(`Sessions are booked in interview studies (INTERVIEWS, GROUP_INTERVIEW); this study is ${plan.study_type}`, ['studyId']);
    if (input.hostUserId !== undefined && !schedule.hosts.some((host) => host.userId === input.hostUserId)) throw notFound('Host', ['hostUserId']);
    const participant = await lockParticipantForSession(transaction, workspaceId, studyId, input.participantId);
    if (!participant) throw notFound('Participant', ['participantId']);
    const live = await queries.findLiveBooking(transaction, workspaceId, input.participantId);
    if (live) throw conflict(`The participant already holds booking ${live.booking_id} at ${iso(live.starts_at)}: move or cancel it`, ['participantId']);
    const start = new Date(input.startTime);
    const refusal = refusedSession({ studyType: plan.study_type, studyStatus: plan.status, hasScreener: false }, participant, start.toISOString());
    if (refusal) throw conflict(refusal.message, refusal.path);
    if (schedule.hosts.length === 0) throw conflict('The study has no hosts: set them with PUT /studies/{studyId}/schedule', ['studyId']);
    const now = clock.now();
    const at = now.toISOString();
    const place = await takeSlot(transaction, workspaceId, studyId, schedule, start, input.hostUserId, now, at);
    if (!place) throw notTheTime(start);
    const bookingId = newId(idPrefixes.booking, now.getTime());
    await queries.insertBooking(transaction, {
      workspace_id: workspaceId,
      booking_id: bookingId,
      study_id: studyId,
      participant_id: participant.participant_id,
      person_id: participant.person_id,
      session_id: place.session_id,
      status: 'BOOKED',
      booked_by: input.actor.by,
      booked_by_user_id: userOf(input.actor),
      person_time_zone: input.personTimeZone ?? null,
      sequence: 0,
      created_at: at,
      updated_at: at,
    });
    await recordSessionChange(transaction, workspaceId, studyId, participant, { status: 'SCHEDULED', interviewStartTime: start.toISOString() }, userOf(input.actor), at);
    await recordEvents(transaction, workspaceId, [{ type: 'booking.created', data: bookingEventData(studyId, participant, bookingId, place, input.actor) }], at);
    await queueNotice(transaction, clock, workspaceId, bookingId, 0, 'REQUEST');
    return (await queries.findBooking(transaction, workspaceId, studyId, bookingId))!;
  });
}

function bookingEventData(studyId: string, participant: Pick<LockedParticipant, 'participant_id' | 'person_id'>, bookingId: string, place: { session_id: string; host_user_id: string; starts_at: string; ends_at: string }, actor: Actor) {
  return {
    bookingId,
    studyId,
    participantId: participant.participant_id,
    personId: participant.person_id,
    sessionId: place.session_id,
    hostUserId: place.host_user_id,
    startTime: iso(place.starts_at),
    endTime: iso(place.ends_at),
    by: actor.by,
  };
}

/** Whether the person may still change their own session (the study's window), at `now`. */
export function personMayChange(schedule: Pick<StudySchedule, 'personChangeCutoffMinutes'>, startsAt: string, now: Date): boolean {
  if (schedule.personChangeCutoffMinutes === null) return false;
  return Date.parse(startsAt) - schedule.personChangeCutoffMinutes * 60_000 > now.getTime();
}

const personWindowClosed = (schedule: StudySchedule) =>
  conflict(
    schedule.personChangeCutoffMinutes === null ? 'The study does not let people change their own sessions' : `A session can be changed on this page until ${schedule.personChangeCutoffMinutes} minutes before it starts`,
    ['bookingId'],
  );

export interface MoveInput {
  workspaceId: string;
  studyId: string;
  bookingId: string;
  startTime: string;
  hostUserId?: string | undefined;
  actor: Actor;
}

/**
 * Moves a live booking to another open time, in one transaction: its old place freed, the new one
 * taken under the same rules as a booking, its sequence raised (the invitation's update), the
 * participant's interviewStartTime set (a NO_SHOW participant SCHEDULED again), `booking.moved`.
 */
export async function move(db: Kysely<DB>, clock: Clock, input: MoveInput): Promise<queries.BookingRow> {
  const { workspaceId, studyId } = input;
  return inTransaction(db, async (transaction) => {
    const plan = await planOf(transaction, workspaceId, studyId);
    const schedule = scheduleOf(studyId, plan);
    const booking = await queries.findBooking(transaction, workspaceId, studyId, input.bookingId, { lock: true });
    if (!booking) throw notFound('Booking', ['bookingId']);
    if (booking.status !== 'BOOKED') throw conflict('A CANCELED booking cannot be moved: book again', ['bookingId']);
    if (input.hostUserId !== undefined && !schedule.hosts.some((host) => host.userId === input.hostUserId)) throw notFound('Host', ['hostUserId']);
    const now = clock.now();
    if (input.actor.by === 'PERSON' && !personMayChange(schedule, booking.starts_at, now)) throw personWindowClosed(schedule);
    const participant = await lockParticipantForSession(transaction, workspaceId, studyId, booking.participant_id);
    if (!participant) throw notFound('Participant', ['bookingId']);
    const start = new Date(input.startTime);
    const refusal = refusedSession({ studyType: plan.study_type, studyStatus: plan.status, hasScreener: false }, participant, start.toISOString());
    if (refusal) throw conflict(refusal.message, refusal.path);
    const sameHost = input.hostUserId ?? booking.host_user_id;
    if (Date.parse(booking.starts_at) === start.getTime() && sameHost === booking.host_user_id) throw conflict('The booking is at that time already', ['startTime']);
    const at = now.toISOString();
    // The hosts' locks first, then the old session's row: the order a new booking takes them in.
    await queries.lockHosts(transaction, workspaceId, [...new Set([booking.host_user_id, ...(input.hostUserId ? [input.hostUserId] : schedule.hosts.map((host) => host.userId))])]);
    await queries.releasePlace(transaction, workspaceId, booking.session_id, at);
    const preferred = input.hostUserId ?? (schedule.hosts.some((host) => host.userId === booking.host_user_id) ? booking.host_user_id : undefined);
    let place = await takeSlot(transaction, workspaceId, studyId, schedule, start, preferred, now, at);
    if (!place && input.hostUserId === undefined && preferred !== undefined) place = await takeSlot(transaction, workspaceId, studyId, schedule, start, undefined, now, at);
    if (!place) throw notTheTime(start);
    const sequence = booking.sequence + 1;
    await queries.updateBooking(transaction, workspaceId, booking.booking_id, { session_id: place.session_id, sequence, updated_at: at });
    await recordSessionChange(transaction, workspaceId, studyId, participant, { status: 'SCHEDULED', interviewStartTime: start.toISOString() }, userOf(input.actor), at);
    await recordEvents(transaction, workspaceId, [{ type: 'booking.moved', data: bookingEventData(studyId, participant, booking.booking_id, place, input.actor) }], at);
    await queueNotice(transaction, clock, workspaceId, booking.booking_id, sequence, 'REQUEST');
    return (await queries.findBooking(transaction, workspaceId, studyId, booking.booking_id))!;
  });
}

export interface CancelInput {
  workspaceId: string;
  studyId: string;
  bookingId: string;
  reason?: string | undefined;
  actor: Actor;
}

/**
 * Cancels a live booking, in one transaction: its place freed at once (the time opens again), the
 * booking CANCELED with the reason and its sequence raised, the participant CANCELED where the
 * state table allows (a session that already took place stays as marked), `booking.canceled`,
 * and the calendar cancellation's job.
 */
export async function cancel(db: Kysely<DB>, clock: Clock, input: CancelInput): Promise<queries.BookingRow> {
  const { workspaceId, studyId } = input;
  return inTransaction(db, async (transaction) => {
    const plan = await planOf(transaction, workspaceId, studyId);
    const schedule = scheduleOf(studyId, plan);
    const booking = await queries.findBooking(transaction, workspaceId, studyId, input.bookingId, { lock: true });
    if (!booking) throw notFound('Booking', ['bookingId']);
    if (booking.status !== 'BOOKED') throw conflict('The booking is canceled already', ['bookingId']);
    const now = clock.now();
    if (input.actor.by === 'PERSON' && !personMayChange(schedule, booking.starts_at, now)) throw personWindowClosed(schedule);
    const participant = await lockParticipantForSession(transaction, workspaceId, studyId, booking.participant_id);
    const at = now.toISOString();
    const sequence = booking.sequence + 1;
    await queries.releasePlace(transaction, workspaceId, booking.session_id, at);
    await queries.updateBooking(transaction, workspaceId, booking.booking_id, {
      status: 'CANCELED',
      sequence,
      cancel_reason: input.reason ?? null,
      canceled_by: input.actor.by,
      canceled_by_user_id: userOf(input.actor),
      canceled_at: at,
      updated_at: at,
    });
    if (participant) {
      // A session not yet held: the participant will not take part, as things stand. A past one keeps its COMPLETED or NO_SHOW.
      if (participant.status === 'SCHEDULED') await recordSessionChange(transaction, workspaceId, studyId, participant, { status: 'CANCELED' }, userOf(input.actor), at);
      await recordEvents(transaction, workspaceId, [{ type: 'booking.canceled', data: bookingEventData(studyId, participant, booking.booking_id, booking, input.actor) }], at);
    }
    await queueNotice(transaction, clock, workspaceId, booking.booking_id, sequence, 'CANCEL');
    return (await queries.findBooking(transaction, workspaceId, studyId, booking.booking_id))!;
  });
}

export async function createBooking(context: CallContext, studyId: string, body: CreateBookingBody): Promise<BookingView> {
  const row = await book(context.db, context.clock, { workspaceId: context.workspaceId, studyId, ...body, actor: { by: 'TEAM', userId: context.userId } });
  return presentBooking(row, context.canReadPersonalData);
}

export async function moveBooking(context: CallContext, studyId: string, bookingId: string, body: MoveBookingBody): Promise<BookingView> {
  const row = await move(context.db, context.clock, { workspaceId: context.workspaceId, studyId, bookingId, ...body, actor: { by: 'TEAM', userId: context.userId } });
  return presentBooking(row, context.canReadPersonalData);
}

export async function cancelBooking(context: CallContext, studyId: string, bookingId: string, body: CancelBookingBody): Promise<BookingView> {
  const row = await cancel(context.db, context.clock, { workspaceId: context.workspaceId, studyId, bookingId, reason: body.reason, actor: { by: 'TEAM', userId: context.userId } });
  return presentBooking(row, context.canReadPersonalData);
}

export async function getBooking(context: CallContext, studyId: string, bookingId: string): Promise<BookingView> {
  const row = await queries.findBooking(context.db, context.workspaceId, studyId, bookingId);
  if (!row) {
    await planOf(context.db, context.workspaceId, studyId);
    throw notFound('Booking', ['bookingId']);
  }
  return presentBooking(row, context.canReadPersonalData);
}

export async function listBookings(context: CallContext, studyId: string, status: string | undefined, after: string | undefined, size: number): Promise<KeysetRows<BookingView>> {
  await planOf(context.db, context.workspaceId, studyId);
  const { rows, total } = await queries.listBookings(context.db, context.workspaceId, studyId, status, after, size);
  return { rows: rows.slice(0, size).map((row) => presentBooking(row, context.canReadPersonalData)), hasNextPage: rows.length > size, total };
}

/** For the participant's page: the participant's booking (live, else the latest), or undefined. */
export async function bookingOfParticipant(db: Kysely<DB>, workspaceId: string, participantId: string): Promise<queries.BookingRow | undefined> {
  return queries.findCurrentBooking(db, workspaceId, participantId);
}

/** Whether the study has a host to book with (a message's `links.scheduling` is refused without one); false for an unknown study. */
export async function studyHasHosts(db: Kysely<DB>, workspaceId: string, studyId: string): Promise<boolean> {
  return ((await queries.findSchedulePlan(db, workspaceId, studyId))?.hosts.length ?? 0) > 0;
}

/** For the person's own page: their live bookings, soonest first, each with the zone its times are shown in (theirs, else the host's). */
export async function liveBookingsOfPerson(db: Kysely<DB>, workspaceId: string, personId: string) {
  const rows = await queries.findLiveBookingsOfPerson(db, workspaceId, personId);
  return rows.map((row) => ({ ...row, shown_time_zone: row.person_time_zone ?? row.host_time_zone ?? 'UTC' }));
}
