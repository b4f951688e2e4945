import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type CompiledQuery, type Kysely, Migrator, sql } from 'kysely';
import pg from 'pg';
import { type Database, openDatabase } from '../src/db/database.js';
import { migrations } from '../src/db/migrations/index.js';
import type { DB } from '../src/db/schema.js';
import { CursorCodec, loadCursorSecret } from '../src/http/cursor.js';
import { compileSearch, runSearch, type SearchCall } from '../src/search/run.js';
import { catalogue } from '../src/families/search-catalogue.js';
import { byParticipantId, participantsTarget } from '../src/families/participants/search-target.js';
import { byPersonId, peopleTarget } from '../src/families/people/search-target.js';
import { fingerprintOf, type SearchSeed, seedInfo, seedSearchBench } from './search-seed.js';
import type { CapturedStatement } from './search-server.js';
import { portable, revived } from './lib/captured.js';
import { namesParticipant, type SearchShape, searchShapes } from './search-shapes.js';
import { type RunningChild, startBundledServer, startChild } from './lib/child.js';
import { processMemory, sampleMemory } from './lib/memory.js';
import { type BenchStore, keptPostgresDatabase, recreatePostgresDatabase, storeEnv } from './lib/store.js';
import { formatTable } from './lib/table.js';
import { type BenchOptions, type BenchResult, flagNumber, flagValue } from './lib/types.js';
import { serverNodeFlags } from './lib/server-flags.js';

/**
 * E1 (POST /v1/studies/{studyId}/participants/search) and POST /v1/people/search (the whole
 * workspace; only the shapes that name no PARTICIPANT property) under load: each query shape's
 * first page of 25 with its exact total, a page deep in the result (reached by cursors), and a
 * page of 1000, at concurrency 8, closed loop, beside the floor: the very statements the service sent for that
 * request (recorded from a service process, then replayed with the same concurrency between
 * them) sent from a bare client pool at the same concurrency. The difference is what the
 * service adds around its SQL; the floor itself is what the SQL costs.
 */

const benchDirectory = path.dirname(fileURLToPath(import.meta.url));
const dataDirectory = path.join(benchDirectory, '..', '.bench-data');
const serverEntry = new URL('./search-server.ts', import.meta.url).href;
/** Requests in flight at once, closed loop (issue 4: 8); --concurrency=1 shows one client's latency. */
const DEFAULT_CONCURRENCY = 8;
/** The service's pool (openDatabase's default): the floor's pool has the same number of connections. */
const POOL_SIZE = 10;
const DEEP_POSITION = 5000;

function log(line: string) {
  process.stdout.write(`${line}\n`);
}

const openStore = (store: BenchStore) => openDatabase(store.kind === 'postgres' ? { databaseUrl: store.databaseUrl } : { dataDir: store.dataDir });

async function migrateKeptData(db: Kysely<DB>): Promise<string[]> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations }, allowUnorderedMigrations: true });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((result) => result.status === 'Success').map((result) => result.migrationName);
}

/** Opens (seeding when needed) the bench's store of `people` people. */
async function prepareStore(kind: 'postgres' | 'embedded', people: number, reuse: boolean): Promise<{ store: BenchStore; seed: SearchSeed }> {
  const name = `bench_search_${people}`;
  const store: BenchStore = kind === 'postgres' ? await keptPostgresDatabase(name) : { kind: 'embedded', dataDir: path.join(dataDirectory, `search-embedded-${people}`) };
  if (reuse) {
    const database = await openStore(store);
    try {
      const found = await seedInfo(database.db);
      if (found?.fingerprint === fingerprintOf({ people })) {
        // Migrations added since the seed (new indexes, statistics) apply to the kept data, even
        // those merged from other branches with earlier names than ones the data already has.
        const migrated = await migrateKeptData(database.db);
        if (migrated.length > 0) {
          log(`applied ${migrated.join(', ')} to the kept data; analyzing`);
          await sql`vacuum (analyze)`.execute(database.db);
        }
        log(`reusing the seeded ${kind} store ${store.kind === 'postgres' ? name : store.dataDir} (${found.fingerprint}, seeded ${found.seededAt})`);
        return { store, seed: found };
      }
      log(found ? `the kept store holds ${found.fingerprint}; reseeding` : 'no kept store of this size; seeding');
    } finally {
      await database.close();
    }
  }
  // Start from nothing: a fresh database, or an emptied directory.
  if (store.kind === 'postgres') await recreatePostgresDatabase(name);
  else rmSync(store.dataDir, { recursive: true, force: true });
  log(`seeding ${people.toLocaleString('en-US')} people on ${kind}…`);
  const seed = await seedSearchBench(store, { people }, log);
  const count = (value: number) => value.toLocaleString('en-US');
  log(
    `seeded in ${seed.seconds} s: ${count(seed.counts.people)} people, ${count(seed.counts.targetParticipants)} participants in the target study, ` +
      `${count(seed.counts.historyParticipants)} history rows over ${seed.counts.otherStudies} studies, ${count(seed.counts.contactEvents)} contact events`,
  );
  return { store, seed };
}

