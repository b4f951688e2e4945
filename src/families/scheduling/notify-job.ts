import type { Kysely } from 'kysely';
import type { Clock } from '../../clock.js';
import type { BookingNotificationRecipient, DB } from '../../db/schema.js';
import type { JobHandler } from '../../jobs/queue.js';
import { chooseLocale, type MessageKey, translator } from '../../participant/i18n.js';
import type { Mailer, SendResult } from '../messages/mailer.js';
import { deleteLink, issueLink } from '../participant-links/service.js';
import { invitationIcs } from './icalendar.js';
import { BOOKING_NOTIFY_QUEUE, type BookingNotifyPayload } from './service.js';
import { findNotifyFacts, type NotificationKey, type NotifyFacts, recordSent, sentRecipients } from './notify-queries.js';

// The queue and its payload are the booking service's: it enqueues one job per change, in the change's transaction.
export { BOOKING_NOTIFY_QUEUE, type BookingNotifyPayload, bookingNotifyKey } from './service.js';

export interface BookingNotifyOptions {
  db: Kysely<DB>;
  clock: Clock;
  /** Undefined without SMTP: the job then ends saying so, and nothing is sent. */
  mailer: Mailer | undefined;
  publicUrl: string | undefined;
}

/** A temporary failure (SMTP 4xx, no connection) of either message: the attempt fails and the runner tries again later. */
class TryAgain extends Error {}

/** Why one recipient got nothing, or how their message went. */
type RecipientOutcome = { sent: true; linkId?: string } | { sent: false; reason: string; smtpCode?: number | null };

/** A zone the platform knows (a stored name from an older zone database may not be), else undefined. */
function knownZone(zone: string | null | undefined): string | undefined {
  if (!zone) return undefined;
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return zone;
  } catch {
    return undefined;
  }
}

/**
 * Why this job's invitation should not go, if it should not: a REQUEST only for the booking as it
 * still is (booked, and not moved again since: the later move's own job sends the newer time); a
 * CANCEL as long as the booking is still canceled, whatever else changed since.
 */
function staleness(facts: NotifyFacts, payload: BookingNotifyPayload): string | undefined {
  if (payload.method === 'REQUEST') {
    if (facts.status !== 'BOOKED') return 'CANCELED_SINCE';
    if (facts.sequence !== payload.sequence) return 'SUPERSEDED';
    return undefined;
  }
  return facts.status === 'CANCELED' ? undefined : 'NO_LONGER_CANCELED';
}

const isPayload = (payload: unknown): payload is BookingNotifyPayload => {
  const value = payload as Partial<BookingNotifyPayload> | null;
  return typeof value?.bookingId === 'string' && Number.isInteger(value.sequence) && (value.method === 'REQUEST' || value.method === 'CANCEL');
};

/**
 * A booking's calendar invitation, by email, to the person and to the host: one message each,
 * its text in the study's language with the time in the reader's zone, and the invitation
 * (icalendar.ts) as a `text/calendar; method=…` alternative and an .ics attachment. The person's
 * REQUEST carries a fresh SCHEDULING link to move or cancel; the host's copy carries none.
 *
 * Sent once per recipient, as the signed consent's copy is: booking_notifications is read before
 * each send and written after it, so a retry (one of the two refused for now) sends only the
 * missing one, and a link of a message that did not go is deleted. The one window for a second
 * copy is a process dying between SMTP's acceptance and that record.
 *
 * A person who opted out of contact about studies still gets these: they are not outreach but the
 * record of an appointment the person holds (or held), and a cancellation that never arrives
 * leaves a session in their calendar that nobody will attend. An address that bounced for good
 * (UNREACHABLE) or a deleted person gets nothing.
 */
