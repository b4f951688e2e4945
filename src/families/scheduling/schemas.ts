import { type Static, Type } from '@sinclair/typebox';
import { IsoDateTime, ListQuery, paged, Text } from '../../http/schemas.js';

/** The most hosts one study may have. */
export const MAX_HOSTS = 20;
/** The widest window of times one slots request may ask for. */
export const MAX_SLOT_WINDOW_DAYS = 62;

const Minutes = (minimum: number, maximum: number, description: string) => Type.Integer({ minimum, maximum, description });
const WallTime = (description: string) => Type.String({ pattern: '^([01][0-9]|2[0-3]):[0-5][0-9]$|^24:00$', description, examples: ['09:00'] });
const TimeZoneName = (description: string) => Type.String({ minLength: 1, maxLength: 64, description, examples: ['Europe/Berlin'] });

export const TimeRange = Type.Object(
  { start: WallTime("Local wall time 'HH:MM', 24-hour."), end: WallTime("Local wall time 'HH:MM' after start; '24:00' ends the day.") },
  { $id: 'HostTimeRange', title: 'HostTimeRange', additionalProperties: false, description: "A range of a host's day in the host's time zone." },
);

const DayRanges = Type.Array(Type.Ref(TimeRange), { maxItems: 12 });

export const WeeklyHours = Type.Object(
  {
    MONDAY: Type.Optional(DayRanges),
    TUESDAY: Type.Optional(DayRanges),
    WEDNESDAY: Type.Optional(DayRanges),
    THURSDAY: Type.Optional(DayRanges),
    FRIDAY: Type.Optional(DayRanges),
    SATURDAY: Type.Optional(DayRanges),
    SUNDAY: Type.Optional(DayRanges),
  },
  {
    additionalProperties: false,
    description: 'Hours per weekday; a day left out or empty is not available.',
    examples: [{ MONDAY: [{ start: '09:00', end: '12:00' }, { start: '13:00', end: '17:00' }], WEDNESDAY: [{ start: '09:00', end: '17:00' }] }],
  },
);

export const DateOverride = Type.Object(
  {
    date: Type.String({ format: 'date', description: "A date in the host's time zone." }),
    hours: Type.Array(Type.Ref(TimeRange), { maxItems: 12, description: "Replaces that date's weekly hours: extra or other hours; an empty list is a day off." }),
  },
  { $id: 'HostDateOverride', title: 'HostDateOverride', additionalProperties: false },
);

export const Host = Type.Object(
  {
    userId: Type.String({ minLength: 1, maxLength: 100, description: 'An ACTIVE user of the workspace who hosts sessions.' }),
    timeZone: TimeZoneName('The IANA time zone the hours are in.'),
    weeklyHours: WeeklyHours,
    overrides: Type.Array(Type.Ref(DateOverride), { maxItems: 366, description: 'Dates whose hours differ from the weekly hours, each date once.' }),
  },
  { $id: 'StudyHost', title: 'StudyHost', additionalProperties: false },
);

const scheduleFields = {
  durationMinutes: Minutes(5, 720, "The session's length. Default: the study plan's scheduler.interviewDurationMinutes, else 60."),
  bufferBeforeMinutes: Minutes(0, 720, "Free time the host keeps before each session: no other session of the host may reach into it. Default 0."),
  bufferAfterMinutes: Minutes(0, 720, 'Free time the host keeps after each session. Default 0.'),
  minimumNoticeMinutes: Minutes(0, 129_600, 'A time opens for booking only this long before it starts. Default 240 (4 hours).'),
  horizonDays: Type.Integer({ minimum: 1, maximum: 365, description: 'How far ahead times open for booking, in days from now. Default 30.' }),
  dailyCap: Type.Union([Type.Integer({ minimum: 1, maximum: 100 }), Type.Null()], { description: "The most sessions of this study per host per day (the host's date); null: no cap. Default null." }),
  capacity: Type.Integer({ minimum: 1, maximum: 100, description: 'Places per session: 1 for INTERVIEWS, 1 or more for GROUP_INTERVIEW. Default 1.' }),
  slotIntervalMinutes: Type.Union([Type.Integer({ minimum: 5, maximum: 720 }), Type.Null()], { description: "Minutes between the start times offered within the host's hours; null: the session's length. Default null." }),
  personChangeCutoffMinutes: Type.Union([Type.Integer({ minimum: 0, maximum: 43_200 }), Type.Null()], {
    description: 'The person may move or cancel their own session until this long before it starts; null: never (only the team can). Default 1440 (24 hours).',
  }),
  reminderOffsetsMinutes: Type.Array(Type.Integer({ minimum: 5, maximum: 20_160 }), { maxItems: 4, uniqueItems: true, description: 'Reminders to the person, minutes before the session. Default [1440, 60].' }),
};

