import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type Tenant, type TestService } from '../../../test/harness.js';
import { describeSecurity } from '../../../test/security.js';
import { createPopulation, createProperties } from '../../../test/people-factory.js';
import { insertPeople, searchIds } from '../people/search-fixtures.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service.stop());

const person = (propertyName: string) => ({ propertyGroup: 'PERSON', propertyName });
const bakers = (occupation: string) => ({ filters: [{ property: { propertyId: occupation }, comparison: 'EQUALS', value: 'baker' }] });
/** The filter as saved: with the defaults the schema fills in. */
const saved = (filter: object) => ({ operator: 'AND', ...filter });

async function makeSegment(tenant: Tenant, body: object, token = tenant.token) {
  return call(service, 'POST', '/segments', { token, body });
}

describe('segments', () => {
  it('saves a filter, reads it back, lists, updates and deletes it', async () => {
    const tenant = await createTenant(service);
    const { Occupation: occupation } = await createProperties(service, tenant, [{ name: 'Occupation', propertyType: 'STRING' }]);
    const made = await makeSegment(tenant, { name: 'Bakers', filter: bakers(occupation!) });
    expect(made.statusCode, made.body).toBe(201);
    const segment = made.json<{ segmentId: string; createdAt: string }>();
    expect(segment).toEqual({ segmentId: expect.stringMatching(/^seg_/), name: 'Bakers', description: '', filter: saved(bakers(occupation!)), createdAt: expect.any(String), updatedAt: segment.createdAt });
    expect((await call(service, 'GET', `/segments/${segment.segmentId}`, { token: tenant.token })).json()).toEqual(segment);
    const second = (await makeSegment(tenant, { name: 'Everyone', filter: { filters: [] } })).json<{ segmentId: string }>();
    const page = await call(service, 'GET', '/segments', { token: tenant.token, query: { size: '1' } });
    expect(page.json()).toMatchObject({ results: [{ segmentId: segment.segmentId }], total: 2, pageInfo: { hasNextPage: true } });
    const next = await call(service, 'GET', '/segments', { token: tenant.token, query: { size: '1', startCursor: page.json<{ pageInfo: { endCursor: string } }>().pageInfo.endCursor } });
    expect(next.json()).toMatchObject({ results: [{ segmentId: second.segmentId }], pageInfo: { hasNextPage: false } });
    const renamed = await call(service, 'PATCH', `/segments/${segment.segmentId}`, { token: tenant.token, body: { name: 'Bread makers', description: 'Who bake' } });
    expect(renamed.statusCode, renamed.body).toBe(200);
    expect(renamed.json()).toMatchObject({ name: 'Bread makers', description: 'Who bake', filter: saved(bakers(occupation!)) });
    expect((await call(service, 'DELETE', `/segments/${segment.segmentId}`, { token: tenant.token })).json()).toEqual({ segmentId: segment.segmentId });
    expect((await call(service, 'GET', `/segments/${segment.segmentId}`, { token: tenant.token })).statusCode).toBe(404);
    expect((await call(service, 'DELETE', `/segments/${segment.segmentId}`, { token: tenant.token })).statusCode).toBe(404);
  });

  it('refuses a sort, SEGMENT_MEMBERSHIP, participant names and bad filters with 400 naming the path; unknown populations with 404', async () => {
    const tenant = await createTenant(service);
    const cases: [object, string[]][] = [
      [{ filters: [], sort: { operator: 'ASC', propertyGroup: 'PERSON', propertyName: 'EMAIL' } }, ['filter', 'sort']],
      [{ filters: [{ property: person('OPTED_OUT'), comparison: 'IS_TRUE' }, { operator: 'OR', filters: [{ property: person('SEGMENT_MEMBERSHIP'), comparison: 'HAS_ANY_OF', value: ['seg_x'] }] }] }, ['filter', 'filters', '1', 'filters', '0']],
      [{ filters: [{ property: { propertyGroup: 'PARTICIPANT', propertyName: 'STATUS' }, comparison: 'IS_EMPTY' }] }, ['filter', 'filters', '0', 'property', 'propertyGroup']],
      [{ filters: [{ property: person('OPTED_OUT'), comparison: 'EQUALS', value: true }] }, ['filter', 'filters', '0', 'comparison']],
      [{ filters: [{ property: { propertyId: 'prp_unknown' }, comparison: 'IS_EMPTY' }] }, ['filter', 'filters', '0', 'property', 'propertyId']],
    ];
    for (const [filter, path] of cases) {
      const response = await makeSegment(tenant, { name: 'X', filter });
      expect(response.statusCode, JSON.stringify(filter)).toBe(400);
      expect(response.json().errors[0].path).toEqual(path);
    }
    const unknownPopulation = await makeSegment(tenant, { name: 'X', filter: { filters: [{ property: person('POPULATION_MEMBERSHIP'), comparison: 'HAS_ANY_OF', value: ['pop_nope'] }] } });
    expect(unknownPopulation.statusCode).toBe(404);
    expect(unknownPopulation.json()).toEqual({ errors: [{ message: 'Population not found', path: ['filter', 'filters', '0', 'value', '0'] }] });
    for (const body of [{ filter: { filters: [] } }, { name: '', filter: { filters: [] } }, { name: 'X', filter: { filters: [] }, extra: 1 }]) {
      expect((await makeSegment(tenant, body)).statusCode, JSON.stringify(body)).toBe(400);
    }
    expect((await call(service, 'PATCH', '/segments/seg_nope', { token: tenant.token, body: { name: 'Y' } })).statusCode).toBe(404);
    const existing = (await makeSegment(tenant, { name: 'Everyone', filter: { filters: [] } })).json<{ segmentId: string }>();
    expect((await call(service, 'PATCH', `/segments/${existing.segmentId}`, { token: tenant.token, body: {} })).statusCode).toBe(400);
  });

  it('refuses a filter on personal data from a token without the personal-data right (403)', async () => {
    const tenant = await createTenant(service);
    const { token } = await tenant.tokenFor('OPS_MANAGER', { canReadPersonalData: false });
    const response = await makeSegment(tenant, { name: 'Gmail', filter: { filters: [{ property: person('EMAIL'), comparison: 'CONTAINS', value: 'gmail' }] } }, token);
    expect(response.statusCode).toBe(403);
  });
});

