import { execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { Agent, request } from 'undici';
import { startBenchService, stopProcess } from './lib/compiled-server.js';
import { sampleMemory } from './lib/memory.js';
import { summarizeProfile } from './lib/profile.js';
import { dropPostgresDatabase, recreatePostgresDatabase, storeEnv } from './lib/store.js';
import { formatTable } from './lib/table.js';
import { type BenchOptions, type BenchResult, flagNumber } from './lib/types.js';

/**
 * `npm run bench -- screener`: the participant's side under load, from the compiled server on a
 * PostgreSQL database of its own. A launched study with a three-question screener, two quota
 * groups and a consent form; N people invited (each a participant with a screener link of their
 * own). Then `concurrency` people at a time, as a browser without JavaScript would: open the
 * screener page, post the answers (a tenth are disqualified), and, when the answer sends them on
 * to the consent page, open it and sign. Each step's latency is set beside the floor: a static
 * file of the screener page's size served by the same server (under /console, from disk, no
 * database), fetched at the same concurrency. After the run the quota places are counted in the
 * database: each group holds exactly its cap (more qualified people than places match it).
 */

const root = fileURLToPath(new URL('..', import.meta.url));
const DATABASE = 'bench_screener';

const percentile = (values: number[], fraction: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))] ?? Number.NaN;
};
const round = (value: number) => Math.round(value * 10) / 10;

interface FormField {
  tag: 'input' | 'textarea';
  type: string;
  name: string;
  value: string;
}

/** The page's post form: its action and fields, read as a browser without scripts sees them. */
export function parseForm(html: string): { action: string; fields: FormField[] } | undefined {
  const form = /<form[^>]*method="post"[^>]*action="([^"]+)"[^>]*>([\s\S]*?)<\/form>/.exec(html);
  if (!form) return undefined;
  const attribute = (tag: string, name: string) => new RegExp(`\\s${name}="([^"]*)"`).exec(tag)?.[1];
  const fields: FormField[] = [];
  for (const match of form[2]!.matchAll(/<(input|textarea)\b[^>]*>/g)) {
    const name = attribute(match[0], 'name');
    if (name === undefined) continue;
    fields.push({ tag: match[1] as 'input' | 'textarea', type: attribute(match[0], 'type') ?? 'text', name, value: (attribute(match[0], 'value') ?? '').replaceAll('&amp;', '&') });
  }
  return { action: form[1]!.replaceAll('&amp;', '&'), fields };
}

