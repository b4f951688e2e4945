import { execFileSync } from 'node:child_process';
import { createReadStream, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { copyFloor, type FloorFigures, seedImportBench, writePeopleCsv } from './import-data.js';
import { startBundledServer } from './lib/child.js';
import { processCpuMs } from './lib/cpu.js';
import { processMemory, sampleMemory } from './lib/memory.js';
import { summarizeProfile } from './lib/profile.js';
import { defaultDatabaseUrl, dropPostgresDatabase, recreatePostgresDatabase, storeEnv } from './lib/store.js';
import { formatTable } from './lib/table.js';
import { type BenchOptions, type BenchResult, flagNumber, flagValue } from './lib/types.js';
import { serverNodeFlags } from './lib/server-flags.js';

/**
 * POST /imports of a generated CSV of people (five custom properties) through the whole service,
 * on PostgreSQL: the upload, then the background job, polled through GET /imports/{id} as a
 * client would, until COMPLETED. The floor, measured in the same run on the same server: the
 * same file through PostgreSQL's own COPY into a plain table. The service runs in a child
 * process whose resident memory is sampled throughout the import.
 */

const POLL_MS = 100;

function log(line: string) {
  process.stdout.write(`${line}\n`);
}

const round1 = (value: number) => Math.round(value * 10) / 10;
const megabytes = (bytes: number) => round1(bytes / (1024 * 1024));
const perSecond = (rows: number, seconds: number) => Math.round(rows / seconds);

/**
 * CPU used by the PostgreSQL backends serving the bench's database while it runs: pool
 * connections come and go, so their pids are listed every half second (over a connection to
 * another database, which is then not among them) and each one's CPU followed from when it was
 * first seen (from zero for one that appeared meanwhile: a new backend starts near zero).
 */
async function trackDatabaseCpu(databaseName: string, serverUrl: string) {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  const first = new Map<number, number>();
  const last = new Map<number, number>();
  const list = async () => (await client.query<{ pid: number }>('select pid from pg_stat_activity where datname = $1', [databaseName])).rows.map((row) => row.pid);
  for (const pid of await list()) {
    const cpu = processCpuMs(pid);
    if (cpu !== undefined) first.set(pid, cpu);
  }
  let stopped = false;
  const sample = async () => {
    for (const pid of await list()) {
      const cpu = processCpuMs(pid);
      if (cpu === undefined) continue;
      if (!first.has(pid)) first.set(pid, 0);
      last.set(pid, cpu);
    }
  };
  const loop = (async () => {
    while (!stopped) {
      await sample();
      await sleep(500);
    }
  })();
  return {
    async stop(): Promise<number> {
      stopped = true;
      await loop;
      await sample();
      await client.end();
      let total = 0;
      for (const [pid, cpu] of last) total += cpu - (first.get(pid) ?? 0);
      return total;
    },
  };
}

/** POST /v1/imports with the file streamed as the body; answers the import id once the service has stored it. */
function upload(port: number, token: string, file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/v1/imports',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'text/csv', 'content-length': statSync(file).size },
      },
      (response) => {
        const parts: Buffer[] = [];
        response.on('data', (part: Buffer) => parts.push(part));
        response.on('end', () => {
          const body = Buffer.concat(parts).toString('utf8');
          if (response.statusCode !== 202) reject(new Error(`POST /v1/imports answered ${response.statusCode}: ${body.slice(0, 500)}`));
          else resolve((JSON.parse(body) as { importId: string }).importId);
        });
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    createReadStream(file, { highWaterMark: 256 * 1024 }).on('error', reject).pipe(request);
  });
}

interface ImportView {
  status: string;
  rowsTotal: number;
  rowsImported: number;
  rowsFailed: number;
  errors: { row: number; message: string }[];
}