export function bookingNotifyHandler(options: BookingNotifyOptions): JobHandler<BookingNotifyPayload> {
  return {
    queue: BOOKING_NOTIFY_QUEUE,
    async run(job) {
      const { db, clock } = options;
      const workspaceId = job.workspaceId;
      const payload = job.payload;
      if (!isPayload(payload)) return { sent: false, reason: 'BAD_PAYLOAD' };
      const facts = await findNotifyFacts(db, workspaceId, payload.bookingId);
      if (!facts) return { sent: false, reason: 'BOOKING_GONE' };
      const stale = staleness(facts, payload);
      if (stale) return { sent: false, reason: stale };
      if (!options.mailer || !options.publicUrl) return { sent: false, reason: 'SMTP_NOT_CONFIGURED' };
      const mailer = options.mailer;
      const publicUrl = options.publicUrl;

      const key: NotificationKey = { workspaceId, bookingId: payload.bookingId, sequence: payload.sequence, method: payload.method };
      const already = await sentRecipients(db, key);
      const plan = facts.plan ?? {};
      const i18n = translator(chooseLocale(plan.language, undefined));
      const study = plan.externalName ?? plan.name ?? '';
      const method = payload.method;
      // A CANCEL carries the booking's latest sequence: never lower than a REQUEST a client holds.
      const sequence = method === 'CANCEL' ? Math.max(facts.sequence, payload.sequence) : payload.sequence;
      const kind = method === 'CANCEL' ? 'canceled' : payload.sequence === 0 ? 'booked' : 'moved';
      const minutes = Math.round((Date.parse(facts.ends_at) - Date.parse(facts.starts_at)) / 60_000);
      const hostName = facts.host_fullname.trim() || facts.host_email;
      const personShown = facts.person_deleted_at === null;
      const personName = personShown ? [facts.person_first_name, facts.person_last_name].filter(Boolean).join(' ').trim() || null : null;
      const attendee = personShown && facts.person_email ? { name: personName, email: facts.person_email } : null;
      const hostZone = knownZone(facts.host_time_zone) ?? 'UTC';
      const personZone = knownZone(facts.person_time_zone) ?? hostZone;

      const send = async (recipient: BookingNotificationRecipient, to: string, subject: MessageKey, body: MessageKey, text: (link: string | null) => { values: Record<string, string | number>; description: string }, withLink: boolean): Promise<RecipientOutcome> => {
        const at = clock.now().toISOString();
        const link = withLink
          ? await db.transaction().execute((transaction) =>
              issueLink(transaction, { workspaceId, participantId: facts.participant_id, studyId: facts.study_id, personId: facts.person_id, purpose: 'SCHEDULING', publicUrl, at }),
            )
          : undefined;
        const { values, description } = text(link?.url ?? null);
        const ics = invitationIcs({
          method,
          bookingId: facts.booking_id,
          sequence,
          publicUrl,
          startsAt: facts.starts_at,
          endsAt: facts.ends_at,
          summary: study,
          description,
          organizer: { name: hostName, email: facts.host_email },
          attendee,
          stamp: clock.now(),
        });
        const result: SendResult = await mailer.send({
          to,
          subject: i18n.t(subject, values),
          text: i18n.t(body, values),
          html: null,
          messageId: `booking-${facts.booking_id}-${payload.sequence}-${method.toLowerCase()}-${recipient.toLowerCase()}`,
          unsubscribeUrl: null,
          icalEvent: { method, filename: method === 'CANCEL' ? 'cancellation.ics' : 'invitation.ics', content: ics },
        });
        if (result.outcome !== 'SENT') {
          // The link of an email that never went is of no use to anyone: it goes.
          if (link) await deleteLink(db, workspaceId, link.linkId);
          if (result.outcome === 'TEMPORARY') throw new TryAgain(`The ${recipient.toLowerCase()}'s invitation was not sent (SMTP ${result.smtpCode ?? 'no answer'})`);
          return { sent: false, reason: result.reason, smtpCode: result.smtpCode };
        }
        await recordSent(db, { ...key, recipient, sentAt: clock.now().toISOString(), smtpMessageId: result.smtpMessageId, linkId: link?.linkId ?? null });
        return link ? { sent: true, linkId: link.linkId } : { sent: true };
      };

      let retry: TryAgain | undefined;
      const attempt = async (run: () => Promise<RecipientOutcome>): Promise<RecipientOutcome> => {
        try {
          return await run();
        } catch (error) {
          if (!(error instanceof TryAgain)) throw error;
          retry = error;
          return { sent: false, reason: 'TEMPORARY' };
        }
      };

      let person: RecipientOutcome;
      if (already.has('PERSON')) person = { sent: false, reason: 'ALREADY_SENT' };
      else if (!personShown) person = { sent: false, reason: 'DELETED' };
      else if (!facts.person_email) person = { sent: false, reason: 'NO_EMAIL' };
      else if (facts.person_contact_status === 'UNREACHABLE') person = { sent: false, reason: 'UNREACHABLE' };
      else {
        const to = facts.person_email;
        const time = i18n.dateTime(facts.starts_at, personZone);
        person = await attempt(() =>
          send('PERSON', to, `booking.email.${kind}.subject`, `booking.email.${kind}.body`, (link) => ({
            values: { study, time, minutes, host: hostName, link: link ?? '', workspace: facts.workspace_name },
            description: link ? i18n.t('booking.ics.person.description', { study, host: hostName, link }) : i18n.t('booking.ics.canceled.description', { study }),
          }), method === 'REQUEST'),
        );
      }

      let host: RecipientOutcome;
      if (already.has('HOST')) host = { sent: false, reason: 'ALREADY_SENT' };
      else if (facts.host_status === 'DEACTIVATED') host = { sent: false, reason: 'HOST_DEACTIVATED' };
      else {
        const time = i18n.dateTime(facts.starts_at, hostZone);
        const personLabel = personName ?? attendee?.email ?? '—';
        host = await attempt(() =>
          send('HOST', facts.host_email, `booking.hostEmail.${kind}.subject`, `booking.hostEmail.${kind}.body`, () => ({
            values: { study, time, minutes, host: hostName, person: personLabel, workspace: facts.workspace_name },
            description: method === 'CANCEL' ? i18n.t('booking.ics.canceled.description', { study }) : i18n.t('booking.ics.host.description', { study, person: personLabel }),
          }), false),
        );
      }
      // What went is recorded; the retry sends only what did not.
      if (retry) throw retry;
      return { person, host };
    },
  };
}
