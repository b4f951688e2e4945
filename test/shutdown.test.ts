import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storeKind, testDatabaseUrl } from './harness.js';
import { createPrivatePostgresDatabase } from './private-database.js';
import { type RunningServer, runCli, startServer as startChildServer } from './processes.js';

/** The server in a child process, logging at info: these tests read its log lines. */
const startServer = (env: Record<string, string>) => startChildServer(env, 'info');

/** Waits until `condition` holds, polling; fails with `what` if the child exits first or time runs out. */
async function until(server: RunningServer, what: string, condition: () => boolean | Promise<boolean>) {
  let exited = false;
  void server.exited.then(() => (exited = true));
  for (let attempt = 0; attempt < 600; attempt++) {
    if (await condition()) return;
    if (exited) throw new Error(`the server exited before ${what}:\n${server.output()}`);
    await sleep(50);
  }
  throw new Error(`timed out waiting for ${what}:\n${server.output()}`);
}

function get(port: number, url: string): Promise<number> {
  return new Promise((resolve) => {
    const request = http.get({ host: '127.0.0.1', port, path: url, agent: false }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.on('error', () => resolve(0));
  });
}

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

describe(`graceful shutdown (${storeKind} store)`, () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'recruit-ops-shutdown-'));
  // The server and the CLI share the store under test: a PostgreSQL database of their own beside
  // the run's (the server polls for background work, JOBS=on, and its sweeps of every workspace
  // must not reach other files' rows on the run's database), or a DATA_DIR.
  let storage: Record<string, string> = { DATA_DIR: dataDir };
  let dropDatabase: (() => Promise<void>) | undefined;
  let token: string;
  let server: RunningServer | undefined;

  beforeAll(async () => {
    if (testDatabaseUrl) {
      const created = await createPrivatePostgresDatabase(testDatabaseUrl);
      dropDatabase = created.drop;
      storage = { DATABASE_URL: created.url, REDIS_URL: process.env.REDIS_URL ?? '' };
    }
    const created = await runCli(['workspace', 'create', '--name', 'Shutdown', '--email', 'shutdown@example.test', '--json'], storage);
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    token = (JSON.parse(created.stdout) as { token: string }).token;
  }, 120_000);
  afterAll(async () => {
    if (server && server.child.exitCode === null) server.child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
    await dropDatabase?.();
  });

  it('finishes the in-flight request on SIGTERM, exits 0 and releases the store', { timeout: 120_000 }, async () => {
    server = await startServer(storage);
    const running = server;
    const agent = new http.Agent({ keepAlive: true });
    const body = JSON.stringify({ studyType: 'INTERVIEWS', recruitmentStrategy: 'IN_SERVICE', studyPlan: { name: 'Started before SIGTERM' } });

    // Warm the keep-alive connection first: clients reuse them, and shutdown must not wait on
    // an idle one.
    const warm = await new Promise<number>((resolve, reject) => {
      http
        .get({ host: '127.0.0.1', port: running.port, path: '/v1/me', agent, headers: { authorization: `Bearer ${token}` } }, (response) => {
          response.resume();
          response.on('end', () => resolve(response.statusCode ?? 0));
        })
        .on('error', reject);
    });
    expect(warm).toBe(200);

    // The request is in flight: its headers are in (the server has logged it), its body is not.
    let inFlight!: http.ClientRequest;
    const answer = new Promise<Answer>((resolve, reject) => {
      inFlight = http.request(
        {
          host: '127.0.0.1',
          port: running.port,
          method: 'POST',
          path: '/v1/studies',
          agent,
          headers: {
            authorization: `Bearer ${token}`,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
            'x-request-id': 'in-flight-1',
          },
        },
        (response) => {
          let text = '';
          response.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
          response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: text }));
        },
      );
      inFlight.on('error', reject);
    });
    inFlight.write(body.slice(0, 10));
    await until(running, 'the request arrived', () => /"reqId":"in-flight-1"[^\n]*"msg":"incoming request"/.test(running.output()));

    running.child.kill('SIGTERM');
    await until(running, 'it began shutting down', () => running.output().includes('shutting down'));
    // New requests are turned away (refused or 503) while the old one is still running.
    await until(running, 'it stopped serving new requests', async () => (await get(running.port, '/healthz')) !== 200);

    inFlight.end(body.slice(10));
    const response = await answer;
    expect(response.status, response.body).toBe(201);
    expect(JSON.parse(response.body)).toMatchObject({ studyId: expect.stringMatching(/^stu_/) });
    expect(response.headers['x-request-id']).toBe('in-flight-1');
    // A kept-alive connection would otherwise hold the shutdown up until its idle timeout.
    expect(response.headers.connection).toBe('close');

    const exit = await running.exited;
    agent.destroy();
    expect(exit, running.output()).toEqual({ code: 0, signal: null });
    expect(running.output()).toContain('"msg":"stopped"');

    // The store is free again: the CLI works on it.
    const migrated = await runCli(['migrate', '--json'], storage);
    expect(migrated.stderr).toBe('');
    expect(migrated.code).toBe(0);
    expect(JSON.parse(migrated.stdout)).toEqual({ migrated: [] });
  });
});
