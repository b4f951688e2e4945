import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type Tenant, type TestService } from '../../../test/harness.js';
import { createPopulation } from '../../../test/people-factory.js';
import { describeSecurity } from '../../../test/security.js';
import { newSignupFormId, workspaceOfSignupForm } from './service.js';
import { createForm, type SignupFormResponse } from './test-support.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service.stop());

interface FormPage {
  results: SignupFormResponse[];
  total: number;
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string; endCursor: string };
}

async function list(tenant: Tenant, query: Record<string, string> = {}) {
  const response = await call(service, 'GET', '/signups', { token: tenant.token, query });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<FormPage>();
}

describe('POST /signups', () => {
  it('makes a form whose id carries the workspace id, read back the same', async () => {
    const tenant = await createTenant(service);
    const populationId = await createPopulation(service, tenant);
    const before = Date.now();
    const response = await call(service, 'POST', '/signups', { token: tenant.token, body: { name: 'Join our research panel', populationId } });
    expect(response.statusCode, response.body).toBe(201);
    const form = response.json<SignupFormResponse>();
    expect(form).toEqual({ signupFormId: expect.any(String), name: 'Join our research panel', populationId, consentFormId: null, createdAt: expect.any(String) });
    expect(form.signupFormId).toMatch(new RegExp(`^sgf_${tenant.workspaceId}_[0-9A-Z]{26}$`));
    expect(Date.parse(form.createdAt)).toBeGreaterThanOrEqual(before - 1000);
    const read = await call(service, 'GET', `/signups/${form.signupFormId}`, { token: tenant.token });
    expect(read.statusCode).toBe(200);
    expect(read.json()).toEqual(form);
  });

  it('gives every form fresh random bits: a form id made right after another does not follow from it', async () => {
    const workspaceId = 'wsp_01JD00000000000000000000AB';
    const crockford = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
    const randomPart = (id: string) => [...id.slice(-16)].reduce((value, character) => value * 32n + BigInt(crockford.indexOf(character)), 0n);
    let sameMillisecond = 0;
    let previous = newSignupFormId(workspaceId);
    // Ids made in a tight loop: many share a millisecond, where newId would only add one.
    for (let count = 0; count < 2000; count++) {
      const next = newSignupFormId(workspaceId);
      expect(workspaceOfSignupForm(next)).toBe(workspaceId);
      if (next.slice(-26, -16) === previous.slice(-26, -16)) {
        sameMillisecond++;
        const step = randomPart(next) - randomPart(previous);
        expect(step > -1000n && step < 1000n, `${previous} then ${next}`).toBe(false);
      }
      previous = next;
    }
    expect(sameMillisecond).toBeGreaterThan(0);
  });

  it("answers 404 naming populationId for an unknown population, or another workspace's", async () => {
    const tenant = await createTenant(service);
    const other = await createTenant(service, 'Other workspace');
    const theirs = await createPopulation(service, other);
    for (const populationId of ['pop_nope', theirs]) {
      const response = await call(service, 'POST', '/signups', { token: tenant.token, body: { name: 'Form', populationId } });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({ errors: [{ message: 'Population not found', path: ['populationId'] }] });
    }
    expect((await list(tenant)).total).toBe(0);
  });

  it.each([
    ['a missing name', { populationId: 'pop_x' }, ['name']],
    ['an empty name', { name: '', populationId: 'pop_x' }, ['name']],
    ['a missing populationId', { name: 'Form' }, ['populationId']],
    ['an unknown field', { name: 'Form', populationId: 'pop_x', isActive: true }, ['isActive']],
  ])('refuses %s with 400', async (_case, body, path) => {
    const tenant = await createTenant(service);
    const response = await call(service, 'POST', '/signups', { token: tenant.token, body });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ errors: [{ message: expect.any(String), path }] });
  });
});

