import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type Tenant, type TestService, uniqueEmail } from '../../../test/harness.js';
import { LogCapture } from '../../../test/log-capture.js';
import { IDEMPOTENCY_LEASE_SECONDS } from './plugin.js';
import { IDEMPOTENCY_RETENTION_HOURS, pruneIdempotencyKeysHandler } from './prune.js';

/** Handlers of the test-only routes below, so tests decide when and how they answer. */
let flakyCalls = 0;
let slowRuns = 0;
const gates: (() => void)[] = [];
const waitForGate = () => new Promise<void>((resolve) => gates.push(resolve));

let service: TestService;
beforeAll(async () => {
  service = await startTestService(
    {},
    {
      extraRoutes: (app) => {
        // Fails the way a bug does on every odd call.
        app.post('/v1/test-only/flaky', { config: { right: 'studies:write' } }, async (_request, reply) => {
          flakyCalls++;
          if (flakyCalls % 2 === 1) throw new Error('flaky');
          return reply.code(201).send({ call: flakyCalls });
        });
        // Runs until the test opens its gate.
        app.post('/v1/test-only/slow', { config: { right: 'studies:write' } }, async (_request, reply) => {
          slowRuns++;
          const run = slowRuns;
          await waitForGate();
          return reply.code(201).send({ run });
        });
      },
    },
  );
});
afterAll(async () => service.stop());

const withKey = (key: string) => ({ 'idempotency-key': key });

function createPopulation(tenant: Tenant, body: object, key?: string, token = tenant.token) {
  return call(service, 'POST', '/populations', { token, body, headers: key === undefined ? {} : withKey(key) });
}

async function populationNames(tenant: Tenant): Promise<string[]> {
  const rows = await service.deps.db.selectFrom('populations').select('name').where('workspace_id', '=', tenant.workspaceId).orderBy('name').execute();
  return rows.map((row) => row.name);
}

const reservation = (tenant: Tenant, key: string) =>
  service.deps.db.selectFrom('idempotency_keys').selectAll().where('workspace_id', '=', tenant.workspaceId).where('idempotency_key', '=', key).executeTakeFirst();

