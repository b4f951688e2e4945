import { createClient, unwrap } from '@recruit-ops/sdk';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type ConsoleWorld, describeConsole, expectAccessible, expectNoPageErrors, signIn, startConsole } from './browser.js';

describeConsole('console: users, teams and API keys', () => {
  let world: ConsoleWorld;
  beforeAll(async () => {
    world = await startConsole();
  }, 120_000);
  afterAll(async () => world?.stop());

  it('changes a role and deactivates a user, makes a team with a member, and makes and revokes a key whose secret is shown once', async () => {
    const page = await world.newPage();
    await signIn(page, world.users.SUPER_ADMIN.token);

    // Users: the observer becomes a researcher, then is deactivated (their token stops at once).
    await page.getByRole('link', { name: 'Users' }).click();
    await page.getByRole('heading', { name: 'Users', exact: true }).waitFor();
    await expectAccessible(page);
    await page.getByLabel('Role of Observer Tester').selectOption('RESEARCHER');
    await page.getByRole('status').getByText('Observer Tester is now Researcher.').waitFor();
    expect(unwrap(await world.api().GET('/users/{userId}', { params: { path: { userId: world.users.OBSERVER.userId } } })).role).toBe('RESEARCHER');
    await page.getByRole('button', { name: 'Deactivate Collaborator Tester' }).click();
    await page.getByRole('button', { name: 'Reactivate Collaborator Tester' }).waitFor();
    expect((await world.api('COLLABORATOR').GET('/me')).response.status).toBe(401);

    // Teams: one made, a member added, renamed.
    await page.getByRole('link', { name: 'Teams' }).click();
    await page.getByRole('heading', { name: 'Teams', exact: true }).waitFor();
    await page.getByLabel('New team name').fill('Discovery');
    await page.getByRole('button', { name: 'Create team' }).click();
    await page.getByRole('heading', { name: 'Discovery' }).waitFor();
    await page.getByLabel('Add a member to Discovery').selectOption({ label: 'Researcher Tester' });
    await page.getByRole('button', { name: 'Add to Discovery' }).click();
    await page.getByRole('list', { name: 'Members of Discovery' }).getByText('Researcher Tester').waitFor();
    await page.getByLabel('New name for Discovery').fill('Discovery squad');
    await page.getByRole('button', { name: 'Rename Discovery' }).click();
    await page.getByRole('heading', { name: 'Discovery squad' }).waitFor();
    await expectAccessible(page);
    // The same name again is refused beside the field.
    await page.getByLabel('New team name').fill('discovery SQUAD');
    await page.getByRole('button', { name: 'Create team' }).click();
    await page.getByRole('alert').waitFor();
    await expect.poll(() => page.getByLabel('New team name').getAttribute('aria-invalid')).toBe('true');

    // API keys: a read-only key, its secret shown once, working, then revoked.
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.getByRole('heading', { name: 'API keys', exact: true }).waitFor();
    await page.getByLabel('Key name').fill('Nightly export');
    await page.getByLabel('Read studies, people and participants').check();
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = (await page.getByTestId('new-key-secret').textContent())!;
    expect(secret).toMatch(/^rk_wsp_/);
    await expectAccessible(page);
    const keyApi = createClient({ baseUrl: `${world.origin}/v1`, token: secret });
    expect((await keyApi.GET('/studies')).response.status).toBe(200);
    expect((await keyApi.POST('/teams', { body: { name: 'Not allowed' } })).response.status).toBe(403);
    await page.getByRole('button', { name: 'Revoke Nightly export' }).click();
    await page.getByRole('cell', { name: 'Revoked' }).waitFor();
    expect((await keyApi.GET('/studies')).response.status).toBe(401);
    // A reload does not show the secret again.
    await page.reload();
    await page.getByRole('heading', { name: 'API keys', exact: true }).waitFor();
    expect(await page.getByTestId('new-key-secret').count()).toBe(0);
    // The one refusal the test asked for: the team name taken.
    expectNoPageErrors(world, page, [/status of 409/]);
  });
});
