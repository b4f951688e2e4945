import { type Insertable, type Kysely, type Selectable, sql, type Updateable } from 'kysely';
import type { BookingsTable, DB, StudyHostsTable, StudySchedulesTable } from '../../db/schema.js';

type Executor = Kysely<DB>;

export type ScheduleRow = Selectable<StudySchedulesTable>;
export type HostRow = Selectable<StudyHostsTable>;

/** The study's facts a schedule needs, its rules (or none yet) and its hosts. */
export async function findSchedulePlan(db: Executor, workspaceId: string, studyId: string) {
  // One statement for the study, its rules and its hosts: every booking page reads them.
  return db
    .selectFrom('studies as s')
    .leftJoin('study_schedules as ss', (join) => join.onRef('ss.workspace_id', '=', 's.workspace_id').onRef('ss.study_id', '=', 's.study_id'))
    .where('s.workspace_id', '=', workspaceId)
    .where('s.study_id', '=', studyId)
    .select([
      's.status',
      's.study_type',
      sql<number | null>`(s.plan->'scheduler'->>'interviewDurationMinutes')::numeric`.as('plan_duration_minutes'),
      sql<string | null>`coalesce(s.plan->>'externalName', s.plan->>'name')`.as('study_name'),
      sql<ScheduleRow | null>`case when ss.study_id is null then null else to_jsonb(ss) end`.as('schedule'),
      sql<HostOfPlan[]>`coalesce((
        select jsonb_agg(jsonb_build_object('user_id', h.user_id, 'time_zone', h.time_zone, 'weekly_hours', h.weekly_hours, 'overrides', h.overrides) order by h.position)
        from study_hosts h where h.workspace_id = s.workspace_id and h.study_id = s.study_id), '[]'::jsonb)`.as('hosts'),
    ])
    .executeTakeFirst();
}

/** A study's host as the schedule reads it. */
export type HostOfPlan = Pick<Selectable<StudyHostsTable>, 'user_id' | 'time_zone' | 'weekly_hours' | 'overrides'>;

export async function upsertSchedule(db: Executor, row: Insertable<StudySchedulesTable>): Promise<void> {
  const { workspace_id: _workspace, study_id: _study, created_at: _created, ...changes } = row;
  await db
    .insertInto('study_schedules')
    .values(row)
    .onConflict((conflict) => conflict.columns(['workspace_id', 'study_id']).doUpdateSet(changes))
    .execute();
}

export async function replaceHosts(db: Executor, workspaceId: string, studyId: string, hosts: Insertable<StudyHostsTable>[]): Promise<void> {
  await db.deleteFrom('study_hosts').where('workspace_id', '=', workspaceId).where('study_id', '=', studyId).execute();
  if (hosts.length > 0) await db.insertInto('study_hosts').values(hosts).execute();
}

/** The ACTIVE users among `userIds`. */
export async function findActiveUserIds(db: Executor, workspaceId: string, userIds: readonly string[]): Promise<Set<string>> {
  if (userIds.length === 0) return new Set();
  const rows = await db.selectFrom('users').select('user_id').where('workspace_id', '=', workspaceId).where('user_id', 'in', userIds).where('status', '=', 'ACTIVE').execute();
  return new Set(rows.map((row) => row.user_id));
}

/**
 * Locks the hosts' user rows, in id order (so two bookings never wait on each other's hosts): the
 * lock every new session of a host is created under, in any study, so that two bookings cannot
 * both find a host free at overlapping times. NO KEY UPDATE leaves rows that only reference a
 * user (their foreign keys take KEY SHARE) unblocked.
 */
export async function lockHosts(db: Executor, workspaceId: string, userIds: readonly string[]): Promise<void> {
  if (userIds.length === 0) return;
  await db
    .selectFrom('users')
    .select('user_id')
    .where('workspace_id', '=', workspaceId)
    .where('user_id', 'in', [...userIds].sort())
    .orderBy('user_id')
    .forNoKeyUpdate()
    .execute();
}

