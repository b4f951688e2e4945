import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type TestService } from '../../../test/harness.js';
import { createPerson, createPopulation, createProperties, createPropertyOfEveryType, getPerson, type PersonResponse } from '../../../test/people-factory.js';
import { search, type SearchResult } from './search-fixtures.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service.stop());

/**
 * A search page writes each Person's JSON itself, its property values as the store gave them
 * (writePeopleJson); reading one person presents it field by field (presentPeople). The two
 * must answer the same Person, masked or not.
 */
describe('POST /people/search presents each person as GET /people/{personId} does', () => {
  it('for every kind of field and value, with and without the personal-data right', async () => {
    const tenant = await createTenant(service);
    const types = await createPropertyOfEveryType(service, tenant);
    const { Diagnosis, Badge } = await createProperties(service, tenant, [
      { name: 'Diagnosis', propertyType: 'STRING', isPHI: true },
      { name: 'Badge', propertyType: 'STRING' },
    ]);
    const first = await createPopulation(service, tenant, 'First');
    const second = await createPopulation(service, tenant, 'Second');
    const bodies: object[] = [
      {},
      { firstName: 'Ada', lastName: 'Lovelace', phone: '+44 1', additionalEmails: ['ada@example.org', 'a2@example.org'], additionalPhones: ['2', '3'], populationIds: [second, first] },
      { lastName: 'Only' },
      { firstName: 'Émile "quoted" \\ back', properties: { [types.STRING]: 'line\u2028separator\ttab "q" 名前', [types.NUMBER]: 1.5, [Badge!]: 'plain' } },
      {
        properties: {
          [types.NUMBER]: -3,
          [types.DATETIME]: '2026-01-02T03:04:05.678Z',
          [types.BOOLEAN]: false,
          [types.SINGLE_SELECT]: 'Green',
          [types.MULTI_SELECT]: ['Red', 'Blue'],
          [types.LOCATION]: { country: 'GB', lat: 51.5, lng: -0.12 },
          [Diagnosis!]: 'secret',
        },
        populationIds: [first],
      },
      // A text equal to the personal property's id: the row names it without holding a value to mask.
      { properties: { [Badge!]: Diagnosis!, [types.NUMBER]: 0 } },
    ];
    const people: PersonResponse[] = [];
    for (const body of bodies) people.push(await createPerson(service, tenant, body));
    expect((await call(service, 'PUT', `/people/${people[1]!.personId}/opted-out`, { token: tenant.token, body: { isOptedOut: true } })).statusCode).toBe(200);

    const { token: maskedToken } = await tenant.tokenFor('OBSERVER', { canReadPersonalData: false });
    for (const token of [tenant.token, maskedToken]) {
      const response = await search(service, token, { pageInfo: { size: 1000 } });
      expect(response.statusCode, response.body).toBe(200);
      expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
      const page = response.json<SearchResult>();
      expect(page.total).toBe(people.length);
      expect(page.results.map((person) => person.personId).sort()).toEqual(people.map((person) => person.personId).sort());
      for (const found of page.results) expect(found).toEqual((await getPerson(service, tenant, found.personId, token)).json());
      if (token === maskedToken) {
        expect(response.body).not.toContain('secret');
        expect(response.body).not.toContain('Lovelace');
        expect(page.results.find((person) => person.personId === people[5]!.personId)?.properties).toEqual({ [Badge!]: Diagnosis!, [types.NUMBER]: 0 });
      }
    }
  });
});
