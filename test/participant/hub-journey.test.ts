import { unwrap } from '@recruit-ops/sdk';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type ConsoleWorld, describeConsole, expectNoAxeViolations, expectNoPageErrors, phoneViewport, startConsole } from '../console/browser.js';
import { type SmtpReceiver, startSmtpReceiver } from '../smtp-receiver.js';

/**
 * A page of the person's own (issue 34, item 6), in headless Chromium against the compiled
 * server at a phone's size (390×844), JavaScript off: the sign-in asked for by keyboard alone, the
 * link received by a real SMTP server, Continue, the hub, the consent's signed copy downloaded and
 * the consent withdrawn, a detail edited, one study's messages stopped, the data downloaded, and
 * the erasure; every page checked by axe-core with no violation of any impact and no sideways
 * scroll. Then the hub in every shipped language, right to left in Arabic.
 */
describeConsole('participant: the person\'s own page', () => {
  let world: ConsoleWorld;
  let smtp: SmtpReceiver;
  beforeAll(async () => {
    smtp = await startSmtpReceiver();
    world = await startConsole({
      SMTP_HOST: '127.0.0.1',
      SMTP_PORT: String(smtp.port),
      SMTP_SECURITY: 'none',
      MAIL_FROM: 'Research Team <research@journey.test>',
      // http: the session cookie is then not Secure, as the browser talks plain HTTP to 127.0.0.1.
      PUBLIC_URL: 'http://recruit.journey.test',
      JOBS: 'on',
      JOB_POLL_SECONDS: '0.2',
    });
  }, 120_000);
  afterAll(async () => {
    await world?.stop();
    await smtp?.close();
  });

  type Tab = Awaited<ReturnType<ConsoleWorld['newPage']>>;

  async function expectGoodPage(page: Tab, where: string) {
    const checked = await world.twinOf(page, { width: 320, height: 844 });
    await expectNoAxeViolations(checked);
    const { scrollWidth, innerWidth } = await checked.evaluate<{ scrollWidth: number; innerWidth: number }>('({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth })');
    expect(scrollWidth, `${where}: ${scrollWidth} px wide in ${innerWidth}`).toBeLessThanOrEqual(innerWidth);
  }

  /** A person in a study with a consent signed on the page, and an editable property. */
  async function personWithConsent() {
    const api = world.api();
    const suffix = `${Date.now()}-${Math.random().toString(36).slice(2)}`;
    const property = unwrap(await api.POST('/properties/import', { body: [{ name: `Favourite shop ${suffix}`, propertyType: 'STRING', editableByPerson: true }] })).results[0]!.personProperty;
    const form = unwrap(
      await api.POST('/consent-forms', {
        body: { name: `Consent ${suffix}`, title: 'Consent to take part', body: 'We talk for 45 minutes.', language: 'en', requiredStatements: [{ id: 'read', text: 'I have read this.' }], optionalChoices: [] },
      }),
    );
    const study = unwrap(await api.POST('/studies', { body: { studyType: 'INTERVIEWS', recruitmentStrategy: 'IN_SERVICE', studyPlan: { name: 'Checkout', externalName: 'Checkout interviews', consentFormId: form.consentFormId } } }));
    const path = { params: { path: { studyId: study.studyId } } };
    unwrap(await api.POST('/studies/{studyId}/launch', path));
    const email = `hub-${suffix}@journey.test`;
    const person = unwrap(await api.POST('/people', { body: { email, firstName: 'Robin' } }));
    const participantId = unwrap(await api.POST('/studies/{studyId}/participants', { ...path, body: { personIds: [person.personId] } })).results[0]!.participantId;
    const link = unwrap(await api.POST('/studies/{studyId}/participants/{participantId}/links', { params: { path: { studyId: study.studyId, participantId } }, body: { purpose: 'CONSENT' } }));
    const page = await world.newPage({ viewport: phoneViewport, javaScriptEnabled: false, start: false });
    await page.goto(new URL(link.url).pathname);
    await page.getByRole('checkbox', { name: 'I have read this.' }).check();
    await page.getByLabel('Your full name').fill('Robin Reader');
    await page.getByRole('button', { name: 'Sign the form' }).click();
    await page.getByRole('heading', { level: 1, name: 'Thank you for signing' }).waitFor();
    await page.context().close();
    return { email, personId: person.personId, property, studyId: study.studyId, participantId };
  }

  async function signInLink(email: string) {
    const deadline = Date.now() + 30_000;
    const mails = () => smtp.to(email).filter((mail) => (mail.parsed.text ?? '').includes('/me/link/'));
    while (mails().length === 0 && Date.now() < deadline) await sleep(100);
    const [mail] = mails();
    expect(mail, 'the sign-in link arrived').toBeDefined();
    return /http:\/\/recruit\.journey\.test(\/me\/link\/[A-Za-z0-9_-]{43})/.exec(mail!.parsed.text ?? '')![1]!;
  }

  it('signs in by keyboard, then downloads and withdraws a consent, edits a detail, stops messages, downloads the data and erases it all; no axe violation', async () => {
    const { email, personId, property } = await personWithConsent();
    const page = await world.newPage({ viewport: phoneViewport, javaScriptEnabled: false, start: false });
    expectNoPageErrors(world, page);
    await page.goto(`/me/${world.workspaceId}`);
    await page.getByRole('heading', { level: 1, name: 'See what we hold about you' }).waitFor();
    await expectGoodPage(page, 'the sign-in page');

    // Keyboard alone: the skip link, the address, the button.
    const focused = () => page.evaluate<string>('(() => { const e = document.activeElement; return e ? `${e.tagName}:${e.getAttribute("name") ?? e.textContent ?? ""}` : "" })()');
    await page.keyboard.press('Tab');
    expect(await focused()).toMatch(/^A:/);
    await page.keyboard.press('Tab');
    expect(await focused()).toBe('INPUT:email');
    await page.keyboard.type(email);
    await page.keyboard.press('Tab');
    expect(await focused()).toMatch(/^BUTTON:Send me a link/);
    expect(await page.evaluate<string>('getComputedStyle(document.activeElement).outlineStyle')).not.toBe('none');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Check your email' }).waitFor();
    await expectGoodPage(page, 'the link is on its way');

    await page.goto(await signInLink(email));
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    await expectGoodPage(page, 'the link\'s Continue');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    expect(await focused()).toMatch(/^BUTTON:Continue/);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Your page' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/me');
    await expectGoodPage(page, 'the hub');

    // The signed copy.
    const download = page.waitForEvent('download');
    await page.getByRole('link', { name: 'Download the signed copy (PDF) of your consent to Checkout interviews' }).click();
    const file = await download;
    expect(file.suggestedFilename()).toMatch(/^consent-cfm_.*\.pdf$/);

    await page.getByRole('button', { name: 'Withdraw my consent to Checkout interviews' }).click();
    await page.getByRole('status').getByText('Your consent is withdrawn.').waitFor();
    await expectGoodPage(page, 'the hub after a withdrawal');

    await page.getByLabel(property.name).fill('The corner shop');
    await page.getByRole('button', { name: 'Save my details' }).click();
    await page.getByRole('status').getByText('Your details are saved.').waitFor();
    const person = unwrap(await world.api().GET('/people/{personId}', { params: { path: { personId } } }));
    expect(person.properties[property.propertyId]).toBe('The corner shop');

    await page.getByRole('button', { name: 'Stop messages about Checkout interviews' }).click();
    await page.getByRole('status').getByText('You will get no more messages about this study.').waitFor();
    await expectGoodPage(page, 'the hub after stopping a study\'s messages');

    const data = page.waitForEvent('download');
    await page.getByRole('link', { name: 'Download my data (JSON)' }).click();
    const json = await data;
    expect(json.suggestedFilename()).toBe('my-data.json');

    await page.getByRole('link', { name: 'Delete everything about me' }).click();
    await page.getByRole('heading', { level: 1, name: 'Are you sure you want everything about you deleted?' }).waitFor();
    await expectGoodPage(page, 'the erasure\'s confirmation');
    await page.getByRole('button', { name: 'Yes, delete everything about me' }).click();
    await page.getByRole('heading', { level: 1, name: 'Everything about you is deleted' }).waitFor();
    await expectGoodPage(page, 'the erasure done');
    await page.goto('/me');
    await page.getByRole('heading', { level: 1, name: 'You are signed out' }).waitFor();
  });

  it('shows the hub in every shipped language, right to left in Arabic, with no axe violation', async () => {
    const expected: Record<string, string> = { en: 'Your page', de: 'Ihre Seite', fr: 'Votre page', es: 'Su página', ar: 'صفحتك' };
    // The five people sign in at once (each waits for an email); their pages are checked in turn.
    const signedIn = await Promise.all(
      Object.entries(expected).map(async ([language, title]) => {
        const { email } = await personWithConsent();
        const page = await world.newPage({ viewport: phoneViewport, javaScriptEnabled: false, locale: language, start: false });
        await page.goto(`/me/${world.workspaceId}`);
        expect(await page.getAttribute('html', 'lang')).toBe(language);
        await page.locator('input[name=email]').fill(email);
        await page.locator('button[type=submit]').click();
        await page.goto(await signInLink(email));
        await page.locator('button[type=submit]').click();
        await page.getByRole('heading', { level: 1, name: title }).waitFor();
        return { language, page };
      }),
    );
    for (const { language, page } of signedIn) {
      expect(await page.getAttribute('html', 'dir')).toBe(language === 'ar' ? 'rtl' : 'ltr');
      await expectGoodPage(page, `the hub in ${language}`);
    }
  });
});