describe('Idempotency-Key on POST routes', () => {
  it('replays the first response to a retry (Idempotent-Replayed: true), and the handler runs once', async () => {
    const tenant = await createTenant(service);
    const first = await createPopulation(tenant, { name: 'Panel A', description: 'x' }, 'key-1');
    expect(first.statusCode).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const again = await createPopulation(tenant, { description: 'x', name: 'Panel A' }, 'key-1');
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.headers['content-type']).toBe(first.headers['content-type']);
    expect(again.body).toBe(first.body);
    expect(again.headers['x-ratelimit-remaining']).toBeDefined();
    expect(await populationNames(tenant)).toEqual(['Panel A']);
    expect(await reservation(tenant, 'key-1')).toMatchObject({ response_status: 201, lease_token: null, locked_until: null, completed_at: expect.any(String) });
  });

  it('refuses the same key with another body, route, or caller: 400 naming Idempotency-Key', async () => {
    const tenant = await createTenant(service);
    expect((await createPopulation(tenant, { name: 'Panel B' }, 'key-2')).statusCode).toBe(201);
    const { token: otherUser } = await tenant.tokenFor('SUPER_ADMIN');
    const refusals = [
      await createPopulation(tenant, { name: 'Panel C' }, 'key-2'),
      await call(service, 'POST', '/studies', {
        token: tenant.token,
        headers: withKey('key-2'),
        body: { studyType: 'SURVEY', recruitmentStrategy: 'IN_SERVICE', studyPlan: { name: 'S' } },
      }),
      await createPopulation(tenant, { name: 'Panel B' }, 'key-2', otherUser),
    ];
    for (const response of refusals) {
      expect(response.statusCode, response.body).toBe(400);
      expect(response.json()).toEqual({ errors: [{ message: 'This Idempotency-Key was already used with a different request', path: ['Idempotency-Key'] }] });
    }
    expect(await populationNames(tenant)).toEqual(['Panel B']);
  });

  it('scopes keys to the workspace', async () => {
    const tenant = await createTenant(service);
    const other = await createTenant(service, 'Other');
    expect((await createPopulation(tenant, { name: 'Mine' }, 'shared')).statusCode).toBe(201);
    const theirs = await createPopulation(other, { name: 'Mine' }, 'shared');
    expect(theirs.statusCode).toBe(201);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
    expect(await populationNames(other)).toEqual(['Mine']);
  });

  it('refuses a key that is empty, longer than 255 characters or not printable ASCII (400, nothing runs)', async () => {
    const tenant = await createTenant(service);
    for (const key of ['', 'k'.repeat(256), 'tab\there', 'caf\u00e9']) {
      const response = await call(service, 'POST', '/populations', { token: tenant.token, body: { name: 'Never' }, headers: { 'idempotency-key': key } });
      expect(response.statusCode, JSON.stringify(key)).toBe(400);
      expect(response.json().errors[0].path, JSON.stringify(key)).toEqual(['Idempotency-Key']);
    }
    expect(await populationNames(tenant)).toEqual([]);
    expect((await createPopulation(tenant, { name: 'Longest key' }, `~ ${'k'.repeat(253)}`)).statusCode).toBe(201);
  });

  it('stores answers of the handler (4xx too), but not refusals before it: validation, auth', async () => {
    const tenant = await createTenant(service);
    const email = uniqueEmail('dup');
    expect((await call(service, 'POST', '/people', { token: tenant.token, body: { email } })).statusCode).toBe(201);
    const duplicate = await call(service, 'POST', '/people', { token: tenant.token, body: { email }, headers: withKey('dup') });
    expect(duplicate.statusCode).toBe(409);
    const replay = await call(service, 'POST', '/people', { token: tenant.token, body: { email }, headers: withKey('dup') });
    expect(replay.statusCode).toBe(409);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toBe(duplicate.body);

    const invalid = await createPopulation(tenant, { name: '' }, 'fix-then-retry');
    expect(invalid.statusCode).toBe(400);
    const { token: observer } = await tenant.tokenFor('OBSERVER');
    expect((await createPopulation(tenant, { name: 'Fixed' }, 'fix-then-retry', observer)).statusCode).toBe(403);
    expect((await createPopulation(tenant, { name: 'Fixed' }, 'fix-then-retry', 'bad-token')).statusCode).toBe(401);
    expect(await reservation(tenant, 'fix-then-retry')).toBeUndefined();
    const fixed = await createPopulation(tenant, { name: 'Fixed' }, 'fix-then-retry');
    expect(fixed.statusCode).toBe(201);
    expect(fixed.headers['idempotent-replayed']).toBeUndefined();
  });

  it('does not store a 5xx: the key is released and a retry runs again', async () => {
    const tenant = await createTenant(service);
    flakyCalls = 0;
    const failed = await call(service, 'POST', '/test-only/flaky', { token: tenant.token, headers: withKey('flaky') });
    expect(failed.statusCode).toBe(500);
    expect(await reservation(tenant, 'flaky')).toBeUndefined();
    const retried = await call(service, 'POST', '/test-only/flaky', { token: tenant.token, headers: withKey('flaky') });
    expect(retried.statusCode).toBe(201);
    expect(retried.json()).toEqual({ call: 2 });
    const replayed = await call(service, 'POST', '/test-only/flaky', { token: tenant.token, headers: withKey('flaky') });
    expect(replayed.json()).toEqual({ call: 2 });
    expect(flakyCalls).toBe(2);
  });

  it('answers 409 while the first request with the key is still running, then replays its answer', async () => {
    const tenant = await createTenant(service);
    const runsBefore = slowRuns;
    const first = call(service, 'POST', '/test-only/slow', { token: tenant.token, headers: withKey('slow') });
    await expect.poll(() => slowRuns).toBe(runsBefore + 1);
    const during = await call(service, 'POST', '/test-only/slow', { token: tenant.token, headers: withKey('slow') });
    expect(during.statusCode).toBe(409);
    expect(during.json()).toEqual({ errors: [{ message: 'A request with this Idempotency-Key is still in progress; retry later', path: ['Idempotency-Key'] }] });
    gates.shift()!();
    expect((await first).statusCode).toBe(201);
    const after = await call(service, 'POST', '/test-only/slow', { token: tenant.token, headers: withKey('slow') });
    expect(after.statusCode).toBe(201);
    expect(after.headers['idempotent-replayed']).toBe('true');
    expect(after.json()).toEqual({ run: runsBefore + 1 });
    expect(slowRuns).toBe(runsBefore + 1);
  });

  it(`lets a retry take over a key whose lease (${IDEMPOTENCY_LEASE_SECONDS} s) lapsed, as after a crash; the stale request stores nothing`, async () => {
    const tenant = await createTenant(service);
    const runsBefore = slowRuns;
    const stale = call(service, 'POST', '/test-only/slow', { token: tenant.token, headers: withKey('crash') });
    await expect.poll(() => slowRuns).toBe(runsBefore + 1);
    await service.deps.db
      .updateTable('idempotency_keys')
      .set({ locked_until: new Date(Date.now() - 1000).toISOString() })
      .where('workspace_id', '=', tenant.workspaceId)
      .where('idempotency_key', '=', 'crash')
      .execute();
    const retry = call(service, 'POST', '/test-only/slow', { token: tenant.token, headers: withKey('crash') });
    await expect.poll(() => slowRuns).toBe(runsBefore + 2);
    gates.shift()!();
    gates.shift()!();
    expect((await stale).json()).toEqual({ run: runsBefore + 1 });
    expect((await retry).json()).toEqual({ run: runsBefore + 2 });
    const replay = await call(service, 'POST', '/test-only/slow', { token: tenant.token, headers: withKey('crash') });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json()).toEqual({ run: runsBefore + 2 });
  });

  it('runs one of simultaneous requests with one key; the others get 409 or the replay', async () => {
    const tenant = await createTenant(service);
    // Studies have no unique field: without the key, every request would make one.
    const body = { studyType: 'SURVEY', recruitmentStrategy: 'IN_SERVICE', studyPlan: { name: 'Once' } };
    const responses = await Promise.all(Array.from({ length: 5 }, () => call(service, 'POST', '/studies', { token: tenant.token, body, headers: withKey('race') })));
    for (const response of responses) expect([201, 409], response.body).toContain(response.statusCode);
    expect(responses.filter((response) => response.statusCode === 201 && response.headers['idempotent-replayed'] === undefined)).toHaveLength(1);
    const studies = await service.deps.db.selectFrom('studies').select('study_id').where('workspace_id', '=', tenant.workspaceId).execute();
    expect(studies).toHaveLength(1);
  });

  it('is refused on POST /imports (streamed CSV) and ignored on other methods', async () => {
    const tenant = await createTenant(service);
    const imported = await call(service, 'POST', '/imports', {
      token: tenant.token,
      body: 'email\nx@example.org\n',
      headers: { 'content-type': 'text/csv', ...withKey('csv') },
    });
    expect(imported.statusCode).toBe(400);
    expect(imported.json()).toEqual({ errors: [{ message: 'POST /v1/imports does not take an Idempotency-Key', path: ['Idempotency-Key'] }] });
    const read = await call(service, 'GET', '/populations', { token: tenant.token, headers: withKey('read') });
    expect(read.statusCode).toBe(200);
    expect(await reservation(tenant, 'read')).toBeUndefined();
  });
});

