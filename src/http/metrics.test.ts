import type { LightMyRequestResponse } from 'fastify';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, storeKind, type Tenant, type TestService, uniqueEmail } from '../../test/harness.js';
import { ConfigError, loadConfig } from '../config.js';
import { IMPORT_QUEUE } from '../families/imports/service.js';
import { csvOf, settleImport, startImport } from '../families/imports/test-support.js';
import { enqueueJob } from '../jobs/queue.js';
import { WebhookReceiver } from '../../test/webhook-receiver.js';

const metricsToken = `metrics-${randomUUID()}`;

/** GET /metrics, with `Authorization: Bearer <token>` when a token is given. */
function scrape(service: TestService, token?: string, remoteAddress?: string): Promise<LightMyRequestResponse> {
  return service.app.inject({ method: 'GET', url: '/metrics', remoteAddress, headers: token === undefined ? {} : { authorization: `Bearer ${token}` } });
}

async function figures(service: TestService): Promise<string> {
  const response = await scrape(service, metricsToken);
  expect(response.statusCode, response.body).toBe(200);
  return response.body;
}

/** The samples of the text format: name, labels and value of every line that is not a comment. */
function samples(text: string) {
  return text
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
      if (!match) throw new Error(`Not a sample line: ${line}`);
      const labels: Record<string, string> = {};
      for (const [, name, value] of match[2]?.matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g) ?? []) labels[name!] = value!;
      return { name: match[1]!, labels, value: Number(match[3]) };
    });
}