async function waitForImport(port: number, token: string, importId: string): Promise<ImportView> {
  for (;;) {
    const response = await fetch(`http://127.0.0.1:${port}/v1/imports/${importId}`, { headers: { authorization: `Bearer ${token}` } });
    const view = (await response.json()) as ImportView;
    if (response.status !== 200) throw new Error(`GET /v1/imports/${importId} answered ${response.status}: ${JSON.stringify(view)}`);
    if (view.status === 'COMPLETED' || view.status === 'FAILED') return view;
    await sleep(POLL_MS);
  }
}

interface ServiceFigures {
  uploadSeconds: number;
  jobSeconds: number;
  totalSeconds: number;
  baselineRss: number;
  peakRss: number;
  /** The child's VmHWM at the end: its peak over its whole life, start-up included. */
  highWaterMark: number;
  serverCpuMs: number;
  databaseCpuMs: number;
  profile?: string;
}

/** One import through the service, on a freshly created database (every row a new person). */
async function measureService(rows: number, file: string, options: { profileDirectory?: string; heapCapMiB?: number }): Promise<ServiceFigures> {
  const store = await recreatePostgresDatabase('bench_import');
  if (store.kind !== 'postgres') throw new Error('unreachable');
  const seed = await seedImportBench(store);
  // The service as users run it: the bundle (built at the start of run()).
  const server = await startBundledServer({
    env: { ...storeEnv(store), REDIS_URL: '', LOG_LEVEL: 'silent', JOBS: 'on', JOB_POLL_SECONDS: '0.2' },
    nodeFlags: [
      // As npm start runs the server.
      ...serverNodeFlags(),
      ...(options.profileDirectory ? ['--cpu-prof', `--cpu-prof-dir=${options.profileDirectory}`] : []),
      ...(options.heapCapMiB ? [`--max-old-space-size=${options.heapCapMiB}`] : []),
      // Node flags to try on the server, e.g. BENCH_NODE_FLAGS="--max-semi-space-size=4".
      ...(process.env.BENCH_NODE_FLAGS ? process.env.BENCH_NODE_FLAGS.split(' ') : []),
    ],
  });
  try {
    const pid = server.process.pid;
    // Settled after start-up: what the import adds is measured from here.
    await sleep(1000);
    const baselineRss = processMemory(pid)?.rss ?? Number.NaN;
    const serverUrl = process.env.DATABASE_URL || defaultDatabaseUrl;
    const databaseCpu = await trackDatabaseCpu('bench_import', serverUrl);
    const memory = sampleMemory(pid);
    const cpuBefore = processCpuMs(pid);
    const started = performance.now();
    const importId = await upload(server.port, seed.token, file);
    const uploaded = performance.now();
    const view = await waitForImport(server.port, seed.token, importId);
    const finished = performance.now();
    const cpuAfter = processCpuMs(pid);
    const { peakRss } = memory.stop();
    const databaseCpuMs = await databaseCpu.stop();
    const highWaterMark = processMemory(pid)?.highWaterMark ?? Number.NaN;
    if (view.status !== 'COMPLETED' || view.rowsImported !== rows || view.rowsFailed !== 0) {
      throw new Error(`The import ended ${view.status} with ${view.rowsImported} of ${rows} rows imported, ${view.rowsFailed} failed: ${JSON.stringify(view.errors.slice(0, 5))}`);
    }
    const people = await countPeople(store.databaseUrl, seed.workspaceId);
    if (people !== rows) throw new Error(`The workspace holds ${people} people after importing ${rows} rows`);
    return {
      uploadSeconds: (uploaded - started) / 1000,
      jobSeconds: (finished - uploaded) / 1000,
      totalSeconds: (finished - started) / 1000,
      baselineRss,
      peakRss,
      highWaterMark,
      serverCpuMs: cpuBefore === undefined || cpuAfter === undefined ? Number.NaN : cpuAfter - cpuBefore,
      databaseCpuMs,
    };
  } finally {
    await server.stop();
  }
}

async function countPeople(databaseUrl: string, workspaceId: string): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ count: string }>('select count(*) from people where workspace_id = $1 and deleted_at is null', [workspaceId]);
    return Number(rows[0]!.count);
  } finally {
    await client.end();
  }
}

