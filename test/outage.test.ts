import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClock } from '../src/clock.js';
import { loadConfig } from '../src/config.js';
import { buildService, type Service } from '../src/app.js';
import { openDatabase } from '../src/db/database.js';
import { createWorkspace } from '../src/families/workspaces/service.js';
import { freePort } from './processes.js';
import { openTestDatabase, storeKind, testDatabaseUrl } from './harness.js';

/**
 * The faults an operator meets, with real servers: PostgreSQL stopped and started again under
 * load, and Redis killed. Each runs a server process of its own (a private PostgreSQL cluster, a
 * private Redis), so the run's shared ones are never touched.
 */

const asRoot = process.getuid?.() === 0;
/** PostgreSQL refuses to run as root: the private cluster runs as the postgres user then. */
function asPostgres(command: string, args: string[]): string {
  return asRoot ? execFileSync('runuser', ['-u', 'postgres', '--', command, ...args], { encoding: 'utf8' }) : execFileSync(command, args, { encoding: 'utf8' });
}

function postgresBin(): string | undefined {
  try {
    return execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim();
  } catch {
    return undefined;
  }
}

interface Outcome {
  status: number;
  ms: number;
  retryAfter: string | null;
}

/** Sends GET /v1/studies, 8 at a time, until stopped; every outcome is kept with its time. */
function loadOn(base: string, token: string) {
  const outcomes: { at: number; outcome: Outcome }[] = [];
  let running = true;
  const one = async () => {
    const started = performance.now();
    let outcome: Outcome;
    try {
      const response = await fetch(`${base}/v1/studies`, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(15_000) });
      await response.arrayBuffer();
      outcome = { status: response.status, ms: performance.now() - started, retryAfter: response.headers.get('retry-after') };
    } catch {
      outcome = { status: 0, ms: performance.now() - started, retryAfter: null };
    }
    outcomes.push({ at: started, outcome });
  };
  const workers = Array.from({ length: 8 }, async () => {
    while (running) {
      await one();
      await sleep(5);
    }
  });
  return {
    outcomes,
    async stop() {
      running = false;
      await Promise.all(workers);
    },
  };
}

const bin = postgresBin();

describe.skipIf(storeKind !== 'postgres' || bin === undefined)('PostgreSQL stopped and started under load', () => {
  let dataDir: string;
  let port: number;
  let service: Service;
  let base: string;
  let token: string;
  const pgCtl = (...args: string[]) => asPostgres(path.join(bin!, 'pg_ctl'), ['-D', path.join(dataDir, 'pgdata'), ...args]);
  const startPostgres = () => pgCtl('-w', '-l', path.join(dataDir, 'log'), '-o', `-p ${port} -k ${dataDir} -c listen_addresses=127.0.0.1 -c fsync=off`, 'start');

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'outage-'));
    if (asRoot) chownSync(dataDir, Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })), Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' })));
    asPostgres(path.join(bin!, 'initdb'), ['-D', path.join(dataDir, 'pgdata'), '-A', 'trust', '-U', 'postgres', '--no-sync']);
    port = await freePort();
    startPostgres();
    const databaseUrl = `postgres://postgres@127.0.0.1:${port}/postgres`;
    const config = loadConfig({ ...process.env, DATABASE_URL: databaseUrl, REDIS_URL: '', LOG_LEVEL: 'silent', JOBS: 'off' }, { rateLimitMax: 1_000_000 });
    service = await buildService({ config, clock: createClock(), logger: false, database: await openDatabase({ databaseUrl, poolSize: 5, onConnectionError: () => {} }) });
    ({ token } = await createWorkspace(service.deps.db, { name: 'Outage', email: 'outage@example.test' }));
    await service.app.listen({ host: '127.0.0.1', port: 0 });
    const address = service.app.server.address();
    base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  }, 120_000);

  afterAll(async () => {
    await service?.close();
    try {
      pgCtl('-m', 'immediate', '-w', 'stop');
    } catch {
      // already stopped
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers 503 with Retry-After at once while it is down, and every request once it is back', async () => {
    const load = loadOn(base, token);
    await sleep(1000);
    const stoppedAt = performance.now();
    pgCtl('-m', 'fast', '-w', 'stop');
    await sleep(3000);
    const restartedAt = performance.now();
    startPostgres();
    const upAt = performance.now();
    await sleep(3000);
    await load.stop();

    const before = load.outcomes.filter(({ at }) => at < stoppedAt - 200);
    const during = load.outcomes.filter(({ at }) => at > stoppedAt + 500 && at < restartedAt - 200);
    // The first request on each pooled connection that PostgreSQL closed may still fail: it learns
    // of the restart by trying. Requests started a second after it is back all succeed.
    const after = load.outcomes.filter(({ at }) => at > upAt + 1000);
    expect(before.length).toBeGreaterThan(10);
    expect(before.every(({ outcome }) => outcome.status === 200)).toBe(true);

    expect(during.length).toBeGreaterThan(10);
    for (const { outcome } of during) {
      expect(outcome.status).toBe(503);
      expect(outcome.retryAfter).toMatch(/^\d+$/);
      expect(outcome.ms).toBeLessThan(1000);
    }

    expect(after.length).toBeGreaterThan(10);
    expect(after.filter(({ outcome }) => outcome.status !== 200).map(({ outcome }) => outcome)).toEqual([]);
    // Nothing at any time was a 500 or a hang.
    expect(load.outcomes.filter(({ outcome }) => outcome.status !== 200 && outcome.status !== 503).map(({ outcome }) => outcome)).toEqual([]);
  }, 60_000);
});

