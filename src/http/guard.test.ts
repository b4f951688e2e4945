import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, storeKind, type Tenant, type TestService } from '../../test/harness.js';

let service: TestService;
let tenant: Tenant;
const connectionErrors: Error[] = [];

beforeAll(async () => {
  service = await startTestService(
    {},
    {
      // Registered after the onRoute checks of the OpenAPI plugin would see them: hidden, so only
      // the authentication hook stands between them and a caller.
      extraRoutes: (app) => {
        app.get('/v1/forgotten-right', { schema: { hide: true } }, async () => ({ secret: true }));
        app.get('/v1/declared-public', { schema: { hide: true }, config: { public: true } }, async () => ({ open: true }));
      },
    },
  );
  tenant = await createTenant(service);
});
afterAll(async () => service.stop());

describe('the route guard', () => {
  it('fails closed: a route that declares neither a right nor public serves nobody, not even a SUPER_ADMIN', async () => {
    for (const token of [undefined, tenant.token]) {
      const response = await call(service, 'GET', '/forgotten-right', { token });
      expect(response.statusCode).toBe(403);
      expect(response.body).toBe('Forbidden');
    }
  });

  it('serves a route declared public without a token', async () => {
    const response = await call(service, 'GET', '/declared-public');
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ open: true });
  });

  it('keeps the reference page public', async () => {
    const page = await service.app.inject({ method: 'GET', url: '/docs/' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toMatch(/text\/html/);
  });
});

describe.runIf(storeKind === 'postgres')('a PostgreSQL connection dropped by the server', () => {
  it('is replaced: the process lives on and the next request is served', async () => {
    expect((await call(service, 'GET', '/me', { token: tenant.token })).statusCode).toBe(200);
    // Another session ends every connection of this test database but its own, as a restart,
    // failover or idle timeout would.
    const { rows } = await sql<{ datname: string }>`select current_database() as datname`.execute(service.deps.db);
    const database = await import('../db/database.js');
    const admin = await database.openDatabase({ databaseUrl: process.env.DATABASE_URL!, poolSize: 1, onConnectionError: (error) => connectionErrors.push(error) });
    await sql`select pg_terminate_backend(pid) from pg_stat_activity where datname = ${rows[0]!.datname} and pid <> pg_backend_pid()`.execute(admin.db);
    await admin.close();
    await new Promise((resolve) => setTimeout(resolve, 200));
    const response = await call(service, 'GET', '/studies', { token: tenant.token });
    expect(response.statusCode, response.body).toBe(200);
  });
});
