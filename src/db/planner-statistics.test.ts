import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, type Tenant, type TestService } from '../../test/harness.js';
import { addParticipants, createStudy } from '../../test/participants-factory.js';
import { startPrivateTestService } from '../../test/private-database.js';
import { insertPeople } from '../families/people/search-fixtures.js';
import { analyzeStaleTables, staleness, staleTables } from './planner-statistics.js';

describe('which tables are stale', () => {
  const table = { table: 't', reltuples: 1000, relpages: 100, pages: 100, changed: null };
  it('an empty table never is, a filled one never analyzed is', () => {
    expect(staleness({ ...table, reltuples: -1, relpages: 0, pages: 0 })).toBeUndefined();
    expect(staleness({ ...table, reltuples: -1, relpages: 0, pages: 1 })).toBe('never analyzed');
  });
  it('a table whose size moved by more than a tenth and a page is', () => {
    expect(staleness({ ...table, pages: 110 })).toBeUndefined();
    expect(staleness({ ...table, pages: 111 })).toBe('size changed');
    expect(staleness({ ...table, pages: 89 })).toBe('size changed');
    expect(staleness({ ...table, reltuples: 3, relpages: 1, pages: 2 })).toBeUndefined();
    expect(staleness({ ...table, reltuples: 3, relpages: 1, pages: 3 })).toBe('size changed');
  });
  it('where the server counts changed rows, more than autovacuum’s threshold (50 and a tenth) is', () => {
    expect(staleness({ ...table, changed: 150 })).toBeUndefined();
    expect(staleness({ ...table, changed: 151 })).toBe('rows changed');
  });
});

/**
 * The statement the SQL path sends for E1 filtered by STUDY_MEMBERSHIP (as the service logged it):
 * with no statistics on participants, the planner took each of a workspace's rows for the only
 * one and, for every person of the workspace, scanned every participant of the workspace.
 */
const membershipCount = (workspaceId: string, studyId: string, otherStudyId: string) => sql<{ 'QUERY PLAN': unknown }>`
  explain (analyze, buffers, format json)
  select count(*) as total from participants as pt
    join people as p on p.workspace_id = pt.workspace_id and p.person_id = pt.person_id
  where pt.workspace_id = ${workspaceId} and pt.study_id = ${studyId} and p.deleted_at is null
    and (exists (select 1 from (select h.study_id from participants as h where h.workspace_id = p.workspace_id and h.person_id = p.person_id) as s(id)
      where s.id = any(cast(${[otherStudyId]} as text[]))))`;

function buffersRead(plan: unknown): number {
  const top = (Array.isArray(plan) ? plan[0] : JSON.parse(String(plan))[0]) as { Plan: Record<string, number> };
  return (top.Plan['Shared Hit Blocks'] ?? 0) + (top.Plan['Shared Read Blocks'] ?? 0) + (top.Plan['Local Hit Blocks'] ?? 0);
}

describe('a study filled after start, searched by STUDY_MEMBERSHIP through SQL', () => {
  const PEOPLE = 800;
  let service: TestService;
  let tenant: Tenant;
  let studies: [string, string];
  let personIds: string[];

  beforeAll(async () => {
    // A database of its own: the run's shared one has other files' tables, analyzed or not.
    service = await startPrivateTestService({ searchCounts: false });
    tenant = await createTenant(service);
    personIds = await insertPeople(service, tenant.workspaceId, Array.from({ length: PEOPLE }, (_, index) => ({ email: `person${index}@example.test` })));
    await analyzeStaleTables(service.deps.db, service.deps.storeKind);
    studies = [await createStudy(service, tenant, { studyType: 'INTERVIEWS' }), await createStudy(service, tenant, { studyType: 'INTERVIEWS' })];
    // 200 in each study, 100 in both.
    for (let start = 0; start < 200; start += 100) await addParticipants(service, tenant, studies[0], personIds.slice(start, start + 100));
    for (let start = 100; start < 300; start += 100) await addParticipants(service, tenant, studies[1], personIds.slice(start, start + 100));
  }, 120_000);
  afterAll(() => service?.stop());

  it('finds participants stale, analyzes them, and the statement then reads a few buffers a person', async () => {
    const stale = await staleTables(service.deps.db);
    expect(stale).toContainEqual({ table: 'participants', reason: 'never analyzed' });
    const before = buffersRead((await membershipCount(tenant.workspaceId, studies[0], studies[1]).execute(service.deps.db)).rows[0]!['QUERY PLAN']);

    const analyzed = await analyzeStaleTables(service.deps.db, service.deps.storeKind);
    expect(analyzed.map(({ table }) => table)).toContain('participants');
    expect(await staleTables(service.deps.db)).toEqual([]);

    const after = buffersRead((await membershipCount(tenant.workspaceId, studies[0], studies[1]).execute(service.deps.db)).rows[0]!['QUERY PLAN']);
    // Under two buffers a person (seen: 1,115 on the embedded store, 1,315 on PostgreSQL); without the
    // statistics 4,073 and 4,439, a number that grows with the workspace's participants as well.
    expect(after, `buffers read: ${before} before ANALYZE, ${after} after`).toBeLessThan(PEOPLE * 2);

    const search = await call(service, 'POST', `/studies/${studies[0]}/participants/search`, {
      token: tenant.token,
      body: { filter: { filters: [{ property: { propertyGroup: 'PERSON', propertyName: 'STUDY_MEMBERSHIP' }, comparison: 'HAS_ANY_OF', value: [studies[1]] }] } },
    });
    expect(search.statusCode, search.body).toBe(200);
    expect(search.headers['server-timing']).toMatch(/total;desc="sql"/);
    expect(search.json<{ total: number }>().total).toBe(100);
  });

  it('analyzes a table again once it has grown by more than a tenth', async () => {
    // Changes counted by the server reach its statistics views a little after their transaction.
    await analyzeStaleTables(service.deps.db, service.deps.storeKind);
    expect((await staleTables(service.deps.db)).map(({ table }) => table)).not.toContain('people');
    const more = await insertPeople(service, tenant.workspaceId, Array.from({ length: PEOPLE }, (_, index) => ({ email: `later${index}@example.test` })));
    expect(more).toHaveLength(PEOPLE);
    expect(await staleTables(service.deps.db)).toContainEqual({ table: 'people', reason: 'size changed' });
    const analyzed = await analyzeStaleTables(service.deps.db, service.deps.storeKind);
    expect(analyzed.map(({ table }) => table)).toContain('people');
    const { rows } = await sql<{ reltuples: number }>`select reltuples from pg_class where relname = 'people' and relnamespace = cast(current_schema() as regnamespace)`.execute(service.deps.db);
    expect(Number(rows[0]!.reltuples)).toBe(PEOPLE * 2);
  });
});
