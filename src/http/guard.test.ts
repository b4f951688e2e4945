import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, storeKind, type Tenant, type TestService, testDatabaseUrl } from '../../test/harness.js';
import { openDatabase } from '../db/database.js';

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
    // A service on a pool of its own, named, so that only its sessions are ended (other test
    // files share this database).
    const applicationName = `guard-test-${process.pid}-${Date.now()}`;
    const database = await openDatabase({ databaseUrl: testDatabaseUrl, poolSize: 2, applicationName, onConnectionError: (error) => connectionErrors.push(error) });
    const own = await startTestService({}, { database });
    try {
      const owner = await createTenant(own);
      expect((await call(own, 'GET', '/me', { token: owner.token })).statusCode).toBe(200);
      // As a restart, failover or idle timeout would.
      await sql`select pg_terminate_backend(pid) from pg_stat_activity where application_name = ${applicationName}`.execute(service.deps.db);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(connectionErrors.length).toBeGreaterThan(0);
      const response = await call(own, 'GET', '/studies', { token: owner.token });
      expect(response.statusCode, response.body).toBe(200);
    } finally {
      await own.stop();
      await database.close();
    }
  });
});
