import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type TestService, uniqueEmail } from '../../../test/harness.js';
import { createPerson, createPopulation, createProperties, createPropertyOfEveryType, getPerson } from '../../../test/people-factory.js';
import { describeSecurity } from '../../../test/security.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service.stop());

describe('POST /people', () => {
  it('creates a person with every field, read back the same', async () => {
    const tenant = await createTenant(service);
    const populationId = await createPopulation(service, tenant);
    const email = uniqueEmail('grace');
    const response = await call(service, 'POST', '/people', {
      token: tenant.token,
      body: {
        email,
        firstName: 'Grace',
        lastName: 'Hopper',
        phone: '+44 20 7946 0000',
        additionalEmails: ['g@example.org'],
        additionalPhones: ['+1 555 0100'],
        populationIds: [populationId, populationId],
      },
    });
    expect(response.statusCode, response.body).toBe(201);
    const person = response.json();
    expect(person).toEqual({
      personId: expect.stringMatching(/^per_/),
      email,
      firstName: 'Grace',
      lastName: 'Hopper',
      name: 'Grace Hopper',
      phone: '+44 20 7946 0000',
      additionalEmails: ['g@example.org'],
      additionalPhones: ['+1 555 0100'],
      isOptedOut: false,
      contactStatus: 'CONTACTABLE',
      populationIds: [populationId],
      properties: {},
      createdAt: expect.any(String),
      updatedAt: person.createdAt,
    });
    const read = await getPerson(service, tenant, person.personId);
    expect(read.json()).toEqual(person);
  });

  it('takes a value of every property type, in the shapes of the contract', async () => {
    const tenant = await createTenant(service);
    const ids = await createPropertyOfEveryType(service, tenant);
    const properties = {
      [ids.STRING]: 'Amazing Grace',
      [ids.NUMBER]: 85.5,
      [ids.DATETIME]: '2026-01-02T03:04:05+01:00',
      [ids.BOOLEAN]: false,
      [ids.SINGLE_SELECT]: 'Green',
      [ids.MULTI_SELECT]: ['Blue', 'Red', 'Blue'],
      [ids.LOCATION]: { country: 'GB', city: 'London', address: '1 Main St', region: 'Greater London', postalCode: 'N1 1AA', lat: 51.5, lng: -0.12 },
    };
    const person = await createPerson(service, tenant, { properties });
    expect(person.properties).toEqual({
      ...properties,
      [ids.DATETIME]: '2026-01-02T02:04:05.000Z',
      [ids.MULTI_SELECT]: ['Blue', 'Red'],
    });
    expect((await getPerson(service, tenant, person.personId)).json().properties).toEqual(person.properties);
  });

  it('compares emails case-insensitively: a duplicate is 409', async () => {
    const tenant = await createTenant(service);
    const email = uniqueEmail('dup');
    await createPerson(service, tenant, { email });
    const response = await call(service, 'POST', '/people', { token: tenant.token, body: { email: email.toUpperCase() } });
    expect(response.statusCode).toBe(409);
    expect(response.json()).toEqual({ errors: [{ message: expect.any(String), path: ['email'] }] });
  });

  it('lets exactly one of concurrent creates with the same email, or the same unique value, win', async () => {
    const tenant = await createTenant(service);
    const { Code } = await createProperties(service, tenant, [{ name: 'Code', propertyType: 'STRING', isUnique: true }]);
    const email = uniqueEmail('race');
    const sameEmail = await Promise.all(Array.from({ length: 5 }, () => call(service, 'POST', '/people', { token: tenant.token, body: { email } })));
    expect(sameEmail.map((response) => response.statusCode).sort()).toEqual([201, 409, 409, 409, 409]);
    const sameValue = await Promise.all(
      Array.from({ length: 5 }, () => call(service, 'POST', '/people', { token: tenant.token, body: { email: uniqueEmail('race'), properties: { [Code!]: 'R' } } })),
    );
    expect(sameValue.map((response) => response.statusCode).sort()).toEqual([201, 409, 409, 409, 409]);
    for (const response of [...sameEmail, ...sameValue].filter((candidate) => candidate.statusCode === 409)) {
      expect(response.json().errors[0].path[0]).toMatch(/^(email|properties)$/);
    }
  });

  it('allows the same email in another workspace', async () => {
    const tenant = await createTenant(service);
    const other = await createTenant(service, 'Other');
    const email = uniqueEmail('shared');
    await createPerson(service, tenant, { email });
    await createPerson(service, other, { email });
  });

  it('enforces unique properties: a value another person holds is 409, and nothing is created', async () => {
    const tenant = await createTenant(service);
    const { Code } = await createProperties(service, tenant, [{ name: 'Code', propertyType: 'STRING', isUnique: true }]);
    await createPerson(service, tenant, { properties: { [Code!]: 'A-1' } });
    const email = uniqueEmail('second');
    const response = await call(service, 'POST', '/people', { token: tenant.token, body: { email, properties: { [Code!]: 'A-1' } } });
    expect(response.statusCode).toBe(409);
    expect(response.json()).toEqual({ errors: [{ message: expect.any(String), path: ['properties', Code] }] });
    expect((await call(service, 'GET', `/people/${email}/opted-out`, { token: tenant.token })).statusCode).toBe(404);
    // Another value is free; case matters for STRING values.
    await createPerson(service, tenant, { properties: { [Code!]: 'a-1' } });
  });

  it('answers 404 naming the index of a population that does not exist', async () => {
    const tenant = await createTenant(service);
    const other = await createTenant(service, 'Other');
    const mine = await createPopulation(service, tenant);
    const theirs = await createPopulation(service, other);
    const response = await call(service, 'POST', '/people', { token: tenant.token, body: { email: uniqueEmail(), populationIds: [mine, theirs] } });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ errors: [{ message: 'Population not found', path: ['populationIds', '1'] }] });
  });

  it('answers 404 naming an unknown property id', async () => {
    const tenant = await createTenant(service);
    const response = await call(service, 'POST', '/people', { token: tenant.token, body: { email: uniqueEmail(), properties: { prp_nope: 'x' } } });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ errors: [{ message: 'Property not found', path: ['properties', 'prp_nope'] }] });
  });

  it('refuses a value of the wrong shape for each type with 400 naming the property', async () => {
    const tenant = await createTenant(service);
    const ids = await createPropertyOfEveryType(service, tenant);
    const wrong: [string, unknown][] = [
      [ids.STRING, 5],
      [ids.NUMBER, '5'],
      [ids.DATETIME, '2026-01-02'],
      [ids.DATETIME, 'yesterday'],
      [ids.BOOLEAN, 'true'],
      [ids.SINGLE_SELECT, 'Purple'],
      [ids.SINGLE_SELECT, ['Red']],
      [ids.MULTI_SELECT, 'Red'],
      [ids.MULTI_SELECT, ['Red', 'Purple']],
      [ids.LOCATION, { city: 'London' }],
      [ids.LOCATION, { country: 'gb' }],
      [ids.LOCATION, { country: 'GBR' }],
      [ids.LOCATION, { country: 'GB', lat: 91, lng: 0 }],
      [ids.LOCATION, { country: 'GB', lat: 10 }],
      [ids.LOCATION, { country: 'GB', planet: 'Earth' }],
      [ids.LOCATION, 'GB'],
    ];
    for (const [propertyId, value] of wrong) {
      const response = await call(service, 'POST', '/people', { token: tenant.token, body: { email: uniqueEmail(), properties: { [propertyId]: value } } });
      expect(response.statusCode, JSON.stringify(value)).toBe(400);
      expect(response.json()).toEqual({ errors: [{ message: expect.any(String), path: ['properties', propertyId] }] });
    }
  });

  it.each([
    ['no email', {}, ['email']],
    ['an invalid email', { email: 'not-an-email' }, ['email']],
    ['an empty first name', { email: 'a@example.org', firstName: '' }, ['firstName']],
    ['an invalid additional email', { email: 'a@example.org', additionalEmails: ['x'] }, ['additionalEmails', '0']],
    ['a NUL in the last name', { email: 'a@example.org', lastName: 'a\u0000b' }, ['lastName']],
    // Property ids are jsonb keys: PostgreSQL would refuse these as a 500.
    ['a NUL in a property id', { email: 'a@example.org', properties: { 'prp_\u0000': 'x' } }, ['properties']],
    ['an unpaired surrogate in a property id', { email: 'a@example.org', properties: { '\udc00': 'x' } }, ['properties']],
    ['a property id over 100 characters', { email: 'a@example.org', properties: { ['p'.repeat(101)]: 'x' } }, ['properties', 'p'.repeat(101)]],
    ['an unknown field', { email: 'a@example.org', isOptedOut: true }, ['isOptedOut']],
  ])('refuses %s with 400', async (_case, body, path) => {
    const tenant = await createTenant(service);
    const response = await call(service, 'POST', '/people', { token: tenant.token, body });
    expect(response.statusCode, response.body).toBe(400);
    expect(response.json()).toEqual({ errors: [{ message: expect.any(String), path }] });
  });

  it('is refused to a token without the personal-data right (a 409 for a taken email would say who is in the panel); the person made by a token with it reads masked, also PII/PHI properties', async () => {
    const tenant = await createTenant(service);
    const { Secret, Health, Plain } = await createProperties(service, tenant, [
      { name: 'Secret', propertyType: 'STRING', isPII: true },
      { name: 'Health', propertyType: 'NUMBER', isPHI: true },
      { name: 'Plain', propertyType: 'STRING' },
    ]);
    const { token } = await tenant.tokenFor('SUPER_ADMIN', { canReadPersonalData: false });
    const body = { email: uniqueEmail(), firstName: 'Grace', lastName: 'Hopper', phone: '123', additionalEmails: ['g@example.org'], additionalPhones: ['456'], properties: { [Secret!]: 's', [Health!]: 7, [Plain!]: 'p' } };
    const refused = await call(service, 'POST', '/people', { token, body });
    expect(refused.statusCode, refused.body).toBe(403);
    expect(refused.headers['www-authenticate']).toBe('Bearer error="insufficient_scope", scope="personal-data"');
    const response = await call(service, 'POST', '/people', { token: tenant.token, body });
    expect(response.statusCode, response.body).toBe(201);
    const masked = await getPerson(service, tenant, response.json().personId, token);
    expect(masked.json()).toMatchObject({
      email: '***@***',
      firstName: '***',
      lastName: '***',
      name: '***',
      phone: '***',
      additionalEmails: ['***@***'],
      additionalPhones: ['***'],
      properties: { [Secret!]: '***', [Health!]: '***', [Plain!]: 'p' },
    });
    // The clear values are stored: a token with the right reads them.
    const clear = (await getPerson(service, tenant, response.json().personId)).json();
    expect(clear).toMatchObject({ firstName: 'Grace', properties: { [Secret!]: 's', [Health!]: 7 } });
  });
});

describeSecurity('POST /people', () => service, {
  method: 'POST',
  right: 'people:write',
  addressesResource: false,
  request: async () => ({ url: '/people', body: { email: uniqueEmail() } }),
});
