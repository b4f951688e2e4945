import { ICalAttendeeRole, ICalAttendeeStatus, ICalCalendar, ICalCalendarMethod, ICalEventStatus } from 'ical-generator';

/**
 * The iCalendar (RFC 5545) texts of the scheduling family, written by ical-generator: a booking's
 * invitation (RFC 5546 iTIP: METHOD:REQUEST on booking and on every move, METHOD:CANCEL on
 * cancellation), and a host's subscribable feed (METHOD:PUBLISH). Pure functions: the caller
 * hands in every fact and the time of writing (DTSTAMP).
 *
 * Times are UTC instants (`DTSTART:20261214T090000Z`), not TZID with a VTIMEZONE. A session is
 * one occurrence, never a recurrence, so its instant is all a calendar needs: every client shows
 * it in its own user's zone, and a zone's rules changing after the invitation was sent cannot
 * move it. A TZID would need a VTIMEZONE built from a zone database of its own (the platform's
 * Intl does not give the transitions), a second source of truth for no gain to a one-off event.
 */

const PRODUCT_ID = { company: 'recruit-ops', product: 'scheduling', language: 'EN' } as const;

/** The host part of UIDs: PUBLIC_URL's host name (`recruit.example.org`). */
export function uidDomain(publicUrl: string): string {
  try {
    return new URL(publicUrl).hostname || 'localhost';
  } catch {
    return 'localhost';
  }
}

/** A booking's event UID, the same for its whole life (moves keep it, raising SEQUENCE): `<bookingId>@<host of PUBLIC_URL>`. */
export function bookingUid(bookingId: string, publicUrl: string): string {
  return `${bookingId}@${uidDomain(publicUrl)}`;
}

/** A session's UID in a host's feed: `<sessionId>@<host of PUBLIC_URL>`. */
export function sessionUid(sessionId: string, publicUrl: string): string {
  return `${sessionId}@${uidDomain(publicUrl)}`;
}

export type InvitationMethod = 'REQUEST' | 'CANCEL';

export interface Invitation {
  method: InvitationMethod;
  bookingId: string;
  /** The booking's sequence: 0 when booked, raised by every move and by the cancellation. */
  sequence: number;
  /** PUBLIC_URL: the UID's host. */
  publicUrl: string;
  startsAt: Date | string;
  endsAt: Date | string;
  /** The study's external name. */
  summary: string;
  /** The copy's text: the person's carries the link to move or cancel; the host's none. */
  description: string;
  /** The session's host. */
  organizer: { name: string; email: string };
  /** The person booked; null when the service has no address of theirs (the event then has no ATTENDEE). */
  attendee: { name: string | null; email: string } | null;
  /** When this text is written (DTSTAMP). */
  stamp: Date;
}

const instant = (at: Date | string) => (typeof at === 'string' ? new Date(at) : at);

/**
 * The invitation of one booking, one VEVENT in a VCALENDAR whose METHOD is the iTIP method. The
 * person and the host get the same event (same UID, SEQUENCE, times, ORGANIZER and ATTENDEE);
 * only the DESCRIPTION differs.
 */
export function invitationIcs(invitation: Invitation): string {
  const calendar = new ICalCalendar({
    prodId: PRODUCT_ID,
    method: invitation.method === 'CANCEL' ? ICalCalendarMethod.CANCEL : ICalCalendarMethod.REQUEST,
  });
  calendar.createEvent({
    id: bookingUid(invitation.bookingId, invitation.publicUrl),
    sequence: invitation.sequence,
    stamp: invitation.stamp,
    start: instant(invitation.startsAt),
    end: instant(invitation.endsAt),
    summary: invitation.summary,
    description: invitation.description,
    status: invitation.method === 'CANCEL' ? ICalEventStatus.CANCELLED : ICalEventStatus.CONFIRMED,
    organizer: { name: invitation.organizer.name, email: invitation.organizer.email },
    attendees: invitation.attendee
      ? [
          {
            email: invitation.attendee.email,
            ...(invitation.attendee.name ? { name: invitation.attendee.name } : {}),
            role: ICalAttendeeRole.REQ,
            status: ICalAttendeeStatus.NEEDSACTION,
            // The service reads no replies: the person moves or cancels through their link.
            rsvp: false,
          },
        ]
      : [],
  });
  return calendar.toString();
}

/**
 * A booking as a file the person downloads ("Add to calendar" on their page): METHOD:PUBLISH, with
 * the invitation's UID and SEQUENCE, so a calendar that holds the emailed invitation updates that
 * event instead of adding a second one. CANCELLED once the booking is.
 */
export function bookingCalendarFile(input: { bookingId: string; sequence: number; publicUrl: string; startsAt: Date | string; endsAt: Date | string; summary: string; canceled: boolean; stamp: Date }): string {
  const calendar = new ICalCalendar({ prodId: PRODUCT_ID, method: ICalCalendarMethod.PUBLISH });
  calendar.createEvent({
    id: bookingUid(input.bookingId, input.publicUrl),
    sequence: input.sequence,
    stamp: input.stamp,
    start: instant(input.startsAt),
    end: instant(input.endsAt),
    summary: input.summary,
    status: input.canceled ? ICalEventStatus.CANCELLED : ICalEventStatus.CONFIRMED,
  });
  return calendar.toString();
}

export interface FeedSession {
  sessionId: string;
  startsAt: string;
  endsAt: string;
  summary: string;
  description: string;
  updatedAt: string;
}

/**
 * A host's calendar (METHOD:PUBLISH), for a calendar application to subscribe to. It holds what
 * the caller gives: counts of places, never a participant's name or address (the URL is a bearer
 * secret that a calendar application keeps and may share).
 */
export function feedIcs(feed: { name: string; description: string; publicUrl: string; stamp: Date; sessions: FeedSession[] }): string {
  const calendar = new ICalCalendar({
    prodId: PRODUCT_ID,
    method: ICalCalendarMethod.PUBLISH,
    name: feed.name,
    description: feed.description,
    // How often a subscriber should fetch again (REFRESH-INTERVAL and X-PUBLISHED-TTL).
    ttl: 15 * 60,
  });
  for (const session of feed.sessions) {
    calendar.createEvent({
      id: sessionUid(session.sessionId, feed.publicUrl),
      stamp: feed.stamp,
      lastModified: new Date(session.updatedAt),
      start: new Date(session.startsAt),
      end: new Date(session.endsAt),
      summary: session.summary,
      description: session.description,
      status: ICalEventStatus.CONFIRMED,
    });
  }
  return calendar.toString();
}
