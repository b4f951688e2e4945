import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { unwrap } from '@recruit-ops/sdk';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type ConsoleWorld, describeConsole, expectNoAxeViolations, expectNoPageErrors, phoneViewport, startConsole } from '../console/browser.js';
import { type SmtpReceiver, startSmtpReceiver } from '../smtp-receiver.js';

/**
 * The whole journey as a person meets it, from the invitation in their mailbox: a message sent by
 * the team through the API with `{{ links.screener }}`, received by a real SMTP server, its link
 * opened in headless Chromium against the compiled server; the screener; the consent form;
 * thanks; and the paths that end sooner (disqualified, over quota). At a phone's size and a
 * laptop's, with JavaScript off and on; every page checked by axe-core (no violation of any
 * impact) and for sideways scrolling. With PARTICIPANT_SCREENSHOTS=<dir> the phone-sized pages
 * are also saved there as PNGs (docs/participant-pages/ holds the ones the guide shows).
 */
describeConsole('participant: from the invitation email to thanks', () => {
  let world: ConsoleWorld;
  let smtp: SmtpReceiver;
  const screenshots = process.env.PARTICIPANT_SCREENSHOTS;
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
    if (screenshots) mkdirSync(screenshots, { recursive: true });
  }, 120_000);
  afterAll(async () => {
    await world?.stop();
    await smtp?.close();
  });

  type Tab = Awaited<ReturnType<ConsoleWorld['newPage']>>;
  type Viewport = { width: number; height: number };

  /**
   * A launched study with a screener (never shopping online disqualifies), one quota group of
   * `cap` places for weekly shoppers, and a consent form; a participant with an email, and the
   * invitation sent to them by the API. Answers the path of the link in the email received.
   */
  async function invited(options: { cap?: number } = {}) {
    const api = world.api();
    const form = unwrap(
      await api.POST('/consent-forms', {
        body: {
          name: `Consent ${Date.now()}-${Math.random().toString(36).slice(2)}`,
          title: 'Consent to take part in a research interview',
          body: '## What happens\n\nWe talk for **45 minutes** about how you pay online.\n\n- You can stop at any time.',
          language: 'en',
          requiredStatements: [{ id: 'read', text: 'I have read and understood this information.' }],
          optionalChoices: [{ id: 'recording', text: 'I agree to be video-recorded.' }],
        },
      }),
    );
    const study = unwrap(
      await api.POST('/studies', { body: { studyType: 'INTERVIEWS', recruitmentStrategy: 'IN_SERVICE', studyPlan: { name: 'Checkout', externalName: 'Checkout interviews', consentFormId: form.consentFormId } } }),
    );
    const studyPath = { params: { path: { studyId: study.studyId } } };
    unwrap(
      await api.PUT('/studies/{studyId}/screener', {
        ...studyPath,
        body: {
          qualifyByDefault: true,
          questions: [
            { key: 'freq', name: 'How often do you shop online?', type: 'SINGLE_SELECT', isRequired: true, choices: [{ id: 'weekly', label: 'Every week' }, { id: 'monthly', label: 'Every month' }, { id: 'never', label: 'Never', rule: 'DISQUALIFIES' }] },
            { key: 'orders', name: 'How many orders did you place last month?', type: 'NUMBER', minimum: 0, integer: true, isRequired: true, showWhen: { questionKey: 'freq', choiceIds: ['weekly', 'monthly'] } },
          ],
        },
      }),
    );
    unwrap(await api.PUT('/studies/{studyId}/quota-groups', { ...studyPath, body: { quotaGroups: [{ name: 'Weekly shoppers', cap: options.cap ?? 10, answers: [{ questionKey: 'freq', choiceIds: ['weekly'] }] }, { name: 'Monthly shoppers', cap: 10, answers: [{ questionKey: 'freq', choiceIds: ['monthly'] }] }] } }));
    unwrap(await api.POST('/studies/{studyId}/launch', studyPath));
    const created = await api.POST('/message-templates', {
        body: {
          name: `Invitation ${Date.now()}-${Math.random().toString(36).slice(2)}`,
          subject: 'Would you tell us how you pay online?',
          textBody: 'Hi {{ person.firstName }},\n\nWe are looking for people for {{ study.externalName }}. Two questions first: {{ links.screener }}\n\n{{ links.unsubscribe }}',
        },
      });
    if (created.error) console.error(world.server.output().slice(-3000));
    const template = unwrap(created);
    const email = `invited-${Date.now()}-${Math.random().toString(36).slice(2)}@journey.test`;
    const person = unwrap(await api.POST('/people', { body: { email, firstName: 'Sam' } }));
    const participantId = unwrap(await api.POST('/studies/{studyId}/participants', { ...studyPath, body: { personIds: [person.personId] } })).results[0]!.participantId;
    unwrap(await api.POST('/studies/{studyId}/messages', { ...studyPath, body: { templateId: template.templateId, participantIds: [participantId] } }));
    const deadline = Date.now() + 30_000;
    while (smtp.to(email).length === 0 && Date.now() < deadline) await sleep(100);
    const [mail] = smtp.to(email);
    expect(mail, 'the invitation arrived').toBeDefined();
    expect(mail!.parsed.subject).toBe('Would you tell us how you pay online?');
    const link = /https:\/\/recruit\.journey\.test(\/p\/[A-Za-z0-9_-]{43})\s/.exec(mail!.parsed.text ?? '')?.[1];
    expect(link, mail!.parsed.text).toBeDefined();
    return { link: link!, studyId: study.studyId, participantId };
  }

  /** axe-core and the width check, in a twin tab with JavaScript on when the tab has it off (see screener-journey.test.ts); a screenshot when asked. */
  async function expectGoodPage(page: Tab, where: string, viewport: Viewport, javaScriptEnabled: boolean, shot?: string) {
    let checked = page;
    if (!javaScriptEnabled) {
      checked = await world.twinOf(page, viewport);
    }
    await expectNoAxeViolations(checked);
    const { scrollWidth, innerWidth } = await checked.evaluate<{ scrollWidth: number; innerWidth: number }>('({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth })');
    expect(scrollWidth, `${where}: ${scrollWidth} px wide in ${innerWidth}`).toBeLessThanOrEqual(innerWidth);
    if (screenshots && shot && viewport.width === phoneViewport.width) await page.screenshot({ path: path.join(screenshots, `${shot}.png`), fullPage: true });
  }

  const participantOf = async (studyId: string, participantId: string) => unwrap(await world.api().GET('/studies/{studyId}/participants/{participantId}', { params: { path: { studyId, participantId } } }));

  for (const [viewport, javaScriptEnabled] of [
    [phoneViewport, false],
    [{ width: 1280, height: 800 }, true],
  ] as const) {
    const size = `${viewport.width}×${viewport.height}`;
    it(`goes from the invitation to thanks at ${size} with JavaScript ${javaScriptEnabled ? 'on' : 'off'}: screener, consent, thanks`, async () => {
      const { link, studyId, participantId } = await invited();
      const page = await world.newPage({ viewport, javaScriptEnabled, start: false });
      expectNoPageErrors(world, page);
      await page.goto(link);
      await page.getByRole('heading', { level: 1, name: 'Checkout interviews: a few questions' }).waitFor();
      await expectGoodPage(page, 'the screener', viewport, javaScriptEnabled, '1-screener');
      await page.getByRole('button', { name: 'Send my answers' }).click();
      await page.getByRole('alert').getByRole('heading', { name: 'There is a problem' }).waitFor();
      await expectGoodPage(page, 'the screener with errors', viewport, javaScriptEnabled, '2-screener-errors');
      // Each link of the summary names the question it leads to (WCAG 2.4.4), not only what is wrong.
      await page.getByRole('alert').getByRole('link', { name: 'How often do you shop online? — Answer this question.', exact: true }).waitFor();
      await page.getByRole('radio', { name: 'Every week' }).check();
      await page.getByLabel('How many orders did you place last month?').fill('4');
      await page.getByRole('button', { name: 'Send my answers' }).click();

      await page.getByRole('heading', { level: 1, name: 'Consent to take part in a research interview' }).waitFor();
      await expectGoodPage(page, 'the consent form', viewport, javaScriptEnabled, '3-consent');
      await page.getByRole('checkbox', { name: 'I have read and understood this information.' }).check();
      await page.getByRole('button', { name: 'Sign the form' }).click();
      await page.getByRole('alert').getByRole('link', { name: 'Your full name — Type your full name to sign.', exact: true }).waitFor();
      await page.getByLabel('Your full name').fill('Sam Shopper');
      await page.getByRole('button', { name: 'Sign the form' }).click();
      await page.getByRole('heading', { level: 1, name: 'Thank you for signing' }).waitFor();
      await expectGoodPage(page, 'the thanks', viewport, javaScriptEnabled, '4-thanks');

      const participant = await participantOf(studyId, participantId);
      expect(participant).toMatchObject({ screenerState: 'QUALIFIED', quotaGroup: 'Weekly shoppers' });
      expect(participant.consentFormSubmittedAt).not.toBeNull();
      // The invitation's link again: answered once, the person is told so (and nothing is asked twice).
      await page.goto(link);
      await page.getByRole('heading', { level: 1 }).waitFor();
      await expectGoodPage(page, 'the second visit', viewport, javaScriptEnabled, '5-second-visit');
      expect(await page.getByRole('button', { name: 'Send my answers' }).count()).toBe(0);
    });
  }

  it('tells a disqualified person a kind, general word and never the reason, from the invitation at 390×844', async () => {
    const { link, studyId, participantId } = await invited();
    const page = await world.newPage({ viewport: phoneViewport, javaScriptEnabled: false, start: false });
    await page.goto(link);
    await page.getByRole('radio', { name: 'Never' }).check();
    await page.getByRole('button', { name: 'Send my answers' }).click();
    await page.getByRole('heading', { level: 1, name: 'Thank you' }).waitFor();
    await expectGoodPage(page, 'the disqualified thanks', phoneViewport, false, '6-not-selected');
    const shown = await page.locator('main').innerText();
    expect(shown).not.toMatch(/never|disqualif|rule|quota/i);
    expect(await page.getByRole('button', { name: 'Sign the form' }).count()).toBe(0);
    expect((await participantOf(studyId, participantId)).screenerState).toBe('DISQUALIFIED');
  });

  it('tells a person over quota that the study is full, from the invitation at 1280×800, and asks no consent', async () => {
    const first = await invited({ cap: 1 });
    const page = await world.newPage({ viewport: { width: 1280, height: 800 }, start: false });
    await page.goto(first.link);
    await page.getByRole('radio', { name: 'Every week' }).check();
    await page.getByLabel('How many orders did you place last month?').fill('2');
    await page.getByRole('button', { name: 'Send my answers' }).click();
    await page.getByRole('heading', { level: 1, name: 'Consent to take part in a research interview' }).waitFor();
    // A second person of the same study, invited the same way, meets the full group.
    const api = world.api();
    const email = `late-${Date.now()}@journey.test`;
    const person = unwrap(await api.POST('/people', { body: { email, firstName: 'Lee' } }));
    const studyPath = { params: { path: { studyId: first.studyId } } };
    const participantId = unwrap(await api.POST('/studies/{studyId}/participants', { ...studyPath, body: { personIds: [person.personId] } })).results[0]!.participantId;
    const link = unwrap(await api.POST('/studies/{studyId}/participants/{participantId}/links', { params: { path: { studyId: first.studyId, participantId } }, body: { purpose: 'SCREENER' } }));
    const late = await world.newPage({ viewport: phoneViewport, start: false });
    await late.goto(new URL(link.url).pathname);
    await late.getByRole('radio', { name: 'Every week' }).check();
    await late.getByLabel('How many orders did you place last month?').fill('9');
    await late.getByRole('button', { name: 'Send my answers' }).click();
    await late.getByRole('heading', { level: 1, name: 'This study is full' }).waitFor();
    await expectGoodPage(late, 'the over-quota page', phoneViewport, true, '7-study-full');
    expect(await late.locator('main').innerText()).not.toMatch(/Weekly shoppers|quota|group/i);
    expect((await participantOf(first.studyId, participantId)).screenerState).toBe('DISQUALIFIED');
  });
});
