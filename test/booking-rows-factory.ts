import { createUser, createToken } from '../src/families/workspaces/service.js';
import { enqueueJob } from '../src/jobs/queue.js';
import { idPrefixes, newId } from '../src/ids.js';
import type { UserRole } from '../src/db/schema.js';
import { type Tenant, type TestService, uniqueEmail } from './harness.js';
import { addParticipants, createStudy } from './participants-factory.js';
import { createPerson } from './people-factory.js';

/**
 * Bookings made by inserting their rows directly (a study of type INTERVIEWS through the API, a
 * host user, a person and their participant, the host's row, a session, a booking), for tests of
 * what reads bookings (invitations, feeds) without the booking service. The changes enqueue the
 * booking.notify job as that service does, in the same transaction.
 */
export interface BookingWorld {
  studyId: string;
  hostUserId: string;
  hostEmail: string;
  /** A token of the host (RESEARCHER unless asked otherwise). */
  hostToken: string;
  personId: string;
  personEmail: string;
  participantId: string;
  sessionId: string;
  bookingId: string;
}

export interface BookingWorldOptions {
  /** The study plan's external name and language. */
  externalName?: string;
  language?: string;
  /** The booking's person_time_zone (null: none recorded). */
  personTimeZone?: string | null;
  hostTimeZone?: string;
  startsAt: string;
  minutes?: number;
  capacity?: number;
  person?: { firstName?: string; lastName?: string };
  /** An existing host (another study of the same host); else a new user. */
  host?: { userId: string; email: string; token: string };
  hostRole?: UserRole;
  /** Enqueue the REQUEST job as the booking service would (default true). */
  enqueue?: boolean;
}

const at = () => new Date().toISOString();

export async function makeHost(service: TestService, tenant: Tenant, role: UserRole = 'RESEARCHER', fullName = 'Hana Host') {
  const email = uniqueEmail('host');
  const { userId } = await createUser(service.deps.db, { workspaceId: tenant.workspaceId, email, role, fullName });
  const { token } = await createToken(service.deps.db, tenant.workspaceId, userId);
  return { userId, email, token };
}

export async function makeSession(service: TestService, tenant: Tenant, input: { studyId: string; hostUserId: string; startsAt: string; minutes?: number; capacity?: number; booked?: number }) {
  const sessionId = newId(idPrefixes.session);
  const endsAt = new Date(Date.parse(input.startsAt) + (input.minutes ?? 60) * 60_000).toISOString();
  await service.deps.db
    .insertInto('sessions')
    .values({
      workspace_id: tenant.workspaceId,
      session_id: sessionId,
      study_id: input.studyId,
      host_user_id: input.hostUserId,
      starts_at: input.startsAt,
      ends_at: endsAt,
      buffer_before_minutes: 0,
      buffer_after_minutes: 0,
      capacity: input.capacity ?? 1,
      booked: input.booked ?? 0,
      created_at: at(),
      updated_at: at(),
    })
    .execute();
  return sessionId;
}

