import { type Kysely, sql } from 'kysely';
import type { DB, PropertyType } from '../db/schema.js';
import { type JobHandler, type Schedule, sweepScope } from '../jobs/queue.js';
import { customValueOf } from './catalogue.js';
import { asOwnerWithin } from '../db/tenancy.js';

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

/**
 * A text property's lowered value, as CONTAINS and STARTS_WITH read it (`lower(value) like …`):
 * without it the planner estimated occupation CONTAINS "engineer" (84,227 of 1,000,000 people) at
 * 41 rows and scanned every person for a study's first page (1.5 s); with it, it walks people in
 * the sort's order (77 ms).
 */
export const loweredStatisticsName = (propertyId: string) => `${statisticsName(propertyId)}_lower`;

/** Inside the transaction that creates the properties. */
export async function createPropertyStatistics(db: Kysely<DB>, properties: readonly { propertyId: string; propertyType: PropertyType }[]): Promise<void> {
  // Only the table's owner may create statistics on it: a request's transaction runs as the tenant.
  await asOwnerWithin(db, async () => {
    for (const { propertyId, propertyType } of properties) {
      if (!typesWithStatistics.includes(propertyType)) continue;
      // DDL takes no parameters: the id goes in as a literal (ids are checked by the caller's schema, and quoted here).
      const value = customValueOf(propertyType, sql.ref('properties'), sql`cast(${sql.lit(propertyId)} as text)`)({ workspaceId: '', now: new Date(0) });
      await sql`create statistics if not exists ${sql.id(statisticsName(propertyId))} on (${value}) from people`.execute(db);
      if (propertyType === 'STRING') await sql`create statistics if not exists ${sql.id(loweredStatisticsName(propertyId))} on (lower(${value})) from people`.execute(db);
    }
  });
}

/**
 * A deleted property's statistics object outlives it until the sweep below. Dropping it in the
 * deleting transaction made other requests fail: PostgreSQL's planner reads the list of a table's
 * statistics objects from its relation cache and then looks each one up, and one dropped in
 * between fails that unrelated query with "cache lookup failed for statistics object" (XX000).
 * Seen on PostgreSQL 15 with 16 workspaces deleting properties while others searched and ANALYZE
 * ran: a handful of 500s per run. Only a lock that conflicts with the planner's ACCESS SHARE
 * closes that window, so the sweep drops them all at once under ACCESS EXCLUSIVE, waiting at most
 * LOCK_WAIT for it (a queued exclusive lock holds up every reader of people meanwhile) and
 * leaving them to the next sweep when it cannot have it. A leftover object is harmless: it reads
 * a key no person has any more.
 */
export const PROPERTY_STATISTICS_SWEEP_QUEUE = 'search.statistics.sweep';
const LOCK_WAIT = '200ms';

/** Statistics objects on people whose property no longer exists. */
async function orphanedStatistics(db: Kysely<DB>): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`
    select stxname as name from pg_statistic_ext
    where stxrelid = cast('people' as regclass) and stxname like 'people\_property\_%'
      and not exists (select 1 from person_properties where lower(person_properties.property_id) = substring(stxname from '^people_property_(prp_[0-9a-z]+)'))
  `.execute(db);
  return rows.map((row) => row.name);
}

export async function sweepPropertyStatistics(db: Kysely<DB>, lockWait = LOCK_WAIT): Promise<{ dropped: number; postponed: boolean }> {
  if ((await orphanedStatistics(db)).length === 0) return { dropped: 0, postponed: false };
  try {
    return await db.transaction().execute(async (transaction) => {
      await sql`set local lock_timeout = ${sql.lit(lockWait)}`.execute(transaction);
      await sql`lock table people in access exclusive mode`.execute(transaction);
      const names = await orphanedStatistics(transaction);
      for (const name of names) await sql`drop statistics if exists ${sql.id(name)}`.execute(transaction);
      return { dropped: names.length, postponed: false };
    });
  } catch (error) {
    if ((error as { code?: string }).code === '55P03') return { dropped: 0, postponed: true };
    throw error;
  }
}

/** Statistics objects belong to no workspace: a drain scoped to one workspace (sweepScope) leaves them be. */
export function sweepPropertyStatisticsHandler(db: Kysely<DB>): JobHandler {
  return {
    queue: PROPERTY_STATISTICS_SWEEP_QUEUE,
    run: async (job) => (sweepScope(job) === undefined ? sweepPropertyStatistics(db) : { dropped: 0, postponed: false }),
  };
}

export const sweepPropertyStatisticsSchedule: Schedule = { name: PROPERTY_STATISTICS_SWEEP_QUEUE, queue: PROPERTY_STATISTICS_SWEEP_QUEUE, everySeconds: 60 * 60 };
