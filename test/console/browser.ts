import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { type Browser, type BrowserContext, type BrowserContextOptions, chromium, type Locator, type Page } from 'playwright-core';
import { describe, expect } from 'vitest';
import { createClient, type RecruitClient } from '@recruit-ops/sdk';
import { migrateToLatest } from '../../src/db/migrate.js';
import type { UserRole } from '../../src/db/schema.js';
import { createCustomRole, createToken, createUser, createWorkspace } from '../../src/families/workspaces/service.js';
import { allRoles, rightsByRole } from '../../src/http/rights.js';
import { createCrashStorage, stopGracefully } from '../crash-support.js';
import { projectRoot, type RunningServer, startServer } from '../processes.js';

/**
 * The console's end-to-end harness: a real server process (the compiled one, `dist/server.js`,
 * serving `console/dist`, both made by `npm run build`, which `npm test` runs first) on a store of
 * its own (the embedded store, or a PostgreSQL database of its own when DATABASE_URL is set), a
 * workspace with a user and token of every role, and Debian's Chromium driven by playwright-core.
 *
 * A test file:
 *
 *   describeConsole('the studies pages', () => {
 *     let world: ConsoleWorld;
 *     beforeAll(async () => (world = await startConsole()), 120_000);
 *     afterAll(async () => world?.stop());
 *
 *     it('…', async () => {
 *       const page = await world.newPage();                      // a fresh tab: its own sessionStorage
 *       await signIn(page, world.users.RESEARCHER.token);
 *       await page.getByRole('link', { name: 'Studies' }).click();
 *       await expectAccessible(page);
 *     });
 *   });
 *
 * One server and one browser per file (startConsole), a new context per test (newPage).
 */

/** Debian's `chromium` package; CHROMIUM_PATH names another. Never a downloaded browser. */
export const chromiumPath = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
/** CONSOLE_E2E=required (CI): a missing Chromium fails the console's tests instead of skipping them. */
const required = process.env.CONSOLE_E2E === 'required';
const chromiumMissing = !existsSync(chromiumPath);

/**
 * describe() for console end-to-end tests: skipped, saying why, when Chromium is not installed
 * (unless CONSOLE_E2E=required, which makes the missing browser a failure).
 */
export function describeConsole(name: string, body: () => void): void {
  if (chromiumMissing && !required) {
    describe.skip(`${name} (skipped: no Chromium at ${chromiumPath}; apt-get install chromium, or set CHROMIUM_PATH)`, body);
    return;
  }
  describe(name, { timeout: consoleTestTimeout }, body);
}

/**
 * A page's steps wait for the API and re-render; on a loaded CI machine (three test files at
 * once, Chromium, the server and PostgreSQL on two cores) a long journey took over 30 s. A single
 * Playwright wait still fails in 20 s, naming what it waited for.
 */
const actionTimeout = 20_000;
const consoleTestTimeout = 120_000;

const chromiumArgs = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** What a test may set of a tab's browser context. */
export type PageOptions = Pick<BrowserContextOptions, 'viewport' | 'locale' | 'timezoneId' | 'javaScriptEnabled'> & {
  /** Where the tab starts: the console's sign-in page by default; `false` for a blank tab (a participant's page is opened next). */
  start?: string | false;
};

/** A phone held upright (an iPhone 14's CSS pixels): every page must work this narrow. */
export const phoneViewport = { width: 390, height: 844 } as const;

export interface ConsoleUser {
  userId: string;
  email: string;
  fullName: string;
  token: string;
}

export interface ConsoleWorld {
  /** `http://127.0.0.1:PORT`: the console is at `${origin}/console/`, the API at `${origin}/v1`. */
  origin: string;
  workspaceId: string;
  /** A user of every role in the workspace, with a token (all rights of the role, personal data clear). */
  users: Record<UserRole, ConsoleUser>;
  /** A second token of the RESEARCHER, made without the personal-data right (`cli token create --no-pii`): the API masks personal data for it. */
  tokenWithoutPii: string;
  /** The SDK client as that role (default SUPER_ADMIN), to arrange data or check what the console did. */
  api(role?: UserRole): RecruitClient;
  /**
   * A new tab in a new browser context (its own sessionStorage), at the console's sign-in page:
   * 1280×800 unless `options` say otherwise (a phone's viewport, a locale, a time zone).
   */
  newPage(options?: PageOptions): Promise<Page>;
  /**
   * `page`'s markup as it is now, in a tab with JavaScript of the same viewport on the same origin
   * (so its stylesheet applies), for axe-core and layout checks that run script in the page: a tab
   * with JavaScript off cannot run them (Playwright's evaluate never returns there). One such tab per
   * viewport serves the whole file. `withoutScripts` leaves the page's own scripts out.
   */
  twinOf(page: Page, viewport: { width: number; height: number }, options?: { withoutScripts?: boolean }): Promise<Page>;
  /** What the page logged as errors, CSP violations included (expectNoPageErrors checks it). */
  pageErrors(page: Page): string[];
  server: RunningServer;
  /** Closes the browser, stops the server gracefully and drops its store. */
  stop(): Promise<void>;
}

