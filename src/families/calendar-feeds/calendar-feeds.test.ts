import ICAL from 'ical.js';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cancelBooking, createBookingWorld, makeHost, makeSession } from '../../../test/booking-rows-factory.js';
import { call, createTenant, startTestService, type Tenant, type TestService } from '../../../test/harness.js';
import { describeSecurity } from '../../../test/security.js';
import { setUserStatus } from '../workspaces/service.js';

let service: TestService;

beforeAll(async () => {
  service = await startTestService({ publicUrl: 'https://recruit.example.test' });
});

afterAll(async () => {
  await service?.stop();
});

const publicGet = (path: string, target: TestService = service) => target.app.inject({ method: 'GET', url: path });
const pathOf = (url: string) => new URL(url).pathname;
const createFeed = async (token: string) => {
  const response = await call(service, 'POST', '/calendar-feeds', { token });
  expect(response.statusCode, response.body).toBe(201);
  return response.json<{ feedId: string; userId: string; url: string; createdAt: string; lastUsedAt: string | null }>();
};

/** What a refused feed URL answers: the same for every reason. */
const refusal = (response: LightMyRequestResponse) => ({ status: response.statusCode, type: response.headers['content-type'], body: response.body });

function eventsOf(text: string) {
  const calendar = new ICAL.Component(ICAL.parse(text));
  return { calendar, events: calendar.getAllSubcomponents('vevent').map((vevent) => new ICAL.Event(vevent)) };
}

const inDays = (days: number, hour = 9) => {
  const at = new Date(Date.now() + days * 86_400_000);
  at.setUTCHours(hour, 0, 0, 0);
  return at.toISOString();
};

