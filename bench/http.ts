import { mkdirSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { seedHttpBench } from './http-seed.js';
import { startBundledServer, startChild } from './lib/child.js';
import { processCpuMs, processesCpuMs } from './lib/cpu.js';
import { applyLoad, type LoadFigures } from './lib/load.js';
import { summarizeProfile } from './lib/profile.js';
import { backendPids, type BenchStore, freshEmbeddedStore, recreatePostgresDatabase, storeEnv } from './lib/store.js';
import { formatTable } from './lib/table.js';
import { type BenchOptions, type BenchResult, flagNumber, flagValue } from './lib/types.js';
import { serverNodeFlags } from './lib/server-flags.js';

/**
 * GET /v1/studies/{id} through the whole service (auth, rate limit, validation, hooks,
 * serialization) against a floor: a bare Fastify route in the same kind of process, on the
 * same store, sending the same SQL and returning the same bytes. The difference is what the
 * service's own machinery costs per request.
 *
 * `--rls`: row-level security's cost instead. The service runs against itself started with
 * ROW_LEVEL_SECURITY=off, the two alternating round by round (use many rounds: `--rounds=10`),
 * and the bench reports one minus the median of the rounds' throughput ratios, beside the CPU per
 * request in the server and in the database, each the median over rounds.
 */

const serverEntry = new URL('./http-server.ts', import.meta.url).href;
const CONNECTIONS = 50;

type Target = 'service' | 'floor' | 'service-no-rls';

interface Measurement extends LoadFigures {
  target: Target;
  round: number;
  /** The server process's CPU time per answered request, in microseconds (NaN without /proc). */
  cpuUsPerRequest: number;
  /** The database server's CPU time per request, over the connections of the server measured. */
  dbCpuUsPerRequest: number;
}

function log(line: string) {
  process.stdout.write(`${line}\n`);
}

async function startServer(target: Target, store: BenchStore, workspaceId: string, nodeFlags: string[] = []) {
  // Both processes run with the service's V8 flags (package.json's start script), then any given.
  if (target === 'floor') return startChild(serverEntry, ['floor'], { env: { ...storeEnv(store), BENCH_WORKSPACE_ID: workspaceId }, nodeFlags: [...serverNodeFlags(), ...nodeFlags] });
  // The service as users run it: the bundle, with a rate limit no load reaches, logs off, no background work.
  const env = { ...storeEnv(store), REDIS_URL: '', LOG_LEVEL: 'silent', JOBS: 'off', ...(target === 'service-no-rls' ? { ROW_LEVEL_SECURITY: 'off' } : {}) };
  return startBundledServer({ env, nodeFlags: [...serverNodeFlags(), ...nodeFlags] });
}

async function fetchBody(port: number, studyId: string, token: string): Promise<Buffer> {
  const response = await fetch(`http://127.0.0.1:${port}/v1/studies/${studyId}`, { headers: { authorization: `Bearer ${token}` } });
  const body = Buffer.from(await response.arrayBuffer());
  if (response.status !== 200) throw new Error(`GET /v1/studies/${studyId} answered ${response.status}: ${body.toString('utf8').slice(0, 500)}`);
  return body;
}

/** Both servers must give byte-identical bodies, or the comparison measures different work. */
async function checkSameBytes(store: BenchStore, workspaceId: string, studyId: string, token: string): Promise<number> {
  const bodies: Partial<Record<Target, Buffer>> = {};
  // One at a time: an embedded store admits one process.
  for (const target of ['service', 'floor'] as const) {
    const server = await startServer(target, store, workspaceId);
    try {
      bodies[target] = await fetchBody(server.port, studyId, token);
    } finally {
      await server.stop();
    }
  }
  const { service, floor } = bodies as Record<Target, Buffer>;
  if (!service.equals(floor)) {
    throw new Error(`The floor's body differs from the service's.\nservice: ${service.toString('utf8')}\nfloor:   ${floor.toString('utf8')}`);
  }
  const study = JSON.parse(service.toString('utf8')) as { owners: unknown[]; screener: { questions: unknown[] } | null };
  if (study.owners.length < 2 || !study.screener || study.screener.questions.length < 2) {
    throw new Error('The target study should have several owners and a screener with questions');
  }
  return service.length;
}

interface Plan {
  store: BenchStore;
  seeded: { workspaceId: string; studyId: string; token: string };
  seconds: { warm: number; run: number };
  /** Run the floor in the service's place too: the ratio then shows the noise alone. */
  calibrate: boolean;
  /** What the service is compared with: the floor, or itself without row-level security. */
  against: Target;
}

async function measure(target: Target, round: number, plan: Plan, nodeFlags: string[] = []): Promise<Measurement> {
  const { store, seeded, seconds } = plan;
  const server = await startServer(plan.calibrate ? plan.against : target, store, seeded.workspaceId, nodeFlags);
  try {
    const load = {
      url: `http://127.0.0.1:${server.port}/v1/studies/${seeded.studyId}`,
      connections: CONNECTIONS,
      headers: { authorization: `Bearer ${seeded.token}` },
    };
    // JIT, pool connections and caches settle before anything is counted.
    await applyLoad({ ...load, seconds: seconds.warm });
    // The pool's connections are all open after the warm-up; their backends do this server's queries.
    const backends = await backendPids(store);
    const cpuBefore = processCpuMs(server.process.pid);
    const dbCpuBefore = processesCpuMs(backends);
    const figures = await applyLoad({ ...load, seconds: seconds.run });
    const cpuAfter = processCpuMs(server.process.pid);
    const dbCpuAfter = processesCpuMs(backends);
    const perRequest = (before: number | undefined, after: number | undefined) =>
      before === undefined || after === undefined ? Number.NaN : ((after - before) * 1000) / figures.requests;
    const cpuUsPerRequest = perRequest(cpuBefore, cpuAfter);
    const dbCpuUsPerRequest = perRequest(dbCpuBefore, dbCpuAfter);
    log(
      `  ${target.padEnd(14)} round ${round}: ${Math.round(figures.rps).toLocaleString('en-US')} req/s, p99 ${figures.p99Ms} ms, ` +
        `CPU per request ${Math.round(cpuUsPerRequest)} µs in the server, ${Math.round(dbCpuUsPerRequest)} µs in the database`,
    );
    return { target, round, cpuUsPerRequest, dbCpuUsPerRequest, ...figures };
  } finally {
    await server.stop();
  }
}

const best = (measurements: Measurement[], target: Target) =>
  measurements.filter((measurement) => measurement.target === target).reduce((a, b) => (b.rps > a.rps ? b : a));

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length / 2;
  return Number.isInteger(middle) ? (sorted[middle - 1]! + sorted[middle]!) / 2 : sorted[Math.floor(middle)]!;
}

