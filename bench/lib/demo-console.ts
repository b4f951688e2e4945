import { type ChildProcess, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, startReadyProcess, stopProcess } from './compiled-server.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** Debian's `chromium` package; CHROMIUM_PATH names another (as test/console/browser.ts). */
export const chromiumPath = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
export const chromiumArgs = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
/** Where the console keeps its token (console/src/session.ts): a page opened with it set is signed in. */
export const consoleTokenKey = 'recruit-ops.console.token';

export interface DemoSeed {
  workspaceId: string;
  tokens: Record<string, string>;
  studyIds: string[];
  peopleCount: number;
  participantCount: number;
}

export interface DemoConsole {
  origin: string;
  seed: DemoSeed;
  child: ChildProcess;
  /** Seconds the demo seed took. */
  seedSeconds: number;
  stop(): Promise<void>;
}

/**
 * The compiled server (`dist/server.js`, with `console/dist`) on a fresh embedded store filled by
 * `cli seed --demo` (run before the server starts: an embedded store belongs to one process).
 */
export async function startDemoConsole(): Promise<DemoConsole> {
  for (const built of ['dist/server.js', 'dist/cli.js', 'console/dist/index.html']) {
    if (!existsSync(path.join(root, built))) throw new Error(`${built} is missing: run \`npm run build\``);
  }
  const dataDir = mkdtempSync(path.join(tmpdir(), 'recruit-ops-console-demo-'));
  const env: NodeJS.ProcessEnv = { DATA_DIR: dataDir, DATABASE_URL: '', REDIS_URL: '', RATE_LIMIT_MAX: '100000000', TEST_HELPERS: '', LOG_LEVEL: 'warn' };
  try {
    const seeding = performance.now();
    const output = execFileSync(process.execPath, ['dist/cli.js', 'seed', '--demo'], { cwd: root, env: { ...process.env, ...env }, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    const seedSeconds = (performance.now() - seeding) / 1000;
    const seed = JSON.parse(output) as DemoSeed;
    const port = await freePort();
    const { child } = await startReadyProcess(env, port);
    let stopping = false;
    // A server that stops by itself leaves the browser with refused connections: say why.
    child.once('exit', (code, signal) => {
      if (!stopping) process.stderr.write(`the demo console server exited by itself (code ${code}, signal ${signal})\n`);
    });
    return {
      origin: `http://127.0.0.1:${port}`,
      seed,
      child,
      seedSeconds,
      async stop() {
        stopping = true;
        await stopProcess(child);
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
}

/** A demo study by its name (`Checkout interviews (active)`), found through the API. */
export async function findStudy(origin: string, token: string, name: string): Promise<string> {
  const response = await fetch(`${origin}/v1/studies?size=100`, { headers: { authorization: `Bearer ${token}` } });
  const body = (await response.json()) as { results: { studyId: string; studyPlan: { name?: string } }[] };
  const found = body.results.find((study) => study.studyPlan.name === name);
  if (!found) throw new Error(`The demo seed has no study named "${name}"`);
  return found.studyId;
}
