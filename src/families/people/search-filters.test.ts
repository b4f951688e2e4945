import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant, startTestService, type Tenant, type TestService } from '../../../test/harness.js';
import { createPanel, insertPeople, type Panel, searchIds } from './search-fixtures.js';

let service: TestService;
let tenant: Tenant;
let panel: Panel;
const people: Record<string, string> = {};
const NOW = new Date('2026-11-22T12:00:00.000Z');

beforeAll(async () => {
  service = await startTestService();
  service.deps.clock.set(NOW);
  tenant = await createTenant(service);
  panel = await createPanel(service, tenant);
  const seeds = {
    ann: {
      email: 'Ann.Lee@Example.org',
      firstName: 'Ann',
      lastName: 'Lee',
      phone: '+44 20 7946 0001',
      importSource: 'csv',
      importedAt: '2026-11-01T10:00:00.000Z',
      lastImportId: 'imp_1',
      updatedAt: '2026-11-20T00:00:00.000Z',
      properties: {
        [panel.occupation]: 'Engineer',
        [panel.age]: 34,
        [panel.lastSeen]: '2026-11-20T12:00:00.000Z',
        [panel.hasCar]: true,
        [panel.tier]: 'Gold',
        [panel.devices]: ['iOS', 'Web'],
        [panel.home]: { country: 'GB', city: 'London', lat: 51.5074, lng: -0.1278 },
        [panel.diagnosis]: 'none',
      },
      populationIds: [panel.populationA],
    },
    bob: {
      email: 'bob@example.org',
      firstName: 'Bob',
      importSource: 'api',
      importedAt: '2026-10-01T00:00:00.000Z',
      isOptedOut: true,
      contactStatus: 'OPTED_OUT' as const,
      contactStatusUpdatedAt: '2026-11-10T00:00:00.000Z',
      updatedAt: '2026-11-21T10:00:00.000Z',
      properties: {
        [panel.occupation]: 'Designer',
        [panel.age]: 19.5,
        [panel.lastSeen]: '2026-10-01T00:00:00.000Z',
        [panel.hasCar]: false,
        [panel.tier]: 'Silver',
        [panel.devices]: ['Android'],
        [panel.home]: { country: 'FR', city: 'Paris', lat: 48.8566, lng: 2.3522 },
      },
      populationIds: [panel.populationA, panel.populationB],
    },
    // Malformed stored values (a date that is none, a boolean as text, a number as text) read as empty.
    cat: {
      email: 'cat@test.example',
      contactStatus: 'UNREACHABLE' as const,
      updatedAt: '2026-11-22T00:00:00.000Z',
      properties: {
        [panel.occupation]: '',
        [panel.age]: 60,
        [panel.lastSeen]: '2026-02-31T00:00:00Z',
        [panel.hasCar]: 'yes',
        [panel.tier]: 'Gold',
        [panel.devices]: [],
        [panel.home]: { country: 'GB' },
      },
      populationIds: [panel.populationB],
    },
    dan: { email: 'DAN@example.org', firstName: 'Dan', lastName: 'Brown', updatedAt: '2026-11-15T00:00:00.000Z', properties: { [panel.age]: '42', [panel.home]: 'GB' } },
    eve: {
      email: 'eve@example.org',
      firstName: 'Eve',
      deletedAt: '2026-11-21T00:00:00.000Z',
      properties: { [panel.occupation]: 'Engineer', [panel.age]: 34 },
      populationIds: [panel.populationA],
    },
  };
  const ids = await insertPeople(service, tenant.workspaceId, Object.values(seeds));
  Object.keys(seeds).forEach((label, index) => (people[label] = ids[index]!));
});
afterAll(async () => service.stop());

const person = (propertyName: string) => ({ propertyGroup: 'PERSON', propertyName });
const custom = (key: keyof Panel) => ({ propertyId: panel[key] });
const labels = (ids: string[]) =>
  ids
    .map((id) => Object.keys(people).find((label) => people[label] === id) ?? id)
    .sort();

async function expectMatches(filter: unknown, expected: string[]) {
  expect(labels(await searchIds(service, tenant.token, filter)), JSON.stringify(filter)).toEqual([...expected].sort());
}

