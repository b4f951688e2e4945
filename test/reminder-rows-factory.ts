import { sql } from 'kysely';
import type { Tenant, TestService } from './harness.js';
import { addParticipants, createStudy } from './participants-factory.js';
import { createPerson } from './people-factory.js';
import { newId } from '../src/ids.js';

/**
 * Sessions and bookings written as rows, for the work that reads them (reminders) while the
 * booking service is not there to make them. Each write does what a booking, a move and a cancel
 * do to the rows: a place taken in the session (`booked`), a move that changes the session and
 * raises the sequence, a cancel that sets CANCELED; `at` is their updated_at (the service's clock
 * at the write).
 */

export interface SchedulingStudy {
  studyId: string;
  hostUserId: string;
}

/** A launched INTERVIEWS study in `language`, with its schedule (reminder offsets as given, else the default 1440 and 60) and the tenant's user as its host in `hostTimeZone`. */
export async function createSchedulingStudy(
  service: TestService,
  tenant: Tenant,
  options: { language?: string; hostTimeZone?: string; reminderOffsetsMinutes?: number[]; externalName?: string } = {},
): Promise<SchedulingStudy> {
  const studyId = await createStudy(service, tenant, {
    studyType: 'INTERVIEWS',
    launch: true,
    studyPlan: { externalName: options.externalName ?? 'Paying online', ...(options.language ? { language: options.language } : {}) },
  });
  const at = new Date().toISOString();
  const db = service.deps.db;
  await db
    .insertInto('study_schedules')
    .values({
      workspace_id: tenant.workspaceId,
      study_id: studyId,
      duration_minutes: 45,
      ...(options.reminderOffsetsMinutes ? { reminder_offsets_minutes: options.reminderOffsetsMinutes } : {}),
      created_at: at,
      updated_at: at,
    })
    .execute();
  await db
    .insertInto('study_hosts')
    .values({
      workspace_id: tenant.workspaceId,
      study_id: studyId,
      user_id: tenant.userId,
      position: 0,
      time_zone: options.hostTimeZone ?? 'Europe/London',
      weekly_hours: JSON.stringify({ MONDAY: [{ start: '09:00', end: '17:00' }] }),
      overrides: '[]',
      created_at: at,
      updated_at: at,
    })
    .execute();
  return { studyId, hostUserId: tenant.userId };
}

/** A person (with an email) who is a participant of the study. */
export async function createBookablePerson(service: TestService, tenant: Tenant, studyId: string, person: { email: string; firstName?: string }) {
  const { personId } = await createPerson(service, tenant, person);
  const [participant] = await addParticipants(service, tenant, studyId, [personId]);
  return { personId, participantId: participant!.participantId };
}

/** The host's session at `startsAt` with one more place taken (made with one place, or grown by one). */
async function insertSession(service: TestService, tenant: Tenant, study: SchedulingStudy, startsAt: string, at: string): Promise<string> {
  const row = await service.deps.db
    .insertInto('sessions')
    .values({
      workspace_id: tenant.workspaceId,
      session_id: newId('ses'),
      study_id: study.studyId,
      host_user_id: study.hostUserId,
      starts_at: startsAt,
      ends_at: new Date(Date.parse(startsAt) + 45 * 60_000).toISOString(),
      buffer_before_minutes: 0,
      buffer_after_minutes: 0,
      capacity: 1,
      booked: 1,
      created_at: at,
      updated_at: at,
    })
    .onConflict((conflict) =>
      conflict.columns(['workspace_id', 'study_id', 'host_user_id', 'starts_at']).doUpdateSet((eb) => ({ booked: eb('sessions.booked', '+', 1), capacity: eb('sessions.capacity', '+', 1), updated_at: at })),
    )
    .returning('session_id')
    .executeTakeFirstOrThrow();
  return row.session_id;
}

/** A BOOKED booking of a new session starting at `startsAt`, made at `at`. */
export async function bookSession(
  service: TestService,
  tenant: Tenant,
  study: SchedulingStudy,
  participant: { personId: string; participantId: string },
  options: { startsAt: string; at: string; personTimeZone?: string | null },
): Promise<{ bookingId: string; sessionId: string }> {
  const sessionId = await insertSession(service, tenant, study, options.startsAt, options.at);
  const bookingId = newId('bkg');
  await service.deps.db
    .insertInto('bookings')
    .values({
      workspace_id: tenant.workspaceId,
      booking_id: bookingId,
      study_id: study.studyId,
      participant_id: participant.participantId,
      person_id: participant.personId,
      session_id: sessionId,
      status: 'BOOKED',
      booked_by: 'PERSON',
      person_time_zone: options.personTimeZone ?? null,
      created_at: options.at,
      updated_at: options.at,
    })
    .execute();
  return { bookingId, sessionId };
}

/** Moves the booking to a new session starting at `startsAt`: its place in the old session is given back and its sequence raised. */
export async function moveBooking(service: TestService, tenant: Tenant, study: SchedulingStudy, bookingId: string, options: { startsAt: string; at: string }): Promise<string> {
  const sessionId = await insertSession(service, tenant, study, options.startsAt, options.at);
  await service.deps.db.transaction().execute(async (transaction) => {
    await sql`
      update sessions s set booked = s.booked - 1, updated_at = ${options.at}::timestamptz
      from bookings b where b.workspace_id = ${tenant.workspaceId} and b.booking_id = ${bookingId} and s.workspace_id = b.workspace_id and s.session_id = b.session_id
    `.execute(transaction);
    await transaction
      .updateTable('bookings')
      .set((eb) => ({ session_id: sessionId, sequence: eb('sequence', '+', 1), updated_at: options.at }))
      .where('workspace_id', '=', tenant.workspaceId)
      .where('booking_id', '=', bookingId)
      .execute();
  });
  return sessionId;
}

/** Cancels the booking (by the person) and gives its place back. */
export async function cancelBooking(service: TestService, tenant: Tenant, bookingId: string, at: string): Promise<void> {
  await service.deps.db.transaction().execute(async (transaction) => {
    await sql`
      update sessions s set booked = s.booked - 1, updated_at = ${at}::timestamptz
      from bookings b where b.workspace_id = ${tenant.workspaceId} and b.booking_id = ${bookingId} and s.workspace_id = b.workspace_id and s.session_id = b.session_id
    `.execute(transaction);
    await transaction
      .updateTable('bookings')
      .set({ status: 'CANCELED', canceled_by: 'PERSON', canceled_at: at, updated_at: at })
      .where('workspace_id', '=', tenant.workspaceId)
      .where('booking_id', '=', bookingId)
      .execute();
  });
}
