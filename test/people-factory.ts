import { expect } from 'vitest';
import { call, type Tenant, type TestService, uniqueEmail } from './harness.js';

/** A Person as the API answers it. */
export interface PersonResponse {
  personId: string;
  email: string;
  firstName: string | null;
  lastName: string | null;
  name: string | null;
  phone: string | null;
  additionalEmails: string[];
  additionalPhones: string[];
  isOptedOut: boolean;
  contactStatus: string;
  populationIds: string[];
  properties: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
}

/** Person properties made through E4; returns their ids by the names given. */
export async function createProperties(service: TestService, tenant: Tenant, items: object[]): Promise<Record<string, string>> {
  const response = await call(service, 'POST', '/properties/import', { token: tenant.token, body: items });
  expect(response.statusCode, response.body).toBe(200);
  const body = response.json<{ results: { personProperty: { propertyId: string; name: string } }[]; errors: unknown[] }>();
  expect(body.errors).toEqual([]);
  return Object.fromEntries(body.results.map((result) => [result.personProperty.name, result.personProperty.propertyId]));
}

/** One property of every type (select ones with options Red/Green/Blue); returns their ids by type. */
export async function createPropertyOfEveryType(service: TestService, tenant: Tenant) {
  const options = [{ name: 'Red' }, { name: 'Green' }, { name: 'Blue' }];
  const ids = await createProperties(service, tenant, [
    { name: 'Nickname', propertyType: 'STRING' },
    { name: 'Age', propertyType: 'NUMBER' },
    { name: 'Joined', propertyType: 'DATETIME' },
    { name: 'Subscriber', propertyType: 'BOOLEAN' },
    { name: 'Colour', propertyType: 'SINGLE_SELECT', propertyOptions: options },
    { name: 'Colours', propertyType: 'MULTI_SELECT', propertyOptions: options },
    { name: 'Home', propertyType: 'LOCATION' },
  ]);
  return {
    STRING: ids.Nickname!,
    NUMBER: ids.Age!,
    DATETIME: ids.Joined!,
    BOOLEAN: ids.Subscriber!,
    SINGLE_SELECT: ids.Colour!,
    MULTI_SELECT: ids.Colours!,
    LOCATION: ids.Home!,
  };
}

export async function createPopulation(service: TestService, tenant: Tenant, name = 'Panel'): Promise<string> {
  const response = await call(service, 'POST', '/populations', { token: tenant.token, body: { name } });
  expect(response.statusCode, response.body).toBe(201);
  return response.json<{ populationId: string }>().populationId;
}

/** A person made through POST /people (a fresh email unless one is given). */
export async function createPerson(service: TestService, tenant: Tenant, body: object = {}): Promise<PersonResponse> {
  const response = await call(service, 'POST', '/people', { token: tenant.token, body: { email: uniqueEmail('person'), ...body } });
  expect(response.statusCode, response.body).toBe(201);
  return response.json<PersonResponse>();
}

export async function getPerson(service: TestService, tenant: Tenant, personId: string, token = tenant.token) {
  return call(service, 'GET', `/people/${personId}`, { token });
}