export async function createBookingWorld(service: TestService, tenant: Tenant, options: BookingWorldOptions): Promise<BookingWorld> {
  const db = service.deps.db;
  const studyId = await createStudy(service, tenant, {
    studyType: 'INTERVIEWS',
    studyPlan: { name: 'Internal name', externalName: options.externalName ?? 'Shopping habits interview', ...(options.language ? { language: options.language } : {}) },
  });
  const host = options.host ?? (await makeHost(service, tenant, options.hostRole));
  const person = await createPerson(service, tenant, { firstName: options.person?.firstName ?? 'Ana', lastName: options.person?.lastName ?? 'Participant' });
  const [participant] = await addParticipants(service, tenant, studyId, [person.personId]);
  await db
    .insertInto('study_hosts')
    .values({
      workspace_id: tenant.workspaceId,
      study_id: studyId,
      user_id: host.userId,
      position: 0,
      time_zone: options.hostTimeZone ?? 'Europe/London',
      weekly_hours: JSON.stringify({ MON: [{ start: '09:00', end: '17:00' }] }),
      overrides: '[]',
      created_at: at(),
      updated_at: at(),
    })
    .execute();
  const sessionId = await makeSession(service, tenant, { studyId, hostUserId: host.userId, startsAt: options.startsAt, minutes: options.minutes, capacity: options.capacity, booked: 1 });
  const bookingId = newId(idPrefixes.booking);
  await db.transaction().execute(async (transaction) => {
    await transaction
      .insertInto('bookings')
      .values({
        workspace_id: tenant.workspaceId,
        booking_id: bookingId,
        study_id: studyId,
        participant_id: participant!.participantId,
        person_id: person.personId,
        session_id: sessionId,
        status: 'BOOKED',
        booked_by: 'PERSON',
        booked_by_user_id: null,
        person_time_zone: options.personTimeZone === undefined ? 'Europe/Berlin' : options.personTimeZone,
        sequence: 0,
        cancel_reason: null,
        canceled_by: null,
        canceled_by_user_id: null,
        canceled_at: null,
        created_at: at(),
        updated_at: at(),
      })
      .execute();
    if (options.enqueue ?? true) await enqueueNotify(service, transaction, tenant.workspaceId, bookingId, 0, 'REQUEST');
  });
  return {
    studyId,
    hostUserId: host.userId,
    hostEmail: host.email,
    hostToken: host.token,
    personId: person.personId,
    personEmail: person.email,
    participantId: participant!.participantId,
    sessionId,
    bookingId,
  };
}

async function enqueueNotify(service: TestService, transaction: TestService['deps']['db'], workspaceId: string, bookingId: string, sequence: number, method: 'REQUEST' | 'CANCEL') {
  await enqueueJob(transaction, service.deps.clock, { queue: 'booking.notify', workspaceId, payload: { bookingId, sequence, method }, singletonKey: `${bookingId}:${sequence}:${method}` });
}

/** Moves the booking to a new session of the same host at `startsAt`, raising its sequence, as the booking service does. */
export async function moveBooking(service: TestService, tenant: Tenant, world: BookingWorld, startsAt: string, minutes = 60): Promise<number> {
  const sessionId = await makeSession(service, tenant, { studyId: world.studyId, hostUserId: world.hostUserId, startsAt, minutes, booked: 1 });
  return service.deps.db.transaction().execute(async (transaction) => {
    const row = await transaction
      .updateTable('bookings')
      .set((eb) => ({ session_id: sessionId, sequence: eb('sequence', '+', 1), updated_at: at() }))
      .where('workspace_id', '=', tenant.workspaceId)
      .where('booking_id', '=', world.bookingId)
      .returning('sequence')
      .executeTakeFirstOrThrow();
    await transaction.updateTable('sessions').set({ booked: 0 }).where('workspace_id', '=', tenant.workspaceId).where('session_id', '=', world.sessionId).execute();
    await enqueueNotify(service, transaction, tenant.workspaceId, world.bookingId, row.sequence, 'REQUEST');
    world.sessionId = sessionId;
    return row.sequence;
  });
}

/** Cancels the booking, raising its sequence and giving its place back, as the booking service does. */
export async function cancelBooking(service: TestService, tenant: Tenant, world: BookingWorld): Promise<number> {
  return service.deps.db.transaction().execute(async (transaction) => {
    const row = await transaction
      .updateTable('bookings')
      .set((eb) => ({ status: 'CANCELED', sequence: eb('sequence', '+', 1), canceled_by: 'TEAM', canceled_at: at(), updated_at: at() }))
      .where('workspace_id', '=', tenant.workspaceId)
      .where('booking_id', '=', world.bookingId)
      .returning('sequence')
      .executeTakeFirstOrThrow();
    await transaction.updateTable('sessions').set((eb) => ({ booked: eb('booked', '-', 1) })).where('workspace_id', '=', tenant.workspaceId).where('session_id', '=', world.sessionId).execute();
    await enqueueNotify(service, transaction, tenant.workspaceId, world.bookingId, row.sequence, 'CANCEL');
    return row.sequence;
  });
}
