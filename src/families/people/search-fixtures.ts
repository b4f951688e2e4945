import { expect } from 'vitest';
import type { PropertyValue } from '../../db/schema.js';
import { idPrefixes, newId } from '../../ids.js';
import { call, type Tenant, type TestService } from '../../../test/harness.js';

/** Test data for the people-search tests: one custom property of each type, and people inserted set-based. */
export interface Panel {
  occupation: string;
  age: string;
  lastSeen: string;
  hasCar: string;
  tier: string;
  tierGold: string;
  devices: string;
  devicesAndroid: string;
  home: string;
  diagnosis: string;
  populationA: string;
  populationB: string;
}

export async function createPanel(service: TestService, tenant: Tenant): Promise<Panel> {
  const response = await call(service, 'POST', '/properties/import', {
    token: tenant.token,
    body: [
      { name: 'Occupation', propertyType: 'STRING' },
      { name: 'Age', propertyType: 'NUMBER' },
      { name: 'Last seen', propertyType: 'DATETIME' },
      { name: 'Has car', propertyType: 'BOOLEAN' },
      { name: 'Tier', propertyType: 'SINGLE_SELECT', propertyOptions: [{ name: 'Gold', color: 'YELLOW' }, { name: 'Silver', color: 'GREY' }] },
      {
        name: 'Devices',
        propertyType: 'MULTI_SELECT',
        propertyOptions: [{ name: 'iOS', color: 'BLUE' }, { name: 'Android', color: 'GREEN' }, { name: 'Web', color: 'RED' }],
      },
      { name: 'Home', propertyType: 'LOCATION' },
      { name: 'Diagnosis', propertyType: 'STRING', isPHI: true },
    ],
  });
  expect(response.statusCode, response.body).toBe(200);
  const created = response.json<{ results: { personProperty: { propertyId: string; propertyOptions: { propertyOptionId: string; name: string }[] } }[] }>().results;
  const ids = created.map((item) => item.personProperty.propertyId);
  const population = async (name: string) => {
    const made = await call(service, 'POST', '/populations', { token: tenant.token, body: { name } });
    expect(made.statusCode, made.body).toBe(201);
    return made.json<{ populationId: string }>().populationId;
  };
  return {
    occupation: ids[0]!,
    age: ids[1]!,
    lastSeen: ids[2]!,
    hasCar: ids[3]!,
    tier: ids[4]!,
    tierGold: created[4]!.personProperty.propertyOptions.find((option) => option.name === 'Gold')!.propertyOptionId,
    devices: ids[5]!,
    devicesAndroid: created[5]!.personProperty.propertyOptions.find((option) => option.name === 'Android')!.propertyOptionId,
    home: ids[6]!,
    diagnosis: ids[7]!,
    populationA: await population('A'),
    populationB: await population('B'),
  };
}

export interface PersonSeed {
  email: string;
  firstName?: string | null;
  lastName?: string | null;
  phone?: string | null;
  isOptedOut?: boolean;
  contactStatus?: 'CONTACTABLE' | 'OPTED_OUT' | 'UNREACHABLE';
  contactStatusUpdatedAt?: string | null;
  importSource?: string | null;
  importedAt?: string | null;
  lastImportId?: string | null;
  updatedAt?: string;
  deletedAt?: string | null;
  properties?: Record<string, PropertyValue | null>;
  populationIds?: string[];
}

/** People straight into the tables, in one statement each: the search reads what is stored, however it got there. */
export async function insertPeople(service: TestService, workspaceId: string, seeds: PersonSeed[]): Promise<string[]> {
  const ids = seeds.map(() => newId(idPrefixes.person));
  const now = new Date().toISOString();
  await service.deps.db
    .insertInto('people')
    .values(
      seeds.map((seed, index) => ({
        workspace_id: workspaceId,
        person_id: ids[index]!,
        email: seed.email,
        first_name: seed.firstName ?? null,
        last_name: seed.lastName ?? null,
        phone: seed.phone ?? null,
        is_opted_out: seed.isOptedOut ?? false,
        contact_status: seed.contactStatus ?? 'CONTACTABLE',
        contact_status_updated_at: seed.contactStatusUpdatedAt ?? null,
        import_source: seed.importSource ?? null,
        imported_at: seed.importedAt ?? null,
        last_import_id: seed.lastImportId ?? null,
        properties: JSON.stringify(seed.properties ?? {}),
        created_at: now,
        updated_at: seed.updatedAt ?? now,
        deleted_at: seed.deletedAt ?? null,
      })),
    )
    .execute();
  const members = seeds.flatMap((seed, index) =>
    (seed.populationIds ?? []).map((populationId) => ({ workspace_id: workspaceId, population_id: populationId, person_id: ids[index]!, added_at: now })),
  );
  if (members.length > 0) await service.deps.db.insertInto('population_members').values(members).execute();
  return ids;
}

export interface SearchResult {
  results: { personId: string; email: string; firstName: string | null; properties: Record<string, unknown> }[];
  total: number;
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string; endCursor: string };
}

export function search(service: TestService, token: string, body: unknown) {
  return call(service, 'POST', '/people/search', { token, body });
}

/** The ids a search finds (every page of 1000 at most), checking the search succeeds. */
export async function searchIds(service: TestService, token: string, filter: unknown): Promise<string[]> {
  const response = await search(service, token, { filter, pageInfo: { size: 1000 } });
  expect(response.statusCode, response.body).toBe(200);
  const body = response.json<SearchResult>();
  expect(body.total).toBe(body.results.length);
  return body.results.map((person) => person.personId);
}