export const StudySchedule = Type.Object(
  {
    studyId: Type.String(),
    ...scheduleFields,
    durationMinutes: Minutes(5, 720, "The session's length: as set, else the study plan's scheduler.interviewDurationMinutes, else 60."),
    hosts: Type.Array(Type.Ref(Host), { description: 'In the order they were given.' }),
    updatedAt: Type.Union([IsoDateTime(), Type.Null()], { description: 'null: never set (the defaults, and no host).' }),
  },
  {
    $id: 'StudySchedule',
    title: 'StudySchedule',
    description: "How a study's sessions are booked: who hosts them and when, and the rules every booking keeps.",
    examples: [
      {
        studyId: 'stu_01JD0000000000000000000000',
        durationMinutes: 45,
        bufferBeforeMinutes: 0,
        bufferAfterMinutes: 15,
        minimumNoticeMinutes: 240,
        horizonDays: 21,
        dailyCap: 4,
        capacity: 1,
        slotIntervalMinutes: 30,
        personChangeCutoffMinutes: 1440,
        reminderOffsetsMinutes: [1440, 60],
        hosts: [{ userId: 'usr_01JD0000000000000000000000', timeZone: 'Europe/Berlin', weeklyHours: { TUESDAY: [{ start: '09:00', end: '17:00' }] }, overrides: [{ date: '2026-12-24', hours: [] }] }],
        updatedAt: '2026-11-22T10:00:00.000Z',
      },
    ],
  },
);

export const PutStudyScheduleBody = Type.Composite(
  [
    Type.Partial(Type.Object(scheduleFields)),
    Type.Object({ hosts: Type.Array(Host, { maxItems: MAX_HOSTS, description: 'Every host of the study, each user once: the list replaces the one before.' }) }),
  ],
  {
    additionalProperties: false,
    examples: [{ durationMinutes: 45, bufferAfterMinutes: 15, hosts: [{ userId: 'usr_01JD0000000000000000000000', timeZone: 'Europe/Berlin', weeklyHours: { TUESDAY: [{ start: '09:00', end: '17:00' }] }, overrides: [] }] }],
  },
);
export type PutStudyScheduleBody = Static<typeof PutStudyScheduleBody>;

export const Slot = Type.Object(
  {
    startTime: IsoDateTime('The instant the session starts (UTC).'),
    endTime: IsoDateTime('The instant it ends.'),
    hostUserId: Type.String(),
    hostTimeZone: Type.String({ description: "The host's IANA time zone." }),
    hostLocalStartTime: Type.String({ description: "The start as the host's clock shows it, ISO 8601 with the offset." }),
    localStartTime: Type.String({ description: 'The start in the time zone asked for (`timeZone`), ISO 8601 with the offset.' }),
    remaining: Type.Integer({ minimum: 1, description: 'Places still open.' }),
  },
  { $id: 'Slot', title: 'Slot' },
);

export const SlotList = Type.Object(
  { timeZone: Type.String({ description: 'The zone localStartTime is in.' }), slots: Type.Array(Type.Ref(Slot)) },
  {
    title: 'SlotList',
    examples: [
      {
        timeZone: 'America/New_York',
        slots: [
          {
            startTime: '2026-12-01T14:00:00.000Z',
            endTime: '2026-12-01T14:45:00.000Z',
            hostUserId: 'usr_01JD0000000000000000000000',
            hostTimeZone: 'Europe/Berlin',
            hostLocalStartTime: '2026-12-01T15:00:00.000+01:00',
            localStartTime: '2026-12-01T09:00:00.000-05:00',
            remaining: 1,
          },
        ],
      },
    ],
  },
);

export const SlotsQuery = Type.Object(
  {
    from: Type.Optional(IsoDateTime('Start of the window; default now.')),
    to: Type.Optional(IsoDateTime(`End of the window (exclusive); default the booking horizon; at most ${MAX_SLOT_WINDOW_DAYS} days after from.`)),
    timeZone: Type.Optional(TimeZoneName('The IANA zone localStartTime is shown in; default UTC.')),
  },
  { additionalProperties: false },
);

const bookingStatuses = ['BOOKED', 'CANCELED'] as const;
const actors = ['PERSON', 'TEAM'] as const;

