import { execFile, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { testDatabaseUrl } from './harness.js';
import { createPrivatePostgresDatabase } from './private-database.js';
import { childEnvironment, freePort, projectRoot, serverNodeFlags } from './processes.js';

/**
 * What users run, in a test: `node <the start script's flags> dist/server.js`, the very command
 * `npm start` ends in, in a child process on a store of its own. Tests that reach the service
 * through it prove the build (esbuild's bundle and its lazily loaded chunks), not the sources.
 */

/** A store for a compiled server: a fresh data directory, or on PostgreSQL a migrated database of its own. */
export interface CompiledStore {
  env: Record<string, string>;
  drop(): Promise<void>;
}

export async function createCompiledStore(): Promise<CompiledStore> {
  if (testDatabaseUrl) {
    const created = await createPrivatePostgresDatabase(testDatabaseUrl);
    return { env: { DATABASE_URL: created.url, DATA_DIR: '', REDIS_URL: process.env.REDIS_URL ?? '' }, drop: created.drop };
  }
  const dataDir = mkdtempSync(path.join(tmpdir(), 'recruit-ops-compiled-'));
  return { env: { DATABASE_URL: '', DATA_DIR: dataDir, REDIS_URL: '' }, drop: async () => rmSync(dataDir, { recursive: true, force: true }) };
}

/** `node dist/cli.js …args` on `env`'s store; its stdout parsed as the one JSON object the CLI prints. */
export async function runCompiledCli<T>(args: string[], env: Record<string, string>): Promise<T> {
  const { stdout } = await promisify(execFile)(process.execPath, ['dist/cli.js', ...args], { cwd: projectRoot, env: childEnvironment(env) });
  return JSON.parse(stdout) as T;
}

export interface CompiledServer {
  child: ChildProcessWithoutNullStreams;
  port: number;
  /** `http://127.0.0.1:<port>/v1` */
  api: string;
  /** What the server wrote to stdout and stderr so far. */
  output(): string;
  /** SIGTERM, as a process manager stops it; resolves with its exit code once it has exited. */
  stop(): Promise<number | null>;
}

/**
 * The compiled server in a child process on `env` (a CompiledStore's, plus the test's settings),
 * ready once `/readyz` answers 200; fails, with what it printed, if it exits first. With
 * `coverageDir`, V8 writes there which scripts the process loaded (see loadedScripts).
 */
export async function startCompiledServer(env: Record<string, string>, options: { coverageDir?: string; port?: number } = {}): Promise<CompiledServer> {
  const port = options.port ?? (await freePort());
  const child = spawn(process.execPath, [...serverNodeFlags(), 'dist/server.js'], {
    cwd: projectRoot,
    env: childEnvironment({
      LOG_LEVEL: 'warn',
      ...env,
      HOST: '127.0.0.1',
      PORT: String(port),
      ...(options.coverageDir ? { NODE_V8_COVERAGE: options.coverageDir } : {}),
    }),
  });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const server: CompiledServer = {
    child,
    port,
    api: `http://127.0.0.1:${port}/v1`,
    output: () => output,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`dist/server.js exited with code ${child.exitCode} before it was ready:\n${output}`);
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`).then(
      (response) => response.status === 200,
      () => false,
    );
    if (ready) return server;
    await sleep(50);
  }
  child.kill('SIGKILL');
  throw new Error(`dist/server.js was not ready within 60 s:\n${output}`);
}

/** The files of the build that `npm start` may load: dist/server.js and every chunk beside it. */
export function bundleFiles(): string[] {
  const dist = path.join(projectRoot, 'dist');
  return [path.join(dist, 'server.js'), ...readdirSync(path.join(dist, 'chunks')).filter((name) => name.endsWith('.js')).map((name) => path.join(dist, 'chunks', name))];
}

/** The files of every script V8 reported loading in the processes that wrote into `coverageDir`. */
export function loadedScripts(coverageDir: string): Set<string> {
  const loaded = new Set<string>();
  for (const name of readdirSync(coverageDir).filter((file) => file.endsWith('.json'))) {
    const report = JSON.parse(readFileSync(path.join(coverageDir, name), 'utf8')) as { result: { url: string }[] };
    for (const { url } of report.result) if (url.startsWith('file:')) loaded.add(fileURLToPath(url));
  }
  return loaded;
}

