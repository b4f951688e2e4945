import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type Tenant, type TestService } from '../../../test/harness.js';
import { createStudy } from '../../../test/participants-factory.js';
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

const comparisonsOf = {
  text: 'EQUALS, NOT_EQUALS, CONTAINS, NOT_CONTAINS, STARTS_WITH, IN, NOT_IN, IS_EMPTY, IS_NOT_EMPTY',
  number: 'EQUALS, NOT_EQUALS, GREATER_THAN, GREATER_THAN_OR_EQUAL, LESS_THAN, LESS_THAN_OR_EQUAL, BETWEEN, IS_EMPTY, IS_NOT_EMPTY',
  datetime: 'BEFORE, AFTER, ON, BETWEEN, IN_LAST_DAYS, NOT_IN_LAST_DAYS, IS_EMPTY, IS_NOT_EMPTY',
};

/** The whole errors body of a refused search. */
async function errorsOf(body: unknown, url = '/people/search') {
  const response = await call(service, 'POST', url, { token: tenant.token, body });
  expect(response.statusCode, response.body).toBe(400);
  return response.json<{ errors: { message: string; path: string[] }[] }>().errors;
}

describe('search filters: one error per mistaken Filter, saying what is allowed there', () => {
  it("refuses a comparison that is none, or does not fit, with one error listing the comparisons of the property's type, on every route that takes a filter", async () => {
    const typo = (property: object, comparison: string) => ({ filter: { filters: [fine(), { property, comparison, value: 'x' }] } });
    expect(await errorsOf(typo(custom('occupation'), 'CONTAIN'))).toEqual([
      { message: `comparison must be one of the comparisons of Occupation, a text property: ${comparisonsOf.text}`, path: at('1', 'comparison') },
    ]);
    expect(await errorsOf(typo(custom('age'), 'GREATER'))).toEqual([{ message: `comparison must be one of the comparisons of Age, a number property: ${comparisonsOf.number}`, path: at('1', 'comparison') }]);
    // A comparison of the language that does not fit the type: the same list.
    expect(await errorsOf(typo(custom('age'), 'CONTAINS'))).toEqual([{ message: `CONTAINS does not fit Age, a number property; use one of ${comparisonsOf.number}`, path: at('1', 'comparison') }]);
    expect(await errorsOf(typo(person('IMPORT_DATE'), 'SINCE'))).toEqual([
      { message: `comparison must be one of the comparisons of PERSON.IMPORT_DATE, a date-time property: ${comparisonsOf.datetime}`, path: at('1', 'comparison') },
    ]);
    // The same check wherever a filter is taken: a study's participants, a segment.
    const studyId = await createStudy(service, tenant, { studyType: 'INTERVIEWS' });
    const participantTypo = { filter: { filters: [{ property: { propertyGroup: 'PARTICIPANT', propertyName: 'STUDY_NOTE' }, comparison: 'CONTAIN', value: 'x' }] } };
    expect(await errorsOf(participantTypo, `/studies/${studyId}/participants/search`)).toEqual([
      { message: `comparison must be one of the comparisons of PARTICIPANT.STUDY_NOTE, a text property: ${comparisonsOf.text}`, path: at('0', 'comparison') },
    ]);
    expect(await errorsOf({ name: 'Engineers', ...typo(custom('occupation'), 'CONTAIN') }, '/segments')).toEqual([
      { message: `comparison must be one of the comparisons of Occupation, a text property: ${comparisonsOf.text}`, path: at('1', 'comparison') },
    ]);
  });

  it('refuses an unknown name with one error that lists the names of the group and says how to name a custom property', async () => {
    const [error, ...others] = await errorsOf({ filter: { filters: [{ property: person('AGE'), comparison: 'GREATER_THAN', value: 1 }] } });
    expect(others).toEqual([]);
    expect(error!.path).toEqual(at('0', 'property', 'propertyName'));
    expect(error!.message).toMatch(/^AGE is not a name of the PERSON property group nor the id of a custom person property\. PERSON names: PERSON_ID, NAME, FIRST_NAME, .*, SHOW_RATE, .*\. /);
    expect(error!.message).toContain('A custom person property is named by its id: {"propertyId": "<id>"}; GET /properties lists');
    const [sortError] = await errorsOf({ filter: { filters: [], sort: { operator: 'ASC', propertyGroup: 'PERSON', propertyName: 'Age' } } });
    expect(sortError!.message).toContain('To sort by a custom person property, give its id as propertyName (propertyGroup PERSON)');
    const [incentiveError] = await errorsOf({ filter: { filters: [{ property: { propertyGroup: 'INCENTIVE', propertyName: 'VALUE' }, comparison: 'IS_EMPTY' }] } });
    expect(incentiveError!.message).toMatch(/^VALUE is not a name of the INCENTIVE property group\. INCENTIVE names: EMAIL, TYPE, AMOUNT, /);
  });

  it('refuses an unknown custom property id, an unknown group and an unknown field with one error each', async () => {
    expect(await errorsOf({ filter: { filters: [{ property: { propertyId: 'prp_nope' }, comparison: 'IS_EMPTY' }] } })).toEqual([
      { message: "No custom person property of this workspace has the id prp_nope. GET /properties lists the workspace's custom properties with their ids.", path: at('0', 'property', 'propertyId') },
    ]);
    expect(await errorsOf({ filter: { filters: [{ property: { propertyGroup: 'STUDY', propertyName: 'NAME' }, comparison: 'IS_EMPTY' }] } })).toEqual([
      { message: 'propertyGroup must be one of: PERSON, PARTICIPANT, INCENTIVE', path: at('0', 'property', 'propertyGroup') },
    ]);
    expect(await errorsOf({ filter: { filters: [{ ...fine(), values: [1] }] } })).toEqual([{ message: 'values is not a known field', path: at('0', 'values') }]);
    expect(await errorsOf({ filter: { filters: [{ operator: 'OR', filters: [{ property: custom('age'), comparisons: 'EQUALS' }] }] } })).toEqual([
      { message: 'comparison is required', path: at('0', 'filters', '0', 'comparison') },
    ]);
  });

  it('refuses a value the comparison does not take with one error saying what it takes', async () => {
    const cases: [object, string[], string][] = [
      [{ property: custom('age'), comparison: 'GREATER_THAN', value: '5' }, at('0', 'value'), 'GREATER_THAN on Age takes a number'],
      [{ property: custom('age'), comparison: 'BETWEEN', value: [1] }, at('0', 'value'), 'BETWEEN on Age takes an array of two numbers [min, max], min not greater than max'],
      [{ property: custom('age'), comparison: 'BETWEEN', value: [1, 'x'] }, at('0', 'value', '1'), 'BETWEEN on Age takes an array of two numbers [min, max], min not greater than max'],
      [{ property: custom('occupation'), comparison: 'IN', value: 'Engineer' }, at('0', 'value'), 'IN on Occupation takes an array of 1 to 1000 strings'],
      [{ property: custom('occupation'), comparison: 'CONTAINS', value: ['Engineer'] }, at('0', 'value'), 'CONTAINS on Occupation takes a string of at most 1000 characters'],
      [{ property: custom('lastSeen'), comparison: 'BEFORE', value: 'yesterday' }, at('0', 'value'), 'BEFORE on Last seen takes a date (YYYY-MM-DD) or an ISO 8601 date-time'],
      [{ property: custom('lastSeen'), comparison: 'IN_LAST_DAYS', value: 1.5 }, at('0', 'value'), 'IN_LAST_DAYS on Last seen takes a whole number of days from 0 to 36500'],
      [{ property: custom('hasCar'), comparison: 'IS_TRUE', value: true }, at('0', 'value'), 'IS_TRUE on Has car takes no value (leave `value` out)'],
      [{ property: custom('tier'), comparison: 'IS_ANY_OF', value: 'Gold' }, at('0', 'value'), 'IS_ANY_OF on Tier takes an array of 1 to 1000 of its option names or ids'],
      [{ property: custom('tier'), comparison: 'IS_ANY_OF', value: ['gold'] }, at('0', 'value', '0'), 'gold is not an option of Tier; its options (by name, exactly as written, or by id): Gold, Silver'],
      [{ property: person('CONTACT_STATUS'), comparison: 'IS_ANY_OF', value: ['contactable'] }, at('0', 'value', '0'), 'contactable is not a value of PERSON.CONTACT_STATUS; its values: CONTACTABLE, OPTED_OUT, UNREACHABLE'],
      [{ property: custom('home'), comparison: 'WITHIN_KM', value: [51, 0, 1] }, at('0', 'value'), 'WITHIN_KM on Home takes an object {"lat", "lng", "km"} of numbers'],
      [{ property: custom('home'), comparison: 'COUNTRY_IS', value: ['GBR'] }, at('0', 'value', '0'), 'COUNTRY_IS on Home takes an array of 1 to 1000 ISO 3166-1 alpha-2 country codes'],
    ];
    for (const [filter, path, message] of cases) expect(await errorsOf({ filter: { filters: [filter] } }), JSON.stringify(filter)).toEqual([{ message, path }]);
  });

  it('gives several mistaken Filters an error each, in order, at any level', async () => {
    const filters = [
      { property: custom('age'), comparison: 'CONTAIN', value: 1 },
      fine(),
      { operator: 'OR', filters: [fine(), { property: custom('lastSeen'), comparison: 'ON', value: 5 }] },
      { property: custom('age'), comparison: 'BETWEEN', value: [9, 1] },
    ];
    expect(await errorsOf({ filter: { filters, sort: { operator: 'ASC', propertyGroup: 'PERSON', propertyName: 'NOPE' } } })).toEqual([
      { message: `comparison must be one of the comparisons of Age, a number property: ${comparisonsOf.number}`, path: at('0', 'comparison') },
      { message: 'ON on Last seen takes a date (YYYY-MM-DD) or an ISO 8601 date-time', path: at('2', 'filters', '1', 'value') },
      { message: 'BETWEEN takes [min, max] with min not greater than max; 9 is greater than 1', path: at('3', 'value') },
      { message: expect.stringMatching(/^NOPE is not a name of the PERSON property group/), path: ['filter', 'sort', 'propertyName'] },
    ]);
  });

  it('refuses BETWEEN with its bounds reversed, for numbers, dates and date-times, and accepts bounds that meet', async () => {
    const between = (key: keyof Panel, value: unknown) => ({ filter: { filters: [fine(), { property: custom(key), comparison: 'BETWEEN', value }] } });
    expect(await errorsOf(between('age', [50, 18]))).toEqual([{ message: 'BETWEEN takes [min, max] with min not greater than max; 50 is greater than 18', path: at('1', 'value') }]);
    expect(await errorsOf(between('lastSeen', ['2026-03-02', '2026-03-01']))).toEqual([
      { message: 'BETWEEN takes [from, to] with from not after to; 2026-03-02 is after 2026-03-01', path: at('1', 'value') },
    ]);
    expect(await errorsOf(between('lastSeen', ['2026-03-01T12:00:00Z', '2026-03-01T11:59:59Z']))).toEqual([
      { message: 'BETWEEN takes [from, to] with from not after to; 2026-03-01T12:00:00Z is after 2026-03-01T11:59:59Z', path: at('1', 'value') },
    ]);
    // A date-time after the whole day that is the upper bound.
    expect(await errorsOf(between('lastSeen', ['2026-03-02T00:00:00Z', '2026-03-01']))).toEqual([
      { message: 'BETWEEN takes [from, to] with from not after to; 2026-03-02T00:00:00Z is after 2026-03-01', path: at('1', 'value') },
    ]);
    for (const value of [[40, 40], ['2026-03-01', '2026-03-01'], ['2026-03-01T12:00:00Z', '2026-03-01T12:00:00Z'], ['2026-03-01T12:00:00Z', '2026-03-01']]) {
      const response = await search(service, tenant.token, between(typeof value[0] === 'number' ? 'age' : 'lastSeen', value));
      expect(response.statusCode, response.body).toBe(200);
    }
    const grace = await search(service, tenant.token, between('age', [40, 40]));
    expect(grace.json<SearchResult>().total).toBe(1);
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
