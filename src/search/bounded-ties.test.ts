import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { call, createTenant, type Tenant, type TestService } from '../../test/harness.js';
import { startPrivateTestService } from '../../test/private-database.js';
import { createPanel, insertPeople, type Panel } from '../families/people/search-fixtures.js';
import { createStudy, expectedOrder, insertParticipants } from '../families/participants/search-fixtures.js';
import { byParticipantId, participantsTarget } from '../families/participants/search-target.js';
import { byPersonId, peopleTarget } from '../families/people/search-target.js';
import { catalogue } from '../families/search-catalogue.js';
import { compileSearch } from './run.js';
import type { RootFilter } from './schemas.js';

/**
 * A page sorted by a number the counts hold, where one value is held by more matches than the
 * page reads: the counts list the values between the position and the limit, and SQL walks each
 * tie (the position's value, the limit's) by row id, taking only a page's worth (run.ts,
 * pageBounded). Paged through one row at a time and three at a time, both ways, E1 and people give
 * the order of the values with ties by id, nulls last; and the statement reads by index under the
 * tenant role, where row-level security admits only leakproof conditions to an index. A database
 * of its own: the plans depend on the whole table's statistics (see search-paths.test.ts).
 */

let service: TestService;
let tenant: Tenant;
let panel: Panel;
let studyId: string;
/** A workspace of 3,000 people and a study of 2,000, for plans: on a few dozen rows any plan is cheap. */
let bulk: { tenant: Tenant; studyId: string; age: string };
const scores = new Map<string, number | null>();
const participantOf = new Map<string, string>();

// Ages with ties wider than a page: 12 people aged 30, 9 aged 41, a few apart, and some with none.
const ages = [...Array(12).fill(30), ...Array(9).fill(41), 18, 25, 52, 52, 67, null, null, null];

beforeAll(async () => {
  service = await startPrivateTestService();
  tenant = await createTenant(service);
  panel = await createPanel(service, tenant);
  const personIds = await insertPeople(
    service,
    tenant.workspaceId,
    ages.map((age, index) => ({ email: `ties.${index}@example.test`, properties: age === null ? {} : { [panel.age]: age } })),
  );
  personIds.forEach((personId, index) => scores.set(personId, ages[index]!));
  studyId = await createStudy(service, tenant, 'INTERVIEWS');
  // Every person but the last two takes part: E1's ties are participants of people tied on age.
  await insertParticipants(
    service,
    tenant.workspaceId,
    personIds.slice(0, -2).map((personId) => ({ studyId, studyType: 'INTERVIEWS', personId, participation: { status: 'INVITED' } })),
  );
  const listed = await call(service, 'POST', `/studies/${studyId}/participants/search`, { token: tenant.token, body: { pageInfo: { size: 1000 } } });
  for (const participant of listed.json<{ results: { participantId: string; personId: string }[] }>().results) participantOf.set(participant.participantId, participant.personId);
  // The first search of each kind prepares the counts in the background.
  await call(service, 'POST', '/people/search', { token: tenant.token, body: {} });
  await service.deps.counts!.settled();

  const bulkTenant = await createTenant(service, 'Bulk');
  const bulkAge = (await createPanel(service, bulkTenant)).age;
  const bulkPeople = await insertPeople(
    service,
    bulkTenant.workspaceId,
    Array.from({ length: 3000 }, (_, index) => ({ email: `bulk.${index}@example.test`, properties: { [bulkAge]: 18 + (index % 60) } })),
  );
  const bulkStudy = await createStudy(service, bulkTenant, 'INTERVIEWS');
  await insertParticipants(
    service,
    bulkTenant.workspaceId,
    bulkPeople.slice(0, 2000).map((personId) => ({ studyId: bulkStudy, studyType: 'INTERVIEWS', personId, participation: { status: 'INVITED' } })),
  );
  await sql`vacuum analyze people`.execute(service.deps.db);
  await sql`vacuum analyze participants`.execute(service.deps.db);
  bulk = { tenant: bulkTenant, studyId: bulkStudy, age: bulkAge };
});

afterAll(async () => {
  await service?.stop();
});

const byAge = (operator: 'ASC' | 'DESC', age = panel.age): RootFilter => ({ operator: 'AND', filters: [], sort: { operator, propertyGroup: 'PERSON', propertyName: age } });