/** The sessions holding a booking, of any study, of these hosts, that reach into [from, to) with any buffer. */
export async function findHostSessions(db: Executor, workspaceId: string, hostUserIds: readonly string[], from: Date, to: Date) {
  if (hostUserIds.length === 0) return [];
  // A buffer is at most 12 hours: sessions starting up to that long after `to` or ending that long before `from` may still reach in.
  const margin = 12 * 3_600_000;
  return db
    .selectFrom('sessions')
    .select(['session_id', 'study_id', 'host_user_id', 'starts_at', 'ends_at', 'booked', 'capacity', 'buffer_before_minutes', 'buffer_after_minutes'])
    .where('workspace_id', '=', workspaceId)
    .where('host_user_id', 'in', hostUserIds)
    .where('booked', '>', 0)
    .where('starts_at', '<', new Date(to.getTime() + margin).toISOString())
    .where('ends_at', '>', new Date(from.getTime() - margin).toISOString())
    .execute();
}

/**
 * Takes a place in the study's session of that host at that start, when it exists and has one:
 * one conditional update, so concurrent takers of the last place queue on the row and only one
 * finds it below capacity. `booked > 0` unless `orEmpty`: an empty session is free time again, to
 * be checked against the host's other sessions under the host's lock before it is taken.
 */
export async function takePlace(db: Executor, workspaceId: string, studyId: string, hostUserId: string, startsAt: string, at: string, orEmpty: boolean) {
  return db
    .updateTable('sessions')
    .set((eb) => ({ booked: eb('booked', '+', 1), updated_at: at }))
    .where('workspace_id', '=', workspaceId)
    .where('study_id', '=', studyId)
    .where('host_user_id', '=', hostUserId)
    .where('starts_at', '=', startsAt)
    .where('booked', orEmpty ? '>=' : '>', 0)
    .whereRef('booked', '<', 'capacity')
    .returning(['session_id', 'starts_at', 'ends_at', 'host_user_id'])
    .executeTakeFirst();
}

/** Makes the session a free slot stands for, or renews an empty one with today's rules. */
export async function ensureSession(
  db: Executor,
  row: { workspace_id: string; session_id: string; study_id: string; host_user_id: string; starts_at: string; ends_at: string; buffer_before_minutes: number; buffer_after_minutes: number; capacity: number; at: string },
): Promise<void> {
  const { at, ...values } = row;
  await db
    .insertInto('sessions')
    .values({ ...values, created_at: at, updated_at: at })
    .onConflict((conflict) =>
      conflict
        .columns(['workspace_id', 'study_id', 'host_user_id', 'starts_at'])
        .doUpdateSet({ ends_at: values.ends_at, buffer_before_minutes: values.buffer_before_minutes, buffer_after_minutes: values.buffer_after_minutes, capacity: values.capacity, updated_at: at })
        .where('sessions.booked', '=', 0),
    )
    .execute();
}

export async function releasePlace(db: Executor, workspaceId: string, sessionId: string, at: string): Promise<void> {
  await db
    .updateTable('sessions')
    .set((eb) => ({ booked: eb('booked', '-', 1), updated_at: at }))
    .where('workspace_id', '=', workspaceId)
    .where('session_id', '=', sessionId)
    .where('booked', '>', 0)
    .execute();
}

export async function insertBooking(db: Executor, row: Insertable<BookingsTable>): Promise<void> {
  await db.insertInto('bookings').values(row).execute();
}

export async function updateBooking(db: Executor, workspaceId: string, bookingId: string, changes: Updateable<BookingsTable>): Promise<void> {
  await db.updateTable('bookings').set(changes).where('workspace_id', '=', workspaceId).where('booking_id', '=', bookingId).execute();
}

