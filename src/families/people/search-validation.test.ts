import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant, startTestService, type Tenant, type TestService } from '../../../test/harness.js';
import { describeSecurity } from '../../../test/security.js';
import { createPanel, insertPeople, type Panel, search, type SearchResult } from './search-fixtures.js';

let service: TestService;
let tenant: Tenant;
let panel: Panel;
beforeAll(async () => {
  service = await startTestService();
  tenant = await createTenant(service);
  panel = await createPanel(service, tenant);
  await insertPeople(service, tenant.workspaceId, [
    {
      email: 'grace@example.org',
      firstName: 'Grace',
      lastName: 'Hopper',
      phone: '+1 555 0100',
      properties: { [panel.diagnosis]: 'flu', [panel.age]: 40 },
      populationIds: [panel.populationA],
    },
  ]);
});
afterAll(async () => service.stop());

const person = (propertyName: string) => ({ propertyGroup: 'PERSON', propertyName });
const custom = (key: keyof Panel) => ({ propertyId: panel[key] });
const fine = () => ({ property: custom('age'), comparison: 'GREATER_THAN', value: 1 });

async function expectRefused(body: unknown, path: string[], message?: RegExp, status = 400) {
  const response = await search(service, tenant.token, body);
  expect(response.statusCode, response.body).toBe(status);
  const { errors } = response.json<{ errors: { message: string; path: string[] }[] }>();
  expect(errors[0]!.path).toEqual(path);
  if (message) expect(errors[0]!.message).toMatch(message);
}

const at = (...path: string[]) => ['filter', 'filters', ...path];

