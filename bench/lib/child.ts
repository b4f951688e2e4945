import { type ChildProcess, fork, spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../test/processes.js';

/** Messages between the bench and a server it runs in a child process. */
export type ChildMessage = { type: 'ready'; port: number } | { type: 'failed'; message: string };
export type ParentMessage = { type: 'stop' };

export interface RunningChild {
  port: number;
  process: ChildProcess;
  /** Asks the child to close its server and database and exit; resolves when it has exited. */
  stop(): Promise<void>;
}

const tsxLoader = import.meta.resolve('tsx');

/**
 * Starts a TypeScript entry point in its own Node process (its own event loop and core, as a
 * deployed server would have) and waits until it reports the port it listens on.
 */
export function startChild(entry: string, args: string[], options: { env?: NodeJS.ProcessEnv; nodeFlags?: string[]; startTimeoutMs?: number } = {}): Promise<RunningChild> {
  // A JavaScript entry (the compiled service) runs on plain node, as it does in production.
  const loader = entry.endsWith('.ts') ? ['--import', tsxLoader] : [];
  const child = fork(fileURLToPath(entry), args, {
    execArgv: [...loader, ...(options.nodeFlags ?? [])],
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${entry} ${args.join(' ')} did not start within ${options.startTimeoutMs ?? 60_000} ms`));
    }, options.startTimeoutMs ?? 60_000);
    const onExit = (code: number | null) => {
      clearTimeout(timer);
      reject(new Error(`${entry} ${args.join(' ')} exited with code ${code} before it was ready`));
    };
    child.once('exit', onExit);
    child.on('message', (message: ChildMessage) => {
      if (message.type === 'failed') {
        clearTimeout(timer);
        child.off('exit', onExit);
        child.kill('SIGKILL');
        reject(new Error(message.message));
        return;
      }
      clearTimeout(timer);
      child.off('exit', onExit);
      resolve({
        port: message.port,
        process: child,
        async stop() {
          if (child.exitCode !== null || child.signalCode !== null) return;
          const killer = setTimeout(() => child.kill('SIGKILL'), 15_000);
          child.send({ type: 'stop' } satisfies ParentMessage);
          await exited;
          clearTimeout(killer);
        },
      });
    });
  });
}

/** The child's side: report readiness, and run `close` then exit when the parent says stop. */
export function serveAsChild(close: () => Promise<void>, port: number): void {
  let closing: Promise<void> | undefined;
  // A normal exit rather than a signal, so that --cpu-prof writes its profile.
  const shutdown = () => {
    closing ??= close().finally(() => process.exit(0));
  };
  process.on('message', (message: ParentMessage) => {
    if (message.type === 'stop') shutdown();
  });
  // An orphaned child (the bench was killed) must not keep the port and database busy.
  process.on('disconnect', shutdown);
  process.send?.({ type: 'ready', port } satisfies ChildMessage);
}

export function failAsChild(error: unknown): void {
  const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
  if (!process.send) {
    process.stderr.write(`${message}\n`);
    process.exit(1);
  }
  process.send({ type: 'failed', message } satisfies ChildMessage, () => process.exit(1));
}

const projectRoot = fileURLToPath(new URL('../..', import.meta.url));

/**
 * The service as users run it, in a child process: `node <nodeFlags> dist/server.js`, the bundle
 * `npm start` ends in, on a free port, ready once `/readyz` answers 200. Its stop is a SIGTERM:
 * the server drains and exits normally, so `--cpu-prof` writes its profile. Benches measure this,
 * not the sources or tsc's module-by-module output, which no user runs.
 */
export async function startBundledServer(options: { env?: NodeJS.ProcessEnv; nodeFlags?: string[]; startTimeoutMs?: number } = {}): Promise<RunningChild> {
  const port = await freePort();
  const child = spawn(process.execPath, [...(options.nodeFlags ?? []), 'dist/server.js'], {
    cwd: projectRoot,
    env: { ...process.env, LOG_LEVEL: 'warn', RATE_LIMIT_MAX: '1000000000', TEST_HELPERS: '', ...options.env, HOST: '127.0.0.1', PORT: String(port) },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = performance.now() + (options.startTimeoutMs ?? 60_000);
  for (;;) {
    if (child.exitCode !== null) throw new Error(`dist/server.js exited with code ${child.exitCode} before it was ready`);
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`).then(
      (response) => response.status === 200,
      () => false,
    );
    if (ready) break;
    if (performance.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error('dist/server.js was not ready in time');
    }
    await sleep(20);
  }
  return {
    port,
    process: child,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      child.kill('SIGTERM');
      await exited;
      clearTimeout(killer);
    },
  };
}