/** The full names the workspace's users get: `Researcher Tester`, `Super admin Tester`. */
export const fullNameOf = (role: UserRole) => `${role.charAt(0)}${role.slice(1).toLowerCase().replace(/_/g, ' ')} Tester`;

/** `env`: more of the server's environment (a test's SMTP receiver, PUBLIC_URL). */
export async function startConsole(env: Record<string, string> = {}): Promise<ConsoleWorld> {
  if (chromiumMissing) throw new Error(`CONSOLE_E2E=required and there is no Chromium at ${chromiumPath} (apt-get install chromium)`);
  expectBuilt();
  const storage = await createCrashStorage('recruit-ops-console');
  let server: RunningServer | undefined;
  let browser: Browser | undefined;
  try {
    // The workspace is made through the same service as `cli workspace create`, before the server
    // starts: an embedded store belongs to one process at a time.
    const database = await storage.open();
    let workspaceId: string;
    let tokenWithoutPii: string;
    const users = {} as Record<UserRole, ConsoleUser>;
    try {
      await migrateToLatest(database.db);
      const email = 'super-admin@console.test';
      const admin = await createWorkspace(database.db, { name: 'Console tests', email, fullName: fullNameOf('SUPER_ADMIN') });
      workspaceId = admin.workspaceId;
      users.SUPER_ADMIN = { userId: admin.userId, email, fullName: fullNameOf('SUPER_ADMIN'), token: admin.token };
      for (const role of allRoles.filter((candidate) => candidate !== 'SUPER_ADMIN')) {
        const roleEmail = `${role.toLowerCase().replace(/_/g, '-')}@console.test`;
        // The CUSTOM user's custom role reads what OBSERVER reads.
        const custom = role === 'CUSTOM' ? await createCustomRole(database.db, workspaceId, 'Console readers', rightsByRole.OBSERVER) : undefined;
        const { userId } = await createUser(database.db, { workspaceId, email: roleEmail, role, fullName: fullNameOf(role), ...(custom ? { customRoleId: custom.customRoleId } : {}) });
        const { token } = await createToken(database.db, workspaceId, userId);
        users[role] = { userId, email: roleEmail, fullName: fullNameOf(role), token };
      }
      ({ token: tokenWithoutPii } = await createToken(database.db, workspaceId, users.RESEARCHER.userId, { canReadPersonalData: false }));
    } finally {
      await database.close();
    }

    // The limits per token, per address and on a workspace's search time are lifted: every request
    // comes from one address and a few tokens, many at a time, on a loaded two-core CI machine,
    // where a search the console sends can take long enough to put its workspace in debt. The
    // limits' own tests (in process and over sockets) set them.
    const liftedLimits = { RATE_LIMIT_MAX: '100000', SEARCH_BUDGET_MS_PER_SECOND: '0', PARTICIPANT_RATE_LIMIT_MAX: '100000', PARTICIPANT_LINK_RATE_LIMIT_MAX: '100000' };
    server = await startServer({ ...storage.env, ...liftedLimits, ...env }, 'warn', 'dist/server.js');
    browser = await chromium.launch({ executablePath: chromiumPath, headless: true, args: chromiumArgs });
    const origin = `http://127.0.0.1:${server.port}`;
    const contexts: BrowserContext[] = [];
    const errors = new WeakMap<Page, string[]>();
    const running = server;
    const openBrowser = browser;
    const twins = new Map<string, Promise<Page>>();
    const newPage = async ({ start = '/console/', ...options }: PageOptions = {}) => {
      // CSP stays enforced (no bypassCSP): a violation is a console error the test sees.
      const context = await openBrowser.newContext({ baseURL: origin, viewport: { width: 1280, height: 800 }, ...options });
      contexts.push(context);
      // Shorter than the test's own time limit, so a wait that never ends names its locator.
      context.setDefaultTimeout(actionTimeout);
      const page = await context.newPage();
      const logged: string[] = [];
      errors.set(page, logged);
      page.on('console', (message) => {
        if (message.type() === 'error') logged.push(message.text());
      });
      page.on('pageerror', (error) => logged.push(`uncaught: ${error.message}`));
      if (start !== false) await page.goto(start);
      return page;
    };
    return {
      origin,
      workspaceId,
      users,
      tokenWithoutPii,
      server: running,
      api: (role = 'SUPER_ADMIN') => createClient({ baseUrl: `${origin}/v1`, token: users[role].token }),
      newPage,
      async twinOf(page, viewport, { withoutScripts = false } = {}) {
        const key = `${viewport.width}x${viewport.height}`;
        if (!twins.has(key)) twins.set(key, newPage({ viewport, start: '/healthz' }));
        const twin = await twins.get(key)!;
        const markup = await page.content();
        await twin.setContent(withoutScripts ? markup.replace(/<script\b[^>]*><\/script>/g, '') : markup, { waitUntil: 'load' });
        return twin;
      },
      pageErrors: (page) => errors.get(page) ?? [],
      async stop() {
        await Promise.allSettled(contexts.map((context) => context.close()));
        await openBrowser.close();
        await stopGracefully(running);
        await storage.dispose();
      },
    };
  } catch (error) {
    await browser?.close().catch(() => {});
    if (server) server.child.kill('SIGKILL');
    await storage.dispose();
    throw error;
  }
}

