import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { freePort, startReadyProcess, stopProcess } from './lib/compiled-server.js';
import { processMemory } from './lib/memory.js';
import { formatTable } from './lib/table.js';
import { type BenchOptions, type BenchResult, flagNumber, flagValue } from './lib/types.js';
import { serverNodeFlags } from './lib/server-flags.js';

/**
 * `npm run bench -- startup`: how fast `npm start` (the command a user types) and the compiled
 * server alone (`node dist/server.js`, what `npm start` ends in) are ready, and how much memory it holds idle and after 10,000 mixed requests, on the
 * embedded store with an existing data directory and on PostgreSQL. The floor is a bare Fastify
 * process on the same store, started the same way (`bench/startup-floor.mjs`).
 */

const root = fileURLToPath(new URL('..', import.meta.url));
const postgresUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const MiB = 1024 * 1024;

const rssOf = (child: ChildProcess) => processMemory(child.pid)?.rss ?? Number.NaN;

/** 10,000 requests, 8 at a time: reads, a write, and a search, in turn. */
async function mixedLoad(port: number, token: string | undefined, total: number): Promise<{ errors: number; seconds: number }> {
  const base = `http://127.0.0.1:${port}`;
  const headers = { authorization: `Bearer ${token ?? ''}`, 'content-type': 'application/json' };
  let next = 0;
  let errors = 0;
  const personIds: string[] = [];
  const run = async (index: number) => {
    const kind = index % 4;
    let response: Response;
    if (kind === 0) {
      response = await fetch(`${base}/v1/people`, { method: 'POST', headers, body: JSON.stringify({ email: `startup-${process.pid}-${index}@example.org`, firstName: 'Ada', properties: {} }) });
      if (response.ok) personIds.push(((await response.json()) as { personId: string }).personId);
      else await response.arrayBuffer();
    } else if (kind === 1 && personIds.length > 0) {
      response = await fetch(`${base}/v1/people/${personIds[index % personIds.length]}`, { headers });
      await response.arrayBuffer();
    } else if (kind === 2) {
      response = await fetch(`${base}/v1/people/search`, { method: 'POST', headers, body: JSON.stringify({ pageInfo: { size: 25 } }) });
      await response.arrayBuffer();
    } else {
      response = await fetch(`${base}/v1/studies`, { headers });
      await response.arrayBuffer();
    }
    if (response.status >= 400) errors++;
  };
  const started = performance.now();
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < total) await run(next++);
    }),
  );
  return { errors, seconds: (performance.now() - started) / 1000 };
}

/**
 * `npm start` as a user types it, on a built, unchanged checkout: npm, then scripts/start.mjs, which
 * checks that the build is of the current sources (scripts/build-stamp.mjs) and runs the server in
 * the same process. Timed from the
 * command to `/readyz` 200, in a process group of its own so that the stop reaches the server.
 */
