import { afterAll, beforeAll, expect, it } from 'vitest';
import { type ConsoleWorld, describeConsole, expectAccessible, expectNoPageErrors, signIn, startConsole, storageOf } from './browser.js';

describeConsole('console: signing in', () => {
  let world: ConsoleWorld;
  beforeAll(async () => {
    world = await startConsole();
  }, 120_000);
  afterAll(async () => world?.stop());

  it('refuses a wrong token in words beside the field, and keeps nothing', async () => {
    const page = await world.newPage();
    await expectAccessible(page);
    await page.getByLabel('API token').fill('rk_not_a_real_token');
    await page.getByRole('button', { name: 'Sign in with the token' }).click();
    const field = page.getByLabel('API token');
    await expect.poll(() => field.getAttribute('aria-invalid')).toBe('true');
    // The error is the field's description: read out with it, and shown next to it.
    const describedBy = await field.getAttribute('aria-describedby');
    const error = page.locator(`[id="${describedBy!.split(' ').pop()}"]`);
    expect(await error.textContent()).toMatch(/This token was not accepted/);
    expect(await storageOf(page, 'sessionStorage')).toEqual({});
    await expectAccessible(page);
    // The API's 401 is logged by the browser as a failed load; nothing else may be.
    expectNoPageErrors(world, page, [/status of 401/]);
  });

  it('signs in with a good token: the header shows who (name, email) and their role; sign out forgets the token', async () => {
    const page = await world.newPage();
    const researcher = world.users.RESEARCHER;
    await signIn(page, researcher.token);
    const header = page.getByRole('banner');
    await expect.poll(() => header.textContent()).toContain(researcher.fullName);
    expect(await header.textContent()).toContain(researcher.email);
    expect(await page.getByTestId('user-role').textContent()).toBe('Researcher');
    // The token is in this tab's sessionStorage only: not in the address, not in localStorage or a cookie.
    expect(page.url()).not.toContain(researcher.token);
    expect(Object.values(await storageOf(page, 'sessionStorage'))).toEqual([researcher.token]);
    expect(await storageOf(page, 'localStorage')).toEqual({});
    expect(await page.context().cookies()).toEqual([]);

    // A reload signs in again from sessionStorage.
    await page.reload();
    await page.getByRole('button', { name: 'Sign out', exact: true }).waitFor();

    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.getByLabel('API token').waitFor();
    expect(await storageOf(page, 'sessionStorage')).toEqual({});
    expectNoPageErrors(world, page);
  });
});
