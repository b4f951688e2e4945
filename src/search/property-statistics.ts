import { type Kysely, sql } from 'kysely';
import type { DB, PropertyType } from '../db/schema.js';
import { customValueOf } from './catalogue.js';

/**
 * Planner statistics on each custom property's value as the catalogue reads it out of
 * people.properties. The planner has none for an expression over jsonb and guesses that a filter
 * on it keeps 0.5% of the rows: on the search bench (1,000,000 people) `country IS_ANY_OF [US,
 * GB]`, 35% of people, was estimated at 1%, and the planner chose plans made for a handful of
 * matches (a 1000-row page sorted by last contact 3.3 s instead of 0.3 s, a deep page 0.39 s
 * instead of 0.035 s). One statistics object per property, made with the property and dropped
 * with it; ANALYZE of people fills it (autovacuum's, on PostgreSQL).
 *
 * Date-times are left out (their reading goes through a STABLE function, which statistics do not
 * admit everywhere), and so are multi-selects and locations (jsonb, whose operators the planner
 * estimates without them).
 */
const typesWithStatistics: readonly PropertyType[] = ['STRING', 'SINGLE_SELECT', 'NUMBER', 'BOOLEAN'];

/** Property ids are `prp_` and Crockford base 32: lowered, a plain identifier under PostgreSQL's 63 bytes. */
export const statisticsName = (propertyId: string) => `people_property_${propertyId.toLowerCase()}`;

/** Inside the transaction that creates the properties. */
export async function createPropertyStatistics(db: Kysely<DB>, properties: readonly { propertyId: string; propertyType: PropertyType }[]): Promise<void> {
  for (const { propertyId, propertyType } of properties) {
    if (!typesWithStatistics.includes(propertyType)) continue;
    // DDL takes no parameters: the id goes in as a literal (ids are checked by the caller's schema, and quoted here).
    const value = customValueOf(propertyType, sql.ref('properties'), sql`cast(${sql.lit(propertyId)} as text)`)({ workspaceId: '', now: new Date(0) });
    await sql`create statistics if not exists ${sql.id(statisticsName(propertyId))} on (${value}) from people`.execute(db);
  }
}

/** Inside the transaction that deletes the properties. */
export async function dropPropertyStatistics(db: Kysely<DB>, propertyIds: readonly string[]): Promise<void> {
  for (const propertyId of propertyIds) await sql`drop statistics if exists ${sql.id(statisticsName(propertyId))}`.execute(db);
}
