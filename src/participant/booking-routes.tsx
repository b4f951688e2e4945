import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DateTime } from 'luxon';
import type { VNode } from 'preact';
import type { ServiceDeps } from '../context.js';
import type { BookingRow } from '../families/scheduling/queries.js';
import { book, bookingOfParticipant, cancel, move, personMayChange, type StudySchedule, studySchedule, studySlots } from '../families/scheduling/service.js';
import { isTimeZone, type OpenSlot } from '../families/scheduling/slots.js';
import { findAnswerableScreener } from '../families/studies/service.js';
import { ApiError } from '../http/errors.js';
import { BookedPage, BookingPage, CancelPage, type DayOfSlots, REASON_MAX, type ZoneGroup } from './booking-page.js';
import { brandOf } from './branding.js';
import type { OpenedLink } from './consent-routes.js';
import { chooseLocale, type MessageKey, translator, type Translator } from './i18n.js';
import { documentOf, NoticePage } from './layout.js';
import { formToken, formTokenIsValid, isCrossSitePost, participantContentSecurityPolicy, setPageHeaders } from './security.js';
import { bookingCalendarFile } from '../families/scheduling/icalendar.js';

type NoticeOptions = { from?: string; values?: Record<string, string | number | Date> };
type Posted = Record<string, string[]>;
type Query = { tz?: string; from?: string };

/** What routes.tsx lends these pages: its link opening (rate limits, token, language), and its page senders. */
export interface BookingPagesOptions {
  deps: ServiceDeps;
  formKey: Buffer;
  open: (request: FastifyRequest<{ Params: { token: string } }>, reply: FastifyReply) => Promise<OpenedLink | undefined>;
  sendPage: (reply: FastifyReply, status: number, page: VNode) => FastifyReply;
  notice: (reply: FastifyReply, status: number, i18n: Translator, title: MessageKey, body: MessageKey, options?: NoticeOptions) => FastifyReply;
}

export interface BookingPages {
  /** The page a SCHEDULING link opens at its own address (`/p/<token>`): the open times, or the booking once made. */
  pageOfLink(request: FastifyRequest, reply: FastifyReply, opened: OpenedLink, path: string): Promise<FastifyReply>;
  /**
   * Where a SCREENER link goes once its screener qualified the person (and any consent is
   * signed): the booking step `<path>/book`, when the study's screener shows the scheduler to the
   * qualified. `qualified` stands for the facts' screener state just after a submission.
   */
  afterScreener(opened: OpenedLink, path: string, options?: { qualified?: boolean }): Promise<string | undefined>;
}

/**
 * The script of the booking page: when the address names no zone, it fills `?tz=` from the
 * browser's own zone and loads the page again. Progressive enhancement: without it the page
 * shows its guess and says so, and the zone's <select> changes it.
 */
export const bookingZoneScript = `(function () {
  var params = new URLSearchParams(location.search);
  if (params.has('tz')) return;
  var zone;
  try { zone = Intl.DateTimeFormat().resolvedOptions().timeZone; } catch (error) { return; }
  var select = document.getElementById('tz');
  if (!zone || !select || select.value === zone) return;
  params.set('tz', zone);
  location.replace(location.pathname + '?' + params.toString());
})();
`;
export const bookingZoneScriptPath = `/p/assets/booking-zone-${createHash('sha256').update(bookingZoneScript).digest('hex').slice(0, 16)}.js`;
/** The booking page's policy: the participant pages' own, and this origin's one script file. */
const policyWithScript = `${participantContentSecurityPolicy}; script-src 'self'`;

/** Names ICU still spells the old way, as IANA spells them now (the <select> offers the current names). */
const renamedZones: Record<string, string> = {
  'Asia/Katmandu': 'Asia/Kathmandu',
  'Asia/Calcutta': 'Asia/Kolkata',
  'Asia/Saigon': 'Asia/Ho_Chi_Minh',
  'Asia/Rangoon': 'Asia/Yangon',
  'Europe/Kiev': 'Europe/Kyiv',
  'America/Godthab': 'America/Nuuk',
  'Atlantic/Faeroe': 'Atlantic/Faroe',
  'Pacific/Truk': 'Pacific/Chuuk',
  'Pacific/Ponape': 'Pacific/Pohnpei',
  'Pacific/Enderbury': 'Pacific/Kanton',
};

