import { execFileSync } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { Agent, request } from 'undici';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startBundledServer } from './lib/child.js';
import { printProfiles } from './screener.js';
import { dropPostgresDatabase, freshEmbeddedStore, recreatePostgresDatabase, storeEnv, type BenchStore } from './lib/store.js';
import { formatTable } from './lib/table.js';
import { type BenchOptions, type BenchResult, flagNumber, flagValue } from './lib/types.js';

/**
 * `npm run bench -- fairness [--quick] [--seconds=N] [--only=searches,openapi]` (issue 32 item 3): one tenant must not
 * stall the others. The compiled server (dist/server.js) serves two workspaces; the light one
 * sends GET /v1/me, one request at a time, and its p50 and p99 are measured alone, then while the
 * heavy one's token runs each heavy work in turn:
 *   - previews: 8 loops of POST /message-templates/{id}/preview of the heaviest loop template that saving still takes;
 *   - searches: 16 loops of 1000-row POST /people/search (the workspace holds 2,000 people);
 *   - upload: POST /imports of a big CSV (20 MB; --quick 4 MB), again and again, and the import jobs it starts;
 *   - openapi: 16 loops of GET /v1/openapi.json from one address, without caching headers.
 * On the embedded store, and on PostgreSQL when DATABASE_URL is set. The aim: p99 within 2x of alone.
 */

const root = fileURLToPath(new URL('..', import.meta.url));
const agent = new Agent({ connections: 64, keepAliveTimeout: 10_000 });

interface Tenant {
  token: string;
  workspaceId: string;
}

function createWorkspace(store: BenchStore, name: string): Tenant {
  const created = execFileSync(process.execPath, ['dist/cli.js', 'workspace', 'create', '--name', name, '--email', `${name.toLowerCase()}@example.org`], {
    cwd: root,
    env: { ...process.env, ...storeEnv(store), REDIS_URL: '', LOG_LEVEL: 'warn' },
    encoding: 'utf8',
  });
  return JSON.parse(created) as Tenant;
}

const percentile = (sorted: number[], p: number) => (sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!);

async function call(base: string, token: string | undefined, method: 'GET' | 'POST', path: string, body?: string | Buffer, contentType = 'application/json') {
  const response = await request(`${base}${path}`, {
    method,
    dispatcher: agent,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { 'content-type': contentType } : {}) },
    ...(body !== undefined ? { body } : {}),
  });
  const text = await response.body.text();
  return { status: response.statusCode, text };
}

/** The light workspace's GET /v1/me latencies (ms), one request at a time, for `seconds`. */
async function measureLight(base: string, light: Tenant, seconds: number): Promise<number[]> {
  const times: number[] = [];
  const end = performance.now() + seconds * 1000;
  while (performance.now() < end) {
    const started = performance.now();
    const { status } = await call(base, light.token, 'GET', '/v1/me');
    if (status !== 200) throw new Error(`GET /v1/me answered ${status}`);
    times.push(performance.now() - started);
  }
  return times.sort((a, b) => a - b);
}

interface HeavyWork {
  method: 'GET' | 'POST';
  path: string;
  token?: string;
  body?: string | Buffer;
  contentType?: string;
}

/**
 * `loops` loops of one request, on a worker thread of its own: the heavy answers (1000-row pages,
 * the 720 KB document) are read there, so that this thread's event loop, which times the light
 * requests, is not held up by reading them. Resolves, once told to stop, with answers by status.
 */
function runLoops(base: string, loops: number, work: HeavyWork): { stop(): Promise<{ statuses: Record<string, number>; importIds: string[] }> } {
  const worker = new Worker(
    `const { workerData, parentPort } = require('node:worker_threads');
    const { base, loops, work } = workerData;
    let stopped = false;
    const statuses = {};
    const importIds = [];
    const headers = { ...(work.token ? { authorization: 'Bearer ' + work.token } : {}), ...(work.body !== undefined ? { 'content-type': work.contentType ?? 'application/json' } : {}) };
    const running = Promise.all(Array.from({ length: loops }, async () => {
      while (!stopped) {
        let status = 0;
        try {
          const response = await fetch(base + work.path, { method: work.method, headers, body: work.body });
          const text = await response.text();
          status = response.status;
          if (status === 202) importIds.push(JSON.parse(text).importId);
        } catch {}
        statuses[status] = (statuses[status] ?? 0) + 1;
      }
    }));
    parentPort.on('message', () => { stopped = true; running.then(() => { parentPort.postMessage({ statuses, importIds }); parentPort.close(); }); });`,
    { eval: true, workerData: { base, loops, work } },
  );
  return {
    stop: () =>
      new Promise((resolve) => {
        worker.once('message', (answers: { statuses: Record<string, number>; importIds: string[] }) => {
          void worker.terminate();
          resolve(answers);
        });
        worker.postMessage('stop');
      }),
  };
}

