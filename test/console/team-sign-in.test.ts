import { setTimeout as sleep } from 'node:timers/promises';
import { unwrap } from '@recruit-ops/sdk';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type SmtpReceiver, startSmtpReceiver } from '../smtp-receiver.js';
import { type ConsoleWorld, describeConsole, expectAccessible, expectNoPageErrors, storageOf } from './browser.js';

/**
 * A team signs in to the console (issue 36, item 2): an invitation accepted with a password, the
 * password signed in with, an emailed link, sign-out and sign-out everywhere; the session in an
 * HttpOnly cookie the page never holds, axe-clean pages.
 */
describeConsole('console: a team signs in', () => {
  let world: ConsoleWorld;
  let smtp: SmtpReceiver;
  beforeAll(async () => {
    smtp = await startSmtpReceiver();
    world = await startConsole();
  }, 120_000);
  afterAll(async () => {
    await world?.stop();
    await smtp?.close();
  });
  const startConsole = async () =>
    (await import('./browser.js')).startConsole({
      SMTP_HOST: '127.0.0.1',
      SMTP_PORT: String(smtp.port),
      SMTP_SECURITY: 'none',
      MAIL_FROM: 'Research Team <research@console.test>',
      PUBLIC_URL: 'http://console.example.test',
      JOBS: 'on',
      JOB_POLL_SECONDS: '0.1',
    });

  /** The path and token of the `count`th console link mailed to the address (the test's server stands in for PUBLIC_URL). */
  async function mailedLink(address: string, count: number): Promise<string> {
    const deadline = Date.now() + 20_000;
    const links = () => smtp.to(address).filter((mail) => (mail.parsed.text ?? '').includes('/console/'));
    while (links().length < count && Date.now() < deadline) await sleep(100);
    const match = /http:\/\/console\.example\.test(\/console\/[a-z/-]+#[A-Za-z0-9_-]{43})/.exec(links()[count - 1]?.parsed.text ?? '');
    expect(match, 'a mailed console link').not.toBeNull();
    return match![1]!;
  }

  it('accepts an invitation with a password, signs in with it and by an emailed link, and signs out everywhere', async () => {
    const admin = world.api();
    const me = unwrap(await admin.GET('/me'));
    const email = 'new.member@console.test';
    unwrap(await admin.POST('/users/invitations', { body: { email, role: 'RESEARCHER', fullname: 'New Member' } }));

    // The invitation's page: a password chosen, then the console, signed in by a cookie.
    const page = await world.newPage();
    await page.goto(await mailedLink(email, 1));
    await page.getByRole('heading', { name: 'Accept your invitation' }).waitFor();
    await expectAccessible(page);
    await page.getByLabel('Choose a password').fill('a long console password');
    await page.getByRole('button', { name: 'Set the password and continue' }).click();
    await page.getByRole('button', { name: 'Sign out everywhere' }).waitFor();
    expect(await page.getByRole('banner').textContent()).toContain('New Member');
    expect(page.url()).not.toContain('#');
    const [cookie] = await page.context().cookies();
    expect(cookie).toMatchObject({ name: 'recruit_session', httpOnly: true, sameSite: 'Lax', path: '/' });
    expect(await storageOf(page, 'sessionStorage')).toEqual({});
    // A reload finds the session again; a write goes with the CSRF header (the studies page lists what the API answers).
    await page.reload();
    await page.getByRole('button', { name: 'Sign out everywhere' }).waitFor();
    await page.getByRole('button', { name: 'Sign out', exact: true }).click();
    await page.getByRole('heading', { name: 'Sign in to the console' }).waitFor();

    // By password.
    await expectAccessible(page);
    await page.getByLabel('Workspace').fill(me.workspaceSlug);
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password', { exact: true }).fill('not the password');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await expect.poll(() => page.getByTestId('sign-in-problem').textContent()).toBe('The email or the password is wrong.');
    await page.getByLabel('Password', { exact: true }).fill('a long console password');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('button', { name: 'Sign out everywhere' }).waitFor();

    // By an emailed link, in another browser.
    const other = await world.newPage();
    await other.getByLabel('Workspace').fill(me.workspaceSlug);
    await other.getByLabel('Email').fill(email);
    await other.getByRole('button', { name: 'Email me a link' }).click();
    await other.getByTestId('link-sent').waitFor();
    await other.goto(await mailedLink(email, 2));
    await expectAccessible(other);
    await other.getByRole('button', { name: 'Continue to the console' }).click();
    await other.getByRole('button', { name: 'Sign out everywhere' }).waitFor();
    await expectAccessible(other);

    // Everywhere: the first browser's session ends too.
    await other.getByRole('button', { name: 'Sign out everywhere' }).click();
    await other.getByRole('heading', { name: 'Sign in to the console' }).waitFor();
    await page.reload();
    await page.getByRole('heading', { name: 'Sign in to the console' }).waitFor();
    // The refused password and the ended session's check are the only failed loads.
    expectNoPageErrors(world, page, [/status of 401/]);
    expectNoPageErrors(world, other);
  });
});