describe('segments on personal data', () => {
  it('show their values masked to a token without the personal-data right, which may not use them either (403)', async () => {
    const tenant = await createTenant(service);
    const { Diagnosis: diagnosis } = await createProperties(service, tenant, [{ name: 'Diagnosis', propertyType: 'STRING', isPHI: true }]);
    const [ann] = await insertPeople(service, tenant.workspaceId, [{ email: 'ann@example.org', properties: { [diagnosis!]: 'asthma' } }, { email: 'bob@example.org' }]);
    const filter = {
      operator: 'OR',
      filters: [
        { property: person('EMAIL'), comparison: 'EQUALS', value: 'ann@example.org' },
        { operator: 'AND', filters: [{ property: { propertyId: diagnosis }, comparison: 'CONTAINS', value: 'asthma' }, { property: person('OPTED_OUT'), comparison: 'IS_FALSE' }] },
      ],
    };
    const personal = (await makeSegment(tenant, { name: 'Ann', filter })).json<{ segmentId: string }>().segmentId;
    const plain = (await makeSegment(tenant, { name: 'Not opted out', filter: { filters: [{ property: person('OPTED_OUT'), comparison: 'IS_FALSE' }] } })).json<{ segmentId: string }>().segmentId;
    const { token } = await tenant.tokenFor('OPS_MANAGER', { canReadPersonalData: false });
    const seen = await call(service, 'GET', `/segments/${personal}`, { token });
    expect(seen.json().filter).toEqual({
      operator: 'OR',
      filters: [
        { property: person('EMAIL'), comparison: 'EQUALS', value: '***' },
        { operator: 'AND', filters: [{ property: { propertyId: diagnosis }, comparison: 'CONTAINS', value: '***' }, { property: person('OPTED_OUT'), comparison: 'IS_FALSE' }] },
      ],
    });
    expect((await call(service, 'GET', '/segments', { token })).json().results[0].filter.filters[0].value).toBe('***');
    // With the right, the filter reads whole.
    expect((await call(service, 'GET', `/segments/${personal}`, { token: tenant.token })).json().filter).toEqual({ ...filter, filters: [filter.filters[0], { ...filter.filters[1], operator: 'AND' }] });
    const membership = (segmentId: string) => ({ filter: { filters: [{ property: person('SEGMENT_MEMBERSHIP'), comparison: 'HAS_ANY_OF', value: [segmentId] }] } });
    expect((await call(service, 'POST', '/people/search', { token, body: membership(personal) })).statusCode).toBe(403);
    expect((await call(service, 'POST', '/people/search', { token, body: { filter: { filters: [], sort: { operator: 'ASC', propertyGroup: 'PERSON', propertyName: 'SEGMENT_MEMBERSHIP' } } } })).statusCode).toBe(403);
    expect((await call(service, 'POST', '/people/search', { token, body: membership(plain) })).json().total).toBe(2);
    expect((await call(service, 'POST', '/people/search', { token: tenant.token, body: membership(personal) })).json().results.map((found: { personId: string }) => found.personId)).toEqual([ann]);
  });
});

