import { recordServiceChanges } from '../audit/recorder.js';
import type { Kysely } from 'kysely';
import type { BookingNotificationMethod, BookingNotificationRecipient, DB } from '../../db/schema.js';

/**
 * The SQL of the booking.notify job (notify-job.ts). Apart from the family's queries.ts, which
 * the booking service writes, so that the two are written side by side without stepping on
 * each other; both are the scheduling family's.
 */

/**
 * Everything an invitation needs, in one query: the booking, its session, the study (its plan
 * holds the external name and the language), the workspace's name, the person (address, name,
 * whether they can be written to), the host (a workspace user) and the host's time zone in this
 * study. Undefined when the booking is gone.
 */
export async function findNotifyFacts(db: Kysely<DB>, workspaceId: string, bookingId: string) {
  return db
    .selectFrom('bookings as b')
    .innerJoin('sessions as s', (join) => join.onRef('s.workspace_id', '=', 'b.workspace_id').onRef('s.session_id', '=', 'b.session_id'))
    .innerJoin('studies as st', (join) => join.onRef('st.workspace_id', '=', 'b.workspace_id').onRef('st.study_id', '=', 'b.study_id'))
    .innerJoin('workspaces as w', 'w.workspace_id', 'b.workspace_id')
    .innerJoin('people as p', (join) => join.onRef('p.workspace_id', '=', 'b.workspace_id').onRef('p.person_id', '=', 'b.person_id'))
    .innerJoin('users as u', (join) => join.onRef('u.workspace_id', '=', 's.workspace_id').onRef('u.user_id', '=', 's.host_user_id'))
    .leftJoin('study_hosts as h', (join) =>
      join.onRef('h.workspace_id', '=', 's.workspace_id').onRef('h.study_id', '=', 's.study_id').onRef('h.user_id', '=', 's.host_user_id'),
    )
    .where('b.workspace_id', '=', workspaceId)
    .where('b.booking_id', '=', bookingId)
    .select([
      'b.booking_id',
      'b.study_id',
      'b.participant_id',
      'b.person_id',
      'b.status',
      'b.sequence',
      'b.person_time_zone',
      's.session_id',
      's.starts_at',
      's.ends_at',
      'st.plan',
      'w.name as workspace_name',
      'p.email as person_email',
      'p.first_name as person_first_name',
      'p.last_name as person_last_name',
      'p.deleted_at as person_deleted_at',
      'p.contact_status as person_contact_status',
      'u.email as host_email',
      'u.fullname as host_fullname',
      'u.status as host_status',
      'h.time_zone as host_time_zone',
    ])
    .executeTakeFirst();
}

export type NotifyFacts = NonNullable<Awaited<ReturnType<typeof findNotifyFacts>>>;

export interface NotificationKey {
  workspaceId: string;
  bookingId: string;
  sequence: number;
  method: BookingNotificationMethod;
}

/** The recipients this invitation (booking, sequence, method) has already gone to. */
export async function sentRecipients(db: Kysely<DB>, key: NotificationKey): Promise<Set<BookingNotificationRecipient>> {
  const rows = await db
    .selectFrom('booking_notifications')
    .select('recipient')
    .where('workspace_id', '=', key.workspaceId)
    .where('booking_id', '=', key.bookingId)
    .where('sequence', '=', key.sequence)
    .where('method', '=', key.method)
    .execute();
  return new Set(rows.map((row) => row.recipient));
}

/** Records one sent invitation; a second record of the same (a run that raced this one) changes nothing. */
export async function recordSent(
  db: Kysely<DB>,
  key: NotificationKey & { recipient: BookingNotificationRecipient; sentAt: string; smtpMessageId: string | null; linkId: string | null },
): Promise<void> {
  const written = await db
    .insertInto('booking_notifications')
    .values({
      workspace_id: key.workspaceId,
      booking_id: key.bookingId,
      sequence: key.sequence,
      method: key.method,
      recipient: key.recipient,
      sent_at: key.sentAt,
      smtp_message_id: key.smtpMessageId,
      link_id: key.linkId,
    })
    .onConflict((conflict) => conflict.columns(['workspace_id', 'booking_id', 'sequence', 'method', 'recipient']).doNothing())
    .returning('booking_id')
    .executeTakeFirst();
  // The trail: the service sent a booking's invitation (or cancellation) to the person or the host; once, as the record.
  if (written) {
    await recordServiceChanges(db, [
      { workspaceId: key.workspaceId, at: key.sentAt, service: 'booking.notify', operationId: `sendBooking${key.method === 'CANCEL' ? 'Cancellation' : 'Invitation'}To${key.recipient === 'PERSON' ? 'Person' : 'Host'}`, resourceType: 'booking', resourceId: key.bookingId },
    ]);
  }
}
