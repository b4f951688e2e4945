import { createHash } from 'node:crypto';
import { type Kysely, type RawBuilder, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DB } from '../db/schema.js';
import { insertPeople, search, type SearchResult } from '../families/people/search-fixtures.js';
import { call, createTenant, storeKind, type Tenant, type TestService } from '../../test/harness.js';
import { startPrivateTestService } from '../../test/private-database.js';
import { createStudy, expectedOrder, insertParticipants, setLastContact } from '../families/participants/search-fixtures.js';
import { loweredStatisticsName, statisticsName, sweepPropertyStatistics } from './property-statistics.js';
import { canonicalJson, compileSearch, type SearchCall } from './run.js';
import { memberBitmap } from './member-bitmap.js';
import type { RootFilter } from './schemas.js';
import { catalogue } from '../families/search-catalogue.js';
import { byParticipantId, participantsTarget } from '../families/participants/search-target.js';
import { byPersonId, peopleTarget } from '../families/people/search-target.js';

/**
 * The access paths of migration 20261124002000_search_paths, and the engine's side of them: the
 * statements the engine compiles must match the indexes' expressions, or the planner cannot use
 * them. Each plan is asked for with sequential scans, bitmap scans and sorts priced out, so it
 * shows whether an index serves the statement at all (on a handful of rows the planner would
 * rightly prefer a scan and a sort). Both stores: PostgreSQL and PGlite print plans alike.
 */

let service: TestService;
let tenant: Tenant;
let studyId: string;
let personIds: string[];
const lastContacts: (string | null)[] = [];

const DAY = 86_400_000;
// As the route passes it on, defaults applied: the cursor's scope is the digest of exactly this.
const lastContactSort = (operator: 'ASC' | 'DESC'): RootFilter => ({ operator: 'AND', filters: [], sort: { operator, propertyGroup: 'PERSON', propertyName: 'LAST_CONTACT_DATE' } });

beforeAll(async () => {
  // A database of its own: plans and estimates depend on the whole table. On the run's shared
  // PostgreSQL database other files fill people and participants, so ANALYZE's 30,000-row sample
  // may hold too few of this file's rows for any estimate, and their writes leave pages
  // not all-visible, which prices index-only scans out.
  service = await startPrivateTestService();
  tenant = await createTenant(service);
  personIds = await insertPeople(
    service,
    tenant.workspaceId,
    Array.from({ length: 12 }, (_, index) => ({ email: `paths.${index}@example.test` })),
  );
  // Every third person never contacted (null); two share an instant, so ties go to the id.
  for (const [index, personId] of personIds.entries()) {
    const at = index % 3 === 0 ? null : new Date(Date.UTC(2026, 10, 1) - (index === 4 ? 5 : index) * DAY).toISOString();
    lastContacts.push(at);
    await setLastContact(service, tenant.workspaceId, personId, at);
  }
  studyId = await createStudy(service, tenant, 'INTERVIEWS');
  await insertParticipants(
    service,
    tenant.workspaceId,
    personIds.slice(0, 8).map((personId, index) => ({ studyId, studyType: 'INTERVIEWS', personId, participation: { status: index % 2 === 0 ? 'INVITED' : 'NOT_STARTED' } })),
  );
});

afterAll(async () => {
  await service?.stop();
});

const searchCall = (): SearchCall => ({ db: service.deps.db, cursors: service.deps.cursors, workspaceId: tenant.workspaceId, now: new Date(), canReadPersonalData: true, catalogue });

/** The plan of a statement, with every path but an index walked in order priced out. */
async function planOf(statement: RawBuilder<unknown>, db: Kysely<DB> = service.deps.db): Promise<string> {
  return db.transaction().execute(async (trx: Kysely<DB>) => {
    await sql`set local enable_seqscan = off`.execute(trx);
    await sql`set local enable_bitmapscan = off`.execute(trx);
    await sql`set local enable_sort = off`.execute(trx);
    const compiled = statement.compile(trx);
    const { rows } = await trx.executeQuery<{ 'QUERY PLAN': string }>({ ...compiled, sql: `explain (costs off) ${compiled.sql}` });
    return rows.map((row) => row['QUERY PLAN']).join('\n');
  });
}

