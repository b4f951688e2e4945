import { unwrap } from '@recruit-ops/sdk';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type ConsoleWorld, describeConsole, expectNoAxeViolations, expectNoPageErrors, phoneViewport, startConsole } from '../console/browser.js';
import { type SmtpReceiver, startSmtpReceiver } from '../smtp-receiver.js';

/**
 * Consent as a participant meets it, in headless Chromium against the compiled server at a
 * phone's size (390×844): the screener, the consent form (its errors summarised and linked),
 * thanks, the signed copy received by a real SMTP server with its PDF, and the withdrawal from
 * the link in that email; every page checked by axe-core with no violation of any impact, and the
 * consent form in each shipped language, right to left in Arabic.
 */
describeConsole('participant: consent and its withdrawal', () => {
  let world: ConsoleWorld;
  let smtp: SmtpReceiver;
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
    });
  }, 120_000);
  afterAll(async () => {
    await world?.stop();
    await smtp?.close();
  });

  type Tab = Awaited<ReturnType<ConsoleWorld['newPage']>>;

  /** A launched study with a one-question screener and a consent form in `language`, a participant and their screener link. */
  async function consentStudy(language = 'en') {
    const api = world.api();
    const form = unwrap(
      await api.POST('/consent-forms', {
        body: {
          name: `Interview consent ${language}`,
          title: 'Consent to take part in a research interview',
          body: '## What happens\n\nWe talk for **45 minutes** about how you pay online.\n\n- You can stop at any time.\n- Questions: [research@journey.test](mailto:research@journey.test)',
          language,
          requiredStatements: [
            { id: 'read', text: 'I have read and understood this information.' },
            { id: 'voluntary', text: 'I take part voluntarily and may withdraw at any time.' },
          ],
          optionalChoices: [{ id: 'recording', text: 'I agree to be video-recorded.' }],
        },
      }),
    );
    const study = unwrap(
      await api.POST('/studies', { body: { studyType: 'INTERVIEWS', recruitmentStrategy: 'IN_SERVICE', studyPlan: { name: 'Checkout', externalName: 'Checkout interviews', language, consentFormId: form.consentFormId } } }),
    );
    const path = { params: { path: { studyId: study.studyId } } };
    unwrap(await api.PUT('/studies/{studyId}/screener', { ...path, body: { qualifyByDefault: true, questions: [{ key: 'freq', name: 'How often do you shop online?', type: 'SHORT_FORM', isRequired: true }] } }));
    unwrap(await api.POST('/studies/{studyId}/launch', path));
    const email = `signer-${Date.now()}-${Math.random().toString(36).slice(2)}@journey.test`;
    const person = unwrap(await api.POST('/people', { body: { email, firstName: 'Sam' } }));
    const participantId = unwrap(await api.POST('/studies/{studyId}/participants', { ...path, body: { personIds: [person.personId] } })).results[0]!.participantId;
    const link = unwrap(await api.POST('/studies/{studyId}/participants/{participantId}/links', { params: { path: { studyId: study.studyId, participantId } }, body: { purpose: 'SCREENER' } }));
    return { path: new URL(link.url).pathname, studyId: study.studyId, participantId, email };
  }

  /** axe-core and the width check, in a twin tab with JavaScript on when the tab has it off (see screener-journey.test.ts); with PARTICIPANT_SCREENSHOTS=<dir>, a screenshot there. */
  async function expectGoodPage(page: Tab, where: string, shot?: string) {
    if (process.env.PARTICIPANT_SCREENSHOTS && shot) {
      mkdirSync(process.env.PARTICIPANT_SCREENSHOTS, { recursive: true });
      await page.screenshot({ path: path.join(process.env.PARTICIPANT_SCREENSHOTS, `${shot}.png`), fullPage: true });
    }
    const checked = await world.twinOf(page, phoneViewport);
    await expectNoAxeViolations(checked);
    const { scrollWidth, innerWidth } = await checked.evaluate<{ scrollWidth: number; innerWidth: number }>('({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth })');
    expect(scrollWidth, `${where}: ${scrollWidth} px wide in ${innerWidth}`).toBeLessThanOrEqual(innerWidth);
  }

  it('is signed at 390×844 with JavaScript off after the screener, the copy arrives by email with its PDF, and its link withdraws; no axe violation', async () => {
    const { path, studyId, participantId, email } = await consentStudy();
    const page = await world.newPage({ viewport: phoneViewport, javaScriptEnabled: false, start: false });
    expectNoPageErrors(world, page);
    await page.goto(path);
    await page.getByLabel('How often do you shop online?').fill('Every week');
    await page.getByRole('button', { name: 'Send my answers' }).click();

    await page.getByRole('heading', { level: 1, name: 'Consent to take part in a research interview' }).waitFor();
    expect(page.url()).toMatch(/\/consent$/);
    await expectGoodPage(page, 'the consent form');
    await page.getByRole('button', { name: 'Sign the form' }).click();
    const summary = page.getByRole('alert');
    await summary.getByRole('heading', { name: 'There is a problem' }).waitFor();
    await expectGoodPage(page, 'the consent form with errors', '3b-consent-errors');
    await summary.getByRole('link', { name: 'Type your full name to sign.' }).click();
    expect(page.url()).toMatch(/#signed-name$/);

    await page.getByRole('checkbox', { name: 'I have read and understood this information.' }).check();
    await page.getByRole('checkbox', { name: 'I take part voluntarily and may withdraw at any time.' }).check();
    await page.getByRole('checkbox', { name: 'I agree to be video-recorded.' }).check();
    await page.getByLabel('Your full name').fill('Sam Signer');
    await page.getByRole('button', { name: 'Sign the form' }).click();
    await page.getByRole('heading', { level: 1, name: 'Thank you for signing' }).waitFor();
    await expectGoodPage(page, 'the thanks');
    const participant = unwrap(await world.api().GET('/studies/{studyId}/participants/{participantId}', { params: { path: { studyId, participantId } } }));
    expect(participant.consentFormSubmittedAt).not.toBeNull();

    const deadline = Date.now() + 30_000;
    while (smtp.to(email).length === 0 && Date.now() < deadline) await sleep(100);
    const [mail] = smtp.to(email);
    expect(mail, 'the signed copy arrived').toBeDefined();
    const pdf = mail!.parsed.attachments.find((attachment) => attachment.contentType === 'application/pdf');
    expect(pdf!.content.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    const link = /https:\/\/recruit\.journey\.test(\/p\/[A-Za-z0-9_-]{43})/.exec(mail!.parsed.text ?? '')![1]!;

    await page.goto(link);
    await page.getByRole('heading', { level: 1, name: 'Withdraw your consent' }).waitFor();
    const shown = await page.locator('main').innerText();
    expect(shown).toContain('Checkout interviews');
    expect(shown).not.toMatch(/Sam|signer-|video-recorded/);
    await expectGoodPage(page, 'the withdrawal page', '8-withdrawal');
    await page.getByRole('button', { name: 'Withdraw my consent' }).click();
    await page.getByRole('heading', { level: 1, name: 'Your consent is withdrawn' }).waitFor();
    await expectGoodPage(page, 'the withdrawal done', '9-withdrawn');
    const after = unwrap(await world.api().GET('/studies/{studyId}/participants/{participantId}', { params: { path: { studyId, participantId } } }));
    expect(after.status).toBe('CANCELED');
    await page.goto(link);
    await page.getByRole('heading', { level: 1, name: 'Your consent is already withdrawn' }).waitFor();
  });

  it('is signed by keyboard alone with JavaScript on, the focus always visible', async () => {
    const { path } = await consentStudy();
    const page = await world.newPage({ viewport: phoneViewport, start: false });
    await page.goto(path);
    await page.getByLabel('How often do you shop online?').fill('Monthly');
    await page.getByRole('button', { name: 'Send my answers' }).click();
    await page.getByRole('button', { name: 'Sign the form' }).waitFor();
    await expectNoAxeViolations(page);
    const focused = () => page.evaluate<string>('(() => { const e = document.activeElement; return e ? `${e.tagName}:${e.getAttribute("type") ?? ""}:${e.getAttribute("name") ?? e.textContent ?? ""}` : "" })()');
    const outlined = () => page.evaluate<string>('getComputedStyle(document.activeElement).outlineStyle');
    const tabTo = async (pattern: RegExp) => {
      for (let presses = 0; presses < 12; presses++) {
        await page.keyboard.press('Tab');
        if (pattern.test(await focused())) return;
      }
      throw new Error(`never focused ${pattern}`);
    };
    await tabTo(/^INPUT:checkbox:statement/);
    expect(await outlined()).not.toBe('none');
    await page.keyboard.press('Space');
    await page.keyboard.press('Tab');
    expect(await focused()).toMatch(/^INPUT:checkbox:statement/);
    await page.keyboard.press('Space');
    await page.keyboard.press('Tab');
    expect(await focused()).toMatch(/^INPUT:checkbox:choice/);
    await page.keyboard.press('Tab');
    expect(await focused()).toMatch(/^INPUT:text:signedName/);
    await page.keyboard.type('Kim Keyboard');
    await page.keyboard.press('Tab');
    expect(await focused()).toMatch(/^BUTTON:submit:Sign the form/);
    expect(await outlined()).not.toBe('none');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Thank you for signing' }).waitFor();
  });

  it('is shown in every shipped language, right to left in Arabic, with no axe violation', async () => {
    const expected: Record<string, string> = { en: 'Sign the form', de: 'Formular unterschreiben', fr: 'Signer le formulaire', es: 'Firmar el formulario', ar: 'وقّع النموذج' };
    for (const [language, submit] of Object.entries(expected)) {
      const { studyId, participantId } = await consentStudy(language);
      const link = unwrap(await world.api().POST('/studies/{studyId}/participants/{participantId}/links', { params: { path: { studyId, participantId } }, body: { purpose: 'CONSENT' } }));
      const page = await world.newPage({ viewport: phoneViewport, javaScriptEnabled: false, start: false });
      await page.goto(new URL(link.url).pathname);
      expect(await page.getAttribute('html', 'lang')).toBe(language);
      expect(await page.getAttribute('html', 'dir')).toBe(language === 'ar' ? 'rtl' : 'ltr');
      await page.getByRole('button', { name: submit }).waitFor();
      await expectGoodPage(page, `the consent form in ${language}`);
    }
  });
});