const bookingColumns = [
  'b.booking_id',
  'b.study_id',
  'b.participant_id',
  'b.person_id',
  'b.session_id',
  'b.status',
  'b.booked_by',
  'b.booked_by_user_id',
  'b.person_time_zone',
  'b.sequence',
  'b.cancel_reason',
  'b.canceled_by',
  'b.canceled_by_user_id',
  'b.canceled_at',
  'b.created_at',
  'b.updated_at',
  's.host_user_id',
  's.starts_at',
  's.ends_at',
] as const;

const bookingsWithSessions = (db: Executor, workspaceId: string) =>
  db
    .selectFrom('bookings as b')
    .innerJoin('sessions as s', (join) => join.onRef('s.workspace_id', '=', 'b.workspace_id').onRef('s.session_id', '=', 'b.session_id'))
    .where('b.workspace_id', '=', workspaceId);

export type BookingRow = Awaited<ReturnType<typeof findBooking>> & object;

export async function findBooking(db: Executor, workspaceId: string, studyId: string, bookingId: string, options: { lock?: boolean } = {}) {
  return bookingsWithSessions(db, workspaceId)
    .where('b.study_id', '=', studyId)
    .where('b.booking_id', '=', bookingId)
    .select(bookingColumns)
    .$if(options.lock === true, (query) => query.forNoKeyUpdate(['b']))
    .executeTakeFirst();
}

/** The participant's live booking, if any (at most one: a unique index says so). */
export async function findLiveBooking(db: Executor, workspaceId: string, participantId: string, options: { lock?: boolean } = {}) {
  return bookingsWithSessions(db, workspaceId)
    .where('b.participant_id', '=', participantId)
    .where('b.status', '=', 'BOOKED')
    .select(bookingColumns)
    .$if(options.lock === true, (query) => query.forNoKeyUpdate(['b']))
    .executeTakeFirst();
}

/** The participant's live booking, else their latest (canceled) one: one statement. */
export async function findCurrentBooking(db: Executor, workspaceId: string, participantId: string) {
  return bookingsWithSessions(db, workspaceId)
    .where('b.participant_id', '=', participantId)
    .select(bookingColumns)
    .orderBy(sql`b.status = 'BOOKED'`, 'desc')
    .orderBy('b.booking_id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

export async function listBookings(db: Executor, workspaceId: string, studyId: string, status: string | undefined, afterBookingId: string | undefined, size: number) {
  let query = bookingsWithSessions(db, workspaceId).where('b.study_id', '=', studyId);
  if (status !== undefined) query = query.where('b.status', '=', status as 'BOOKED');
  const rows = await query
    .$if(afterBookingId !== undefined, (q) => q.where('b.booking_id', '>', afterBookingId!))
    .select(bookingColumns)
    .orderBy('b.booking_id')
    .limit(size + 1)
    .execute();
  let countQuery = db.selectFrom('bookings').where('workspace_id', '=', workspaceId).where('study_id', '=', studyId);
  if (status !== undefined) countQuery = countQuery.where('status', '=', status as 'BOOKED');
  const { total } = await countQuery.select((eb) => eb.fn.countAll<string>().as('total')).executeTakeFirstOrThrow();
  return { rows, total: Number(total) };
}

/** The person's live bookings, soonest first, with what their own page shows: the study's public name and the zone to show the time in. */
export async function findLiveBookingsOfPerson(db: Executor, workspaceId: string, personId: string) {
  return bookingsWithSessions(db, workspaceId)
    .innerJoin('studies as st', (join) => join.onRef('st.workspace_id', '=', 'b.workspace_id').onRef('st.study_id', '=', 'b.study_id'))
    .leftJoin('study_hosts as h', (join) => join.onRef('h.workspace_id', '=', 's.workspace_id').onRef('h.study_id', '=', 's.study_id').onRef('h.user_id', '=', 's.host_user_id'))
    .where('b.person_id', '=', personId)
    .where('b.status', '=', 'BOOKED')
    .select([...bookingColumns, 'h.time_zone as host_time_zone', sql<string>`coalesce(st.plan->>'externalName', st.plan->>'name', '')`.as('study_name')])
    .orderBy('s.starts_at')
    .execute();
}