/** Every page of a search, `size` rows each, the page path each took (Server-Timing) and the ids in order. */
async function pageThrough(url: string, filter: RootFilter, size: number) {
  const ids: string[] = [];
  const paths = new Set<string>();
  let cursor: string | undefined;
  for (;;) {
    const response = await call(service, 'POST', url, { token: tenant.token, body: { filter, pageInfo: { size, ...(cursor ? { startCursor: cursor } : {}) } } });
    expect(response.statusCode, response.body).toBe(200);
    paths.add(/page;desc="(\w+)"/.exec(String(response.headers['server-timing']))?.[1] ?? 'none');
    const page = response.json<{ results: { personId: string; participantId?: string }[]; pageInfo: { hasNextPage: boolean; endCursor: string } }>();
    ids.push(...page.results.map((row) => row.participantId ?? row.personId));
    if (!page.pageInfo.hasNextPage) return { ids, paths };
    cursor = page.pageInfo.endCursor;
  }
}

describe('a page bounded by a held number, past ties wider than the page', () => {
  for (const direction of ['ASC', 'DESC'] as const) {
    for (const size of [1, 3]) {
      it(`people by age ${direction}, ${size} a page: ties by id, nulls last`, async () => {
        const { ids, paths } = await pageThrough('/people/search', byAge(direction), size);
        expect(ids).toEqual(expectedOrder([...scores].map(([id, value]) => ({ id, value })), direction));
        expect(paths).toContain('bounded');
      });

      it(`E1 by age ${direction}, ${size} a page: ties by participant id, nulls last`, async () => {
        const { ids, paths } = await pageThrough(`/studies/${studyId}/participants/search`, byAge(direction), size);
        expect(ids).toEqual(expectedOrder([...participantOf].map(([id, personId]) => ({ id, value: scores.get(personId)! })), direction));
        expect(paths).toContain('bounded');
      });
    }
  }

  for (const target of ['people', 'e1'] as const) {
    it(`${target}: the page of two ties reads people by person number alone, also under the tenant role`, async () => {
      const { tenant: owner, studyId: study, age } = bulk;
      const url = target === 'people' ? '/people/search' : `/studies/${study}/participants/search`;
      const first = await call(service, 'POST', url, { token: owner.token, body: { filter: byAge('ASC', age), pageInfo: { size: 15 } } });
      expect(first.statusCode, first.body).toBe(200);
      const startCursor = first.json<{ pageInfo: { endCursor: string } }>().pageInfo.endCursor;
      const searched = target === 'people' ? peopleTarget(owner.workspaceId) : participantsTarget(owner.workspaceId, study);
      const searchCall = { db: service.deps.db, cursors: service.deps.cursors, workspaceId: owner.workspaceId, now: new Date(), canReadPersonalData: true, catalogue, counts: service.deps.counts! };
      const statements = await compileSearch(searchCall, searched, byAge('ASC', age), { startCursor, size: 2 }, target === 'people' ? byPersonId : byParticipantId);
      const page = statements.pageBounded!({
        listed: Int32Array.from([1]),
        ties: [
          { personNos: Int32Array.from([2, 3, 4, 5]), atPosition: true },
          { personNos: Int32Array.from([6, 7, 8, 9]), atPosition: false },
        ],
      });
      for (const db of [service.deps.db, service.deps.tenantDb(owner.workspaceId)]) {
        const plan = await db.transaction().execute(async (transaction) => {
          const compiled = page.compile(transaction);
          const { rows } = await transaction.executeQuery<{ 'QUERY PLAN': string }>({ ...compiled, sql: `explain (costs off) ${compiled.sql}` });
          return rows.map((row) => row['QUERY PLAN']).join('\n');
        });
        // The listed and walked person numbers, one array, reach people_by_number as its index condition.
        expect(plan).toMatch(/Index Scan using people_by_number on people p\s+Index Cond: \(.*person_no = ANY/);
        // No person read but by number: a tie is walked in id order (people_live, participants_of_study:
        // they hold person_no) or, being few, probed by number or scanned; the planner weighs those.
        expect(plan).not.toMatch(/Seq Scan on people/);
        // The limit's tie is walked only when the position's does not fill the page.
        expect(plan).toMatch(/One-Time Filter/);
      }
    });
  }
});