describe('the lease of a request that runs long', () => {
  const LEASE_SECONDS = 1.5;
  const logs = new LogCapture();
  let short: TestService;
  let longRuns = 0;
  const longGates: (() => void)[] = [];
  beforeAll(async () => {
    short = await startTestService(
      { logLevel: 'warn' },
      {
        logger: true,
        logStream: logs,
        idempotencyLeaseSeconds: LEASE_SECONDS,
        extraRoutes: (app) => {
          app.post('/v1/test-only/long', { config: { right: 'studies:write' } }, async (_request, reply) => {
            longRuns++;
            const run = longRuns;
            await new Promise<void>((resolve) => longGates.push(resolve));
            return reply.code(201).send({ run });
          });
        },
      },
    );
  });
  afterAll(async () => short.stop());

  const callLong = (tenant: Tenant, key: string) => call(short, 'POST', '/test-only/long', { token: tenant.token, headers: withKey(key) });
  const keyRow = (tenant: Tenant, key: string) =>
    short.deps.db.selectFrom('idempotency_keys').selectAll().where('workspace_id', '=', tenant.workspaceId).where('idempotency_key', '=', key).executeTakeFirstOrThrow();

  it(`is renewed while the handler runs: a retry after the first lease (${LEASE_SECONDS} s) would have lapsed gets 409, and the handler runs once`, async () => {
    const tenant = await createTenant(short);
    const runsBefore = longRuns;
    const first = callLong(tenant, 'long');
    await expect.poll(() => longRuns).toBe(runsBefore + 1);
    const reservedUntil = (await keyRow(tenant, 'long')).locked_until!;
    await sleep(LEASE_SECONDS * 2.5 * 1000);
    const renewed = await keyRow(tenant, 'long');
    expect(Date.parse(renewed.locked_until!)).toBeGreaterThan(Date.parse(reservedUntil));
    expect(Date.parse(renewed.locked_until!)).toBeGreaterThan(Date.now());
    const retry = await callLong(tenant, 'long');
    expect(retry.statusCode, retry.body).toBe(409);
    expect(longRuns).toBe(runsBefore + 1);
    longGates.shift()!();
    expect((await first).json()).toEqual({ run: runsBefore + 1 });
    expect(await keyRow(tenant, 'long')).toMatchObject({ response_status: 201, lease_token: null, locked_until: null });
    // Renewal stopped with the response: nothing writes the key any more.
    await sleep(LEASE_SECONDS * 1000);
    expect(await keyRow(tenant, 'long')).toMatchObject({ response_status: 201, lease_token: null, locked_until: null });
    const replay = await callLong(tenant, 'long');
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(logs.lines().filter((line) => line.level >= 40)).toEqual([]);
  });

  it('logs a warning when the lease was lost and the response could not be stored', async () => {
    const tenant = await createTenant(short);
    const runsBefore = longRuns;
    const stale = callLong(tenant, 'lost');
    await expect.poll(() => longRuns).toBe(runsBefore + 1);
    // Another request took the key over, as after this instance stalled past its lease.
    await short.deps.db
      .updateTable('idempotency_keys')
      .set({ lease_token: 'taken-over' })
      .where('workspace_id', '=', tenant.workspaceId)
      .where('idempotency_key', '=', 'lost')
      .execute();
    longGates.shift()!();
    const response = await stale;
    expect(response.statusCode).toBe(201);
    expect(logs.forRequest(String(response.headers['x-request-id']))).toContainEqual(
      expect.objectContaining({ level: 40, idempotencyKey: 'lost', msg: expect.stringMatching(/^idempotency: the lease on the key was lost before the response was stored/) }),
    );
    expect(await keyRow(tenant, 'lost')).toMatchObject({ lease_token: 'taken-over', response_status: null });
  });
});

