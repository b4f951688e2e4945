import { spawn } from 'node:child_process';
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