async function npmStartRuns(env: NodeJS.ProcessEnv, rounds: number): Promise<number[]> {
  const runs: number[] = [];
  const port = await freePort();
  for (let round = 0; round < rounds; round++) {
    const started = performance.now();
    const child = spawn('npm', ['start'], {
      cwd: root,
      env: { ...process.env, ...env, HOST: '127.0.0.1', PORT: String(port), LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'ignore', 'inherit'],
      detached: true,
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      for (;;) {
        if (child.exitCode !== null) throw new Error(`npm start exited with code ${child.exitCode} before it was ready`);
        const ready = await fetch(`http://127.0.0.1:${port}/readyz`).then(
          (response) => response.status === 200,
          () => false,
        );
        if (ready) break;
        if (performance.now() - started > 120_000) throw new Error('npm start was not ready within 120 s');
        await sleep(5);
      }
      runs.push(performance.now() - started);
    } finally {
      process.kill(-child.pid!, 'SIGTERM');
      await exited;
      // npm exits as soon as its child has the signal; the server itself drains, then exits.
      for (let waited = 0; waited < 30_000 && (await fetch(`http://127.0.0.1:${port}/healthz`).then(() => true, () => false)); waited += 50) await sleep(50);
    }
  }
  return runs;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;

interface Figures {
  readyMs: number;
  readyRuns: number[];
  idleRss: number;
  loadedRss: number;
  errors: number;
}

async function measure(label: string, args: string[], env: NodeJS.ProcessEnv, rounds: number, requests: number, token: string | undefined): Promise<Figures> {
  const port = await freePort();
  const readyRuns: number[] = [];
  let idleRss = Number.NaN;
  let loadedRss = Number.NaN;
  let errors = 0;
  for (let round = 0; round < rounds; round++) {
    const { child, readyMs } = await startReadyProcess(env, port, args);
    readyRuns.push(readyMs);
    if (round === rounds - 1) {
      await sleep(2000);
      idleRss = rssOf(child);
      const load = await mixedLoad(port, token, requests);
      errors = load.errors;
      await sleep(1000);
      loadedRss = rssOf(child);
      process.stderr.write(`${label}: ${requests} requests in ${load.seconds.toFixed(1)} s, ${errors} answered >= 400\n`);
    }
    await stopProcess(child);
  }
  const sorted = [...readyRuns].sort((a, b) => a - b);
  return { readyMs: sorted[Math.floor(sorted.length / 2)] ?? Number.NaN, readyRuns, idleRss, loadedRss, errors };
}

function createWorkspace(env: NodeJS.ProcessEnv): string {
  const output = execFileSync(process.execPath, ['dist/cli.js', 'workspace', 'create', '--name', 'Startup bench', '--email', `startup-${Date.now()}@example.org`], {
    cwd: root,
    env: { ...process.env, ...env },
    encoding: 'utf8',
  });
  return (JSON.parse(output) as { token: string }).token;
}

export async function run(options: BenchOptions): Promise<BenchResult> {
  const rounds = flagNumber(options.flags, 'rounds', options.quick ? 2 : 5);
  const requests = flagNumber(options.flags, 'requests', options.quick ? 1000 : 10_000);
  const stores = (flagValue(options.flags, 'stores') ?? 'embedded,postgres').split(',');
  process.stderr.write('building dist/ (npm run build)\n');
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' });

  const server = [...serverNodeFlags(), 'dist/server.js'];
  const floor = [...serverNodeFlags(), 'bench/startup-floor.mjs'];
  const rows: string[][] = [];
  const figures: Record<string, unknown> = {};
  const common = { RATE_LIMIT_MAX: '100000000', REDIS_URL: '', SEARCH_COUNTS: 'on' };

  for (const store of stores) {
    let env: NodeJS.ProcessEnv;
    let cleanup = async () => {};
    if (store === 'embedded') {
      const dataDir = mkdtempSync(path.join(tmpdir(), 'startup-bench-'));
      env = { ...common, DATABASE_URL: '', DATA_DIR: dataDir };
      cleanup = async () => rmSync(dataDir, { recursive: true, force: true });
      // The data directory exists before the timed starts: initdb and migrations are not timed.
      const first = await startReadyProcess(env, await freePort(), server);
      await stopProcess(first.child);
    } else if (store === 'postgres') {
      const database = `bench_startup`;
      const admin = new pg.Client({ connectionString: postgresUrl });
      await admin.connect();
      await admin.query(`drop database if exists ${database} with (force)`);
      await admin.query(`create database ${database}`);
      await admin.end();
      const url = new URL(postgresUrl);
      url.pathname = `/${database}`;
      env = { ...common, DATABASE_URL: url.toString(), DATA_DIR: '' };
      const first = await startReadyProcess(env, await freePort(), server);
      await stopProcess(first.child);
    } else {
      throw new Error(`--stores takes embedded and postgres, got "${store}"`);
    }
    try {
      const token = createWorkspace(env);
      const npmStart = await npmStartRuns(env, rounds);
      const service = await measure(`${store} service`, server, env, rounds, requests, token);
      const bare = await measure(`${store} floor`, floor, env, rounds, requests, token);
      rows.push([store, 'npm start', median(npmStart).toFixed(0), npmStart.map((ms) => ms.toFixed(0)).join(' '), '', '', '']);
      for (const [what, figure] of [['node dist/server.js', service], ['floor', bare]] as const) {
        rows.push([store, what, figure.readyMs.toFixed(0), figure.readyRuns.map((ms) => ms.toFixed(0)).join(' '), (figure.idleRss / MiB).toFixed(1), (figure.loadedRss / MiB).toFixed(1), String(figure.errors)]);
      }
      figures[store] = {
        npmStartReadyMs: Math.round(median(npmStart)),
        readyMs: Math.round(service.readyMs),
        floorReadyMs: Math.round(bare.readyMs),
        idleRssMiB: +(service.idleRss / MiB).toFixed(1),
        floorIdleRssMiB: +(bare.idleRss / MiB).toFixed(1),
        loadedRssMiB: +(service.loadedRss / MiB).toFixed(1),
        floorLoadedRssMiB: +(bare.loadedRss / MiB).toFixed(1),
        errors: service.errors,
      };
    } finally {
      await cleanup();
    }
  }

  process.stdout.write(formatTable(['store', 'process', 'ready p50 ms', 'ready runs ms', 'idle RSS MiB', `RSS after ${requests} req MiB`, 'errors'], rows) + '\n');
  process.stdout.write(
    'aims: npm start ready < 2,000 ms (embedded) and < 1,500 ms (PostgreSQL); the server alone < 1,500 ms (embedded) and < 800 ms (PostgreSQL); idle RSS < 120 MiB (PostgreSQL), within 60 MiB of the floor (embedded)\n',
  );
  const readyRatios = Object.values(figures).map((figure) => {
    const { readyMs, floorReadyMs } = figure as { readyMs: number; floorReadyMs: number };
    return readyMs / floorReadyMs;
  });
  const ratio = readyRatios.length ? readyRatios.reduce((a, b) => a * b, 1) ** (1 / readyRatios.length) : Number.NaN;
  return { bench: 'startup', quick: options.quick, ratio: +ratio.toFixed(2), rounds, requests, ...figures };
}
