/**
 * The slot engine of session scheduling (issue 34): which session starts a person may book, computed
 * from each host's working hours in the host's own IANA time zone, and shown to the person as
 * instants (which the page formats in the person's zone). Pure: no I/O, no database; the booking
 * transaction hands in the hosts, the rules and the sessions it has read, and calls `openSlotAt`
 * again under its lock, so what a person saw and what is booked follow the same rules.
 *
 * The rules (docs/architecture/scheduling-slots.md has a worked example):
 *
 * - Windows. Each host-local date, from the one holding max(now, from) to the one the horizon ends
 *   in, has the date's override hours if it has an override, else the weekly hours of its weekday.
 *   Each 'HH:MM' range becomes an interval of instants in the host's zone (offsets through Luxon's
 *   IANA zone, never arithmetic on wall-clock strings). Where the wall clock is ambiguous or missing
 *   the choice is the one that keeps the host's whole stated time available:
 *   - a wall time in a spring-forward gap moves forward to the first instant that exists (02:30 on
 *     a New York spring night is 03:00 EDT), because no earlier instant shows that time;
 *   - an ambiguous wall time (the repeated hour of a fall-back night) is the EARLIER instant for a
 *     range's start and the LATER for its end, so the window covers every instant whose wall time
 *     lies in the range: 00:00–04:00 lasts 5 real hours on a fall-back night and 3 on a
 *     spring-forward night;
 *   - '24:00' is the next date's 00:00 (the range's end, so its later instant).
 *   A day's ranges are separate windows (write 09:00–17:00 as one range for slots to span noon).
 * - Candidates step by slotIntervalMinutes in real time (instants, not wall clock) from each
 *   window's start while start + duration <= window end: a slot is always its real duration long.
 * - A candidate is kept only if start >= now + minimumNotice, start < now + horizonDays × 24 h
 *   (real time), start >= from and start < to (when given).
 * - A session of this study, this host, at this start IS the candidate (sessionExists): open while
 *   booked < its capacity, remaining = its capacity - booked. It is not checked for conflicts or
 *   the daily cap again: it already holds the host's time and counts for its date, and another
 *   person joining it takes no more of the host's time. Otherwise remaining = rules.capacity.
 * - Conflicts, against every other session of the host (this study's or another's): a new
 *   candidate [s, e) is refused when [s - rules.bufferBefore, e + rules.bufferAfter) overlaps the
 *   session's [start, end), or the session's [start - its bufferBefore, end + its bufferAfter)
 *   overlaps [s, e). Each side's buffers protect its own session (a study's set-up time is its own
 *   rule), so the gap kept between two sessions is the larger of the two buffers facing each other.
 * - dailyCap: at most dailyCap sessions of this study per host per host-local date (the date of
 *   the session's start instant in the host's zone). A date that already holds dailyCap of them
 *   offers only their remaining places, no new session.
 * - Order: by start, then hostUserId. `openSlotAt` with no host takes the first host, in that
 *   order, with a slot at that start, so it agrees with the first listed slot at that instant.
 *
 * Assumptions: a zone's offset changes at most once in any 24 hours (true of every zone's rules
 * today; the engine samples each zone's offset at UTC midnights and treats a day whose
 * neighbouring samples agree as having one offset). A host whose time zone is unknown offers no
 * slots (the API refuses such hours: `hostHoursProblems`). Rules that cannot produce slots (a
 * duration or interval that is not positive) are a programming error and throw.
 */
import { IANAZone } from 'luxon';