type Case = [string, () => { property: unknown; comparison: string; value?: unknown }, string[]];

const cases: Record<string, Case[]> = {
  'text (custom STRING)': [
    ['EQUALS', () => ({ property: custom('occupation'), comparison: 'EQUALS', value: 'Engineer' }), ['ann']],
    ['EQUALS is exact', () => ({ property: custom('occupation'), comparison: 'EQUALS', value: 'engineer' }), []],
    ['NOT_EQUALS includes the empty', () => ({ property: custom('occupation'), comparison: 'NOT_EQUALS', value: 'Engineer' }), ['bob', 'cat', 'dan']],
    ['CONTAINS ignores case', () => ({ property: custom('occupation'), comparison: 'CONTAINS', value: 'GIN' }), ['ann']],
    ['CONTAINS takes % literally', () => ({ property: custom('occupation'), comparison: 'CONTAINS', value: '%' }), []],
    ['NOT_CONTAINS', () => ({ property: custom('occupation'), comparison: 'NOT_CONTAINS', value: 'sign' }), ['ann', 'cat', 'dan']],
    ['STARTS_WITH', () => ({ property: custom('occupation'), comparison: 'STARTS_WITH', value: 'des' }), ['bob']],
    ['IN', () => ({ property: custom('occupation'), comparison: 'IN', value: ['Engineer', 'Designer'] }), ['ann', 'bob']],
    ['NOT_IN', () => ({ property: custom('occupation'), comparison: 'NOT_IN', value: ['Engineer', 'Designer'] }), ['cat', 'dan']],
    ['IS_EMPTY (missing or "")', () => ({ property: custom('occupation'), comparison: 'IS_EMPTY' }), ['cat', 'dan']],
    ['IS_NOT_EMPTY', () => ({ property: custom('occupation'), comparison: 'IS_NOT_EMPTY' }), ['ann', 'bob']],
  ],
  'text (PERSON names)': [
    ['PERSON_ID EQUALS', () => ({ property: person('PERSON_ID'), comparison: 'EQUALS', value: people.bob }), ['bob']],
    ['FIRST_NAME EQUALS', () => ({ property: person('FIRST_NAME'), comparison: 'EQUALS', value: 'Ann' }), ['ann']],
    ['LAST_NAME IS_EMPTY', () => ({ property: person('LAST_NAME'), comparison: 'IS_EMPTY' }), ['bob', 'cat']],
    ['NAME CONTAINS', () => ({ property: person('NAME'), comparison: 'CONTAINS', value: 'n br' }), ['dan']],
    ['NAME EQUALS a first name alone', () => ({ property: person('NAME'), comparison: 'EQUALS', value: 'Bob' }), ['bob']],
    ['NAME IS_EMPTY', () => ({ property: person('NAME'), comparison: 'IS_EMPTY' }), ['cat']],
    ['PHONE IS_NOT_EMPTY', () => ({ property: person('PHONE'), comparison: 'IS_NOT_EMPTY' }), ['ann']],
    ['IMPORT_SOURCE IN', () => ({ property: person('IMPORT_SOURCE'), comparison: 'IN', value: ['csv', 'api'] }), ['ann', 'bob']],
    ['IMPORT_UPLOAD_LIST EQUALS', () => ({ property: person('IMPORT_UPLOAD_LIST'), comparison: 'EQUALS', value: 'imp_1' }), ['ann']],
  ],
  'email (case-insensitive)': [
    ['EQUALS', () => ({ property: person('EMAIL'), comparison: 'EQUALS', value: 'ann.lee@EXAMPLE.ORG' }), ['ann']],
    ['NOT_EQUALS', () => ({ property: person('EMAIL'), comparison: 'NOT_EQUALS', value: 'dan@example.org' }), ['ann', 'bob', 'cat']],
    ['IN', () => ({ property: person('EMAIL'), comparison: 'IN', value: ['dan@example.org', 'BOB@example.org'] }), ['bob', 'dan']],
    ['CONTAINS', () => ({ property: person('EMAIL'), comparison: 'CONTAINS', value: '@EXAMPLE.org' }), ['ann', 'bob', 'dan']],
    ['STARTS_WITH', () => ({ property: person('EMAIL'), comparison: 'STARTS_WITH', value: 'dan@' }), ['dan']],
  ],
  number: [
    ['EQUALS', () => ({ property: custom('age'), comparison: 'EQUALS', value: 34 }), ['ann']],
    ['NOT_EQUALS', () => ({ property: custom('age'), comparison: 'NOT_EQUALS', value: 34 }), ['bob', 'cat', 'dan']],
    ['GREATER_THAN', () => ({ property: custom('age'), comparison: 'GREATER_THAN', value: 34 }), ['cat']],
    ['GREATER_THAN_OR_EQUAL', () => ({ property: custom('age'), comparison: 'GREATER_THAN_OR_EQUAL', value: 34 }), ['ann', 'cat']],
    ['LESS_THAN', () => ({ property: custom('age'), comparison: 'LESS_THAN', value: 34 }), ['bob']],
    ['LESS_THAN_OR_EQUAL', () => ({ property: custom('age'), comparison: 'LESS_THAN_OR_EQUAL', value: 19.5 }), ['bob']],
    ['BETWEEN is inclusive', () => ({ property: custom('age'), comparison: 'BETWEEN', value: [19.5, 34] }), ['ann', 'bob']],
    ['IS_EMPTY (a number stored as text reads as empty)', () => ({ property: custom('age'), comparison: 'IS_EMPTY' }), ['dan']],
  ],
  'date-time': [
    ['BEFORE a date', () => ({ property: custom('lastSeen'), comparison: 'BEFORE', value: '2026-11-20' }), ['bob']],
    ['AFTER a date is after that whole day', () => ({ property: custom('lastSeen'), comparison: 'AFTER', value: '2026-11-20' }), []],
    ['AFTER a date-time', () => ({ property: custom('lastSeen'), comparison: 'AFTER', value: '2026-11-20T11:59:59Z' }), ['ann']],
    ['ON a date', () => ({ property: custom('lastSeen'), comparison: 'ON', value: '2026-11-20' }), ['ann']],
    ['ON the day of a date-time', () => ({ property: custom('lastSeen'), comparison: 'ON', value: '2026-10-01T05:00:00+00:00' }), ['bob']],
    ['BETWEEN dates, both days included', () => ({ property: custom('lastSeen'), comparison: 'BETWEEN', value: ['2026-10-01', '2026-11-20'] }), ['ann', 'bob']],
    ['BETWEEN date-times', () => ({ property: custom('lastSeen'), comparison: 'BETWEEN', value: ['2026-10-01T00:00:01Z', '2026-11-20T12:00:00Z'] }), ['ann']],
    ['IN_LAST_DAYS', () => ({ property: custom('lastSeen'), comparison: 'IN_LAST_DAYS', value: 2 }), ['ann']],
    ['NOT_IN_LAST_DAYS includes the empty', () => ({ property: custom('lastSeen'), comparison: 'NOT_IN_LAST_DAYS', value: 2 }), ['bob', 'cat', 'dan']],
    ['IS_EMPTY (an impossible stored date reads as empty)', () => ({ property: custom('lastSeen'), comparison: 'IS_EMPTY' }), ['cat', 'dan']],
    ['IMPORT_DATE IN_LAST_DAYS', () => ({ property: person('IMPORT_DATE'), comparison: 'IN_LAST_DAYS', value: 30 }), ['ann']],
    ['CONTACT_STATUS_UPDATE_DATE IS_NOT_EMPTY', () => ({ property: person('CONTACT_STATUS_UPDATE_DATE'), comparison: 'IS_NOT_EMPTY' }), ['bob']],
    ['LAST_CHANGED_AT AFTER', () => ({ property: person('LAST_CHANGED_AT'), comparison: 'AFTER', value: '2026-11-21' }), ['cat']],
  ],
  boolean: [
    ['IS_TRUE', () => ({ property: custom('hasCar'), comparison: 'IS_TRUE' }), ['ann']],
    ['IS_FALSE is an explicit false', () => ({ property: custom('hasCar'), comparison: 'IS_FALSE' }), ['bob']],
    ['IS_EMPTY (text stored in a boolean reads as empty)', () => ({ property: custom('hasCar'), comparison: 'IS_EMPTY' }), ['cat', 'dan']],
    ['OPTED_OUT IS_TRUE', () => ({ property: person('OPTED_OUT'), comparison: 'IS_TRUE' }), ['bob']],
    ['OPTED_OUT IS_FALSE', () => ({ property: person('OPTED_OUT'), comparison: 'IS_FALSE' }), ['ann', 'cat', 'dan']],
  ],
  'single select and enum': [
    ['IS_ANY_OF by name', () => ({ property: custom('tier'), comparison: 'IS_ANY_OF', value: ['Gold'] }), ['ann', 'cat']],
    ['IS_ANY_OF by option id', () => ({ property: custom('tier'), comparison: 'IS_ANY_OF', value: [panel.tierGold] }), ['ann', 'cat']],
    ['IS_NONE_OF', () => ({ property: custom('tier'), comparison: 'IS_NONE_OF', value: ['Gold'] }), ['bob', 'dan']],
    ['IS_EMPTY', () => ({ property: custom('tier'), comparison: 'IS_EMPTY' }), ['dan']],
    ['CONTACT_STATUS IS_ANY_OF', () => ({ property: person('CONTACT_STATUS'), comparison: 'IS_ANY_OF', value: ['OPTED_OUT', 'UNREACHABLE'] }), ['bob', 'cat']],
    ['CONTACT_STATUS IS_NONE_OF', () => ({ property: person('CONTACT_STATUS'), comparison: 'IS_NONE_OF', value: ['CONTACTABLE'] }), ['bob', 'cat']],
  ],
  'multi select': [
    ['HAS_ANY_OF', () => ({ property: custom('devices'), comparison: 'HAS_ANY_OF', value: ['iOS', 'Android'] }), ['ann', 'bob']],
    ['HAS_ANY_OF by option id', () => ({ property: custom('devices'), comparison: 'HAS_ANY_OF', value: [panel.devicesAndroid] }), ['bob']],
    ['HAS_ALL_OF', () => ({ property: custom('devices'), comparison: 'HAS_ALL_OF', value: ['iOS', 'Web'] }), ['ann']],
    ['HAS_ALL_OF needs every one', () => ({ property: custom('devices'), comparison: 'HAS_ALL_OF', value: ['iOS', 'Android'] }), []],
    ['HAS_NONE_OF', () => ({ property: custom('devices'), comparison: 'HAS_NONE_OF', value: ['iOS'] }), ['bob', 'cat', 'dan']],
    ['IS_EMPTY (missing or no option)', () => ({ property: custom('devices'), comparison: 'IS_EMPTY' }), ['cat', 'dan']],
  ],
  membership: [
    ['HAS_ANY_OF', () => ({ property: person('POPULATION_MEMBERSHIP'), comparison: 'HAS_ANY_OF', value: [panel.populationA] }), ['ann', 'bob']],
    ['HAS_ALL_OF', () => ({ property: person('POPULATION_MEMBERSHIP'), comparison: 'HAS_ALL_OF', value: [panel.populationA, panel.populationB, panel.populationA] }), ['bob']],
    ['HAS_NONE_OF', () => ({ property: person('POPULATION_MEMBERSHIP'), comparison: 'HAS_NONE_OF', value: [panel.populationA] }), ['cat', 'dan']],
    ['IS_EMPTY', () => ({ property: person('POPULATION_MEMBERSHIP'), comparison: 'IS_EMPTY' }), ['dan']],
    ['IS_NOT_EMPTY', () => ({ property: person('POPULATION_MEMBERSHIP'), comparison: 'IS_NOT_EMPTY' }), ['ann', 'bob', 'cat']],
  ],
  location: [
    ['WITHIN_KM near', () => ({ property: custom('home'), comparison: 'WITHIN_KM', value: { lat: 51.5, lng: -0.12, km: 10 } }), ['ann']],
    ['WITHIN_KM far (London to Paris is ~344 km)', () => ({ property: custom('home'), comparison: 'WITHIN_KM', value: { lat: 51.5, lng: -0.12, km: 400 } }), ['ann', 'bob']],
    ['WITHIN_KM at the very point', () => ({ property: custom('home'), comparison: 'WITHIN_KM', value: { lat: 48.8566, lng: 2.3522, km: 0 } }), ['bob']],
    ['WITHIN_KM past half the earth: everyone with coordinates, nobody without', () => ({ property: custom('home'), comparison: 'WITHIN_KM', value: { lat: -51.5, lng: 179.88, km: 20_100 } }), ['ann', 'bob']],
    ['COUNTRY_IS ignores case of the code', () => ({ property: custom('home'), comparison: 'COUNTRY_IS', value: ['gb'] }), ['ann', 'cat']],
    ['IS_EMPTY (a location stored as text reads as empty)', () => ({ property: custom('home'), comparison: 'IS_EMPTY' }), ['dan']],
  ],
};

