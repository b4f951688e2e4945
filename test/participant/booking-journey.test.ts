import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { unwrap } from '@recruit-ops/sdk';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type ConsoleWorld, describeConsole, expectNoAxeViolations, expectNoPageErrors, phoneViewport, startConsole } from '../console/browser.js';
import { type SmtpReceiver, startSmtpReceiver } from '../smtp-receiver.js';

/**
 * Booking a session as a person meets it (issue 34, items 2 and 4), in headless Chromium against
 * the compiled server, its clock fixed by the test helpers (Monday 4 January 2027, 06:00 UTC) so
 * that the open times are known: an invitation sent by the API with `{{ links.scheduling }}`,
 * received by a real SMTP server, its link opened at a phone's size with JavaScript off; a time
 * booked, moved and canceled; the screener's booking step at 1280×800 with JavaScript on, the
 * page's one script filling the browser's zone (Asia/Kathmandu); booking by keyboard alone; the
 * booking page in every shipped language. Every page checked by axe-core (no violation of any
 * impact) and for sideways scrolling. With PARTICIPANT_SCREENSHOTS=<dir> the phone-sized pages
 * are saved there (docs/participant-pages/ holds the ones the guide shows).
 */
describeConsole('participant: booking a session', () => {
  let world: ConsoleWorld;
  let smtp: SmtpReceiver;
  const operatorToken = `operator-${randomBytes(24).toString('base64url')}`;
  const screenshots = process.env.PARTICIPANT_SCREENSHOTS;
  const now = '2027-01-04T06:00:00.000Z';
  beforeAll(async () => {
    smtp = await startSmtpReceiver();
    world = await startConsole({
      SMTP_HOST: '127.0.0.1',
      SMTP_PORT: String(smtp.port),
      SMTP_SECURITY: 'none',
      MAIL_FROM: 'Research Team <research@journey.test>',
      PUBLIC_URL: 'https://recruit.journey.test',
      JOBS: 'on',
      JOB_POLL_SECONDS: '0.2',
      PARTICIPANT_RATE_LIMIT_MAX: '100000',
      TEST_HELPERS: '1',
      TEST_HELPERS_TOKEN: operatorToken,
    });
    const clock = await fetch(`${world.origin}/v1/test-helpers/clock`, { method: 'POST', headers: { authorization: `Bearer ${operatorToken}`, 'content-type': 'application/json' }, body: JSON.stringify({ now }) });
    expect(clock.status, await clock.text()).toBe(200);
    if (screenshots) mkdirSync(screenshots, { recursive: true });
  }, 120_000);
  afterAll(async () => {
    await world?.stop();
    await smtp?.close();
  });

  type Tab = Awaited<ReturnType<ConsoleWorld['newPage']>>;
  type Viewport = { width: number; height: number };
  const berlinMornings = { MONDAY: [{ start: '09:00', end: '12:00' }], TUESDAY: [{ start: '09:00', end: '12:00' }], WEDNESDAY: [{ start: '09:00', end: '12:00' }] };

  /** A launched interview study hosted by the researcher in Berlin (Monday to Wednesday, 09:00–12:00, 45 minutes on the hour), in `language`, with a screener when asked. */
  async function hostedStudy(options: { language?: string; screener?: boolean } = {}) {
    const api = world.api();
    const study = unwrap(
      await api.POST('/studies', { body: { studyType: 'INTERVIEWS', recruitmentStrategy: 'IN_SERVICE', studyPlan: { name: 'Checkout', externalName: 'Checkout interviews', language: options.language ?? 'en', scheduler: { interviewDurationMinutes: 45 } } } }),
    );
    const studyPath = { params: { path: { studyId: study.studyId } } };
    if (options.screener) {
      unwrap(await api.PUT('/studies/{studyId}/screener', { ...studyPath, body: { qualifyByDefault: true, showSchedulerToQualified: true, questions: [{ key: 'freq', name: 'How often do you shop online?', type: 'SHORT_FORM', isRequired: true }] } }));
    }
    unwrap(await api.POST('/studies/{studyId}/launch', studyPath));
    unwrap(await api.PUT('/studies/{studyId}/schedule', { ...studyPath, body: { slotIntervalMinutes: 60, hosts: [{ userId: world.users.RESEARCHER.userId, timeZone: 'Europe/Berlin', weeklyHours: berlinMornings, overrides: [] }] } }));
    return study.studyId;
  }

  async function participantIn(studyId: string, email = `booker-${Date.now()}-${Math.random().toString(36).slice(2)}@journey.test`) {
    const api = world.api();
    const person = unwrap(await api.POST('/people', { body: { email, firstName: 'Sam' } }));
    const participantId = unwrap(await api.POST('/studies/{studyId}/participants', { params: { path: { studyId } }, body: { personIds: [person.personId] } })).results[0]!.participantId;
    return { participantId, email };
  }

  async function linkOf(studyId: string, participantId: string, purpose: 'SCHEDULING' | 'SCREENER') {
    return new URL(unwrap(await world.api().POST('/studies/{studyId}/participants/{participantId}/links', { params: { path: { studyId, participantId } }, body: { purpose } })).url).pathname;
  }

  /** axe-core and the width check, in a twin tab with JavaScript on (its script left out: it would load the page again) when the tab has it off; a screenshot when asked. */
  async function expectGoodPage(page: Tab, where: string, viewport: Viewport, javaScriptEnabled: boolean, shot?: string) {
    let checked = page;
    if (!javaScriptEnabled) {
      checked = await world.twinOf(page, viewport, { withoutScripts: true });
    }
    await expectNoAxeViolations(checked);
    const { scrollWidth, innerWidth } = await checked.evaluate<{ scrollWidth: number; innerWidth: number }>('({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth })');
    expect(scrollWidth, `${where}: ${scrollWidth} px wide in ${innerWidth}`).toBeLessThanOrEqual(innerWidth);
    if (screenshots && shot && viewport.width === phoneViewport.width) await page.screenshot({ path: path.join(screenshots, `${shot}.png`), fullPage: true });
  }

  const bookingsOf = async (studyId: string) => unwrap(await world.api().GET('/studies/{studyId}/bookings', { params: { path: { studyId }, query: {} } })).results;

  it('goes from the invitation email to a booked session at 390×844 with JavaScript off, then moves and cancels it', async () => {
    const studyId = await hostedStudy();
    const { participantId, email } = await participantIn(studyId);
    const api = world.api();
    const template = unwrap(
      await api.POST('/message-templates', {
        body: { name: `Booking ${Date.now()}`, subject: 'Choose a time for your interview', textBody: 'Hi {{ person.firstName }},\n\nPlease choose a time for {{ study.externalName }}: {{ links.scheduling }}\n\n{{ links.unsubscribe }}' },
      }),
    );
    unwrap(await api.POST('/studies/{studyId}/messages', { params: { path: { studyId } }, body: { templateId: template.templateId, participantIds: [participantId] } }));
    const deadline = Date.now() + 30_000;
    while (smtp.to(email).length === 0 && Date.now() < deadline) await sleep(100);
    const [mail] = smtp.to(email);
    expect(mail, 'the invitation arrived').toBeDefined();
    const link = /https:\/\/recruit\.journey\.test(\/p\/[A-Za-z0-9_-]{43})\s/.exec(mail!.parsed.text ?? '')?.[1];
    expect(link, mail!.parsed.text).toBeDefined();

    const page = await world.newPage({ viewport: phoneViewport, javaScriptEnabled: false, start: false });
    expectNoPageErrors(world, page);
    await page.goto(link!);
    await page.getByRole('heading', { level: 1, name: 'Choose a time for Checkout interviews' }).waitFor();
    expect(await page.locator('main').innerText()).toContain('Times are shown in the time zone Europe/Berlin, GMT+1.');
    await expectGoodPage(page, 'the open times', phoneViewport, false, '10-booking-times');
    // Nothing chosen: the error summary links to the first time.
    await page.getByRole('button', { name: 'Book this time' }).click();
    await page.getByRole('alert').getByRole('link', { name: 'Choose a time — Choose a time.', exact: true }).waitFor();
    await expectGoodPage(page, 'the open times with an error', phoneViewport, false);
    // The zone chosen in the select, without script.
    await page.getByLabel('Time zone').selectOption('Asia/Kathmandu');
    await page.getByRole('button', { name: 'Show times in this zone' }).click();
    await page.getByText('Times are shown in the time zone Asia/Kathmandu, GMT+5:45.').waitFor();
    await page.getByRole('radio', { name: /2:45\sPM.*10:00\sAM for the host, Berlin/ }).first().check();
    await page.getByRole('button', { name: 'Book this time' }).click();

    await page.getByRole('heading', { level: 1, name: 'Your session is booked' }).waitFor();
    const booked = await page.locator('main').innerText();
    expect(booked).toMatch(/Tuesday, January 5, 2027, 2:45\s–\s3:30\sPM \(Asia\/Kathmandu, GMT\+5:45\)/);
    expect(booked).toMatch(/10:00\sAM, Berlin/);
    await expectGoodPage(page, 'the booked session', phoneViewport, false, '11-booking-booked');
    const [booking] = await bookingsOf(studyId);
    expect(booking).toMatchObject({ startTime: '2027-01-05T09:00:00.000Z', bookedBy: 'PERSON', personTimeZone: 'Asia/Kathmandu', status: 'BOOKED' });
    const calendar = await page.request.get(`${link}/calendar.ics`);
    expect(calendar.headers()['content-type']).toBe('text/calendar; charset=utf-8');
    expect(await calendar.text()).toContain('DTSTART:20270105T090000Z');

    await page.getByRole('link', { name: 'Change the time' }).click();
    await page.getByRole('heading', { level: 1, name: 'Choose a new time for Checkout interviews' }).waitFor();
    await expectGoodPage(page, 'the move page', phoneViewport, false, '12-booking-move');
    await page.getByRole('group', { name: 'Wednesday, January 6, 2027' }).getByRole('radio').first().check();
    await page.getByRole('button', { name: 'Move my session to this time' }).click();
    await page.getByRole('heading', { level: 1, name: 'Your session is booked' }).waitFor();
    expect(await page.locator('main').innerText()).toContain('Wednesday, January 6, 2027');
    expect((await bookingsOf(studyId))[0]).toMatchObject({ startTime: '2027-01-06T08:00:00.000Z', sequence: 1 });

    await page.getByRole('link', { name: 'Cancel the session' }).click();
    await page.getByRole('heading', { level: 1, name: 'Cancel your session' }).waitFor();
    await expectGoodPage(page, 'the cancel page', phoneViewport, false, '13-booking-cancel');
    await page.getByLabel('Why are you canceling? (optional)').fill('I am travelling that week.');
    await page.getByRole('button', { name: 'Cancel my session' }).click();
    await page.getByRole('heading', { level: 1, name: 'Your session is canceled' }).waitFor();
    expect(await page.locator('main').innerText()).toContain('the time is free for someone else');
    await expectGoodPage(page, 'the canceled session', phoneViewport, false, '14-booking-canceled');
    expect((await bookingsOf(studyId))[0]).toMatchObject({ status: 'CANCELED', canceledBy: 'PERSON', cancelReason: 'I am travelling that week.' });
    // The invitation's link again: the canceled session, and no way to book from it.
    await page.goto(link!);
    await page.getByRole('heading', { level: 1, name: 'Your session is canceled' }).waitFor();
    expect(await page.getByRole('button').count()).toBe(0);
  });

  it('books from the screener at 1280×800 with JavaScript on: the script shows the browser’s zone (Asia/Kathmandu)', async () => {
    const studyId = await hostedStudy({ screener: true });
    const { participantId } = await participantIn(studyId);
    const link = await linkOf(studyId, participantId, 'SCREENER');
    const viewport = { width: 1280, height: 800 };
    const page = await world.newPage({ viewport, timezoneId: 'Asia/Kathmandu', start: false });
    expectNoPageErrors(world, page);
    await page.goto(link);
    await page.getByLabel('How often do you shop online?').fill('Every week');
    await page.getByRole('button', { name: 'Send my answers' }).click();
    await page.getByRole('heading', { level: 1, name: 'Choose a time for Checkout interviews' }).waitFor();
    // The one script read the browser's zone and asked for it (ICU may spell it Katmandu).
    await page.waitForURL(/\/book\?tz=Asia%2FKath?mandu$/);
    await page.getByText(/Times are shown in the time zone Asia\/Kath?mandu, GMT\+5:45\./).waitFor();
    await expectGoodPage(page, 'the booking step', viewport, true);
    await page.getByRole('radio', { name: /3:45\sPM.*11:00\sAM for the host, Berlin/ }).first().check();
    await page.getByRole('button', { name: 'Book this time' }).click();
    await page.getByRole('heading', { level: 1, name: 'Your session is booked' }).waitFor();
    await expectGoodPage(page, 'the booked session', viewport, true);
    expect((await bookingsOf(studyId))[0]).toMatchObject({ startTime: '2027-01-04T10:00:00.000Z', bookedBy: 'PERSON' });
    expect((await bookingsOf(studyId))[0]!.personTimeZone).toMatch(/^Asia\/Kath?mandu$/);
  });

  it('is booked by keyboard alone (Tab, Space, Enter), the focus always visible', async () => {
    const studyId = await hostedStudy();
    const { participantId } = await participantIn(studyId);
    const link = await linkOf(studyId, participantId, 'SCHEDULING');
    const page = await world.newPage({ viewport: phoneViewport, timezoneId: 'Europe/Berlin', start: false });
    expectNoPageErrors(world, page);
    await page.goto(link);
    await page.getByRole('button', { name: 'Book this time' }).waitFor();
    const focused = () => page.evaluate<string>('(() => { const e = document.activeElement; return e ? `${e.tagName}:${e.getAttribute("type") ?? ""}:${e.getAttribute("name") ?? e.textContent ?? ""}` : "" })()');
    const outlined = () => page.evaluate<string>('getComputedStyle(document.activeElement).outlineStyle');
    const tabTo = async (pattern: RegExp) => {
      for (let presses = 0; presses < 20; presses++) {
        await page.keyboard.press('Tab');
        if (pattern.test(await focused())) return;
      }
      throw new Error(`never focused ${pattern}`);
    };
    await tabTo(/^INPUT:radio:startTime/);
    expect(await outlined()).not.toBe('none');
    await page.keyboard.press('Space');
    expect(await page.getByRole('radio', { checked: true }).count()).toBe(1);
    // The first open time (the host, shared by this file's studies, may be taken at earlier ones).
    const chosen = await page.getByRole('radio', { checked: true }).getAttribute('value');
    await tabTo(/^BUTTON:submit:Book this time/);
    expect(await outlined()).not.toBe('none');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Your session is booked' }).waitFor();
    await expectNoAxeViolations(page);
    expect((await bookingsOf(studyId))[0]).toMatchObject({ startTime: chosen, personTimeZone: 'Europe/Berlin' });
  });

  it('shows the booking page in every shipped language, right to left in Arabic, with no axe violation', async () => {
    const expected: Record<string, string> = { en: 'Book this time', de: 'Diesen Termin buchen', fr: 'Réserver cet horaire', es: 'Reservar este horario', ar: 'احجز هذا الموعد' };
    for (const [language, submit] of Object.entries(expected)) {
      const studyId = await hostedStudy({ language });
      const { participantId } = await participantIn(studyId);
      const link = await linkOf(studyId, participantId, 'SCHEDULING');
      const page = await world.newPage({ viewport: phoneViewport, javaScriptEnabled: false, start: false });
      await page.goto(link);
      expect(await page.getAttribute('html', 'lang')).toBe(language);
      expect(await page.getAttribute('html', 'dir')).toBe(language === 'ar' ? 'rtl' : 'ltr');
      await page.getByRole('button', { name: submit }).waitFor();
      await expectGoodPage(page, `the booking page in ${language}`, phoneViewport, false);
    }
  });
});