export const weekdays = ['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY', 'SUNDAY'] as const;
export type Weekday = (typeof weekdays)[number];
/** 'HH:MM' 24-hour local wall time; end may be '24:00'; start < end. */
export interface TimeRange { start: string; end: string }
/** 'YYYY-MM-DD' in the host's zone; hours replace that date's weekly hours; [] = day off. */
export interface DateOverride { date: string; hours: TimeRange[] }
export interface HostHours { hostUserId: string; timeZone: string; weeklyHours: Partial<Record<Weekday, TimeRange[]>>; overrides: DateOverride[] }
export interface SlotRules {
  durationMinutes: number; bufferBeforeMinutes: number; bufferAfterMinutes: number;
  minimumNoticeMinutes: number; horizonDays: number; dailyCap: number | null; capacity: number;
  /** Step between candidate starts within a window. */
  slotIntervalMinutes: number;
}
/** A session that holds at least one live booking, of any study, of one of the hosts. */
export interface HostSession { hostUserId: string; studyId: string; start: Date; end: Date; booked: number; capacity: number; bufferBeforeMinutes: number; bufferAfterMinutes: number }
export interface OpenSlot { start: Date; end: Date; hostUserId: string; hostTimeZone: string; remaining: number; sessionExists: boolean }
export interface SlotQuery { studyId: string; hosts: HostHours[]; rules: SlotRules; sessions: HostSession[]; now: Date; from?: Date; to?: Date }

const MINUTE = 60_000;
const DAY = 86_400_000;

/** Every open slot of the query's hosts, sorted by start, then hostUserId. */
export function openSlots(query: SlotQuery): OpenSlot[] {
  const q = prepare(query);
  const slots: OpenSlot[] = [];
  if (q.lo >= q.hi) return slots;
  for (const host of q.hosts) {
    const plan = planOf(host);
    if (!plan) continue;
    const sessions = indexSessions(query, plan, q);
    // The date before lo's: a window of that date can run past its midnight (a '24:00' end on a
    // night whose midnight repeats); candidates before lo are dropped below.
    const first = localDay(plan, q.lo) - 1;
    const last = localDay(plan, q.hi - 1);
    // Windows that may still hold candidates already offered (only when windows overlap).
    let recent: Interval[] = [];
    for (let day = first; day <= last; day++) {
      const nextDayStart = dayStart(plan, day + 1);
      for (const window of windowsOf(plan, day)) {
        if (recent.length > 0) recent = recent.filter((earlier) => earlier.end > window.start);
        for (let s = window.start; s + q.durationMs <= window.end; s += q.stepMs) {
          if (s < q.lo || s >= q.hi) continue;
          if (recent.length > 0 && recent.some((earlier) => isCandidateOf(earlier, s, q))) continue;
          const slot = evaluate(q, plan, sessions, s, s >= nextDayStart ? day + 1 : day);
          if (slot) slots.push(slot);
        }
        recent.push(window);
      }
    }
  }
  return slots.sort(bySlotOrder);
}

/**
 * The open slot starting exactly at `start`: of `hostUserId` when given, else of the first host
 * (by hostUserId) with one. Computes only the windows of the host-local date of `start` (and of
 * the date before, whose window may run past midnight) and scans the sessions once: it runs
 * inside the booking transaction.
 */
export function openSlotAt(query: SlotQuery, start: Date, hostUserId?: string): OpenSlot | undefined {
  const q = prepare(query);
  const s = start.getTime();
  if (!(s >= q.lo && s < q.hi)) return undefined;
  for (const host of q.hosts) {
    if (hostUserId !== undefined && host.hostUserId !== hostUserId) continue;
    const plan = planOf(host);
    if (!plan) continue;
    const day = localDay(plan, s);
    for (const windowDay of [day - 1, day]) {
      const window = windowsOf(plan, windowDay).find((candidate) => isCandidateOf(candidate, s, q));
      if (!window) continue;
      const slotDay = s >= dayStart(plan, windowDay + 1) ? windowDay + 1 : windowDay;
      const slot = evaluate(q, plan, scanSessions(query, plan, q), s, slotDay);
      if (slot) return slot;
      break;
    }
  }
  return undefined;
}

