import type { Page } from 'playwright-core';
import { type Schema, searchNames, unwrap } from '@recruit-ops/sdk';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { chooseProperty, type ConsoleWorld, describeConsole, expectAccessible, expectNoPageErrors, signIn, startConsole } from './browser.js';

type RootFilter = Schema<'RootFilter'>;

const firstNames = ['Ada', 'Bert', 'Bea', 'Carl', 'Dora', 'Ben', 'Eva', 'Finn'];

describeConsole('console: finding people', () => {
  let world: ConsoleWorld;
  let ageId: string;
  let teamId: string;
  let countryId: string;
  let studyId: string;
  const people: { personId: string; email: string }[] = [];
  const countries = ['DE', 'FR', 'GB'];

  beforeAll(async () => {
    world = await startConsole();
    const api = world.api();
    const imported = unwrap(await api.POST('/properties/import', { body: [{ name: 'Age', propertyType: 'NUMBER' }, { name: 'Team', propertyType: 'SINGLE_SELECT', propertyOptions: [{ name: 'Red' }, { name: 'Blue' }] }] }));
    ageId = imported.results[0]!.personProperty.propertyId;
    teamId = imported.results[1]!.personProperty.propertyId;
    countryId = unwrap(await api.POST('/properties/import', { body: [{ name: 'Country', propertyType: 'STRING' }] })).results[0]!.personProperty.propertyId;
    // Age and Country in a group of their own; Team stays in the workspace's default group (General).
    unwrap(await api.POST('/property-groups', { body: { name: 'Demographics', scopeType: 'ALL', propertyIds: [ageId, countryId] } }));
    // 40 people: more than a page of 25; ages 20–59, every other one on team Red.
    for (let index = 0; index < 40; index++) {
      const firstName = firstNames[index % firstNames.length]!;
      const email = `p${String(index).padStart(2, '0')}.${firstName.toLowerCase()}@people.test`;
      const person = unwrap(
        await api.POST('/people', {
          body: { email, firstName, lastName: `Tester${index}`, properties: { [ageId]: 20 + index, [teamId]: index % 2 === 0 ? 'Red' : 'Blue', [countryId]: countries[index % countries.length]! } },
        }),
      );
      people.push({ personId: person.personId, email });
    }
    // One who matches the filter below but may not join a study.
    unwrap(await api.PUT('/people/{personIdOrEmail}/opted-out', { params: { path: { personIdOrEmail: people[33]!.personId } }, body: { isOptedOut: true } }));
    studyId = unwrap(await api.POST('/studies', { body: { studyType: 'INTERVIEWS', recruitmentStrategy: 'IN_SERVICE', studyPlan: { name: 'Search target study' } } })).studyId;
  }, 180_000);
  afterAll(async () => world?.stop());

  const total = (page: Page) => page.getByTestId('search-total');
  const apiTotal = async (filter?: RootFilter) => unwrap(await world.api().POST('/people/search', { body: { ...(filter ? { filter } : {}), pageInfo: { size: 1 } } })).total;
  const condition = (page: Page, number: string) => page.getByRole('group', { name: `Condition ${number}`, exact: true });

  /** Age ≥ 30 AND (email contains "r" OR first name starts with "B"), as the test builds it in the page. */
  const nestedFilter = (): RootFilter => ({
    operator: 'AND',
    filters: [
      { property: { propertyId: ageId }, comparison: 'GREATER_THAN_OR_EQUAL', value: 30 },
      {
        operator: 'OR',
        filters: [
          { property: { propertyGroup: 'PERSON', propertyName: 'EMAIL' }, comparison: 'CONTAINS', value: 'r' },
          { property: { propertyGroup: 'PERSON', propertyName: 'FIRST_NAME' }, comparison: 'STARTS_WITH', value: 'B' },
        ],
      },
    ],
  });

  async function buildNestedFilter(page: Page) {
    await page.getByRole('button', { name: 'Add condition', exact: true }).click();
    await chooseProperty(condition(page, '1'), 'Age');
    await condition(page, '1').getByLabel('Comparison', { exact: true }).selectOption('GREATER_THAN_OR_EQUAL');
    await condition(page, '1').getByLabel('Value', { exact: true }).fill('30');
    await page.getByRole('button', { name: 'Add group', exact: true }).click();
    const group = page.getByRole('group', { name: 'Group 2', exact: true });
    await group.getByLabel('This group matches').selectOption('OR');
    await chooseProperty(condition(page, '2.1'), 'Email');
    await condition(page, '2.1').getByLabel('Comparison', { exact: true }).selectOption('CONTAINS');
    await condition(page, '2.1').getByLabel('Value', { exact: true }).fill('r');
    await page.getByRole('button', { name: 'Add condition to group 2', exact: true }).click();
    await chooseProperty(condition(page, '2.2'), 'First name');
    await condition(page, '2.2').getByLabel('Comparison', { exact: true }).selectOption('STARTS_WITH');
    await condition(page, '2.2').getByLabel('Value', { exact: true }).fill('B');
  }

  it('pages, sorts, builds a nested filter whose total is the API’s, saves it as a segment and adds the selection to a study', async () => {
    const page = await world.newPage();
    page.setDefaultTimeout(10_000);
    await signIn(page, world.users.RESEARCHER.token);
    await page.getByRole('link', { name: 'People' }).click();
    await page.getByRole('heading', { name: 'People', exact: true }).waitFor();
    const everyone = await apiTotal();
    await expect.poll(() => total(page).textContent()).toBe(`${everyone} people match`);

    // Pages of 25 with the API's cursors, forward and back.
    const rows = page.locator('main table tbody tr');
    await expect.poll(() => rows.count()).toBe(25);
    const first = await rows.allTextContents();
    await page.getByRole('button', { name: 'Next' }).click();
    await expect.poll(async () => (await rows.allTextContents())[0]).not.toBe(first[0]);
    expect(await rows.count()).toBe(everyone - 25);
    expect((await rows.allTextContents()).filter((row) => first.includes(row))).toEqual([]);
    expect(await page.getByRole('navigation', { name: 'Pages of people' }).textContent()).toMatch(/Page 2/);
    await page.getByRole('button', { name: 'Previous' }).click();
    await expect.poll(() => rows.allTextContents()).toEqual(first);

    // Sorted by email, descending on the second press: the first row is the API's.
    const emailSort = page.getByRole('button', { name: /^Email,/ });
    await emailSort.click();
    await emailSort.click();
    await expect.poll(() => emailSort.getAttribute('aria-label')).toContain('sorted descending');
    const sortedFirst = unwrap(
      await world.api().POST('/people/search', { body: { filter: { filters: [], sort: { operator: 'DESC', propertyGroup: 'PERSON', propertyName: 'EMAIL' } }, pageInfo: { size: 1 } } }),
    ).results[0]!.email;
    await expect.poll(async () => (await rows.first().textContent()) ?? '').toContain(sortedFirst);

    // The nested filter: the total shown is the API's for the same filter.
    await buildNestedFilter(page);
    const expected = await apiTotal(nestedFilter());
    expect(expected).toBeGreaterThan(0);
    expect(expected).toBeLessThan(everyone);
    await expect.poll(() => total(page).textContent(), { timeout: 10_000 }).toBe(`${expected} people match`);
    await expect.poll(() => rows.count()).toBe(Math.min(expected, 25));
    await expectAccessible(page);

    // Saved as a segment: the API has it, with the filter as built (a segment is a set: no sort).
    await page.getByLabel('Segment name').fill('Over thirty, r or B');
    await page.getByRole('button', { name: 'Save as segment' }).click();
    await page.getByText('Saved as the segment “Over thirty, r or B”.').waitFor();
    const segments = unwrap(await world.api().GET('/segments', { params: { query: { size: 100 } } })).results;
    const segment = segments.find((candidate) => candidate.name === 'Over thirty, r or B');
    expect(segment).toBeDefined();
    expect(segment!.filter.filters).toEqual(nestedFilter().filters);
    expect(segment!.filter.sort).toBeUndefined();

    // The page selected, added to the study: the API's outcome per person, in words.
    const shown = await rows.count();
    await page.getByLabel('Select every person on this page').check();
    await page.getByText(`${shown} people selected`).waitFor();
    await page.getByLabel('Study', { exact: true }).selectOption(studyId);
    await page.getByRole('button', { name: 'Add to study' }).click();
    const outcome = page.locator('.add-outcome');
    await outcome.waitFor();
    const optedOutShown = (await page.locator('main table tbody').textContent())!.includes(people[33]!.email);
    const added = optedOutShown ? shown - 1 : shown;
    expect(await outcome.textContent()).toContain(`${added} added`);
    if (optedOutShown) expect(await outcome.textContent()).toMatch(new RegExp(`${people[33]!.email.replace(/\./g, '\\.')}: not added — .*opted out`, 'i'));
    const participants = unwrap(await world.api().POST('/studies/{studyId}/participants/search', { params: { path: { studyId } }, body: { pageInfo: { size: 100 } } }));
    expect(participants.total).toBe(added);
    await expectAccessible(page);
    expectNoPageErrors(world, page);
  }, 90_000);

  it('shows the API’s error beside the condition it names, and searches a study’s participants', async () => {
    const page = await world.newPage();
    await signIn(page, world.users.OPS_MANAGER.token);
    await page.goto('/console/people');
    await page.getByRole('button', { name: 'Add condition', exact: true }).click();
    // The condition just added has the focus, for a keyboard user to go on from.
    const propertyId = await condition(page, '1').getByLabel('Property', { exact: true }).getAttribute('id');
    await expect.poll(() => page.evaluate<string | undefined>('document.activeElement?.id')).toBe(propertyId);
    await chooseProperty(condition(page, '1'), 'Last changed at');
    await condition(page, '1').getByLabel('Comparison', { exact: true }).selectOption('IN_LAST_DAYS');
    await condition(page, '1').getByLabel('Days', { exact: true }).fill('99999');
    const days = condition(page, '1').getByLabel('Days', { exact: true });
    await expect.poll(() => days.getAttribute('aria-invalid')).toBe('true');
    expect(await condition(page, '1').locator('.field-error').textContent()).toMatch(/whole number of days/);
    await days.fill('30');
    await expect.poll(() => days.getAttribute('aria-invalid')).toBeNull();

    // A select property's options, from GET /properties.
    await page.getByRole('button', { name: 'Add condition', exact: true }).click();
    await chooseProperty(condition(page, '2'), 'Team');
    await condition(page, '2').getByLabel('Red', { exact: true }).check();
    const red = await apiTotal({
      filters: [
        { property: { propertyGroup: 'PERSON', propertyName: 'LAST_CHANGED_AT' }, comparison: 'IN_LAST_DAYS', value: 30 },
        { property: { propertyId: teamId }, comparison: 'IS_ANY_OF', value: ['Red'] },
      ],
    });
    await expect.poll(() => total(page).textContent(), { timeout: 10_000 }).toBe(`${red} people match`);
    await expectAccessible(page);

    // The study's participants, found with a PARTICIPANT name.
    const api = world.api();
    const own = unwrap(await api.POST('/studies', { body: { studyType: 'SURVEY', recruitmentStrategy: 'IN_SERVICE', studyPlan: { name: 'Participants search study' } } })).studyId;
    unwrap(await api.POST('/studies/{studyId}/participants', { params: { path: { studyId: own } }, body: { personIds: people.slice(0, 6).map((person) => person.personId) } }));
    await page.goto(`/console/studies/${encodeURIComponent(own)}`);
    await page.getByRole('link', { name: 'Find participants' }).click();
    await page.getByRole('heading', { name: 'Find participants of Participants search study' }).waitFor();
    await expect.poll(() => total(page).textContent()).toBe('6 participants match');
    await page.getByRole('button', { name: 'Add condition', exact: true }).click();
    await chooseProperty(condition(page, '1'), 'Status', 'Participant in this study (built in)');
    await condition(page, '1').getByLabel('Not started', { exact: true }).check();
    await page.getByRole('button', { name: 'Add condition', exact: true }).click();
    await chooseProperty(condition(page, '2'), 'Age');
    await condition(page, '2').getByLabel('Comparison', { exact: true }).selectOption('BETWEEN');
    await condition(page, '2').getByLabel('From', { exact: true }).fill('21');
    await condition(page, '2').getByLabel('To', { exact: true }).fill('23');
    const expected = unwrap(
      await api.POST('/studies/{studyId}/participants/search', {
        params: { path: { studyId: own } },
        body: {
          filter: {
            filters: [
              { property: { propertyGroup: 'PARTICIPANT', propertyName: 'STATUS' }, comparison: 'IS_ANY_OF', value: ['NOT_STARTED'] },
              { property: { propertyId: ageId }, comparison: 'BETWEEN', value: [21, 23] },
            ],
          },
          pageInfo: { size: 1 },
        },
      }),
    ).total;
    expect(expected).toBe(3);
    await expect.poll(() => total(page).textContent(), { timeout: 10_000 }).toBe('3 participants match');
    await expectAccessible(page);
    expectNoPageErrors(world, page, [/status of 400/]);
  });

  it('shows the columns its filter names, each row’s value as the API has it, and says which it cannot show', async () => {
    const page = await world.newPage();
    await signIn(page, world.users.RESEARCHER.token);
    await page.goto('/console/people');
    const table = page.getByRole('table', { name: 'Matching people' });
    const headers = async () => (await table.locator('thead th').allTextContents()).map((text) => text.replace(/[▲▼↕]/g, '').trim());
    await expect.poll(() => total(page).textContent()).toMatch(/^\d+ people match$/);
    expect(await headers()).toEqual(['', 'Name', 'Email', 'Contact status', 'Last changed']);

    // Age at least 50, and Country DE: both become columns.
    await page.getByRole('button', { name: 'Add condition', exact: true }).click();
    await chooseProperty(condition(page, '1'), 'Age');
    await condition(page, '1').getByLabel('Comparison', { exact: true }).selectOption('GREATER_THAN_OR_EQUAL');
    await condition(page, '1').getByLabel('Value', { exact: true }).fill('50');
    await page.getByRole('button', { name: 'Add condition', exact: true }).click();
    await chooseProperty(condition(page, '2'), 'Country');
    await condition(page, '2').getByLabel('Value', { exact: true }).fill('DE');
    const filter: RootFilter = {
      filters: [
        { property: { propertyId: ageId }, comparison: 'GREATER_THAN_OR_EQUAL', value: 50 },
        { property: { propertyId: countryId }, comparison: 'EQUALS', value: 'DE' },
      ],
    };
    const expected = unwrap(await world.api().POST('/people/search', { body: { filter, pageInfo: { size: 100 } } }));
    expect(expected.total).toBeGreaterThan(0);
    await expect.poll(() => total(page).textContent(), { timeout: 10_000 }).toBe(`${expected.total} people match`);
    expect(await headers()).toEqual(['', 'Name', 'Email', 'Contact status', 'Last changed', 'Age', 'Country']);
    // Each row's Age and Country cells hold that person's values.
    const rows = table.locator('tbody tr');
    await expect.poll(() => rows.count()).toBe(expected.total);
    for (const person of expected.results) {
      const cells = (await rows.filter({ hasText: person.email }).locator('td').allTextContents()).map((text) => text.trim());
      expect(cells.slice(-2), person.email).toEqual([String(person.properties[ageId]), person.properties[countryId]]);
    }
    // A name the search computes but the Person answer does not hold: no column, said in words.
    await page.getByRole('button', { name: 'Add condition', exact: true }).click();
    await chooseProperty(condition(page, '3'), 'Total number of contact');
    await condition(page, '3').getByLabel('Value', { exact: true }).fill('0');
    await expect.poll(() => page.getByTestId('columns-not-shown').textContent()).toContain('No column for Total number of contact');
    expect(await headers()).toEqual(['', 'Name', 'Email', 'Contact status', 'Last changed', 'Age', 'Country']);
    // Removing a condition removes its column.
    await page.getByRole('button', { name: 'Remove condition 2', exact: true }).click();
    await expect.poll(headers).toEqual(['', 'Name', 'Email', 'Contact status', 'Last changed', 'Age']);
    await expectAccessible(page);
    expectNoPageErrors(world, page);
  });

  it('groups the property picker by property group, narrows it as one types, and is worked with the keyboard alone', async () => {
    const page = await world.newPage();
    await signIn(page, world.users.RESEARCHER.token);
    await page.goto('/console/people');
    await expect.poll(() => total(page).textContent()).toMatch(/^\d+ people match$/);
    // "Add condition" from the keyboard: the new condition's picker has the focus.
    await page.getByRole('button', { name: 'Add condition', exact: true }).focus();
    await page.keyboard.press('Enter');
    const picker = condition(page, '1').getByRole('combobox', { name: 'Property', exact: true });
    const pickerId = await picker.getAttribute('id');
    await expect.poll(() => page.evaluate<string | undefined>('document.activeElement?.id')).toBe(pickerId);

    // Down opens the whole list, under the headings of the property groups, custom groups by their names.
    await page.keyboard.press('ArrowDown');
    const list = condition(page, '1').getByRole('listbox', { name: 'Properties', exact: true });
    await list.waitFor();
    expect(await picker.getAttribute('aria-expanded')).toBe('true');
    // The workspace's default group (General) was made first, with the first properties imported.
    expect(await list.locator('[role="group"] > [role="presentation"]').allTextContents()).toEqual(['Person (built in)', 'General (custom)', 'Demographics (custom)']);
    expect(await list.getByRole('group', { name: 'Demographics (custom)' }).getByRole('option').allTextContents()).toEqual(['Age', 'Country']);
    expect(await list.getByRole('group', { name: 'General (custom)' }).getByRole('option').allTextContents()).toEqual(['Team']);
    const everything = await list.getByRole('option').count();
    // Every PERSON name of the API's catalogue, and the three custom properties.
    expect(everything).toBe(searchNames.PERSON.length + 3);

    // Typing narrows it: every option left holds what was typed; "ag" and then "e".
    await page.keyboard.type('ag');
    await expect.poll(() => list.getByRole('option').count()).toBeLessThan(everything);
    const narrowed = await list.getByRole('option').allTextContents();
    expect(narrowed.every((label) => label.toLowerCase().includes('ag'))).toBe(true);
    expect(narrowed).toContain('Age');
    await page.keyboard.type('e');
    await expect.poll(() => list.getByRole('option').allTextContents()).toEqual(narrowed.filter((label) => label.toLowerCase().includes('age')));
    expect(await condition(page, '1').getByRole('status').textContent()).toMatch(/propert(y matches|ies match)\.$/);

    // Down and Up move the active option (the input names it); Enter chooses it.
    const activeLabel = async () => {
      const active = await picker.getAttribute('aria-activedescendant');
      return active ? page.locator(`[id="${active}"]`).textContent() : undefined;
    };
    for (let step = 0; (await activeLabel()) !== 'Age'; step++) {
      if (step > 20) throw new Error('Age was never the active option');
      await page.keyboard.press('ArrowDown');
    }
    await page.keyboard.press('Enter');
    await expect.poll(() => picker.inputValue()).toBe('Age');
    expect(await picker.getAttribute('aria-expanded')).toBe('false');
    expect(await list.isHidden()).toBe(true);

    // Escape after typing closes the list and gives back the chosen name; the choice stands.
    await page.keyboard.type('xyz');
    await expect.poll(() => condition(page, '1').getByRole('status').textContent()).toBe('No property matches “Agexyz”.');
    await page.keyboard.press('Escape');
    await expect.poll(() => picker.inputValue()).toBe('Age');

    // On to the comparison and the value, with the keyboard: the filter is Age = 42, as the API counts it.
    await page.keyboard.press('Tab');
    await page.keyboard.press('Tab');
    await page.keyboard.type('42');
    const expected = await apiTotal({ filters: [{ property: { propertyId: ageId }, comparison: 'EQUALS', value: 42 }] });
    expect(expected).toBe(1);
    await expect.poll(() => total(page).textContent(), { timeout: 10_000 }).toBe('1 person matches');
    await expectAccessible(page);
    expectNoPageErrors(world, page);
  });

  it('names each participant of a study search by name, with the email', async () => {
    const api = world.api();
    const own = unwrap(await api.POST('/studies', { body: { studyType: 'SURVEY', recruitmentStrategy: 'IN_SERVICE', studyPlan: { name: 'Named participants study' } } })).studyId;
    unwrap(await api.POST('/studies/{studyId}/participants', { params: { path: { studyId: own } }, body: { personIds: people.slice(0, 3).map((person) => person.personId) } }));
    const page = await world.newPage();
    await signIn(page, world.users.RESEARCHER.token);
    await page.goto(`/console/studies/${encodeURIComponent(own)}/search`);
    await expect.poll(() => total(page).textContent()).toBe('3 participants match');
    const rows = page.getByRole('table', { name: 'Matching participants' }).locator('tbody tr');
    for (const [index, person] of people.slice(0, 3).entries()) {
      const cell = rows.filter({ hasText: person.email }).locator('td').nth(0);
      // The person's name (a link to their page), the email beneath it.
      await cell.getByRole('link', { name: `${firstNames[index % firstNames.length]} Tester${index}`, exact: true }).waitFor();
      expect((await cell.textContent())!.replace(/\s+/g, ' ').trim()).toBe(`${firstNames[index % firstNames.length]} Tester${index} ${person.email}`);
    }
    expectNoPageErrors(world, page);
  });

  it('offers an OBSERVER the search, but no Save as segment, no selection and no Add to study', async () => {
    const page = await world.newPage();
    await signIn(page, world.users.OBSERVER.token);
    await page.getByRole('link', { name: 'People' }).click();
    await expect.poll(() => total(page).textContent()).toMatch(/^\d+ people match$/);
    await page.locator('main table tbody tr').first().waitFor();
    expect(await page.getByRole('button', { name: 'Save as segment' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Add to study' }).count()).toBe(0);
    expect(await page.getByRole('checkbox').count()).toBe(0);
    await expectAccessible(page);
    expectNoPageErrors(world, page);
  });
});