export async function run(options: BenchOptions): Promise<BenchResult> {
  const people = flagNumber(options.flags, 'people', options.quick ? 200 : 2_000);
  const concurrency = flagNumber(options.flags, 'concurrency', 64);
  const cap = Math.max(1, Math.floor(people * 0.3));

  process.stderr.write('building dist/ (npm run build)\n');
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' });

  const store = await recreatePostgresDatabase(DATABASE);
  let server: ChildProcess | undefined;
  let profile: string | undefined;
  const floorFile = path.join(root, 'console', 'dist', `bench-floor-${process.pid}.html`);
  const pool = new pg.Pool({ connectionString: store.kind === 'postgres' ? store.databaseUrl : '', max: 2 });
  const agent = new Agent({ connections: concurrency, keepAliveTimeout: 10_000 });
  try {
    // Every participant comes from one address here: the per-address limit is the operator's to set for the real world.
    const profileDir = options.flags.includes('--profile') ? mkdtempSync(path.join(tmpdir(), 'screener-profile-')) : undefined;
    const started = await startBenchService(
      { ...storeEnv(store), PARTICIPANT_RATE_LIMIT_MAX: '100000000', PARTICIPANT_LINK_RATE_LIMIT_MAX: '100000000' },
      'Screener bench',
      profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
    );
    profile = profileDir;
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

    process.stderr.write(`setting up: a study, its screener, quotas and consent form, ${people} invited participants\n`);
    const form = await api<{ consentFormId: string }>('POST', '/consent-forms', {
      name: 'Interview consent',
      title: 'Taking part in the interview',
      body: '## What happens\n\nWe talk for 45 minutes over video and **record the call** when you agree.\n\n## Your data\n\nYou may withdraw at any time from the link in the email we send.',
      language: 'en',
      requiredStatements: [
        { id: 'take-part', text: 'I agree to take part in this study' },
        { id: 'data', text: 'I agree that my answers are kept for this study' },
      ],
      optionalChoices: [{ id: 'recording', text: 'I agree to be recorded' }],
    });
    const study = await api<{ studyId: string }>('POST', '/studies', {
      studyType: 'INTERVIEWS',
      recruitmentStrategy: 'IN_SERVICE',
      studyPlan: { name: 'Checkout interviews', externalName: 'Paying online', language: 'en', consentFormId: form.consentFormId },
    });
    const { studyId } = study;
    const screener = await api<{ questions: { id: string; key: string }[] }>('PUT', `/studies/${studyId}/screener`, {
      qualifyByDefault: true,
      questions: [
        {
          key: 'freq',
          name: 'How often do you shop online?',
          type: 'SINGLE_SELECT',
          isRequired: true,
          choices: [
            { id: 'weekly', label: 'Weekly' },
            { id: 'monthly', label: 'Monthly' },
            { id: 'never', label: 'Never', rule: 'DISQUALIFIES' },
          ],
        },
        { key: 'orders', name: 'How many orders did you place last month?', type: 'NUMBER', minimum: 0, integer: true, isRequired: true },
        { key: 'camera', name: 'Can you join a video call?', type: 'YES_NO', isRequired: true },
      ],
    });
    const questionId = Object.fromEntries(screener.questions.map((question) => [question.key, question.id]));
    await setUpQuotas(api, studyId, cap);
    await api('POST', `/studies/${studyId}/launch`);

    const personIds: string[] = [];
    let made = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (made < people) {
          const index = made++;
          const person = await api<{ personId: string }>('POST', '/people', { email: `person${index}@example.org`, firstName: `Person${index}`, lastName: 'Bench' });
          personIds[index] = person.personId;
        }
      }),
    );
    const participantIds: string[] = [];
    for (let start = 0; start < people; start += 1_000) {
      const added = await api<{ results: { participantId: string; personId: string }[] }>('POST', `/studies/${studyId}/participants`, { personIds: personIds.slice(start, start + 1_000) });
      const byPerson = new Map(added.results.map((participant) => [participant.personId, participant.participantId]));
      for (const personId of personIds.slice(start, start + 1_000)) participantIds.push(byPerson.get(personId)!);
    }
    const links: string[] = [];
    let linked = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (linked < people) {
          const index = linked++;
          const link = await api<{ url: string }>('POST', `/studies/${studyId}/participants/${participantIds[index]}/links`, { purpose: 'SCREENER' });
          links[index] = new URL(link.url).pathname;
        }
      }),
    );

    const timings = { page: [] as number[], submit: [] as number[], consentPage: [] as number[], sign: [] as number[], floor: [] as number[] };
    const errors: string[] = [];
    const outcomes = new Map<string, number>();
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
      return { status: response.statusCode, location: response.headers.location as string | undefined, text };
    };

    // The floor's file: the screener page's own bytes, served as a static file by the same server.
    const sample = await timed('floor', 'GET', links[0]!);
    timings.floor.length = 0;
    writeFileSync(floorFile, sample.text);
    const floorUrl = `/console/${path.basename(floorFile)}`;

    const answersFor = (index: number): Record<string, string> => ({
      [`q_${questionId.freq}`]: index % 10 === 9 ? 'never' : index % 2 === 0 ? 'weekly' : 'monthly',
      [`q_${questionId.orders}`]: String(index % 13),
      [`q_${questionId.camera}`]: index % 3 === 0 ? 'no' : 'yes',
    });

    const journey = async (index: number) => {
      const page = await timed('page', 'GET', links[index]!);
      const screenerForm = page.status === 200 ? parseForm(page.text) : undefined;
      if (!screenerForm) throw new Error(`screener page: ${page.status}`);
      const posted = new URLSearchParams();
      for (const field of screenerForm.fields) if (field.type === 'hidden') posted.append(field.name, field.value);
      posted.append('website', '');
      for (const [name, value] of Object.entries(answersFor(index))) posted.append(name, value);
      const submitted = await timed('submit', 'POST', screenerForm.action, posted.toString());
      if (submitted.status === 303 && submitted.location) {
        outcomes.set('TO_CONSENT', (outcomes.get('TO_CONSENT') ?? 0) + 1);
        const consent = await timed('consentPage', 'GET', new URL(submitted.location, origin).pathname);
        const consentForm = consent.status === 200 ? parseForm(consent.text) : undefined;
        if (!consentForm) throw new Error(`consent page: ${consent.status}`);
        const signed = new URLSearchParams();
        for (const field of consentForm.fields) {
          if (field.type === 'hidden') signed.append(field.name, field.value);
          else if (field.type === 'checkbox') signed.append(field.name, field.value || 'on');
          else if (field.type === 'text') signed.append(field.name, `Person${index} Bench`);
        }
        const sign = await timed('sign', 'POST', consentForm.action, signed.toString());
        if (sign.status !== 200 && sign.status !== 303) throw new Error(`sign: ${sign.status} ${sign.text.slice(0, 200)}`);
      } else if (submitted.status === 200) {
        outcomes.set('ANSWERED', (outcomes.get('ANSWERED') ?? 0) + 1);
      } else {
        throw new Error(`submit: ${submitted.status} ${submitted.text.slice(0, 200)}`);
      }
    };

    process.stderr.write(`run: ${people} people at concurrency ${concurrency}\n`);
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
    // The floor at the same concurrency, as many fetches as screener pages.
    let floorNext = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (floorNext < people) {
          floorNext++;
          const floor = await timed('floor', 'GET', floorUrl);
          if (floor.status !== 200 || floor.text.length !== sample.text.length) errors.push(`floor: ${floor.status}, ${floor.text.length} bytes`);
        }
      }),
    );
    const { peakRss } = memory.stop();

    const placed = await countPlacements(pool, studyId);
    const qualifiedWanting = { weekly: 0, monthly: 0 };
    for (let index = 0; index < people; index++) {
      const freq = answersFor(index)[`q_${questionId.freq}`];
      if (freq === 'weekly' || freq === 'monthly') qualifiedWanting[freq]++;
    }
    const expected = { Weekly: Math.min(cap, qualifiedWanting.weekly), Monthly: Math.min(cap, qualifiedWanting.monthly) };
    // Exact: each group's counter and the participants placed in it are both what the caps allow.
    const quotaExact =
      placed.quotaGroups !== null &&
      (['Weekly', 'Monthly'] as const).every((name) => placed.quotaGroups![name] === expected[name] && placed.counters[name] === expected[name]);
    if (!quotaExact) errors.push(`quota places: participants ${JSON.stringify(placed.quotaGroups)}, counters ${JSON.stringify(placed.counters)}, expected ${JSON.stringify(expected)}`);

    const floorP50 = percentile(timings.floor, 0.5);
    const floorP99 = percentile(timings.floor, 0.99);
    const steps = (['page', 'submit', 'consentPage', 'sign'] as const).filter((step) => timings[step].length > 0);
    const rows = [
      ...steps.map((step) => [step, timings[step].length, round(percentile(timings[step], 0.5)), round(percentile(timings[step], 0.99)), round(percentile(timings[step], 0.99) / floorP99)]),
      ['floor (static file, same size)', timings.floor.length, round(floorP50), round(floorP99), 1],
    ];
    process.stderr.write(`\n${formatTable(['step', 'requests', 'p50 ms', 'p99 ms', 'p99 / floor p99'], rows)}\n`);
    process.stderr.write(
      `\n${people} journeys in ${round(runSeconds)} s (${round(people / runSeconds)}/s); outcomes ${JSON.stringify(Object.fromEntries(outcomes))}; ` +
        `screener states ${JSON.stringify(placed.screenerStates)}; quota places ${JSON.stringify(placed.quotaGroups)} (expected ${JSON.stringify(expected)}); consents ${placed.consents}; ` +
        `errors ${errors.length}${errors.length > 0 ? ` (first: ${errors[0]})` : ''}; server peak RSS ${Math.round(peakRss / 1048576)} MiB\n`,
    );
    const figure = (step: string, values: number[]) => ({ [`${step}P50Ms`]: round(percentile(values, 0.5)), [`${step}P99Ms`]: round(percentile(values, 0.99)) });
    return {
      bench: 'screener',
      quick: options.quick,
      ratio: round(percentile(timings.page, 0.99) / floorP99),
      people,
      concurrency,
      ...Object.assign({}, ...steps.map((step) => figure(step, timings[step]))),
      ...figure('floor', timings.floor),
      journeysPerSecond: round(people / runSeconds),
      errors: errors.length,
      quotaExact,
      quotaPlaces: placed.quotaGroups,
      consents: placed.consents,
      peakRssMiB: Math.round(peakRss / 1048576),
      aims: { pageP99Ms: 100, submitP99Ms: 200 },
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

type Api = <T = Record<string, unknown>>(method: string, url: string, body?: unknown) => Promise<T>;

/** Two quota groups of `cap` places each: weekly shoppers, monthly shoppers (each more than the places). */
async function setUpQuotas(api: Api, studyId: string, cap: number): Promise<void> {
  await api('PUT', `/studies/${studyId}/quota-groups`, {
    quotaGroups: [
      { name: 'Weekly', cap, answers: [{ questionKey: 'freq', choiceIds: ['weekly'] }] },
      { name: 'Monthly', cap, answers: [{ questionKey: 'freq', choiceIds: ['monthly'] }] },
    ],
  });
}

async function countPlacements(pool: pg.Pool, studyId: string) {
  const states = await pool.query<{ screener_state: string; n: number }>('select screener_state, count(*)::int as n from participants where study_id = $1 group by 1', [studyId]);
  const groups = await pool.query<{ quota_group: string; n: number }>('select quota_group, count(*)::int as n from participants where study_id = $1 and quota_group is not null group by 1', [studyId]);
  const consents = await pool.query<{ n: number }>('select count(*)::int as n from consent_submissions where study_id = $1', [studyId]);
  const counters = await pool.query<{ name: string; filled: number }>('select name, filled from quota_groups where study_id = $1', [studyId]);
  return {
    counters: Object.fromEntries(counters.rows.map((row) => [row.name, row.filled])) as Record<string, number>,
    screenerStates: Object.fromEntries(states.rows.map((row) => [row.screener_state, row.n])),
    quotaGroups: groups.rows.length === 0 ? null : (Object.fromEntries(groups.rows.map((row) => [row.quota_group, row.n])) as Record<string, number>),
    consents: consents.rows[0]!.n,
  };
}

/** The server's CPU profile (the largest of the directory: the CLI's are small), by where the self time went. */
export function printProfiles(directory: string) {
  const files = readdirSync(directory).map((name) => path.join(directory, name));
  const largest = files.sort((a, b) => statSync(b).size - statSync(a).size)[0];
  if (!largest) return;
  process.stderr.write(`\nserver CPU profile (${largest}):\n${formatTable(['where', 'self ms', 'share %'], summarizeProfile(largest, 30).map((line) => [line.where, round(line.selfMs), round(line.selfShare * 100)]))}\n`);
}