function csvOf(rows: number, offset: number): string {
  const lines = ['email,firstName,lastName'];
  for (let i = 0; i < rows; i++) lines.push(`person${offset + i}@example.org,First${i},Last${i}`);
  return `${lines.join('\n')}\n`;
}

async function waitForImport(base: string, tenant: Tenant, importId: string) {
  for (;;) {
    const { text } = await call(base, tenant.token, 'GET', `/v1/imports/${importId}`);
    const status = (JSON.parse(text) as { status: string }).status;
    if (status === 'COMPLETED' || status === 'FAILED') return status;
    await sleep(200);
  }
}

interface Row {
  store: string;
  work: string;
  p50: number;
  p99: number;
  p50Ratio: number;
  p99Ratio: number;
  heavy: string;
}

async function benchStore(store: BenchStore, seconds: number, uploadBytes: number, only: string[] | undefined, profileDir?: string): Promise<Row[]> {
  const heavy = createWorkspace(store, 'Heavy');
  const light = createWorkspace(store, 'Light');
  const server = await startBundledServer({ env: { ...storeEnv(store), REDIS_URL: '' }, ...(profileDir ? { nodeFlags: ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] } : {}) });
  const base = `http://127.0.0.1:${server.port}`;
  try {
    // 2,000 people for 1000-row pages.
    const seeded = await call(base, heavy.token, 'POST', '/v1/imports', csvOf(2000, 0), 'text/csv');
    if (seeded.status !== 202) throw new Error(`seeding answered ${seeded.status}: ${seeded.text}`);
    await waitForImport(base, heavy, (JSON.parse(seeded.text) as { importId: string }).importId);
    const people = await call(base, heavy.token, 'POST', '/v1/people/search', JSON.stringify({ pageInfo: { size: 1 } }));
    const personId = (JSON.parse(people.text) as { results: { personId: string }[] }).results[0]!.personId;
    // The heaviest loop template that saving still takes (half the render budget with the examples).
    let templateId = '';
    let loopLength = 0;
    let lastRefusal = '';
    for (const length of [400_000, 200_000, 100_000, 50_000, 20_000, 10_000, 5_000, 2_000, 1_000, 500, 200, 100]) {
      const saved = await call(base, heavy.token, 'POST', '/v1/message-templates', JSON.stringify({ name: 'Loop', subject: 'x', textBody: `{% for i in (1..${length}) %}{{ i }}{% endfor %}` }));
      lastRefusal = `${saved.status} ${saved.text}`;
      if (saved.status === 201) {
        templateId = (JSON.parse(saved.text) as { templateId: string }).templateId;
        loopLength = length;
        break;
      }
    }
    if (!templateId) throw new Error(`no loop template was saved: ${lastRefusal}`);
    const bigCsv = Buffer.from(csvOf(Math.floor(uploadBytes / 40), 100_000));

    await measureLight(base, light, 2); // warm-up
    const alone = await measureLight(base, light, seconds);
    const rows: Row[] = [];
    const record = (work: string, times: number[], heavyStatuses: Record<string, number>) =>
      rows.push({
        store: store.kind,
        work,
        p50: percentile(times, 50),
        p99: percentile(times, 99),
        p50Ratio: percentile(times, 50) / percentile(alone, 50),
        p99Ratio: percentile(times, 99) / percentile(alone, 99),
        heavy: Object.entries(heavyStatuses)
          .map(([status, count]) => `${count}x${status}`)
          .join(' '),
      });
    record('alone', alone, {});

    const works: [string, number, HeavyWork][] = [
      [`previews (8 loops, loop of ${loopLength})`, 8, { method: 'POST', path: `/v1/message-templates/${templateId}/preview`, token: heavy.token, body: JSON.stringify({ personId }) }],
      ['searches (16 loops, 1000 rows)', 16, { method: 'POST', path: '/v1/people/search', token: heavy.token, body: JSON.stringify({ pageInfo: { size: 1000 } }) }],
      [`upload (${(bigCsv.length / 1024 ** 2).toFixed(0)} MB CSV, 1 loop)`, 1, { method: 'POST', path: '/v1/imports', token: heavy.token, body: bigCsv, contentType: 'text/csv' }],
      ['openapi (16 loops)', 16, { method: 'GET', path: '/v1/openapi.json' }],
    ];
    for (const [name, loops, work] of works) {
      if (only && !only.some((prefix) => name.startsWith(prefix))) continue;
      const running = runLoops(base, loops, work);
      await sleep(300);
      const times = await measureLight(base, light, seconds);
      const { statuses, importIds } = await running.stop();
      record(name, times, statuses);
      // The import jobs an upload started run on after it: they finish before the next work (the
      // openapi row once measured them too: 147 ms at the median on the embedded store).
      for (const importId of importIds) await waitForImport(base, heavy, importId);
      await sleep(500);
    }
    // What bounding each import batch's time costs the import itself: the big file alone, from
    // its upload to COMPLETED, after the rows (its people would have made the searches' table bigger) (on the embedded store the batches are sized to a few ms each).
    const importStarted = performance.now();
    const alonePost = await call(base, heavy.token, 'POST', '/v1/imports', bigCsv, 'text/csv');
    if (alonePost.status !== 202) throw new Error(`the import alone answered ${alonePost.status}: ${alonePost.text}`);
    await waitForImport(base, heavy, (JSON.parse(alonePost.text) as { importId: string }).importId);
    const importSeconds = (performance.now() - importStarted) / 1000;
    process.stdout.write(`${store.kind}: the ${(bigCsv.length / 1024 ** 2).toFixed(0)} MB import alone took ${importSeconds.toFixed(1)} s (${Math.round(Math.floor(uploadBytes / 40) / importSeconds)} rows/s)\n`);
    return rows;
  } finally {
    await server.stop();
  }
}