/** Whether `name` is an IANA time zone the platform knows, spelt as IANA spells it. */
export function isTimeZone(name: string): boolean {
  // IANA names start with a letter; newer engines also accept offsets such as '+05:00', which
  // have no daylight-saving rules and are not zones.
  if (typeof name !== 'string' || !/^[A-Za-z]/.test(name) || !IANAZone.isValidZone(name)) return false;
  // Intl accepts any letter case and answers with its own spelling: a name that differs from it
  // only in case is misspelt ('america/new_york'). Aliases ('Asia/Kolkata' resolving to
  // 'Asia/Calcutta' on some ICU versions) differ by more and are accepted as written.
  const resolved = new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  return resolved === name || resolved.toLowerCase() !== name.toLowerCase();
}

/** What is wrong with a host's hours, each with the path of the field (for the API's 400 answer). */
export function hostHoursProblems(host: Pick<HostHours, 'timeZone' | 'weeklyHours' | 'overrides'>): { path: string[]; message: string }[] {
  const problems: { path: string[]; message: string }[] = [];
  if (!isTimeZone(host.timeZone)) {
    problems.push({ path: ['timeZone'], message: 'must be an IANA time zone name, spelt as IANA spells it, such as Europe/Berlin or America/New_York' });
  }
  const weekly: Record<string, unknown> = isRecord(host.weeklyHours) ? host.weeklyHours : {};
  if (!isRecord(host.weeklyHours)) problems.push({ path: ['weeklyHours'], message: `must be an object whose keys are weekdays (${weekdays.join(', ')})` });
  for (const [key, ranges] of Object.entries(weekly)) {
    if (!(weekdays as readonly string[]).includes(key)) {
      problems.push({ path: ['weeklyHours', key], message: `is not a weekday: the keys are ${weekdays.join(', ')}` });
      continue;
    }
    rangeProblems(ranges, ['weeklyHours', key], problems);
  }
  const overrides: unknown[] = Array.isArray(host.overrides) ? host.overrides : [];
  if (!Array.isArray(host.overrides)) problems.push({ path: ['overrides'], message: 'must be a list of { date, hours }' });
  const firstIndexOfDate = new Map<string, number>();
  overrides.forEach((override, index) => {
    const path = ['overrides', String(index)];
    if (!isRecord(override)) {
      problems.push({ path, message: 'must be { date, hours }' });
      return;
    }
    const date = override.date;
    if (typeof date !== 'string' || parseDay(date) === undefined) {
      problems.push({ path: [...path, 'date'], message: 'must be a calendar date YYYY-MM-DD (in the host\'s time zone)' });
    } else if (firstIndexOfDate.has(date)) {
      problems.push({ path: [...path, 'date'], message: `repeats the date ${date} of override ${firstIndexOfDate.get(date)}: one override per date` });
    } else {
      firstIndexOfDate.set(date, index);
    }
    rangeProblems(override.hours, [...path, 'hours'], problems);
  });
  return problems;
}

// --- Candidates -------------------------------------------------------------------------------

interface Prepared {
  studyId: string;
  rules: SlotRules;
  hosts: HostHours[];
  /** Candidates start in [lo, hi). */
  lo: number;
  hi: number;
  durationMs: number;
  stepMs: number;
  beforeMs: number;
  afterMs: number;
}