type PageKind = 'first' | 'deep' | 'large';
const pageKinds: PageKind[] = ['first', 'deep', 'large'];
const pageLabels: Record<PageKind, string> = { first: 'first 25', deep: 'deep 25', large: '1000' };
/** The cells' names in the JSON line. */
const pageKeys: Record<PageKind, string> = { first: 'first', deep: 'deep', large: 'page1000' };

/** What a search runs over: E1 (the target study's participants) or the whole workspace's people. */
type TargetKey = 'e1' | 'people';
const targetKeys: TargetKey[] = ['e1', 'people'];

interface Target {
  key: TargetKey;
  path: string;
  /** Whether the target can answer this shape (people search refuses PARTICIPANT names). */
  admits(shape: SearchShape): boolean;
}

function targetsOf(seed: SearchSeed): Record<TargetKey, Target> {
  return {
    e1: { key: 'e1', path: `/v1/studies/${seed.studyId}/participants/search`, admits: () => true },
    people: { key: 'people', path: '/v1/people/search', admits: (shape) => !namesParticipant(shape) },
  };
}

/** A search the service refused while the bench recorded it: its status and body, exactly. */
class SearchRefused extends Error {
  constructor(
    readonly path: string,
    readonly status: number,
    readonly body: string,
  ) {
    super(`POST ${path} answered ${status}: ${body}`);
  }
}

interface Refusal {
  target: TargetKey;
  shape: string;
  status: number;
  body: string;
}

interface SearchBody {
  filter: SearchShape['filter'];
  pageInfo: { startCursor?: string; size: number };
}

interface SearchAnswer {
  results: unknown[];
  total: number;
  pageInfo: { hasNextPage: boolean; endCursor: string };
}

/** One measured request: a target, a shape, a kind of page, its body, and the statements it sends. */
interface Cell {
  target: Target;
  shape: SearchShape;
  kind: PageKind;
  body: SearchBody;
  /** Where the page starts in the result (0 for first pages). */
  position: number;
  total: number;
  rows: number;
  /** The request's statements in waves: those of a wave were in flight together, waves one after another. */
  waves: CompiledQuery[][];
}

/** Groups recorded statements into waves: a statement started before every earlier one of its wave ended runs beside them. */
function wavesOf(statements: CapturedStatement[]): CompiledQuery[][] {
  const ordered = [...statements].sort((a, b) => a.startMs - b.startMs);
  const waves: { statements: CapturedStatement[]; firstEnd: number }[] = [];
  for (const statement of ordered) {
    const current = waves.at(-1);
    if (current && statement.startMs < current.firstEnd) {
      current.statements.push(statement);
      current.firstEnd = Math.min(current.firstEnd, statement.endMs);
    } else {
      waves.push({ statements: [statement], firstEnd: statement.endMs });
    }
  }
  return waves.map((wave) => wave.statements.map((statement) => ({ sql: statement.sql, parameters: statement.parameters.map(revived) }) as unknown as CompiledQuery));
}

/** The service, in a child process; with `capture`, it records the statements it sends. */
/**
 * The recording server runs the sources (its statement recorder is TypeScript); the measuring
 * server is the service as users run it, the bundle `npm start` runs (dist/server.js): under tsx,
 * the loader and the sources it transformed added some 10 MiB to its resident memory.
 */
