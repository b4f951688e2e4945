import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { createReadStream, createWriteStream, mkdtempSync, rmSync, statSync, type WriteStream } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { openDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { createWorkspace } from '../src/families/workspaces/service.js';
import { startBundledServer } from './lib/child.js';
import { processMemory, sampleMemory } from './lib/memory.js';
import { serverNodeFlags } from './lib/server-flags.js';
import { dropPostgresDatabase, recreatePostgresDatabase, storeEnv } from './lib/store.js';
import { formatTable } from './lib/table.js';
import { type BenchOptions, type BenchResult, flagNumber } from './lib/types.js';

/**
 * `npm run bench -- backfill`: POST /backfills of N participation rows (default 1,000,000) to the
 * compiled server on PostgreSQL, polled through GET /backfills/{id} until COMPLETED, the server's
 * RSS sampled throughout. The floor, in the same run on the same server: PostgreSQL's COPY of
 * the very rows the backfill writes (participants, their status events, incentives and ledger
 * entries) into the same tables, with their indexes and triggers, in a database seeded alike.
 * Then the search counts: POST /people/search by derived names, each total against SQL.
 */

const POLL_MS = 200;
/** Participations per person, and people per study. */
const PER_PERSON = 4;
const PER_STUDY = 200;
const DAY = 86_400_000;
const BASE = Date.UTC(2023, 0, 2, 9);
const AMOUNT = 7500;

const log = (line: string) => process.stdout.write(`${line}\n`);
const round1 = (value: number) => Math.round(value * 10) / 10;
const megabytes = (bytes: number) => round1(bytes / (1024 * 1024));

interface Shape {
  rows: number;
  people: number;
  studiesPerRound: number;
}

function shapeOf(rows: number): Shape {
  const people = Math.max(1, Math.ceil(rows / PER_PERSON));
  return { rows, people, studiesPerRound: Math.max(1, Math.ceil(people / PER_STUDY)) };
}

type Status = 'INVITED' | 'COMPLETED' | 'NO_SHOW' | 'CANCELED';

/** Row i: its person, its study (a person once per study) and its history, the same on every run. */
function rowOf(shape: Shape, i: number) {
  const person = i % shape.people;
  const round = Math.floor(i / shape.people);
  const study = round * shape.studiesPerRound + (person % shape.studiesPerRound);
  const pick = (i * 7919) % 10;
  const status: Status = pick < 5 ? 'COMPLETED' : pick < 6 ? 'NO_SHOW' : pick < 7 ? 'CANCELED' : 'INVITED';
  const invitedAt = new Date(BASE + (study % 600) * DAY).toISOString();
  const start = new Date(BASE + (study % 600) * DAY + 7 * DAY + (person % 8) * 3_600_000).toISOString();
  const canceledAt = new Date(BASE + (study % 600) * DAY + 2 * DAY).toISOString();
  return { person, study, status, invitedAt, start, canceledAt, paid: status === 'COMPLETED' };
}

const personId = (person: number) => `per_bench${String(person).padStart(10, '0')}`;
const emailOf = (person: number) => `p${person}@backfill.bench.example`;
const studyId = (study: number) => `stu_bench${String(study).padStart(10, '0')}`;

async function write(stream: WriteStream, text: string) {
  if (!stream.write(text)) await once(stream, 'drain');
}

/** The backfill's CSV, and the floor's files: the rows the backfill writes, as COPY reads them. */
async function writeFiles(directory: string, shape: Shape, workspaceId: string, userId: string) {
  const csv = createWriteStream(path.join(directory, 'history.csv'));
  const participants = createWriteStream(path.join(directory, 'participants.csv'));
  const events = createWriteStream(path.join(directory, 'events.csv'));
  const incentives = createWriteStream(path.join(directory, 'incentives.csv'));
  const ledger = createWriteStream(path.join(directory, 'ledger.csv'));
  await write(csv, 'email,studyKey,studyName,studyType,status,invitedAt,interviewStartTime,canceledAt,incentiveAmount\n');
  const now = new Date().toISOString();
  for (let i = 0; i < shape.rows; i++) {
    const row = rowOf(shape, i);
    const interview = row.status === 'COMPLETED' || row.status === 'NO_SHOW';
    await write(
      csv,
      `${emailOf(row.person)},S${row.study},Study ${row.study},INTERVIEWS,${row.status},${row.invitedAt},${interview ? row.start : ''},${row.status === 'CANCELED' ? row.canceledAt : ''},${row.paid ? '75.00' : ''}\n`,
    );
    const participant = `ptc_bench${String(i).padStart(12, '0')}`;
    const at = (value: string | null) => value ?? '';
    await write(
      participants,
      `${workspaceId},${participant},${studyId(row.study)},${personId(row.person)},INTERVIEW,${row.status},PENDING_REVIEW,NOT_SENT,${row.invitedAt},${interview ? row.start : ''},,${row.status === 'COMPLETED' ? row.start : ''},${row.status === 'NO_SHOW' ? 1 : 0},${userId},${row.invitedAt},${now},bkf_bench\n`,
    );
    const moves: [string, string, string, boolean][] = [['NOT_STARTED', 'INVITED', row.invitedAt, true]];
    if (interview) moves.push(['INVITED', 'SCHEDULED', row.start, false], ['SCHEDULED', row.status, row.start, false]);
    if (row.status === 'CANCELED') moves.push(['INVITED', 'CANCELED', row.canceledAt, false]);
    for (const [from, to, when, contact] of moves) {
      await write(events, `${workspaceId},${studyId(row.study)},${participant},${personId(row.person)},status,${from},${to},${contact},${userId},${at(when)},bkf_bench\n`);
    }
    if (row.paid) {
      const incentive = `inc_bench${String(i).padStart(12, '0')}`;
      await write(incentives, `${workspaceId},${incentive},${studyId(row.study)},${participant},${personId(row.person)},CUSTOM,${AMOUNT},USD,SENT,${userId},${row.start},${now},${now},bkf_bench\n`);
      await write(ledger, `${workspaceId},led_bench${String(i).padStart(12, '0')},${incentive},SENT,${AMOUNT},USD,${studyId(row.study)},${participant},${personId(row.person)},SENT,USER,${userId},${row.start},bkf_bench\n`);
    }
  }
  for (const stream of [csv, participants, events, incentives, ledger]) {
    stream.end();
    await once(stream, 'finish');
  }
  return statSync(path.join(directory, 'history.csv')).size;
}

/** A fresh database: migrated, a workspace, and the bench's people (set-based). */
async function seed(name: string, shape: Shape) {
  const store = await recreatePostgresDatabase(name);
  if (store.kind !== 'postgres') throw new Error('unreachable');
  const database = await openDatabase({ databaseUrl: store.databaseUrl });
  try {
    await migrateToLatest(database.db);
    const workspace = await createWorkspace(database.db, { name: 'Backfill bench', email: 'admin@backfill.bench.example', fullName: 'Backfill Admin' });
    const client = new pg.Client({ connectionString: store.databaseUrl });
    await client.connect();
    try {
      await client.query(
        `insert into people (workspace_id, person_id, email, created_at, updated_at)
         select $1, 'per_bench' || lpad(g::text, 10, '0'), 'p' || g || '@backfill.bench.example', now(), now() from generate_series(0, $2 - 1) g`,
        [workspace.workspaceId, shape.people],
      );
      await client.query('analyze people');
    } finally {
      await client.end();
    }
    return { store, workspaceId: workspace.workspaceId, userId: workspace.userId, token: workspace.token };
  } finally {
    await database.close();
  }
}

/** The floor: COPY of the rows the backfill writes into the same tables (studies made first, outside the timing). */
async function copyFloor(directory: string, shape: Shape, seeded: Awaited<ReturnType<typeof seed>>) {
  const client = new pg.Client({ connectionString: seeded.store.kind === 'postgres' ? seeded.store.databaseUrl : '' });
  await client.connect();
  try {
    const studies = shape.studiesPerRound * Math.ceil(shape.rows / shape.people);
    await client.query(
      `insert into studies (workspace_id, study_id, study_type, recruitment_strategy, status, plan, created_by_user_id, created_at, updated_at, backfill_id, backfill_key)
       select $1, 'stu_bench' || lpad(g::text, 10, '0'), 'INTERVIEWS', 'IN_SERVICE', 'CLOSED', jsonb_build_object('name', 'Study ' || g), $2, now(), now(), 'bkf_bench', 'S' || g
       from generate_series(0, $3 - 1) g`,
      [seeded.workspaceId, seeded.userId, studies],
    );
    const started = performance.now();
    const copies: [string, string][] = [
      [
        'participants.csv',
        'participants (workspace_id, participant_id, study_id, person_id, study_kind, status, approval_status, screener_state, invited_at, interview_start_time, test_completed_at, completed_at, no_show_count, added_by_user_id, added_at, updated_at, backfill_id)',
      ],
      ['events.csv', 'participant_status_events (workspace_id, study_id, participant_id, person_id, field, from_value, to_value, is_contact, user_id, occurred_at, backfill_id)'],
      ['incentives.csv', 'incentives (workspace_id, incentive_id, study_id, participant_id, person_id, type, amount_cents, currency, status, sent_by_user_id, sent_at, created_at, updated_at, backfill_id)'],
      ['ledger.csv', 'incentive_ledger (workspace_id, entry_id, incentive_id, kind, amount_minor, currency, study_id, participant_id, person_id, status, actor_kind, actor_id, at, backfill_id)'],
    ];
    for (const [file, target] of copies) {
      await pipeline(createReadStream(path.join(directory, file), { highWaterMark: 256 * 1024 }), client.query(copyFrom(`copy ${target} from stdin with (format csv)`)));
    }
    return (performance.now() - started) / 1000;
  } finally {
    await client.end();
    await dropPostgresDatabase('bench_backfill_floor');
  }
}

function upload(port: number, token: string, file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      { host: '127.0.0.1', port, method: 'POST', path: '/v1/backfills', headers: { authorization: `Bearer ${token}`, 'content-type': 'text/csv', 'content-length': statSync(file).size } },
      (response) => {
        const parts: Buffer[] = [];
        response.on('data', (part: Buffer) => parts.push(part));
        response.on('end', () => {
          const body = Buffer.concat(parts).toString('utf8');
          if (response.statusCode !== 202) reject(new Error(`POST /v1/backfills answered ${response.statusCode}: ${body.slice(0, 500)}`));
          else resolve((JSON.parse(body) as { backfillId: string }).backfillId);
        });
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    createReadStream(file, { highWaterMark: 256 * 1024 }).on('error', reject).pipe(request);
  });
}

