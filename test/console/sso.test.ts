import { unwrap } from '@recruit-ops/sdk';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startIdentityProvider, type TestIdentityProvider } from '../oidc-provider.js';
import { type ConsoleWorld, describeConsole, expectAccessible, expectNoPageErrors } from './browser.js';

/**
 * Single sign-on in the console (issue 36, item 2), as a person does it in Chromium: the workspace
 * named, on to the organisation's identity provider (a real `oidc-provider` on loopback), its
 * sign-in page, and back to the console signed in by a cookie; a person the workspace does not
 * know comes back to the sign-in page told why. By keyboard alone, axe-clean.
 */
describeConsole('console: single sign-on', () => {
  let world: ConsoleWorld;
  let idp: TestIdentityProvider;
  beforeAll(async () => {
    world = await (await import('./browser.js')).startConsole({ OIDC_ALLOW_HTTP: 'on', OIDC_ALLOW_PRIVATE_ISSUERS: 'on' });
    // Without PUBLIC_URL the redirect URI is the address the browser came to.
    idp = await startIdentityProvider({ redirectUris: [`${world.origin}/v1/session/oidc/callback`] });
  }, 120_000);
  afterAll(async () => {
    await world?.stop();
    await idp?.close();
  });

  it('signs in through the identity provider by keyboard alone, and says why when the person is not a member', async () => {
    const admin = world.api();
    const me = unwrap(await admin.GET('/me'));
    const settings = unwrap(await admin.PUT('/sso-settings', { body: { issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret, jitDomains: ['team.console.test'], jitRole: 'RESEARCHER' } }));
    expect(settings.redirectUri).toBe(`${world.origin}/v1/session/oidc/callback`);
    idp.accounts.set('lin@team.console.test', { name: 'Lin Member' });

    const page = await world.newPage();
    await page.getByRole('heading', { name: 'Single sign-on' }).waitFor();
    await expectAccessible(page);
    // Without a workspace named, the page says what it needs.
    await page.getByRole('button', { name: 'Continue with single sign-on' }).click();
    await expect.poll(() => page.getByTestId('sign-in-problem').textContent()).toBe("Enter your workspace's short name first.");

    expectNoPageErrors(world, page);
    await page.getByLabel('Workspace').focus();
    await page.keyboard.type(me.workspaceSlug);
    await page.getByRole('button', { name: 'Continue with single sign-on' }).focus();
    await page.keyboard.press('Enter');
    // The provider's own sign-in page.
    await page.waitForURL((url) => url.href.startsWith(idp.issuer));
    await page.locator('input[name="login"]').fill('lin@team.console.test');
    await page.locator('input[name="password"]').fill('any password');
    // What the provider's development page logs (its web fonts, its favicon) is not the console's.
    const providerErrors = world.pageErrors(page).length;
    await page.keyboard.press('Enter');
    // Back in the console, signed in by a cookie, the address cleaned.
    await page.getByRole('button', { name: 'Sign out everywhere' }).waitFor();
    expect(await page.getByRole('banner').textContent()).toContain('Lin Member');
    expect(new URL(page.url()).search).toBe('');
    const cookies = await page.context().cookies(world.origin);
    expect(cookies.find((cookie) => cookie.name === 'recruit_session')).toMatchObject({ httpOnly: true, sameSite: 'Lax', path: '/' });
    await expectAccessible(page);
    expect(world.pageErrors(page).slice(providerErrors)).toEqual([]);

    // A person at another domain: back at the sign-in page, told why.
    const stranger = await world.newPage();
    await stranger.getByLabel('Workspace').fill(me.workspaceSlug);
    await stranger.getByRole('button', { name: 'Continue with single sign-on' }).click();
    await stranger.waitForURL((url) => url.href.startsWith(idp.issuer));
    await stranger.locator('input[name="login"]').fill('someone@elsewhere.console.test');
    await stranger.locator('input[name="password"]').fill('any password');
    const strangerProviderErrors = world.pageErrors(stranger).length;
    await stranger.keyboard.press('Enter');
    await expect
      .poll(() => stranger.getByTestId('sign-in-problem').textContent(), { timeout: 15_000 })
      .toBe('Your identity provider signed you in, but you are not a user of this workspace. Ask an administrator to invite you.');
    expect(new URL(stranger.url()).search).toBe('');
    await expectAccessible(stranger);
    expect(world.pageErrors(stranger).slice(strangerProviderErrors)).toEqual([]);
  });
});