function prepare(query: SlotQuery): Prepared {
  const { rules } = query;
  for (const key of ['durationMinutes', 'slotIntervalMinutes'] as const) {
    if (!(Number.isFinite(rules[key]) && rules[key] > 0)) throw new RangeError(`slot rules: ${key} must be a positive number, not ${rules[key]}`);
  }
  for (const key of ['bufferBeforeMinutes', 'bufferAfterMinutes', 'minimumNoticeMinutes', 'horizonDays', 'capacity'] as const) {
    if (!(Number.isFinite(rules[key]) && rules[key] >= 0)) throw new RangeError(`slot rules: ${key} must be a number >= 0, not ${rules[key]}`);
  }
  const now = query.now.getTime();
  let lo = now + rules.minimumNoticeMinutes * MINUTE;
  let hi = now + rules.horizonDays * DAY;
  if (query.from) lo = Math.max(lo, query.from.getTime());
  if (query.to) hi = Math.min(hi, query.to.getTime());
  return {
    studyId: query.studyId,
    rules,
    // In hostUserId order: openSlotAt's "first host with room" is then openSlots' first listed.
    hosts: [...query.hosts].sort((a, b) => compareStrings(a.hostUserId, b.hostUserId)),
    lo,
    hi,
    durationMs: rules.durationMinutes * MINUTE,
    stepMs: rules.slotIntervalMinutes * MINUTE,
    beforeMs: rules.bufferBeforeMinutes * MINUTE,
    afterMs: rules.bufferAfterMinutes * MINUTE,
  };
}

/** Whether `s` is one of the window's candidate starts. */
function isCandidateOf(window: Interval, s: number, q: Prepared): boolean {
  return s >= window.start && s + q.durationMs <= window.end && (s - window.start) % q.stepMs === 0;
}

/** What a host's sessions answer about a candidate: indexed for `openSlots`, scanned for `openSlotAt`. */
interface SessionLookup {
  /** This study's session of the host starting at `s`. */
  existingAt(s: number): HostSession | undefined;
  /** Whether a new session at `s` would conflict with one of the host's sessions. */
  blocks(s: number): boolean;
  /** How many sessions of this study the host has starting in [from, to). */
  studySessionsBetween(from: number, to: number): number;
}

/** The candidate `s` of `plan`'s host on host-local `day` (days since 1970-01-01), if it is open. */
function evaluate(q: Prepared, plan: HostPlan, sessions: SessionLookup, s: number, day: number): OpenSlot | undefined {
  const existing = sessions.existingAt(s);
  if (existing) {
    if (existing.booked >= existing.capacity) return undefined;
    return { start: new Date(s), end: new Date(existing.end.getTime()), hostUserId: plan.host.hostUserId, hostTimeZone: plan.host.timeZone, remaining: existing.capacity - existing.booked, sessionExists: true };
  }
  if (q.rules.capacity < 1 || sessions.blocks(s)) return undefined;
  if (q.rules.dailyCap !== null && sessions.studySessionsBetween(dayStart(plan, day), dayStart(plan, day + 1)) >= q.rules.dailyCap) return undefined;
  return { start: new Date(s), end: new Date(s + q.durationMs), hostUserId: plan.host.hostUserId, hostTimeZone: plan.host.timeZone, remaining: q.rules.capacity, sessionExists: false };
}

/**
 * The open interval of candidate starts a session blocks. The two conditions (the candidate's
 * buffered interval overlaps the session, or the session's buffered interval overlaps the
 * candidate) are each an open interval of starts containing (S - duration, E); their union is
 * (S - max(our after, its before) - duration, E + max(our before, its after)).
 */
function blockedStarts(session: HostSession, q: Prepared): Interval {
  return {
    start: session.start.getTime() - Math.max(q.afterMs, session.bufferBeforeMinutes * MINUTE) - q.durationMs,
    end: session.end.getTime() + Math.max(q.beforeMs, session.bufferAfterMinutes * MINUTE),
  };
}

function scanSessions(query: SlotQuery, plan: HostPlan, q: Prepared): SessionLookup {
  const hostId = plan.host.hostUserId;
  const own = query.sessions.filter((session) => session.hostUserId === hostId);
  return {
    existingAt: (s) => own.find((session) => session.studyId === q.studyId && session.start.getTime() === s),
    blocks: (s) => own.some((session) => {
      const blocked = blockedStarts(session, q);
      return blocked.start < s && s < blocked.end;
    }),
    studySessionsBetween: (from, to) => own.filter((session) => session.studyId === q.studyId && session.start.getTime() >= from && session.start.getTime() < to).length,
  };
}

