import ICAL from 'ical.js';
import { describe, expect, it } from 'vitest';
import { bookingUid, feedIcs, type Invitation, invitationIcs } from './icalendar.js';

/**
 * The invitations and feeds as a calendar reads them: parsed back with ical.js (Mozilla's
 * iCalendar parser, the one Thunderbird uses), not compared as strings.
 */
const publicUrl = 'https://recruit.example.test/';
const base: Invitation = {
  method: 'REQUEST',
  bookingId: 'bkg_01JD0000000000000000000000',
  sequence: 0,
  publicUrl,
  startsAt: '2026-12-14T09:00:00.000Z',
  endsAt: '2026-12-14T10:00:00.000Z',
  summary: 'Shopping habits; a talk, with you',
  description: 'Your session.\n\nTo move or cancel it: https://recruit.example.test/p/abc',
  organizer: { name: 'Hana Host', email: 'hana@example.test' },
  attendee: { name: 'Ana Participant', email: 'ana@example.test' },
  stamp: new Date('2026-12-08T12:00:00.000Z'),
};

function parse(text: string) {
  const calendar = new ICAL.Component(ICAL.parse(text));
  const vevents = calendar.getAllSubcomponents('vevent');
  expect(vevents).toHaveLength(1);
  const vevent = vevents[0]!;
  return { calendar, vevent, event: new ICAL.Event(vevent) };
}

describe('a booking invitation (RFC 5545 / 5546)', () => {
  it('is a METHOD:REQUEST with the stable UID, the booking sequence, UTC times, the host as ORGANIZER and the person as ATTENDEE', () => {
    const text = invitationIcs(base);
    expect(text).toMatch(/\r\n/);
    const { calendar, vevent, event } = parse(text);
    expect(calendar.getFirstPropertyValue('version')).toBe('2.0');
    expect(calendar.getFirstPropertyValue('method')).toBe('REQUEST');
    expect(event.uid).toBe('bkg_01JD0000000000000000000000@recruit.example.test');
    expect(bookingUid(base.bookingId, 'https://recruit.example.test:8443/x')).toBe(event.uid);
    expect(event.sequence).toBe(0);
    expect(event.startDate.toJSDate().toISOString()).toBe(base.startsAt);
    expect(event.endDate.toJSDate().toISOString()).toBe(base.endsAt);
    expect(event.startDate.zone?.tzid).toBe('UTC');
    expect(event.summary).toBe(base.summary);
    expect(event.description).toBe(base.description);
    expect(vevent.getFirstPropertyValue('status')).toBe('CONFIRMED');
    const organizer = vevent.getFirstProperty('organizer')!;
    expect(String(organizer.getFirstValue()).toLowerCase()).toBe('mailto:hana@example.test');
    expect(organizer.getParameter('cn')).toBe('Hana Host');
    const attendees = vevent.getAllProperties('attendee');
    expect(attendees).toHaveLength(1);
    expect(String(attendees[0]!.getFirstValue()).toLowerCase()).toBe('mailto:ana@example.test');
    expect(attendees[0]!.getParameter('partstat')).toBe('NEEDS-ACTION');
    expect(attendees[0]!.getParameter('rsvp')).toBe('FALSE');
    expect(attendees[0]!.getParameter('role')).toBe('REQ-PARTICIPANT');
    expect(attendees[0]!.getParameter('cn')).toBe('Ana Participant');
    expect(vevent.getFirstPropertyValue('dtstamp')!.toString()).toBe('2026-12-08T12:00:00Z');
  });

  it('keeps the UID across a move and carries the raised SEQUENCE and the new time', () => {
    const first = parse(invitationIcs(base)).event;
    const moved = parse(invitationIcs({ ...base, sequence: 2, startsAt: '2026-12-15T13:30:00.000Z', endsAt: '2026-12-15T14:30:00.000Z' })).event;
    expect(moved.uid).toBe(first.uid);
    expect(moved.sequence).toBe(2);
    expect(moved.startDate.toJSDate().toISOString()).toBe('2026-12-15T13:30:00.000Z');
  });

  it('is a METHOD:CANCEL with STATUS:CANCELLED for the same UID', () => {
    const { calendar, vevent, event } = parse(invitationIcs({ ...base, method: 'CANCEL', sequence: 3 }));
    expect(calendar.getFirstPropertyValue('method')).toBe('CANCEL');
    expect(vevent.getFirstPropertyValue('status')).toBe('CANCELLED');
    expect(event.uid).toBe('bkg_01JD0000000000000000000000@recruit.example.test');
    expect(event.sequence).toBe(3);
  });

  it.each([
    // The night Berlin leaves summer time (03:00 CEST → 02:00 CET), and Kathmandu's +05:45.
    ['Europe/Berlin', '2026-10-25T00:30:00.000Z', '02:30'],
    ['Europe/Berlin', '2026-10-25T01:30:00.000Z', '02:30'],
    ['Asia/Kathmandu', '2026-12-14T09:00:00.000Z', '14:45'],
  ])('gives the session instant, whatever the reader\'s zone (%s at %s reads %s)', (zone, startsAt, wall) => {
    const { event } = parse(invitationIcs({ ...base, startsAt, endsAt: new Date(Date.parse(startsAt) + 3_600_000).toISOString() }));
    const start = event.startDate.toJSDate();
    expect(start.toISOString()).toBe(startsAt);
    expect(new Intl.DateTimeFormat('en-GB', { timeZone: zone, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(start)).toBe(wall);
  });

  it('has no ATTENDEE when the person has no address', () => {
    const { vevent } = parse(invitationIcs({ ...base, attendee: null }));
    expect(vevent.getAllProperties('attendee')).toEqual([]);
  });
});

describe("a host's feed", () => {
  it('is a METHOD:PUBLISH calendar with a name, one event per session with its UID', () => {
    const text = feedIcs({
      name: 'Sessions of Hana Host',
      description: 'Places booked only.',
      publicUrl,
      stamp: new Date('2026-12-08T12:00:00.000Z'),
      sessions: [
        { sessionId: 'ses_1', startsAt: '2026-12-14T09:00:00.000Z', endsAt: '2026-12-14T10:00:00.000Z', summary: 'Study A (1 of 2 places booked)', description: 'x', updatedAt: '2026-12-01T00:00:00.000Z' },
        { sessionId: 'ses_2', startsAt: '2026-12-15T09:00:00.000Z', endsAt: '2026-12-15T10:00:00.000Z', summary: 'Study B (1 of 1 place booked)', description: 'y', updatedAt: '2026-12-01T00:00:00.000Z' },
      ],
    });
    const calendar = new ICAL.Component(ICAL.parse(text));
    expect(calendar.getFirstPropertyValue('method')).toBe('PUBLISH');
    expect(calendar.getFirstPropertyValue('x-wr-calname')).toBe('Sessions of Hana Host');
    const events = calendar.getAllSubcomponents('vevent').map((vevent) => new ICAL.Event(vevent));
    expect(events.map((event) => event.uid)).toEqual(['ses_1@recruit.example.test', 'ses_2@recruit.example.test']);
    expect(events.map((event) => event.summary)).toEqual(['Study A (1 of 2 places booked)', 'Study B (1 of 1 place booked)']);
  });
});
