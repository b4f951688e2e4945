import { execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DateTime } from 'luxon';
import pg from 'pg';
import { Agent, request } from 'undici';
import { startBenchService, stopProcess } from './lib/compiled-server.js';
import { sampleMemory } from './lib/memory.js';
import { dropPostgresDatabase, recreatePostgresDatabase, storeEnv } from './lib/store.js';
import { formatTable } from './lib/table.js';
import { type BenchOptions, type BenchResult, flagNumber } from './lib/types.js';
import { parseForm, printProfiles } from './screener.js';

/**
 * `npm run bench -- booking`: people booking sessions on their own page, from the compiled server
 * on a PostgreSQL database of its own. An interview study whose two hosts (Berlin, Kathmandu) give
 * exactly `sessions` one-person sessions (ten one-hour times on each of five dates each, as date
 * overrides); N participants (default 500), each with a SCHEDULING link. Then `concurrency` people
 * at a time, as a browser without JavaScript would: open the booking page in New York time, pick
 * one of the times it lists at random, post it; a time taken meanwhile answers 409 with the page
 * again, and they pick again from it, until booked or none is left. Latencies beside the floor:
 * a static file of the booking page's size from the same server, at the same concurrency. Then the
 * database is counted: exactly `sessions` live bookings, no session above its capacity, no two
 * sessions of one host overlapping.
 */

const root = fileURLToPath(new URL('..', import.meta.url));
const DATABASE = 'bench_booking';

const percentile = (values: number[], fraction: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))] ?? Number.NaN;
};
const round = (value: number) => Math.round(value * 10) / 10;

