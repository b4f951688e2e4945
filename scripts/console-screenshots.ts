import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Page } from 'playwright-core';
import { chromiumArgs, chromiumPath, findStudy, startDemoConsole } from '../bench/lib/demo-console.js';

/**
 * `npx tsx scripts/console-screenshots.ts`: screenshots of the console's main pages, 1280×800 PNG,
 * and one on a phone (390×844), into docs/console/ (shown in docs/console.md). The compiled server
 * (`npm run build` first) runs on a fresh embedded store with the demo seed (`cli seed --demo`);
 * the pages are opened in Debian's Chromium as the demo's researcher, in English (en-US) and UTC so
 * the pictures do not depend on the machine. Run it again after a change of the pages.
 */

const outputDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'docs', 'console');

async function main() {
  const demo = await startDemoConsole();
  const browser = await chromium.launch({ executablePath: chromiumPath, headless: true, args: chromiumArgs });
  try {
    mkdirSync(outputDir, { recursive: true });
    const token = demo.seed.tokens.RESEARCHER!;
    const studyId = await findStudy(demo.origin, token, 'Checkout interviews (active)');
    const settings = { baseURL: demo.origin, colorScheme: 'light', locale: 'en-US', timezoneId: 'UTC' } as const;
    const context = await browser.newContext({ ...settings, viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    const shoot = async (name: string) => {
      // The page's calls have answered, fonts and layout settled, before the picture.
      await page.waitForLoadState('networkidle');
      await page.evaluate('document.fonts.ready');
      await page.screenshot({ path: path.join(outputDir, `${name}.png`) });
      process.stdout.write(`docs/console/${name}.png\n`);
    };

    await page.goto('/console/');
    await page.getByLabel('API token').waitFor();
    await shoot('sign-in');

    await page.getByLabel('API token').fill(token);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Studies' }).waitFor();
    await page.locator('main table tbody tr').first().waitFor();
    await shoot('studies');

    await page.getByRole('button', { name: 'Create study' }).click();
    await page.getByRole('heading', { name: 'Create a study' }).waitFor();
    await shoot('create-study');

    await page.goto(`/console/studies/${encodeURIComponent(studyId)}`);
    await page.getByRole('table', { name: 'Participants' }).locator('tbody tr').first().waitFor();
    await shoot('study');
    await scrollTo(page, '#participants-heading');
    await shoot('study-participants');

    // The first row's list of moves, then booking a session.
    const firstMoves = page.getByLabel(/^Move .* to$/).first();
    await firstMoves.selectOption({ label: 'Schedule' });
    await page.getByRole('button', { name: /^Apply the move: / }).first().click();
    await page.getByLabel('Session start').waitFor();
    await scrollTo(page, '#participants-heading');
    await shoot('participant-schedule');

    await page.getByRole('button', { name: /^Send incentive: / }).first().click();
    await page.getByRole('heading', { name: /^Send an incentive to / }).waitFor();
    await scrollTo(page, '#send-incentive-heading');
    await shoot('send-incentive');
    // The confirmation names the amount, the person and the study; nothing is sent here.
    await page.getByLabel('Amount (USD)').fill('75');
    await page.getByRole('button', { name: 'Send incentive…' }).click();
    await page.getByRole('dialog', { name: 'Send this incentive?' }).waitFor();
    await shoot('send-incentive-confirm');
    await page.getByRole('button', { name: 'Don’t send' }).click();

    await scrollTo(page, '#incentives-heading');
    await shoot('study-incentives');

    await page.goto(`/console/studies/${encodeURIComponent(studyId)}/events`);
    await page.getByRole('table', { name: /^Status events of / }).locator('tbody tr').first().waitFor();
    await shoot('study-events');

    // The pages of the person and imports work, where main has them.
    const participants = (await (
      await fetch(`${demo.origin}/v1/studies/${studyId}/participants/search`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ pageInfo: { size: 1 } }),
      })
    ).json()) as { results: { personId: string }[] };
    await page.goto(`/console/people/${encodeURIComponent(participants.results[0]!.personId)}`);
    await page.getByRole('heading', { name: 'Properties' }).waitFor();
    await shoot('person');

    await page.goto('/console/people');
    await page.getByRole('heading', { name: 'People', level: 1 }).waitFor();
    await page.getByRole('table', { name: /^Matching / }).locator('tbody tr').first().waitFor();
    await shoot('people');

    // The property picker, grouped and narrowed by typing; the filter's property becomes a column.
    await page.getByRole('button', { name: 'Add condition', exact: true }).click();
    const picker = page.getByRole('combobox', { name: 'Property', exact: true });
    await picker.pressSequentially('size');
    await page.getByRole('listbox', { name: 'Properties' }).waitFor();
    await shoot('property-picker');
    await page.getByRole('option', { name: 'Household size', exact: true }).click();
    await page.getByLabel('Comparison', { exact: true }).selectOption('GREATER_THAN_OR_EQUAL');
    await page.getByLabel('Value', { exact: true }).fill('4');
    await page.getByRole('columnheader', { name: 'Household size' }).waitFor();
    // The results of the filter as typed: the search waits 300 ms after the last edit, then answers.
    await page.waitForTimeout(400);
    await page.locator('[data-testid="search-total"][aria-busy="false"]').waitFor();
    await scrollTo(page, 'main table');
    await shoot('people-filter-columns');

    await page.goto(`/console/studies/${encodeURIComponent(studyId)}/search`);
    await page.getByRole('heading', { name: /^Find participants of / }).waitFor();
    await page.getByRole('table', { name: /^Matching / }).locator('tbody tr').first().waitFor();
    await shoot('study-search');

    await page.goto('/console/imports');
    await page.getByRole('heading', { level: 1 }).waitFor();
    await shoot('imports');

    // A phone held upright: the header wraps, the table scrolls in its own box.
    const phone = await browser.newContext({ ...settings, viewport: { width: 390, height: 844 } });
    const phonePage = await phone.newPage();
    await phonePage.goto('/console/');
    await phonePage.getByLabel('API token').fill(token);
    await phonePage.getByRole('button', { name: 'Sign in' }).click();
    await phonePage.getByRole('heading', { name: 'Studies' }).waitFor();
    await phonePage.goto('/console/people');
    await phonePage.getByRole('table', { name: /^Matching / }).locator('tbody tr').first().waitFor();
    await phonePage.waitForLoadState('networkidle');
    await phonePage.evaluate('document.fonts.ready');
    await phonePage.screenshot({ path: path.join(outputDir, 'people-phone.png') });
    process.stdout.write('docs/console/people-phone.png\n');
  } finally {
    await browser.close();
    await demo.stop();
  }
}

async function scrollTo(page: Page, selector: string) {
  await page.locator(selector).evaluate((element) => element.scrollIntoView({ block: 'start' }));
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
