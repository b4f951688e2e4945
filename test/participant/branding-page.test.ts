import { unwrap } from '@recruit-ops/sdk';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { testImages } from '../../src/families/branding/test-images.js';
import { type ConsoleWorld, describeConsole, expectNoAxeViolations, startConsole } from '../console/browser.js';

/**
 * A branded screener page in headless Chromium against the compiled server, its CSP enforced: the
 * display name, the logo loaded from the same origin (img-src 'self'), the accent applied through
 * its stylesheet (style-src 'self', no inline style), at 320 px, with no axe violation.
 */
describeConsole('participant: a branded page', () => {
  let world: ConsoleWorld;
  beforeAll(async () => {
    world = await startConsole();
  }, 120_000);
  afterAll(async () => world?.stop());

  it('wears the display name, the logo and the accent, with no CSP violation, at 320 px', async () => {
    const api = world.api();
    const branding = unwrap(await api.POST('/branding-configs', { body: { displayName: 'Acme Research', accentColor: '#0f6e3a', logo: { contentType: 'image/png', data: testImages.png }, logoAlt: 'Acme' } }));
    const study = unwrap(await api.POST('/studies', { body: { studyType: 'INTERVIEWS', recruitmentStrategy: 'IN_SERVICE', studyPlan: { name: 'Branded', externalName: 'Branded interviews', brandingConfigId: branding.brandingConfigId } } }));
    const path = { params: { path: { studyId: study.studyId } } };
    unwrap(await api.PUT('/studies/{studyId}/screener', { ...path, body: { questions: [{ name: 'How often do you shop online?', type: 'SHORT_FORM', isRequired: true }] } }));
    unwrap(await api.POST('/studies/{studyId}/launch', path));
    const person = unwrap(await api.POST('/people', { body: { email: `branded-${Date.now()}@journey.test`, firstName: 'Bea' } }));
    const participantId = unwrap(await api.POST('/studies/{studyId}/participants', { ...path, body: { personIds: [person.personId] } })).results[0]!.participantId;
    const link = unwrap(await api.POST('/studies/{studyId}/participants/{participantId}/links', { params: { path: { studyId: study.studyId, participantId } }, body: { purpose: 'SCREENER' } }));

    // A blank tab (not the console's, whose requests are not this page's), its errors collected: a CSP violation is one.
    const page = await world.newPage({ viewport: { width: 320, height: 640 }, start: false });
    const errors: string[] = [];
    page.on('console', (message) => {
      // The browser's own request for /favicon.ico (the pages name none) is not the page's.
      if (message.type() === 'error' && !message.location().url.endsWith('/favicon.ico')) errors.push(`${message.text()} ${message.location().url}`);
    });
    page.on('response', (response) => {
      if (response.status() >= 400) errors.push(`${response.status()} ${response.url()}`);
    });
    await page.goto(new URL(link.url).pathname);
    await page.getByRole('heading', { level: 1, name: 'Branded interviews: a few questions' }).waitFor();
    expect(await page.title()).toBe('Branded interviews: a few questions – Acme Research');
    const logo = page.getByRole('img', { name: 'Acme' });
    await logo.waitFor();
    expect(await logo.evaluate((image: HTMLImageElement) => [image.complete, image.naturalWidth, image.naturalHeight])).toEqual([true, 120, 40]);
    const button = page.getByRole('button', { name: 'Send my answers' });
    expect(await button.evaluate((element) => getComputedStyle(element).backgroundColor)).toBe('rgb(15, 110, 58)');
    expect(errors, 'errors logged by the page (a CSP violation among them)').toEqual([]);
    await expectNoAxeViolations(page);
    const { scrollWidth, innerWidth } = await page.evaluate<{ scrollWidth: number; innerWidth: number }>('({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth })');
    expect(scrollWidth).toBeLessThanOrEqual(innerWidth);
  });
});
