import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type Tenant, type TestService } from '../../test/harness.js';
import { createProperties, createPopulation } from '../../test/people-factory.js';

/**
 * Every list and event feed signs its cursors with the workspace (cursorScope): the same query's
 * cursor from another workspace is a 400, as a cursor of another query is.
 */
let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service.stop());

async function createStudy(tenant: Tenant): Promise<string> {
  const response = await call(service, 'POST', '/studies', {
    token: tenant.token,
    body: { studyType: 'INTERVIEWS', recruitmentStrategy: 'IN_SERVICE', studyPlan: { name: 'Cursor study' } },
  });
  expect(response.statusCode, response.body).toBe(201);
  return response.json<{ studyId: string }>().studyId;
}

/** Two of everything each list shows, so that a page of one has a next page. */
async function fill(tenant: Tenant): Promise<{ propertyGroupId: string }> {
  for (const name of ['One', 'Two']) {
    const populationId = await createPopulation(service, tenant, name);
    expect((await call(service, 'POST', '/signups', { token: tenant.token, body: { name, populationId } })).statusCode).toBe(201);
    const studyId = await createStudy(tenant);
    expect((await call(service, 'POST', `/studies/${studyId}/launch`, { token: tenant.token })).statusCode).toBe(200);
    expect((await call(service, 'POST', '/study-templates', { token: tenant.token, body: { studyId, name } })).statusCode).toBe(201);
  }
  for (const name of ['One', 'Two']) {
    expect((await call(service, 'POST', '/segments', { token: tenant.token, body: { name, filter: { filters: [] } } })).statusCode).toBe(201);
  }
  await createProperties(service, tenant, [
    { name: 'First', propertyType: 'STRING' },
    { name: 'Second', propertyType: 'STRING' },
  ]);
  const groups = await call(service, 'GET', '/property-groups', { token: tenant.token });
  return { propertyGroupId: groups.json<{ results: { propertyGroupId: string }[] }>().results[0]!.propertyGroupId };
}

let first: Tenant;
let second: Tenant;
/** Each workspace's default property group. */
const groups = new Map<string, string>();

beforeAll(async () => {
  first = await createTenant(service, 'First');
  second = await createTenant(service, 'Second');
  for (const tenant of [first, second]) groups.set(tenant.workspaceId, (await fill(tenant)).propertyGroupId);
});

/** Every list route and event feed, by the URL it has in a workspace. */
const lists: Record<string, (tenant: Tenant) => string> = {
  'GET /signups': () => '/signups',
  'GET /segments': () => '/segments',
  'GET /populations': () => '/populations',
  'GET /properties': () => '/properties',
  'GET /property-groups/{id}/properties': (tenant) => `/property-groups/${groups.get(tenant.workspaceId)}/properties`,
  'GET /studies': () => '/studies',
  'GET /study-templates': () => '/study-templates',
  'GET /participant-status-events': () => '/participant-status-events',
  'GET /study-status-events': () => '/study-status-events',
};

describe('list cursors are bound to their workspace', () => {
  it.each(Object.keys(lists))("%s: another workspace's cursor of the same query is a 400; the workspace's own goes on", async (route) => {
    const url = lists[route]!;
    const page = await call(service, 'GET', url(first), { token: first.token, query: { size: '1' } });
    expect(page.statusCode, page.body).toBe(200);
    const cursor = page.json<{ pageInfo: { endCursor: string } }>().pageInfo.endCursor;
    expect(cursor).not.toBe('');

    const own = await call(service, 'GET', url(first), { token: first.token, query: { size: '1', startCursor: cursor } });
    expect(own.statusCode, own.body).toBe(200);

    const elsewhere = await call(service, 'GET', url(second), { token: second.token, query: { size: '1', startCursor: cursor } });
    expect(elsewhere.statusCode, elsewhere.body).toBe(400);
    expect(elsewhere.json()).toEqual({ errors: [{ message: 'startCursor is not a valid cursor for this query', path: ['startCursor'] }] });
  });
});