function startService(store: BenchStore, capture: boolean): Promise<RunningChild> {
  // BENCH_CPU_PROFILE=<directory>: the measuring server writes a V8 CPU profile there when it stops.
  const profile = process.env.BENCH_CPU_PROFILE;
  if (!capture) {
    return startBundledServer({
      // The bench's one workspace measures a search's own speed: the per-workspace search budget (the fairness bench's
      // subject) would queue its concurrent searches behind each other, so it is lifted here.
      env: { ...storeEnv(store), REDIS_URL: '', LOG_LEVEL: 'silent', JOBS: 'off', SEARCH_BUDGET_MS_PER_SECOND: '0' },
      nodeFlags: [...serverNodeFlags(), ...(profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : [])],
    });
  }
  return startChild(serverEntry, [], {
    env: { ...storeEnv(store), BENCH_CAPTURE: capture ? 'on' : 'off' },
    // As npm start runs the server (its V8 flags), and with a CPU profile when asked.
    nodeFlags: [...serverNodeFlags(), ...(profile && !capture ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : [])],
  });
}

async function post(port: number, seed: SearchSeed, target: Target, body: SearchBody): Promise<{ status: number; answer: SearchAnswer; text: string; countedBy: string | undefined }> {
  const response = await fetch(`http://127.0.0.1:${port}${target.path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${seed.token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  const countedBy = /desc="(\w+)"/.exec(response.headers.get('server-timing') ?? '')?.[1];
  return { status: response.status, answer: (response.status === 200 ? JSON.parse(text) : undefined) as SearchAnswer, text, countedBy };
}

/**
 * Searches until the service's in-process counts answer: its Server-Timing header says `counts`,
 * or `sql` for a shape they do not answer (history counts, memberships); `preparing` while they
 * load in the background, when SQL counts meanwhile.
 */
async function warmCounts(port: number, seed: SearchSeed, target: Target, body: SearchBody, seconds = 300): Promise<string | undefined> {
  const until = Date.now() + seconds * 1000;
  for (;;) {
    const answer = await post(port, seed, target, body);
    if (answer.status !== 200) throw new SearchRefused(target.path, answer.status, answer.text);
    if (answer.countedBy !== 'preparing' || Date.now() > until) return answer.countedBy;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

async function searchOk(port: number, seed: SearchSeed, target: Target, body: SearchBody): Promise<SearchAnswer> {
  const { status, answer, text } = await post(port, seed, target, body);
  if (status !== 200) throw new SearchRefused(target.path, status, text);
  return answer;
}

/** Where the deep page starts: row ~5,000, or half-way through a smaller result (in whole steps of the walk). */
function deepTarget(total: number): { position: number; step: number } {
  const position = Math.min(DEEP_POSITION, Math.floor(total / 2));
  if (position < 25) return { position: 0, step: 25 };
  if (position <= 1000) return { position: Math.floor(position / 25) * 25, step: Math.floor(position / 25) * 25 };
  return { position: Math.floor(position / 1000) * 1000, step: 1000 };
}

/**
 * The cells of every shape, with the statements the service sends for each, recorded from a
 * warm request (the second of two identical ones: the principal is cached by then, as it is
 * under load).
 */
async function captureCells(port: number, seed: SearchSeed, target: Target, shapes: SearchShape[], refusals: Refusal[]): Promise<Cell[]> {
  const captured = async (body: SearchBody) => {
    await warmCounts(port, seed, target, body);
    await fetch(`http://127.0.0.1:${port}/bench/captured`);
    const answer = await searchOk(port, seed, target, body);
    // The principal lookup is left out: the service caches it (AUTH_CACHE_SECONDS), so under load
    // it is one statement every few seconds, not one per request; a slow request before this one
    // can let the cache lapse just as the recording starts.
    const statements = ((await (await fetch(`http://127.0.0.1:${port}/bench/captured`)).json()) as CapturedStatement[]).filter((statement) => !/\bapi_tokens\b/.test(statement.sql));
    return { answer, waves: wavesOf(statements) };
  };
  const cells: Cell[] = [];
  for (const shape of shapes) {
    try {
      const first = await captured({ filter: shape.filter, pageInfo: { size: 25 } });
      const total = first.answer.total;
      const deep = deepTarget(total);
      let startCursor: string | undefined;
      for (let position = 0; position < deep.position; position += deep.step) {
        const page = await searchOk(port, seed, target, { filter: shape.filter, pageInfo: { ...(startCursor ? { startCursor } : {}), size: deep.step } });
        startCursor = page.pageInfo.endCursor;
      }
      const deepBody: SearchBody = { filter: shape.filter, pageInfo: { ...(startCursor ? { startCursor } : {}), size: 25 } };
      const deepPage = await captured(deepBody);
      const large = await captured({ filter: shape.filter, pageInfo: { size: 1000 } });
      cells.push(
        { target, shape, kind: 'first', body: { filter: shape.filter, pageInfo: { size: 25 } }, position: 0, total, rows: first.answer.results.length, waves: first.waves },
        { target, shape, kind: 'deep', body: deepBody, position: deep.position, total, rows: deepPage.answer.results.length, waves: deepPage.waves },
        { target, shape, kind: 'large', body: { filter: shape.filter, pageInfo: { size: 1000 } }, position: 0, total, rows: large.answer.results.length, waves: large.waves },
      );
    } catch (error) {
      // A refusal is a finding, not the end of the bench: reported exactly, the shape's cells left out.
      if (!(error instanceof SearchRefused)) throw error;
      refusals.push({ target: target.key, shape: shape.key, status: error.status, body: error.body });
      log(`  ${target.key} ${shape.key}: REFUSED, POST ${error.path} answered ${error.status}: ${error.body}`);
    }
  }
  return cells;
}