export async function run(options: BenchOptions): Promise<BenchResult> {
  const people = flagNumber(options.flags, 'people', options.quick ? 150 : 500);
  const concurrency = flagNumber(options.flags, 'concurrency', options.quick ? 32 : 64);
  const sessions = options.quick ? 40 : 100;
  const hosts = [
    { zone: 'Europe/Berlin', name: 'Berlin host' },
    { zone: 'Asia/Kathmandu', name: 'Kathmandu host' },
  ];
  const datesPerHost = sessions / hosts.length / 10;

  process.stderr.write('building dist/ (npm run build)\n');
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' });

  const store = await recreatePostgresDatabase(DATABASE);
  let server: ChildProcess | undefined;
  const floorFile = path.join(root, 'console', 'dist', `bench-floor-${process.pid}.html`);
  const pool = new pg.Pool({ connectionString: store.kind === 'postgres' ? store.databaseUrl : '', max: 2 });
  const agent = new Agent({ connections: concurrency, keepAliveTimeout: 10_000 });
  // `--profile`: the server runs with --cpu-prof, and where its CPU went is printed at the end.
  const profile = options.flags.includes('--profile') ? mkdtempSync(path.join(tmpdir(), 'booking-profile-')) : undefined;
  try {
    const started = await startBenchService(
      { ...storeEnv(store), PARTICIPANT_RATE_LIMIT_MAX: '100000000', PARTICIPANT_LINK_RATE_LIMIT_MAX: '100000000' },
      'Booking bench',
      profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : [],
    );
    server = started.child;
    const origin = `http://127.0.0.1:${started.port}`;
    const api = async <T = Record<string, unknown>>(method: string, url: string, body?: unknown): Promise<T> => {
      const response = await fetch(`${origin}/v1${url}`, {
        method,
        headers: { authorization: `Bearer ${started.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      if (!response.ok) throw new Error(`${method} ${url}: ${response.status} ${text}`);
      return JSON.parse(text) as T;
    };

    process.stderr.write(`setting up: a study, ${hosts.length} hosts giving ${sessions} sessions, ${people} participants with scheduling links\n`);
    const hostUserIds: string[] = [];
    for (const host of hosts) {
      const email = `${host.name.toLowerCase().replaceAll(' ', '-')}@example.org`;
      const created = execFileSync(process.execPath, ['dist/cli.js', 'user', 'create', '--workspace', started.workspaceId, '--email', email, '--full-name', host.name, '--role', 'RESEARCHER'], {
        cwd: root,
        env: { ...process.env, ...storeEnv(store) },
        encoding: 'utf8',
      });
      hostUserIds.push((JSON.parse(created) as { userId: string }).userId);
    }
    const study = await api<{ studyId: string }>('POST', '/studies', {
      studyType: 'INTERVIEWS',
      recruitmentStrategy: 'IN_SERVICE',
      studyPlan: { name: 'Checkout interviews', externalName: 'Paying online', language: 'en', scheduler: { interviewDurationMinutes: 45 } },
    });
    const { studyId } = study;
    // Ten one-hour times on each of `datesPerHost` dates, from two days ahead: exactly `sessions` in all, whatever today is.
    const datesFrom = (zone: string) => Array.from({ length: datesPerHost }, (_, index) => DateTime.now().setZone(zone).plus({ days: 2 + index }).toISODate()!);
    await api('PUT', `/studies/${studyId}/schedule`, {
      slotIntervalMinutes: 60,
      minimumNoticeMinutes: 60,
      hosts: hosts.map((host, index) => ({ userId: hostUserIds[index], timeZone: host.zone, weeklyHours: {}, overrides: datesFrom(host.zone).map((date) => ({ date, hours: [{ start: '09:00', end: '19:00' }] })) })),
    });
    await api('POST', `/studies/${studyId}/launch`);
    const offered = await api<{ slots: unknown[] }>('GET', `/studies/${studyId}/slots?to=${encodeURIComponent(new Date(Date.now() + 20 * 86_400_000).toISOString())}`);
    if (offered.slots.length !== sessions) throw new Error(`the schedule offers ${offered.slots.length} times, not ${sessions}`);

    const personIds: string[] = [];
    let made = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (made < people) {
          const index = made++;
          personIds[index] = (await api<{ personId: string }>('POST', '/people', { email: `person${index}@example.org`, firstName: `Person${index}` })).personId;
        }
      }),
    );
    const participantIds: string[] = [];
    for (let start = 0; start < people; start += 1_000) {
      const slice = personIds.slice(start, start + 1_000);
      const added = await api<{ results: { participantId: string; personId: string }[] }>('POST', `/studies/${studyId}/participants`, { personIds: slice });
      const byPerson = new Map(added.results.map((participant) => [participant.personId, participant.participantId]));
      for (const personId of slice) participantIds.push(byPerson.get(personId)!);
    }
    const links: string[] = [];
    let linked = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (linked < people) {
          const index = linked++;
          links[index] = new URL((await api<{ url: string }>('POST', `/studies/${studyId}/participants/${participantIds[index]}/links`, { purpose: 'SCHEDULING' })).url).pathname;
        }
      }),
    );

    const timings = { slotPage: [] as number[], book: [] as number[], floor: [] as number[] };
    const errors: string[] = [];
    const outcomes = { booked: 0, taken: 0, noneLeft: 0 };
    const timed = async (step: keyof typeof timings, method: 'GET' | 'POST', url: string, body?: string) => {
      const begun = performance.now();
      const response = await request(`${origin}${url}`, {
        method,
        dispatcher: agent,
        headers: { accept: 'text/html', 'accept-language': 'en', ...(body === undefined ? {} : { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' }) },
        ...(body === undefined ? {} : { body }),
      });
      const text = await response.body.text();
      timings[step].push(performance.now() - begun);
      return { status: response.statusCode, text };
    };

    const sample = await timed('floor', 'GET', `${links[0]!}?tz=America/New_York`);
    timings.floor.length = 0;
    if (sample.status !== 200) throw new Error(`booking page: ${sample.status} ${sample.text.slice(0, 300)}`);
    writeFileSync(floorFile, sample.text);
    process.stderr.write(`the booking page: ${Buffer.byteLength(sample.text)} bytes\n`);
    const floorUrl = `/console/${path.basename(floorFile)}`;

    /** The page's booking form with its times, or undefined when it offers none. */
    const choicesOf = (html: string) => {
      const form = parseForm(html);
      if (!form) return undefined;
      const times = form.fields.filter((field) => field.name === 'startTime').map((field) => field.value);
      return times.length === 0 ? undefined : { form, times };
    };

    const journey = async (index: number) => {
      let page = await timed('slotPage', 'GET', `${links[index]!}?tz=America/New_York`);
      for (let attempt = 0; attempt < 50; attempt++) {
        if (page.status !== 200 && page.status !== 409) throw new Error(`booking page: ${page.status} ${page.text.slice(0, 200)}`);
        const choices = choicesOf(page.text);
        if (!choices) {
          outcomes.noneLeft++;
          return;
        }
        const posted = new URLSearchParams();
        for (const field of choices.form.fields) if (field.type === 'hidden') posted.append(field.name, field.value);
        posted.append('startTime', choices.times[Math.floor(Math.random() * choices.times.length)]!);
        const booked = await timed('book', 'POST', choices.form.action, posted.toString());
        if (booked.status === 303) {
          outcomes.booked++;
          return;
        }
        if (booked.status !== 409) throw new Error(`book: ${booked.status} ${booked.text.slice(0, 200)}`);
        outcomes.taken++;
        // The 409 answer is the booking page again, with the times still open: pick from it.
        page = booked;
      }
      throw new Error('no booking after 50 attempts');
    };

    process.stderr.write(`run: ${people} people at concurrency ${concurrency} for ${sessions} sessions\n`);
    const memory = sampleMemory(server.pid);
    const runStart = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < people) {
          const index = next++;
          try {
            await journey(index);
          } catch (error) {
            errors.push(error instanceof Error ? error.message : String(error));
          }
        }
      }),
    );
    const runSeconds = (performance.now() - runStart) / 1000;
    let floorNext = 0;
    const floorCount = timings.slotPage.length;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (floorNext < floorCount) {
          floorNext++;
          const floor = await timed('floor', 'GET', floorUrl);
          if (floor.status !== 200 || floor.text.length !== sample.text.length) errors.push(`floor: ${floor.status}, ${floor.text.length} bytes`);
        }
      }),
    );
    const { peakRss } = memory.stop();

    const counted = await countBookings(pool, studyId);
    const exact = counted.live === sessions && counted.overCapacity === 0 && counted.overlaps === 0 && counted.placesBooked === sessions;
    if (!exact) errors.push(`bookings: ${JSON.stringify(counted)}, expected ${sessions} live`);

    const floorP50 = percentile(timings.floor, 0.5);
    const floorP99 = percentile(timings.floor, 0.99);
    const rows = [
      ...(['slotPage', 'book'] as const).map((step) => [step, timings[step].length, round(percentile(timings[step], 0.5)), round(percentile(timings[step], 0.99)), round(percentile(timings[step], 0.99) / floorP99)]),
      ['floor (static file, same size)', timings.floor.length, round(floorP50), round(floorP99), 1],
    ];
    process.stderr.write(`\n${formatTable(['step', 'requests', 'p50 ms', 'p99 ms', 'p99 / floor p99'], rows)}\n`);
    process.stderr.write(
      `\n${people} people in ${round(runSeconds)} s; booked ${outcomes.booked}, times taken meanwhile ${outcomes.taken}, found none left ${outcomes.noneLeft}; ` +
        `database: ${JSON.stringify(counted)}; errors ${errors.length}${errors.length > 0 ? ` (first: ${errors[0]})` : ''}; server peak RSS ${Math.round(peakRss / 1048576)} MiB\n`,
    );
    const figure = (step: string, values: number[]) => ({ [`${step}P50Ms`]: round(percentile(values, 0.5)), [`${step}P99Ms`]: round(percentile(values, 0.99)) });
    return {
      bench: 'booking',
      quick: options.quick,
      ratio: round(percentile(timings.slotPage, 0.99) / floorP99),
      people,
      concurrency,
      sessions,
      booked: counted.live,
      doubleBookings: counted.overCapacity + counted.overlaps,
      ...figure('slotPage', timings.slotPage),
      ...figure('book', timings.book),
      ...figure('floor', timings.floor),
      takenMeanwhile: outcomes.taken,
      errors: errors.length,
      exact,
      peakRssMiB: Math.round(peakRss / 1048576),
      aims: { slotPageP99Ms: 100, bookP99Ms: 200 },
    };
  } finally {
    rmSync(floorFile, { force: true });
    await agent.close();
    await pool.end();
    if (server) await stopProcess(server);
    await dropPostgresDatabase(DATABASE);
    if (profile) printProfiles(profile);
  }
}

/** What the database holds: live bookings, places counted, sessions over capacity, overlapping sessions of one host. */
async function countBookings(pool: pg.Pool, studyId: string) {
  const live = await pool.query<{ n: number }>("select count(*)::int as n from bookings where study_id = $1 and status = 'BOOKED'", [studyId]);
  const places = await pool.query<{ n: number }>('select coalesce(sum(booked), 0)::int as n from sessions where study_id = $1', [studyId]);
  const overCapacity = await pool.query<{ n: number }>(
    "select count(*)::int as n from sessions s where s.study_id = $1 and (s.booked > s.capacity or s.booked <> (select count(*) from bookings b where b.session_id = s.session_id and b.status = 'BOOKED'))",
    [studyId],
  );
  const overlaps = await pool.query<{ n: number }>(
    `select count(*)::int as n from sessions a join sessions b on a.host_user_id = b.host_user_id and a.session_id < b.session_id
     where a.booked > 0 and b.booked > 0 and a.starts_at < b.ends_at and b.starts_at < a.ends_at`,
  );
  return { live: live.rows[0]!.n, placesBooked: places.rows[0]!.n, overCapacity: overCapacity.rows[0]!.n, overlaps: overlaps.rows[0]!.n };
}
