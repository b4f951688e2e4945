import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type Tenant, type TestService } from '../../../test/harness.js';
import { createPerson, getPerson } from '../../../test/people-factory.js';
import { describeSecurity } from '../../../test/security.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service.stop());

const put = (tenant: Tenant, personId: string, body: unknown) => call(service, 'PUT', `/people/${personId}/opted-out`, { token: tenant.token, body });
const read = (tenant: Tenant, personIdOrEmail: string, token = tenant.token) => call(service, 'GET', `/people/${encodeURIComponent(personIdOrEmail)}/opted-out`, { token });

describe('PUT /people/{personIdOrEmail}/opted-out', () => {
  it('opts out (contact status OPTED_OUT) and back in (CONTACTABLE)', async () => {
    const tenant = await createTenant(service);
    const person = await createPerson(service, tenant);
    const out = await put(tenant, person.personId, { isOptedOut: true });
    expect(out.statusCode, out.body).toBe(200);
    expect(out.json()).toEqual({ personId: person.personId, email: person.email, isOptedOut: true });
    expect((await getPerson(service, tenant, person.personId)).json()).toMatchObject({ isOptedOut: true, contactStatus: 'OPTED_OUT' });
    const contactStatusChangedAt = async () =>
      (await service.deps.db.selectFrom('people').where('person_id', '=', person.personId).select('contact_status_updated_at').executeTakeFirstOrThrow()).contact_status_updated_at;
    const changedAt = await contactStatusChangedAt();
    expect(changedAt).not.toBeNull();
    // The same status again changes nothing.
    expect((await put(tenant, person.personId, { isOptedOut: true })).json().isOptedOut).toBe(true);
    expect(await contactStatusChangedAt()).toBe(changedAt);
    // Addressed by email, as E18 is.
    expect((await put(tenant, person.email.toUpperCase(), { isOptedOut: false })).json()).toEqual({ personId: person.personId, email: person.email, isOptedOut: false });
    expect((await getPerson(service, tenant, person.personId)).json()).toMatchObject({ isOptedOut: false, contactStatus: 'CONTACTABLE' });
  });

  it('answers 404 for an unknown or deleted person', async () => {
    const tenant = await createTenant(service);
    const person = await createPerson(service, tenant);
    await call(service, 'DELETE', `/people/${person.personId}`, { token: tenant.token });
    for (const personId of ['per_unknown', person.personId]) {
      const response = await put(tenant, personId, { isOptedOut: true });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({ errors: [{ message: 'Person not found', path: ['personIdOrEmail'] }] });
    }
  });

  it.each([
    ['no body field', {}, ['isOptedOut']],
    ['a string flag', { isOptedOut: 'true' }, ['isOptedOut']],
    ['an unknown field', { isOptedOut: true, optedOut: true }, ['optedOut']],
  ])('refuses %s with 400', async (_case, body, path) => {
    const tenant = await createTenant(service);
    const person = await createPerson(service, tenant);
    const response = await put(tenant, person.personId, body);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ errors: [{ message: expect.any(String), path }] });
  });
});

describe('GET /people/{personIdOrEmail}/opted-out (E18)', () => {
  it('reads the status by id and by email (case-insensitive)', async () => {
    const tenant = await createTenant(service);
    const person = await createPerson(service, tenant);
    await put(tenant, person.personId, { isOptedOut: true });
    const expected = { personId: person.personId, email: person.email, isOptedOut: true };
    expect((await read(tenant, person.personId)).json()).toEqual(expected);
    const byEmail = await read(tenant, person.email.toUpperCase());
    expect(byEmail.statusCode).toBe(200);
    expect(byEmail.json()).toEqual(expected);
  });

  it('answers 404 for an unknown id or email, a deleted person, or another workspace', async () => {
    const tenant = await createTenant(service);
    const other = await createTenant(service, 'Other');
    const theirs = await createPerson(service, other);
    const deleted = await createPerson(service, tenant);
    await call(service, 'DELETE', `/people/${deleted.personId}`, { token: tenant.token });
    for (const value of ['per_unknown', 'nobody@example.org', theirs.email, theirs.personId, deleted.email, deleted.personId]) {
      const response = await read(tenant, value);
      expect(response.statusCode, value).toBe(404);
      expect(response.json()).toEqual({ errors: [{ message: 'Person not found', path: ['personIdOrEmail'] }] });
    }
  });

  it('masks the email for a token without the personal-data right', async () => {
    const tenant = await createTenant(service);
    const person = await createPerson(service, tenant);
    const { token } = await tenant.tokenFor('OBSERVER', { canReadPersonalData: false });
    expect((await read(tenant, person.personId, token)).json()).toEqual({ personId: person.personId, email: '***@***', isOptedOut: false });
  });
});

describeSecurity('PUT /people/{personIdOrEmail}/opted-out', () => service, {
  method: 'PUT',
  right: 'people:write',
  addressesResource: true,
  request: async (tenant, svc) => ({ url: `/people/${(await createPerson(svc, tenant)).personId}/opted-out`, body: { isOptedOut: true } }),
});

describeSecurity('GET /people/{personIdOrEmail}/opted-out', () => service, {
  method: 'GET',
  right: 'people:read',
  addressesResource: true,
  request: async (tenant, svc) => ({ url: `/people/${(await createPerson(svc, tenant)).email}/opted-out` }),
});
