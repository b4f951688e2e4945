import { unwrap } from '@recruit-ops/sdk';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type ConsoleWorld, describeConsole, expectAccessible, expectNoPageErrors, signIn, startConsole } from './browser.js';

describeConsole('console: studies', () => {
  let world: ConsoleWorld;
  beforeAll(async () => {
    world = await startConsole();
  }, 120_000);
  afterAll(async () => world?.stop());

  it('creates a study (the API’s validation error beside its field first), lists it, and launches it from its page', async () => {
    const page = await world.newPage();
    await signIn(page, world.users.RESEARCHER.token);
    await page.getByRole('heading', { name: 'Studies' }).waitFor();
    await expectAccessible(page);

    await page.getByRole('button', { name: 'Create study' }).click();
    await page.getByRole('heading', { name: 'Create a study' }).waitFor();
    await expectAccessible(page);
    // A participation limit of 0: the API's 400 names studyPlan.participationLimit, shown beside that field.
    await page.getByLabel('Name').fill('Checkout interviews (console)');
    await page.getByLabel('Participation limit').fill('0');
    await page.getByRole('button', { name: 'Create study' }).click();
    const limit = page.getByLabel('Participation limit');
    await expect.poll(() => limit.getAttribute('aria-invalid')).toBe('true');
    const errorId = (await limit.getAttribute('aria-describedby'))!.split(' ').pop()!;
    expect(await page.locator(`[id="${errorId}"]`).textContent()).toMatch(/>= ?1/);
    expect(await page.getByLabel('Name').getAttribute('aria-invalid')).toBeNull();
    await expectAccessible(page);

    await limit.fill('12');
    await page.getByRole('button', { name: 'Create study' }).click();
    await page.getByRole('heading', { name: 'Checkout interviews (console)' }).waitFor();
    const studyId = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!);
    expect(await page.getByText('Participation limit').locator('..').textContent()).toContain('12');
    expect(await page.locator('main').textContent()).toContain('Draft');
    await expectAccessible(page);

    // In the list, under every status and under Draft; not under Active yet.
    await page.getByRole('link', { name: 'Studies' }).click();
    await page.getByRole('link', { name: 'Checkout interviews (console)' }).waitFor();
    await page.getByLabel('Status').selectOption('DRAFT');
    await page.waitForURL(/status=DRAFT/);
    await page.getByRole('link', { name: 'Checkout interviews (console)' }).waitFor();
    await page.getByLabel('Status').selectOption('ACTIVE');
    await page.waitForURL(/status=ACTIVE/);
    await expect.poll(() => page.getByRole('link', { name: 'Checkout interviews (console)' }).count()).toBe(0);

    // Launch from its page: the API says ACTIVE, and the page offers Pause and Close, no longer Launch.
    await page.goto(`/console/studies/${encodeURIComponent(studyId)}`);
    await page.getByRole('button', { name: 'Launch' }).click();
    await page.getByRole('button', { name: 'Pause' }).waitFor();
    expect(await page.getByRole('button', { name: 'Launch' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Close' }).count()).toBe(1);
    const study = unwrap(await world.api().GET('/studies/{studyId}', { params: { path: { studyId } } }));
    expect(study.status).toBe('ACTIVE');
    await expectAccessible(page);
    expectNoPageErrors(world, page, [/status of 400/]);
  });

  it('pages the list with the API’s cursors', async () => {
    const api = world.api();
    // 26 more studies than fit a page of 25, created through the API.
    for (let index = 0; index < 26; index++) {
      unwrap(await api.POST('/studies', { body: { studyType: 'SURVEY', recruitmentStrategy: 'IN_SERVICE', studyPlan: { name: `Paged survey ${String(index).padStart(2, '0')}` } } }));
    }
    const page = await world.newPage();
    await signIn(page, world.users.OPS_MANAGER.token);
    const rows = page.locator('main table tbody tr');
    await expect.poll(() => rows.count()).toBe(25);
    const first = await rows.allTextContents();
    await page.getByRole('button', { name: 'Next' }).click();
    await expect.poll(async () => (await rows.allTextContents())[0]).not.toBe(first[0]);
    const second = await rows.allTextContents();
    expect(second.filter((row) => first.includes(row))).toEqual([]);
    expect(await page.getByRole('navigation', { name: 'Pages of studies' }).textContent()).toMatch(/Page 2/);
    await page.getByRole('button', { name: 'Previous' }).click();
    await expect.poll(() => rows.allTextContents()).toEqual(first);
    expectNoPageErrors(world, page);
  });

  it('offers an OBSERVER no write: no Create study, no status moves', async () => {
    const created = unwrap(await world.api().POST('/studies', { body: { studyType: 'INTERVIEWS', recruitmentStrategy: 'IN_SERVICE', studyPlan: { name: 'Observed study' } } }));
    const page = await world.newPage();
    await signIn(page, world.users.OBSERVER.token);
    expect(await page.getByTestId('user-role').textContent()).toBe('Observer');
    await page.getByRole('link', { name: 'Observed study' }).waitFor();
    expect(await page.getByRole('button', { name: 'Create study' }).count()).toBe(0);
    expect(await page.getByRole('link', { name: 'Create study' }).count()).toBe(0);

    await page.getByRole('link', { name: 'Observed study' }).click();
    await page.getByRole('heading', { name: 'Observed study' }).waitFor();
    await page.getByRole('heading', { name: 'Participants' }).waitFor();
    for (const name of ['Launch', 'Pause', 'Resume', 'Close']) expect(await page.getByRole('button', { name }).count(), name).toBe(0);
    await expectAccessible(page);

    // The form's address, typed in: the page says the role may not, and offers no form.
    await page.goto('/console/studies/new');
    await page.getByText('Your role may not create studies.').waitFor();
    expect(await page.getByRole('button', { name: 'Create study' }).count()).toBe(0);
    expect(unwrap(await world.api().GET('/studies/{studyId}', { params: { path: { studyId: created.studyId } } })).status).toBe('DRAFT');
    expectNoPageErrors(world, page);
  });
});