/**
 * Before the route exists: the engine's own page and count statements, compiled in this process
 * for E1's target, sent together (as runSearch sends them). The service columns stay empty.
 */
async function compileCells(db: Kysely<DB>, seed: SearchSeed, target: Target, shapes: SearchShape[]): Promise<Cell[]> {
  const call: SearchCall = { db, cursors: new CursorCodec(await loadCursorSecret(db)), workspaceId: seed.workspaceId, now: new Date(), canReadPersonalData: true, catalogue };
  const searched = target.key === 'e1' ? participantsTarget(seed.workspaceId, seed.studyId) : peopleTarget(seed.workspaceId);
  const defaultSort = target.key === 'e1' ? byParticipantId : byPersonId;
  const statementsOf = async (shape: SearchShape, page: SearchBody['pageInfo']) => {
    const statements = await compileSearch(call, searched, shape.filter, page, defaultSort);
    return [[statements.page.compile(db), statements.count.compile(db)]];
  };
  const cells: Cell[] = [];
  for (const shape of shapes) {
    const first = await runSearch(call, searched, shape.filter, { size: 25 }, defaultSort);
    const deep = deepTarget(first.total);
    let startCursor: string | undefined;
    for (let position = 0; position < deep.position; position += deep.step) {
      startCursor = (await runSearch(call, searched, shape.filter, { startCursor, size: deep.step }, defaultSort)).endCursor;
    }
    const deepPage = await runSearch(call, searched, shape.filter, { startCursor, size: 25 }, defaultSort);
    const large = await runSearch(call, searched, shape.filter, { size: 1000 }, defaultSort);
    const body = (pageInfo: SearchBody['pageInfo']): SearchBody => ({ filter: shape.filter, pageInfo });
    cells.push(
      { target, shape, kind: 'first', body: body({ size: 25 }), position: 0, total: first.total, rows: first.rows.length, waves: await statementsOf(shape, { size: 25 }) },
      { target, shape, kind: 'deep', body: body({ startCursor, size: 25 }), position: deep.position, total: first.total, rows: deepPage.rows.length, waves: await statementsOf(shape, { startCursor, size: 25 }) },
      { target, shape, kind: 'large', body: body({ size: 1000 }), position: 0, total: first.total, rows: large.rows.length, waves: await statementsOf(shape, { size: 1000 }) },
    );
  }
  return cells;
}

/**
 * EXPLAIN ANALYZE of each cell's statements as the service runs them: in the workspace's tenant
 * scope (row-level security's role), where a condition PostgreSQL deems leaky cannot be an
 * index condition. The floor's runs stay the owner's: the gap between the two is that cost.
 */