function indexSessions(query: SlotQuery, plan: HostPlan, q: Prepared): SessionLookup {
  const hostId = plan.host.hostUserId;
  const existing = new Map<number, HostSession>();
  const studyStarts: number[] = [];
  const blocked: Interval[] = [];
  for (const session of query.sessions) {
    if (session.hostUserId !== hostId) continue;
    const start = session.start.getTime();
    if (session.studyId === q.studyId) {
      if (!existing.has(start)) existing.set(start, session);
      studyStarts.push(start);
    }
    blocked.push(blockedStarts(session, q));
  }
  studyStarts.sort((a, b) => a - b);
  blocked.sort((a, b) => a.start - b.start);
  // Merged into disjoint open intervals (ones that only touch stay apart: the point between them is free).
  const merged: Interval[] = [];
  for (const interval of blocked) {
    const last = merged[merged.length - 1];
    if (last && interval.start < last.end) last.end = Math.max(last.end, interval.end);
    else merged.push({ ...interval });
  }
  return {
    existingAt: (s) => existing.get(s),
    blocks: (s) => {
      // The last interval starting before s is the only one that can hold it.
      const index = countBelow(merged, s, (interval) => interval.start) - 1;
      return index >= 0 && s < merged[index]!.end;
    },
    studySessionsBetween: (from, to) => countBelow(studyStarts, to, (x) => x) - countBelow(studyStarts, from, (x) => x),
  };
}

/** How many of `items` (sorted by key) have a key below `bound`. */
function countBelow<T>(items: T[], bound: number, key: (item: T) => number): number {
  let low = 0;
  let high = items.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (key(items[middle]!) < bound) low = middle + 1;
    else high = middle;
  }
  return low;
}

function bySlotOrder(a: OpenSlot, b: OpenSlot): number {
  return a.start.getTime() - b.start.getTime() || compareStrings(a.hostUserId, b.hostUserId);
}

function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

// --- Windows: wall time to instants --------------------------------------------------------------

interface Interval { start: number; end: number }
/** Minutes after the local midnight. */
interface MinuteRange { start: number; end: number }

interface HostPlan {
  host: HostHours;
  zone: IANAZone;
  /** The zone's offset (minutes) at UTC midnights, by day number; shared by every host in the zone. */
  samples: Map<number, number>;
  /** Weekly ranges by weekday, Monday = 0, sorted by start. */
  weekly: MinuteRange[][];
  /** Override ranges by day number (days since 1970-01-01). */
  overrides: Map<number, MinuteRange[]>;
  /** Each host-local day's single offset (minutes), or null on the day of a change. */
  dayOffsets: Map<number, number | null>;
  /** Each host-local day's first instant (asked for every candidate under a daily cap). */
  dayStarts: Map<number, number>;
}

/** Offsets sampled at UTC midnights, by zone: a zone's offset costs a few microseconds through Intl. */
const zoneSamples = new Map<string, Map<number, number>>();

/** Whether Intl knows a zone, by name: asking builds a DateTimeFormat, which costs about a millisecond. */
const knownZones = new Map<string, boolean>();

function planOf(host: HostHours): HostPlan | undefined {
  if (typeof host.timeZone !== 'string') return undefined;
  let known = knownZones.get(host.timeZone);
  if (known === undefined) {
    known = IANAZone.isValidZone(host.timeZone);
    if (knownZones.size > 1_000) knownZones.clear();
    knownZones.set(host.timeZone, known);
  }
  if (!known) return undefined;
  const zone = IANAZone.create(host.timeZone);
  let samples = zoneSamples.get(zone.name);
  if (!samples || samples.size > 20_000) {
    samples = new Map();
    zoneSamples.set(zone.name, samples);
  }
  const weekly = weekdays.map((weekday) => minuteRanges(host.weeklyHours?.[weekday]));
  const overrides = new Map<number, MinuteRange[]>();
  for (const override of host.overrides ?? []) {
    const day = parseDay(override.date);
    if (day !== undefined && !overrides.has(day)) overrides.set(day, minuteRanges(override.hours));
  }
  return { host, zone, samples, weekly, overrides, dayOffsets: new Map(), dayStarts: new Map() };
}