describe(`the idempotency key prune (after ${IDEMPOTENCY_RETENTION_HOURS} hours)`, () => {
  it('deletes finished keys older than the retention, and lapsed ones; keeps the rest', async () => {
    const tenant = await createTenant(service);
    const now = new Date('2026-11-20T12:00:00.000Z');
    const hoursAgo = (hours: number) => new Date(now.getTime() - hours * 3600 * 1000).toISOString();
    const row = (key: string, createdHoursAgo: number, finished: boolean, leaseHoursFromNow = 0) => ({
      workspace_id: tenant.workspaceId,
      idempotency_key: key,
      fingerprint: 'f',
      lease_token: finished ? null : 'lease',
      locked_until: finished ? null : hoursAgo(-leaseHoursFromNow),
      response_status: finished ? 201 : null,
      response_content_type: finished ? 'application/json' : null,
      response_body: finished ? '{}' : null,
      created_at: hoursAgo(createdHoursAgo),
      completed_at: finished ? hoursAgo(createdHoursAgo) : null,
    });
    await service.deps.db
      .insertInto('idempotency_keys')
      .values([row('old', 25, true), row('young', 23, true), row('old-lapsed', 25, false, -24), row('old-running', 25, false, 1)])
      .execute();
    const handler = pruneIdempotencyKeysHandler(service.deps.db, () => now);
    // A job of the tenant's workspace prunes its keys alone: other files' keys on a shared database stay.
    const result = await handler.run({ jobId: 'j', queue: handler.queue, workspaceId: tenant.workspaceId, payload: {}, singletonKey: null, attempt: 1, maxAttempts: 1, signal: new AbortController().signal });
    expect(result).toEqual({ deleted: 2 });
    const kept = await service.deps.db.selectFrom('idempotency_keys').select('idempotency_key').where('workspace_id', '=', tenant.workspaceId).orderBy('idempotency_key').execute();
    expect(kept.map((item) => item.idempotency_key)).toEqual(['old-running', 'young']);
  });
});

describe('the OpenAPI description', () => {
  it('documents Idempotency-Key on every authenticated POST but POST /imports and POST /backfills (streamed CSV) and the session cookie routes, and the replay header', async () => {
    const document = (await service.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json<{
      paths: Record<string, Record<string, { security?: unknown[]; parameters?: { in: string; name: string; required?: boolean }[]; responses: Record<string, { headers?: object }> }>>;
    }>();
    const posts = Object.entries(document.paths).flatMap(([path, item]) => (item.post ? [[path, item.post] as const] : []));
    expect(posts.length).toBeGreaterThan(5);
    for (const [path, operation] of posts) {
      const header = operation.parameters?.find((parameter) => parameter.in === 'header' && parameter.name === 'Idempotency-Key');
      // The console's session routes (the cookie alone reaches them) sign in and out: no key to replay, and none documented.
      const sessionOnly = operation.security?.length === 1 && 'sessionCookie' in (operation.security[0] as object);
      if (path === '/imports' || path === '/backfills' || !operation.security?.length || sessionOnly) {
        expect(header, path).toBeUndefined();
        continue;
      }
      expect(header, path).toMatchObject({ required: false });
      const success = Object.entries(operation.responses).find(([status]) => status.startsWith('2'))![1];
      expect(Object.keys(success.headers ?? {}), path).toContain('Idempotent-Replayed');
      expect(operation.responses['409'], path).toBeDefined();
    }
  });
});