describe('POST /people/search: bad input (400 with the path of the offending part)', () => {
  it('refuses a comparison that does not fit the type', async () => {
    const filters = [fine(), fine(), fine(), { property: custom('age'), comparison: 'CONTAINS', value: '4' }];
    await expectRefused({ filter: { filters } }, at('3', 'comparison'), /CONTAINS does not fit Age, a number property/);
    await expectRefused({ filter: { filters: [{ property: person('EMAIL'), comparison: 'GREATER_THAN', value: 1 }] } }, at('0', 'comparison'));
    await expectRefused({ filter: { filters: [{ property: person('OPTED_OUT'), comparison: 'EQUALS', value: true }] } }, at('0', 'comparison'));
    await expectRefused({ filter: { filters: [{ property: custom('home'), comparison: 'HAS_ANY_OF', value: ['GB'] }] } }, at('0', 'comparison'));
  });

  it('refuses a value of the wrong type or shape', async () => {
    const cases: [unknown, string[]][] = [
      [{ property: custom('age'), comparison: 'EQUALS', value: '40' }, at('0', 'value')],
      [{ property: custom('age'), comparison: 'EQUALS' }, at('0', 'value')],
      [{ property: custom('age'), comparison: 'BETWEEN', value: [1, 2, 3] }, at('0', 'value')],
      [{ property: custom('age'), comparison: 'BETWEEN', value: [1, 'x'] }, at('0', 'value', '1')],
      [{ property: custom('occupation'), comparison: 'IN', value: 'Engineer' }, at('0', 'value')],
      [{ property: custom('occupation'), comparison: 'IN', value: [] }, at('0', 'value')],
      [{ property: custom('occupation'), comparison: 'IN', value: ['a', 2] }, at('0', 'value', '1')],
      [{ property: custom('occupation'), comparison: 'EQUALS', value: 'x'.repeat(1001) }, at('0', 'value')],
      [{ property: custom('lastSeen'), comparison: 'BEFORE', value: '2026-02-30' }, at('0', 'value')],
      [{ property: custom('lastSeen'), comparison: 'BEFORE', value: 'yesterday' }, at('0', 'value')],
      [{ property: custom('lastSeen'), comparison: 'BETWEEN', value: ['2026-01-01', 5] }, at('0', 'value', '1')],
      [{ property: custom('lastSeen'), comparison: 'IN_LAST_DAYS', value: 1.5 }, at('0', 'value')],
      [{ property: custom('lastSeen'), comparison: 'IN_LAST_DAYS', value: -1 }, at('0', 'value')],
      [{ property: custom('hasCar'), comparison: 'IS_TRUE', value: true }, at('0', 'value')],
      [{ property: custom('hasCar'), comparison: 'IS_EMPTY', value: null }, at('0', 'value')],
      [{ property: custom('tier'), comparison: 'IS_ANY_OF', value: ['Gold', 'Platinum'] }, at('0', 'value', '1')],
      [{ property: person('CONTACT_STATUS'), comparison: 'IS_ANY_OF', value: ['contactable'] }, at('0', 'value', '0')],
      [{ property: custom('devices'), comparison: 'HAS_ALL_OF', value: ['Fax'] }, at('0', 'value', '0')],
      [{ property: custom('home'), comparison: 'WITHIN_KM', value: { lat: 51, lng: 0 } }, at('0', 'value', 'km')],
      [{ property: custom('home'), comparison: 'WITHIN_KM', value: { lat: 91, lng: 0, km: 1 } }, at('0', 'value', 'lat')],
      [{ property: custom('home'), comparison: 'WITHIN_KM', value: { lat: 1, lng: 0, km: 1, miles: 2 } }, at('0', 'value', 'miles')],
      [{ property: custom('home'), comparison: 'WITHIN_KM', value: [51, 0, 1] }, at('0', 'value')],
      [{ property: custom('home'), comparison: 'COUNTRY_IS', value: ['GB', 'GBR'] }, at('0', 'value', '1')],
    ];
    for (const [filter, path] of cases) await expectRefused({ filter: { filters: [filter] } }, path);
  });

  it('refuses unknown names and ids, and says which names cannot be computed yet', async () => {
    await expectRefused({ filter: { filters: [{ property: person('SHOE_SIZE'), comparison: 'IS_EMPTY' }] } }, at('0', 'property', 'propertyName'), /not a name/);
    await expectRefused({ filter: { filters: [{ property: person('POPULATION_LIST_MEMBERSHIP'), comparison: 'IS_EMPTY' }] } }, at('0', 'property', 'propertyName'), /cannot be computed.*no population lists/);
    // Participant and incentive names need a study: refused at the group, saying where to search.
    await expectRefused(
      { filter: { filters: [fine(), { property: { propertyGroup: 'PARTICIPANT', propertyName: 'STATUS' }, comparison: 'IS_EMPTY' }] } },
      at('1', 'property', 'propertyGroup'),
      /need a study/,
    );
    await expectRefused({ filter: { filters: [{ property: { propertyId: 'prp_nope' }, comparison: 'IS_EMPTY' }] } }, at('0', 'property', 'propertyId'));
    // Names of Object's prototype are unknown names like any other, not functions to call.
    for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      await expectRefused({ filter: { filters: [{ property: person(name), comparison: 'IS_EMPTY' }] } }, at('0', 'property', 'propertyName'), /not a name/);
      await expectRefused({ filter: { filters: [], sort: { operator: 'ASC', propertyGroup: 'PERSON', propertyName: name } } }, ['filter', 'sort', 'propertyName'], /not a name/);
    }
    await expectRefused({ filter: { filters: [], sort: { operator: 'ASC', propertyGroup: 'PERSON', propertyName: 'prp_nope' } } }, ['filter', 'sort', 'propertyName'], /not a name/);
    await expectRefused({ filter: { filters: [], sort: { operator: 'ASC', propertyGroup: 'PERSON', propertyName: 'POPULATION_LIST_MEMBERSHIP' } } }, ['filter', 'sort', 'propertyName'], /cannot be computed/);
    await expectRefused({ filter: { filters: [], sort: { operator: 'ASC', propertyGroup: 'INCENTIVE', propertyName: 'AMOUNT' } } }, ['filter', 'sort', 'propertyGroup'], /need a study/);
    // Another workspace's property is unknown here.
    const other = await createTenant(service);
    const theirs = await createPanel(service, other);
    await expectRefused({ filter: { filters: [{ property: { propertyId: theirs.age }, comparison: 'IS_EMPTY' }] } }, at('0', 'property', 'propertyId'));
  });

  it('answers 404 for an unknown population, naming the value', async () => {
    const other = await createTenant(service);
    const theirs = await createPanel(service, other);
    const filter = { filters: [{ property: person('POPULATION_MEMBERSHIP'), comparison: 'HAS_ANY_OF', value: [panel.populationA, theirs.populationA] }] };
    await expectRefused({ filter }, at('0', 'value', '1'), /^Population not found$/, 404);
  });

  it('refuses malformed filters with the path Ajv finds inside the shape meant', async () => {
    await expectRefused({ filter: { filters: [fine(), { ...fine(), comparison: 'LIKE' }] } }, at('1', 'comparison'));
    await expectRefused({ filter: { filters: [{ ...fine(), extra: 1 }] } }, at('0', 'extra'));
    await expectRefused({ filter: { filters: [{ operator: 'XOR', filters: [] }] } }, at('0', 'operator'));
    await expectRefused({ filter: { filters: [{ operator: 'OR', filters: [{ comparison: 'IS_EMPTY' }] }] } }, at('0', 'filters', '0', 'property'));
    await expectRefused({ filter: { filters: [{ property: { propertyGroup: 'PERSON' }, comparison: 'IS_EMPTY' }] } }, at('0', 'property', 'propertyName'));
    await expectRefused({ filter: { filters: [{ property: { propertyGroup: 'STUDY', propertyName: 'X' }, comparison: 'IS_EMPTY' }] } }, at('0', 'property', 'propertyGroup'));
    await expectRefused({ filter: { filters: [{ property: { propertyId: panel.age, propertyName: 'AGE' }, comparison: 'IS_EMPTY' }] } }, at('0', 'property', 'propertyName'));
    await expectRefused({ filter: { sort: { operator: 'ASC', propertyGroup: 'PERSON', propertyName: 'EMAIL' } } }, ['filter', 'filters']);
    await expectRefused({ filter: { filters: [], sort: { operator: 'UP', propertyGroup: 'PERSON', propertyName: 'EMAIL' } } }, ['filter', 'sort', 'operator']);
    await expectRefused({ filters: [] }, ['filters']);
    await expectRefused({ pageInfo: { size: 0 } }, ['pageInfo', 'size']);
    await expectRefused({ pageInfo: { size: 1001 } }, ['pageInfo', 'size']);
    await expectRefused({ pageInfo: { size: '10' } }, ['pageInfo', 'size']);
    await expectRefused({ pageInfo: { startCursor: 'nonsense' } }, ['pageInfo', 'startCursor']);
  });

  it('allows groups down to level 4 and refuses one at level 5', async () => {
    const nest = (levels: number): unknown => (levels === 0 ? fine() : { operator: 'AND', filters: [nest(levels - 1)] });
    const ok = await search(service, tenant.token, { filter: { filters: [nest(4)] } });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json<SearchResult>().total).toBe(1);
    await expectRefused({ filter: { filters: [fine(), nest(5)] } }, at('1', 'filters', '0', 'filters', '0', 'filters', '0', 'filters', '0'), /at most 4 levels/);
  });

  it('allows 50 Filters through every level and refuses a 51st', async () => {
    const group = (count: number) => ({ operator: 'OR', filters: Array.from({ length: count }, fine) });
    const ok = await search(service, tenant.token, { filter: { filters: [group(20), group(20), { operator: 'AND', filters: [group(10)] }] } });
    expect(ok.statusCode, ok.body).toBe(200);
    await expectRefused({ filter: { filters: [group(20), group(20), { operator: 'AND', filters: [group(11)] }] } }, at('2', 'filters', '0', 'filters', '10'), /at most 50/);
    await expectRefused({ filter: { filters: Array.from({ length: 51 }, fine) } }, ['filter', 'filters']);
  });
});