describe('POST /people/search: comparisons by type', () => {
  for (const [type, typeCases] of Object.entries(cases)) {
    describe(type, () => {
      for (const [name, filter, expected] of typeCases) {
        it(name, async () => expectMatches({ filters: [filter()] }, expected));
      }
    });
  }

  it('reads IN_LAST_DAYS relative to the service clock', async () => {
    const filter = { filters: [{ property: custom('lastSeen'), comparison: 'IN_LAST_DAYS', value: 2 }] };
    try {
      service.deps.clock.set(new Date('2026-11-25T00:00:00Z'));
      await expectMatches(filter, []);
      service.deps.clock.set(new Date('2026-10-02T00:00:00Z'));
      await expectMatches(filter, ['bob']);
    } finally {
      service.deps.clock.set(NOW);
    }
  });
});

describe('POST /people/search: combining', () => {
  it('returns every live person without a filter, and never a deleted one', async () => {
    await expectMatches(undefined, ['ann', 'bob', 'cat', 'dan']);
    await expectMatches({ filters: [] }, ['ann', 'bob', 'cat', 'dan']);
    await expectMatches({ filters: [{ property: person('FIRST_NAME'), comparison: 'EQUALS', value: 'Eve' }] }, []);
  });

  it('ANDs by default and ORs when asked', async () => {
    const engineer = { property: custom('occupation'), comparison: 'EQUALS', value: 'Engineer' };
    const old = { property: custom('age'), comparison: 'GREATER_THAN', value: 50 };
    await expectMatches({ filters: [engineer, old] }, []);
    await expectMatches({ operator: 'OR', filters: [engineer, old] }, ['ann', 'cat']);
  });

  it('nests groups down to level 4', async () => {
    const reachable = { property: person('CONTACT_STATUS'), comparison: 'IS_NONE_OF', value: ['OPTED_OUT'] };
    const nested = {
      filters: [
        reachable,
        {
          operator: 'OR',
          filters: [
            { property: custom('occupation'), comparison: 'EQUALS', value: 'Designer' },
            {
              operator: 'AND',
              filters: [
                { property: custom('age'), comparison: 'GREATER_THAN', value: 30 },
                { operator: 'OR', filters: [{ operator: 'AND', filters: [{ property: custom('tier'), comparison: 'IS_ANY_OF', value: ['Gold'] }] }] },
              ],
            },
          ],
        },
      ],
    };
    await expectMatches(nested, ['ann', 'cat']);
    // An empty group constrains nothing.
    await expectMatches({ filters: [reachable, { operator: 'OR', filters: [] }] }, ['ann', 'cat', 'dan']);
  });

  it("sees only its own workspace's people", async () => {
    const other = await createTenant(service);
    await insertPeople(service, other.workspaceId, [{ email: 'ann.lee@example.org', firstName: 'Ann' }]);
    const own = await searchIds(service, other.token, { filters: [{ property: person('FIRST_NAME'), comparison: 'EQUALS', value: 'Ann' }] });
    expect(own).toHaveLength(1);
    expect(own).not.toContain(people.ann);
    await expectMatches({ filters: [{ property: person('FIRST_NAME'), comparison: 'EQUALS', value: 'Ann' }] }, ['ann']);
  });
});
