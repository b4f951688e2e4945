import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, testDatabaseUrl, type Tenant, type TestService } from '../../test/harness.js';
import { type Database, openDatabase } from '../db/database.js';
import { setUserStatus } from '../families/workspaces/service.js';

const authCacheSeconds = 1;

let service: TestService;
let tenant: Tenant;
/**
 * Where "another process" writes: on PostgreSQL a connection pool of its own, as the CLI or
 * another instance would have; the embedded store has one handle per data directory.
 */
let elsewhere: Database | undefined;

beforeAll(async () => {
  service = await startTestService({ authCacheSeconds });
  tenant = await createTenant(service);
  if (testDatabaseUrl) elsewhere = await openDatabase({ databaseUrl: testDatabaseUrl, poolSize: 1 });
});
afterAll(async () => {
  await elsewhere?.close();
  await service.stop();
});

const otherWriter = () => elsewhere?.db ?? service.deps.db;

describe('authentication cache', () => {
  it("refuses a user deactivated elsewhere within AUTH_CACHE_SECONDS, without being told", async () => {
    const { token, userId } = await tenant.tokenFor('RESEARCHER');
    expect((await call(service, 'GET', '/me', { token })).statusCode).toBe(200);

    await setUserStatus(otherWriter(), tenant.workspaceId, userId, 'DEACTIVATED');
    await sleep(authCacheSeconds * 1000 + 200);

    const response = await call(service, 'GET', '/me', { token });
    expect(response.statusCode).toBe(401);
    expect(response.body).toBe('Unauthorized');
  });

  it('refuses a token revoked elsewhere within AUTH_CACHE_SECONDS', async () => {
    const { token, userId } = await tenant.tokenFor('RESEARCHER');
    expect((await call(service, 'GET', '/me', { token })).statusCode).toBe(200);

    await sql`update api_tokens set revoked_at = now() where workspace_id = ${tenant.workspaceId} and user_id = ${userId}`.execute(otherWriter());
    await sleep(authCacheSeconds * 1000 + 200);

    expect((await call(service, 'GET', '/me', { token })).statusCode).toBe(401);
  });

  it("sees a change of role made elsewhere within AUTH_CACHE_SECONDS", async () => {
    const { token, userId } = await tenant.tokenFor('OBSERVER');
    const body = { studyType: 'INTERVIEWS', recruitmentStrategy: 'IN_SERVICE', studyPlan: { name: 'Promoted' } };
    expect((await call(service, 'POST', '/studies', { token, body })).statusCode).toBe(403);

    await sql`update users set role = 'RESEARCHER' where workspace_id = ${tenant.workspaceId} and user_id = ${userId}`.execute(otherWriter());
    await sleep(authCacheSeconds * 1000 + 200);

    expect((await call(service, 'POST', '/studies', { token, body })).statusCode).toBe(201);
  });

  it('refuses at once a user deactivated through this process (invalidateUser)', async () => {
    const { token, userId } = await tenant.tokenFor('RESEARCHER');
    expect((await call(service, 'GET', '/me', { token })).statusCode).toBe(200);
    await setUserStatus(service.deps.db, tenant.workspaceId, userId, 'DEACTIVATED');
    service.deps.principals.invalidateUser(tenant.workspaceId, userId);
    expect((await call(service, 'GET', '/me', { token })).statusCode).toBe(401);
  });
});