describe('calendar feeds', () => {
  let tenant: Tenant;
  let host: Awaited<ReturnType<typeof makeHost>>;

  beforeAll(async () => {
    tenant = await createTenant(service);
    host = await makeHost(service, tenant);
  });

  it("makes a feed for the caller, lists it without its URL, and serves the host's booked sessions in every study as a subscribable calendar with counts only", async () => {
    const booked = await createBookingWorld(service, tenant, { host, externalName: 'Checkout talk', startsAt: inDays(3), enqueue: false, person: { firstName: 'Ottoline', lastName: 'Featherstone' } });
    const studyName = 'Internal name';
    // A second study of the same host: a group session with 2 of 3 places booked.
    const group = await createBookingWorld(service, tenant, { host, startsAt: inDays(5), capacity: 3, enqueue: false });
    await service.deps.db.updateTable('sessions').set({ booked: 2 }).where('session_id', '=', group.sessionId).execute();
    const second = await createBookingWorld(service, tenant, { host, startsAt: inDays(6), enqueue: false });
    await service.deps.db.updateTable('bookings').set({ session_id: group.sessionId }).where('booking_id', '=', second.bookingId).execute();
    // Left out: a canceled booking's session, one older than 30 days, one with no booking, another host's.
    const canceled = await createBookingWorld(service, tenant, { host, startsAt: inDays(7), enqueue: false });
    await cancelBooking(service, tenant, canceled);
    const old = await createBookingWorld(service, tenant, { host, startsAt: inDays(-31), enqueue: false });
    const recent = await createBookingWorld(service, tenant, { host, startsAt: inDays(-29), enqueue: false });
    await makeSession(service, tenant, { studyId: booked.studyId, hostUserId: host.userId, startsAt: inDays(8) });
    const otherHost = await createBookingWorld(service, tenant, { startsAt: inDays(4), enqueue: false });

    const feed = await createFeed(host.token);
    expect(feed.feedId).toMatch(/^cfd_[0-9A-Z]{26}$/);
    expect(feed.userId).toBe(host.userId);
    expect(feed.lastUsedAt).toBeNull();
    expect(feed.url).toMatch(/^https:\/\/recruit\.example\.test\/calendar\/[A-Za-z0-9_-]{43}\.ics$/);
    const stored = await service.deps.db.selectFrom('calendar_feeds').selectAll().where('feed_id', '=', feed.feedId).executeTakeFirstOrThrow();
    expect(stored.token_sha256).toHaveLength(32);
    expect(JSON.stringify(stored)).not.toContain(pathOf(feed.url).slice(10, 53));

    const list = await call(service, 'GET', '/calendar-feeds', { token: host.token });
    expect(list.statusCode).toBe(200);
    expect(list.json()).toEqual({ calendarFeeds: [{ feedId: feed.feedId, userId: host.userId, createdAt: feed.createdAt, lastUsedAt: null }] });
    expect(list.body).not.toContain('/calendar/');

    const response = await publicGet(pathOf(feed.url));
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers['content-type']).toBe('text/calendar; charset=utf-8');
    expect(response.headers['referrer-policy']).toBe('no-referrer');
    expect(response.headers['cache-control']).toBe('private, no-store');
    const { calendar, events } = eventsOf(response.body);
    expect(calendar.getFirstPropertyValue('method')).toBe('PUBLISH');
    expect(calendar.getFirstPropertyValue('x-wr-calname')).toBe('Sessions you host (Test workspace)');
    expect(calendar.getFirstPropertyValue('x-wr-caldesc')).toContain('names no participant');
    expect(events.map((event) => event.uid)).toEqual([recent.sessionId, booked.sessionId, group.sessionId].map((id) => `${id}@recruit.example.test`));
    expect(events.map((event) => event.summary)).toEqual([`${studyName} (1 of 1 place booked)`, `${studyName} (1 of 1 place booked)`, `${studyName} (2 of 3 places booked)`]);
    expect(events[1]!.startDate.toJSDate().toISOString()).toBe(inDays(3));
    expect(events[1]!.description).toContain('names no participant');

    // Nothing of a participant: no address, name or id of a person, participant or booking.
    for (const world of [booked, group, second, recent]) {
      for (const secret of [world.personEmail, world.personId, world.participantId, world.bookingId]) expect(response.body).not.toContain(secret);
    }
    for (const name of ['Ottoline', 'Featherstone', 'Ana', 'Participant ']) expect(response.body).not.toContain(name);
    for (const left of [canceled, old, otherHost]) expect(response.body).not.toContain(left.sessionId);

    const used = await call(service, 'GET', '/calendar-feeds', { token: host.token });
    expect(used.json<{ calendarFeeds: { lastUsedAt: string | null }[] }>().calendarFeeds[0]!.lastUsedAt).not.toBeNull();
  });

  it('revokes a feed: its URL then answers as an unknown one, it leaves the list, and a second revocation is a 404', async () => {
    const user = await makeHost(service, tenant);
    const feed = await createFeed(user.token);
    expect((await publicGet(pathOf(feed.url))).statusCode).toBe(200);
    const revoked = await call(service, 'DELETE', `/calendar-feeds/${feed.feedId}`, { token: user.token });
    expect(revoked.statusCode, revoked.body).toBe(200);
    expect(revoked.json()).toEqual({ feedId: feed.feedId, revokedAt: expect.any(String) });
    expect((await call(service, 'GET', '/calendar-feeds', { token: user.token })).json()).toEqual({ calendarFeeds: [] });
    const unknown = await publicGet(`/calendar/${'A'.repeat(42)}A.ics`);
    expect(unknown.statusCode).toBe(404);
    expect(refusal(await publicGet(pathOf(feed.url)))).toEqual(refusal(unknown));
    const again = await call(service, 'DELETE', `/calendar-feeds/${feed.feedId}`, { token: user.token });
    expect(again.statusCode).toBe(404);
    expect(again.json()).toEqual({ errors: [{ message: 'Calendar feed not found', path: ['feedId'] }] });
  });

  it("answers another user's feed, and another workspace's, with 404 and leaves it working", async () => {
    const owner = await makeHost(service, tenant);
    const feed = await createFeed(owner.token);
    const colleague = await tenant.tokenFor('SUPER_ADMIN');
    const stranger = await createTenant(service, 'Other workspace');
    for (const token of [colleague.token, stranger.token]) {
      const response = await call(service, 'DELETE', `/calendar-feeds/${feed.feedId}`, { token });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({ errors: [{ message: 'Calendar feed not found', path: ['feedId'] }] });
      expect((await call(service, 'GET', '/calendar-feeds', { token })).json()).toEqual({ calendarFeeds: [] });
    }
    expect((await publicGet(pathOf(feed.url))).statusCode).toBe(200);
  });

  it('answers a forged, malformed, non-canonical, percent-encoded or revoked token, and a deactivated user\'s feed, with the same 404', async () => {
    const user = await makeHost(service, tenant);
    const feed = await createFeed(user.token);
    const token = pathOf(feed.url).slice('/calendar/'.length, -'.ics'.length);
    const revokedFeed = await createFeed(user.token);
    await call(service, 'DELETE', `/calendar-feeds/${revokedFeed.feedId}`, { token: user.token });
    const expected = refusal(await publicGet(`/calendar/${'B'.repeat(43)}.ics`));
    expect(expected.status).toBe(404);
    // The last character of 32 bytes in base64url carries 2 spare bits: one other spelling of the same bytes.
    const last = token.at(-1)!;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const sibling = alphabet[alphabet.indexOf(last) ^ 1]!;
    for (const path of [
      `/calendar/${token.slice(0, -1)}.ics`,
      `/calendar/${token}`,
      `/calendar/${token}.ICS`,
      `/calendar/${token}x.ics`,
      `/calendar/${token.slice(0, -1)}${sibling}.ics`,
      `/calendar/%${token.charCodeAt(0).toString(16).toUpperCase()}${token.slice(1)}.ics`,
      `/calendar/${'!'.repeat(43)}.ics`,
      pathOf(revokedFeed.url),
    ]) {
      expect(refusal(await publicGet(path)), path).toEqual(expected);
    }
    expect((await publicGet(pathOf(feed.url))).statusCode).toBe(200);
    await setUserStatus(service.deps.db, tenant.workspaceId, user.userId, 'DEACTIVATED');
    expect(refusal(await publicGet(pathOf(feed.url)))).toEqual(expected);
  });

  it('needs no API token, and an API token changes nothing', async () => {
    const user = await makeHost(service, tenant);
    const feed = await createFeed(user.token);
    const withToken = await service.app.inject({ method: 'GET', url: pathOf(feed.url), headers: { authorization: 'Bearer nonsense' } });
    expect(withToken.statusCode).toBe(200);
  });

  it('holds a user to 10 unrevoked feeds (409 naming calendarFeeds)', async () => {
    const user = await makeHost(service, tenant);
    for (let index = 0; index < 10; index++) await createFeed(user.token);
    const refused = await call(service, 'POST', '/calendar-feeds', { token: user.token });
    expect(refused.statusCode).toBe(409);
    expect(refused.json()).toEqual({ errors: [{ message: 'A user holds at most 10 calendar feeds: revoke one first', path: ['calendarFeeds'] }] });
  });

  it('rate-limits the feed URL per client address (429 with Retry-After)', async () => {
    const limited = await startTestService({ publicUrl: 'https://recruit.example.test', participantRateLimitMax: 2 }, { rateLimitKeyPrefix: `feeds-${Date.now()}` });
    try {
      const statuses: number[] = [];
      for (let index = 0; index < 3; index++) statuses.push((await publicGet(`/calendar/${'C'.repeat(43)}.ics`, limited)).statusCode);
      expect(statuses).toEqual([404, 404, 429]);
      expect((await publicGet(`/calendar/${'C'.repeat(43)}.ics`, limited)).headers['retry-after']).toBeDefined();
    } finally {
      await limited.stop();
    }
  });
});