/** A list of ranges as minutes, sorted; ranges that do not parse or are empty are left out (the API refuses them). */
function minuteRanges(ranges: TimeRange[] | undefined): MinuteRange[] {
  const parsed: MinuteRange[] = [];
  for (const range of Array.isArray(ranges) ? ranges : []) {
    const start = parseWallTime(range?.start, false);
    const end = parseWallTime(range?.end, true);
    if (start !== undefined && end !== undefined && start < end) parsed.push({ start, end });
  }
  return parsed.sort((a, b) => a.start - b.start);
}

/** The windows of instants of a host-local day. */
function windowsOf(plan: HostPlan, day: number): Interval[] {
  const ranges = plan.overrides.get(day) ?? plan.weekly[(((day + 3) % 7) + 7) % 7]!;
  const windows: Interval[] = [];
  for (const range of ranges) {
    const start = wallToInstant(plan, day, range.start, 'earlier');
    const end = wallToInstant(plan, day, range.end, 'later');
    if (start < end) windows.push({ start, end });
  }
  return windows;
}

/** The first instant of a host-local day. */
function dayStart(plan: HostPlan, day: number): number {
  let start = plan.dayStarts.get(day);
  if (start === undefined) {
    start = wallToInstant(plan, day, 0, 'earlier');
    plan.dayStarts.set(day, start);
  }
  return start;
}

/** The host-local day (days since 1970-01-01) holding instant `t`. */
function localDay(plan: HostPlan, t: number): number {
  return Math.floor((t + plan.zone.offset(t) * MINUTE) / DAY);
}

/**
 * The offset of a host-local day, or null if it changes that day. Every instant showing a wall time
 * of the day lies within [day - 14 h, day + 1 + 12 h]: when the offsets at the UTC midnights around
 * agree, the day has one offset (given at most one change in any 24 hours).
 */
function dayOffset(plan: HostPlan, day: number): number | null {
  let offset = plan.dayOffsets.get(day);
  if (offset === undefined) {
    const first = sampleAt(plan, day - 1);
    offset = sampleAt(plan, day) === first && sampleAt(plan, day + 1) === first && sampleAt(plan, day + 2) === first ? first : null;
    plan.dayOffsets.set(day, offset);
  }
  return offset;
}

function sampleAt(plan: HostPlan, utcDay: number): number {
  let offset = plan.samples.get(utcDay);
  if (offset === undefined) {
    offset = plan.zone.offset(utcDay * DAY);
    plan.samples.set(utcDay, offset);
  }
  return offset;
}

/**
 * The instant of wall time `minutes` after the midnight of host-local `day` (1440 = the next
 * midnight). A missing wall time (spring-forward gap) is the first instant after the gap; an
 * ambiguous one (fall-back) is the earlier or later instant as asked.
 */
function wallToInstant(plan: HostPlan, day: number, minutes: number, prefer: 'earlier' | 'later'): number {
  const wall = day * DAY + minutes * MINUTE; // the wall time read as if it were UTC
  const offset = dayOffset(plan, day);
  if (offset !== null) return wall - offset * MINUTE;
  // The day of a change: the instants the wall time may be, at the offsets before and after it.
  const before = plan.zone.offset(wall - DAY);
  const after = plan.zone.offset(wall + DAY);
  const candidates = [wall - before * MINUTE, wall - after * MINUTE].filter((t, index) => plan.zone.offset(t) === (index === 0 ? before : after));
  if (candidates.length > 0) return prefer === 'earlier' ? Math.min(...candidates) : Math.max(...candidates);
  // In the gap (after > before): the change happened in (wall - after, wall - before]; its instant
  // is the first that exists after the missing wall time.
  let low = wall - after * MINUTE; // still at the offset before
  let high = wall - before * MINUTE; // already at the offset after
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    if (plan.zone.offset(middle) === before) low = middle;
    else high = middle;
  }
  return high;
}

