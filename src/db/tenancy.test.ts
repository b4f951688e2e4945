import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type Tenant, type TestService } from '../../test/harness.js';
import { createPerson } from '../../test/people-factory.js';
import { currentTenant, runAsTenant } from './tenancy.js';

/**
 * Row-level security, the second wall between tenants: even a query that forgets its workspace
 * condition sees only the requesting workspace's rows, on both stores.
 */

/** A route that reads people and studies with no workspace condition at all, as a bug would. */
function forgetfulRoutes(app: TestService['app']) {
  app.get('/v1/test-only/everyone', { config: { right: 'people:read' } }, async () => {
    const { rows } = await sql<{ workspace_id: string }>`select workspace_id from people`.execute(service.deps.db);
    const studies = await service.deps.db.selectFrom('studies').select('workspace_id').execute();
    return { people: rows.map((row) => row.workspace_id), studies: studies.map((row) => row.workspace_id), scope: currentTenant() ?? null };
  });
}

let service: TestService;
let unwalled: TestService;
let first: Tenant;
let second: Tenant;

beforeAll(async () => {
  service = await startTestService({}, { extraRoutes: forgetfulRoutes });
  unwalled = await startTestService({ rowLevelSecurity: false }, { database: service.database, extraRoutes: forgetfulRoutes });
  first = await createTenant(service, 'First');
  second = await createTenant(service, 'Second');
  for (const tenant of [first, second, second]) await createPerson(service, tenant);
});

afterAll(async () => {
  await unwalled?.close();
  await service?.stop();
});

describe('row-level security', () => {
  it('puts every tenant table behind a policy', async () => {
    const { rows } = await sql<{ table_name: string; rls: boolean; policies: number }>`
      select c.relname as table_name, c.relrowsecurity as rls,
        (select count(*) from pg_policies p where p.schemaname = n.nspname and p.tablename = c.relname and p.policyname = 'tenant_isolation')::int as policies
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = current_schema() and c.relkind in ('r', 'p')
        and exists (select from pg_attribute a where a.attrelid = c.oid and a.attname = 'workspace_id' and not a.attisdropped)`.execute(service.deps.db);
    expect(rows.length).toBeGreaterThan(30);
    expect(rows.filter((row) => !row.rls || row.policies !== 1).map((row) => row.table_name)).toEqual([]);
  });

  it('shows a request only its workspace, even through a query without its condition', async () => {
    const response = await call(service, 'GET', '/test-only/everyone', { token: second.token });
    expect(response.statusCode).toBe(200);
    const body = response.json<{ people: string[]; scope: string }>();
    expect(body.scope).toBe(second.workspaceId);
    expect(body.people).toEqual([second.workspaceId, second.workspaceId]);
  });

  it('is what hides the other workspace: without it the same query sees both', async () => {
    const response = await call(unwalled, 'GET', '/test-only/everyone', { token: second.token });
    expect(response.statusCode).toBe(200);
    const seen = new Set(response.json<{ people: string[] }>().people);
    expect(seen.has(first.workspaceId) && seen.has(second.workspaceId)).toBe(true);
  });

  it('refuses a row written into another workspace', async () => {
    const write = runAsTenant(first.workspaceId, () =>
      service.deps.db.updateTable('people').set({ first_name: 'Mallory' }).where('workspace_id', '=', second.workspaceId).executeTakeFirst(),
    );
    expect(Number((await write).numUpdatedRows)).toBe(0);
    const insert = runAsTenant(first.workspaceId, () =>
      service.deps.db.insertInto('teams').values({ workspace_id: second.workspaceId, team_id: 'team_rls_probe', name: 'Probe' } as never).execute(),
    );
    await expect(insert).rejects.toThrow(/row-level security/);
  });

  it('keeps the service secrets from the tenant role', async () => {
    await expect(runAsTenant(first.workspaceId, () => sql`select * from service_secrets`.execute(service.deps.db))).rejects.toThrow(/permission denied/);
  });

  it('leaves work outside a request (jobs, migrations) as the owner, seeing every workspace', async () => {
    const { rows } = await sql<{ workspaces: number }>`select count(distinct workspace_id)::int as workspaces from people`.execute(service.deps.db);
    expect(rows[0]!.workspaces).toBeGreaterThanOrEqual(2);
  });

  it('serves the API as before through the wall: a person created and read back', async () => {
    const person = await createPerson(service, first);
    const read = await call(service, 'GET', `/people/${person.personId}`, { token: first.token });
    expect(read.statusCode).toBe(200);
    expect((await call(service, 'GET', `/people/${person.personId}`, { token: second.token })).statusCode).toBe(404);
  });
});