describeSecurity('POST /calendar-feeds', () => service, {
  method: 'POST',
  right: 'studies:write',
  addressesResource: false,
  request: async () => ({ url: '/calendar-feeds' }),
});

describeSecurity('GET /calendar-feeds', () => service, {
  method: 'GET',
  right: 'studies:read',
  addressesResource: false,
  request: async () => ({ url: '/calendar-feeds' }),
});

describe('DELETE /calendar-feeds/{feedId}: security', () => {
  it('refuses a request without a token (401) and an unknown token (401)', async () => {
    const tenant = await createTenant(service);
    const feed = await createFeed(tenant.token);
    expect((await call(service, 'DELETE', `/calendar-feeds/${feed.feedId}`)).statusCode).toBe(401);
    expect((await call(service, 'DELETE', `/calendar-feeds/${feed.feedId}`, { token: 'nonsense' })).statusCode).toBe(401);
    expect((await call(service, 'DELETE', `/calendar-feeds/${feed.feedId}`, { token: tenant.token })).statusCode).toBe(200);
  });

  it('lets every role revoke its own feed (studies:read), an OBSERVER included', async () => {
    const tenant = await createTenant(service);
    const observer = await tenant.tokenFor('OBSERVER');
    // An OBSERVER cannot make one (studies:write); one made for them while they held a stronger role stays theirs to stop.
    expect((await call(service, 'POST', '/calendar-feeds', { token: observer.token })).statusCode).toBe(403);
    const researcher = await tenant.tokenFor('RESEARCHER');
    const feed = await createFeed(researcher.token);
    await service.deps.db.updateTable('users').set({ role: 'OBSERVER' }).where('user_id', '=', researcher.userId).execute();
    service.deps.principals.invalidateUser(tenant.workspaceId, researcher.userId);
    expect((await call(service, 'DELETE', `/calendar-feeds/${feed.feedId}`, { token: researcher.token })).statusCode).toBe(200);
  });
});