const knownZones: readonly string[] = [...new Set(Intl.supportedValuesOf('timeZone').map((zone) => renamedZones[zone] ?? zone))].filter(isTimeZone).sort();

/** The <select>'s zones grouped by region, with UTC and the zone shown (an alias the list spells otherwise) added. */
let knownZoneGroups: ZoneGroup[] | undefined;
function zoneGroups(shown: string): ZoneGroup[] {
  // The usual case, a zone of the list: the same groups every time, made once.
  if (knownZones.includes(shown) || shown === 'UTC') return (knownZoneGroups ??= groupZones(knownZones));
  return groupZones([...knownZones, shown].sort());
}

function groupZones(zones: readonly string[]): ZoneGroup[] {
  const groups = new Map<string, ZoneGroup>();
  const loose: ZoneGroup = { region: '', zones: [{ value: 'UTC', label: 'UTC' }] };
  for (const zone of zones) {
    const slash = zone.indexOf('/');
    if (slash < 0) {
      if (zone !== 'UTC') loose.zones.push({ value: zone, label: zone });
      continue;
    }
    const region = zone.slice(0, slash);
    let group = groups.get(region);
    if (!group) groups.set(region, (group = { region, zones: [] }));
    group.zones.push({ value: zone, label: zone.slice(slash + 1).replace(/_/g, ' ').replace(/\//g, ' / ') });
  }
  return [loose, ...groups.values()];
}

/** The city of a zone, as its name spells it ("Europe/Berlin" → "Berlin"). */
const cityOf = (zone: string) => (zone.split('/').pop() ?? zone).replace(/_/g, ' ');

/**
 * An Intl.DateTimeFormat, made once per locale, zone and options and kept: making one costs a
 * fraction of a millisecond, and a week of open times shows each time in two zones. Bounded by the
 * shipped locales × the zones in use × the few option sets below.
 */
const formatters = new Map<string, Intl.DateTimeFormat>();
function formatterOf(locale: string, options: Intl.DateTimeFormatOptions): Intl.DateTimeFormat {
  const key = `${locale}\u0000${JSON.stringify(options)}`;
  let formatter = formatters.get(key);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat(locale, options);
    formatters.set(key, formatter);
  }
  return formatter;
}

/** The zone's name and its offset at `at`, as the page states it: "Asia/Kathmandu, GMT+5:45". */
function zoneLabel(locale: string, zone: string, at: Date): string {
  const offset = formatterOf(locale, { timeZone: zone, timeZoneName: 'shortOffset' }).formatToParts(at).find((part) => part.type === 'timeZoneName')?.value;
  return offset ? `${zone}, ${offset}` : zone;
}

interface Formats {
  day(at: Date): string;
  time(at: Date, zone?: string): string;
  shortDay(at: Date): string;
  /** A session in the person's zone: its day, its times and the zone. */
  session(start: Date, end: Date): string;
}

function formatsOf(i18n: Translator, zone: string, zoneText: string): Formats {
  const day = formatterOf(i18n.locale, { weekday: 'long', day: 'numeric', month: 'long', year: 'numeric', timeZone: zone });
  const shortDay = formatterOf(i18n.locale, { weekday: 'long', day: 'numeric', month: 'long', timeZone: zone });
  const timeIn = (timeZone: string) => formatterOf(i18n.locale, { timeStyle: 'short', timeZone });
  const time = timeIn(zone);
  return {
    day: (at) => day.format(at),
    shortDay: (at) => shortDay.format(at),
    time: (at, other) => (other === undefined ? time : timeIn(other)).format(at),
    session: (start, end) => `${day.format(start)}, ${time.formatRange(start, end)} (${zoneText})`,
  };
}

const studyNameOf = (opened: OpenedLink) => opened.facts.studyPlan.externalName ?? opened.facts.studyPlan.name ?? '';
const dayPattern = /^\d{4}-\d{2}-\d{2}$/;
const firstOf = (value: unknown): string | undefined => (Array.isArray(value) ? firstOf(value[0]) : typeof value === 'string' ? value : undefined);

/** A participant who may book a session: not decided against, not past it, still taking part. */
function mayBook(opened: OpenedLink): boolean {
  const { facts } = opened;
  if (facts.approvalStatus === 'REJECTED' || facts.screenerState === 'DISQUALIFIED') return false;
  return ['NOT_STARTED', 'INVITED', 'NO_SHOW', 'SCHEDULED'].includes(facts.participantStatus);
}


/**
 * The person's side of booking (issue 34, items 2 and 4): a SCHEDULING link's page (`/p/<token>`)
 * and a qualified SCREENER link's booking step (`/p/<token>/book`) list the study's open times and
 * book one; once booked the same address shows the session, its calendar file
 * (`/p/<token>/calendar.ics`), and, while the study's window allows, moving it
 * (`/p/<token>/move`) and canceling it (`/p/<token>/cancel`). Registered from routes.tsx inside
 * the participant pages' plugin, so they share its rate limits, headers, form parser and notices;
 * every change goes through the scheduling family's service, as the person (actor PERSON).
 */
export function registerBookingPages(app: FastifyInstance, options: BookingPagesOptions): BookingPages {
  const { deps, formKey, open, sendPage, notice } = options;

  app.get(bookingZoneScriptPath, async (_request, reply) => {
    setPageHeaders(reply, { cacheable: true });
    return reply.type('text/javascript; charset=utf-8').send(bookingZoneScript);
  });

  const redirect = (reply: FastifyReply, to: string) => {
    setPageHeaders(reply, { cacheable: false });
    return reply.redirect(to, 303);
  };
  const unknown = (reply: FastifyReply, i18n: Translator) => notice(reply, 404, i18n, 'link.unknown.title', 'link.unknown.body');
  const formExpired = (reply: FastifyReply, opened: OpenedLink) => notice(reply, 403, opened.i18n, 'form.expired.title', 'form.expired.body', { from: opened.facts.workspaceName });
  const forgedPost = (request: FastifyRequest, reply: FastifyReply) => notice(reply, 403, translator(chooseLocale(undefined, request.headers['accept-language'])), 'form.expired.title', 'form.expired.body');
  /** `/p/<token>/<step>` → `/p/<token>`. */
  const baseOf = (request: FastifyRequest) => request.url.split('?')[0]!.split('/').slice(0, 3).join('/');

  /** Whether this link books: a SCHEDULING link, or a SCREENER link whose screener qualified the person and shows the scheduler. */
  const linkBooks = async (opened: OpenedLink, qualified?: boolean): Promise<boolean> => {
    if (opened.link.purpose === 'SCHEDULING') return true;
    if (opened.link.purpose !== 'SCREENER') return false;
    if (!(qualified ?? opened.facts.screenerState === 'QUALIFIED')) return false;
    return (await findAnswerableScreener(opened.db, opened.link.workspaceId, opened.link.studyId))?.showSchedulerToQualified ?? false;
  };

  /** The notice that stands instead of the open times, or undefined when the person may book. */
  const bookingUnavailable = (reply: FastifyReply, opened: OpenedLink, status = 200) => {
    const { facts, i18n } = opened;
    const from = facts.workspaceName;
    const study = studyNameOf(opened);
    if (facts.personOptedOut) return notice(reply, status, i18n, 'person.optedOut.title', 'person.optedOut.body', { from });
    if (facts.studyStatus === 'CLOSED') return notice(reply, status, i18n, 'study.closed.title', 'study.closed.body', { from, values: { study } });
    if (facts.studyStatus !== 'ACTIVE') return notice(reply, status, i18n, 'study.paused.title', 'study.paused.body', { from, values: { study } });
    // The reason (rejected, disqualified, done) is never shown: a kind, general word.
    if (!mayBook(opened)) return notice(reply, status, i18n, 'booking.unavailable.title', 'booking.unavailable.body', { from, values: { study } });
    return undefined;
  };

  const zoneFor = (asked: string | undefined, booking: BookingRow | undefined, schedule: StudySchedule): { zone: string; guessed: boolean } => {
    if (asked !== undefined && asked.length <= 64 && isTimeZone(asked)) return { zone: asked, guessed: false };
    if (booking?.person_time_zone) return { zone: booking.person_time_zone, guessed: false };
    return { zone: schedule.hosts[0]?.timeZone ?? 'UTC', guessed: true };
  };

  /** The study's schedule (its rules and hosts), without its open times. */
  const scheduleOf = (opened: OpenedLink) => studySchedule(opened.db, opened.link.workspaceId, opened.link.studyId);

  const hostZoneOf = (schedule: StudySchedule, hostUserId: string, fallback: string) => schedule.hosts.find((host) => host.userId === hostUserId)?.timeZone ?? fallback;

  const sendWithScript = (reply: FastifyReply, status: number, page: VNode) => {
    setPageHeaders(reply, { cacheable: false });
    reply.header('Content-Security-Policy', policyWithScript);
    return reply.code(status).type('text/html; charset=utf-8').send(documentOf(page, brandOf(reply)));
  };

  /** The open times a week at a time, to book (`mode` book) or to move a booking to. */
  const showTimes = async (
    reply: FastifyReply,
    status: number,
    opened: OpenedLink,
    base: string,
    pagePath: string,
    query: Query,
    mode: { kind: 'book'; earlier: BookingRow | undefined } | { kind: 'move'; booking: BookingRow },
    error?: 'taken' | 'choose',
  ) => {
    const { link, facts, i18n, db } = opened;
    const now = deps.clock.now();
    const { schedule, slots } = await studySlots(db, link.workspaceId, link.studyId, now);
    // The participant's booking, read once by the caller: a canceled one keeps the zone the person chose.
    const earlier = mode.kind === 'move' ? mode.booking : mode.earlier;
    const { zone, guessed } = zoneFor(query.tz, earlier, schedule);
    const zoneText = zoneLabel(i18n.locale, zone, now);
    const formats = formatsOf(i18n, zone, zoneText);
    // Several hosts free at one time are one choice: the service gives the person any of them.
    const distinct: OpenSlot[] = [];
    for (const slot of slots) if (distinct.at(-1)?.start.getTime() !== slot.start.getTime()) distinct.push(slot);
    const dayOf = (at: Date) => DateTime.fromJSDate(at, { zone }).toISODate()!;
    const today = DateTime.fromJSDate(now, { zone }).toISODate()!;
    const asked = query.from !== undefined && dayPattern.test(query.from) && DateTime.fromISO(query.from, { zone }).isValid ? query.from : undefined;
    const fromDay = asked ?? (distinct[0] ? dayOf(distinct[0].start) : today);
    const windowStart = DateTime.fromISO(fromDay, { zone }).startOf('day');
    const windowEnd = windowStart.plus({ days: 7 });
    const shown = distinct.filter((slot) => slot.start.getTime() >= windowStart.toMillis() && slot.start.getTime() < windowEnd.toMillis());
    const days: DayOfSlots[] = [];
    let current: { key: string; day: DayOfSlots } | undefined;
    for (const slot of shown) {
      const key = dayOf(slot.start);
      if (current?.key !== key) {
        current = { key, day: { label: formats.day(slot.start), slots: [] } };
        days.push(current.day);
      }
      const hostZone = slot.hostTimeZone;
      current.day.slots.push({ startTime: slot.start.toISOString(), time: formats.time(slot.start), hostTime: i18n.t('booking.slot.host', { time: formats.time(slot.start, hostZone), city: cityOf(hostZone) }) });
    }
    const hrefOf = (day: string) => `${pagePath}?${new URLSearchParams({ from: day, tz: zone }).toString()}`;
    const before = distinct.filter((slot) => slot.start.getTime() < windowStart.toMillis());
    const earlierDay = before[0] ? DateTime.max(DateTime.fromISO(dayOf(before[0].start), { zone }), windowStart.minus({ days: 7 })).toISODate()! : undefined;
    const laterDay = distinct.some((slot) => slot.start.getTime() >= windowEnd.toMillis()) ? windowEnd.toISODate()! : undefined;
    const study = studyNameOf(opened);
    const action = mode.kind === 'book' ? `${base}/book` : `${base}/move`;
    const page = (
      <BookingPage
        i18n={i18n}
        from={facts.workspaceName}
        title={i18n.t(mode.kind === 'book' ? 'booking.title' : 'booking.move.title', { study })}
        minutes={schedule.durationMinutes}
        zone={{ value: zone, label: zoneText }}
        zones={zoneGroups(zone)}
        pagePath={pagePath}
        fromDay={fromDay}
        weekLabel={i18n.t('booking.week', { start: formats.shortDay(windowStart.toJSDate()), end: formats.shortDay(windowEnd.minus({ days: 1 }).toJSDate()) })}
        days={days}
        noneAtAll={distinct.length === 0}
        noneText={i18n.t('booking.none.body', { study })}
        earlierHref={earlierDay ? hrefOf(earlierDay) : undefined}
        laterHref={laterDay ? hrefOf(laterDay) : undefined}
        action={action}
        formToken={formToken(formKey, link.linkId, mode.kind)}
        submitLabel={i18n.t(mode.kind === 'book' ? 'booking.submit' : 'booking.move.submit')}
        currentWhen={mode.kind === 'move' ? formats.session(new Date(mode.booking.starts_at), new Date(mode.booking.ends_at)) : undefined}
        error={error}
        zoneScript={guessed ? bookingZoneScriptPath : undefined}
      />
    );
    return guessed ? sendWithScript(reply, status, page) : sendPage(reply, status, page);
  };

  /** The person's session: booked (with its changes while allowed), or canceled. */
  const showBooking = async (reply: FastifyReply, opened: OpenedLink, base: string, booking: BookingRow, query: Query) => {
    const { facts, i18n } = opened;
    const now = deps.clock.now();
    const schedule = await scheduleOf(opened);
    const { zone } = zoneFor(query.tz, booking, schedule);
    const zoneText = zoneLabel(i18n.locale, zone, new Date(booking.starts_at));
    const formats = formatsOf(i18n, zone, zoneText);
    const start = new Date(booking.starts_at);
    const when = formats.session(start, new Date(booking.ends_at));
    const study = studyNameOf(opened);
    const from = facts.workspaceName;
    if (booking.status === 'CANCELED') {
      return sendPage(reply, 200, <CanceledNotice i18n={i18n} from={from} paragraphs={[i18n.t('booking.canceled.body', { study, when }), i18n.t('booking.canceled.again')]} />);
    }
    const hostZone = hostZoneOf(schedule, booking.host_user_id, zone);
    const changeable = facts.studyStatus === 'ACTIVE' && personMayChange(schedule, booking.starts_at, now);
    return sendPage(
      reply,
      200,
      <BookedPage
        i18n={i18n}
        from={from}
        study={study}
        when={when}
        hostWhen={i18n.t('booking.booked.hostTime', { time: formats.time(start, hostZone), city: cityOf(hostZone) })}
        calendarHref={`${base}/calendar.ics`}
        changeHref={changeable ? `${base}/move` : undefined}
        cancelHref={changeable ? `${base}/cancel` : undefined}
      />,
    );
  };

  /** The booking step's page: the session once booked (or canceled, when the person may not book again), else the open times. */
  const bookingHome = async (reply: FastifyReply, opened: OpenedLink, base: string, pagePath: string, query: Query) => {
    const booking = await bookingOfParticipant(opened.db, opened.link.workspaceId, opened.link.participantId);
    // A canceled booking stays on the page until the team invites the person again.
    if (booking && (booking.status === 'BOOKED' || !mayBook(opened))) return showBooking(reply, opened, base, booking, query);
    if (bookingUnavailable(reply, opened)) return reply;
    return showTimes(reply, 200, opened, base, pagePath, query, { kind: 'book', earlier: booking });
  };

  const queryOf = (request: FastifyRequest): Query => {
    const raw = (request.query ?? {}) as Record<string, unknown>;
    return { tz: firstOf(raw.tz), from: firstOf(raw.from) };
  };

  /** The link opened for a booking route: undefined when a page was sent instead (unknown, refused, or not yet at this step). */
  const openForBooking = async (request: FastifyRequest<{ Params: { token: string } }>, reply: FastifyReply) => {
    const opened = await open(request, reply);
    if (!opened) return undefined;
    if (opened.link.purpose !== 'SCHEDULING' && opened.link.purpose !== 'SCREENER') {
      unknown(reply, opened.i18n);
      return undefined;
    }
    if (!(await linkBooks(opened))) {
      // A screener link reaches booking only once qualified: its own page says where the person stands.
      redirect(reply, baseOf(request));
      return undefined;
    }
    return opened;
  };

  const liveBookingOf = async (opened: OpenedLink) => {
    const booking = await bookingOfParticipant(opened.db, opened.link.workspaceId, opened.link.participantId);
    return booking?.status === 'BOOKED' ? booking : undefined;
  };

  const locked = (reply: FastifyReply, opened: OpenedLink, status: number) => notice(reply, status, opened.i18n, 'booking.locked.title', 'booking.locked', { from: opened.facts.workspaceName });

  app.get<{ Params: { token: string }; Querystring: Query }>('/p/:token/book', async (request, reply) => {
    const opened = await openForBooking(request, reply);
    if (!opened) return reply;
    return bookingHome(reply, opened, baseOf(request), request.url.split('?')[0]!, queryOf(request));
  });

  app.post<{ Params: { token: string }; Body: Posted }>('/p/:token/book', { config: { acceptsForm: true } }, async (request, reply) => {
    const posted: Posted = request.body && typeof request.body === 'object' ? request.body : {};
    if (isCrossSitePost(request, deps.config.publicUrl)) return forgedPost(request, reply);
    const opened = await openForBooking(request, reply);
    if (!opened) return reply;
    const { link, db } = opened;
    if (!formTokenIsValid(formKey, link.linkId, 'book', posted.formToken?.[0])) return formExpired(reply, opened);
    const base = baseOf(request);
    const pagePath = link.purpose === 'SCHEDULING' ? base : `${base}/book`;
    const tz = posted.tz?.[0];
    const query: Query = { tz };
    const booking = await bookingOfParticipant(db, link.workspaceId, link.participantId);
    if (booking && (booking.status === 'BOOKED' || !mayBook(opened))) return redirect(reply, base);
    if (bookingUnavailable(reply, opened, 409)) return reply;
    const startTime = posted.startTime?.[0] ?? '';
    if (!/^\d{4}-\d{2}-\d{2}T[\d:.]+Z$/.test(startTime) || Number.isNaN(Date.parse(startTime))) return showTimes(reply, 400, opened, base, pagePath, query, { kind: 'book', earlier: booking }, 'choose');
    try {
      await book(db, deps.clock, {
        workspaceId: link.workspaceId,
        studyId: link.studyId,
        participantId: link.participantId,
        startTime,
        personTimeZone: tz !== undefined && isTimeZone(tz) ? tz : undefined,
        actor: { by: 'PERSON' },
      });
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      if (error.status === 409 && error.items[0]?.path[0] === 'startTime') return showTimes(reply, 409, opened, base, pagePath, query, { kind: 'book', earlier: booking }, 'taken');
      // Already booked meanwhile (another tab): the page shows that booking.
      if (error.status === 409 && error.items[0]?.path[0] === 'participantId' && (await liveBookingOf(opened))) return redirect(reply, base);
      if (error.status === 404) return unknown(reply, opened.i18n);
      return notice(reply, 409, opened.i18n, 'booking.unavailable.title', 'booking.unavailable.body', { from: opened.facts.workspaceName, values: { study: studyNameOf(opened) } });
    }
    return redirect(reply, base);
  });

  app.get<{ Params: { token: string }; Querystring: Query }>('/p/:token/move', async (request, reply) => {
    const opened = await openForBooking(request, reply);
    if (!opened) return reply;
    const base = baseOf(request);
    const booking = await liveBookingOf(opened);
    if (!booking) return redirect(reply, base);
    if (bookingUnavailable(reply, opened)) return reply;
    if (!personMayChange(await scheduleOf(opened), booking.starts_at, deps.clock.now())) return locked(reply, opened, 200);
    return showTimes(reply, 200, opened, base, `${base}/move`, queryOf(request), { kind: 'move', booking });
  });

  app.post<{ Params: { token: string }; Body: Posted }>('/p/:token/move', { config: { acceptsForm: true } }, async (request, reply) => {
    const posted: Posted = request.body && typeof request.body === 'object' ? request.body : {};
    if (isCrossSitePost(request, deps.config.publicUrl)) return forgedPost(request, reply);
    const opened = await openForBooking(request, reply);
    if (!opened) return reply;
    const { link, db } = opened;
    if (!formTokenIsValid(formKey, link.linkId, 'move', posted.formToken?.[0])) return formExpired(reply, opened);
    const base = baseOf(request);
    const booking = await liveBookingOf(opened);
    if (!booking) return redirect(reply, base);
    if (bookingUnavailable(reply, opened, 409)) return reply;
    const query: Query = { tz: posted.tz?.[0] };
    const startTime = posted.startTime?.[0] ?? '';
    if (!/^\d{4}-\d{2}-\d{2}T[\d:.]+Z$/.test(startTime) || Number.isNaN(Date.parse(startTime))) return showTimes(reply, 400, opened, base, `${base}/move`, query, { kind: 'move', booking }, 'choose');
    try {
      await move(db, deps.clock, { workspaceId: link.workspaceId, studyId: link.studyId, bookingId: booking.booking_id, startTime, actor: { by: 'PERSON' } });
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      if (error.status === 409 && error.items[0]?.path[0] === 'startTime') return showTimes(reply, 409, opened, base, `${base}/move`, query, { kind: 'move', booking }, 'taken');
      if (error.status === 409 && error.items[0]?.path[0] === 'bookingId') return locked(reply, opened, 409);
      if (error.status === 404) return unknown(reply, opened.i18n);
      return notice(reply, 409, opened.i18n, 'booking.unavailable.title', 'booking.unavailable.body', { from: opened.facts.workspaceName, values: { study: studyNameOf(opened) } });
    }
    return redirect(reply, base);
  });

  const showCancel = async (reply: FastifyReply, status: number, opened: OpenedLink, base: string, booking: BookingRow, extra: { reason?: string; error?: string } = {}) => {
    const { i18n, facts, link } = opened;
    const { zone } = zoneFor(undefined, booking, await scheduleOf(opened));
    const formats = formatsOf(i18n, zone, zoneLabel(i18n.locale, zone, new Date(booking.starts_at)));
    return sendPage(
      reply,
      status,
      <CancelPage
        i18n={i18n}
        from={facts.workspaceName}
        study={studyNameOf(opened)}
        when={formats.session(new Date(booking.starts_at), new Date(booking.ends_at))}
        action={`${base}/cancel`}
        formToken={formToken(formKey, link.linkId, 'cancel')}
        keepHref={base}
        {...extra}
      />,
    );
  };

  app.get<{ Params: { token: string } }>('/p/:token/cancel', async (request, reply) => {
    const opened = await openForBooking(request, reply);
    if (!opened) return reply;
    const base = baseOf(request);
    const booking = await liveBookingOf(opened);
    if (!booking) return redirect(reply, base);
    if (!personMayChange(await scheduleOf(opened), booking.starts_at, deps.clock.now())) return locked(reply, opened, 200);
    return showCancel(reply, 200, opened, base, booking);
  });

  app.post<{ Params: { token: string }; Body: Posted }>('/p/:token/cancel', { config: { acceptsForm: true } }, async (request, reply) => {
    const posted: Posted = request.body && typeof request.body === 'object' ? request.body : {};
    if (isCrossSitePost(request, deps.config.publicUrl)) return forgedPost(request, reply);
    const opened = await openForBooking(request, reply);
    if (!opened) return reply;
    const { link, db, i18n } = opened;
    if (!formTokenIsValid(formKey, link.linkId, 'cancel', posted.formToken?.[0])) return formExpired(reply, opened);
    const base = baseOf(request);
    const booking = await liveBookingOf(opened);
    if (!booking) return redirect(reply, base);
    // The reason is the person's own words: kept as written (without control characters), at most 1000 characters.
    const typed = (posted.reason?.[0] ?? '').replace(/\r\n/g, '\n');
    const reason = typed.replace(/\p{Cc}/gu, (character) => (character === '\n' ? character : ' ')).trim();
    if ([...reason].length > REASON_MAX) return showCancel(reply, 400, opened, base, booking, { reason: typed.slice(0, REASON_MAX * 2), error: i18n.t('errors.tooLong', { max: REASON_MAX }) });
    try {
      await cancel(db, deps.clock, { workspaceId: link.workspaceId, studyId: link.studyId, bookingId: booking.booking_id, reason: reason === '' ? undefined : reason, actor: { by: 'PERSON' } });
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      if (error.status === 409 && error.items[0]?.path[0] === 'bookingId' && (await liveBookingOf(opened))) return locked(reply, opened, 409);
      if (error.status === 409 || error.status === 404) return redirect(reply, base);
      throw error;
    }
    const canceled = await bookingOfParticipant(db, link.workspaceId, link.participantId);
    return showBooking(reply, opened, base, canceled ?? booking, {});
  });

  app.get<{ Params: { token: string } }>('/p/:token/calendar.ics', async (request, reply) => {
    const opened = await openForBooking(request, reply);
    if (!opened) return reply;
    const booking = await bookingOfParticipant(opened.db, opened.link.workspaceId, opened.link.participantId);
    if (!booking) return unknown(reply, opened.i18n);
    const publicUrl = deps.config.publicUrl ?? `${request.protocol}://${request.host}`;
    setPageHeaders(reply, { cacheable: false });
    reply.header('Content-Disposition', 'attachment; filename="session.ics"');
    return reply
      .type('text/calendar; charset=utf-8')
      .send(
        bookingCalendarFile({
          bookingId: booking.booking_id,
          sequence: booking.sequence,
          publicUrl,
          startsAt: booking.starts_at,
          endsAt: booking.ends_at,
          summary: opened.i18n.t('calendar.summary', { study: studyNameOf(opened) }),
          canceled: booking.status === 'CANCELED',
          stamp: new Date(booking.updated_at),
        }),
      );
  });

  return {
    async pageOfLink(request, reply, opened, path) {
      return bookingHome(reply, opened, path, path, queryOf(request));
    },
    async afterScreener(opened, path, afterOptions = {}) {
      if (opened.link.purpose !== 'SCREENER') return undefined;
      return (await linkBooks(opened, afterOptions.qualified)) ? `${path}/book` : undefined;
    },
  };
}

/** The canceled session: a notice of two paragraphs (what happened, and how to take part again). */
function CanceledNotice(props: { i18n: Translator; from: string; paragraphs: string[] }) {
  return <NoticePage {...props} title={props.i18n.t('booking.canceled.title')} />;
}
