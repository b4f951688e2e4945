import { type Kysely, sql } from 'kysely';
import type { DB, PersonLocation, PropertyType, PropertyValue } from '../../db/schema.js';
import { ApiError, conflict, type ErrorItem, notFound } from '../../http/errors.js';

type Executor = Kysely<DB>;

/** What checking and presenting a value needs to know about its property. */
export interface CatalogueProperty {
  propertyId: string;
  name: string;
  propertyType: PropertyType;
  isUnique: boolean;
  /** Flagged isPII or isPHI: masked for a token without the personal-data right. */
  isPersonalData: boolean;
  /** Option names in the property's order (select types only). */
  optionNames: string[];
}

export type PropertyCatalogue = Map<string, CatalogueProperty>;

/**
 * The workspace's person properties (all, or those of `propertyIds`), with their option names.
 * One query, whatever the number of properties. `forShare` (inside a writing transaction) holds
 * the properties until commit, so a concurrent property deletion waits and then also removes the
 * values written here, or goes first and the write sees the property gone.
 */
export async function loadPropertyCatalogue(
  db: Executor,
  workspaceId: string,
  propertyIds?: readonly string[],
  options: { forShare?: boolean } = {},
): Promise<PropertyCatalogue> {
  if (propertyIds !== undefined && propertyIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('person_properties as p')
    .where('p.workspace_id', '=', workspaceId)
    .$if(propertyIds !== undefined, (query) => query.where('p.property_id', 'in', propertyIds!))
    .select((eb) => [
      'p.property_id',
      'p.name',
      'p.property_type',
      'p.is_unique',
      'p.is_pii',
      'p.is_phi',
      eb
        .selectFrom('property_options as o')
        .whereRef('o.workspace_id', '=', 'p.workspace_id')
        .whereRef('o.property_id', '=', 'p.property_id')
        .select(sql<string[]>`coalesce(array_agg(o.name order by o.position), '{}')`.as('names'))
        .as('option_names'),
    ])
    .$if(options.forShare === true, (query) => query.forShare())
    .execute();
  return new Map(
    rows.map((row) => [
      row.property_id,
      {
        propertyId: row.property_id,
        name: row.name,
        propertyType: row.property_type,
        isUnique: row.is_unique,
        isPersonalData: row.is_pii || row.is_phi,
        optionNames: row.option_names ?? [],
      },
    ]),
  );
}

export type ValueCheck = { ok: true; value: PropertyValue } | { ok: false; message: string };

const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;
const COUNTRY = /^[A-Z]{2}$/;
const locationTexts = { address: 500, city: 200, region: 200, postalCode: 40 } as const;
const STRING_VALUE_MAX = 10_000;

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const hasNul = (text: string) => text.includes('\u0000');

function checkLocation(value: unknown): ValueCheck {
  if (!isRecord(value)) return { ok: false, message: 'A LOCATION value is an object with at least a country' };
  const location: PersonLocation = { country: '' };
  for (const [key, field] of Object.entries(value)) {
    if (key === 'country') {
      if (typeof field !== 'string' || !COUNTRY.test(field)) return { ok: false, message: 'country must be an ISO 3166-1 alpha-2 code, such as "GB"' };
      location.country = field;
    } else if (key === 'lat' || key === 'lng') {
      const limit = key === 'lat' ? 90 : 180;
      if (typeof field !== 'number' || !Number.isFinite(field) || Math.abs(field) > limit) return { ok: false, message: `${key} must be a number from -${limit} to ${limit}` };
      location[key] = field;
    } else if (key in locationTexts) {
      const maxLength = locationTexts[key as keyof typeof locationTexts];
      if (typeof field !== 'string' || field.length > maxLength || hasNul(field)) return { ok: false, message: `${key} must be text of at most ${maxLength} characters` };
      location[key as keyof typeof locationTexts] = field;
    } else {
      return { ok: false, message: `${key} is not a field of a LOCATION value` };
    }
  }
  if (location.country === '') return { ok: false, message: 'A LOCATION value needs a country (ISO 3166-1 alpha-2)' };
  if ((location.lat === undefined) !== (location.lng === undefined)) return { ok: false, message: 'lat and lng go together' };
  return { ok: true, value: location };
}

/**
 * One value against its property's type (contract §2): the value as stored, or why it does not
 * fit. Select values are stored as option names (the shape responses and filters use), matched
 * exactly; a DATETIME is stored normalized to UTC with milliseconds, so equal instants compare
 * equal as text.
 */
export function checkPropertyValue(property: CatalogueProperty, value: unknown): ValueCheck {
  switch (property.propertyType) {
    case 'STRING':
      if (typeof value !== 'string' || value.length > STRING_VALUE_MAX || hasNul(value)) {
        return { ok: false, message: `A STRING value is text of at most ${STRING_VALUE_MAX} characters` };
      }
      return { ok: true, value };
    case 'NUMBER':
      if (typeof value !== 'number' || !Number.isFinite(value)) return { ok: false, message: 'A NUMBER value is a finite number' };
      return { ok: true, value };
    case 'BOOLEAN':
      if (typeof value !== 'boolean') return { ok: false, message: 'A BOOLEAN value is true or false' };
      return { ok: true, value };
    case 'DATETIME': {
      const instant = typeof value === 'string' && ISO_DATE_TIME.test(value) ? new Date(value) : undefined;
      if (instant === undefined || Number.isNaN(instant.getTime())) return { ok: false, message: 'A DATETIME value is an ISO 8601 date-time with a time zone' };
      return { ok: true, value: instant.toISOString() };
    }
    case 'SINGLE_SELECT':
      if (typeof value !== 'string' || !property.optionNames.includes(value)) {
        return { ok: false, message: `A SINGLE_SELECT value is one option name of the property: ${property.optionNames.join(', ')}` };
      }
      return { ok: true, value };
    case 'MULTI_SELECT': {
      if (!Array.isArray(value) || value.some((item) => typeof item !== 'string' || !property.optionNames.includes(item))) {
        return { ok: false, message: `A MULTI_SELECT value is an array of option names of the property: ${property.optionNames.join(', ')}` };
      }
      // Duplicates say nothing more; the options keep the order the caller gave.
      return { ok: true, value: [...new Set(value as string[])] };
    }
    case 'LOCATION':
      return checkLocation(value);
  }
}

/** The checked `properties` of a request: values to set, and (PATCH) ids whose value is removed. */
export interface CheckedValues {
  set: Record<string, PropertyValue>;
  remove: string[];
  catalogue: PropertyCatalogue;
}

/**
 * Checks a `{propertyId: value}` map against the workspace's person properties. An unknown id
 * is a 404 naming ["properties", id]; a value of the wrong shape a 400 naming the same path
 * (every such value reported). `null` means "remove this value" (PATCH) and is returned in
 * `remove`. Call it inside the writing transaction: it locks the properties named (FOR SHARE).
 */
export async function checkPropertyValues(db: Executor, workspaceId: string, values: Record<string, unknown>, path: readonly string[] = ['properties']): Promise<CheckedValues> {
  const ids = Object.keys(values);
  const catalogue = await loadPropertyCatalogue(db, workspaceId, ids, { forShare: true });
  const unknown = ids.find((id) => !catalogue.has(id));
  if (unknown !== undefined) throw notFound('Property', [...path, unknown]);
  const set: Record<string, PropertyValue> = {};
  const remove: string[] = [];
  const errors: ErrorItem[] = [];
  for (const id of ids) {
    const value = values[id];
    if (value === null) {
      remove.push(id);
      continue;
    }
    const checked = checkPropertyValue(catalogue.get(id)!, value);
    if (checked.ok) set[id] = checked.value;
    else errors.push({ message: checked.message, path: [...path, id] });
  }
  if (errors.length > 0) throw new ApiError('VALIDATION', errors);
  return { set, remove, catalogue };
}

/**
 * The text a unique property's value is claimed under: equal values, equal keys. STRING values
 * compare exactly (case matters); numbers and instants by their canonical text.
 */
export function uniqueValueKey(value: PropertyValue): string {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? String(value) : JSON.stringify(value);
}

/**
 * Makes the person's unique-value claims match `properties` (their values as they will be
 * stored): claims of removed or changed values are released, new ones taken. A value another
 * (non-deleted) person holds is a 409 naming ["properties", propertyId]. Runs inside the
 * writing transaction; the claims' primary key settles races between requests.
 */
export async function claimUniqueValues(
  db: Executor,
  workspaceId: string,
  personId: string,
  catalogue: PropertyCatalogue,
  properties: Record<string, PropertyValue>,
  path: readonly string[] = ['properties'],
): Promise<void> {
  const uniqueIds = [...catalogue.values()].filter((property) => property.isUnique).map((property) => property.propertyId);
  if (uniqueIds.length === 0) return;
  await db.deleteFrom('person_unique_values').where('workspace_id', '=', workspaceId).where('person_id', '=', personId).where('property_id', 'in', uniqueIds).execute();
  const claims = uniqueIds.filter((id) => properties[id] !== undefined).map((id) => ({ workspace_id: workspaceId, property_id: id, value_key: uniqueValueKey(properties[id]!), person_id: personId }));
  if (claims.length === 0) return;
  const taken = await db.insertInto('person_unique_values').values(claims).onConflict((oc) => oc.doNothing()).returning('property_id').execute();
  const claimed = new Set(taken.map((row) => row.property_id));
  const lost = claims.find((claim) => !claimed.has(claim.property_id));
  if (lost) throw conflict('Another person already has this value of a unique property', [...path, lost.property_id]);
}

/**
 * Claims, for a person who holds no value yet for these properties, the unique values among
 * `values` that are free, and returns the ids of the properties whose value another person
 * holds (left unclaimed). For a writer that must not tell its caller who holds a value (the
 * public signup form): it leaves those values out instead of answering 409.
 */
export async function claimFreeUniqueValues(
  db: Executor,
  workspaceId: string,
  personId: string,
  catalogue: PropertyCatalogue,
  values: Record<string, PropertyValue>,
): Promise<Set<string>> {
  const claims = [...catalogue.values()]
    .filter((property) => property.isUnique && values[property.propertyId] !== undefined)
    .map((property) => ({ workspace_id: workspaceId, property_id: property.propertyId, value_key: uniqueValueKey(values[property.propertyId]!), person_id: personId }));
  if (claims.length === 0) return new Set();
  const taken = await db.insertInto('person_unique_values').values(claims).onConflict((oc) => oc.doNothing()).returning('property_id').execute();
  const claimed = new Set(taken.map((row) => row.property_id));
  return new Set(claims.filter((claim) => !claimed.has(claim.property_id)).map((claim) => claim.property_id));
}

/** Releases every unique-value claim of these people (on deletion: the values become free at once). */
export async function releaseUniqueValues(db: Executor, workspaceId: string, personIds: readonly string[]): Promise<void> {
  if (personIds.length === 0) return;
  await db.deleteFrom('person_unique_values').where('workspace_id', '=', workspaceId).where('person_id', 'in', personIds).execute();
}