// --- Parsing and validation -----------------------------------------------------------------------

/** 'HH:MM' as minutes after midnight: 00:00–23:59, and '24:00' where `allowMidnightEnd`. */
function parseWallTime(text: unknown, allowMidnightEnd: boolean): number | undefined {
  if (typeof text !== 'string') return undefined;
  const match = /^(\d\d):(\d\d)$/.exec(text);
  if (!match) return undefined;
  const hours = Number(match[1]);
  const minutes = Number(match[2]);
  if (minutes > 59 || hours > 24 || (hours === 24 && (!allowMidnightEnd || minutes !== 0))) return undefined;
  return hours * 60 + minutes;
}

/** 'YYYY-MM-DD' as days since 1970-01-01, if it is a calendar date. */
function parseDay(text: unknown): number | undefined {
  if (typeof text !== 'string') return undefined;
  const match = /^(\d{4})-(\d\d)-(\d\d)$/.exec(text);
  if (!match) return undefined;
  const [year, month, date] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const utc = new Date(Date.UTC(year, month - 1, date));
  // Date.UTC maps years 0-99 to 1900-1999; setUTCFullYear does not.
  utc.setUTCFullYear(year);
  if (utc.getUTCFullYear() !== year || utc.getUTCMonth() !== month - 1 || utc.getUTCDate() !== date) return undefined;
  return Math.round(utc.getTime() / DAY);
}

function rangeProblems(ranges: unknown, path: string[], problems: { path: string[]; message: string }[]): void {
  if (!Array.isArray(ranges)) {
    problems.push({ path, message: 'must be a list of { start, end } ranges ([] for no hours)' });
    return;
  }
  const parsed: { index: number; start: number; end: number; text: string }[] = [];
  ranges.forEach((range: unknown, index) => {
    const at = [...path, String(index)];
    if (!isRecord(range)) {
      problems.push({ path: at, message: 'must be { start, end }, such as { start: "09:00", end: "17:00" }' });
      return;
    }
    const start = parseWallTime(range.start, false);
    const end = parseWallTime(range.end, true);
    if (start === undefined) problems.push({ path: [...at, 'start'], message: 'must be a 24-hour time HH:MM from 00:00 to 23:59' });
    if (end === undefined) problems.push({ path: [...at, 'end'], message: 'must be a 24-hour time HH:MM from 00:01 to 24:00 (the end of the day)' });
    if (start === undefined || end === undefined) return;
    if (start >= end) {
      problems.push({ path: [...at, 'end'], message: `must be after the start (${String(range.start)}); for hours past midnight, end this day at 24:00 and start the next at 00:00` });
      return;
    }
    parsed.push({ index, start, end, text: `${String(range.start)}–${String(range.end)}` });
  });
  // Each overlapping pair is reported once, at the range listed later.
  const reported = new Set<number>();
  parsed.sort((a, b) => a.start - b.start || a.index - b.index);
  for (let i = 1; i < parsed.length; i++) {
    const previous = parsed.slice(0, i).find((earlier) => earlier.end > parsed[i]!.start);
    if (!previous) continue;
    const [other, later] = previous.index < parsed[i]!.index ? [previous, parsed[i]!] : [parsed[i]!, previous];
    if (reported.has(later.index)) continue;
    reported.add(later.index);
    problems.push({ path: [...path, String(later.index), 'start'], message: `overlaps the range ${other.text}: ranges of one day must not overlap (they may touch: 12:00–13:00 then 13:00–17:00)` });
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
