import { unwrap } from '@recruit-ops/sdk';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type ConsoleWorld, describeConsole, expectNoAxeViolations, expectNoPageErrors, phoneViewport, startConsole } from '../console/browser.js';

/**
 * The screener as a participant meets it, in headless Chromium against the compiled server: at a
 * phone's and a laptop's width, with JavaScript off and on, by keyboard alone, in every shipped
 * language, each page checked by axe-core with no violation of any impact.
 */
describeConsole('participant: the screener page', () => {
  let world: ConsoleWorld;
  beforeAll(async () => {
    world = await startConsole();
  }, 120_000);
  afterAll(async () => world?.stop());

  /** A launched study with a three-question screener (a choice, a number shown to shoppers, free text), a participant and their link. */
  async function screenerLink(language?: string): Promise<{ path: string; studyId: string; participantId: string }> {
    const api = world.api();
    const study = unwrap(await api.POST('/studies', { body: { studyType: 'INTERVIEWS', recruitmentStrategy: 'IN_SERVICE', studyPlan: { name: 'Checkout', externalName: 'Checkout interviews', ...(language ? { language } : {}) } } }));
    const path = { params: { path: { studyId: study.studyId } } };
    unwrap(
      await api.PUT('/studies/{studyId}/screener', {
        ...path,
        body: {
          qualifyByDefault: false,
          questions: [
            { key: 'freq', name: 'How often do you shop online?', type: 'SINGLE_SELECT', isRequired: true, choices: [{ id: 'weekly', label: 'Every week' }, { id: 'monthly', label: 'Every month' }, { id: 'never', label: 'Never', rule: 'DISQUALIFIES' }] },
            { key: 'orders', name: 'How many orders did you place last month?', type: 'NUMBER', minimum: 0, integer: true, isRequired: true, ranges: [{ min: 10, rule: 'QUALIFIES' }], showWhen: { questionKey: 'freq', choiceIds: ['weekly', 'monthly'] } },
            { key: 'why', name: 'Anything you would like us to know?', type: 'LONG_FORM', isRequired: false, description: 'For example, what you find hard when you pay.' },
          ],
        },
      }),
    );
    unwrap(await api.POST('/studies/{studyId}/launch', path));
    const person = unwrap(await api.POST('/people', { body: { email: `shopper-${Date.now()}-${Math.random().toString(36).slice(2)}@journey.test`, firstName: 'Sam' } }));
    const added = unwrap(await api.POST('/studies/{studyId}/participants', { ...path, body: { personIds: [person.personId] } }));
    const participantId = added.results[0]!.participantId;
    const link = unwrap(await api.POST('/studies/{studyId}/participants/{participantId}/links', { params: { path: { studyId: study.studyId, participantId } }, body: { purpose: 'SCREENER' } }));
    return { path: new URL(link.url).pathname, studyId: study.studyId, participantId };
  }

  type Tab = Awaited<ReturnType<ConsoleWorld['newPage']>>;

  /** axe-core and the width check on the page as it is now; in a twin tab (world.twinOf) when it has JavaScript off. */
  async function expectGoodPage(page: Tab, where: string, options: { viewport: { width: number; height: number }; javaScriptEnabled: boolean }) {
    let checked = page;
    if (!options.javaScriptEnabled) {
      checked = await world.twinOf(page, options.viewport);
    }
    await expectNoAxeViolations(checked);
    const { scrollWidth, innerWidth } = await checked.evaluate<{ scrollWidth: number; innerWidth: number }>('({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth })');
    expect(scrollWidth, `${where}: ${scrollWidth} px wide in ${innerWidth}`).toBeLessThanOrEqual(innerWidth);
  }

  for (const viewport of [{ width: 320, height: 640 }, phoneViewport, { width: 1280, height: 800 }]) {
    for (const javaScriptEnabled of [false, true]) {
      it(`is answered at ${viewport.width}×${viewport.height} with JavaScript ${javaScriptEnabled ? 'on' : 'off'}: errors summarised and linked, then thanks; no axe violation`, async () => {
        const { path, studyId, participantId } = await screenerLink();
        const page = await world.newPage({ viewport, javaScriptEnabled, start: false });
        expectNoPageErrors(world, page);
        await page.goto(path);
        await page.getByRole('heading', { level: 1, name: 'Checkout interviews: a few questions' }).waitFor();
        await expectGoodPage(page, 'the screener', { viewport, javaScriptEnabled });

        await page.getByRole('button', { name: 'Send my answers' }).click();
        const summary = page.getByRole('alert');
        await summary.getByRole('heading', { name: 'There is a problem' }).waitFor();
        await expectGoodPage(page, 'the screener with errors', { viewport, javaScriptEnabled });
        // The summary's link leads to the question it names.
        await summary.getByRole('link', { name: 'Answer this question.' }).first().click();
        expect(page.url()).toMatch(/#q-/);

        await page.getByRole('radio', { name: 'Every week' }).check();
        await page.getByLabel('How many orders did you place last month?').fill('12');
        await page.getByLabel(/Anything you would like us to know\?/).fill('The card form times out.');
        await page.getByRole('button', { name: 'Send my answers' }).click();
        await page.getByRole('heading', { level: 1, name: 'Thank you' }).waitFor();
        await expectGoodPage(page, 'the thanks', { viewport, javaScriptEnabled });
        const participant = unwrap(await world.api().GET('/studies/{studyId}/participants/{participantId}', { params: { path: { studyId, participantId } } }));
        expect(participant.screenerState).toBe('QUALIFIED');
      });
    }
  }

  it('is completed by keyboard alone, the focus always visible', async () => {
    const { path, studyId, participantId } = await screenerLink();
    const page = await world.newPage({ viewport: phoneViewport, start: false });
    await page.goto(path);
    const focused = () => page.evaluate<string>('(() => { const e = document.activeElement; return e ? `${e.tagName}:${e.getAttribute("type") ?? ""}:${e.getAttribute("name") ?? e.textContent ?? ""}` : "" })()');
    const outlined = () => page.evaluate<string>('getComputedStyle(document.activeElement).outlineStyle');
    await page.keyboard.press('Tab');
    expect(await focused()).toMatch(/^A::Skip to main content/);
    expect(await outlined()).not.toBe('none');
    await page.keyboard.press('Tab');
    expect(await focused()).toMatch(/^INPUT:radio:q_/);
    expect(await outlined()).not.toBe('none');
    await page.keyboard.press('Space');
    await page.keyboard.press('Tab');
    expect(await focused()).toMatch(/^INPUT:text:q_/);
    await page.keyboard.type('3');
    await page.keyboard.press('Tab');
    expect(await focused()).toMatch(/^TEXTAREA::q_/);
    await page.keyboard.type('Nothing more.');
    await page.keyboard.press('Tab');
    expect(await focused()).toMatch(/^BUTTON:submit:Send my answers/);
    expect(await outlined()).not.toBe('none');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Thank you' }).waitFor();
    // Three orders: no rule fired, and qualifyByDefault is false: left for the team to review.
    const participant = unwrap(await world.api().GET('/studies/{studyId}/participants/{participantId}', { params: { path: { studyId, participantId } } }));
    expect(participant.screenerState).toBe('SUBMITTED');
  });

  it('is shown in every shipped language, right to left in Arabic, with no axe violation', async () => {
    const expected: Record<string, string> = { en: 'Send my answers', de: 'Antworten senden', fr: 'Envoyer mes réponses', es: 'Enviar mis respuestas', ar: 'أرسل إجاباتي' };
    for (const [language, submit] of Object.entries(expected)) {
      const { path } = await screenerLink(language);
      const page = await world.newPage({ viewport: phoneViewport, javaScriptEnabled: false, start: false });
      await page.goto(path);
      expect(await page.getAttribute('html', 'lang')).toBe(language);
      expect(await page.getAttribute('html', 'dir')).toBe(language === 'ar' ? 'rtl' : 'ltr');
      await page.getByRole('button', { name: submit }).waitFor();
      await expectGoodPage(page, `the screener in ${language}`, { viewport: phoneViewport, javaScriptEnabled: false });
    }
  });

  it('shows a disqualified person a kind word and no reason', async () => {
    const { path } = await screenerLink();
    const page = await world.newPage({ viewport: phoneViewport, javaScriptEnabled: false, start: false });
    await page.goto(path);
    await page.getByRole('radio', { name: 'Never' }).check();
    await page.getByRole('button', { name: 'Send my answers' }).click();
    await page.getByRole('heading', { level: 1, name: 'Thank you' }).waitFor();
    const text = await page.locator('main').innerText();
    expect(text).toContain('not the right fit this time');
    expect(text).not.toMatch(/never|disqualif|rule/i);
    await expectGoodPage(page, 'the thanks of a disqualified person', { viewport: phoneViewport, javaScriptEnabled: false });
  });

  it('tells a qualified person over quota that the study is full, and nothing more, in their language', async () => {
    const full: Record<string, { title: string; submit: string }> = {
      en: { title: 'This study is full', submit: 'Send my answers' },
      ar: { title: 'اكتمل العدد في هذه الدراسة', submit: 'أرسل إجاباتي' },
    };
    for (const [language, expected] of Object.entries(full)) {
      for (const viewport of language === 'en' ? [phoneViewport, { width: 1280, height: 800 }] : [phoneViewport]) {
        const { path, studyId } = await screenerLink(language);
        // The only group takes people with no orders: a person qualified by 12 orders meets none.
        unwrap(await world.api().PUT('/studies/{studyId}/quota-groups', { params: { path: { studyId } }, body: { quotaGroups: [{ name: 'Lapsed shoppers', cap: 5, answers: [{ questionKey: 'orders', range: { max: 0 } }] }] } }));
        const page = await world.newPage({ viewport, javaScriptEnabled: false, start: false });
        await page.goto(path);
        await page.locator('input[type=radio][value=weekly]').check();
        await page.locator('input[inputmode=decimal]').first().fill('12');
        await page.getByRole('button', { name: expected.submit }).click();
        await page.getByRole('heading', { level: 1, name: expected.title }).waitFor();
        const text = await page.locator('main').innerText();
        expect(text).not.toMatch(/lapsed|quota|orders|rule/i);
        await expectGoodPage(page, `the page of a person over quota (${language}, ${viewport.width} px)`, { viewport, javaScriptEnabled: false });
      }
    }
  });
});
