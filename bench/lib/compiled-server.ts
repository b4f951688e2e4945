import { type ChildProcess, spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

export { freePort } from '../../test/processes.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Starts a plain-node process (by default the compiled server, `dist/server.js`, as `npm start`
 * runs it) on `port` and resolves when its `/readyz` answers 200, with the time that took.
 */
export async function startReadyProcess(env: NodeJS.ProcessEnv, port: number, args = ['--enable-source-maps', 'dist/server.js']): Promise<{ child: ChildProcess; readyMs: number }> {
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