interface BackfillView {
  status: string;
  rowsWritten: number;
  rowsFailed: number;
  rowsSkipped: number;
}

/** The derived names searched, and the same count in SQL over the rows. */
const searches: { name: string; filter: object; sql: string }[] = [
  {
    name: 'TOTAL_NUMBER_OF_INTERVIEWS_COMPLETED > 1',
    filter: { property: { propertyGroup: 'PERSON', propertyName: 'TOTAL_NUMBER_OF_INTERVIEWS_COMPLETED' }, comparison: 'GREATER_THAN', value: 1 },
    sql: `select count(*) from people p where p.workspace_id = $1 and p.deleted_at is null and (select count(*) from participants h where h.workspace_id = p.workspace_id and h.person_id = p.person_id and h.study_kind = 'INTERVIEW' and h.completed_at is not null) > 1`,
  },
  {
    name: 'TOTAL_NUMBER_OF_NO_SHOW_INTERVIEWS > 0',
    filter: { property: { propertyGroup: 'PERSON', propertyName: 'TOTAL_NUMBER_OF_NO_SHOW_INTERVIEWS' }, comparison: 'GREATER_THAN', value: 0 },
    sql: `select count(*) from people p where p.workspace_id = $1 and p.deleted_at is null and exists (select from participants h where h.workspace_id = p.workspace_id and h.person_id = p.person_id and h.study_kind = 'INTERVIEW' and h.no_show_count > 0)`,
  },
  {
    name: 'TOTAL_SENT_ALL_TIME > 10000',
    filter: { property: { propertyGroup: 'PERSON', propertyName: 'TOTAL_SENT_ALL_TIME' }, comparison: 'GREATER_THAN', value: 10000 },
    sql: `select count(*) from people p where p.workspace_id = $1 and p.deleted_at is null and (select coalesce(sum(x.amount_cents), 0) from incentives x where x.workspace_id = p.workspace_id and x.person_id = p.person_id and x.status in ('UNCLAIMED', 'CLAIMED', 'SENT') and x.currency = 'USD') > 10000`,
  },
  {
    name: 'LAST_CONTACT_DATE after 2023-01-15',
    filter: { property: { propertyGroup: 'PERSON', propertyName: 'LAST_CONTACT_DATE' }, comparison: 'AFTER', value: '2023-01-15T00:00:00Z' },
    sql: `select count(*) from people p where p.workspace_id = $1 and p.deleted_at is null and (select max(e.occurred_at) from participant_status_events e where e.workspace_id = p.workspace_id and e.person_id = p.person_id and e.is_contact) > '2023-01-15T00:00:00Z'`,
  },
];

