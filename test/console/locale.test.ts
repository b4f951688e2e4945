import { unwrap } from '@recruit-ops/sdk';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type ConsoleWorld, describeConsole, expectNoPageErrors, signIn, startConsole } from './browser.js';

/**
 * Dates, times and money in the viewer's locale and time zone: a browser set to German in
 * Auckland reads a session booked for 01:30 UTC as 14:30 New Zealand daylight time, in German,
 * with the zone named, and dollars with a decimal comma. The expectations are computed here with
 * Intl for that locale and zone, never written out.
 */
describeConsole('console: dates, times and money as the viewer reads them', () => {
  let world: ConsoleWorld;
  beforeAll(async () => {
    world = await startConsole();
  }, 120_000);
  afterAll(async () => world?.stop());

  const locale = 'de-DE';
  const timeZone = 'Pacific/Auckland';
  /** How the console writes a session's or an event's moment: day, time and the zone's name. */
  const zoned = (at: string, zone = timeZone) =>
    new Intl.DateTimeFormat(locale, { weekday: 'short', year: 'numeric', month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit', timeZoneName: 'short', timeZone: zone }).format(
      new Date(at),
    );

  it('shows a session, the event feed and an incentive in the browser’s locale and time zone, and books a session in that zone', async () => {
    const api = world.api();
    const studyId = unwrap(await api.POST('/studies', { body: { studyType: 'INTERVIEWS', recruitmentStrategy: 'IN_SERVICE', studyPlan: { name: 'Auckland interviews' } } })).studyId;
    const personIds = [];
    for (const [firstName, email] of [
      ['Aroha', 'aroha@locale.test'],
      ['Wiremu', 'wiremu@locale.test'],
    ]) {
      personIds.push(unwrap(await api.POST('/people', { body: { email: email!, firstName: firstName!, lastName: 'Ngata' } })).personId);
    }
    const participants = unwrap(await api.POST('/studies/{studyId}/participants', { params: { path: { studyId } }, body: { personIds } })).results;
    unwrap(await api.POST('/studies/{studyId}/launch', { params: { path: { studyId } } }));
    const session = '2031-03-04T01:30:00.000Z';
    unwrap(
      await api.PATCH('/studies/{studyId}/participants/{participantId}', {
        params: { path: { studyId, participantId: participants[0]!.participantId } },
        body: { status: 'SCHEDULED', interviewStartTime: session },
      }),
    );
    unwrap(await api.POST('/incentives', { body: { participantId: participants[0]!.participantId, type: 'RECRUITMENT_FEE', amountCents: 4050 } }));

    const expected = zoned(session);
    // The expectation is Auckland's wall time (14:30 on the 4th), not UTC's (01:30): it can tell them apart.
    expect(expected).toContain('14:30');
    expect(expected).not.toBe(zoned(session, 'UTC'));

    const page = await world.newPage({ locale, timezoneId: timeZone });
    await signIn(page, world.users.RESEARCHER.token);
    await page.goto(`/console/studies/${encodeURIComponent(studyId)}`);
    const row = page.getByRole('table', { name: 'Participants' }).locator('tbody tr', { hasText: 'aroha@locale.test' });
    const sessionCell = row.locator('td').nth(4);
    await expect.poll(() => sessionCell.textContent()).toBe(expected);
    expect(await sessionCell.locator('time').getAttribute('datetime')).toBe(session);
    // Money in the viewer's locale.
    const incentive = page.getByRole('table', { name: 'Incentives' }).locator('tbody tr', { hasText: 'aroha@locale.test' });
    await expect.poll(() => incentive.locator('td').nth(2).textContent()).toBe(new Intl.NumberFormat(locale, { style: 'currency', currency: 'USD' }).format(40.5));

    // A session booked in the form is the viewer's wall time: 9:00 on the 5th in Auckland is 20:00 UTC on the 4th.
    await page.getByLabel('Move wiremu@locale.test to').selectOption({ label: 'Schedule' });
    await page.getByRole('button', { name: 'Apply the move: wiremu@locale.test' }).click();
    const start = page.getByLabel(/^Session start/);
    expect(await page.locator(`label[for="${await start.getAttribute('id')}"]`).textContent()).toContain(`(${timeZone} time)`);
    await start.fill('2031-03-05T09:00');
    await page.getByRole('button', { name: 'Book session' }).click();
    const booked = '2031-03-04T20:00:00.000Z';
    await expect.poll(async () => unwrap(await api.GET('/studies/{studyId}/participants/{participantId}', { params: { path: { studyId, participantId: participants[1]!.participantId } } })).interviewStartTime).toBe(booked);
    await expect.poll(() => page.getByRole('table', { name: 'Participants' }).locator('tbody tr', { hasText: 'wiremu@locale.test' }).locator('td').nth(4).textContent()).toBe(zoned(booked));

    // The event feed: each moment as the API's occurredAt in the viewer's zone. (On a shared
    // PostgreSQL the API lists an event once older transactions end: wait for it there first.)
    const createdEvent = async () => unwrap(await api.GET('/study-status-events', { params: { query: { studyId } } })).results.find((event) => event.from === null);
    await expect.poll(createdEvent, { timeout: 60_000 }).toBeDefined();
    const created = (await createdEvent())!;
    await page.getByRole('link', { name: 'Status events of this study' }).click();
    const feed = page.getByRole('table', { name: /^Status events of / }).locator('tbody tr');
    await feed.filter({ hasText: 'created as' }).waitFor();
    const createdRow = feed.filter({ hasText: 'The study' }).last();
    expect(await createdRow.locator('td').first().textContent()).toBe(zoned(created.occurredAt));
    expectNoPageErrors(world, page);
  });
});
