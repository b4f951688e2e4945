import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type Tenant, type TestService, uniqueEmail } from '../../../test/harness.js';
import { createPerson, createProperties, getPerson } from '../../../test/people-factory.js';
import { csvOf, postCsv } from '../imports/test-support.js';

/**
 * Issue 32, item 2: a key without the personal-data right learns nothing from a guessed personal
 * value that it could not learn by reading. Each request below carries a guess; it is sent once
 * with a value someone holds and once with a value no one holds, and the two answers must be the
 * same (a 403 naming the missing right), changing nothing. A key with the right keeps the
 * reference's answers (200 / 404 / 409).
 */

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service.stop());

interface Guess {
  name: string;
  send(tenant: Tenant, token: string, value: string): Promise<LightMyRequestResponse>;
}

/** What an answer tells: everything but the per-request headers (ids, rate-limit counters). */
const answerOf = (response: LightMyRequestResponse) => ({
  status: response.statusCode,
  body: response.body,
  contentType: response.headers['content-type'],
  wwwAuthenticate: response.headers['www-authenticate'],
});

describe('existence oracles for a key without the personal-data right', () => {
  let tenant: Tenant;
  let blind: string;
  let held: { email: string; personId: string; code: string };
  let subject: { personId: string };
  let codeProperty: string;

  beforeAll(async () => {
    tenant = await createTenant(service);
    // SUPER_ADMIN: every right of the API but personal data, so each refusal below is about that right alone.
    blind = (await tenant.tokenFor('SUPER_ADMIN', { canReadPersonalData: false })).token;
    const { Passport } = await createProperties(service, tenant, [{ name: 'Passport', propertyType: 'STRING', isUnique: true, isPII: true }]);
    codeProperty = Passport!;
    const code = `P-${uniqueEmail('code')}`;
    const person = await createPerson(service, tenant, { properties: { [codeProperty]: code } });
    held = { email: person.email, personId: person.personId, code };
    subject = await createPerson(service, tenant);
  });

  const guesses: Guess[] = [
    { name: 'GET /people/{email}/opted-out (E18 by email)', send: (_t, token, email) => call(service, 'GET', `/people/${encodeURIComponent(email)}/opted-out`, { token }) },
    { name: 'GET /person?email= (E15)', send: (_t, token, email) => call(service, 'GET', '/person', { token, query: { email } }) },
    { name: 'PUT /people/{email}/opted-out', send: (_t, token, email) => call(service, 'PUT', `/people/${encodeURIComponent(email)}/opted-out`, { token, body: { isOptedOut: true } }) },
    { name: 'POST /person (E23)', send: (_t, token, email) => call(service, 'POST', '/person', { token, body: { email, optedOut: true } }) },
    { name: 'POST /people with a taken email', send: (_t, token, email) => call(service, 'POST', '/people', { token, body: { email, firstName: 'Guess' } }) },
    { name: 'PATCH /people/{id} to a taken email', send: (_t, token, email) => call(service, 'PATCH', `/people/${subject.personId}`, { token, body: { email } }) },
    { name: 'POST /people/delete by email', send: (_t, token, email) => call(service, 'POST', '/people/delete', { token, body: { emails: [email] } }) },
    { name: 'POST /person/delete (E2)', send: (_t, token, email) => call(service, 'POST', '/person/delete', { token, body: { emails: [email] } }) },
    { name: 'POST /imports upserting by email', send: (_t, token, email) => postCsv(service, token, csvOf([['email', 'firstName'], [email, 'Guess']])) },
  ];

  for (const guess of guesses) {
    it(`${guess.name}: the same 403 whether or not the email is someone's, and nothing changes`, async () => {
      const before = (await getPerson(service, tenant, held.personId)).json();
      const taken = await guess.send(tenant, blind, held.email);
      const free = await guess.send(tenant, blind, uniqueEmail('nobody'));
      expect(answerOf(taken), taken.body).toEqual(answerOf(free));
      expect(taken.statusCode).toBe(403);
      expect(taken.body).toBe('Forbidden');
      expect(taken.headers['www-authenticate']).toBe('Bearer error="insufficient_scope", scope="personal-data"');
      expect((await getPerson(service, tenant, held.personId)).json()).toEqual(before);
      expect((await getPerson(service, tenant, subject.personId)).statusCode).toBe(200);
    });
  }

  it('PATCH /people/{id} to a taken value of a unique isPII property: the same 403 whether or not someone holds it', async () => {
    const send = (value: string) => call(service, 'PATCH', `/people/${subject.personId}`, { token: blind, body: { properties: { [codeProperty]: value } } });
    const taken = await send(held.code);
    const free = await send(`P-${uniqueEmail('free')}`);
    expect(answerOf(taken), taken.body).toEqual(answerOf(free));
    expect(taken.statusCode).toBe(403);
    expect(taken.headers['www-authenticate']).toBe('Bearer error="insufficient_scope", scope="personal-data"');
    expect((await getPerson(service, tenant, subject.personId)).json<{ properties: object }>().properties).toEqual({});
  });

  it('keeps what a key without the right may do: reading by id (masked), and changing fields that are not unique personal values', async () => {
    const byId = await call(service, 'GET', `/people/${held.personId}/opted-out`, { token: blind });
    expect(byId.statusCode, byId.body).toBe(200);
    expect(byId.json()).toEqual({ personId: held.personId, email: '***@***', isOptedOut: false });
    const unknownId = await call(service, 'GET', '/people/per_unknown/opted-out', { token: blind });
    expect(unknownId.statusCode).toBe(404);
    const optOutById = await call(service, 'PUT', `/people/${subject.personId}/opted-out`, { token: blind, body: { isOptedOut: true } });
    expect(optOutById.statusCode, optOutById.body).toBe(200);
    const renamed = await call(service, 'PATCH', `/people/${subject.personId}`, { token: blind, body: { firstName: 'Blind' } });
    expect(renamed.statusCode, renamed.body).toBe(200);
    expect(renamed.json()).toMatchObject({ firstName: '***' });
    const deletedById = await call(service, 'POST', '/people/delete', { token: blind, body: { personIds: ['per_unknown'] } });
    expect(deletedById.json()).toEqual({ personsDeletedCount: 0 });
  });

  it('a key with the right keeps the answers the reference and the contract give: 200 or 404 by email, 409 for a taken value', async () => {
    const found = await call(service, 'GET', `/people/${encodeURIComponent(held.email)}/opted-out`, { token: tenant.token });
    expect(found.statusCode, found.body).toBe(200);
    expect((await call(service, 'GET', `/people/${encodeURIComponent(uniqueEmail('nobody'))}/opted-out`, { token: tenant.token })).statusCode).toBe(404);
    expect((await call(service, 'GET', '/person', { token: tenant.token, query: { email: held.email } })).statusCode).toBe(200);
    expect((await call(service, 'GET', '/person', { token: tenant.token, query: { email: uniqueEmail('nobody') } })).statusCode).toBe(404);
    const duplicate = await call(service, 'POST', '/people', { token: tenant.token, body: { email: held.email } });
    expect(duplicate.statusCode).toBe(409);
    const taken = await call(service, 'PATCH', `/people/${subject.personId}`, { token: tenant.token, body: { properties: { [codeProperty]: held.code } } });
    expect(taken.statusCode).toBe(409);
  });
});