export async function run(options: BenchOptions): Promise<BenchResult> {
  const { quick, flags } = options;
  const unknown = flags.filter((flag) => !/^--rows=/.test(flag));
  if (unknown.length > 0) throw new Error(`Unknown flag(s) for the backfill bench: ${unknown.join(' ')} (known: --rows=N)`);
  const shape = shapeOf(Math.round(flagNumber(flags, 'rows', quick ? 20_000 : 1_000_000)));
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: fileURLToPath(new URL('..', import.meta.url)), stdio: 'inherit' });
  const directory = mkdtempSync(path.join(tmpdir(), 'bench-backfill-'));
  try {
    log(`backfill bench: ${shape.rows.toLocaleString('en-US')} participation rows (${shape.people.toLocaleString('en-US')} people, ${PER_STUDY} per study) through POST /backfills on PostgreSQL, beside COPY of the same rows`);
    // The floor first, in a database of its own seeded alike: its rows name its workspace and user.
    const floorSeed = await seed('bench_backfill_floor', shape);
    const bytes = await writeFiles(directory, shape, floorSeed.workspaceId, floorSeed.userId);
    log(`generated ${megabytes(bytes)} MiB of CSV`);
    const floorSeconds = await copyFloor(directory, shape, floorSeed);
    log(`  COPY of the same rows into the same tables: ${Math.round(shape.rows / floorSeconds).toLocaleString('en-US')} rows/s (${floorSeconds.toFixed(1)} s)`);
    const seeded = await seed('bench_backfill', shape);

    const server = await startBundledServer({
      // The bench's own polling (GET /backfills/{id} for minutes) is no client to limit, nor are its four
      // checking searches over 250,000 people a workspace's heavy work (the search time budget refused the second).
      env: { ...storeEnv(seeded.store), REDIS_URL: '', LOG_LEVEL: 'silent', JOBS: 'on', JOB_POLL_SECONDS: '0.2', RATE_LIMIT_MAX: '100000000', SEARCH_BUDGET_MS_PER_SECOND: '0' },
      nodeFlags: serverNodeFlags(),
    });
    let serviceSeconds: number;
    let uploadSeconds: number;
    let baselineRss: number;
    let peakRss: number;
    const counts: { name: string; service: number; sql: number }[] = [];
    try {
      const pid = server.process.pid;
      await sleep(1000);
      baselineRss = processMemory(pid)?.rss ?? Number.NaN;
      const memory = sampleMemory(pid);
      const started = performance.now();
      const backfillId = await upload(server.port, seeded.token, path.join(directory, 'history.csv'));
      uploadSeconds = (performance.now() - started) / 1000;
      let view: BackfillView;
      for (;;) {
        const response = await fetch(`http://127.0.0.1:${server.port}/v1/backfills/${backfillId}`, { headers: { authorization: `Bearer ${seeded.token}` } });
        view = (await response.json()) as BackfillView;
        if (response.status !== 200) throw new Error(`GET /v1/backfills/${backfillId} answered ${response.status}: ${JSON.stringify(view)}`);
        if (view.status === 'COMPLETED' || view.status === 'FAILED') break;
        await sleep(POLL_MS);
      }
      serviceSeconds = (performance.now() - started) / 1000;
      ({ peakRss } = memory.stop());
      if (view.status !== 'COMPLETED' || view.rowsWritten !== shape.rows) throw new Error(`The backfill ended ${view.status} with ${view.rowsWritten} of ${shape.rows} rows written: ${JSON.stringify(view)}`);
      log(`  service: ${Math.round(shape.rows / serviceSeconds).toLocaleString('en-US')} rows/s end to end (upload ${uploadSeconds.toFixed(1)} s), peak RSS ${megabytes(peakRss)} MiB`);

      const client = new pg.Client({ connectionString: seeded.store.kind === 'postgres' ? seeded.store.databaseUrl : '' });
      await client.connect();
      try {
        for (const search of searches) {
          const response = await fetch(`http://127.0.0.1:${server.port}/v1/people/search`, {
            method: 'POST',
            headers: { authorization: `Bearer ${seeded.token}`, 'content-type': 'application/json' },
            body: JSON.stringify({ filter: { filters: [search.filter] }, pageInfo: { size: 1 } }),
          });
          const text = await response.text();
          const body: { total?: number; text?: string } = (response.headers.get('content-type') ?? '').includes('json') ? (JSON.parse(text) as { total?: number }) : { text };
          if (response.status !== 200 || typeof body.total !== 'number') throw new Error(`POST /v1/people/search (${search.name}) answered ${response.status}: ${JSON.stringify(body).slice(0, 300)}`);
          const { rows } = await client.query<{ count: string }>(search.sql, [seeded.workspaceId]);
          counts.push({ name: search.name, service: body.total, sql: Number(rows[0]!.count) });
        }
      } finally {
        await client.end();
      }
    } finally {
      await server.stop();
    }

    const serviceRate = shape.rows / serviceSeconds;
    const floorRate = shape.rows / floorSeconds;
    const ratio = serviceRate / floorRate;
    const exact = counts.every((count) => count.service === count.sql);
    log('');
    log(
      formatTable(
        ['what', 'seconds', 'rows/s'],
        [
          ['COPY floor: participants, events, incentives, ledger', round1(floorSeconds), Math.round(floorRate)],
          ['service: upload (POST /backfills)', round1(uploadSeconds), Math.round(shape.rows / uploadSeconds)],
          ['service: end to end, to COMPLETED', round1(serviceSeconds), Math.round(serviceRate)],
        ],
      ),
    );
    log('');
    log(formatTable(['search by derived name', 'service total', 'SQL count'], counts.map((count) => [count.name, count.service, count.sql])));
    log('');
    log(`ratio ${ratio.toFixed(3)} of COPY's rows/s; server memory ${megabytes(baselineRss)} MiB before, peak ${megabytes(peakRss)} MiB; search counts ${exact ? 'exact' : 'NOT EXACT'}`);
    if (!exact) throw new Error(`The search counts differ from SQL: ${JSON.stringify(counts)}`);
    return {
      bench: 'backfill',
      quick,
      store: 'postgres',
      rows: shape.rows,
      people: shape.people,
      csvBytes: bytes,
      serviceRowsPerSecond: Math.round(serviceRate),
      floorRowsPerSecond: Math.round(floorRate),
      ratio: Math.round(ratio * 1000) / 1000,
      uploadSeconds: round1(uploadSeconds),
      serviceSeconds: round1(serviceSeconds),
      floorSeconds: round1(floorSeconds),
      peakRssMiB: megabytes(peakRss),
      baselineRssMiB: megabytes(baselineRss),
      searchCountsExact: exact,
    };
  } finally {
    rmSync(directory, { recursive: true, force: true });
    await dropPostgresDatabase('bench_backfill_floor');
    await dropPostgresDatabase('bench_backfill');
  }
}
