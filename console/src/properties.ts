import type { Schema } from '@recruit-ops/sdk/browser';
import type { RecruitClient } from './api.js';
import { formatMoment, formatNumber } from './format.js';

export type PersonProperty = Schema<'PersonProperty'>;

/**
 * Every person property of the workspace, in the order they were made: their names label a
 * person's values (the Person answer holds them by property id), and the imports page matches a
 * CSV header against them.
 */
export async function loadProperties(api: RecruitClient): Promise<PersonProperty[]> {
  const properties: PersonProperty[] = [];
  for await (const property of api.paginate('/properties', { params: { query: { size: 100 } } })) properties.push(property);
  return properties;
}

export type PropertyValue = Schema<'PropertyValue'>;

/**
 * A custom property's value in words, as the viewer reads them: options and lists joined, a
 * location by its parts, a number and a DATETIME in the viewer's locale (and zone). A masked value
 * ("***") stays as the API gave it.
 */
export function propertyValueText(value: PropertyValue | undefined, dateTime: boolean): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (Array.isArray(value)) return value.join(', ');
  if (typeof value === 'object') return [value.address, value.city, value.region, value.postalCode, value.country].filter(Boolean).join(', ');
  if (typeof value === 'boolean') return value ? 'Yes' : 'No';
  if (typeof value === 'number') return formatNumber(value);
  if (dateTime && !Number.isNaN(Date.parse(value))) return formatMoment(value);
  return value;
}