async function explainCells(database: Database, cells: Cell[], file: string, workspaceId: string) {
  const db = database.forTenant(workspaceId);
  const sections: string[] = [];
  const printed: string[] = [];
  for (const cell of cells) {
    const statements = cell.waves.flat();
    // In one transaction, as the service sends them: a page's `set local` holds for the statement after it.
    await db.transaction().execute(async (transaction) => {
      for (const [index, query] of statements.entries()) {
        if (/^\s*set /i.test(query.sql)) {
          await transaction.executeQuery(query);
          continue;
        }
        // Every kind of page sends the same count: explained once, with the first page.
        if (cell.kind !== 'first' && /^\s*select count\(\*\)/.test(query.sql)) continue;
        const { rows } = await transaction.executeQuery<{ 'QUERY PLAN': string }>({ ...query, sql: `explain (analyze, buffers) ${query.sql}` });
        const plan = rows.map((row) => row['QUERY PLAN']).join('\n');
        const section =
          `=== ${cell.target.key} ${cell.shape.key} / ${pageLabels[cell.kind]} (statement ${index + 1} of ${statements.length}) — ${cell.shape.description}\n` +
          `${query.sql.replace(/\n\s*\n/g, '\n').trim()}\nparameters: ${JSON.stringify(query.parameters).slice(0, 600)}\n\n${plan}\n`;
        sections.push(section);
        // The search's own statements are printed; lookups around them (the study, the properties) go to the file only.
        if (/^\s*select count\(\*\)|as sort_key/.test(query.sql)) printed.push(section);
      }
    });
  }
  const text = sections.join('\n');
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
  log(printed.join('\n'));
  log(`EXPLAIN (ANALYZE, BUFFERS) of every statement saved to ${file}`);
}

/** Every cell's statements whole (SQL and parameters), to replay them under other settings. */
function dumpCells(cells: Cell[], file: string) {
  const dumped = cells.map((cell) => ({ target: cell.target.key, shape: cell.shape.key, kind: cell.kind, total: cell.total, waves: cell.waves.map((wave) => wave.map(({ sql, parameters }) => ({ sql, parameters: parameters.map(portable) }))) }));
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify(dumped));
  log(`every cell's statements saved to ${file}`);
}

interface Load {
  seconds: number;
  concurrency: number;
}

interface Figures {
  p50Ms: number;
  p99Ms: number;
  rps: number;
  requests: number;
  errors: number;
}

function percentile(sorted: number[], share: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(share * sorted.length) - 1))]!;
}

/**
 * Closed-loop load: `concurrency` workers, each sending its next request when the previous one is
 * answered, for `seconds`; requests in flight at the end are waited for and counted, so a cell
 * slower than the run still yields figures. Service and floor are measured by this same loop.
 */
async function closedLoop(send: () => Promise<void>, load: Load): Promise<Figures> {
  const { seconds, concurrency } = load;
  const latencies: number[] = [];
  let errors = 0;
  const started = performance.now();
  const until = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      // At least one request each, however slow: a cell slower than the run still gets figures.
      do {
        const at = performance.now();
        try {
          await send();
          latencies.push(performance.now() - at);
        } catch {
          errors++;
        }
      } while (performance.now() < until);
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { p50Ms: percentile(latencies, 0.5), p99Ms: percentile(latencies, 0.99), rps: latencies.length / elapsed, requests: latencies.length, errors };
}

/** The floor: the cell's statements from a bare client, wave after wave, the statements of a wave together. */
function floorLoad(execute: (query: CompiledQuery) => Promise<unknown>, cell: Cell, load: Load): Promise<Figures> {
  return closedLoop(async () => {
    for (const wave of cell.waves) await Promise.all(wave.map(execute));
  }, load);
}

/** The service:  the cell's request over HTTP (keep-alive), its whole answer read. */
function serviceLoad(port: number, seed: SearchSeed, cell: Cell, load: Load): Promise<Figures> {
  const url = `http://127.0.0.1:${port}${cell.target.path}`;
  const init = { method: 'POST', headers: { authorization: `Bearer ${seed.token}`, 'content-type': 'application/json' }, body: JSON.stringify(cell.body) };
  return closedLoop(async () => {
    const response = await fetch(url, init);
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`answered ${response.status}`);
  }, load);
}

/** A bare client on the store: a pg pool of the service's size, or the embedded store opened in this process. */
async function bareClient(store: BenchStore): Promise<{ execute: (query: CompiledQuery) => Promise<unknown>; close(): Promise<void> }> {
  if (store.kind === 'postgres') {
    // The service's session settings (no JIT; no parallel workers, which the service turns off for
    // the pages it reads in a count's transaction), as the owner: the floor pays no row-level security.
    const pool = new pg.Pool({ connectionString: store.databaseUrl, max: POOL_SIZE, options: '-c TimeZone=UTC -c jit=off -c max_parallel_workers_per_gather=0' });
    return { execute: (query) => pool.query(query.sql, query.parameters as unknown[]), close: () => pool.end() };
  }
  const database = await openStore(store);
  return { execute: (query) => database.db.executeQuery(query), close: () => database.close() };
}

