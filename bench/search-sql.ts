import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startBundledServer } from './lib/child.js';
import { serverNodeFlags } from './lib/server-flags.js';
import { dropPostgresDatabase, recreatePostgresDatabase } from './lib/store.js';
import { formatTable } from './lib/table.js';
import { type BenchOptions, type BenchResult, flagNumber, flagValue } from './lib/types.js';

/**
 * Every filter name through the SQL path: the one a search takes while the counts held in process
 * prepare after a start, and always with SEARCH_COUNTS=off. On a store freshly seeded by
 * `seed --demo` (as a newcomer's first hour has it), the compiled server is started with
 * SEARCH_COUNTS=off and, first of all, E1 filtered by STUDY_MEMBERSHIP is timed (16.5–21.4 s on
 * the embedded store before the planner's statistics were kept). Then each name of the OpenAPI
 * document's x-search-names, and each custom property of the workspace, is searched with one
 * comparison of its type on every route that takes its group (people: PERSON; E1: PARTICIPANT
 * and INCENTIVE, the participant's latest incentive, as well; incentives: INCENTIVE): its first answer and the p50 of the next rounds, against
 * the same route unfiltered (the floor) in the same run.
 */

const projectRoot = fileURLToPath(new URL('..', import.meta.url));
const DATABASE = 'bench_search_sql';
/** A name whose p50 is over this many times its route's unfiltered p50 is listed as slow. */
const AIM_RATIO = 10;
/** A first answer slower than this is listed as slow, whatever the floor. */
const AIM_FIRST_MS = 1000;

type Store = 'embedded' | 'postgres';
interface SearchName { name: string; type: string; options?: string[] }
interface Route { key: 'people' | 'e1' | 'incentives'; path: string; groups: string[] }
interface Row { store: Store; route: string; name: string; comparison: string; total: number; firstMs: number; p50Ms: number; ratio: number; timing: string }

interface Seeded { token: string; studyIds: string[]; populationIds: string[] }

function seedDemo(env: NodeJS.ProcessEnv): Seeded {
  const seeded = spawnSync(process.execPath, ['dist/cli.js', 'seed', '--demo'], { cwd: projectRoot, env: { ...process.env, LOG_LEVEL: 'warn', ...env }, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (seeded.status !== 0) throw new Error(`seed --demo failed: ${seeded.stderr}`);
  return JSON.parse(seeded.stdout) as Seeded;
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)]!;
};

