import { unwrap } from '@recruit-ops/sdk';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type ConsoleWorld, chooseFile, describeConsole, expectAccessible, expectNoPageErrors, signIn, startConsole } from './browser.js';

describeConsole('console: imports', () => {
  let world: ConsoleWorld;
  beforeAll(async () => {
    world = await startConsole();
  }, 120_000);
  afterAll(async () => world?.stop());

  it('uploads a CSV with unknown columns mapped to properties, shows its progress to the end, and lists the bad rows by number', async () => {
    const shoeSize = unwrap(await world.api().POST('/properties/import', { body: [{ name: 'Shoe size', propertyType: 'NUMBER' }] })).results[0]!.personProperty;
    const csv = [
      'email,firstName,lastName,Shoe,Favourite colour',
      'ada@import.test,Ada,Lovelace,38,Green',
      'alan@import.test,Alan,Turing,44,Blue',
      'not-an-email,Bad,Address,40,Red',
      '"hopper@import.test",Grace,"Hopper, Rear Admiral",39,Green',
      'bob@import.test,Bob,Jones,very large,Red',
      '',
    ].join('\n');

    const page = await world.newPage();
    await signIn(page, world.users.OPS_MANAGER.token);
    await page.getByRole('link', { name: 'Imports' }).click();
    await page.getByRole('heading', { name: 'Imports', exact: true }).waitFor();
    await expectAccessible(page);

    await chooseFile(page, { name: 'panel.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    // The two columns the workspace does not know are offered for mapping; uploading before choosing says so beside them.
    const shoe = page.getByLabel('Column “Shoe”');
    const colour = page.getByLabel('Column “Favourite colour”');
    await shoe.waitFor();
    await page.getByRole('button', { name: 'Upload and import' }).click();
    await expect.poll(() => shoe.getAttribute('aria-invalid')).toBe('true');
    expect(await colour.getAttribute('aria-invalid')).toBe('true');
    await expectAccessible(page);

    await shoe.selectOption({ label: 'Property “Shoe size” (Number)' });
    await colour.selectOption({ label: 'A new property named “Favourite colour”' });
    await page.getByLabel('Type of the new property “Favourite colour”').selectOption('SINGLE_SELECT');
    await page.getByRole('button', { name: 'Upload and import' }).click();

    // The progress bar, labelled, read again until the import ends; then full.
    const progress = page.getByRole('progressbar', { name: /Import progress/ });
    await progress.waitFor();
    await page.getByTestId('import-outcome').waitFor({ timeout: 60_000 });
    expect(await page.getByTestId('import-outcome').textContent()).toContain('3 rows imported, 2 refused');
    expect(await progress.getAttribute('value')).toBe(await progress.getAttribute('max'));
    expect(await progress.getAttribute('max')).toBe('5');
    expect(await page.locator('article').getByText('Completed').count()).toBe(1);

    // The bad rows by their numbers as a spreadsheet shows the file (the header is row 1), with the API's reasons.
    const refused = page.getByRole('table', { name: /Rows refused by import/ });
    const rows = await refused.locator('tbody tr').allTextContents();
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatch(/^4/);
    expect(rows[0]).toMatch(/email/i);
    expect(rows[1]).toMatch(/^6/);
    expect(rows[1]).toMatch(/Shoe size/);
    await expectAccessible(page);

    // The people are in, with the mapped and the new property's values.
    const properties = unwrap(await world.api().GET('/properties', { params: { query: { size: 100 } } })).results;
    const colourProperty = properties.find((property) => property.name === 'Favourite colour')!;
    expect(colourProperty.propertyType).toBe('SINGLE_SELECT');
    expect(colourProperty.propertyOptions.map((option) => option.name).sort()).toEqual(['Blue', 'Green', 'Red']);
    const found = unwrap(
      await world.api().POST('/people/search', {
        body: { filter: { filters: [{ property: { propertyGroup: 'PERSON', propertyName: 'EMAIL' }, comparison: 'IN', value: ['ada@import.test', 'alan@import.test', 'hopper@import.test', 'bob@import.test'] }] } },
      }),
    ).results;
    expect(found.map((person) => person.email).sort()).toEqual(['ada@import.test', 'alan@import.test', 'hopper@import.test']);
    const hopper = found.find((person) => person.email === 'hopper@import.test')!;
    expect(hopper).toMatchObject({ firstName: 'Grace', lastName: 'Hopper, Rear Admiral', properties: { [shoeSize.propertyId]: 39, [colourProperty.propertyId]: 'Green' } });

    // The import stays listed in this tab after a reload, finished.
    await page.reload();
    await page.getByTestId('import-outcome').waitFor();
    expectNoPageErrors(world, page);
  }, 120_000);

  it('offers an OBSERVER no upload', async () => {
    const page = await world.newPage();
    await signIn(page, world.users.OBSERVER.token);
    await page.getByRole('link', { name: 'Imports' }).click();
    await page.getByText('Your role may not import people').waitFor();
    expect(await page.getByLabel('CSV file', { exact: true }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Upload and import' }).count()).toBe(0);
    await expectAccessible(page);
    expectNoPageErrors(world, page);
  });
});
