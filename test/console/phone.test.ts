import type { Page } from 'playwright-core';
import { unwrap } from '@recruit-ops/sdk';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  chooseProperty,
  type ConsoleWorld,
  chooseFile,
  describeConsole,
  expectAccessible,
  expectFitsViewport,
  expectNoPageErrors,
  phoneViewport,
  rawIdsShown,
  recordRawIds,
  signIn,
  startConsole,
} from './browser.js';

/**
 * Every page of the console on a phone (390×844): the page never scrolls sideways (a table
 * scrolls in its own box), the header's user and "Sign out" are whole, axe-core passes, and no
 * page ever shows a property's, population's, participant's or study's raw id, not even for the
 * frame before its name loads (recorded from the first paint on).
 */
describeConsole('console: every page on a phone, named by names', () => {
  let world: ConsoleWorld;
  let studyId: string;
  let personId: string;
  const studyName = 'Phone-sized usability interviews';

  beforeAll(async () => {
    world = await startConsole();
    const api = world.api();
    // A property group of custom properties, a population, and a study with named participants,
    // a booked session, an incentive and events: every kind of id a page could show.
    const group = unwrap(await api.POST('/property-groups', { body: { name: 'Demographics', scopeType: 'ALL' } }));
    const properties = unwrap(
      await api.POST('/properties/import', {
        body: [
          { name: 'Age', propertyType: 'NUMBER', propertyGroupId: group.propertyGroupId },
          { name: 'Country', propertyType: 'STRING', propertyGroupId: group.propertyGroupId },
          { name: 'Preferred channel', propertyType: 'SINGLE_SELECT', propertyOptions: [{ name: 'Email' }, { name: 'Phone' }] },
        ],
      }),
    ).results.map((result) => result.personProperty.propertyId);
    const populationId = unwrap(await api.POST('/populations', { body: { name: 'Long-standing customers' } })).populationId;
    studyId = unwrap(await api.POST('/studies', { body: { studyType: 'INTERVIEWS', recruitmentStrategy: 'IN_SERVICE', studyPlan: { name: studyName } } })).studyId;
    const personIds: string[] = [];
    for (const [index, [firstName, lastName]] of [
      ['Maximiliane', 'Oberhauser-Wittgenstein'],
      ['Bo', 'Li'],
      ['Chidimma', 'Okonkwo'],
    ].entries()) {
      const person = unwrap(
        await api.POST('/people', {
          body: {
            email: `${firstName!.toLowerCase()}.${lastName!.toLowerCase()}@a-rather-long-company-domain.example`,
            firstName,
            lastName,
            properties: { [properties[0]!]: 30 + index, [properties[1]!]: 'DE', [properties[2]!]: 'Email' },
            populationIds: [populationId],
          },
        }),
      );
      personIds.push(person.personId);
    }
    personId = personIds[0]!;
    const participants = unwrap(await api.POST('/studies/{studyId}/participants', { params: { path: { studyId } }, body: { personIds } })).results;
    unwrap(await api.POST('/studies/{studyId}/launch', { params: { path: { studyId } } }));
    unwrap(
      await api.PATCH('/studies/{studyId}/participants/{participantId}', {
        params: { path: { studyId, participantId: participants[0]!.participantId } },
        body: { status: 'SCHEDULED', interviewStartTime: '2031-03-04T01:30:00Z' },
      }),
    );
    unwrap(await api.POST('/incentives', { body: { participantId: participants[1]!.participantId, type: 'RECRUITMENT_FEE', amountCents: 4000 } }));
  }, 180_000);
  afterAll(async () => world?.stop());

  /** The checks every page passes on a phone; `where` names the page in a failure. */
  async function expectPhonePage(page: Page, where: string) {
    await expectFitsViewport(page, where);
    await expectAccessible(page);
    expect(await rawIdsShown(page), `${where}: raw ids shown`).toEqual([]);
  }

  /** Opens `path` afresh (a new document: the raw-id record starts again) once the last page's record was read. */
  async function open(page: Page, path: string, ready: () => Promise<unknown>) {
    expect(await rawIdsShown(page), `before leaving ${page.url()}: raw ids shown`).toEqual([]);
    await page.goto(path);
    await ready();
    // What loads after the first answer (names, counts) has come too.
    await page.waitForLoadState('networkidle');
  }

  it('fits every page, dialog and form into 390 px, names what it shows, and passes axe-core there', async () => {
    const page = await world.newPage({ viewport: phoneViewport });
    await recordRawIds(page);
    await page.goto('/console/');
    await page.getByLabel('API token').waitFor();
    await expectPhonePage(page, 'sign-in');

    await signIn(page, world.users.SUPER_ADMIN.token);
    await page.getByRole('link', { name: studyName }).waitFor();
    await expectPhonePage(page, 'studies');

    await page.getByRole('button', { name: 'Create study' }).click();
    await page.getByRole('heading', { name: 'Create a study' }).waitFor();
    await expectPhonePage(page, 'create study');

    // The study: its plan, participants (a table scrolling in its own labelled box), incentives.
    await open(page, `/console/studies/${encodeURIComponent(studyId)}`, () => page.getByRole('table', { name: 'Participants' }).locator('tbody tr').nth(2).waitFor());
    await expectPhonePage(page, 'study');
    const participantsBox = page.getByRole('region', { name: 'Participants (scrolls sideways)', exact: true });
    expect(await participantsBox.getAttribute('tabindex'), 'the participants table scrolls in a box reachable by keyboard').toBe('0');
    // A session being booked, and an incentive being sent and confirmed.
    await page.getByLabel('Move bo.li@a-rather-long-company-domain.example to').selectOption({ label: 'Schedule' });
    await page.getByRole('button', { name: 'Apply the move: bo.li@a-rather-long-company-domain.example' }).click();
    await page.getByLabel('Session start').waitFor();
    await expectPhonePage(page, 'study, booking a session');
    await page.getByRole('button', { name: 'Send incentive: chidimma.okonkwo@a-rather-long-company-domain.example' }).click();
    await page.getByLabel('Amount (USD)').fill('60');
    await page.getByRole('button', { name: 'Send incentive…' }).click();
    const confirmation = page.getByRole('dialog', { name: 'Send this incentive?' });
    await confirmation.waitFor();
    await expectPhonePage(page, 'study, confirming an incentive');
    await confirmation.getByRole('button', { name: 'Don’t send' }).click();
    await confirmation.waitFor({ state: 'hidden' });

    await open(page, `/console/studies/${encodeURIComponent(studyId)}/events`, () => page.getByRole('heading', { name: `Status events: ${studyName}` }).waitFor());
    await page.getByRole('table', { name: /^Status events of / }).locator('tbody tr').first().waitFor();
    await expectPhonePage(page, 'study events');

    // The study's search, with the property picker open on its groups.
    await open(page, `/console/studies/${encodeURIComponent(studyId)}/search`, () => page.getByRole('heading', { name: `Find participants of ${studyName}` }).waitFor());
    await page.getByRole('button', { name: 'Add condition', exact: true }).click();
    await page.getByRole('combobox', { name: 'Property', exact: true }).press('ArrowDown');
    await page.getByRole('listbox', { name: 'Properties' }).getByRole('group', { name: 'Demographics (custom)' }).waitFor();
    await expectPhonePage(page, 'study search, picking a property');
    await page.getByRole('combobox', { name: 'Property', exact: true }).press('Escape');

    // People, filtered on a custom property and a population: their columns, named.
    await open(page, '/console/people', () => page.getByRole('heading', { name: 'People', level: 1 }).waitFor());
    await page.getByRole('button', { name: 'Add condition', exact: true }).click();
    await chooseProperty(page.getByRole('group', { name: 'Condition 1', exact: true }), 'Population membership');
    await page.getByLabel('Long-standing customers').check();
    await page.getByRole('columnheader', { name: 'Population membership' }).waitFor();
    await expect.poll(() => page.getByTestId('search-total').textContent()).toBe('3 people match');
    await expect.poll(() => page.getByRole('table', { name: 'Matching people' }).textContent()).toContain('Long-standing customers');
    await expectPhonePage(page, 'people');

    await open(page, `/console/people/${encodeURIComponent(personId)}`, () => page.getByRole('heading', { name: 'Maximiliane Oberhauser-Wittgenstein' }).waitFor());
    await expect.poll(() => page.getByText('Populations').locator('..').textContent()).toContain('Long-standing customers');
    await page.getByRole('table', { name: 'Studies this person takes part in' }).getByRole('link', { name: studyName }).waitFor();
    await expectPhonePage(page, 'person');
    await page.getByRole('button', { name: 'Edit' }).click();
    await page.getByRole('heading', { name: 'Edit details' }).waitFor();
    await expectPhonePage(page, 'person, editing');

    await open(page, '/console/imports', () => page.getByRole('heading', { name: 'Imports', exact: true }).waitFor());
    await chooseFile(page, {
      name: 'a-file-with-a-long-name-from-the-crm-export.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from('email,firstName,Favourite supermarket chain of the household\nana@import.test,Ana,Corner shop\n'),
    });
    await page.getByLabel('Column “Favourite supermarket chain of the household”').waitFor();
    await expectPhonePage(page, 'imports, mapping a column');

    await open(page, '/console/no-such-page', () => page.getByRole('heading', { level: 1 }).waitFor());
    await expectPhonePage(page, 'not found');
    expectNoPageErrors(world, page);
  }, 240_000);
});
