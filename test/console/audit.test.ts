import { unwrap } from '@recruit-ops/sdk';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type ConsoleWorld, describeConsole, expectAccessible, expectNoPageErrors, signIn, startConsole } from './browser.js';

describeConsole('console: audit trail', () => {
  let world: ConsoleWorld;
  beforeAll(async () => {
    world = await startConsole();
  }, 120_000);
  afterAll(async () => world?.stop());

  it('lists the trail newest first, filters it by resource, reads older entries with "Show older entries", and is hidden from a role without audit:read', async () => {
    const api = world.api('OPS_MANAGER');
    const study = unwrap(await api.POST('/studies', { body: { studyType: 'INTERVIEWS', recruitmentStrategy: 'IN_SERVICE', studyPlan: { name: 'Audited study' } } }));
    unwrap(await api.POST('/studies/{studyId}/launch', { params: { path: { studyId: study.studyId } } }));
    // 55 more writes, so that the trail is more than one page (50) long.
    for (let round = 0; round < 55; round++) unwrap(await world.api('SUPER_ADMIN').PUT('/audit-settings', { body: { retentionDays: 30 + round } }));

    const page = await world.newPage();
    await signIn(page, world.users.OPS_MANAGER.token);
    await page.getByRole('link', { name: 'Audit', exact: true }).click();
    await page.getByRole('heading', { name: 'Audit trail' }).waitFor();
    await page.getByRole('table').waitFor();
    expect(await page.getByRole('status').textContent()).toBe('50 entries shown.');
    expect(await page.getByRole('row').nth(1).textContent()).toContain('putAuditSettings');
    await expectAccessible(page);

    await page.getByRole('button', { name: 'Show older entries' }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toBe('57 entries shown, no older one.');
    expect(await page.getByRole('button', { name: 'Show older entries' }).count()).toBe(0);
    // The oldest: the study's creation and launch by the signed-in user ("You"), the launch with its states.
    const launch = page.getByRole('row').filter({ hasText: 'launchStudy' });
    expect(await launch.textContent()).toMatch(/You.*launchStudy.*Study.*Draft.*Active/);

    await page.getByLabel('Resource type').fill('study');
    await page.getByRole('button', { name: 'Filter', exact: true }).click();
    await expect.poll(() => page.getByRole('status').textContent()).toBe('2 entries shown, no older one.');
    await page.getByRole('link', { name: 'Study' }).first().waitFor();
    await expectAccessible(page);

    // A time window that ends before everything: nothing matches.
    await page.getByLabel('Until').fill('2020-01-01T00:00');
    await page.getByRole('button', { name: 'Filter', exact: true }).click();
    await page.getByText('No entry matches.').waitFor();
    expectNoPageErrors(world, page);

    const researcher = await world.newPage();
    await signIn(researcher, world.users.RESEARCHER.token);
    expect(await researcher.getByRole('link', { name: 'Audit', exact: true }).count()).toBe(0);
    await researcher.goto('/console/audit');
    await researcher.getByText('Your role may not read the audit trail').waitFor();
    expectNoPageErrors(world, researcher);
  });
});