describe('PERSON.SEGMENT_MEMBERSHIP', () => {
  it('finds the people matching a segment now, combines segments, sorts by how many match, and 404s an unknown segment', async () => {
    const tenant = await createTenant(service);
    const { Occupation: occupation } = await createProperties(service, tenant, [{ name: 'Occupation', propertyType: 'STRING' }]);
    const population = await createPopulation(service, tenant);
    const [baker, cook, bakerInPanel] = await insertPeople(service, tenant.workspaceId, [
      { email: 'baker@example.org', properties: { [occupation!]: 'baker' } },
      { email: 'cook@example.org', properties: { [occupation!]: 'cook' } },
      { email: 'panel.baker@example.org', properties: { [occupation!]: 'baker' }, populationIds: [population] },
    ]);
    const bakersSegment = (await makeSegment(tenant, { name: 'Bakers', filter: bakers(occupation!) })).json<{ segmentId: string }>().segmentId;
    const panelSegment = (await makeSegment(tenant, { name: 'Panel', filter: { filters: [{ property: person('POPULATION_MEMBERSHIP'), comparison: 'HAS_ANY_OF', value: [population] }] } })).json<{
      segmentId: string;
    }>().segmentId;
    const membership = (comparison: string, value: string[]) => ({ filters: [{ property: person('SEGMENT_MEMBERSHIP'), comparison, value }] });
    expect((await searchIds(service, tenant.token, membership('HAS_ANY_OF', [bakersSegment]))).sort()).toEqual([baker, bakerInPanel].sort());
    expect(await searchIds(service, tenant.token, membership('HAS_ALL_OF', [bakersSegment, panelSegment]))).toEqual([bakerInPanel]);
    expect(await searchIds(service, tenant.token, membership('HAS_NONE_OF', [bakersSegment, panelSegment]))).toEqual([cook]);
    const sorted = await searchIds(service, tenant.token, { filters: [], sort: { operator: 'DESC', propertyGroup: 'PERSON', propertyName: 'SEGMENT_MEMBERSHIP' } });
    expect(sorted).toEqual([bakerInPanel, baker, cook]);
    // Membership follows the data: a cook who becomes a baker joins the segment.
    await call(service, 'PATCH', `/people/${cook}`, { token: tenant.token, body: { properties: { [occupation!]: 'baker' } } });
    expect(await searchIds(service, tenant.token, membership('HAS_ANY_OF', [bakersSegment]))).toContain(cook);
    const unknown = await call(service, 'POST', '/people/search', { token: tenant.token, body: { filter: membership('HAS_ANY_OF', [bakersSegment, 'seg_nope']) } });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ errors: [{ message: 'Segment not found', path: ['filter', 'filters', '0', 'value', '1'] }] });
    // Another workspace's segment is unknown here.
    const other = await createTenant(service, 'Other');
    const theirs = (await makeSegment(other, { name: 'All', filter: { filters: [] } })).json<{ segmentId: string }>().segmentId;
    expect((await call(service, 'POST', '/people/search', { token: tenant.token, body: { filter: membership('HAS_ANY_OF', [theirs]) } })).statusCode).toBe(404);
  });

  it('a segment whose property was deleted matches nobody', async () => {
    const tenant = await createTenant(service);
    const { Occupation: occupation } = await createProperties(service, tenant, [{ name: 'Occupation', propertyType: 'STRING' }]);
    await insertPeople(service, tenant.workspaceId, [{ email: 'baker@example.org', properties: { [occupation!]: 'baker' } }]);
    const segment = (await makeSegment(tenant, { name: 'Bakers', filter: bakers(occupation!) })).json<{ segmentId: string }>().segmentId;
    expect(await call(service, 'DELETE', `/properties/${occupation}`, { token: tenant.token })).toMatchObject({ statusCode: 200 });
    expect(await searchIds(service, tenant.token, { filters: [{ property: person('SEGMENT_MEMBERSHIP'), comparison: 'HAS_ANY_OF', value: [segment] }] })).toEqual([]);
  });
});

describeSecurity('POST /segments', () => service, {
  method: 'POST',
  right: 'people:write',
  addressesResource: false,
  request: async () => ({ url: '/segments', body: { name: 'All', filter: { filters: [] } } }),
});

describeSecurity('GET /segments', () => service, { method: 'GET', right: 'people:read', addressesResource: false, request: async () => ({ url: '/segments' }) });

const existingSegment = async (tenant: Tenant) => (await makeSegment(tenant, { name: 'All', filter: { filters: [] } })).json<{ segmentId: string }>().segmentId;

describeSecurity('GET /segments/{segmentId}', () => service, {
  method: 'GET',
  right: 'people:read',
  addressesResource: true,
  request: async (tenant) => ({ url: `/segments/${await existingSegment(tenant)}` }),
});

describeSecurity('PATCH /segments/{segmentId}', () => service, {
  method: 'PATCH',
  right: 'people:write',
  addressesResource: true,
  request: async (tenant) => ({ url: `/segments/${await existingSegment(tenant)}`, body: { name: 'Renamed' } }),
});

describeSecurity('DELETE /segments/{segmentId}', () => service, {
  method: 'DELETE',
  right: 'people:write',
  addressesResource: true,
  request: async (tenant) => ({ url: `/segments/${await existingSegment(tenant)}` }),
});
