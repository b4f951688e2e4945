import { unwrap } from '@recruit-ops/sdk';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type ConsoleWorld, describeConsole, expectAccessible, expectNoPageErrors, signIn, startConsole } from './browser.js';

describeConsole('console: a person’s page', () => {
  let world: ConsoleWorld;
  let shoeSizeId: string;
  let customerNumberId: string;
  let studyName: string;
  let populationId: string;
  beforeAll(async () => {
    world = await startConsole();
    const api = world.api();
    const made = unwrap(
      await api.POST('/properties/import', {
        body: [
          { name: 'Shoe size', propertyType: 'NUMBER' },
          { name: 'Customer number', propertyType: 'STRING', isPII: true },
        ],
      }),
    );
    [shoeSizeId, customerNumberId] = made.results.map((result) => result.personProperty.propertyId) as [string, string];
    studyName = 'Fitting-room interviews';
    populationId = unwrap(await api.POST('/populations', { body: { name: 'Customers' } })).populationId;
  }, 120_000);
  afterAll(async () => world?.stop());

  /** A person with a study, an incentive and property values, made through the API. */
  async function seedPerson(email: string) {
    const api = world.api();
    const person = unwrap(
      await api.POST('/people', {
        body: { email, firstName: 'Grace', lastName: 'Hopper', phone: '+44 20 7946 0000', properties: { [shoeSizeId]: 42, [customerNumberId]: 'C-1906' }, populationIds: [populationId] },
      }),
    );
    const study = unwrap(await api.POST('/studies', { body: { studyType: 'INTERVIEWS', recruitmentStrategy: 'IN_SERVICE', studyPlan: { name: studyName } } }));
    unwrap(await api.POST('/studies/{studyId}/participants', { params: { path: { studyId: study.studyId } }, body: { personIds: [person.personId] } }));
    const participant = unwrap(
      await api.POST('/studies/{studyId}/participants/search', {
        params: { path: { studyId: study.studyId } },
        body: { filter: { filters: [{ property: { propertyGroup: 'PERSON', propertyName: 'PERSON_ID' }, comparison: 'EQUALS', value: person.personId }] } },
      }),
    ).results[0]!;
    unwrap(await api.POST('/incentives', { body: { participantId: participant.participantId, type: 'RECRUITMENT_FEE', amountCents: 2500 } }));
    return person;
  }

  it('shows a person, edits them (the API’s error beside its field first), opts them out, and deletes them after stating what that does', async () => {
    const person = await seedPerson('grace@console.test');
    const page = await world.newPage();
    await signIn(page, world.users.OPS_MANAGER.token);
    await page.goto(`/console/people/${encodeURIComponent(person.personId)}`);
    await page.getByRole('heading', { name: 'Grace Hopper' }).waitFor();
    const main = page.locator('main');
    // Details, the properties by their names, the study and the incentive.
    expect(await main.textContent()).toContain('grace@console.test');
    await page.getByText('Shoe size').waitFor();
    expect(await page.getByText('Shoe size').locator('..').textContent()).toContain('42');
    expect(await page.getByText('Customer number').locator('..').textContent()).toContain('C-1906');
    await expect.poll(() => page.getByText('Populations').locator('..').textContent()).toContain('Customers');
    await page.getByRole('table', { name: 'Studies this person takes part in' }).getByRole('link', { name: studyName }).waitFor();
    // The incentive, with its study by name.
    await expect.poll(() => page.getByRole('table', { name: 'Incentives sent to this person' }).textContent()).toContain('$25.00');
    expect(await page.getByRole('table', { name: 'Incentives sent to this person' }).textContent()).toContain(studyName);
    expect(await page.getByTestId('masked-notice').count()).toBe(0);
    await expectAccessible(page);

    // An email the API refuses: its message beside the Email field, nothing saved.
    await page.getByRole('button', { name: 'Edit' }).click();
    const email = page.getByLabel('Email', { exact: true });
    await email.fill('not-an-email');
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => email.getAttribute('aria-invalid')).toBe('true');
    const errorId = (await email.getAttribute('aria-describedby'))!.split(' ').pop()!;
    expect(await page.locator(`[id="${errorId}"]`).textContent()).toMatch(/email/i);
    expect(await page.getByLabel('First name').getAttribute('aria-invalid')).toBeNull();
    await expectAccessible(page);

    // A property value of the wrong type: the API names ["properties", id], shown beside that property.
    await email.fill('grace.hopper@console.test');
    const shoeSize = page.getByLabel('Shoe size');
    await shoeSize.fill('very large');
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => shoeSize.getAttribute('aria-invalid')).toBe('true');
    expect(await email.getAttribute('aria-invalid')).toBeNull();
    const shoeErrorId = (await shoeSize.getAttribute('aria-describedby'))!.split(' ').pop()!;
    expect(await page.locator(`[id="${shoeErrorId}"]`).textContent()).not.toBe('');

    // Fixed, with a new first name and shoe size: saved, and the API has them.
    await page.getByLabel('First name').fill('Ada');
    await shoeSize.fill('43');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    await page.getByRole('heading', { name: 'Ada Hopper' }).waitFor();
    const edited = unwrap(await world.api().GET('/people/{personId}', { params: { path: { personId: person.personId } } }));
    expect(edited).toMatchObject({ email: 'grace.hopper@console.test', firstName: 'Ada', lastName: 'Hopper', properties: { [shoeSizeId]: 43, [customerNumberId]: 'C-1906' } });

    // Opt out, and back in.
    await page.getByRole('button', { name: 'Opt out' }).click();
    await page.getByRole('button', { name: 'Opt back in' }).waitFor();
    expect(await page.getByTestId('opt-out-state').textContent()).toMatch(/^Opted out/);
    expect(unwrap(await world.api().GET('/people/{personIdOrEmail}/opted-out', { params: { path: { personIdOrEmail: person.personId } } })).isOptedOut).toBe(true);
    await page.getByRole('button', { name: 'Opt back in' }).click();
    await page.getByRole('button', { name: 'Opt out' }).waitFor();
    expect(unwrap(await world.api().GET('/people/{personIdOrEmail}/opted-out', { params: { path: { personIdOrEmail: person.personId } } })).isOptedOut).toBe(false);
    await page.getByRole('button', { name: 'Opt out' }).click();
    await page.getByRole('button', { name: 'Opt back in' }).waitFor();

    // Delete: the consequences in words first; "Keep this person" deletes nothing.
    await page.getByRole('button', { name: 'Delete person…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete this person?' });
    await dialog.waitFor();
    const consequences = await dialog.textContent();
    expect(consequences).toContain('disappear at once from every list, search, count and export');
    expect(consequences).toContain('erased for good by background work within 90 days');
    expect(consequences).toContain('Incentives already sent to them stay on record');
    await expectAccessible(page);
    await dialog.getByRole('button', { name: 'Keep this person' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect((await world.api().GET('/people/{personId}', { params: { path: { personId: person.personId } } })).response.status).toBe(200);

    await page.getByRole('button', { name: 'Delete person…' }).click();
    await dialog.getByRole('button', { name: 'Delete for good' }).click();
    await page.getByRole('heading', { name: 'Person deleted' }).waitFor();
    expect((await world.api().GET('/people/{personId}', { params: { path: { personId: person.personId } } })).response.status).toBe(404);
    await expectAccessible(page);
    expectNoPageErrors(world, page, [/status of 400/]);
  }, 120_000);

  it('shows a token without the personal-data right the masked values as the API gives them, marked masked', async () => {
    const person = await seedPerson('masked@console.test');
    const page = await world.newPage();
    await signIn(page, world.tokenWithoutPii);
    await page.goto(`/console/people/${encodeURIComponent(person.personId)}`);
    await page.getByTestId('masked-notice').waitFor();
    const main = page.locator('main');
    expect(await main.textContent()).not.toContain('masked@console.test');
    expect(await main.textContent()).not.toContain('C-1906');
    // The email and names as the API masks them, each with its badge; the non-personal property in clear.
    const emailValue = page.getByText('Email', { exact: true }).locator('..');
    expect(await emailValue.textContent()).toContain('***@***');
    expect(await emailValue.locator('[data-masked="true"]').count()).toBe(1);
    expect(await page.getByText('First name', { exact: true }).locator('..').textContent()).toContain('***');
    const customerNumber = page.getByText('Customer number').locator('..');
    expect(await customerNumber.textContent()).toContain('***');
    expect(await customerNumber.getByText('Masked').count()).toBe(1);
    expect(await page.getByText('Shoe size').locator('..').textContent()).toContain('42');
    expect(await page.getByText('Shoe size').locator('..').getByText('Masked').count()).toBe(0);
    await page.getByRole('table', { name: 'Studies this person takes part in' }).getByRole('link', { name: studyName }).first().waitFor();
    await expectAccessible(page);

    // The form offers no masked value to change (saving would write the mask back).
    await page.getByRole('button', { name: 'Edit' }).click();
    expect(await page.getByLabel('Email', { exact: true }).isDisabled()).toBe(true);
    expect(await page.getByLabel('Customer number').isDisabled()).toBe(true);
    expect(await page.getByLabel('Shoe size').isDisabled()).toBe(false);
    await expectAccessible(page);
    expectNoPageErrors(world, page);
  });

  it('offers an OBSERVER no edit, opt-out or deletion', async () => {
    const person = await seedPerson('observed@console.test');
    const page = await world.newPage();
    await signIn(page, world.users.OBSERVER.token);
    await page.goto(`/console/people/${encodeURIComponent(person.personId)}`);
    await page.getByRole('heading', { name: 'Grace Hopper' }).waitFor();
    await page.getByRole('heading', { name: 'Incentives' }).waitFor();
    // Of the three studies of the workspace by now, the one this person takes part in.
    const studies = page.getByRole('table', { name: 'Studies this person takes part in' });
    await studies.getByRole('link', { name: studyName }).waitFor();
    expect(await studies.locator('tbody tr').count()).toBe(1);
    for (const name of ['Edit', 'Opt out', 'Opt back in', 'Delete person…', 'Delete for good']) expect(await page.getByRole('button', { name }).count(), name).toBe(0);
    await expectAccessible(page);
    expectNoPageErrors(world, page);
  });
});
