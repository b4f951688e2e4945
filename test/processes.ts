import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

/** The project's root, where `src/cli.ts` and `src/server.ts` live. */
export const projectRoot = fileURLToPath(new URL('..', import.meta.url));

export interface Finished {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * The environment of a child process: the parent's, minus the storage settings a test did not
 * choose, so that a developer's DATABASE_URL never leaks into a run meant for a DATA_DIR.
 */
export function childEnvironment(env: Record<string, string>): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'silent' };
  for (const name of ['DATABASE_URL', 'REDIS_URL', 'DATA_DIR', 'TEST_HELPERS']) delete base[name];
  return { ...base, ...env };
}

/** Runs `src/cli.ts` with tsx in a child process and collects its output. */
export function runCli(args: string[], env: Record<string, string>): Promise<Finished> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], {
    cwd: projectRoot,
    env: childEnvironment(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/**
 * The Node flags of package.json's `start` script (`node <flags> scripts/start.mjs`, which checks
 * the build and then runs dist/server.js in the same process): what the compiled server runs
 * with, in the tests (test/compiled-server.ts) and the benches alike, started as
 * `node <flags> dist/server.js`.
 */
export function serverNodeFlags(): string[] {
  const manifest = JSON.parse(readFileSync(path.join(projectRoot, 'package.json'), 'utf8')) as { scripts: { start: string } };
  const words = manifest.scripts.start.trim().split(/\s+/);
  if (words[0] !== 'node' || words.at(-1) !== 'scripts/start.mjs') throw new Error(`package.json's start script is not "node <flags> scripts/start.mjs": ${manifest.scripts.start}`);
  return words.slice(1, -1);
}

/** A port nobody listens on right now (the kernel's choice), for a server in a child process. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.on('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

export interface RunningServer {
  child: ChildProcessWithoutNullStreams;
  port: number;
  output: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * `src/server.ts` (or another `entry` that starts it) in a child process on a free port, once it
 * serves /healthz; fails if it exits first.
 */
export async function startServer(env: Record<string, string>, logLevel = 'warn', entry = 'src/server.ts'): Promise<RunningServer> {
  const port = await freePort();
  // The compiled server runs as `npm start` runs it (its flags, no loader); sources go through tsx.
  // (Under tsx's loader a chunk's dynamic import of a CommonJS package lost its default export.)
  const args = entry.endsWith('.js') ? [...serverNodeFlags(), entry] : ['--import', 'tsx', entry];
  const child = spawn(process.execPath, args, {
    cwd: projectRoot,
    env: childEnvironment({ ...env, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: logLevel }),
  });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  let exited = false;
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => {
      exited = true;
      resolve({ code, signal });
    });
  });
  const server: RunningServer = { child, port, output: () => output, exited: exit };
  for (let attempt = 0; attempt < 600; attempt++) {
    const healthy = await fetch(`http://127.0.0.1:${port}/healthz`).then(
      (response) => response.status === 200,
      () => false,
    );
    if (healthy) return server;
    if (exited) throw new Error(`the server exited before it served /healthz:\n${output}`);
    await sleep(50);
  }
  child.kill('SIGKILL');
  throw new Error(`the server did not serve /healthz:\n${output}`);
}