/** The end cursor after the first `size` rows, as a client would hold it. */
async function cursorAfter(url: string, filter: RootFilter, size: number): Promise<string> {
  const response = await call(service, 'POST', url, { token: tenant.token, body: { filter, pageInfo: { size } } });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<SearchResult>().pageInfo.endCursor;
}

describe('search access paths', () => {
  for (const direction of ['DESC', 'ASC'] as const) {
    const index = `people_by_last_contact_${direction.toLowerCase()}`;

    it(`people sorted by LAST_CONTACT_DATE ${direction} walk ${index} in order, with nothing to sort`, async () => {
      const statements = await compileSearch(searchCall(), peopleTarget(tenant.workspaceId), lastContactSort(direction), { size: 5 }, byPersonId);
      const plan = await planOf(statements.page);
      expect(plan).toContain(index);
      expect(plan).not.toMatch(/Sort/);
    });

    it(`a deep page by LAST_CONTACT_DATE ${direction} starts at its cursor, also under the tenant role: the bound is a condition of ${index}`, async () => {
      const filter = lastContactSort(direction);
      const startCursor = await cursorAfter('/people/search', filter, 5);
      const statements = await compileSearch(searchCall(), peopleTarget(tenant.workspaceId), filter, { startCursor, size: 5 }, byPersonId);
      // The stored key (20261130000000_stored_sort_keys), not coalesce(): PostgreSQL holds a
      // COALESCE possibly leaky, so under row-level security it ran after the policy, filtering.
      const asTenant = await planOf(statements.page, service.deps.tenantDb(tenant.workspaceId));
      expect(asTenant).toMatch(/current_setting\('app\.workspace_id'/);
      for (const plan of [await planOf(statements.page), asTenant]) {
        expect(plan).toContain(index);
        expect(plan).toMatch(new RegExp(`Index Cond: .*last_contact_key_${direction.toLowerCase()} ${direction === 'DESC' ? '<' : '>'}`));
      }
    });
  }

  it("E1 sorted by the person's last contact walks the person index from the cursor on, the participant id breaking ties", async () => {
    const filter = lastContactSort('DESC');
    const startCursor = await cursorAfter(`/studies/${studyId}/participants/search`, filter, 3);
    const statements = await compileSearch(searchCall(), participantsTarget(tenant.workspaceId, studyId), filter, { startCursor, size: 3 }, byParticipantId);
    const asTenant = await planOf(statements.page, service.deps.tenantDb(tenant.workspaceId));
    expect(asTenant).toMatch(/current_setting\('app\.workspace_id'/);
    for (const plan of [await planOf(statements.page), asTenant]) {
      expect(plan).toContain('people_by_last_contact_desc');
      expect(plan).toMatch(/Index Cond: .*last_contact_key_desc </);
    }
  });

  it('E1 sorted by PERSON.EMAIL starts a deep page at its cursor in people_email_unique, also under the tenant role (row-level security)', async () => {
    const filter: RootFilter = { operator: 'AND', filters: [], sort: { operator: 'ASC', propertyGroup: 'PERSON', propertyName: 'EMAIL' } };
    const startCursor = await cursorAfter(`/studies/${studyId}/participants/search`, filter, 3);
    const statements = await compileSearch(searchCall(), participantsTarget(tenant.workspaceId, studyId), filter, { startCursor, size: 3 }, byParticipantId);
    // The stored email_key, not lower(email): a condition calling a function that is not leakproof
    // runs after the policy's, never as an index condition (1 s for a page 5,000 rows in at 1,000,000 people).
    const asTenant = await planOf(statements.page, service.deps.tenantDb(tenant.workspaceId));
    // The tenant's plan is the policy's: its check on the workspace setting shows the role switched.
    expect(asTenant).toMatch(/current_setting\('app\.workspace_id'/);
    for (const plan of [await planOf(statements.page), asTenant]) {
      expect(plan).toContain('people_email_unique');
      expect(plan).toMatch(/Index Cond: .*email_key >=/);
    }
  });

  for (const direction of ['ASC', 'DESC'] as const) {
    it(`E1 sorted by INTERVIEW_START_TIME ${direction} starts a deep page at its cursor in participants_by_session_${direction.toLowerCase()}, also under the tenant role`, async () => {
      const filter: RootFilter = { operator: 'AND', filters: [], sort: { operator: direction, propertyGroup: 'PARTICIPANT', propertyName: 'INTERVIEW_START_TIME' } };
      const startCursor = await cursorAfter(`/studies/${studyId}/participants/search`, filter, 3);
      const statements = await compileSearch(searchCall(), participantsTarget(tenant.workspaceId, studyId), filter, { startCursor, size: 3 }, byParticipantId);
      const asTenant = await planOf(statements.page, service.deps.tenantDb(tenant.workspaceId));
      expect(asTenant).toMatch(/current_setting\('app\.workspace_id'/);
      for (const plan of [await planOf(statements.page), asTenant]) {
        expect(plan).toContain(`participants_by_session_${direction.toLowerCase()}`);
        expect(plan).toMatch(new RegExp(`Index Cond: .*interview_start_key_${direction.toLowerCase()} ${direction === 'DESC' ? '<' : '>'}`));
      }
    });
  }

  // A page counted in process may walk the sort's index keeping the count's matches (choosePage
  // in run.ts): each name marked indexedOrder must have that index, also under the tenant role.
  // A walk of the searched rows themselves (all but E1's by a person's value) reads that index
  // alone (it holds the person number), and then the page's rows by their ids.
  const walks: { name: string; target: 'people' | 'e1'; filter: RootFilter; index: string; bound?: RegExp; joined?: true }[] = [
    { name: 'people by id', target: 'people', filter: { operator: 'AND', filters: [] }, index: 'people_live' },
    ...(['ASC', 'DESC'] as const).map((direction) => ({ name: `people by LAST_CONTACT_DATE ${direction}`, target: 'people' as const, filter: lastContactSort(direction), index: `people_by_last_contact_${direction.toLowerCase()}` })),
    { name: 'people by LAST_CHANGED_AT DESC', target: 'people', filter: { operator: 'AND', filters: [], sort: { operator: 'DESC', propertyGroup: 'PERSON', propertyName: 'LAST_CHANGED_AT' } }, index: 'people_by_last_change' },
    { name: 'people by EMAIL ASC', target: 'people', filter: { operator: 'AND', filters: [], sort: { operator: 'ASC', propertyGroup: 'PERSON', propertyName: 'EMAIL' } }, index: 'people_email_unique' },
    { name: 'E1 by id', target: 'e1', filter: { operator: 'AND', filters: [] }, index: 'participants_of_study' },
    { name: 'E1 by LAST_CONTACT_DATE DESC', target: 'e1', filter: lastContactSort('DESC'), index: 'people_by_last_contact_desc', bound: /Index Cond: .*last_contact_key_desc </, joined: true },
    ...(['ASC', 'DESC'] as const).map((direction) => ({
      name: `E1 by INTERVIEW_START_TIME ${direction}`,
      target: 'e1' as const,
      filter: { operator: 'AND', filters: [], sort: { operator: direction, propertyGroup: 'PARTICIPANT', propertyName: 'INTERVIEW_START_TIME' } } satisfies RootFilter,
      index: `participants_by_session_${direction.toLowerCase()}`,
      bound: new RegExp(`Index Cond: .*interview_start_key_${direction.toLowerCase()} ${direction === 'DESC' ? '<' : '>'}`),
    })),
  ];
  for (const walk of walks) {
    it(`a page counted in process, ${walk.name}, can walk ${walk.index} keeping the matches, from its cursor, also under the tenant role`, async () => {
      const url = walk.target === 'people' ? '/people/search' : `/studies/${studyId}/participants/search`;
      const startCursor = await cursorAfter(url, walk.filter, 2);
      const target = walk.target === 'people' ? peopleTarget(tenant.workspaceId) : participantsTarget(tenant.workspaceId, studyId);
      const statements = await compileSearch({ ...searchCall(), counts: service.deps.counts! }, target, walk.filter, { startCursor, size: 3 }, walk.target === 'people' ? byPersonId : byParticipantId);
      expect(statements.pageWalking, 'a walkable sort').toBeDefined();
      const page = statements.pageWalking!(memberBitmap(Int32Array.from([1, 2, 3])));
      const asTenant = await planOf(page, service.deps.tenantDb(tenant.workspaceId));
      expect(asTenant).toMatch(/current_setting\('app\.workspace_id'/);
      for (const plan of [await planOf(page), asTenant]) {
        expect(plan).toContain(walk.index);
        if (!walk.joined) expect(plan).toMatch(new RegExp(`Index Only Scan (Backward )?using ${walk.index} `));
        // The order comes from the index: at most ties on the person's key sorted by participant id.
        expect(plan).not.toMatch(/->\s+Sort|^Sort/m);
        if (walk.bound) expect(plan).toMatch(walk.bound);
      }
    });
  }

  it("a walk's bitmap of person numbers reads in the database bit for bit as built, numbers outside it as no member", async () => {
    const members = Int32Array.from([5, 6, 9, 17, 64, 65, 1000]);
    const bitmap = memberBitmap(members);
    const { rows } = await sql<{ n: number }>`
      select n from generate_series(-3, 1100) as n
      where cast(get_bit(cast(${bitmap.bytes} as bytea), least(greatest(n - ${sql.lit(bitmap.offset)}, 0), ${sql.lit(bitmap.last)})) as boolean)
      order by n`.execute(service.deps.db);
    expect(rows.map((row) => row.n)).toEqual([...members]);
    const single = memberBitmap(Int32Array.from([42]));
    const one = await sql<{ n: number }>`
      select n from generate_series(0, 100) as n
      where cast(get_bit(cast(${single.bytes} as bytea), least(greatest(n - ${sql.lit(single.offset)}, 0), ${sql.lit(single.last)})) as boolean)`.execute(service.deps.db);
    expect(one.rows.map((row) => row.n)).toEqual([42]);
  });

  it('the count of a participant status filter reads participants_by_status alone', async () => {
    const filter: RootFilter = { operator: 'AND', filters: [{ property: { propertyGroup: 'PARTICIPANT', propertyName: 'STATUS' }, comparison: 'IS_ANY_OF', value: ['INVITED'] }] };
    const statements = await compileSearch(searchCall(), participantsTarget(tenant.workspaceId, studyId), filter, { size: 5 }, byParticipantId);
    // Index-only scans need the visibility map the bulk of the table would have.
    await sql`vacuum analyze participants`.execute(service.deps.db);
    expect(await planOf(statements.count)).toMatch(/Index Only Scan using participants_by_status/);
  });

  it('LAST_CONTACT_DATE still sorts nulls last both ways, through cursors one row at a time', async () => {
    for (const direction of ['DESC', 'ASC'] as const) {
      const filter = lastContactSort(direction);
      const seen: string[] = [];
      let startCursor: string | undefined;
      for (;;) {
        const response = await search(service, tenant.token, { filter, pageInfo: { size: 1, ...(startCursor ? { startCursor } : {}) } });
        expect(response.statusCode, response.body).toBe(200);
        const body = response.json<SearchResult>();
        seen.push(...body.results.map((person) => person.personId));
        if (!body.pageInfo.hasNextPage) break;
        startCursor = body.pageInfo.endCursor;
      }
      expect(seen).toEqual(expectedOrder(personIds.map((id, index) => ({ id, value: lastContacts[index]! })), direction));
    }
  });

  it('a cursor continues the same filter sent with its keys in another order', async () => {
    const filter = lastContactSort('DESC');
    const first = await search(service, tenant.token, { filter, pageInfo: { size: 10 } });
    expect(first.statusCode, first.body).toBe(200);
    const reordered = { sort: { propertyName: 'LAST_CONTACT_DATE', propertyGroup: 'PERSON', operator: 'DESC' }, filters: [], operator: 'AND' };
    const next = await search(service, tenant.token, { pageInfo: { startCursor: first.json<SearchResult>().pageInfo.endCursor, size: 10 }, filter: reordered });
    expect(next.statusCode, next.body).toBe(200);
    const order = expectedOrder(personIds.map((id, index) => ({ id, value: lastContacts[index]! })), 'DESC');
    expect(next.json<SearchResult>().results.map((person) => person.personId)).toEqual(order.slice(10, 20));
  });

  it('a cursor issued before nulls had a stand-in (it carries null) continues among the people never contacted', async () => {
    const filter = lastContactSort('DESC');
    const order = expectedOrder(personIds.map((id, index) => ({ id, value: lastContacts[index]! })), 'DESC');
    const firstNull = order.findIndex((id) => lastContacts[personIds.indexOf(id)] === null);
    // The scope the engine binds cursors to: the route's, and the filter's digest.
    const scope = `people-search:${tenant.workspaceId}:${createHash('sha256').update(canonicalJson(filter)).digest('base64url')}`;
    const startCursor = service.deps.cursors.encode(scope, [null, order[firstNull], Date.now()]);
    const response = await search(service, tenant.token, { filter, pageInfo: { size: 100, startCursor } });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json<SearchResult>().results.map((person) => person.personId)).toEqual(order.slice(firstNull + 1));
  });
});

describe("names read from a person's other rows (PropertyDefinition.presence)", () => {
  /** EXPLAIN ANALYZE of the count, as the tenant runs it: the most loops of any scan of participants. */
  async function participantScans(filter: RootFilter): Promise<{ total: number; loops: number; sql: string }> {
    const statements = await compileSearch(searchCall(), peopleTarget(tenant.workspaceId), filter, { size: 5 }, byPersonId);
    const db = service.deps.tenantDb(tenant.workspaceId);
    const compiled = statements.count.compile(db);
    const { rows } = await db.executeQuery<{ 'QUERY PLAN': string }>({ ...compiled, sql: `explain (analyze) ${compiled.sql}` });
    const loops = rows.map((row) => row['QUERY PLAN']).filter((line) => /on participants h\b/.test(line)).map((line) => Number(/loops=(\d+)/.exec(line)?.[1] ?? 0));
    const counted = await db.executeQuery<{ total: string | number }>(compiled);
    return { total: Number(counted.rows[0]!.total), loops: Math.max(...loops), sql: compiled.sql };
  }

  it('start from the people who have such rows when the empty value cannot match: the per-person subquery runs for them alone', async () => {
    const filter: RootFilter = { operator: 'AND', filters: [{ property: { propertyGroup: 'PERSON', propertyName: 'STUDY_MEMBERSHIP' }, comparison: 'HAS_ANY_OF', value: [studyId] }] };
    const { total, loops, sql: statement } = await participantScans(filter);
    expect(total).toBe(8);
    expect(statement).toContain('p.person_id in (select');
    // 12 people, 8 with participations: the subquery once per person would loop 12 times.
    expect(loops).toBeGreaterThan(0);
    expect(loops).toBeLessThanOrEqual(8);
  });

  it('keep the condition as it was when the empty value matches (a count below a bound, IS_EMPTY), and its complement alike', async () => {
    const below: RootFilter = { operator: 'AND', filters: [{ property: { propertyGroup: 'PERSON', propertyName: 'INVITED_TO_STUDY' }, comparison: 'LESS_THAN', value: 1 }] };
    const invited = (await participantScans({ operator: 'AND', filters: [{ property: { propertyGroup: 'PERSON', propertyName: 'INVITED_TO_STUDY' }, comparison: 'GREATER_THAN_OR_EQUAL', value: 1 }] })).total;
    const notInvited = await participantScans(below);
    expect(notInvited.sql).not.toContain('p.person_id in (select');
    expect(invited + notInvited.total).toBe(12);
    const empty = await participantScans({ operator: 'AND', filters: [{ property: { propertyGroup: 'PERSON', propertyName: 'STUDY_MEMBERSHIP' }, comparison: 'IS_EMPTY' }] });
    const notEmpty = await participantScans({ operator: 'AND', filters: [{ property: { propertyGroup: 'PERSON', propertyName: 'STUDY_MEMBERSHIP' }, comparison: 'IS_NOT_EMPTY' }] });
    expect([empty.total, notEmpty.total]).toEqual([4, 8]);
    const none = await participantScans({ operator: 'AND', filters: [{ property: { propertyGroup: 'PERSON', propertyName: 'STUDY_MEMBERSHIP' }, comparison: 'HAS_NONE_OF', value: [studyId] }] });
    expect(none.total).toBe(4);
  });
});

describe('planner statistics on custom properties', () => {
  const statisticsOf = async (propertyId: string) =>
    (await sql<{ name: string }>`select stxname as name from pg_statistic_ext where stxname = ${statisticsName(propertyId)}`.execute(service.deps.db)).rows.length;

  it('are made with a property whose filters compare its value, and swept after it is deleted', async () => {
    const response = await call(service, 'POST', '/properties/import', {
      token: tenant.token,
      body: [
        { name: 'Region', propertyType: 'SINGLE_SELECT', propertyOptions: [{ name: 'North' }, { name: 'South' }] },
        { name: 'Visits', propertyType: 'NUMBER' },
        { name: 'First visit', propertyType: 'DATETIME' },
      ],
    });
    expect(response.statusCode, response.body).toBe(200);
    const [region, visits, firstVisit] = response.json<{ results: { personProperty: { propertyId: string } }[] }>().results.map((result) => result.personProperty.propertyId);
    expect([await statisticsOf(region!), await statisticsOf(visits!), await statisticsOf(firstVisit!)]).toEqual([1, 1, 0]);
    const deleted = await call(service, 'DELETE', `/properties/${visits}`, { token: tenant.token });
    expect(deleted.statusCode, deleted.body).toBe(200);
    expect(await statisticsOf(visits!)).toBe(1);
    expect(await sweepPropertyStatistics(service.deps.db, '30s')).toMatchObject({ postponed: false });
    expect([await statisticsOf(region!), await statisticsOf(visits!)]).toEqual([1, 0]);
  });

  it("let the planner estimate a filter on a property from the people's values, not guess 0.5%", async () => {
    const response = await call(service, 'POST', '/properties/import', {
      token: tenant.token,
      body: [{ name: 'Climate', propertyType: 'SINGLE_SELECT', propertyOptions: [{ name: 'Wet' }, { name: 'Dry' }, { name: 'Mild' }] }],
    });
    expect(response.statusCode, response.body).toBe(200);
    const climate = response.json<{ results: { personProperty: { propertyId: string } }[] }>().results[0]!.personProperty.propertyId;
    await insertPeople(
      service,
      tenant.workspaceId,
      Array.from({ length: 200 }, (_, index) => ({ email: `climate.${index}@example.test`, properties: { [climate]: index % 2 === 0 ? 'Wet' : 'Dry' } })),
    );
    await sql`analyze people`.execute(service.deps.db);
    const estimate = async (option: string) => {
      const filter: RootFilter = { operator: 'AND', filters: [{ property: { propertyId: climate }, comparison: 'IS_ANY_OF', value: [option] }] };
      const statements = await compileSearch(searchCall(), peopleTarget(tenant.workspaceId), filter, { size: 5 }, byPersonId);
      const compiled = statements.count.compile(service.deps.db);
      const { rows } = await service.deps.db.executeQuery<{ 'QUERY PLAN': string }>({ ...compiled, sql: `explain ${compiled.sql}` });
      return Number(/rows=(\d+)/.exec(rows.map((row) => row['QUERY PLAN']).find((line) => /people p\b/.test(line)) ?? '')?.[1]);
    };
    // Without statistics both are the same guess, a share of the whole table; with them, the
    // option half of these people hold is estimated far above the one nobody holds.
    const [wet, mild] = [await estimate('Wet'), await estimate('Mild')];
    expect(wet).toBeGreaterThan(10 * mild);
  });

  it("let the planner estimate CONTAINS on a text property from the people's lowered values", async () => {
    const response = await call(service, 'POST', '/properties/import', { token: tenant.token, body: [{ name: 'Job title', propertyType: 'STRING' }] });
    expect(response.statusCode, response.body).toBe(200);
    const title = response.json<{ results: { personProperty: { propertyId: string } }[] }>().results[0]!.personProperty.propertyId;
    const lowered = await sql`select 1 from pg_statistic_ext where stxname = ${loweredStatisticsName(title)}`.execute(service.deps.db);
    expect(lowered.rows).toHaveLength(1);
    await insertPeople(
      service,
      tenant.workspaceId,
      Array.from({ length: 300 }, (_, index) => ({ email: `title.${index}@example.test`, properties: { [title]: index % 3 === 0 ? 'Nurse' : `Senior ENGINEER ${index}` } })),
    );
    await sql`analyze people`.execute(service.deps.db);
    const estimate = async (needle: string) => {
      const filter: RootFilter = { operator: 'AND', filters: [{ property: { propertyId: title }, comparison: 'CONTAINS', value: needle }] };
      const statements = await compileSearch(searchCall(), peopleTarget(tenant.workspaceId), filter, { size: 5 }, byPersonId);
      const compiled = statements.count.compile(service.deps.db);
      const { rows } = await service.deps.db.executeQuery<{ 'QUERY PLAN': string }>({ ...compiled, sql: `explain ${compiled.sql}` });
      return Number(/rows=(\d+)/.exec(rows.map((row) => row['QUERY PLAN']).find((line) => /people p\b/.test(line)) ?? '')?.[1]);
    };
    // Without them, a pattern's share is a fixed guess whatever it matches.
    const [engineer, pilot] = [await estimate('engineer'), await estimate('pilot')];
    expect(engineer).toBeGreaterThan(10 * pilot);
  });
});

/**
 * Email substrings: on the embedded store, where requests run as the owner, the trigram index of
 * 20261124100000_text_search serves the statements that filter in SQL. On PostgreSQL requests run
 * as the tenant role, where LIKE (not leakproof) can use no index: the search counts answer them in
 * process, and the index is not kept (20261203000000_trigram_index_embedded_only).
 */
describe('substring filters on the trigram indexes of 20261124100000_text_search', () => {
  // Distinct strings, so that a few characters of one of them are rare among the others.
  const hex = (index: number) => createHash('sha256').update(`trigram ${index}`).digest('hex');
  const crowd = 3000;
  const literal: Record<string, string> = {};

  beforeAll(async () => {
    for (let start = 0; start < crowd; start += 500) {
      await insertPeople(
        service,
        tenant.workspaceId,
        Array.from({ length: 500 }, (_, offset) => {
          const digest = hex(start + offset);
          return { email: `t${digest.slice(0, 16)}@example.test`, firstName: `F${digest.slice(16, 26)}`, lastName: `L${digest.slice(26, 36)}`, phone: `+1${digest.slice(36, 46)}` };
        }),
      );
    }
    // Needles whose %, _ and \ must match themselves, not LIKE's wildcards.
    const wildcards = [
      ['percent', '100%Sure', 'a%b'],
      ['percentless', '1000Sure', 'axxb'],
      ['underscore', 'Under_Score', 'a\\b'],
      ['underscoreless', 'UnderXScore', 'a\\\\b'],
    ] as const;
    const ids = await insertPeople(
      service,
      tenant.workspaceId,
      wildcards.map(([key, firstName, lastName]) => ({ email: `${key}@literal.test`, firstName, lastName })),
    );
    wildcards.forEach(([key], index) => (literal[key] = ids[index]!));
    await sql`vacuum analyze people`.execute(service.deps.db);
  });

  /** The plan the planner picks by itself: nothing priced out (GIN is read only by bitmap scans). */
  async function chosenPlan(filter: RootFilter): Promise<string> {
    const statements = await compileSearch(searchCall(), peopleTarget(tenant.workspaceId), filter, { size: 25 }, byPersonId);
    const compiled = statements.count.compile(service.deps.db);
    const { rows } = await service.deps.db.executeQuery<{ 'QUERY PLAN': string }>({ ...compiled, sql: `explain (costs off) ${compiled.sql}` });
    return rows.map((row) => row['QUERY PLAN']).join('\n');
  }

  const on = (propertyName: string, comparison: 'CONTAINS' | 'STARTS_WITH' | 'NOT_CONTAINS', value: string): RootFilter => ({
    operator: 'AND',
    filters: [{ property: { propertyGroup: 'PERSON', propertyName }, comparison, value }],
  });

  const cases: [string, string, 'CONTAINS' | 'STARTS_WITH', string, (digest: string) => string][] = [
    ['an email CONTAINS', 'EMAIL', 'CONTAINS', 'people_email_trgm', (digest) => digest.slice(4, 12).toUpperCase()],
  ];
  for (const [title, name, comparison, index, needleOf] of cases) {
    it.runIf(storeKind === 'embedded')(`${title} is a Bitmap Index Scan on ${index}, and finds the person`, async () => {
      const filter = on(name, comparison, needleOf(hex(1234)));
      const plan = await chosenPlan(filter);
      expect(plan).toContain(`Bitmap Index Scan on ${index}`);
      expect(plan).toMatch(/Index Cond: \(email_key ~~ /);
      const response = await search(service, tenant.token, { filter, pageInfo: { size: 100 } });
      expect(response.statusCode, response.body).toBe(200);
      expect(response.json<SearchResult>().results.map((person) => person.email)).toContain(`t${hex(1234).slice(0, 16)}@example.test`);
    });
  }

  /** The people with wildcards in their names that a filter finds (the crowd is more than a page). */
  it.runIf(storeKind === 'embedded')('an email STARTS_WITH reads an index: people_email_unique as a range where the collation is C (PGlite), else the trigrams', async () => {
    const filter = on('EMAIL', 'STARTS_WITH', `T${hex(1234).slice(0, 7)}`);
    const plan = await chosenPlan(filter);
    const { rows } = await sql<{ collation: string }>`select datcollate as collation from pg_database where datname = current_database()`.execute(service.deps.db);
    // Under C the btree of (workspace_id, email_key) orders as LIKE compares, and the planner
    // turns the prefix into a range of it; under another collation it cannot, and a STARTS_WITH
    // is the trigram index's.
    if (rows[0]!.collation === 'C') expect(plan).toMatch(/Index Cond: .*email_key >= 't.*email_key < 't/);
    else expect(plan).toContain('Bitmap Index Scan on people_email_trgm');
    expect(plan).not.toMatch(/Seq Scan/);
    const response = await search(service, tenant.token, { filter, pageInfo: { size: 100 } });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json<SearchResult>().results.map((person) => person.email)).toContain(`t${hex(1234).slice(0, 16)}@example.test`);
  });

  it.runIf(storeKind === 'postgres')('on PostgreSQL an email CONTAINS and STARTS_WITH are counted in process and read by their matches, with no trigram index kept', async () => {
    const { rows } = await sql<{ indexname: string }>`select indexname from pg_indexes where tablename = 'people' and indexname like '%trgm%'`.execute(service.deps.db);
    expect(rows).toEqual([]);
    const digest = hex(1234);
    for (const [comparison, needle] of [
      ['CONTAINS', digest.slice(4, 12).toUpperCase()],
      ['STARTS_WITH', `T${digest.slice(0, 7)}`],
    ] as const) {
      const filter = on('EMAIL', comparison, needle);
      // The counts are built on a workspace's first search: until then SQL filters (a scan).
      let timing = '';
      for (let attempt = 0; attempt < 100 && !timing.includes('desc="counts"'); attempt++) {
        if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 50));
        const response = await search(service, tenant.token, { filter, pageInfo: { size: 100 } });
        expect(response.statusCode, response.body).toBe(200);
        expect(response.json<SearchResult>().results.map((person) => person.email)).toEqual([`t${digest.slice(0, 16)}@example.test`]);
        timing = String(response.headers['server-timing']);
      }
      expect(timing, comparison).toContain('total;desc="counts"');
      expect(timing, comparison).not.toContain('page;desc="filter"');
    }
  });

  const idsOf = async (filter: RootFilter) => {
    const among: RootFilter = { operator: 'AND', filters: [...filter.filters, { property: { propertyGroup: 'PERSON', propertyName: 'EMAIL' }, comparison: 'CONTAINS', value: '@literal.test' }] };
    const response = await search(service, tenant.token, { filter: among, pageInfo: { size: 100 } });
    expect(response.statusCode, response.body).toBe(200);
    return response.json<SearchResult>().results.map((person) => person.personId).sort();
  };

  it('takes %, _ and \\ in a needle literally, and ignores case on both sides', async () => {
    expect(await idsOf(on('FIRST_NAME', 'CONTAINS', '0%s'))).toEqual([literal.percent]);
    expect(await idsOf(on('FIRST_NAME', 'STARTS_WITH', '100%'))).toEqual([literal.percent]);
    expect(await idsOf(on('FIRST_NAME', 'CONTAINS', 'r_s'))).toEqual([literal.underscore]);
    expect(await idsOf(on('FIRST_NAME', 'STARTS_WITH', 'UNDER_'))).toEqual([literal.underscore]);
    expect(await idsOf(on('LAST_NAME', 'CONTAINS', 'A\\B'))).toEqual([literal.underscore]);
    expect(await idsOf(on('LAST_NAME', 'STARTS_WITH', 'a\\\\'))).toEqual([literal.underscoreless]);
    expect(await idsOf(on('LAST_NAME', 'CONTAINS', '%'))).toEqual([literal.percent]);
    expect(await idsOf(on('FIRST_NAME', 'NOT_CONTAINS', '_'))).toEqual([literal.percent, literal.percentless, literal.underscoreless].sort());
  });

  it('an empty needle matches every value that is not null, as strpos and starts_with did', async () => {
    const everyone = Object.values(literal).sort();
    expect(await idsOf(on('LAST_NAME', 'CONTAINS', ''))).toEqual(everyone);
    expect(await idsOf(on('LAST_NAME', 'STARTS_WITH', ''))).toEqual(everyone);
    expect(await idsOf(on('LAST_NAME', 'NOT_CONTAINS', ''))).toEqual([]);
  });
});