/** The newest modification time of the files below `directory` (0 if there is none). */
function newestChange(directory: string): number {
  if (!existsSync(directory)) return 0;
  let newest = 0;
  for (const entry of readdirSync(directory, { withFileTypes: true, recursive: true })) {
    // Tests beside the sources are not built.
    if (entry.isFile() && !/\.test\.tsx?$/.test(entry.name)) newest = Math.max(newest, statSync(path.join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}

/**
 * The tests drive what `npm run build` made: fail clearly when it is missing or older than the
 * sources (`npx vitest run test/console/…` after an edit, without the build `npm test` runs first).
 */
function expectBuilt(): void {
  const at = (relative: string) => path.join(projectRoot, relative);
  const builds = [
    { built: 'dist', sources: ['src'] },
    { built: 'console/dist', sources: ['console/src', 'console/index.html', 'sdk/src'] },
  ];
  for (const { built, sources } of builds) {
    const builtAt = newestChange(at(built));
    if (builtAt === 0) throw new Error(`${built}/ is missing: run \`npm run build\` (npm test runs it first)`);
    const changedAt = Math.max(...sources.map((source) => (statSync(at(source)).isDirectory() ? newestChange(at(source)) : statSync(at(source)).mtimeMs)));
    if (changedAt > builtAt) throw new Error(`${built}/ is older than ${sources.join(', ')}: run \`npm run build\` (npm test runs it first)`);
  }
}

/** Signs in on the sign-in page with `token` and waits for the signed-in header. */
export async function signIn(page: Page, token: string): Promise<void> {
  if (!page.url().includes('/console')) await page.goto('/console/');
  await page.getByLabel('API token').fill(token);
  await page.getByRole('button', { name: 'Sign in with the token' }).click();
  await page.getByRole('button', { name: 'Sign out', exact: true }).waitFor();
}

/**
 * The page's Web Storage as plain data (the test files are type-checked without the DOM's types,
 * so the page's globals are named in a string).
 */
export async function storageOf(page: Page, kind: 'sessionStorage' | 'localStorage'): Promise<Record<string, string>> {
  return page.evaluate<Record<string, string>>(`Object.fromEntries(Object.entries(${kind}))`);
}

/** Fails on errors the page logged: a CSP violation, an uncaught exception, a failed load. */
export function expectNoPageErrors(world: ConsoleWorld, page: Page, allowed: RegExp[] = []): void {
  const unexpected = world.pageErrors(page).filter((message) => !allowed.some((pattern) => pattern.test(message)));
  expect(unexpected, 'errors logged by the page').toEqual([]);
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: unknown[]; failureSummary?: string }[];
}

/**
 * Runs axe-core (WCAG 2.x A and AA rules, and best practices) on the page as it is now and fails
 * on any serious or critical violation, listing each with the elements it found. axe is evaluated
 * through the DevTools protocol, which the page's CSP does not govern, so the policy stays on.
 */
export async function expectAccessible(page: Page, options: { disableRules?: string[] } = {}): Promise<void> {
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async (disabled: string[]) => {
    const axe = (globalThis as unknown as { axe: { run(context: unknown, options: unknown): Promise<{ violations: AxeViolation[] }> } }).axe;
    const rules = Object.fromEntries(disabled.map((rule) => [rule, { enabled: false }]));
    const result = await axe.run('html', { resultTypes: ['violations'], rules });
    return result.violations.map(({ id, impact, help, nodes }) => ({ id, impact, help, nodes: nodes.map(({ target, failureSummary }) => ({ target, failureSummary })) }));
  }, options.disableRules ?? []);
  const serious = violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical');
  const report = serious.map((violation) => `${violation.impact} ${violation.id}: ${violation.help}\n${violation.nodes.map((node) => `  ${JSON.stringify(node.target)} ${node.failureSummary ?? ''}`).join('\n')}`);
  expect(report, `axe-core on ${page.url()}`).toEqual([]);
}

/** What expectFitsViewport reads of an element in the page (the test files are type-checked without the DOM's types). */
interface LaidOut {
  getBoundingClientRect(): { left: number; right: number; top: number; bottom: number };
  parentElement: LaidOut | null;
  scrollWidth: number;
  clientWidth: number;
  ownerDocument: { defaultView: { getComputedStyle(element: LaidOut): { overflowX: string; overflowY: string } } };
}

/**
 * Fails when the page is wider than the viewport (it would scroll sideways: a table may scroll
 * inside its own box, the page may not), or when the header's user name or "Sign out" is not
 * whole within the viewport's width (the page may be scrolled down: the header is not fixed).
 * `where` names the page in the failure.
 */
export async function expectFitsViewport(page: Page, where: string): Promise<void> {
  const { scrollWidth, innerWidth } = await page.evaluate<{ scrollWidth: number; innerWidth: number }>(
    '({ scrollWidth: document.documentElement.scrollWidth, innerWidth: window.innerWidth })',
  );
  expect(scrollWidth, `${where}: the document is ${scrollWidth} px wide in a ${innerWidth} px viewport`).toBeLessThanOrEqual(innerWidth);
  if ((await page.getByRole('button', { name: 'Sign out' }).count()) === 0) return;
  for (const [name, control] of [
    ['the user name', page.getByTestId('user-name')],
    ['Sign out', page.getByRole('button', { name: 'Sign out' })],
  ] as const) {
    const box = await control.boundingBox();
    expect(box, `${where}: ${name} is not shown`).not.toBeNull();
    expect(box!.x, `${where}: ${name} starts left of the viewport`).toBeGreaterThanOrEqual(0);
    expect(box!.x + box!.width, `${where}: ${name} ends past the viewport`).toBeLessThanOrEqual(innerWidth);
    // Whole: not cut by an ancestor that clips it (overflow other than visible), nor by its own box.
    const clipped = await control.evaluate((element) => {
      const own = (element as unknown as LaidOut).getBoundingClientRect();
      const view = (element as unknown as LaidOut).ownerDocument.defaultView;
      for (let parent = (element as unknown as LaidOut).parentElement; parent; parent = parent.parentElement) {
        const style = view.getComputedStyle(parent);
        if (style.overflowX === 'visible' && style.overflowY === 'visible') continue;
        const box = parent.getBoundingClientRect();
        if (own.left < box.left - 0.5 || own.right > box.right + 0.5 || own.top < box.top - 0.5 || own.bottom > box.bottom + 0.5) return true;
      }
      return (element as unknown as LaidOut).scrollWidth > (element as unknown as LaidOut).clientWidth + 1;
    });
    expect(clipped, `${where}: ${name} is cut off`).toBe(false);
  }
}

/** The raw ids of properties, populations, participants and studies: a page names these, never shows their ids. */
export const rawIdPattern = /\b(?:prp|pop|ptc|stu)_[0-9A-HJKMNP-TV-Z]{26}\b/;

/**
 * Records, from before the console's first script runs, every text the page ever shows (each text
 * node added or changed, and each accessible label set) that holds a raw id: a page that paints an
 * id and then the name is caught although the name replaces it within a frame. Read it with
 * rawIdsShown. Runs through the DevTools protocol, which the page's CSP does not govern.
 */
export async function recordRawIds(page: Page): Promise<void> {
  await page.addInitScript(`(() => {
    const pattern = new RegExp(${JSON.stringify(rawIdPattern.source)});
    const seen = (window.__rawIdsShown = []);
    const check = (text, where) => { if (text && pattern.test(text)) seen.push(where + ': ' + text.trim().slice(0, 160)); };
    const visit = (node) => {
      if (node.nodeType === Node.TEXT_NODE) { if (!node.parentElement?.closest('script, style')) check(node.data, 'text'); return; }
      if (node.nodeType !== Node.ELEMENT_NODE) return;
      for (const name of ['aria-label', 'title', 'alt', 'placeholder']) check(node.getAttribute(name), name);
      for (const child of node.childNodes) visit(child);
    };
    new MutationObserver((records) => {
      for (const record of records) {
        if (record.type === 'characterData') check(record.target.data, 'text');
        else if (record.type === 'attributes') check(record.target.getAttribute(record.attributeName), record.attributeName);
        else record.addedNodes.forEach(visit);
      }
    }).observe(document, { subtree: true, childList: true, characterData: true, attributes: true, attributeFilter: ['aria-label', 'title', 'alt', 'placeholder'] });
  })()`);
}

/**
 * The raw ids the page showed since it was loaded (recordRawIds), and those in its text now: both
 * must be empty. Call before every full navigation (page.goto starts the record again).
 */
export async function rawIdsShown(page: Page): Promise<string[]> {
  return page.evaluate<string[]>(`(() => {
    const recorded = window.__rawIdsShown ?? ['the raw-id recorder is not installed (recordRawIds)'];
    const now = document.body.innerText.match(new RegExp(${JSON.stringify(rawIdPattern.source)}, 'g')) ?? [];
    return [...recorded, ...now.map((id) => 'text now: ' + id)];
  })()`);
}

/**
 * Chooses a condition's property in the filter builder's picker as a person does: types its name
 * and clicks it in the list, in `section` (the picker's heading) when the name is in several.
 */
export async function chooseProperty(scope: Locator, label: string, section?: string): Promise<void> {
  const input = scope.getByRole('combobox', { name: 'Property', exact: true });
  await input.fill(label);
  const list = scope.getByRole('listbox', { name: 'Properties', exact: true });
  await (section ? list.getByRole('group', { name: section, exact: true }) : list).getByRole('option', { name: label, exact: true }).click();
}

/**
 * Chooses a file in the import form's file field as a person can: once the field is enabled (it
 * waits for the workspace's properties, which decide which columns need mapping). Playwright's
 * setInputFiles does not wait for that, and a file set on a disabled field is ignored.
 */
export async function chooseFile(page: Page, file: { name: string; mimeType: string; buffer: Buffer }): Promise<void> {
  const field = page.getByLabel('CSV file', { exact: true });
  await field.and(page.locator(':enabled')).waitFor();
  await field.setInputFiles(file);
}

/**
 * Runs axe-core (WCAG 2.x A and AA, WCAG 2.2 AA and best practices) and fails on a violation of
 * any impact, minor included: the bar of the participant's pages, which every person must be
 * able to use.
 */
export async function expectNoAxeViolations(page: Page): Promise<void> {
  await page.evaluate(axeSource);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(context: unknown, options: unknown): Promise<{ violations: AxeViolation[] }> } }).axe;
    const result = await axe.run('html', { resultTypes: ['violations'], runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'] } });
    return result.violations.map(({ id, impact, help, nodes }) => ({ id, impact, help, nodes: nodes.map(({ target, failureSummary }) => ({ target, failureSummary })) }));
  });
  const report = violations.map((violation) => `${violation.impact} ${violation.id}: ${violation.help}\n${violation.nodes.map((node) => `  ${JSON.stringify(node.target)} ${node.failureSummary ?? ''}`).join('\n')}`);
  expect(report, `axe-core on ${page.url()}`).toEqual([]);
}
