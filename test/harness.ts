import { randomBytes } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { readFileSync } from 'node:fs';
import { inject } from 'vitest';
import { type BuildOptions, buildService, type Service } from '../src/app.js';
import { createClock } from '../src/clock.js';
import { type Config, loadConfig } from '../src/config.js';
import { type Database, openDatabase } from '../src/db/database.js';
import type { UserRole } from '../src/db/schema.js';
import { createCustomRole, createToken, createUser, createWorkspace, type TokenRights } from '../src/families/workspaces/service.js';
import { rightsByRole, type Right } from '../src/http/rights.js';

/** The run's own PostgreSQL database (see global-setup.ts), or undefined for the embedded store. */
export const testDatabaseUrl: string | undefined = inject('databaseUrl');
const embeddedTemplatePath: string | undefined = inject('embeddedTemplatePath');
let embeddedTemplate: Blob | undefined;

/** The run's migrated embedded store, as a dump a new store starts from (undefined on PostgreSQL, or outside vitest's run). */
export function migratedTemplate(): Blob | undefined {
  if (embeddedTemplatePath) embeddedTemplate ??= new Blob([readFileSync(embeddedTemplatePath)]);
  return embeddedTemplate;
}

/** A test's own store: the run's PostgreSQL database, or an in-memory one started from the run's migrated template. */
export async function openTestDatabase(poolSize = 5): Promise<Database> {
  if (testDatabaseUrl) return openDatabase({ databaseUrl: testDatabaseUrl, poolSize });
  return openDatabase({ inMemory: true, startFrom: migratedTemplate() });
}

export const storeKind = testDatabaseUrl ? 'postgres' : 'embedded';

export interface TestService extends Service {
  database: Database;
  /** Closes the service and its database. */
  stop(): Promise<void>;
}

/**
 * A service on a fresh embedded database, or on the shared PostgreSQL test database; or on
 * `options.database` when given (see test/private-database.ts), which stop() then leaves open.
 */
export async function startTestService(overrides: Partial<Config> = {}, options: Partial<BuildOptions> = {}): Promise<TestService> {
  // The rate limits and the searches' budget of time are lifted (a test's many quick calls would
  // trip them); their own tests set them.
  const config = loadConfig(
    { ...process.env, DATABASE_URL: testDatabaseUrl ?? '', REDIS_URL: '', LOG_LEVEL: 'silent', JOBS: 'off', WEBHOOK_DELIVERY: 'off', MAIL_DELIVERY: 'off' },
    { testHelpers: true, testHelpersToken: operatorToken, rateLimitMax: 100_000, signupRateLimitMax: 100_000, openapiRateLimitMax: 100_000, participantRateLimitMax: 100_000, participantLinkRateLimitMax: 100_000, searchBudgetMsPerSecond: 0, ...overrides },
  );
  const owned = options.database === undefined;
  const database = options.database ?? (await openTestDatabase());
  const service = await buildService({ config, clock: createClock(), logger: false, ...options, database });
  return {
    ...service,
    database,
    stop: async () => {
      await service.close();
      if (owned) await database.close();
    },
  };
}

let emailCounter = 0;
export const uniqueEmail = (prefix = 'user') => `${prefix}.${Date.now().toString(36)}.${(emailCounter++).toString(36)}@example.test`;

export interface Tenant {
  workspaceId: string;
  userId: string;
  /** A SUPER_ADMIN token with every right. */
  token: string;
  /**
   * A token for a new user of that role in this workspace. A CUSTOM user gets a new custom role
   * holding `customRights` (by default OBSERVER's: what CUSTOM users could do before custom roles).
   */
  tokenFor(role: UserRole, rights?: TokenRights, customRights?: readonly Right[]): Promise<{ token: string; userId: string }>;
}

/** A new workspace with a SUPER_ADMIN, made through the same service as `cli workspace create`. */
export async function createTenant(service: Service, name = 'Test workspace'): Promise<Tenant> {
  const db = service.deps.db;
  const created = await createWorkspace(db, { name, email: uniqueEmail('admin') });
  return {
    ...created,
    async tokenFor(role, rights = {}, customRights = rightsByRole.OBSERVER) {
      const customRoleId =
        role === 'CUSTOM' ? (await createCustomRole(db, created.workspaceId, `Custom ${uniqueEmail('role')}`, customRights)).customRoleId : undefined;
      const { userId } = await createUser(db, { workspaceId: created.workspaceId, email: uniqueEmail(role.toLowerCase()), role, ...(customRoleId ? { customRoleId } : {}) });
      const { token } = await createToken(db, created.workspaceId, userId, rights);
      return { token, userId };
    },
  };
}

export interface CallOptions {
  token?: string;
  body?: unknown;
  query?: Record<string, string>;
  headers?: Record<string, string>;
}

/** One request through Fastify's inject (no socket), with the bearer token when given. */
export function call(service: Service, method: string, url: string, options: CallOptions = {}): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  return service.app.inject({
    method: method as 'GET',
    url: `/v1${url}`,
    headers,
    query: options.query,
    ...(options.body !== undefined ? { payload: options.body as object } : {}),
  });
}

const helperTokens = new WeakMap<object, Promise<string>>();

/**
 * A SUPER_ADMIN token of `service`, for the test-helper routes (which answer no other role):
 * made once per service, in a workspace of its own ("Test helpers").
 */
export function superAdminToken(service: Service): Promise<string> {
  let token = helperTokens.get(service.app);
  if (!token) {
    token = createTenant(service, 'Test helpers').then((tenant) => tenant.token);
    // A failed attempt is not remembered: the next call tries again.
    token.catch(() => helperTokens.delete(service.app));
    helperTokens.set(service.app, token);
  }
  return token;
}

/**
 * The operator token of the test services (TEST_HELPERS_TOKEN): the clock and every workspace's
 * due work answer it alone, no workspace token.
 */
export const operatorToken = `operator-${randomBytes(24).toString('base64url')}`;

/**
 * One request to a test-helper route (`path` below /v1/test-helpers): with `options.token` when
 * given (a tenant's own SUPER_ADMIN token, held to its workspace), else the operator token.
 */
export async function callTestHelper(service: Service, method: string, path: string, options: CallOptions = {}): Promise<LightMyRequestResponse> {
  return call(service, method, `/test-helpers${path}`, { ...options, token: options.token ?? operatorToken });
}
