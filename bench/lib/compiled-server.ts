import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

import { freePort } from '../../test/processes.js';
import { serverNodeFlags } from './server-flags.js';

export { freePort };

const root = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Starts a plain-node process (by default the compiled server, `dist/server.js`, as `npm start`
 * runs it) on `port` and resolves when its `/readyz` answers 200, with the time that took.
 */
export async function startReadyProcess(env: NodeJS.ProcessEnv, port: number, args = [...serverNodeFlags(), 'dist/server.js']): Promise<{ child: ChildProcess; readyMs: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: { ...process.env, ...env, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const deadline = started + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${args.join(' ')} exited with code ${child.exitCode} before it was ready`);
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`).then(
      (response) => response.status === 200,
      () => false,
    );
    if (ready) return { child, readyMs: performance.now() - started };
    if (performance.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${args.join(' ')} was not ready within 60 s`);
    }
    await sleep(5);
  }
}

/** SIGTERM (the server drains in-flight requests), SIGKILL if it has not exited after 30 s. */
export async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  await exited;
  clearTimeout(killer);
}

/**
 * The benches' PostgreSQL service: the compiled server on `env` (a database of the bench's own,
 * no Redis, a rate limit no load reaches, no test helpers, plus the bench's settings), with a
 * workspace made by the CLI on the same database. Stop `child` with stopProcess.
 */
export async function startBenchService(env: NodeJS.ProcessEnv, workspaceName: string, extraNodeFlags: string[] = []): Promise<{ child: ChildProcess; port: number; token: string; workspaceId: string }> {
  const serverEnv: NodeJS.ProcessEnv = { DATA_DIR: '', REDIS_URL: '', RATE_LIMIT_MAX: '100000000', TEST_HELPERS: '', ...env };
  const port = await freePort();
  const { child } = await startReadyProcess(serverEnv, port, [...serverNodeFlags(), ...extraNodeFlags, 'dist/server.js']);
  try {
    const email = `${workspaceName.toLowerCase().replaceAll(/\W+/g, '-')}@example.org`;
    const created = execFileSync(process.execPath, ['dist/cli.js', 'workspace', 'create', '--name', workspaceName, '--email', email], {
      cwd: root,
      env: { ...process.env, ...serverEnv },
      encoding: 'utf8',
    });
    const { token, workspaceId } = JSON.parse(created) as { token: string; workspaceId: string };
    return { child, port, token, workspaceId };
  } catch (error) {
    await stopProcess(child);
    throw error;
  }
}
