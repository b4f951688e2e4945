import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { chromiumArgs, chromiumPath, consoleTokenKey, findStudy, startDemoConsole } from './lib/demo-console.js';
import { formatTable } from './lib/table.js';
import { type BenchOptions, type BenchResult, flagNumber } from './lib/types.js';

/**
 * `npm run bench -- console`: how long each console page takes to be usable, in headless
 * Chromium (Debian's), served by the compiled server on the embedded store with the demo seed.
 * "Usable" is the page's own readiness: its heading and, for a page of data, the first row of its
 * table (the API's answers in). Cold: a new browser context (empty cache, a new connection);
 * warm: the same page loaded again in the same context (the hashed assets cached). The floor is
 * the bare `index.html` with its script and stylesheet, loaded and run (the `load` event of the
 * signed-out console, which calls no API), measured the same way in the same run. Aim: < 1 s.
 */

const root = fileURLToPath(new URL('..', import.meta.url));

interface ConsolePage {
  name: string;
  path: string;
  /** Signed in (the token set in sessionStorage before the page's script runs). */
  signedIn: boolean;
  ready(page: Page): Promise<void>;
}

const firstRow = (page: Page, table: string | RegExp) => page.getByRole('table', { name: table }).locator('tbody tr').first().waitFor();

function pagesOf(studyId: string, personId: string): ConsolePage[] {
  const study = `/console/studies/${encodeURIComponent(studyId)}`;
  return [
    { name: 'sign-in', path: '/console/', signedIn: false, ready: (page) => page.getByLabel('API token').waitFor() },
    { name: 'studies', path: '/console/studies', signedIn: true, ready: (page) => firstRow(page, 'Studies') },
    { name: 'create study', path: '/console/studies/new', signedIn: true, ready: (page) => page.getByRole('heading', { name: 'Create a study' }).waitFor() },
    {
      name: 'study (participants, incentives)',
      path: study,
      signedIn: true,
      ready: async (page) => {
        await firstRow(page, 'Participants');
        await firstRow(page, 'Incentives');
      },
    },
    { name: 'study events', path: `${study}/events`, signedIn: true, ready: (page) => firstRow(page, /^Status events of /) },
    { name: 'person', path: `/console/people/${encodeURIComponent(personId)}`, signedIn: true, ready: (page) => page.getByRole('heading', { name: 'Properties' }).waitFor() },
    { name: 'people (search)', path: '/console/people', signedIn: true, ready: (page) => firstRow(page, /^Matching /) },
    { name: 'study search', path: `${study}/search`, signedIn: true, ready: (page) => firstRow(page, /^Matching /) },
    { name: 'imports', path: '/console/imports', signedIn: true, ready: (page) => page.getByRole('heading', { name: 'Imports', level: 1 }).waitFor() },
  ];
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

async function newContext(browser: Browser, origin: string, token: string | undefined): Promise<BrowserContext> {
  const context = await browser.newContext({ baseURL: origin, viewport: { width: 1280, height: 800 } });
  // Through the DevTools protocol, before any script of the page: the CSP stays on.
  if (token) await context.addInitScript(`sessionStorage.setItem(${JSON.stringify(consoleTokenKey)}, ${JSON.stringify(token)})`);
  return context;
}

/** Milliseconds from the navigation's start to `ready`. */
async function timeLoad(page: Page, url: string, ready: (page: Page) => Promise<void>): Promise<number> {
  const started = performance.now();
  await page.goto(url, { waitUntil: 'commit' });
  await ready(page);
  return performance.now() - started;
}

/** `loads` cold loads (each in a new context) and `loads` warm ones (reloads in one context). */
async function measure(browser: Browser, origin: string, token: string, target: ConsolePage, loads: number): Promise<{ cold: number[]; warm: number[] }> {
  const cold: number[] = [];
  const warm: number[] = [];
  for (let round = 0; round < loads; round++) {
    const context = await newContext(browser, origin, target.signedIn ? token : undefined);
    const page = await context.newPage();
    cold.push(await timeLoad(page, target.path, target.ready));
    await context.close();
  }
  const context = await newContext(browser, origin, target.signedIn ? token : undefined);
  const page = await context.newPage();
  await timeLoad(page, target.path, target.ready);
  for (let round = 0; round < loads; round++) warm.push(await timeLoad(page, target.path, target.ready));
  await context.close();
  return { cold, warm };
}

/** The built assets: bytes and gzip bytes of the JavaScript and the CSS. */
function bundleSize() {
  const assets = path.join(root, 'console', 'dist', 'assets');
  const sizes = { jsBytes: 0, jsGzipBytes: 0, cssBytes: 0, cssGzipBytes: 0 };
  for (const file of readdirSync(assets)) {
    const kind = file.endsWith('.js') ? 'js' : file.endsWith('.css') ? 'css' : undefined;
    if (!kind) continue;
    const content = readFileSync(path.join(assets, file));
    sizes[`${kind}Bytes`] += content.length;
    sizes[`${kind}GzipBytes`] += gzipSync(content).length;
  }
  return sizes;
}

export async function run(options: BenchOptions): Promise<BenchResult> {
  const loads = flagNumber(options.flags, 'loads', options.quick ? 3 : 9);
  process.stdout.write(`console: seeding the demo workspace on the embedded store and starting the compiled server…\n`);
  const demo = await startDemoConsole();
  const browser = await chromium.launch({ executablePath: chromiumPath, headless: true, args: chromiumArgs });
  try {
    const token = demo.seed.tokens.RESEARCHER!;
    const studyId = await findStudy(demo.origin, token, 'Checkout interviews (active)');
    const participants = (await (
      await fetch(`${demo.origin}/v1/studies/${studyId}/participants/search`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ pageInfo: { size: 1 } }),
      })
    ).json()) as { results: { personId: string }[] };
    const personId = participants.results[0]!.personId;
    process.stdout.write(`demo seed: ${demo.seed.peopleCount} people, ${demo.seed.participantCount} participants, ${demo.seedSeconds.toFixed(1)} s; ${loads} loads of each page, cold and warm\n\n`);

    const floorTarget: ConsolePage = { name: 'floor: index.html + assets', path: '/console/', signedIn: false, ready: (page) => page.waitForLoadState('load') };
    // One load of everything first: the server's and Chromium's first-use costs are not a page's.
    await measure(browser, demo.origin, token, floorTarget, 1);
    const floor = await measure(browser, demo.origin, token, floorTarget, loads);
    const floorCold = median(floor.cold);
    const floorWarm = median(floor.warm);
    const rows: (string | number)[][] = [[floorTarget.name, Math.round(floorCold), Math.round(floorWarm), '1.00', '1.00']];
    const pages: Record<string, { coldP50Ms: number; warmP50Ms: number; coldMaxMs: number; warmMaxMs: number }> = {};
    for (const target of pagesOf(studyId, personId)) {
      const { cold, warm } = await measure(browser, demo.origin, token, target, loads);
      const coldP50 = median(cold);
      const warmP50 = median(warm);
      pages[target.name] = { coldP50Ms: Math.round(coldP50), warmP50Ms: Math.round(warmP50), coldMaxMs: Math.round(Math.max(...cold)), warmMaxMs: Math.round(Math.max(...warm)) };
      rows.push([target.name, Math.round(coldP50), Math.round(warmP50), (coldP50 / floorCold).toFixed(2), (warmP50 / floorWarm).toFixed(2)]);
    }
    process.stdout.write(formatTable(['page (time to usable)', 'cold p50 ms', 'warm p50 ms', 'cold × floor', 'warm × floor'], rows) + '\n');
    const bundle = bundleSize();
    const kB = (bytes: number) => (bytes / 1000).toFixed(1);
    process.stdout.write(
      `bundle: JavaScript ${kB(bundle.jsBytes)} kB (${kB(bundle.jsGzipBytes)} kB gzip), CSS ${kB(bundle.cssBytes)} kB (${kB(bundle.cssGzipBytes)} kB gzip)\n` +
        'aim: every page usable in < 1,000 ms cold (p50)\n',
    );
    const slowestCold = Math.max(...Object.values(pages).map((page) => page.coldP50Ms));
    return {
      bench: 'console',
      quick: options.quick,
      ratio: +(slowestCold / floorCold).toFixed(2),
      loads,
      floorColdP50Ms: Math.round(floorCold),
      floorWarmP50Ms: Math.round(floorWarm),
      slowestColdP50Ms: slowestCold,
      pages,
      ...bundle,
    };
  } finally {
    await browser.close();
    await demo.stop();
  }
}
