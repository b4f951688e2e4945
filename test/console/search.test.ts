import type { Page } from 'playwright-core';
import { type Schema, unwrap } from '@recruit-ops/sdk';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type ConsoleWorld, describeConsole, expectAccessible, expectNoPageErrors, signIn, startConsole } from './browser.js';

type RootFilter = Schema<'RootFilter'>;

const firstNames = ['Ada', 'Bert', 'Bea', 'Carl', 'Dora', 'Ben', 'Eva', 'Finn'];

describeConsole('console: finding people', () => {
  let world: ConsoleWorld;
  let ageId: string;
  let teamId: string;
  let studyId: string;
  const people: { personId: string; email: string }[] = [];

  beforeAll(async () => {
    world = await startConsole();
    const api = world.api();
    const imported = unwrap(await api.POST('/properties/import', { body: [{ name: 'Age', propertyType: 'NUMBER' }, { name: 'Team', propertyType: 'SINGLE_SELECT', propertyOptions: [{ name: 'Red' }, { name: 'Blue' }] }] }));
    ageId = imported.results[0]!.personProperty.propertyId;
    teamId = imported.results[1]!.personProperty.propertyId;
    // 40 people: more than a page of 25; ages 20–59, every other one on team Red.
    for (let index = 0; index < 40; index++) {
      const firstName = firstNames[index % firstNames.length]!;
      const email = `p${String(index).padStart(2, '0')}.${firstName.toLowerCase()}@people.test`;
      const person = unwrap(
        await api.POST('/people', { body: { email, firstName, lastName: `Tester${index}`, properties: { [ageId]: 20 + index, [teamId]: index % 2 === 0 ? 'Red' : 'Blue' } } }),
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
    await condition(page, '1').getByLabel('Property', { exact: true }).selectOption(`custom:${ageId}`);
    await condition(page, '1').getByLabel('Comparison', { exact: true }).selectOption('GREATER_THAN_OR_EQUAL');
    await condition(page, '1').getByLabel('Value', { exact: true }).fill('30');
    await page.getByRole('button', { name: 'Add group', exact: true }).click();
    const group = page.getByRole('group', { name: 'Group 2', exact: true });
    await group.getByLabel('This group matches').selectOption('OR');
    await condition(page, '2.1').getByLabel('Property', { exact: true }).selectOption('PERSON:EMAIL');
    await condition(page, '2.1').getByLabel('Comparison', { exact: true }).selectOption('CONTAINS');
    await condition(page, '2.1').getByLabel('Value', { exact: true }).fill('r');
    await page.getByRole('button', { name: 'Add condition to group 2', exact: true }).click();
    await condition(page, '2.2').getByLabel('Property', { exact: true }).selectOption('PERSON:FIRST_NAME');
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
    await condition(page, '1').getByLabel('Property', { exact: true }).selectOption('PERSON:LAST_CHANGED_AT');
    await condition(page, '1').getByLabel('Comparison', { exact: true }).selectOption('IN_LAST_DAYS');
    await condition(page, '1').getByLabel('Days', { exact: true }).fill('99999');
    const days = condition(page, '1').getByLabel('Days', { exact: true });
    await expect.poll(() => days.getAttribute('aria-invalid')).toBe('true');
    expect(await condition(page, '1').locator('.field-error').textContent()).toMatch(/whole number of days/);
    await days.fill('30');
    await expect.poll(() => days.getAttribute('aria-invalid')).toBeNull();

    // A select property's options, from GET /properties.
    await page.getByRole('button', { name: 'Add condition', exact: true }).click();
    await condition(page, '2').getByLabel('Property', { exact: true }).selectOption(`custom:${teamId}`);
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
    await condition(page, '1').getByLabel('Property', { exact: true }).selectOption('PARTICIPANT:STATUS');
    await condition(page, '1').getByLabel('Not started', { exact: true }).check();
    await page.getByRole('button', { name: 'Add condition', exact: true }).click();
    await condition(page, '2').getByLabel('Property', { exact: true }).selectOption(`custom:${ageId}`);
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