export async function run(options: BenchOptions): Promise<BenchResult> {
  const known = '--stores=embedded,postgres, --rounds=N';
  const unknown = options.flags.filter((flag) => !/^--(stores|rounds)=/.test(flag));
  if (unknown.length > 0) throw new Error(`Unknown flags ${unknown.join(' ')}; known: ${known}`);
  const stores = (flagValue(options.flags, 'stores') ?? 'embedded,postgres').split(',') as Store[];
  for (const store of stores) if (store !== 'embedded' && store !== 'postgres') throw new Error(`--stores takes embedded and postgres, not ${store}`);
  const rounds = flagNumber(options.flags, 'rounds', options.quick ? 2 : 5);

  const rows: Row[] = [];
  const firstMembership: Record<string, number> = {};
  for (const store of stores) {
    let env: NodeJS.ProcessEnv;
    let dataDir: string | undefined;
    if (store === 'embedded') {
      dataDir = mkdtempSync(path.join(tmpdir(), 'bench-search-sql-'));
      env = { DATABASE_URL: '', DATA_DIR: dataDir };
    } else {
      const created = await recreatePostgresDatabase(DATABASE);
      if (created.kind !== 'postgres') throw new Error('expected a PostgreSQL store');
      env = { DATABASE_URL: created.databaseUrl };
    }
    process.stderr.write(`search-sql: seeding the demo on the ${store} store\n`);
    const seeded = seedDemo(env);
    const server = await startBundledServer({ env: { ...env, SEARCH_COUNTS: 'off', REDIS_URL: '' }, nodeFlags: serverNodeFlags() });
    try {
      const base = `http://127.0.0.1:${server.port}/v1`;
      const headers = { authorization: `Bearer ${seeded.token}`, 'content-type': 'application/json' };
      const post = async (route: string, body: unknown) => {
        const started = performance.now();
        const response = await fetch(`${base}${route}`, { method: 'POST', headers, body: JSON.stringify(body) });
        const text = await response.text();
        const ms = performance.now() - started;
        if (response.status !== 200) throw new Error(`POST ${route} ${JSON.stringify(body)}: ${response.status} ${text}`);
        const timing = /total;desc="([a-z]+)"/.exec(response.headers.get('server-timing') ?? '')?.[1] ?? '?';
        return { ms, total: (JSON.parse(text) as { total: number }).total, timing };
      };
      const [study, otherStudy] = seeded.studyIds as [string, string];
      const membership = (studyIds: string[]) => ({ filter: { filters: [{ property: { propertyGroup: 'PERSON', propertyName: 'STUDY_MEMBERSHIP' }, comparison: 'HAS_ANY_OF', value: studyIds }] } });
      const first = await post(`/studies/${study}/participants/search`, membership([study, otherStudy]));
      firstMembership[store] = first.ms;
      process.stderr.write(`search-sql: ${store}: the first E1 search after start, by STUDY_MEMBERSHIP: ${first.ms.toFixed(0)} ms (${first.total} participants)\n`);

      const document = (await (await fetch(`${base}/openapi.json`)).json()) as unknown;
      let names: Record<string, SearchName[]> | undefined;
      const visit = (node: unknown): void => {
        if (names || !node || typeof node !== 'object') return;
        const found = (node as Record<string, unknown>)['x-search-names'];
        if (found) names = found as Record<string, SearchName[]>;
        else for (const child of Object.values(node)) visit(child);
      };
      visit(document);
      if (!names) throw new Error('the OpenAPI document has no x-search-names');
      const properties = ((await (await fetch(`${base}/properties?size=100`, { headers })).json()) as { results: { propertyId: string; name: string; propertyType: string; propertyOptions: { name: string }[] }[] }).results;
      const segment = await fetch(`${base}/segments`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ name: 'Opted in', filter: { filters: [{ property: { propertyGroup: 'PERSON', propertyName: 'OPTED_OUT' }, comparison: 'IS_FALSE' }] } }),
      }).then(async (response) => {
        if (response.status !== 201) throw new Error(`POST /segments: ${response.status} ${await response.text()}`);
        return ((await response.json()) as { segmentId: string }).segmentId;
      });

      const condition = (name: SearchName): { comparison: string; value?: unknown } => {
        switch (name.type) {
          case 'text':
          case 'email':
            return { comparison: 'CONTAINS', value: 'a' };
          case 'number':
            return { comparison: 'GREATER_THAN_OR_EQUAL', value: 1 };
          case 'datetime':
            return { comparison: 'IN_LAST_DAYS', value: 365 };
          case 'boolean':
            return { comparison: 'IS_TRUE' };
          case 'enum':
          case 'select':
            return { comparison: 'IS_ANY_OF', value: name.options!.slice(0, 1) };
          case 'multiselect':
            return { comparison: 'HAS_ANY_OF', value: name.options!.slice(0, 1) };
          case 'location':
            return { comparison: 'COUNTRY_IS', value: ['US'] };
          case 'membership':
            if (name.name === 'STUDY_MEMBERSHIP') return { comparison: 'HAS_ANY_OF', value: [otherStudy] };
            if (name.name === 'SEGMENT_MEMBERSHIP') return { comparison: 'HAS_ANY_OF', value: [segment] };
            if (name.name === 'POPULATION_MEMBERSHIP' || name.name === 'PANEL_MEMBERSHIP') return { comparison: 'HAS_ANY_OF', value: seeded.populationIds.slice(0, 1) };
            return { comparison: 'HAS_ANY_OF', value: ['SPRING'] };
          default:
            throw new Error(`no comparison for type ${name.type} (${name.name})`);
        }
      };
      const customType: Record<string, string> = { STRING: 'text', NUMBER: 'number', DATETIME: 'datetime', BOOLEAN: 'boolean', SINGLE_SELECT: 'select', MULTI_SELECT: 'multiselect', LOCATION: 'location' };
      const custom = properties.map((property) => ({
        property: { propertyId: property.propertyId },
        name: { name: property.name, type: customType[property.propertyType]!, options: property.propertyOptions.map((option) => option.name) },
        label: `custom ${property.name}`,
      }));

      const routes: Route[] = [
        { key: 'people', path: '/people/search', groups: ['PERSON'] },
        { key: 'e1', path: `/studies/${study}/participants/search`, groups: ['PERSON', 'PARTICIPANT', 'INCENTIVE'] },
        { key: 'incentives', path: '/incentives/search', groups: ['INCENTIVE'] },
      ];
      for (const route of routes) {
        const measure = async (body: object) => {
          const firstAnswer = await post(route.path, body);
          const times: number[] = [];
          for (let round = 0; round < rounds; round++) times.push((await post(route.path, body)).ms);
          return { firstMs: firstAnswer.ms, p50Ms: median(times), total: firstAnswer.total, timing: firstAnswer.timing };
        };
        const floor = await measure({});
        rows.push({ store, route: route.key, name: '(no filter: the floor)', comparison: '', ...floor, ratio: 1 });
        const filters = [
          ...route.groups.flatMap((group) => names![group]!.map((name) => ({ property: { propertyGroup: group, propertyName: name.name }, name, label: `${group}.${name.name}` }))),
          ...(route.groups.includes('PERSON') ? custom : []),
        ];
        for (const { property, name, label } of filters) {
          const { comparison, value } = condition(name);
          const measured = await measure({ filter: { filters: [{ property, comparison, ...(value === undefined ? {} : { value }) }] } });
          rows.push({ store, route: route.key, name: label, comparison, ...measured, ratio: measured.p50Ms / floor.p50Ms });
        }
      }
    } finally {
      await server.stop();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
      if (store === 'postgres') await dropPostgresDatabase(DATABASE);
    }
  }

  process.stdout.write(
    `\nEvery filter name through the SQL path (SEARCH_COUNTS=off), demo data, first answer and p50 of ${rounds} more; ratio = p50 / the route's unfiltered p50\n\n` +
      formatTable(
        ['store', 'route', 'name', 'comparison', 'total', 'first ms', 'p50 ms', 'ratio', 'path'],
        rows.map((row) => [row.store, row.route, row.name, row.comparison, row.total, Math.round(row.firstMs * 10) / 10, Math.round(row.p50Ms * 10) / 10, Math.round(row.ratio * 100) / 100, row.timing]),
      ) +
      '\n',
  );
  // The incentive search has no counts held in process: it always counts with SQL and says nothing.
  const notSql = rows.filter((row) => row.route !== 'incentives' && row.timing !== 'sql');
  const slow = rows.filter((row) => row.ratio > AIM_RATIO || row.firstMs > AIM_FIRST_MS);
  const worst = rows.reduce((a, b) => (b.ratio > a.ratio ? b : a));
  process.stdout.write(
    `\nfirst E1 search after start by STUDY_MEMBERSHIP: ${Object.entries(firstMembership).map(([store, ms]) => `${store} ${ms.toFixed(0)} ms`).join(', ')}\n` +
      `names measured: ${rows.length - stores.length * 3} on ${stores.join(' and ')}; worst p50 ratio ${worst.ratio.toFixed(2)} (${worst.store} ${worst.route} ${worst.name}, ${worst.p50Ms.toFixed(1)} ms)\n` +
      `aim: every name's p50 within ${AIM_RATIO}x its route's floor and every first answer under ${AIM_FIRST_MS} ms: ${slow.length === 0 ? 'met' : `NOT met by ${slow.map((row) => `${row.store} ${row.route} ${row.name}`).join(', ')}`}\n` +
      (notSql.length > 0 ? `answers not counted by SQL (Server-Timing): ${notSql.length}\n` : ''),
  );
  if (notSql.length > 0) throw new Error('some searches were not answered by the SQL path');
  return {
    bench: 'search-sql',
    quick: options.quick,
    ratio: Math.round(worst.ratio * 100) / 100,
    names: rows.length,
    slow: slow.map((row) => `${row.store} ${row.route} ${row.name}`),
    firstMembershipMs: Object.fromEntries(Object.entries(firstMembership).map(([store, ms]) => [store, Math.round(ms)])),
    aimMet: slow.length === 0,
  };
}
