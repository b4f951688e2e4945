import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type Tenant, type TestService } from '../../../test/harness.js';
import { createPerson, getPerson } from '../../../test/people-factory.js';
import { describeSecurity } from '../../../test/security.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service.stop());

const deleteByEmail = (tenant: Tenant, body: unknown) => call(service, 'POST', '/person/delete', { token: tenant.token, body });
const getByEmail = (tenant: Tenant, email: string, token = tenant.token) => call(service, 'GET', '/person', { token, query: { email } });
const setOptedOut = (tenant: Tenant, body: unknown) => call(service, 'POST', '/person', { token: tenant.token, body });

describe('POST /person/delete (E2, deprecated)', () => {
  it('deletes the people with these emails and counts them', async () => {
    const tenant = await createTenant(service);
    const [a, b, kept] = [await createPerson(service, tenant), await createPerson(service, tenant), await createPerson(service, tenant)];
    const response = await deleteByEmail(tenant, { emails: [a!.email, b!.email.toUpperCase(), 'nobody@example.org'] });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toEqual({ personsDeletedCount: 2 });
    expect((await getPerson(service, tenant, a!.personId)).statusCode).toBe(404);
    expect((await getPerson(service, tenant, b!.personId)).statusCode).toBe(404);
    expect((await getPerson(service, tenant, kept!.personId)).statusCode).toBe(200);
    expect((await deleteByEmail(tenant, { emails: [a!.email] })).json()).toEqual({ personsDeletedCount: 0 });
  });

  it('answers an empty emails array with exactly the message body', async () => {
    const tenant = await createTenant(service);
    const response = await deleteByEmail(tenant, { emails: [] });
    expect(response.statusCode).toBe(400);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.json()).toEqual({ message: 'emails field cannot be empty' });
  });

  it.each([
    ['no emails', {}, ['emails']],
    ['a number as an email', { emails: [5] }, ['emails', '0']],
    ['an unknown field', { emails: ['a@example.org'], personIds: [] }, ['personIds']],
  ])('refuses %s with the validation body', async (_case, body, path) => {
    const tenant = await createTenant(service);
    const response = await deleteByEmail(tenant, body);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ errors: [{ message: expect.any(String), path }] });
  });
});

describe('GET /person (E15, deprecated)', () => {
  it('gives the email and opted-out flag, looked up case-insensitively', async () => {
    const tenant = await createTenant(service);
    const person = await createPerson(service, tenant);
    expect((await getByEmail(tenant, person.email.toUpperCase())).json()).toEqual({ email: person.email, optedOut: false });
    await call(service, 'PUT', `/people/${person.personId}/opted-out`, { token: tenant.token, body: { isOptedOut: true } });
    const response = await getByEmail(tenant, person.email);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ email: person.email, optedOut: true });
  });

  it('answers 404 for an unknown, deleted or other workspace person', async () => {
    const tenant = await createTenant(service);
    const other = await createTenant(service, 'Other');
    const theirs = await createPerson(service, other);
    const deleted = await createPerson(service, tenant);
    await deleteByEmail(tenant, { emails: [deleted.email] });
    for (const email of ['nobody@example.org', theirs.email, deleted.email]) {
      const response = await getByEmail(tenant, email);
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({ errors: [{ message: 'Person not found', path: ['email'] }] });
    }
  });

  it('refuses a missing or invalid email with 400', async () => {
    const tenant = await createTenant(service);
    const missing = await call(service, 'GET', '/person', { token: tenant.token });
    expect(missing.statusCode).toBe(400);
    expect(missing.json()).toEqual({ errors: [{ message: expect.any(String), path: ['email'] }] });
    expect((await getByEmail(tenant, 'not-an-email')).statusCode).toBe(400);
  });

  it('is refused (403) to a token without the personal-data right: whether an email is in the panel is personal data (existence-oracles.test.ts)', async () => {
    const tenant = await createTenant(service);
    const person = await createPerson(service, tenant);
    const { token } = await tenant.tokenFor('OBSERVER', { canReadPersonalData: false });
    const response = await getByEmail(tenant, person.email, token);
    expect(response.statusCode).toBe(403);
    expect(response.body).toBe('Forbidden');
  });
});

describe('POST /person (E23, deprecated)', () => {
  it('sets the opted-out flag and the contact status', async () => {
    const tenant = await createTenant(service);
    const person = await createPerson(service, tenant);
    const response = await setOptedOut(tenant, { email: person.email.toUpperCase(), optedOut: true });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toEqual({ email: person.email, optedOut: true });
    expect((await getPerson(service, tenant, person.personId)).json()).toMatchObject({ isOptedOut: true, contactStatus: 'OPTED_OUT' });
    expect((await setOptedOut(tenant, { email: person.email, optedOut: false })).json()).toEqual({ email: person.email, optedOut: false });
    expect((await getPerson(service, tenant, person.personId)).json()).toMatchObject({ isOptedOut: false, contactStatus: 'CONTACTABLE' });
  });

  it('answers 404 for an unknown email', async () => {
    const tenant = await createTenant(service);
    const response = await setOptedOut(tenant, { email: 'nobody@example.org', optedOut: true });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ errors: [{ message: 'Person not found', path: ['email'] }] });
  });

  it.each([
    ['no optedOut', { email: 'a@example.org' }, ['optedOut']],
    ['an invalid email', { email: 'nope', optedOut: true }, ['email']],
    ['an unknown field', { email: 'a@example.org', optedOut: true, isOptedOut: true }, ['isOptedOut']],
  ])('refuses %s with 400', async (_case, body, path) => {
    const tenant = await createTenant(service);
    const response = await setOptedOut(tenant, body);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ errors: [{ message: expect.any(String), path }] });
  });
});

describeSecurity('POST /person/delete', () => service, {
  method: 'POST',
  right: 'people:delete',
  addressesResource: false,
  request: async (tenant, svc) => ({ url: '/person/delete', body: { emails: [(await createPerson(svc, tenant)).email] } }),
});

describeSecurity('GET /person', () => service, {
  method: 'GET',
  right: 'people:read',
  addressesResource: true,
  request: async (tenant, svc) => ({ url: '/person', query: { email: (await createPerson(svc, tenant)).email } }),
});

describeSecurity('POST /person', () => service, {
  method: 'POST',
  right: 'people:write',
  addressesResource: true,
  request: async (tenant, svc) => ({ url: '/person', body: { email: (await createPerson(svc, tenant)).email, optedOut: true } }),
});