/** The value of the sample named `name` whose labels include `labels`; undefined when there is none. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const found = samples(text).filter((candidate) => candidate.name === name && Object.entries(labels).every(([key, value]) => candidate.labels[key] === value));
  if (found.length > 1) throw new Error(`${found.length} samples of ${name} match ${JSON.stringify(labels)}`);
  return found[0]?.value;
}

function expectRefused(response: LightMyRequestResponse) {
  expect(response.statusCode).toBe(401);
  expect(response.headers['content-type']).toMatch(/^text\/plain/);
  expect(response.body).toBe('Unauthorized');
  expect(response.headers['x-request-id']).toBeTruthy();
}

let service: TestService;
let tenant: Tenant;
beforeAll(async () => {
  service = await startTestService({ metricsToken, webhookAllowPrivateTargets: true, webhookAllowHttp: true });
  tenant = await createTenant(service);
});
afterAll(async () => service?.stop());

describe('GET /metrics: who may read it', () => {
  it('answers 401 with the usual body, never the figures, without a token', async () => {
    expectRefused(await scrape(service));
    expectRefused(await scrape(service, ''));
    const basic = await service.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Basic ${Buffer.from(`x:${metricsToken}`).toString('base64')}` } });
    expectRefused(basic);
  });

  it('answers 401 to a wrong token, of the same length or not, and to an API token', async () => {
    expectRefused(await scrape(service, `${metricsToken.slice(0, -1)}${metricsToken.endsWith('0') ? '1' : '0'}`));
    expectRefused(await scrape(service, `${metricsToken}x`));
    expectRefused(await scrape(service, metricsToken.slice(1)));
    expectRefused(await scrape(service, tenant.token));
  });

  it('answers 200 in the Prometheus text format with the token, the process figures included', async () => {
    const response = await scrape(service, metricsToken);
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.headers['x-request-id']).toBeTruthy();
    // Neither an API token's budget nor its headers: the scraper is not a workspace.
    expect(response.headers['x-ratelimit-limit']).toBeUndefined();
    expect(sample(response.body, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
    expect(response.body).toContain('# TYPE nodejs_eventloop_lag_seconds gauge');
    expect(response.body).toContain('# TYPE recruit_ops_http_request_duration_seconds histogram');
  });

  it('is not in the OpenAPI document, like /healthz and /readyz', async () => {
    const document = (await call(service, 'GET', '/openapi.json')).json<{ paths: Record<string, unknown> }>();
    expect(Object.keys(document.paths).filter((path) => /metrics|healthz|readyz/.test(path))).toEqual([]);
  });

  it('is not served when no token is configured (404, as any unknown path)', async () => {
    const bare = await startTestService({ metricsToken: undefined }, { database: service.database });
    try {
      const response = await scrape(bare, metricsToken);
      expect(response.statusCode).toBe(404);
      expect(response.body).toBe('Not Found');
    } finally {
      await bare.stop();
    }
  });

  it('refuses to start on a metrics token shorter than 16 characters or with spaces', () => {
    expect(() => loadConfig({ METRICS_TOKEN: 'short' })).toThrow(ConfigError);
    expect(() => loadConfig({ METRICS_TOKEN: 'sixteen characters, with spaces' })).toThrow(ConfigError);
    expect(() => loadConfig({ METRICS_TOKEN: 'short' })).toThrow(/metricsToken/);
    expect(loadConfig({ METRICS_TOKEN: metricsToken }).metricsToken).toBe(metricsToken);
    expect(loadConfig({ METRICS_TOKEN: '' }).metricsToken).toBeUndefined();
  });
});

describe('GET /metrics: what it counts', () => {
  it('counts requests under their route template, method and status, never the raw URL', async () => {
    const studyId = `stu_${randomUUID().replaceAll('-', '')}`;
    const duration = 'recruit_ops_http_request_duration_seconds_count';
    const route = { method: 'GET', route: '/v1/studies/:studyId', status_code: '404' };
    const before = sample(await figures(service), duration, route) ?? 0;
    expect((await call(service, 'GET', `/studies/${studyId}`, { token: tenant.token })).statusCode).toBe(404);
    expect((await call(service, 'GET', `/studies/${studyId}`, { token: tenant.token })).statusCode).toBe(404);
    expect((await call(service, 'GET', '/me', { token: tenant.token })).statusCode).toBe(200);
    expect((await service.app.inject({ method: 'GET', url: `/nowhere/${studyId}` })).statusCode).toBe(404);

    const text = await figures(service);
    expect(sample(text, duration, route)).toBe(before + 2);
    expect(sample(text, duration, { method: 'GET', route: '/v1/me', status_code: '200' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, duration, { method: 'GET', route: 'unmatched', status_code: '404' })).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'recruit_ops_http_request_duration_seconds_bucket', { ...route, le: '+Inf' })).toBe(before + 2);
    expect(sample(text, 'recruit_ops_http_request_duration_seconds_sum', route)).toBeGreaterThan(0);
    // A refused scrape is a request like any other.
    expect(sample(text, duration, { method: 'GET', route: '/metrics', status_code: '401' })).toBeGreaterThanOrEqual(1);
    expect(text).not.toContain(studyId);
  });

  it('shows a job enqueued as queued for its kind, with the age of the oldest due one', async () => {
    const queue = `test.metrics.${randomUUID().slice(0, 8)}`;
    const now = service.deps.clock.now();
    const jobIds: string[] = [];
    const enqueue = async (runAfter: Date) => {
      jobIds.push((await enqueueJob(service.deps.db, service.deps.clock, { queue, workspaceId: tenant.workspaceId, runAfter })).jobId);
    };
    try {
      await enqueue(new Date(now.getTime() - 90_000));
      await enqueue(now);
      // Not due yet: queued, but not waiting.
      await enqueue(new Date(now.getTime() + 3_600_000));
      const text = await figures(service);
      expect(sample(text, 'recruit_ops_jobs', { queue, state: 'queued' })).toBe(3);
      expect(sample(text, 'recruit_ops_jobs', { queue, state: 'running' })).toBe(0);
      expect(sample(text, 'recruit_ops_jobs', { queue, state: 'failed' })).toBe(0);
      const age = sample(text, 'recruit_ops_jobs_oldest_queued_age_seconds', { queue })!;
      expect(age).toBeGreaterThanOrEqual(90);
      expect(age).toBeLessThan(90 + 60);
      // Every kind this instance runs is there, with or without jobs.
      for (const state of ['queued', 'running', 'failed']) expect(sample(text, 'recruit_ops_jobs', { queue: IMPORT_QUEUE, state })).toBeGreaterThanOrEqual(0);
      expect(sample(text, 'recruit_ops_jobs_oldest_queued_age_seconds', { queue: IMPORT_QUEUE })).toBeGreaterThanOrEqual(0);
    } finally {
      await service.deps.db.deleteFrom('jobs').where('workspace_id', '=', tenant.workspaceId).where('job_id', 'in', jobIds).execute();
    }
    expect(sample(await figures(service), 'recruit_ops_jobs', { queue, state: 'queued' })).toBeUndefined();
  });

  it('counts the rows an import committed, imported and failed', async () => {
    const importer = await createTenant(service);
    const before = await figures(service);
    const imported = sample(before, 'recruit_ops_import_rows_total', { outcome: 'imported' }) ?? 0;
    const failed = sample(before, 'recruit_ops_import_rows_total', { outcome: 'failed' }) ?? 0;
    const csv = csvOf([
      ['email', 'firstName'],
      [uniqueEmail('ada'), 'Ada'],
      ['not an email', 'Nobody'],
      [uniqueEmail('grace'), 'Grace'],
    ]);
    const importId = await startImport(service, importer, csv);
    expect(await settleImport(service, importer, importId)).toMatchObject({ status: 'COMPLETED', rowsImported: 2, rowsFailed: 1 });
    const after = await figures(service);
    expect(sample(after, 'recruit_ops_import_rows_total', { outcome: 'imported' })).toBe(imported + 2);
    expect(sample(after, 'recruit_ops_import_rows_total', { outcome: 'failed' })).toBe(failed + 1);
  });

  it('counts webhook delivery attempts, succeeded and failed', async () => {
    const tenant = await createTenant(service);
    const receiver = await WebhookReceiver.start();
    try {
      receiver.answer = (_delivery, index) => ({ status: index === 0 ? 200 : 500 });
      const before = await figures(service);
      const succeeded = sample(before, 'recruit_ops_webhook_attempts_total', { outcome: 'succeeded' }) ?? 0;
      const failed = sample(before, 'recruit_ops_webhook_attempts_total', { outcome: 'failed' }) ?? 0;
      const endpoint = await call(service, 'POST', '/webhook-endpoints', { token: tenant.token, body: { url: receiver.url(), eventTypes: ['study.status_changed'] } });
      expect(endpoint.statusCode, endpoint.body).toBe(201);
      for (const name of ['One', 'Two']) {
        const study = await call(service, 'POST', '/studies', { token: tenant.token, body: { studyType: 'SURVEY', recruitmentStrategy: 'IN_SERVICE', studyPlan: { name } } });
        expect(study.statusCode, study.body).toBe(201);
        // One at a time, so the first attempt is the one answered 200.
        await service.webhooks.dispatcher.runDue(tenant.workspaceId);
      }
      const after = await figures(service);
      expect(sample(after, 'recruit_ops_webhook_attempts_total', { outcome: 'succeeded' })).toBe(succeeded + 1);
      expect(sample(after, 'recruit_ops_webhook_attempts_total', { outcome: 'failed' })).toBe(failed + 1);
    } finally {
      await receiver.close();
    }
  });

  it(`shows the ${storeKind === 'postgres' ? "pool's connections" : "embedded store's queue"}`, async () => {
    // The writes above left audit entries and a key's last use to write in the background: written first, they wait for no scrape.
    await service.audit.flush();
    await service.keyUsage.flush();
    const text = await figures(service);
    if (storeKind === 'postgres') {
      expect(sample(text, 'recruit_ops_db_pool_connections')).toBeGreaterThanOrEqual(1);
      expect(sample(text, 'recruit_ops_db_pool_idle_connections')).toBeGreaterThanOrEqual(0);
      expect(sample(text, 'recruit_ops_db_pool_waiting_requests')).toBeGreaterThanOrEqual(0);
      expect(sample(text, 'recruit_ops_db_pool_max_connections')).toBe(5);
      expect(text).not.toContain('recruit_ops_db_queue');
    } else {
      // The scrape's own job query held the connection; nothing else waits in this file.
      expect(sample(text, 'recruit_ops_db_queue_depth')).toBe(0);
      expect(sample(text, 'recruit_ops_db_queue_oldest_wait_seconds')).toBe(0);
      expect(sample(text, 'recruit_ops_db_queue_wait_seconds_count')).toBeGreaterThan(0);
      expect(sample(text, 'recruit_ops_db_queue_wait_seconds_bucket', { le: '+Inf' })).toBe(sample(text, 'recruit_ops_db_queue_wait_seconds_count'));
      expect(text).not.toContain('recruit_ops_db_pool');
    }
  });
});

describe('GET /metrics: rate-limit refusals', () => {
  // A second service in the same process, on the same database, with small budgets: each has a
  // registry of its own, so neither clashes with the other nor sees the other's counts.
  let limited: TestService;
  beforeAll(async () => {
    limited = await startTestService({ metricsToken, rateLimitMax: 2, signupRateLimitMax: 1 }, { database: service.database });
  });
  afterAll(async () => limited?.stop());

  const refusals = async (reason: string) => sample(await figures(limited), 'recruit_ops_rate_limit_refusals_total', { reason }) ?? 0;

  it('counts refusals by the budget spent: a token, an address, the signup budget', async () => {
    const { token } = await tenant.tokenFor('OBSERVER');
    for (let sent = 0; sent < 2; sent++) expect((await call(limited, 'GET', '/me', { token })).statusCode).toBe(200);
    expect((await call(limited, 'GET', '/me', { token })).statusCode).toBe(429);
    expect((await call(limited, 'GET', '/me', { token })).statusCode).toBe(429);

    const address = '198.51.100.20';
    const fromAddress = () => limited.app.inject({ method: 'GET', url: '/v1/me', remoteAddress: address, headers: { authorization: 'Bearer garbage' } });
    for (let sent = 0; sent < 2; sent++) expect((await fromAddress()).statusCode).toBe(401);
    expect((await fromAddress()).statusCode).toBe(429);

    const submit = () => limited.app.inject({ method: 'POST', url: '/v1/public/signups/sgn_missing/submissions', remoteAddress: '198.51.100.21', payload: { email: uniqueEmail() } });
    expect((await submit()).statusCode).not.toBe(429);
    expect((await submit()).statusCode).toBe(429);

    expect(await refusals('token')).toBe(2);
    expect(await refusals('address')).toBe(1);
    expect(await refusals('signup')).toBe(1);
    // The first service counted none of them.
    expect(sample(await figures(service), 'recruit_ops_rate_limit_refusals_total', { reason: 'token' })).toBeUndefined();
  });

  it('never draws on a rate-limit budget itself, from an address that spent its own', async () => {
    const address = '198.51.100.22';
    for (let sent = 0; sent < 3; sent++) await limited.app.inject({ method: 'GET', url: '/v1/me', remoteAddress: address });
    for (let sent = 0; sent < 5; sent++) expect((await scrape(limited, metricsToken, address)).statusCode).toBe(200);
    expectRefused(await scrape(limited, 'wrong-token-but-long-enough', address));
  });
});