describe('GET /signups/{signupFormId}', () => {
  it("answers 404 for an unknown form, a malformed id, and another workspace's form", async () => {
    const tenant = await createTenant(service);
    const other = await createTenant(service, 'Other workspace');
    const theirs = await createForm(service, other);
    const forgedInMine = theirs.signupFormId.replace(other.workspaceId, tenant.workspaceId);
    for (const signupFormId of ['sgf_nope', theirs.signupFormId, forgedInMine]) {
      const response = await call(service, 'GET', `/signups/${signupFormId}`, { token: tenant.token });
      expect(response.statusCode, signupFormId).toBe(404);
      expect(response.json()).toEqual({ errors: [{ message: 'Signup form not found', path: ['signupFormId'] }] });
    }
  });
});

describe('GET /signups', () => {
  it('lists the forms in the order they were made, with the exact total, never another workspace\'s', async () => {
    const tenant = await createTenant(service);
    const other = await createTenant(service, 'Other workspace');
    await createForm(service, other);
    const populationId = await createPopulation(service, tenant);
    const forms = [await createForm(service, tenant, { name: 'A', populationId }), await createForm(service, tenant, { name: 'B', populationId })];
    expect(await list(tenant)).toEqual({ results: forms, total: 2, pageInfo: expect.objectContaining({ hasNextPage: false, hasPreviousPage: false }) });
  });

  it('pages 5 forms 2 at a time, each exactly once, also while a form is made between pages', async () => {
    const tenant = await createTenant(service);
    const populationId = await createPopulation(service, tenant);
    const made: string[] = [];
    for (let index = 0; index < 5; index++) made.push((await createForm(service, tenant, { name: `Form ${index}`, populationId })).signupFormId);
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const body = await list(tenant, cursor === undefined ? { size: '2' } : { size: '2', startCursor: cursor });
      pages++;
      seen.push(...body.results.map((form) => form.signupFormId));
      cursor = body.pageInfo.hasNextPage ? body.pageInfo.endCursor : undefined;
      if (pages === 1) made.push((await createForm(service, tenant, { name: 'Added', populationId })).signupFormId);
    } while (cursor !== undefined && pages < 10);
    expect(seen).toEqual(made);
    expect(pages).toBe(3);
  });

  it('gives an empty page for a workspace without forms', async () => {
    const tenant = await createTenant(service);
    expect(await list(tenant)).toEqual({ results: [], total: 0, pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: '', endCursor: '' } });
  });

  it.each([
    ['size=0', { size: '0' }, ['size']],
    ['size=101', { size: '101' }, ['size']],
    ['a bad cursor', { startCursor: 'nope' }, ['startCursor']],
    ['an unknown parameter', { populationId: 'x' }, ['populationId']],
  ])('refuses %s with 400', async (_case, query, path) => {
    const tenant = await createTenant(service);
    const response = await call(service, 'GET', '/signups', { token: tenant.token, query });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ errors: [{ message: expect.any(String), path }] });
  });

  it("refuses another list's cursor", async () => {
    const tenant = await createTenant(service);
    await createPopulation(service, tenant, 'One');
    await createPopulation(service, tenant, 'Two');
    const populations = await call(service, 'GET', '/populations', { token: tenant.token, query: { size: '1' } });
    const cursor = populations.json<FormPage>().pageInfo.endCursor;
    const response = await call(service, 'GET', '/signups', { token: tenant.token, query: { startCursor: cursor } });
    expect(response.statusCode).toBe(400);
    expect(response.json().errors[0].path).toEqual(['startCursor']);
  });
});

describeSecurity('POST /signups', () => service, {
  method: 'POST',
  right: 'signups:write',
  addressesResource: false,
  request: async (tenant) => ({ url: '/signups', body: { name: 'Form', populationId: await createPopulation(service, tenant) } }),
});

describeSecurity('GET /signups', () => service, {
  method: 'GET',
  right: 'signups:read',
  addressesResource: false,
  request: async () => ({ url: '/signups' }),
});

describeSecurity('GET /signups/{signupFormId}', () => service, {
  method: 'GET',
  right: 'signups:read',
  addressesResource: true,
  request: async (tenant) => ({ url: `/signups/${(await createForm(service, tenant)).signupFormId}` }),
});