export async function run(options: BenchOptions): Promise<BenchResult> {
  const seconds = flagNumber(options.flags, 'seconds', options.quick ? 5 : 20);
  const uploadBytes = options.quick ? 4 * 1024 ** 2 : 20 * 1024 ** 2;
  // --only=searches,openapi: those rows (and alone) only.
  const only = flagValue(options.flags, 'only')?.split(',');
  // --profile: the server's CPU profile of each store's run, summarized by where the self time went.
  const profile = (store: string) => (options.flags.includes('--profile') ? mkdtempSync(path.join(tmpdir(), `fairness-profile-${store}-`)) : undefined);
  const rows: Row[] = [];
  const embedded = freshEmbeddedStore('bench-fairness');
  try {
    const profileDir = profile('embedded');
    rows.push(...(await benchStore(embedded.store, seconds, uploadBytes, only, profileDir)));
    if (profileDir) printProfiles(profileDir);
  } finally {
    embedded.dispose();
  }
  if (process.env.DATABASE_URL) {
    const store = await recreatePostgresDatabase('bench_fairness');
    try {
      const profileDir = profile('postgres');
      rows.push(...(await benchStore(store, seconds, uploadBytes, only, profileDir)));
      if (profileDir) printProfiles(profileDir);
    } finally {
      await dropPostgresDatabase('bench_fairness');
    }
  }
  await agent.close();
  process.stdout.write(
    `${formatTable(
      ['store', 'heavy work of another workspace', 'light p50 ms', 'light p99 ms', 'p50 ×', 'p99 ×', 'heavy answers'],
      rows.map((row) => [row.store, row.work, row.p50.toFixed(1), row.p99.toFixed(1), row.p50Ratio.toFixed(2), row.p99Ratio.toFixed(2), row.heavy]),
    )}\n`,
  );
  const worst = Math.max(...rows.map((row) => row.p99Ratio));
  return { bench: 'fairness', quick: options.quick, ratio: worst, rows };
}
