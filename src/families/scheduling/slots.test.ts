import fc from 'fast-check';
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import { type HostHours, type HostSession, hostHoursProblems, isTimeZone, type OpenSlot, openSlotAt, openSlots, type SlotQuery, type SlotRules, type TimeRange, type Weekday, weekdays } from './slots.js';

/**
 * The slot engine, pure. Every expected instant below is computed by hand from the zone's rules
 * (named in each test), not by the library the engine uses; wall times are read back through Intl.
 */

const rules: SlotRules = { durationMinutes: 60, bufferBeforeMinutes: 0, bufferAfterMinutes: 0, minimumNoticeMinutes: 0, horizonDays: 400, dailyCap: null, capacity: 1, slotIntervalMinutes: 60 };
const study = 'study-a';

function everyDay(...hours: TimeRange[]): Partial<Record<Weekday, TimeRange[]>> {
  return Object.fromEntries(weekdays.map((day) => [day, hours]));
}
function host(timeZone: string, weeklyHours: Partial<Record<Weekday, TimeRange[]>>, extra: Partial<HostHours> = {}): HostHours {
  return { hostUserId: 'host-1', timeZone, weeklyHours, overrides: [], ...extra };
}
function query(hosts: HostHours[], overrides: Partial<Omit<SlotQuery, 'rules'>> & { rules?: Partial<SlotRules> } = {}): SlotQuery {
  return { studyId: study, hosts, sessions: [], now: new Date('2026-01-01T00:00:00Z'), ...overrides, rules: { ...rules, ...overrides.rules } };
}
/** The slots starting within [from, to) (ISO instants). */
function slotsBetween(q: SlotQuery, from: string, to: string): OpenSlot[] {
  return openSlots({ ...q, from: new Date(from), to: new Date(to) });
}
function starts(slots: OpenSlot[]): string[] {
  return slots.map((slot) => slot.start.toISOString());
}
/** 'YYYY-MM-DD HH:MM' of an instant in a zone, through Intl (not Luxon, which the engine uses). */
function wallTime(instant: Date, timeZone: string): string {
  const parts = Object.fromEntries(new Intl.DateTimeFormat('en-US', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).formatToParts(instant).map((part) => [part.type, part.value]));
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}`;
}
function session(start: string, end: string, extra: Partial<HostSession> = {}): HostSession {
  return { hostUserId: 'host-1', studyId: study, start: new Date(start), end: new Date(end), booked: 1, capacity: 1, bufferBeforeMinutes: 0, bufferAfterMinutes: 0, ...extra };
}
const minutes = (slot: OpenSlot) => (slot.end.getTime() - slot.start.getTime()) / 60_000;

describe('daylight-saving changes', () => {
  // Each zone's changes in 2026, by hand:
  // America/New_York: 8 March 02:00 EST (-5) -> 03:00 EDT (-4); 1 November 02:00 EDT -> 01:00 EST.
  // Europe/Berlin: 29 March 02:00 CET (+1) -> 03:00 CEST (+2); 25 October 03:00 CEST -> 02:00 CET.
  // Australia/Sydney: 5 April 03:00 AEDT (+11) -> 02:00 AEST (+10); 4 October 02:00 AEST -> 03:00 AEDT.
  const cases = [
    { zone: 'America/New_York', direction: 'spring forward', night: ['2026-03-08T05:00:00.000Z', '2026-03-08T08:00:00.000Z'], realHours: 3, nineBefore: '2026-03-07T14:00:00.000Z', nineOn: '2026-03-08T13:00:00.000Z', nineAfter: '2026-03-09T13:00:00.000Z' },
    { zone: 'America/New_York', direction: 'fall back', night: ['2026-11-01T04:00:00.000Z', '2026-11-01T09:00:00.000Z'], realHours: 5, nineBefore: '2026-10-31T13:00:00.000Z', nineOn: '2026-11-01T14:00:00.000Z', nineAfter: '2026-11-02T14:00:00.000Z' },
    { zone: 'Europe/Berlin', direction: 'spring forward', night: ['2026-03-28T23:00:00.000Z', '2026-03-29T02:00:00.000Z'], realHours: 3, nineBefore: '2026-03-28T08:00:00.000Z', nineOn: '2026-03-29T07:00:00.000Z', nineAfter: '2026-03-30T07:00:00.000Z' },
    { zone: 'Europe/Berlin', direction: 'fall back', night: ['2026-10-24T22:00:00.000Z', '2026-10-25T03:00:00.000Z'], realHours: 5, nineBefore: '2026-10-24T07:00:00.000Z', nineOn: '2026-10-25T08:00:00.000Z', nineAfter: '2026-10-26T08:00:00.000Z' },
    { zone: 'Australia/Sydney', direction: 'fall back', night: ['2026-04-04T13:00:00.000Z', '2026-04-04T18:00:00.000Z'], realHours: 5, nineBefore: '2026-04-03T22:00:00.000Z', nineOn: '2026-04-04T23:00:00.000Z', nineAfter: '2026-04-05T23:00:00.000Z' },
    { zone: 'Australia/Sydney', direction: 'spring forward', night: ['2026-10-03T14:00:00.000Z', '2026-10-03T17:00:00.000Z'], realHours: 3, nineBefore: '2026-10-02T23:00:00.000Z', nineOn: '2026-10-03T22:00:00.000Z', nineAfter: '2026-10-04T22:00:00.000Z' },
  ];

  for (const c of cases) {
    it(`${c.zone}, ${c.direction}: a 00:00–04:00 window lasts ${c.realHours} real hours, each hourly slot 60 real minutes`, () => {
      const slots = slotsBetween(query([host(c.zone, everyDay({ start: '00:00', end: '04:00' }))]), c.night[0]!, c.night[1]!);
      expect(slots).toHaveLength(c.realHours);
      expect(slots[0]!.start.toISOString()).toBe(c.night[0]);
      expect(slots.at(-1)!.end.toISOString()).toBe(c.night[1]);
      for (const slot of slots) expect(minutes(slot)).toBe(60);
      // Nothing more that day: the window ended at 04:00 local (until 22:00 local).
      expect(slotsBetween(query([host(c.zone, everyDay({ start: '00:00', end: '04:00' }))]), c.night[0]!, new Date(Date.parse(c.night[1]!) + 18 * 3600_000).toISOString())).toHaveLength(c.realHours);
    });

    it(`${c.zone}, ${c.direction}: a 09:00–17:00 day before, on and after the change starts at 09:00 local`, () => {
      const q = query([host(c.zone, everyDay({ start: '09:00', end: '17:00' }))], { rules: { durationMinutes: 480 } });
      const slots = slotsBetween(q, c.nineBefore, new Date(Date.parse(c.nineAfter) + 1).toISOString());
      expect(starts(slots)).toEqual([c.nineBefore, c.nineOn, c.nineAfter]);
      for (const slot of slots) {
        expect(wallTime(slot.start, c.zone).slice(11)).toBe('09:00');
        expect(wallTime(slot.end, c.zone).slice(11)).toBe('17:00');
        expect(minutes(slot)).toBe(480);
      }
    });
  }

  it('New York, spring forward: a start in the missing hour moves to 03:00 EDT, the first instant that exists', () => {
    const slots = slotsBetween(query([host('America/New_York', everyDay({ start: '02:30', end: '05:00' }))], { rules: { durationMinutes: 30, slotIntervalMinutes: 30 } }), '2026-03-08T00:00:00Z', '2026-03-09T00:00:00Z');
    // 03:00 EDT = 07:00Z; 05:00 EDT = 09:00Z: four half hours, not five.
    expect(starts(slots)).toEqual(['2026-03-08T07:00:00.000Z', '2026-03-08T07:30:00.000Z', '2026-03-08T08:00:00.000Z', '2026-03-08T08:30:00.000Z']);
    // A range wholly in the gap has no instants at all.
    expect(slotsBetween(query([host('America/New_York', everyDay({ start: '02:00', end: '02:45' }))], { rules: { durationMinutes: 15, slotIntervalMinutes: 15 } }), '2026-03-08T00:00:00Z', '2026-03-09T00:00:00Z')).toEqual([]);
  });

  it('New York, fall back: a range inside the repeated hour runs from its earlier start to its later end', () => {
    // 01:00 EDT = 05:00Z (earlier), 01:45 EST = 06:45Z (later): 105 real minutes, seven quarter hours.
    const slots = slotsBetween(query([host('America/New_York', everyDay({ start: '01:00', end: '01:45' }))], { rules: { durationMinutes: 15, slotIntervalMinutes: 15 } }), '2026-11-01T00:00:00Z', '2026-11-02T00:00:00Z');
    expect(slots).toHaveLength(7);
    expect(slots[0]!.start.toISOString()).toBe('2026-11-01T05:00:00.000Z');
    expect(slots.at(-1)!.end.toISOString()).toBe('2026-11-01T06:45:00.000Z');
    // Both 01:00s are offered: the same wall time, an hour apart in real time.
    expect(slots.filter((slot) => wallTime(slot.start, 'America/New_York').endsWith('01:00')).map((slot) => slot.start.toISOString())).toEqual(['2026-11-01T05:00:00.000Z', '2026-11-01T06:00:00.000Z']);
  });

  it('candidates step in real time: a 90-minute slot across the spring change is 90 real minutes', () => {
    // Berlin 29 March: 01:00 CET = 00:00Z to 04:00 CEST = 02:00Z is two real hours.
    const slots = slotsBetween(query([host('Europe/Berlin', everyDay({ start: '01:00', end: '04:00' }))], { rules: { durationMinutes: 90, slotIntervalMinutes: 30 } }), '2026-03-29T00:00:00Z', '2026-03-29T12:00:00Z');
    expect(starts(slots)).toEqual(['2026-03-29T00:00:00.000Z', '2026-03-29T00:30:00.000Z']);
    expect(slots.map((slot) => `${wallTime(slot.start, 'Europe/Berlin').slice(11)}–${wallTime(slot.end, 'Europe/Berlin').slice(11)}`)).toEqual(['01:00–03:30', '01:30–04:00']);
  });

  it('America/Havana, whose midnight repeats (1 November 01:00 CDT -> 00:00 CST): two dates\' windows overlap, each start offered once', () => {
    // Saturday 22:00–24:00: 22:00 CDT (-4) = 02:00Z to the later 00:00, CST (-5) = 05:00Z. Sunday 00:00–02:00: the earlier
    // 00:00 = 04:00Z to 02:00 CST = 07:00Z. 04:00Z is a candidate of both windows.
    const q = query([host('America/Havana', { SATURDAY: [{ start: '22:00', end: '24:00' }], SUNDAY: [{ start: '00:00', end: '02:00' }] })], { rules: { dailyCap: 2 } });
    const slots = slotsBetween(q, '2026-10-31T12:00:00Z', '2026-11-01T12:00:00Z');
    expect(starts(slots)).toEqual(['02', '03', '04', '05', '06'].map((hour) => `2026-11-01T${hour}:00:00.000Z`));
    expect(slots.map((slot) => wallTime(slot.start, 'America/Havana').slice(5))).toEqual(['10-31 22:00', '10-31 23:00', '11-01 00:00', '11-01 00:00', '11-01 01:00']);
    // The daily cap counts by the local date of the start: two sessions on Saturday leave Sunday's three.
    const capped = slotsBetween({ ...q, sessions: [session('2026-11-01T02:00:00Z', '2026-11-01T03:00:00Z'), session('2026-11-01T03:00:00Z', '2026-11-01T04:00:00Z')] }, '2026-10-31T12:00:00Z', '2026-11-01T12:00:00Z');
    expect(starts(capped)).toEqual(['04', '05', '06'].map((hour) => `2026-11-01T${hour}:00:00.000Z`));
  });

  it("'24:00' ends a range at the next date's midnight, whatever that date's offset", () => {
    // New York, 7 March 22:00 EST = 8 March 03:00Z, to 8 March 00:00 EST = 05:00Z.
    const slots = slotsBetween(query([host('America/New_York', { SATURDAY: [{ start: '22:00', end: '24:00' }] })]), '2026-03-07T00:00:00Z', '2026-03-09T00:00:00Z');
    expect(starts(slots)).toEqual(['2026-03-08T03:00:00.000Z', '2026-03-08T04:00:00.000Z']);
  });
});

describe('the worked example of docs/architecture/scheduling-slots.md', () => {
  it('New York over the spring change, another study\'s session on the Sunday', () => {
    const q = query([host('America/New_York', everyDay({ start: '09:00', end: '12:00' }))], {
      rules: { bufferAfterMinutes: 15 },
      sessions: [session('2026-03-08T14:10:00Z', '2026-03-08T14:55:00Z', { studyId: 'study-b' })],
    });
    const slots = slotsBetween(q, '2026-03-07T00:00:00Z', '2026-03-08T23:00:00Z');
    expect(starts(slots)).toEqual(['2026-03-07T14:00:00.000Z', '2026-03-07T15:00:00.000Z', '2026-03-07T16:00:00.000Z', '2026-03-08T15:00:00.000Z']);
    expect(wallTime(slots[3]!.start, 'America/New_York')).toBe('2026-03-08 11:00');
    expect(wallTime(slots[3]!.start, 'Europe/Berlin')).toBe('2026-03-08 16:00');
  });
});

describe('a host and a person in different zones see the same instant', () => {
  it('a host in Asia/Kolkata (+05:30), a person in America/New_York', () => {
    const [slot] = slotsBetween(query([host('Asia/Kolkata', everyDay({ start: '09:00', end: '10:00' }))]), '2026-06-15T00:00:00Z', '2026-06-16T00:00:00Z');
    expect(slot!.start.toISOString()).toBe('2026-06-15T03:30:00.000Z');
    expect(slot!.hostTimeZone).toBe('Asia/Kolkata');
    expect(wallTime(slot!.start, 'Asia/Kolkata')).toBe('2026-06-15 09:00');
    expect(wallTime(slot!.start, 'America/New_York')).toBe('2026-06-14 23:30');
    expect(DateTime.fromJSDate(slot!.start, { zone: 'America/New_York' }).toFormat('yyyy-MM-dd HH:mm')).toBe('2026-06-14 23:30');
  });

  it('a host in Asia/Kathmandu (+05:45), persons in Asia/Kolkata and Europe/Berlin', () => {
    const [slot] = slotsBetween(query([host('Asia/Kathmandu', everyDay({ start: '09:00', end: '10:00' }))]), '2026-06-15T00:00:00Z', '2026-06-16T00:00:00Z');
    expect(slot!.start.toISOString()).toBe('2026-06-15T03:15:00.000Z');
    expect(wallTime(slot!.start, 'Asia/Kathmandu')).toBe('2026-06-15 09:00');
    expect(wallTime(slot!.start, 'Asia/Kolkata')).toBe('2026-06-15 08:45');
    expect(wallTime(slot!.start, 'Europe/Berlin')).toBe('2026-06-15 05:15');
    expect(DateTime.fromJSDate(slot!.end, { zone: 'Asia/Kolkata' }).toFormat('HH:mm')).toBe('09:45');
  });

  it('the host-local date decides the weekday: Monday hours in Sydney begin on Sunday in UTC', () => {
    const slots = slotsBetween(query([host('Australia/Sydney', { MONDAY: [{ start: '09:00', end: '10:00' }] })]), '2026-06-14T00:00:00Z', '2026-06-16T00:00:00Z');
    // Monday 15 June 09:00 AEST (+10) = Sunday 14 June 23:00Z.
    expect(starts(slots)).toEqual(['2026-06-14T23:00:00.000Z']);
  });
});

describe('hours and overrides', () => {
  const weekdaysOnly: Partial<Record<Weekday, TimeRange[]>> = { MONDAY: [{ start: '09:00', end: '17:00' }], TUESDAY: [{ start: '09:00', end: '17:00' }] };
  // Berlin in June is CEST (+2): 09:00 = 07:00Z. 2026-06-14 is a Sunday, 15 a Monday, 16 a Tuesday.
  const week = ['2026-06-14T00:00:00Z', '2026-06-17T00:00:00Z'] as const;

  it('weekly hours by the weekday, the interval stepping from the window start', () => {
    const slots = slotsBetween(query([host('Europe/Berlin', weekdaysOnly)], { rules: { durationMinutes: 45, slotIntervalMinutes: 60 } }), ...week);
    expect(slots).toHaveLength(16);
    expect(slots[0]!.start.toISOString()).toBe('2026-06-15T07:00:00.000Z');
    expect(slots[7]!.end.toISOString()).toBe('2026-06-15T14:45:00.000Z');
  });

  it('an override adds hours to a day without weekly hours', () => {
    const slots = slotsBetween(query([host('Europe/Berlin', weekdaysOnly, { overrides: [{ date: '2026-06-14', hours: [{ start: '10:00', end: '12:00' }] }] })]), ...week);
    expect(starts(slots).slice(0, 3)).toEqual(['2026-06-14T08:00:00.000Z', '2026-06-14T09:00:00.000Z', '2026-06-15T07:00:00.000Z']);
  });

  it('an override replaces the weekly hours, and [] is a day off', () => {
    const slots = slotsBetween(query([host('Europe/Berlin', weekdaysOnly, { overrides: [{ date: '2026-06-15', hours: [] }, { date: '2026-06-16', hours: [{ start: '13:00', end: '15:00' }] }] })]), ...week);
    expect(starts(slots)).toEqual(['2026-06-16T11:00:00.000Z', '2026-06-16T12:00:00.000Z']);
  });
});

describe('notice, horizon, from and to', () => {
  const hours = host('Europe/Berlin', everyDay({ start: '09:00', end: '17:00' }));

  it('minimum notice: nothing starts sooner than now + notice', () => {
    // Now 08:10 CEST (06:10Z); 110 minutes' notice = 10:00 CEST.
    const slots = openSlots(query([hours], { now: new Date('2026-06-15T06:10:00Z'), rules: { minimumNoticeMinutes: 110, horizonDays: 1 } }));
    expect(slots[0]!.start.toISOString()).toBe('2026-06-15T08:00:00.000Z');
    const later = openSlots(query([hours], { now: new Date('2026-06-15T06:10:00Z'), rules: { minimumNoticeMinutes: 111, horizonDays: 1 } }));
    expect(later[0]!.start.toISOString()).toBe('2026-06-15T09:00:00.000Z');
  });

  it('horizon: starts before now + horizonDays × 24 h, the end excluded', () => {
    const slots = openSlots(query([hours], { now: new Date('2026-06-15T07:00:00Z'), rules: { horizonDays: 2 } }));
    expect(slots[0]!.start.toISOString()).toBe('2026-06-15T07:00:00.000Z');
    expect(slots.at(-1)!.start.toISOString()).toBe('2026-06-16T14:00:00.000Z');
    expect(slots).toHaveLength(16);
    expect(openSlotAt(query([hours], { now: new Date('2026-06-15T07:00:00Z'), rules: { horizonDays: 2 } }), new Date('2026-06-17T07:00:00Z'))).toBeUndefined();
  });

  it('from and to narrow the starts, the end excluded', () => {
    const slots = openSlots(query([hours], { from: new Date('2026-06-15T08:30:00Z'), to: new Date('2026-06-15T11:00:00Z') }));
    expect(starts(slots)).toEqual(['2026-06-15T09:00:00.000Z', '2026-06-15T10:00:00.000Z']);
  });
});

describe('sessions: buffers, conflicts, capacity, the daily cap', () => {
  // Berlin, Monday 15 June 2026 (CEST, +2): 09:00–17:00 local = 07:00Z–15:00Z.
  const hours = host('Europe/Berlin', everyDay({ start: '09:00', end: '17:00' }));
  const monday = ['2026-06-15T00:00:00Z', '2026-06-16T00:00:00Z'] as const;
  const other = 'study-b';
  // Another study's session 11:00–12:00 local.
  const elevenToNoon = (extra: Partial<HostSession> = {}) => session('2026-06-15T09:00:00Z', '2026-06-15T10:00:00Z', { studyId: other, ...extra });

  it("this study's buffers keep its new sessions clear of another study's session", () => {
    const q = query([hours], { rules: { slotIntervalMinutes: 15, bufferBeforeMinutes: 15, bufferAfterMinutes: 15 }, sessions: [elevenToNoon()] });
    // 09:45 + 60 min + 15 after = 11:00: touches, allowed; 10:00 would overlap. 12:00 - 15 before overlaps; 12:15 is clear.
    expect(starts(slotsBetween(q, '2026-06-15T00:00:00Z', '2026-06-15T11:00:00Z'))).toEqual(['2026-06-15T07:00:00.000Z', '2026-06-15T07:15:00.000Z', '2026-06-15T07:30:00.000Z', '2026-06-15T07:45:00.000Z', '2026-06-15T10:15:00.000Z', '2026-06-15T10:30:00.000Z', '2026-06-15T10:45:00.000Z']);
  });

  it("the other session's buffers protect it too: the larger buffer facing each way wins", () => {
    // Its 30 before and 20 after, ours 0: the last start before it is 09:30 local, the first after 12:20.
    const theirs = slotsBetween(query([hours], { rules: { slotIntervalMinutes: 5 }, sessions: [elevenToNoon({ bufferBeforeMinutes: 30, bufferAfterMinutes: 20 })] }), ...monday);
    expect(starts(theirs).filter((start) => start < '2026-06-15T09:00')).toHaveLength(7);
    expect(starts(theirs)).toContain('2026-06-15T07:30:00.000Z');
    expect(starts(theirs)).not.toContain('2026-06-15T07:35:00.000Z');
    expect(starts(theirs).find((start) => start > '2026-06-15T09:00')).toBe('2026-06-15T10:20:00.000Z');
    // Ours 45 before and theirs 20 after: ours wins after it (12:45), theirs before it (09:30).
    const both = starts(slotsBetween(query([hours], { rules: { slotIntervalMinutes: 5, bufferBeforeMinutes: 45, bufferAfterMinutes: 10 }, sessions: [elevenToNoon({ bufferBeforeMinutes: 30, bufferAfterMinutes: 20 })] }), ...monday));
    expect(both.filter((start) => start < '2026-06-15T09:00').at(-1)).toBe('2026-06-15T07:30:00.000Z');
    expect(both.find((start) => start > '2026-06-15T09:00')).toBe('2026-06-15T10:45:00.000Z');
  });

  it("another study's session at the same start is a conflict, not this study's session", () => {
    const q = query([hours], { sessions: [elevenToNoon({ capacity: 10 })] });
    expect(starts(slotsBetween(q, ...monday))).not.toContain('2026-06-15T09:00:00.000Z');
    expect(openSlotAt(q, new Date('2026-06-15T09:00:00Z'))).toBeUndefined();
  });

  it("another host's sessions do not matter", () => {
    const q = query([hours], { sessions: [elevenToNoon({ hostUserId: 'host-2' })] });
    expect(slotsBetween(q, ...monday)).toHaveLength(8);
  });

  it('group sessions: an existing one offers its remaining places, a full one none and still blocks its neighbours', () => {
    const q = query([hours], { rules: { capacity: 5, slotIntervalMinutes: 30 }, sessions: [session('2026-06-15T09:00:00Z', '2026-06-15T10:30:00Z', { booked: 3, capacity: 4 })] });
    const slots = slotsBetween(q, ...monday);
    const existing = slots.find((slot) => slot.start.toISOString() === '2026-06-15T09:00:00.000Z');
    expect(existing).toEqual({ start: new Date('2026-06-15T09:00:00Z'), end: new Date('2026-06-15T10:30:00Z'), hostUserId: 'host-1', hostTimeZone: 'Europe/Berlin', remaining: 1, sessionExists: true });
    expect(slots.filter((slot) => !slot.sessionExists).every((slot) => slot.remaining === 5)).toBe(true);
    // Its 90 minutes block 08:30 to 10:00 (exclusive) for new ones.
    expect(starts(slots)).toEqual(['07:00', '07:30', '08:00', '09:00', '10:30', '11:00', '11:30', '12:00', '12:30', '13:00', '13:30', '14:00'].map((time) => `2026-06-15T${time}:00.000Z`));

    const full = slotsBetween({ ...q, sessions: [session('2026-06-15T09:00:00Z', '2026-06-15T10:30:00Z', { booked: 4, capacity: 4 })] }, ...monday);
    expect(starts(full)).not.toContain('2026-06-15T09:00:00.000Z');
    expect(starts(full)).not.toContain('2026-06-15T10:00:00.000Z');
    expect(starts(full)).toContain('2026-06-15T10:30:00.000Z');
  });

  it('daily cap: a date holding the cap offers only its sessions’ remaining places; other studies do not count', () => {
    const sessions = [
      session('2026-06-15T07:00:00Z', '2026-06-15T08:00:00Z', { booked: 1, capacity: 3 }),
      session('2026-06-15T12:00:00Z', '2026-06-15T13:00:00Z', { booked: 3, capacity: 3 }),
      session('2026-06-15T14:00:00Z', '2026-06-15T15:00:00Z', { studyId: other }),
    ];
    const q = query([hours], { rules: { dailyCap: 2, capacity: 3 }, sessions });
    const slots = slotsBetween(q, '2026-06-15T00:00:00Z', '2026-06-17T00:00:00Z');
    expect(slots.filter((slot) => slot.start < new Date('2026-06-16T00:00:00Z'))).toEqual([{ start: new Date('2026-06-15T07:00:00Z'), end: new Date('2026-06-15T08:00:00Z'), hostUserId: 'host-1', hostTimeZone: 'Europe/Berlin', remaining: 2, sessionExists: true }]);
    expect(slots.filter((slot) => slot.start >= new Date('2026-06-16T00:00:00Z'))).toHaveLength(8);
    // A cap of 3: one new session more that day, anywhere free (not 13:00Z–15:00Z: the sessions there).
    const three = slotsBetween({ ...q, rules: { ...q.rules, dailyCap: 3 } }, ...monday);
    expect(starts(three)).toEqual(['07:00', '08:00', '09:00', '10:00', '11:00', '13:00'].map((time) => `2026-06-15T${time}:00.000Z`));
  });

  it('daily cap: the date is the host-local date of the session start', () => {
    // Sydney in June is AEST (+10): Monday 15 June 09:00 = Sunday 14 June 23:00Z.
    const sydney = host('Australia/Sydney', everyDay({ start: '09:00', end: '12:00' }));
    const q = query([sydney], { rules: { dailyCap: 1 }, sessions: [session('2026-06-14T23:00:00Z', '2026-06-15T00:00:00Z', { booked: 1, capacity: 1 })] });
    const slots = slotsBetween(q, '2026-06-13T12:00:00Z', '2026-06-15T12:00:00Z');
    // Sunday local (Saturday 23:00Z–02:00Z) offers three; Monday local none (its one session is full).
    expect(starts(slots)).toEqual(['2026-06-13T23:00:00.000Z', '2026-06-14T00:00:00.000Z', '2026-06-14T01:00:00.000Z']);
  });
});

describe('several hosts and openSlotAt', () => {
  const berlin = everyDay({ start: '09:00', end: '12:00' });
  const hosts = [host('Europe/Berlin', berlin, { hostUserId: 'host-b' }), host('Europe/Berlin', berlin, { hostUserId: 'host-a' }), host('Asia/Kolkata', everyDay({ start: '12:30', end: '13:30' }), { hostUserId: 'host-c' })];
  // host-a is busy at 09:00 Berlin (07:00Z); host-c (Kolkata 12:30 = 07:00Z) and host-b are free.
  const q = query(hosts, { sessions: [session('2026-06-15T07:00:00Z', '2026-06-15T08:00:00Z', { hostUserId: 'host-a', studyId: 'study-b' })] });
  const monday = ['2026-06-15T00:00:00Z', '2026-06-16T00:00:00Z'] as const;

  it('sorted by start, then host', () => {
    expect(slotsBetween(q, ...monday).map((slot) => `${slot.start.toISOString().slice(11, 16)} ${slot.hostUserId}`)).toEqual(['07:00 host-b', '07:00 host-c', '08:00 host-a', '08:00 host-b', '09:00 host-a', '09:00 host-b']);
  });

  it('openSlotAt: of the host asked, else the first host with room', () => {
    expect(openSlotAt(q, new Date('2026-06-15T07:00:00Z'))?.hostUserId).toBe('host-b');
    expect(openSlotAt(q, new Date('2026-06-15T08:00:00Z'))?.hostUserId).toBe('host-a');
    expect(openSlotAt(q, new Date('2026-06-15T07:00:00Z'), 'host-a')).toBeUndefined();
    expect(openSlotAt(q, new Date('2026-06-15T07:00:00Z'), 'host-c')).toEqual({ start: new Date('2026-06-15T07:00:00Z'), end: new Date('2026-06-15T08:00:00Z'), hostUserId: 'host-c', hostTimeZone: 'Asia/Kolkata', remaining: 1, sessionExists: false });
    expect(openSlotAt(q, new Date('2026-06-15T07:30:00Z'))).toBeUndefined();
    expect(openSlotAt(q, new Date('2026-06-15T07:00:00Z'), 'nobody')).toBeUndefined();
  });

  it('refuses rules that cannot make slots', () => {
    expect(() => openSlots(query(hosts, { rules: { slotIntervalMinutes: 0 } }))).toThrow(/slotIntervalMinutes/);
    expect(() => openSlotAt(query(hosts, { rules: { durationMinutes: -5 } }), new Date())).toThrow(/durationMinutes/);
  });
});

describe('openSlotAt agrees with openSlots (property)', () => {
  const zones = ['America/New_York', 'Europe/Berlin', 'Australia/Sydney', 'Asia/Kolkata', 'Asia/Kathmandu', 'America/Havana', 'UTC'];
  // Instants near the 2026 changes of those zones (Havana: 8 March and 1 November, at 00:00/01:00).
  const nows = ['2026-03-06T10:00:00Z', '2026-03-27T20:00:00Z', '2026-04-03T05:00:00Z', '2026-10-02T12:00:00Z', '2026-10-23T22:00:00Z', '2026-10-30T03:00:00Z', '2026-06-15T07:10:00Z'];
  const time = fc.integer({ min: 0, max: 24 * 4 }).map((quarter) => quarter * 15);
  const range = fc.tuple(time, time).filter(([a, b]) => a !== b).map(([a, b]) => ({ start: clock(Math.min(a, b)), end: clock(Math.max(a, b)) }));
  // Ranges of a day, overlapping ones dropped (the API refuses them).
  const dayHours = fc.array(range, { maxLength: 3 }).map((ranges) => ranges.sort((a, b) => a.start.localeCompare(b.start)).filter((r, i, all) => i === 0 || all.slice(0, i).every((earlier) => earlier.end <= r.start)));
  const hostArb = (id: string) => fc.record({
    hostUserId: fc.constant(id),
    timeZone: fc.constantFrom(...zones),
    weeklyHours: fc.dictionary(fc.constantFrom(...weekdays), dayHours) as fc.Arbitrary<Partial<Record<Weekday, TimeRange[]>>>,
    overrides: fc.uniqueArray(fc.record({ date: fc.integer({ min: -2, max: 5 }), hours: dayHours }), { selector: (o) => o.date, maxLength: 2 }),
  });
  const arb = fc.record({
    hosts: fc.uniqueArray(fc.constantFrom('h1', 'h2', 'h3'), { minLength: 1, maxLength: 3 }).chain((ids) => fc.tuple(...ids.map(hostArb))),
    rules: fc.record({
      durationMinutes: fc.constantFrom(15, 30, 45, 60, 90), bufferBeforeMinutes: fc.constantFrom(0, 5, 15, 30), bufferAfterMinutes: fc.constantFrom(0, 10, 15),
      minimumNoticeMinutes: fc.constantFrom(0, 60, 600), horizonDays: fc.integer({ min: 1, max: 4 }), dailyCap: fc.option(fc.integer({ min: 0, max: 3 })),
      capacity: fc.integer({ min: 1, max: 3 }), slotIntervalMinutes: fc.constantFrom(10, 15, 20, 30, 45, 60),
    }),
    now: fc.constantFrom(...nows),
    // Sessions: some at this study's own candidate starts (picked from the slots without sessions), some anywhere.
    picks: fc.array(fc.record({ index: fc.nat(), host: fc.nat(2), studyA: fc.boolean(), minutes: fc.constantFrom(15, 30, 60, 90), booked: fc.integer({ min: 1, max: 3 }), capacity: fc.integer({ min: 1, max: 3 }), before: fc.constantFrom(0, 10), after: fc.constantFrom(0, 20), anywhere: fc.integer({ min: 0, max: 4 * 24 * 12 }) }), { maxLength: 12 }),
    probes: fc.array(fc.integer({ min: -24 * 12, max: 5 * 24 * 12 }), { maxLength: 40 }),
    window: fc.option(fc.tuple(fc.integer({ min: 0, max: 48 }), fc.integer({ min: 1, max: 96 }))),
  });

  it('every slot listed is found by openSlotAt, and a start not listed is not', () => {
    fc.assert(fc.property(arb, (input) => {
      const now = new Date(input.now);
      const hosts: HostHours[] = input.hosts.map((h) => ({ ...h, overrides: h.overrides.map((o) => ({ date: DateTime.fromJSDate(now, { zone: h.timeZone }).plus({ days: o.date }).toISODate()!, hours: o.hours })) }));
      const bare: SlotQuery = { studyId: study, hosts, rules: input.rules, sessions: [], now };
      const candidates = openSlots(bare);
      const sessions: HostSession[] = input.picks.map((pick, i) => {
        const anchor = candidates.length > 0 && i % 2 === 0 ? candidates[pick.index % candidates.length]! : undefined;
        const start = anchor ? anchor.start.getTime() : now.getTime() + pick.anywhere * 5 * 60_000;
        return {
          hostUserId: anchor?.hostUserId ?? hosts[pick.host % hosts.length]!.hostUserId, studyId: anchor || pick.studyA ? study : 'study-b',
          start: new Date(start), end: new Date(start + pick.minutes * 60_000), booked: Math.min(pick.booked, pick.capacity), capacity: pick.capacity, bufferBeforeMinutes: pick.before, bufferAfterMinutes: pick.after,
        };
      });
      const q: SlotQuery = { ...bare, sessions, ...(input.window ? { from: new Date(now.getTime() + input.window[0] * 3600_000), to: new Date(now.getTime() + (input.window[0] + input.window[1]) * 3600_000) } : {}) };
      const slots = openSlots(q);
      const listed = new Map(slots.map((slot) => [`${slot.start.getTime()} ${slot.hostUserId}`, slot]));
      expect(listed.size).toBe(slots.length);
      for (let i = 1; i < slots.length; i++) expect(bySlotOrder(slots[i - 1]!, slots[i]!)).toBeLessThan(0);
      for (const slot of slots) {
        expect(openSlotAt(q, slot.start, slot.hostUserId)).toEqual(slot);
        expect(openSlotAt(q, slot.start)).toEqual(slots.find((first) => first.start.getTime() === slot.start.getTime()));
      }
      const probes = [...input.probes.map((p) => now.getTime() + p * 5 * 60_000), ...slots.flatMap((slot) => [slot.start.getTime() - 5 * 60_000, slot.end.getTime()]), ...sessions.map((s) => s.start.getTime())];
      for (const probe of probes) {
        for (const h of hosts) expect(openSlotAt(q, new Date(probe), h.hostUserId)).toEqual(listed.get(`${probe} ${h.hostUserId}`));
        expect(openSlotAt(q, new Date(probe))).toEqual(slots.find((slot) => slot.start.getTime() === probe));
      }
    }), { numRuns: 300 });
  });
});

describe('speed', () => {
  it('5 hosts × 30 days × 15-minute steps with 500 sessions (logs the time; no assertion on it)', () => {
    const zones = ['America/New_York', 'Europe/Berlin', 'Australia/Sydney', 'Asia/Kolkata', 'Asia/Kathmandu'];
    const hosts = zones.map((timeZone, i) => host(timeZone, { ...everyDay({ start: '09:00', end: '12:30' }, { start: '13:30', end: '18:00' }), SUNDAY: [] }, { hostUserId: `host-${i}` }));
    const now = new Date('2026-03-01T00:00:00Z');
    const sessions = Array.from({ length: 500 }, (_, i) => {
      const start = now.getTime() + ((i * 7919) % (30 * 24 * 4)) * 15 * 60_000;
      return session(new Date(start).toISOString(), new Date(start + 45 * 60_000).toISOString(), { hostUserId: `host-${i % 5}`, studyId: i % 3 === 0 ? study : 'study-b', capacity: 2 });
    });
    const q = query(hosts, { now, sessions, rules: { durationMinutes: 45, slotIntervalMinutes: 15, horizonDays: 30, bufferAfterMinutes: 15, dailyCap: 6, minimumNoticeMinutes: 120 } });
    const timings: number[] = [];
    let count = 0;
    for (let run = 0; run < 20; run++) {
      const started = performance.now();
      count = openSlots(q).length;
      timings.push(performance.now() - started);
    }
    const middle = openSlots(q)[count >> 1]!;
    const started = performance.now();
    const found = openSlotAt(q, middle.start);
    const at = performance.now() - started;
    expect(found).toEqual(middle);
    expect(count).toBeGreaterThan(1000);
    const sorted = [...timings].sort((a, b) => a - b);
    console.log(`openSlots: ${count} slots; first run ${timings[0]!.toFixed(2)} ms, median ${sorted[10]!.toFixed(2)} ms; openSlotAt after it ${at.toFixed(3)} ms`);
  });
});

describe('hostHoursProblems and isTimeZone', () => {
  const valid = { timeZone: 'Europe/Berlin', weeklyHours: { MONDAY: [{ start: '09:00', end: '12:00' }, { start: '12:00', end: '24:00' }], TUESDAY: [] }, overrides: [{ date: '2026-12-24', hours: [] }, { date: '2028-02-29', hours: [{ start: '00:00', end: '01:00' }] }] };

  it('accepts good hours', () => {
    expect(hostHoursProblems(valid)).toEqual([]);
  });

  it('names the field of each problem', () => {
    const at = (host: Partial<typeof valid> & Record<string, unknown>) => hostHoursProblems({ ...valid, ...host } as typeof valid).map((problem) => problem.path.join('.'));
    expect(at({ timeZone: 'Mars/Olympus' })).toEqual(['timeZone']);
    expect(at({ timeZone: 'europe/berlin' })).toEqual(['timeZone']);
    expect(at({ timeZone: '+05:00' })).toEqual(['timeZone']);
    expect(at({ weeklyHours: { MONDAY: [{ start: '9:00', end: '12:00' }] } as never })).toEqual(['weeklyHours.MONDAY.0.start']);
    expect(at({ weeklyHours: { MONDAY: [{ start: '24:00', end: '24:00' }] } as never })).toEqual(['weeklyHours.MONDAY.0.start']);
    expect(at({ weeklyHours: { FRIDAY: [{ start: '09:00', end: '24:30' }, { start: '10:00', end: '12:60' }] } as never })).toEqual(['weeklyHours.FRIDAY.0.end', 'weeklyHours.FRIDAY.1.end']);
    expect(at({ weeklyHours: { MONDAY: [{ start: '12:00', end: '09:00' }, { start: '10:00', end: '10:00' }] } as never })).toEqual(['weeklyHours.MONDAY.0.end', 'weeklyHours.MONDAY.1.end']);
    expect(at({ weeklyHours: { MONDAY: [{ start: '13:00', end: '17:00' }, { start: '09:00', end: '13:30' }] } as never })).toEqual(['weeklyHours.MONDAY.1.start']);
    expect(at({ weeklyHours: { MONDAYS: [] } as never })).toEqual(['weeklyHours.MONDAYS']);
    expect(at({ weeklyHours: { MONDAY: 'all day' } as never })).toEqual(['weeklyHours.MONDAY']);
    expect(at({ overrides: [{ date: '2026-02-30', hours: [] }, { date: '2026-3-01', hours: [] }] })).toEqual(['overrides.0.date', 'overrides.1.date']);
    expect(at({ overrides: [{ date: '2026-12-24', hours: [] }, { date: '2026-12-31', hours: [] }, { date: '2026-12-24', hours: [{ start: '10:00', end: '11:00' }] }] })).toEqual(['overrides.2.date']);
    expect(at({ overrides: [{ date: '2026-12-24', hours: [{ start: '10:00', end: '25:00' }] }] })).toEqual(['overrides.0.hours.0.end']);
  });

  it('says what is allowed', () => {
    const messages = hostHoursProblems({ timeZone: 'Nowhere', weeklyHours: { MONDAY: [{ start: '13:00', end: '17:00' }, { start: '09:00', end: '13:30' }, { start: '18:00', end: '17:00' }] }, overrides: [{ date: '2026-12-24', hours: [] }, { date: '2026-12-24', hours: [] }] });
    expect(messages).toEqual([
      { path: ['timeZone'], message: expect.stringMatching(/IANA time zone.*Europe\/Berlin/) },
      { path: ['weeklyHours', 'MONDAY', '2', 'end'], message: expect.stringMatching(/after the start \(18:00\)/) },
      { path: ['weeklyHours', 'MONDAY', '1', 'start'], message: expect.stringMatching(/overlaps the range 13:00–17:00/) },
      { path: ['overrides', '1', 'date'], message: expect.stringMatching(/repeats the date 2026-12-24 of override 0/) },
    ]);
  });

  it('isTimeZone', () => {
    for (const name of ['America/New_York', 'Asia/Kolkata', 'Asia/Calcutta', 'Asia/Kathmandu', 'UTC', 'Etc/GMT+5']) expect(isTimeZone(name), name).toBe(true);
    for (const name of ['', 'Mars/Olympus', 'america/new_york', 'utc', '+05:30', 'Europe/Berlin ']) expect(isTimeZone(name), name).toBe(false);
  });
});

function clock(minutesOfDay: number): string {
  return `${String(Math.floor(minutesOfDay / 60)).padStart(2, '0')}:${String(minutesOfDay % 60).padStart(2, '0')}`;
}
function bySlotOrder(a: OpenSlot, b: OpenSlot): number {
  return a.start.getTime() - b.start.getTime() || (a.hostUserId < b.hostUserId ? -1 : a.hostUserId > b.hostUserId ? 1 : 0);
}