function profileSummary(directory: string): string | undefined {
  // The main thread's profile is the largest.
  const file = readdirSync(directory)
    .filter((name) => name.endsWith('.cpuprofile'))
    .sort((a, b) => statSync(path.join(directory, b)).size - statSync(path.join(directory, a)).size)[0];
  if (!file) return undefined;
  const lines = summarizeProfile(path.join(directory, file));
  return `Service CPU profile (self time, profiled run not counted): ${path.join(directory, file)}\n${formatTable(
    ['where', 'self ms', 'share %'],
    lines.map((line) => [line.where, line.selfMs, round1(line.selfShare * 100)]),
  )}`;
}

export async function run(options: BenchOptions): Promise<BenchResult> {
  const { quick, flags } = options;
  const unknown = flags.filter((flag) => !/^--rows=|^--heap-cap=|^--profile$/.test(flag));
  if (unknown.length > 0) throw new Error(`Unknown flag(s) for the import bench: ${unknown.join(' ')} (known: --rows=N, --heap-cap=MiB, --profile)`);
  const rows = Math.round(flagNumber(flags, 'rows', quick ? 50_000 : 1_000_000));
  // The server's V8 old generation capped (node --max-old-space-size): V8 otherwise lets garbage
  // grow the heap well past what is live before it collects, and the peak shows that policy more
  // than the import's own memory.
  const heapCapMiB = flagValue(flags, 'heap-cap') === undefined ? undefined : Math.round(flagNumber(flags, 'heap-cap', 0));
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: fileURLToPath(new URL('..', import.meta.url)), stdio: 'inherit' });
  const directory = mkdtempSync(path.join(tmpdir(), 'bench-import-'));
  const file = path.join(directory, 'people.csv');
  try {
    log(
      `import bench: ${rows.toLocaleString('en-US')} people with 5 custom properties through POST /imports on PostgreSQL, beside COPY of the same file` +
        (heapCapMiB ? ` (server's old generation capped at ${heapCapMiB} MiB)` : ''),
    );
    const generateStart = performance.now();
    const bytes = await writePeopleCsv(file, rows);
    log(`generated ${megabytes(bytes)} MiB of CSV in ${((performance.now() - generateStart) / 1000).toFixed(1)} s`);

    // The floor before and after the service, on the same server: the better of the two, as a
    // drift in the shared machine's load then weighs on both sides alike.
    const floorRuns: FloorFigures[] = [];
    const store = await recreatePostgresDatabase('bench_import_floor');
    if (store.kind !== 'postgres') throw new Error('unreachable');
    const copyInto = async (kind: 'plain' | 'indexed') => {
      const figures = await copyFloor(store.databaseUrl, file, kind);
      if (figures.rows !== rows) throw new Error(`COPY loaded ${figures.rows} rows of ${rows}`);
      log(`  COPY into ${kind === 'plain' ? 'a plain table' : "a table with people's key and indexes"}: ${perSecond(rows, figures.seconds).toLocaleString('en-US')} rows/s (${figures.seconds.toFixed(1)} s)`);
      return figures;
    };
    const floor = async () => {
      floorRuns.push(await copyInto('plain'));
    };
    await floor();
    const indexedFloor = await copyInto('indexed');
    const service = await measureService(rows, file, { heapCapMiB });
    log(
      `  service: ${perSecond(rows, service.totalSeconds).toLocaleString('en-US')} rows/s end to end ` +
        `(upload ${service.uploadSeconds.toFixed(1)} s, job ${service.jobSeconds.toFixed(1)} s), peak RSS ${megabytes(service.peakRss)} MiB`,
    );
    await floor();
    const bestFloor = floorRuns.reduce((a, b) => (b.seconds < a.seconds ? b : a));

    let profileLines: string | undefined;
    if (flags.includes('--profile')) {
      const profileDirectory = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '.bench-data', 'profiles', `import-${new Date().toISOString().replace(/[:.]/g, '-')}`);
      mkdirSync(profileDirectory, { recursive: true });
      await measureService(rows, file, { profileDirectory, heapCapMiB });
      profileLines = profileSummary(profileDirectory);
    }

    const serviceRate = rows / service.totalSeconds;
    const floorRate = rows / bestFloor.seconds;
    const ratio = serviceRate / floorRate;
    log('');
    log(
      formatTable(
        ['what', 'seconds', 'rows/s', 'node CPU s', 'PostgreSQL CPU s'],
        [
          ['COPY floor (best of 2)', round1(bestFloor.seconds), Math.round(floorRate), '-', Number.isFinite(bestFloor.databaseCpuMs) ? round1(bestFloor.databaseCpuMs / 1000) : 'n/a'],
          [
            'COPY, people\'s key and indexes (informational)',
            round1(indexedFloor.seconds),
            perSecond(rows, indexedFloor.seconds),
            '-',
            Number.isFinite(indexedFloor.databaseCpuMs) ? round1(indexedFloor.databaseCpuMs / 1000) : 'n/a',
          ],
          ['service: upload (POST /imports)', round1(service.uploadSeconds), perSecond(rows, service.uploadSeconds), '', ''],
          ['service: job, to COMPLETED', round1(service.jobSeconds), perSecond(rows, service.jobSeconds), '', ''],
          [
            'service: end to end',
            round1(service.totalSeconds),
            Math.round(serviceRate),
            Number.isFinite(service.serverCpuMs) ? round1(service.serverCpuMs / 1000) : 'n/a',
            round1(service.databaseCpuMs / 1000),
          ],
        ],
      ),
    );
    log('');
    log(`ratio ${ratio.toFixed(3)} of COPY's rows/s (COPY is ${(1 / ratio).toFixed(2)}× faster; aim: within 3×, ratio >= 0.333)`);
    log(`against COPY into a table with people's key and indexes: ${(serviceRate / (rows / indexedFloor.seconds)).toFixed(3)}`);
    log(
      `server memory: ${megabytes(service.baselineRss)} MiB before the upload, peak ${megabytes(service.peakRss)} MiB during the import ` +
        `(sampled every 100 ms; VmHWM over the process's life ${megabytes(service.highWaterMark)} MiB; aim: under 300 MB, flat in the file's size)`,
    );
    if (profileLines) log(`\n${profileLines}`);

    return {
      bench: 'import',
      quick,
      store: 'postgres',
      rows,
      ...(heapCapMiB ? { heapCapMiB } : {}),
      csvBytes: bytes,
      serviceRowsPerSecond: Math.round(serviceRate),
      floorRowsPerSecond: Math.round(floorRate),
      ratio: Math.round(ratio * 1000) / 1000,
      uploadSeconds: round1(service.uploadSeconds),
      jobSeconds: round1(service.jobSeconds),
      floorSeconds: round1(bestFloor.seconds),
      floorSecondsEach: floorRuns.map((figures) => round1(figures.seconds)),
      // Informational: COPY into a table with people's key and indexes.
      indexedFloorRowsPerSecond: perSecond(rows, indexedFloor.seconds),
      ratioToIndexedFloor: Math.round((serviceRate / (rows / indexedFloor.seconds)) * 1000) / 1000,
      peakRssMiB: megabytes(service.peakRss),
      baselineRssMiB: megabytes(service.baselineRss),
      highWaterMarkMiB: megabytes(service.highWaterMark),
      serverCpuSeconds: round1(service.serverCpuMs / 1000),
      databaseCpuSeconds: round1(service.databaseCpuMs / 1000),
      floorDatabaseCpuSeconds: round1(bestFloor.databaseCpuMs / 1000),
    };
  } finally {
    rmSync(directory, { recursive: true, force: true });
    await dropPostgresDatabase('bench_import_floor');
    await dropPostgresDatabase('bench_import');
  }
}
