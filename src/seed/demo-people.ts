import type { Insertable, Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import type { DB, PeopleTable, PersonUniqueValuesTable, PopulationMembersTable, PropertyValue } from '../db/schema.js';
import { inTransaction } from '../db/transaction.js';
import { checkPropertyValue, loadPropertyCatalogue, uniqueValueKey } from '../families/people/values.js';
import { idPrefixes, newId } from '../ids.js';

const firstNames = ['Ada', 'Grace', 'Alan', 'Katherine', 'Linus', 'Margaret', 'Tim', 'Barbara', 'Dennis', 'Frances', 'Ken', 'Radia', 'Edsger', 'Hedy', 'John', 'Karen', 'Niklaus', 'Shafi', 'Sophie', 'Yukihiro'];
const lastNames = ['Lovelace', 'Hopper', 'Turing', 'Johnson', 'Torvalds', 'Hamilton', 'Berners-Lee', 'Liskov', 'Ritchie', 'Allen', 'Thompson', 'Perlman', 'Dijkstra', 'Lamarr', 'Backus', 'Jones', 'Wirth', 'Goldwasser', 'Wilson', 'Matsumoto'];
const jobTitles = ['Store manager', 'Nurse', 'Teacher', 'Software engineer', 'Accountant', 'Student', 'Designer', 'Retired', 'Electrician', 'Chef'];
const places = [
  { city: 'London', region: 'England', country: 'GB', lat: 51.507, lng: -0.128 },
  { city: 'Manchester', region: 'England', country: 'GB', lat: 53.48, lng: -2.242 },
  { city: 'Berlin', region: 'Berlin', country: 'DE', lat: 52.52, lng: 13.405 },
  { city: 'Paris', region: 'Île-de-France', country: 'FR', lat: 48.857, lng: 2.352 },
  { city: 'New York', region: 'NY', country: 'US', lat: 40.713, lng: -74.006 },
  { city: 'Austin', region: 'TX', country: 'US', lat: 30.267, lng: -97.743 },
  { city: 'Toronto', region: 'ON', country: 'CA', lat: 43.653, lng: -79.383 },
  { city: 'Sydney', region: 'NSW', country: 'AU', lat: -33.869, lng: 151.209 },
];

/** A small seeded generator (mulberry32): the same demo data on every run. */
export function seededRandom(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  const chance = (probability: number) => next() < probability;
  return { next, pick, chance };
}

const BATCH_SIZE = 500;

/**
 * `count` demo people with values for the workspace's properties (every type), in its
 * populations: the first population holds most people, the second a fifth of them, and only
 * its members carry the values of the properties of its group. Inserted set-based, in batches
 * of multi-row inserts inside one transaction (a request per person would take minutes).
 * Returns the number made and the contactable ones (neither opted out nor unreachable), in order.
 */
export async function seedDemoPeople(db: Kysely<DB>, clock: Clock, workspaceId: string, populationIds: readonly string[], betaPropertyIds: ReadonlySet<string>, count = 3000) {
  const random = seededRandom(20261123);
  const catalogue = await loadPropertyCatalogue(db, workspaceId);
  const at = clock.now();
  const people: Insertable<PeopleTable>[] = [];
  const claims: Insertable<PersonUniqueValuesTable>[] = [];
  const members: Insertable<PopulationMembersTable>[] = [];
  const contactable: { personId: string; email: string }[] = [];

  for (let index = 0; index < count; index++) {
    const personId = newId(idPrefixes.person);
    const firstName = random.pick(firstNames);
    const lastName = random.pick(lastNames);
    const inMain = random.chance(0.8);
    const inBeta = populationIds.length > 1 && random.chance(0.2);
    const properties: Record<string, PropertyValue> = {};
    for (const property of catalogue.values()) {
      if (betaPropertyIds.has(property.propertyId) && !inBeta) continue;
      if (!property.isUnique && !random.chance(0.8)) continue;
      let value: unknown;
      switch (property.propertyType) {
        case 'STRING':
          value = property.isUnique ? `C-${String(100000 + index)}` : random.pick(jobTitles);
          break;
        case 'NUMBER':
          value = 1 + Math.floor(random.next() * 6);
          break;
        case 'DATETIME':
          value = new Date(at.getTime() - Math.floor(random.next() * 60 * 365) * 86_400_000).toISOString();
          break;
        case 'BOOLEAN':
          value = random.chance(0.5);
          break;
        case 'SINGLE_SELECT':
          value = random.pick(property.optionNames);
          break;
        case 'MULTI_SELECT':
          value = property.optionNames.filter(() => random.chance(0.4));
          break;
        case 'LOCATION': {
          const place = random.pick(places);
          value = { ...place, address: `${1 + Math.floor(random.next() * 200)} High Street`, postalCode: String(10000 + Math.floor(random.next() * 89999)) };
          break;
        }
      }
      const checked = checkPropertyValue(property, value);
      if (!checked.ok) throw new Error(`Demo value for ${property.name} does not fit: ${checked.message}`);
      properties[property.propertyId] = checked.value;
      if (property.isUnique) claims.push({ workspace_id: workspaceId, property_id: property.propertyId, value_key: uniqueValueKey(checked.value), person_id: personId });
    }
    const isOptedOut = random.chance(0.05);
    const unreachable = !isOptedOut && random.chance(0.02);
    const createdAt = new Date(at.getTime() - (count - index) * 60_000).toISOString();
    const email = `${firstName}.${lastName}.${index}@demo.example`.toLowerCase();
    people.push({
      workspace_id: workspaceId,
      person_id: personId,
      email,
      first_name: firstName,
      last_name: lastName,
      phone: random.chance(0.6) ? `+44 7700 ${String(900000 + index).slice(-6)}` : null,
      additional_emails: random.chance(0.1) ? [`${firstName}.${index}@work.demo.example`.toLowerCase()] : [],
      additional_phones: [],
      is_opted_out: isOptedOut,
      contact_status: isOptedOut ? 'OPTED_OUT' : unreachable ? 'UNREACHABLE' : 'CONTACTABLE',
      contact_status_updated_at: isOptedOut || unreachable ? createdAt : null,
      properties: JSON.stringify(properties),
      import_source: null,
      last_import_id: null,
      imported_at: null,
      created_at: createdAt,
      updated_at: createdAt,
      deleted_at: null,
      purged_at: null,
    });
    if (!isOptedOut && !unreachable) contactable.push({ personId, email });
    if (inMain && populationIds[0]) members.push({ workspace_id: workspaceId, population_id: populationIds[0], person_id: personId, added_at: createdAt });
    if (inBeta && populationIds[1]) members.push({ workspace_id: workspaceId, population_id: populationIds[1], person_id: personId, added_at: createdAt });
  }

  await inTransaction(db, async (transaction) => {
    for (let start = 0; start < people.length; start += BATCH_SIZE) await transaction.insertInto('people').values(people.slice(start, start + BATCH_SIZE)).execute();
    for (let start = 0; start < claims.length; start += BATCH_SIZE) await transaction.insertInto('person_unique_values').values(claims.slice(start, start + BATCH_SIZE)).execute();
    for (let start = 0; start < members.length; start += BATCH_SIZE) await transaction.insertInto('population_members').values(members.slice(start, start + BATCH_SIZE)).execute();
  });
  return { peopleCount: people.length, contactable };
}