describe('Redis killed under load', () => {
  let redis: ChildProcess;
  let service: Service;
  let base: string;
  let token: string;

  beforeAll(async () => {
    const redisPort = await freePort();
    redis = spawn('redis-server', ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    for (let tries = 0; tries < 100; tries++) {
      try {
        execFileSync('redis-cli', ['-p', String(redisPort), 'ping'], { stdio: 'ignore' });
        break;
      } catch {
        await sleep(50);
      }
    }
    const database = await openTestDatabase();
    // On the run's shared database: no live dispatchers, which would take other files' due deliveries.
    const config = loadConfig(
      { ...process.env, DATABASE_URL: testDatabaseUrl ?? '', REDIS_URL: `redis://127.0.0.1:${redisPort}`, LOG_LEVEL: 'silent', JOBS: 'off', WEBHOOK_DELIVERY: 'off', MAIL_DELIVERY: 'off' },
      { rateLimitMax: 40, rateLimitWindowSeconds: 600 },
    );
    service = await buildService({ config, clock: createClock(), logger: false, database, rateLimitKeyPrefix: `outage-${Date.now()}` });
    ({ token } = await createWorkspace(service.deps.db, { name: 'Redis outage', email: 'redis-outage@example.test' }));
    await service.app.listen({ host: '127.0.0.1', port: 0 });
    const address = service.app.server.address();
    base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  }, 60_000);

  afterAll(async () => {
    redis?.kill('SIGKILL');
    await service?.close();
  });

  const get = async () => {
    const started = performance.now();
    const response = await fetch(`${base}/v1/studies`, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(10_000) });
    await response.arrayBuffer();
    return { status: response.status, ms: performance.now() - started };
  };

  it('still serves requests, and still refuses them past the budget, in process', async () => {
    for (let index = 0; index < 10; index++) expect((await get()).status).toBe(200);
    redis.kill('SIGKILL');
    await sleep(300);
    const outcomes = [];
    for (let index = 0; index < 60; index++) outcomes.push(await get());
    expect(outcomes.filter(({ status }) => status !== 200 && status !== 429)).toEqual([]);
    expect(outcomes.filter(({ ms }) => ms > 1000)).toEqual([]);
    const served = outcomes.filter(({ status }) => status === 200).length;
    // Each instance falls back to an in-process budget of the same size, counted from Redis's loss.
    expect(served).toBeGreaterThan(0);
    expect(served).toBeLessThanOrEqual(40);
    expect(outcomes.at(-1)?.status).toBe(429);
  }, 60_000);
});
