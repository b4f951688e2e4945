import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'vitest';
import { type Database, openDatabase } from '../src/db/database.js';
import { migratedTemplate, testDatabaseUrl } from './harness.js';
import { createPrivatePostgresDatabase } from './private-database.js';
import { type RunningServer, runCli } from './processes.js';

/**
 * Storage for tests that kill a server process and start another on the same data: a DATA_DIR of
 * their own (embedded store), or a PostgreSQL database of their own beside the run's (the servers
 * poll for every workspace's background work, which must not reach other files' rows).
 */
export interface CrashStorage {
  env: Record<string, string>;
  /** Opens the store from the test process; on the embedded store only while no server holds it. */
  open(): Promise<Database>;
  dispose(): Promise<void>;
}

export async function createCrashStorage(prefix: string): Promise<CrashStorage> {
  if (testDatabaseUrl) {
    const created = await createPrivatePostgresDatabase(testDatabaseUrl);
    return {
      env: { DATABASE_URL: created.url, REDIS_URL: process.env.REDIS_URL ?? '' },
      open: () => openDatabase({ databaseUrl: created.url, poolSize: 2 }),
      dispose: () => created.drop(),
    };
  }
  const dataDir = mkdtempSync(path.join(tmpdir(), `${prefix}-`));
  // The run's migrated store copied in: initdb and every migration on a new data directory took
  // 5-10 s of CPU per file, over a minute of a loaded CI leg across the files that start servers.
  const template = migratedTemplate();
  if (template) await (await openDatabase({ dataDir, startFrom: template })).close();
  return {
    env: { DATA_DIR: dataDir },
    open: () => openDatabase({ dataDir }),
    dispose: async () => rmSync(dataDir, { recursive: true, force: true }),
  };
}

/** A workspace made with the CLI on `storage` (before any server holds an embedded store): its SUPER_ADMIN token. */
export async function createWorkspaceWithCli(storage: CrashStorage, name: string): Promise<{ workspaceId: string; token: string }> {
  const created = await runCli(['workspace', 'create', '--name', name, '--email', `${name.toLowerCase().replaceAll(/\W+/g, '-')}@example.test`], storage.env);
  expect(created.stderr).toBe('');
  expect(created.code).toBe(0);
  return JSON.parse(created.stdout) as { workspaceId: string; token: string };
}

export interface Answer<T = unknown> {
  status: number;
  body: T;
  text: string;
}

/** JSON over HTTP to a server in a child process. */
export function apiOf(server: RunningServer, token: string) {
  return async <T = unknown>(method: string, url: string, options: { body?: unknown; csv?: string; headers?: Record<string, string> } = {}): Promise<Answer<T>> => {
    const headers: Record<string, string> = { authorization: `Bearer ${token}`, ...options.headers };
    let body: string | undefined;
    if (options.csv !== undefined) {
      headers['content-type'] = 'text/csv';
      body = options.csv;
    } else if (options.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(options.body);
    }
    const response = await fetch(`http://127.0.0.1:${server.port}/v1${url}`, { method, headers, body });
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { status: response.status, body: parsed as T, text };
  };
}

/** Polls `condition` every `everyMs` until it holds; fails with `what` (and the server's output) if the server exits or time runs out. */
export async function until(server: RunningServer, what: string, condition: () => boolean | Promise<boolean>, { timeoutMs = 120_000, everyMs = 50 } = {}) {
  let exited = false;
  void server.exited.then(() => (exited = true));
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    if (await condition()) return;
    if (exited) throw new Error(`the server exited before ${what}:\n${server.output()}`);
    await sleep(everyMs);
  }
  throw new Error(`timed out waiting for ${what}:\n${server.output()}`);
}

/** SIGKILL: no handler runs, no transaction is finished, nothing is flushed by the process. */
export async function killHard(server: RunningServer) {
  server.child.kill('SIGKILL');
  expect(await server.exited).toEqual({ code: null, signal: 'SIGKILL' });
}

/** SIGTERM, and the clean exit that releases the store. */
export async function stopGracefully(server: RunningServer) {
  if (server.child.exitCode !== null || server.child.signalCode !== null) return;
  server.child.kill('SIGTERM');
  expect(await server.exited, server.output()).toEqual({ code: 0, signal: null });
}