interface Measured {
  cell: Cell;
  service?: Figures;
  floor: Figures;
}

const round1 = (value: number) => Math.round(value * 10) / 10;
const geometricMean = (values: number[]) => Math.exp(values.reduce((sum, value) => sum + Math.log(value), 0) / values.length);

const MIB = 1024 * 1024;

/** A server's peak resident memory so far: the kernel's high-water mark (VmHWM), in bytes; undefined without /proc. */
const peakRssOf = (child: RunningChild | undefined) => processMemory(child?.process.pid)?.highWaterMark;

export async function run(options: BenchOptions): Promise<BenchResult> {
  const { quick, flags } = options;
  const known = '--store=postgres|embedded, --people=N, --reuse, --explain, --dump, --seconds=S, --warmup=S, --shapes=a,b, --targets=e1,people, --concurrency=N, --no-load';
  const unknown = flags.filter((flag) => !/^--(store|people|seconds|warmup|shapes|targets|concurrency)=|^--(reuse|explain|dump|no-load)$/.test(flag));
  if (unknown.length > 0) throw new Error(`Unknown flag(s) for the search bench: ${unknown.join(' ')} (known: ${known})`);
  const storeKind = flagValue(flags, 'store') ?? 'postgres';
  if (storeKind !== 'postgres' && storeKind !== 'embedded') throw new Error(`--store must be postgres or embedded, got ${storeKind}`);
  const people = Math.round(flagNumber(flags, 'people', quick ? 20_000 : storeKind === 'postgres' ? 1_000_000 : 100_000));
  const seconds = { run: flagNumber(flags, 'seconds', quick ? 2 : 8), warm: flagNumber(flags, 'warmup', quick ? 1 : 2) };
  const concurrency = Math.round(flagNumber(flags, 'concurrency', DEFAULT_CONCURRENCY));
  const chosenTargets = (flagValue(flags, 'targets')?.split(',') ?? targetKeys).map((key) => {
    if (!targetKeys.includes(key as TargetKey)) throw new Error(`--targets takes ${targetKeys.join(', ')}; got ${key}`);
    return key as TargetKey;
  });
  const warmLoad: Load = { seconds: seconds.warm, concurrency };
  const measuredLoad: Load = { seconds: seconds.run, concurrency };
  // The measuring server runs the compiled service: built from the sources as they are.
  if (!flags.includes('--no-load')) execFileSync('npm', ['run', '--silent', 'build'], { cwd: fileURLToPath(new URL('..', import.meta.url)), stdio: 'inherit' });
  const { store, seed } = await prepareStore(storeKind, people, flags.includes('--reuse'));
  const only = flagValue(flags, 'shapes')?.split(',');
  const shapes = searchShapes(seed).filter((shape) => !only || only.some((key) => shape.key.startsWith(key)));
  const targets = targetsOf(seed);
  const shapesOf = (key: TargetKey) => (chosenTargets.includes(key) ? shapes.filter(targets[key].admits) : []);
  log(
    `search bench: ${shapesOf('e1').length} shapes on E1 + ${shapesOf('people').length} on /people/search (those naming no PARTICIPANT property) x ${pageKinds.length} pages, ` +
      `concurrency ${concurrency}, ${seconds.run} s per run after ${seconds.warm} s warm-up, store ${storeKind}, ${people.toLocaleString('en-US')} people`,
  );

  // The statements of each cell, recorded from the service (or compiled here while a route is missing).
  const cells: Cell[] = [];
  const refusals: Refusal[] = [];
  const routed: Record<TargetKey, boolean> = { e1: false, people: false };
  const capturer = await startService(store, true);
  let capturerPeakRss: number | undefined;
  try {
    for (const key of chosenTargets) {
      const target = targets[key];
      // A bare POST: an unknown route answers the plain-text 404 of the not-found handler.
      const probe = await fetch(`http://127.0.0.1:${capturer.port}${target.path}`, { method: 'POST', headers: { authorization: `Bearer ${seed.token}` } });
      routed[key] = !(probe.status === 404 && (await probe.text()) === 'Not Found');
      if (routed[key]) cells.push(...(await captureCells(capturer.port, seed, target, shapesOf(key), refusals)));
    }
    capturerPeakRss = peakRssOf(capturer);
  } finally {
    await capturer.stop();
  }
  let parent: Database | undefined;
  const parentDb = async () => (parent ??= await openStore(store)).db;
  try {
    for (const key of chosenTargets) {
      if (routed[key]) continue;
      log(`the service has no ${targets[key].path.replace(seed.studyId, '{studyId}')} yet: the floor's statements are compiled by the engine in this process, and the service columns stay empty`);
      cells.push(...(await compileCells(await parentDb(), seed, targets[key], shapesOf(key))));
    }
    for (const cell of cells) {
      if (cell.kind !== 'first') continue;
      const deep = cells.find((other) => other.target === cell.target && other.shape === cell.shape && other.kind === 'deep');
      log(
        `  ${cell.target.key.padEnd(6)} ${cell.shape.key}: total ${cell.total.toLocaleString('en-US')}, deep page at row ${deep?.position ?? 0}, ` +
          `${cell.waves.flat().length} statements per request (${cell.waves.map((wave) => wave.length).join(' then ')})`,
      );
    }
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    // EXPLAIN ANALYZE runs every statement once more (seconds each when the plan is poor): only when asked.
    if (flags.includes('--dump')) dumpCells(cells, path.join(dataDirectory, `search-statements-${storeKind}-${people}-${stamp}.json`));
    if (flags.includes('--explain')) await explainCells((parent ??= await openStore(store)), cells, path.join(dataDirectory, `search-explain-${storeKind}-${people}-${stamp}.txt`), seed.workspaceId);

    const measured: Measured[] = [];
    /** The measuring server's peak RSS: its kernel high-water mark before it stops, and the highest 100 ms sample while it was loaded. */
    let serverPeak: { hwm?: number; sampled?: number } = {};
    const anyRouted = chosenTargets.some((key) => routed[key]);
    if (!flags.includes('--no-load')) {
      // The embedded store admits one process at a time: the service's runs first, then the floor's here.
      // On PostgreSQL each cell's two runs are back to back, in alternating order, so drift in the
      // shared machine's load weighs on both alike.
      const interleave = store.kind === 'postgres';
      if (!interleave && parent) {
        await parent.close();
        parent = undefined;
      }
      const service = anyRouted ? await startService(store, false) : undefined;
      const sampler = service ? sampleMemory(service.process.pid) : undefined;
      const client = interleave ? await bareClient(store) : undefined;
      const serviceFigures = new Map<Cell, Figures>();
      try {
        for (const [index, cell] of cells.entries()) {
          const measureService = async () => {
            if (!service || !routed[cell.target.key]) return;
            await warmCounts(service.port, seed, cell.target, cell.body);
            await serviceLoad(service.port, seed, cell, warmLoad);
            serviceFigures.set(cell, await serviceLoad(service.port, seed, cell, measuredLoad));
          };
          const measureFloor = async () => {
            if (!client) return;
            await floorLoad(client.execute, cell, warmLoad);
            measured.push({ cell, floor: await floorLoad(client.execute, cell, measuredLoad) });
          };
          if (index % 2 === 0) {
            await measureService();
            await measureFloor();
          } else {
            await measureFloor();
            await measureService();
          }
          const s = serviceFigures.get(cell);
          const f = measured.find((m) => m.cell === cell)?.floor;
          log(
            `  ${cell.target.key.padEnd(6)} ${cell.shape.key.padEnd(13)} ${pageLabels[cell.kind].padEnd(8)} service ${s ? `p50 ${round1(s.p50Ms)} p99 ${round1(s.p99Ms)} ms` : 'n/a'}` +
              `${f ? `, floor p50 ${round1(f.p50Ms)} p99 ${round1(f.p99Ms)} ms` : ''}${s && s.errors > 0 ? ` (${s.errors} errors)` : ''}`,
          );
        }
      } finally {
        if (service) serverPeak = { hwm: peakRssOf(service), sampled: sampler?.stop().peakRss };
        await service?.stop();
        await client?.close();
      }
      if (!interleave) {
        const embedded = await bareClient(store);
        try {
          for (const cell of cells) {
            await floorLoad(embedded.execute, cell, warmLoad);
            const floor = await floorLoad(embedded.execute, cell, measuredLoad);
            measured.push({ cell, floor });
            log(`  ${cell.target.key.padEnd(6)} ${cell.shape.key.padEnd(13)} ${pageLabels[cell.kind].padEnd(8)} floor p50 ${round1(floor.p50Ms)} p99 ${round1(floor.p99Ms)} ms`);
          }
        } finally {
          await embedded.close();
        }
      }
      for (const entry of measured) entry.service = serviceFigures.get(entry.cell);
    }

    log('');
    log(
      formatTable(
        ['target', 'shape', 'page', 'total', 'rows', 'service p50', 'service p99', 'floor p50', 'floor p99', 'ratio p50', 'ratio p99', 'service req/s', 'requests', 'errors'],
        measured.map(({ cell, service, floor }) => [
          cell.target.key,
          cell.shape.key,
          pageLabels[cell.kind] + (cell.kind === 'deep' ? ` @${cell.position}` : ''),
          cell.total,
          cell.rows,
          service ? round1(service.p50Ms) : 'n/a',
          service ? round1(service.p99Ms) : 'n/a',
          round1(floor.p50Ms),
          round1(floor.p99Ms),
          service ? Math.round((service.p50Ms / floor.p50Ms) * 100) / 100 : 'n/a',
          service ? Math.round((service.p99Ms / floor.p99Ms) * 100) / 100 : 'n/a',
          service ? round1(service.rps) : 'n/a',
          `${service ? service.requests : '-'}/${floor.requests}`,
          (service?.errors ?? 0) + floor.errors,
        ]),
      ),
    );
    const mib = (bytes: number | undefined) => (bytes === undefined || !Number.isFinite(bytes) ? null : Math.round((bytes / MIB) * 10) / 10);
    const serverPeakRssMiB = mib(serverPeak.hwm ?? serverPeak.sampled);
    if (serverPeak.hwm !== undefined || serverPeak.sampled !== undefined) {
      log(
        `\nserver peak RSS: ${serverPeakRssMiB} MiB (VmHWM of the measuring server process over its life; highest 100 ms sample under load ${mib(serverPeak.sampled)} MiB; ` +
          `the recording server's VmHWM ${mib(capturerPeakRss)} MiB)`,
      );
    }
    const withService = measured.filter((entry) => entry.service);
    const ratioOf = (entries: Measured[]) => (entries.length > 0 ? geometricMean(entries.map((entry) => entry.service!.p50Ms / entry.floor.p50Ms)) : Number.NaN);
    const ratio = ratioOf(withService);
    if (withService.length > 0) {
      const byTarget = chosenTargets
        .map((key) => [key, withService.filter((entry) => entry.cell.target.key === key)] as const)
        .filter(([, entries]) => entries.length > 0)
        .map(([key, entries]) => `${key} ${ratioOf(entries).toFixed(3)} over ${entries.length}`);
      log(`service / floor at p50, geometric mean over ${withService.length} cells: ${ratio.toFixed(3)} (aim <= 1.3); by target: ${byTarget.join(', ')}`);
    }
    const failures = measured.filter((entry) => (entry.service?.errors ?? 0) + entry.floor.errors > 0);
    if (failures.length > 0) log(`WARNING: ${failures.length} cell(s) had errors; their figures are suspect`);
    for (const refusal of refusals) log(`REFUSED: ${refusal.target} ${refusal.shape} answered ${refusal.status}: ${refusal.body}`);

    // Per target, shape and cell: the service's p50/p99 (null without a route), with the floor's beside them.
    const search: Partial<Record<TargetKey, Record<string, Record<string, { p50Ms: number | null; p99Ms: number | null; floorP50Ms: number; floorP99Ms: number }>>>> = {};
    for (const { cell, service, floor } of measured) {
      const byShape = (search[cell.target.key] ??= {});
      (byShape[cell.shape.key] ??= {})[pageKeys[cell.kind]] = {
        p50Ms: service ? round1(service.p50Ms) : null,
        p99Ms: service ? round1(service.p99Ms) : null,
        floorP50Ms: round1(floor.p50Ms),
        floorP99Ms: round1(floor.p99Ms),
      };
    }

    return {
      bench: 'search',
      quick,
      store: storeKind,
      people,
      targetParticipants: seed.counts.targetParticipants,
      historyParticipants: seed.counts.historyParticipants,
      concurrency,
      seconds: seconds.run,
      routed,
      // Without the route there is no service to compare: the floor alone, ratio 1 by definition.
      ratio: Number.isFinite(ratio) ? Math.round(ratio * 1000) / 1000 : 1,
      search,
      serverPeakRssMiB,
      refusals,
    };
  } finally {
    await parent?.close();
  }
}