function medianOf(measurements: Measurement[], target: Target, figure: 'cpuUsPerRequest' | 'dbCpuUsPerRequest'): number | null {
  const values = measurements
    .filter((measurement) => measurement.target === target && Number.isFinite(measurement[figure]))
    .map((measurement) => measurement[figure]);
  return values.length === 0 ? null : Math.round(median(values));
}

const round1 = (value: number) => Math.round(value * 10) / 10;

export async function run(options: BenchOptions): Promise<BenchResult> {
  const { quick, flags } = options;
  const unknown = flags.filter((flag) => !/^--(store|rounds|seconds)=|^--(profile|calibrate|rls)$/.test(flag));
  if (unknown.length > 0) {
    throw new Error(`Unknown flag(s) for the http bench: ${unknown.join(' ')} (known: --store=postgres|embedded, --profile, --calibrate, --rls, --rounds=N, --seconds=N)`);
  }
  const calibrate = flags.includes('--calibrate');
  const against: Target = flags.includes('--rls') ? 'service-no-rls' : 'floor';
  const storeKind = flagValue(flags, 'store') ?? 'postgres';
  if (storeKind !== 'postgres' && storeKind !== 'embedded') throw new Error(`--store must be postgres or embedded, got ${storeKind}`);
  const rounds = Math.max(1, Math.round(flagNumber(flags, 'rounds', 2)));
  const seconds = { run: flagNumber(flags, 'seconds', quick ? 5 : 20), warm: quick ? 2 : 5 };
  const totalStudies = quick ? 500 : 10_000;

  let dispose = () => {};
  let store: BenchStore;
  if (storeKind === 'postgres') {
    store = await recreatePostgresDatabase('bench_http');
  } else {
    const fresh = freshEmbeddedStore('bench-http');
    store = fresh.store;
    dispose = fresh.dispose;
  }
  try {
    log(`http bench: GET /v1/studies/{id}, ${CONNECTIONS} connections, ${seconds.run} s per run after ${seconds.warm} s warm-up, ${rounds} rounds, store ${storeKind}`);
    const seedStart = performance.now();
    const seeded = await seedHttpBench(store, totalStudies);
    log(`seeded ${seeded.studies.toLocaleString('en-US')} studies in ${seeded.workspaces} workspaces in ${((performance.now() - seedStart) / 1000).toFixed(1)} s`);
    const bytes = await checkSameBytes(store, seeded.workspaceId, seeded.studyId, seeded.token);
    log(`service and floor return the same ${bytes} bytes for the target study`);
    if (calibrate) log(`calibration: the ${against} runs in the service's place, so the ratio shows the machine's noise alone`);
    if (against === 'service-no-rls') log('row-level security: the service against itself with ROW_LEVEL_SECURITY=off');
    const plan: Plan = { store, seeded, seconds, calibrate, against };

    const measurements: Measurement[] = [];
    for (let round = 1; round <= rounds; round++) {
      // Service first in odd rounds, floor first in even ones: a drift in the machine's load
      // (others' work on shared cores) then weighs on both alike.
      const order: Target[] = round % 2 === 1 ? ['service', against] : [against, 'service'];
      for (const target of order) measurements.push(await measure(target, round, plan));
    }

    let profileLines: string | undefined;
    if (flags.includes('--profile')) {
      // An extra, uncounted run: the profiler slows the process it watches.
      const directory = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '.bench-data', 'profiles', new Date().toISOString().replace(/[:.]/g, '-'));
      mkdirSync(directory, { recursive: true });
      await measure('service', rounds + 1, plan, ['--cpu-prof', `--cpu-prof-dir=${directory}`]);
      // The main thread's profile is the largest; tsx's loader thread writes a small one too.
      const file = readdirSync(directory)
        .filter((name) => name.endsWith('.cpuprofile'))
        .sort((a, b) => statSync(path.join(directory, b)).size - statSync(path.join(directory, a)).size)[0];
      if (file) {
        const lines = summarizeProfile(path.join(directory, file));
        profileLines = `\nService CPU profile (self time, profiled run not counted): ${path.join(directory, file)}\n${formatTable(
          ['where', 'self ms', 'share %'],
          lines.map((line) => [line.where, line.selfMs, round1(line.selfShare * 100)]),
        )}`;
      }
    }

    const service = best(measurements, 'service');
    const floor = best(measurements, against);
    const ratio = service.rps / floor.rps;
    // Each round's service and floor ran back to back, so their ratio shares that moment's noise.
    const pairRatios = Array.from({ length: rounds }, (_, index) => {
      const of = (target: Target) => measurements.find((measurement) => measurement.round === index + 1 && measurement.target === target)!;
      return of('service').rps / of(against).rps;
    });
    log('');
    log(
      formatTable(
        ['target', 'round', 'req/s', 'p50 ms', 'p99 ms', 'server CPU µs/req', 'db CPU µs/req', 'requests', 'errors', 'non-2xx'],
        measurements.map((m) => [
          m.target,
          String(m.round),
          Math.round(m.rps),
          m.p50Ms,
          m.p99Ms,
          Number.isFinite(m.cpuUsPerRequest) ? Math.round(m.cpuUsPerRequest) : 'n/a',
          Number.isFinite(m.dbCpuUsPerRequest) ? Math.round(m.dbCpuUsPerRequest) : 'n/a',
          m.requests,
          m.errors,
          m.non2xx,
        ]),
      ),
    );
    log('');
    log(`best service ${Math.round(service.rps).toLocaleString('en-US')} req/s (p99 ${service.p99Ms} ms), best ${against} ${Math.round(floor.rps).toLocaleString('en-US')} req/s (p99 ${floor.p99Ms} ms)`);
    const cpu = (target: Target) => (medianOf(measurements, target, 'cpuUsPerRequest') ?? Number.NaN) + (medianOf(measurements, target, 'dbCpuUsPerRequest') ?? Number.NaN);
    let rls: { rlsCostPercent: number; rlsCostMeanPercent: number; rlsCpuCostPercent: number } | undefined;
    if (against === 'service-no-rls') {
      const meanRatio = pairRatios.reduce((sum, value) => sum + value, 0) / pairRatios.length;
      rls = {
        rlsCostPercent: round1((1 - median(pairRatios)) * 100),
        rlsCostMeanPercent: round1((1 - meanRatio) * 100),
        // CPU per request in the server and the database together, with the policy and without.
        rlsCpuCostPercent: round1((cpu('service') / cpu(against) - 1) * 100),
      };
      log(`per round, throughput with row-level security / without: ${pairRatios.map((value) => value.toFixed(3)).join(', ')}`);
      log(
        `row-level security costs ${rls.rlsCostPercent}% of throughput (median of ${rounds} paired rounds; mean ${rls.rlsCostMeanPercent}%), ` +
          `and ${rls.rlsCpuCostPercent}% more CPU per request, server and database together (${Math.round(cpu('service'))} µs against ${Math.round(cpu(against))} µs) (aim <= 5%)`,
      );
    } else {
      log(`ratio ${ratio.toFixed(3)} of the floor's throughput (target >= 0.70); per round ${pairRatios.map((value) => value.toFixed(3)).join(', ')}`);
    }
    const failures = measurements.filter((m) => m.errors > 0 || m.non2xx > 0);
    if (failures.length > 0) log(`WARNING: ${failures.length} run(s) had errors or non-2xx answers; their figures are suspect`);
    if (profileLines) log(profileLines);

    return {
      bench: 'http',
      quick,
      ...(calibrate ? { calibration: true } : {}),
      store: storeKind,
      studies: totalStudies,
      connections: CONNECTIONS,
      seconds: seconds.run,
      rounds,
      serviceRps: Math.round(service.rps),
      floorRps: Math.round(floor.rps),
      serviceP99Ms: service.p99Ms,
      floorP99Ms: floor.p99Ms,
      ratio: Math.round(ratio * 1000) / 1000,
      // Informational. The median of the rounds' own ratios, and CPU per request (median over
      // rounds) in the server process and in the database: a busy shared machine disturbs
      // these less than it disturbs throughput.
      medianRoundRatio: Math.round(median(pairRatios) * 1000) / 1000,
      serviceCpuUsPerRequest: medianOf(measurements, 'service', 'cpuUsPerRequest'),
      floorCpuUsPerRequest: medianOf(measurements, against, 'cpuUsPerRequest'),
      serviceDbCpuUsPerRequest: medianOf(measurements, 'service', 'dbCpuUsPerRequest'),
      floorDbCpuUsPerRequest: medianOf(measurements, against, 'dbCpuUsPerRequest'),
      ...(rls ? { against, ...rls } : {}),
    };
  } finally {
    dispose();
  }
}
