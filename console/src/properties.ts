import type { Schema } from '@recruit-ops/sdk/browser';
import type { RecruitClient } from './api.js';

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
