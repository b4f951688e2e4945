import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type Tenant, type TestService } from '../../test/harness.js';
import { createPerson } from '../../test/people-factory.js';
import { requestContext } from '../context.js';

/**
 * Row-level security, the second wall between tenants: even a query that forgets its workspace
 * condition sees only the requesting workspace's rows, on both stores.
 */

/** A route that reads people and studies with no workspace condition at all, as a bug would, through its request's handle. */
function forgetfulRoutes(app: TestService['app'], deps: () => TestService['deps']) {
  app.get('/v1/test-only/everyone', { config: { right: 'people:read' } }, async (request) => {
    const { db } = requestContext(deps(), request);
    const { rows } = await sql<{ workspace_id: string }>`select workspace_id from people`.execute(db);
    const studies = await db.selectFrom('studies').select('workspace_id').execute();
    const scope = await sql<{ scope: string | null }>`select nullif(current_setting('app.workspace_id', true), '') as scope`.execute(db);
    return { people: rows.map((row) => row.workspace_id), studies: studies.map((row) => row.workspace_id), scope: scope.rows[0]?.scope ?? null };
  });
}

let service: TestService;
let unwalled: TestService;
let first: Tenant;
let second: Tenant;

beforeAll(async () => {
  service = await startTestService({}, { extraRoutes: (app) => forgetfulRoutes(app, () => service.deps) });
  unwalled = await startTestService({ rowLevelSecurity: false }, { database: service.database, extraRoutes: (app) => forgetfulRoutes(app, () => unwalled.deps) });
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
    const asFirst = service.deps.tenantDb(first.workspaceId);
    const write = await asFirst.updateTable('people').set({ first_name: 'Mallory' }).where('workspace_id', '=', second.workspaceId).executeTakeFirst();
    expect(Number(write.numUpdatedRows)).toBe(0);
    const insert = asFirst.insertInto('teams').values({ workspace_id: second.workspaceId, team_id: 'team_rls_probe', name: 'Probe' } as never).execute();
    await expect(insert).rejects.toThrow(/row-level security/);
  });

  it('keeps the service secrets from the tenant role', async () => {
    await expect(sql`select * from service_secrets`.execute(service.deps.tenantDb(first.workspaceId))).rejects.toThrow(/permission denied/);
  });

  it('leaves work outside a request (jobs, migrations) as the owner, seeing every workspace', async () => {
    const { rows } = await sql<{ workspaces: number }>`select count(distinct workspace_id)::int as workspaces from people`.execute(service.deps.db);
    expect(rows[0]!.workspaces).toBeGreaterThanOrEqual(2);
  });

  it("switches a connection between workspaces and back to the owner as its handles take it", async () => {
    // One store, one pool: the handles of two workspaces and the owner's take turns on its connections.
    const seenBy = async (db: TestService['deps']['db']) => (await sql<{ workspace_id: string }>`select distinct workspace_id from people`.execute(db)).rows.map((row) => row.workspace_id);
    for (let round = 0; round < 3; round++) {
      expect(await seenBy(service.deps.tenantDb(first.workspaceId))).toEqual([first.workspaceId]);
      expect(await seenBy(service.deps.tenantDb(second.workspaceId))).toEqual([second.workspaceId]);
      expect((await seenBy(service.deps.db)).length).toBeGreaterThanOrEqual(2);
    }
  });

  it("finds a participant link by its digest from any scope without switching the connection, and lends the tenant nothing else", async () => {
    const digest = Buffer.alloc(32, 7);
    const scopeOf = async (db: TestService['deps']['db']) =>
      (await sql<{ role: string; scope: string }>`select current_setting('role') as role, coalesce(current_setting('app.workspace_id', true), '') as scope`.execute(db)).rows[0]!;
    // The connection serves the first workspace (a pool hands back the connection released last;
    // the embedded store has one); the lookup through anyScopeDb answers and leaves it there.
    expect((await scopeOf(service.deps.tenantDb(first.workspaceId))).scope).toBe(first.workspaceId);
    const { rows } = await sql<{ workspace_id: string }>`select workspace_id from participant_link_by_digest(${digest})`.execute(service.deps.anyScopeDb);
    expect(rows).toEqual([]);
    expect(await scopeOf(service.deps.anyScopeDb)).toEqual({ role: 'recruit_tenant', scope: first.workspaceId });
    // In the tenant's scope the table itself still shows only its own workspace's links.
    const seen = await sql<{ n: number }>`select count(*)::int as n from participant_links where workspace_id <> ${first.workspaceId}`.execute(service.deps.tenantDb(first.workspaceId));
    expect(seen.rows[0]!.n).toBe(0);
    // Nobody but the tenant role (and the owner) may call it.
    const { rows: grants } = await sql<{ grantee: string }>`
      select grantee::regrole::text as grantee from (select (aclexplode(proacl)).grantee from pg_proc where proname = 'participant_link_by_digest') g`.execute(service.deps.db);
    expect(grants.map((row) => row.grantee)).not.toContain('-');
    expect(grants.map((row) => row.grantee)).toContain('recruit_tenant');
  });

  it('lets only public and cross-workspace routes reach for the owner\'s handle', () => {
    // Everything else an authenticated request does goes through its workspace's handle
    // (requestContext, deps.tenantDb): the owner's, deps.db, would pass the wall by.
    const families = fileURLToPath(new URL('../families/', import.meta.url));
    const reaching: string[] = [];
    for (const family of readdirSync(families, { withFileTypes: true }).filter((entry) => entry.isDirectory())) {
      for (const file of readdirSync(path.join(families, family.name)).filter((name) => /routes\.ts$/.test(name))) {
        const uses = readFileSync(path.join(families, family.name, file), 'utf8').match(/deps\.db\b/g)?.length ?? 0;
        if (uses > 0) reaching.push(`${family.name}/${file}: ${uses}`);
      }
    }
    // The signup form, the unsubscribe link and a host's calendar feed URL are public (no token,
    // no workspace until the row is read; the feed's sessions are then read through its
    // workspace's handle); the test helpers act for the caller's workspace (scopeOf) or, for the
    // operator token, for any, in tests only.
    // The console's sign-in routes are public too: the workspace is known once the link, the
    // session cookie, the workspace's slug or the single sign-on attempt is read (a session's own
    // reads then go through its workspace's handle).
    expect(reaching.sort()).toEqual(['calendar-feeds/routes.ts: 1', 'messages/send-routes.ts: 2', 'sign-in/routes.ts: 5', 'sign-in/sso-routes.ts: 3', 'signups/routes.ts: 1', 'test-helpers/routes.ts: 3']);
  });

  it('serves the API as before through the wall: a person created and read back', async () => {
    const person = await createPerson(service, first);
    const read = await call(service, 'GET', `/people/${person.personId}`, { token: first.token });
    expect(read.statusCode).toBe(200);
    expect((await call(service, 'GET', `/people/${person.personId}`, { token: second.token })).statusCode).toBe(404);
  });
});