const exampleBooking = {
  bookingId: 'bkg_01JD0000000000000000000000',
  studyId: 'stu_01JD0000000000000000000000',
  participantId: 'ptc_01JD0000000000000000000000',
  personId: 'per_01JD0000000000000000000000',
  sessionId: 'ses_01JD0000000000000000000000',
  hostUserId: 'usr_01JD0000000000000000000000',
  startTime: '2026-12-01T14:00:00.000Z',
  endTime: '2026-12-01T14:45:00.000Z',
  status: 'BOOKED',
  bookedBy: 'PERSON',
  bookedByUserId: null,
  personTimeZone: 'America/New_York',
  sequence: 0,
  cancelReason: null,
  canceledBy: null,
  canceledAt: null,
  createdAt: '2026-11-22T10:00:00.000Z',
  updatedAt: '2026-11-22T10:00:00.000Z',
};

export const Booking = Type.Object(
  {
    bookingId: Type.String(),
    studyId: Type.String(),
    participantId: Type.String(),
    personId: Type.String(),
    sessionId: Type.String({ description: 'The session: participants booked into one group session share it.' }),
    hostUserId: Type.String(),
    startTime: IsoDateTime(),
    endTime: IsoDateTime(),
    status: Type.Union(bookingStatuses.map((status) => Type.Literal(status)), { description: 'BOOKED: holds its place; CANCELED: freed it.' }),
    bookedBy: Type.Union(actors.map((actor) => Type.Literal(actor)), { description: 'PERSON: on their page; TEAM: through the API.' }),
    bookedByUserId: Type.Union([Type.String(), Type.Null()]),
    personTimeZone: Type.Union([Type.String(), Type.Null()], { description: "The zone the person's messages show times in; null: the host's." }),
    sequence: Type.Integer({ minimum: 0, description: 'Raised by every move and the cancellation: the calendar invitation’s SEQUENCE.' }),
    cancelReason: Type.Union([Type.String(), Type.Null()], { description: 'Why it was canceled, if given. A reason the person wrote reads "***" for a token without the personal-data right.' }),
    canceledBy: Type.Union([...actors.map((actor) => Type.Literal(actor)), Type.Null()]),
    canceledAt: Type.Union([IsoDateTime(), Type.Null()]),
    createdAt: IsoDateTime(),
    updatedAt: IsoDateTime(),
  },
  {
    $id: 'Booking',
    title: 'Booking',
    description: "A participant's place in a session of a study. A session's time set by PATCHing a participant's interviewStartTime is not a booking: it holds no place.",
    examples: [exampleBooking],
  },
);

export const BookingList = paged(Type.Ref(Booking), 'BookingList', exampleBooking);

export const BookingsQuery = Type.Object(
  { ...ListQuery.properties, status: Type.Optional(Type.Union(bookingStatuses.map((status) => Type.Literal(status)), { description: 'Only bookings with this status.' })) },
  { additionalProperties: false },
);

export const CreateBookingBody = Type.Object(
  {
    participantId: Type.String({ minLength: 1, maxLength: 100 }),
    startTime: IsoDateTime('An open time of the study (GET /studies/{studyId}/slots).'),
    hostUserId: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'The host; left out: the first host with room at that time.' })),
    personTimeZone: Type.Optional(TimeZoneName("The zone the person's messages show times in; left out: the host's.")),
  },
  { additionalProperties: false, examples: [{ participantId: 'ptc_01JD0000000000000000000000', startTime: '2026-12-01T14:00:00.000Z', personTimeZone: 'America/New_York' }] },
);
export type CreateBookingBody = Static<typeof CreateBookingBody>;

export const MoveBookingBody = Type.Object(
  {
    startTime: IsoDateTime('An open time of the study.'),
    hostUserId: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'The host; left out: the same host if they have room then, else the first with room.' })),
  },
  { additionalProperties: false, examples: [{ startTime: '2026-12-02T14:00:00.000Z' }] },
);
export type MoveBookingBody = Static<typeof MoveBookingBody>;

export const CancelBookingBody = Type.Object(
  { reason: Type.Optional(Text({ minLength: 1, maxLength: 1000, description: 'Why, recorded with the booking.' })) },
  { additionalProperties: false, examples: [{ reason: 'The host is ill' }] },
);
export type CancelBookingBody = Static<typeof CancelBookingBody>;

export const StudyParams = Type.Object({ studyId: Type.String({ minLength: 1, maxLength: 200 }) });
export const BookingParams = Type.Object({ studyId: Type.String({ minLength: 1, maxLength: 200 }), bookingId: Type.String({ minLength: 1, maxLength: 200 }) });

export const schedulingSchemas = [TimeRange, DateOverride, Host, StudySchedule, Slot, Booking];