describe('POST /people/search: personal data', () => {
  it('refuses filtering or sorting on personal data without the personal-data right (403)', async () => {
    const { token } = await tenant.tokenFor('SUPER_ADMIN', { canReadPersonalData: false });
    const refused = [
      ...['EMAIL', 'PHONE', 'NAME', 'FIRST_NAME', 'LAST_NAME'].map((name) => ({ filters: [{ property: person(name), comparison: 'IS_EMPTY' }] })),
      { filters: [{ operator: 'OR', filters: [fine(), { property: custom('diagnosis'), comparison: 'IS_NOT_EMPTY' }] }] },
      { filters: [], sort: { operator: 'ASC', propertyGroup: 'PERSON', propertyName: 'EMAIL' } },
      { filters: [], sort: { operator: 'DESC', propertyGroup: 'PERSON', propertyName: panel.diagnosis } },
    ];
    for (const filter of refused) {
      const response = await search(service, token, { filter });
      expect(response.statusCode, JSON.stringify(filter)).toBe(403);
      expect(response.body).toBe('Forbidden');
    }
  });

  it('lets such a token filter on other fields, and masks what it returns', async () => {
    const { token } = await tenant.tokenFor('OBSERVER', { canReadPersonalData: false });
    const response = await search(service, token, { filter: { filters: [fine()], sort: { operator: 'ASC', propertyGroup: 'PERSON', propertyName: 'LAST_CHANGED_AT' } } });
    expect(response.statusCode, response.body).toBe(200);
    const [found] = response.json<SearchResult>().results;
    expect(found).toMatchObject({ email: '***@***', firstName: '***', lastName: '***', name: '***', phone: '***', populationIds: [panel.populationA] });
    expect(found!.properties).toEqual({ [panel.diagnosis]: '***', [panel.age]: 40 });
    const clear = await search(service, tenant.token, { filter: { filters: [{ property: person('EMAIL'), comparison: 'EQUALS', value: 'GRACE@example.org' }] } });
    expect(clear.json<SearchResult>().results[0]).toMatchObject({ email: 'grace@example.org', firstName: 'Grace', properties: { [panel.diagnosis]: 'flu' } });
  });
});

describeSecurity('POST /people/search', () => service, {
  method: 'POST',
  right: 'people:read',
  addressesResource: false,
  request: async () => ({ url: '/people/search', body: { pageInfo: { size: 5 } } }),
});
