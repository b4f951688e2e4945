import { Type } from '@sinclair/typebox';

const exampleFeed = { feedId: 'cfd_01JD0000000000000000000000', userId: 'usr_01JD0000000000000000000000', createdAt: '2026-12-08T10:00:00.000Z', lastUsedAt: '2026-12-08T10:15:00.000Z' };

const feedFields = {
  feedId: Type.String({ description: 'The feed\'s id (cfd_…).' }),
  userId: Type.String({ description: 'The user whose hosted sessions it shows: the token\'s user that made it.' }),
  createdAt: Type.String({ format: 'date-time' }),
  lastUsedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'When a calendar last fetched it (to the quarter hour); null: never.' }),
};

export const CalendarFeed = Type.Object(feedFields, {
  $id: 'CalendarFeed',
  title: 'CalendarFeed',
  description: "A subscribable calendar (iCalendar) of the sessions the user hosts. Its URL is shown once, when it is made: the service keeps only its token's SHA-256.",
  examples: [exampleFeed],
});

export const CreatedCalendarFeed = Type.Object(
  {
    ...feedFields,
    url: Type.String({
      description:
        'PUBLIC_URL/calendar/<token>.ics, to paste into a calendar application ("subscribe" or "add by URL"). The token (256 random bits) is a bearer secret: whoever holds the URL reads the calendar, without signing in. This is the one time it can be read.',
    }),
  },
  {
    $id: 'CreatedCalendarFeed',
    title: 'CreatedCalendarFeed',
    examples: [{ ...exampleFeed, lastUsedAt: null, url: 'https://recruit.example.com/calendar/3q2-7wEYk9Gm1pQxZ0aBcD4eF5gH6iJ7kL8mN9oP0rS.ics' }],
  },
);

export const CalendarFeedList = Type.Object(
  { calendarFeeds: Type.Array(Type.Ref(CalendarFeed), { description: 'The caller\'s feeds that are not revoked, oldest first (never their URLs).' }) },
  { title: 'CalendarFeedList', examples: [{ calendarFeeds: [exampleFeed] }] },
);

export const CalendarFeedParams = Type.Object({ feedId: Type.String({ minLength: 1, maxLength: 100, description: 'A feed of the caller (cfd_…).' }) }, { additionalProperties: false });

export const RevokedCalendarFeed = Type.Object(
  { feedId: Type.String(), revokedAt: Type.String({ format: 'date-time' }) },
  { title: 'RevokedCalendarFeed', examples: [{ feedId: exampleFeed.feedId, revokedAt: '2026-12-09T08:00:00.000Z' }] },
);

export const calendarFeedSchemas = [CalendarFeed, CreatedCalendarFeed];
