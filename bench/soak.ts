import { execFileSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { startBenchService, stopProcess } from './lib/compiled-server.js';
import { processMemory } from './lib/memory.js';
import { dropPostgresDatabase, recreatePostgresDatabase, storeEnv } from './lib/store.js';
import { formatTable } from './lib/table.js';
import { type BenchOptions, type BenchResult, flagNumber, flagValue } from './lib/types.js';

/**
 * `npm run bench -- soak [--quick] [--seconds=N] [--concurrency=N] [--data=steady|growing]`: the compiled server
 * (`node --enable-source-maps dist/server.js`, as `npm start` runs it) on a PostgreSQL database of
 * its own, under a mixed workload for 10 minutes (`--quick`: 60 s) at concurrency 32: reads,
 * searches, writes of people and participants, participant status moves, incentives sent, resent
 * and canceled, and a small import (200 rows) every few seconds beside them. It prints p50/p99 and
 * the errors of each operation (any answer >= 400 is an error: the workload only asks what the
 * API allows, so none is expected by design; a sample of each is printed), and the server's RSS
 * after warm-up (60 s, or 10% of a shorter run) against its RSS at the end (each the median of ten
 * one-second samples).
 * `--data=steady` (the default): from the end of warm-up the panel keeps its size, as a panel in
 * service does: each person created is matched by one deleted (never one a request in flight
 * names), and the imports update the people the warm-up's imports made. Memory that grows then is
 * not data. `--data=growing`: nobody is deleted and three imported rows in four are new people,
 * so the workspace grows all the while (by 60,000 people in 10 minutes), and the server's search
 * counts with it.
 * Aims: 0 errors, RSS growth < 10%.
 */

const root = fileURLToPath(new URL('..', import.meta.url));
const MiB = 1024 * 1024;
const DATABASE = 'bench_soak';
const IMPORT_ROWS = 200;
const IMPORT_EVERY_MS = 4000;

interface Answer<T> {
  status: number;
  body: T;
  text: string;
}

/** Per operation: latencies, and the answers that were errors (status >= 400, or no answer at all: 0). */
class Recorder {
  readonly latencies = new Map<string, number[]>();
  readonly errors = new Map<string, { count: number; samples: string[] }>();
  /** Searches: how each total was counted and the server's own time (its Server-Timing header). */
  readonly searchTimings = new Map<string, { countedBy: Record<string, number>; serverMs: number[] }>();
  /** Off while seeding: only the workload's requests are measured. */
  measuring = false;

  recordTiming(operation: string, header: string | null) {
    const match = header ? /desc="(\w+)";dur=([\d.]+)/.exec(header) : null;
    if (!this.measuring || !match) return;
    let timing = this.searchTimings.get(operation);
    if (!timing) this.searchTimings.set(operation, (timing = { countedBy: {}, serverMs: [] }));
    timing.countedBy[match[1]!] = (timing.countedBy[match[1]!] ?? 0) + 1;
    timing.serverMs.push(Number(match[2]));
  }

  record(operation: string, ms: number, status: number, text: string) {
    if (!this.measuring) {
      if (status >= 400 || status === 0) throw new Error(`seeding failed: ${operation} answered ${status}: ${text.slice(0, 500)}`);
      return;
    }
    let list = this.latencies.get(operation);
    if (!list) this.latencies.set(operation, (list = []));
    list.push(ms);
    if (status >= 400 || status === 0) {
      let errors = this.errors.get(operation);
      if (!errors) this.errors.set(operation, (errors = { count: 0, samples: [] }));
      errors.count++;
      if (errors.samples.length < 3) errors.samples.push(`${status} ${text.slice(0, 300)}`);
    }
  }
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!;
}

const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)]!;

type ParticipantStatus = 'NOT_STARTED' | 'INVITED' | 'SCHEDULED' | 'CANCELED';

interface ParticipantEntry {
  personId: string;
  studyId: string;
  participantId: string;
  status: ParticipantStatus;
}

interface IncentiveEntry {
  incentiveId: string;
  resends: number;
}

const SOAK_METRICS_TOKEN = 'soak-bench-metrics-token';

interface HeapSample {
  at: number;
  people: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
}

/** The server's V8 heap and external memory, read from its Prometheus metrics (prom-client's defaults). */
async function scrapeHeap(port: number): Promise<Omit<HeapSample, 'at' | 'people'> | undefined> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { authorization: `Bearer ${SOAK_METRICS_TOKEN}` } });
    if (!response.ok) return undefined;
    const text = await response.text();
    const gauge = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
    return { heapUsed: gauge('nodejs_heap_size_used_bytes'), heapTotal: gauge('nodejs_heap_size_total_bytes'), external: gauge('nodejs_external_memory_bytes') };
  } catch {
    return undefined;
  }
}

export async function run(options: BenchOptions): Promise<BenchResult> {
  const seconds = flagNumber(options.flags, 'seconds', options.quick ? 60 : 600);
  const concurrency = flagNumber(options.flags, 'concurrency', 32);
  const warmupSeconds = seconds >= 600 ? 60 : Math.max(1, Math.round(seconds / 10));
  const data = flagValue(options.flags, 'data') ?? 'steady';
  if (data !== 'steady' && data !== 'growing') throw new Error(`--data must be steady or growing, got ${data}`);

  process.stderr.write('building dist/ (npm run build)\n');
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' });

  const store = await recreatePostgresDatabase(DATABASE);
  let server: ChildProcess | undefined;
  try {
    // Imports start within a second rather than within the default 5 s poll.
    // One workspace runs the whole mix: the per-workspace search budget (which keeps one tenant's searches from
    // stalling others', the fairness bench's subject) would answer its 32 clients' searches 429; lifted here.
    const service = await startBenchService({ ...storeEnv(store), JOB_POLL_SECONDS: '1', METRICS_TOKEN: SOAK_METRICS_TOKEN, SEARCH_BUDGET_MS_PER_SECOND: '0' }, 'Soak bench');
    server = service.child;
    const { port, token } = service;
    const recorder = new Recorder();
    const base = `http://127.0.0.1:${port}/v1`;

    const api = async <T = unknown>(operation: string, method: string, url: string, body?: unknown, extraHeaders: Record<string, string> = {}): Promise<Answer<T>> => {
      const headers: Record<string, string> = { authorization: `Bearer ${token}`, ...extraHeaders };
      let payload: string | undefined;
      if (typeof body === 'string') {
        headers['content-type'] = 'text/csv';
        payload = body;
      } else if (body !== undefined) {
        headers['content-type'] = 'application/json';
        payload = JSON.stringify(body);
      }
      const started = performance.now();
      let status = 0;
      let text: string;
      try {
        const response = await fetch(`${base}${url}`, { method, headers, body: payload, signal: AbortSignal.timeout(60_000) });
        status = response.status;
        recorder.recordTiming(operation, response.headers.get('server-timing'));
        text = await response.text();
      } catch (error) {
        text = error instanceof Error ? error.message : String(error);
      }
      recorder.record(operation, performance.now() - started, status, text);
      let parsed: unknown;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        parsed = undefined;
      }
      return { status, body: parsed as T, text };
    };

    // --- Seeding: properties, studies, people, participants (not measured).
    process.stderr.write('seeding\n');
    const properties = await api<{ results: { personProperty: { propertyId: string; name: string } }[] }>('seed', 'POST', '/properties/import', [
      { name: 'Age', propertyType: 'NUMBER' },
      { name: 'Tier', propertyType: 'SINGLE_SELECT', propertyOptions: [{ name: 'Bronze' }, { name: 'Silver' }, { name: 'Gold' }] },
    ]);
    const propertyId = Object.fromEntries(properties.body.results.map(({ personProperty }) => [personProperty.name, personProperty.propertyId])) as Record<string, string>;
    const ageId = propertyId.Age!;
    const tierId = propertyId.Tier!;
    const tiers = ['Bronze', 'Silver', 'Gold'];

    const activeStudies: string[] = [];
    for (let index = 0; index < 3; index++) {
      const study = await api<{ studyId: string }>('seed', 'POST', '/studies', {
        studyType: 'INTERVIEWS',
        recruitmentStrategy: 'IN_SERVICE',
        studyPlan: { name: `Soak interviews ${index + 1}`, participationLimit: 100_000 },
      });
      await api('seed', 'POST', `/studies/${study.body.studyId}/launch`);
      activeStudies.push(study.body.studyId);
    }
    // Resend and cancel need the incentive's study in DRAFT (the reference's rule): payments go to this one.
    const draftStudy = (await api<{ studyId: string }>('seed', 'POST', '/studies', { studyType: 'INTERVIEWS', recruitmentStrategy: 'IN_SERVICE', studyPlan: { name: 'Soak payments' } }))
      .body.studyId;
    const allStudies = [...activeStudies, draftStudy];

    let personCounter = 0;
    const people: string[] = [];
    /** People created and not yet added to any study. */
    const unassigned: string[] = [];
    const participants: ParticipantEntry[] = [];
    const payable: string[] = [];
    /** The people behind `payable`: never deleted, so that incentives keep their participant. */
    const payablePeople = new Set<string>();
    const incentives: IncentiveEntry[] = [];
    /** People a request in flight names, by how many: a steady run deletes none of them. */
    const busy = new Map<string, number>();
    const hold = async <T>(personIds: readonly string[], work: () => Promise<T>): Promise<T> => {
      for (const personId of personIds) busy.set(personId, (busy.get(personId) ?? 0) + 1);
      try {
        return await work();
      } finally {
        for (const personId of personIds) {
          const left = busy.get(personId)! - 1;
          if (left === 0) busy.delete(personId);
          else busy.set(personId, left);
        }
      }
    };
    /** Steady data: from the end of warm-up on, each person created is matched by one deleted. */
    let steady = false;
    let deletesPending = 0;
    const deleteSomeone = async () => {
      for (let attempt = 0; attempt < 20; attempt++) {
        const index = Math.floor(Math.random() * people.length);
        const personId = people[index];
        if (personId === undefined || busy.has(personId) || payablePeople.has(personId)) continue;
        // Forgotten before the request leaves, so that no request picks them after it.
        people[index] = people[people.length - 1]!;
        people.pop();
        const unassignedAt = unassigned.indexOf(personId);
        if (unassignedAt !== -1) unassigned.splice(unassignedAt, 1);
        for (let at = participants.length - 1; at >= 0; at--) if (participants[at]!.personId === personId) participants.splice(at, 1);
        await api('delete person', 'DELETE', `/people/${personId}`);
        return;
      }
    };

    const personBody = () => {
      const index = personCounter++;
      return { email: `soak-${index}@example.org`, firstName: `Soak${index}`, lastName: 'Person', properties: { [ageId]: 18 + (index % 60), [tierId]: tiers[index % 3] } };
    };
    const createPerson = async (operation: string) => {
      const answer = await api<{ personId: string }>(operation, 'POST', '/people', personBody());
      if (answer.status === 201 || answer.status === 200) {
        people.push(answer.body.personId);
        unassigned.push(answer.body.personId);
        if (steady) deletesPending++;
      }
      while (deletesPending > 0) {
        deletesPending--;
        await deleteSomeone();
      }
    };
    const addParticipants = async (operation: string) => {
      while (unassigned.length < 5) await createPerson(operation === 'seed' ? 'seed' : 'create person');
      const studyId = pick(allStudies);
      const personIds = unassigned.splice(0, 5);
      if (studyId === draftStudy) for (const personId of personIds) payablePeople.add(personId);
      const answer = await hold(personIds, () =>
        api<{ results: { participantId: string; personId: string }[] }>(operation, 'POST', `/studies/${studyId}/participants`, { personIds }),
      );
      for (const added of answer.body?.results ?? []) {
        if (studyId === draftStudy) payable.push(added.participantId);
        else if (people.includes(added.personId)) participants.push({ personId: added.personId, studyId, participantId: added.participantId, status: 'NOT_STARTED' });
      }
    };
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let round = 0; round < 40; round++) await createPerson('seed');
      }),
    );
    while (unassigned.length >= 5) await addParticipants('seed');

    // --- The workload.
    let importCounter = 0;
    /** Steady data: the imports made during warm-up, whose people later imports update again in turn. */
    let importBatches = 0;
    const importCsv = () => {
      const lines = ['email,firstName,lastName,Age,Tier'];
      const batch = steady ? importCounter % importBatches : importCounter;
      for (let row = 0; row < IMPORT_ROWS; row++) {
        // Growing data: a quarter updates people the import made earlier, the rest are new.
        const email = steady
          ? `soak-import-${batch}-${row}@example.org`
          : row % 4 === 0 && importCounter > 0
            ? `soak-import-${importCounter - 1}-${row}@example.org`
            : `soak-import-${importCounter}-${row}@example.org`;
        lines.push(`${email},Imported${row},Batch${importCounter},${20 + (row % 50)},${tiers[row % 3]}`);
      }
      importCounter++;
      return `${lines.join('\n')}\n`;
    };

    const nextStatus: Record<ParticipantStatus, ParticipantStatus | 'COMPLETED'> = { NOT_STARTED: 'INVITED', INVITED: 'SCHEDULED', SCHEDULED: 'CANCELED', CANCELED: 'INVITED' };
    const operations: [weight: number, run: () => Promise<void>][] = [
      [
        12,
        async () => {
          const personId = pick(people);
          await hold([personId], () => api('GET person', 'GET', `/people/${personId}`));
        },
      ],
      [5, async () => void (await api('GET studies', 'GET', '/studies?size=25'))],
      [5, async () => void (await api('GET study', 'GET', `/studies/${pick(allStudies)}`))],
      [
        8,
        async () => {
          const participant = participants.length > 0 ? pick(participants) : undefined;
          if (participant) await hold([participant.personId], () => api('GET participant', 'GET', `/studies/${participant.studyId}/participants/${participant.participantId}`));
        },
      ],
      [
        10,
        async () =>
          void (await api('search people', 'POST', '/people/search', {
            filter: {
              filters: [
                { property: { propertyId: ageId }, comparison: 'GREATER_THAN', value: 18 + Math.floor(Math.random() * 50) },
                { property: { propertyId: tierId }, comparison: 'IS_ANY_OF', value: [pick(tiers)] },
              ],
            },
            pageInfo: { size: 25 },
          })),
      ],
      [
        10,
        async () =>
          void (await api('search participants', 'POST', `/studies/${pick(activeStudies)}/participants/search`, {
            filter: { filters: [{ property: { propertyGroup: 'PARTICIPANT', propertyName: 'STATUS' }, comparison: 'IS_ANY_OF', value: ['INVITED', 'SCHEDULED'] }] },
            pageInfo: { size: 25 },
          })),
      ],
      [8, () => createPerson('create person')],
      [
        8,
        async () => {
          const index = Math.floor(Math.random() * personCounter);
          const personId = pick(people);
          await hold([personId], () => api('patch person', 'PATCH', `/people/${personId}`, { lastName: `Patched${index}`, properties: { [ageId]: 18 + (index % 60) } }));
        },
      ],
      [5, () => addParticipants('add participants')],
      [
        12,
        async () => {
          // Taken out of the pool while it moves: one move of a participant at a time.
          const index = Math.floor(Math.random() * participants.length);
          const participant = participants[index];
          if (!participant) return;
          participants.splice(index, 1);
          const status = Math.random() < 0.3 && participant.status === 'SCHEDULED' ? 'COMPLETED' : nextStatus[participant.status];
          const body: Record<string, unknown> = { status };
          if (status === 'SCHEDULED') body.interviewStartTime = new Date(Date.now() + 7 * 86_400_000).toISOString();
          const answer = await hold([participant.personId], () => api('move participant', 'PATCH', `/studies/${participant.studyId}/participants/${participant.participantId}`, body));
          if (answer.status === 200 && status !== 'COMPLETED') participants.push({ ...participant, status });
          else if (answer.status !== 200) participants.push(participant);
        },
      ],
      [
        4,
        async () => {
          if (payable.length === 0) return;
          const cash = Math.random() < 0.75;
          const answer = await api<{ incentiveId: string }>(
            'send incentive',
            'POST',
            '/incentives',
            cash ? { participantId: pick(payable), type: 'MONEY_OR_GIFT_CARD', amountCents: 2500 } : { participantId: pick(payable), type: 'CUSTOM', customIncentiveValue: 'Tote bag' },
            { 'idempotency-key': randomUUID() },
          );
          if (answer.status === 201 && cash) incentives.push({ incentiveId: answer.body.incentiveId, resends: 0 });
        },
      ],
      [
        3,
        async () => {
          // UNCLAIMED money incentives: resent up to twice, then canceled (CANCELED is final).
          const index = Math.floor(Math.random() * incentives.length);
          const incentive = incentives[index];
          if (!incentive) return;
          incentives.splice(index, 1);
          if (incentive.resends < 2) {
            const answer = await api('resend incentive', 'POST', `/incentives/${incentive.incentiveId}/resend`);
            incentives.push(answer.status === 200 ? { ...incentive, resends: incentive.resends + 1 } : incentive);
          } else {
            const answer = await api('cancel incentive', 'POST', `/incentives/${incentive.incentiveId}/cancel`);
            if (answer.status !== 200) incentives.push(incentive);
          }
        },
      ],
      [
        3,
        async () => {
          const incentive = incentives.length > 0 ? pick(incentives) : undefined;
          if (incentive) await api('GET incentive', 'GET', `/incentives/${incentive.incentiveId}`);
        },
      ],
    ];
    const totalWeight = operations.reduce((sum, [weight]) => sum + weight, 0);
    const chooseOperation = () => {
      let roll = Math.random() * totalWeight;
      for (const [weight, operation] of operations) {
        roll -= weight;
        if (roll < 0) return operation;
      }
      return operations[0]![1];
    };

    process.stderr.write(
      `soak: ${seconds} s at concurrency ${concurrency}, warm-up ${warmupSeconds} s, an import of ${IMPORT_ROWS} rows every ${IMPORT_EVERY_MS / 1000} s, ${data} data\n`,
    );
    recorder.measuring = true;
    const started = performance.now();
    let livePeopleAfterWarmup = 0;
    const endOfWarmup = setTimeout(() => {
      livePeopleAfterWarmup = people.length;
      if (data !== 'steady') return;
      // From here on the panel keeps its size: creates are matched by deletes, imports update.
      steady = true;
      importBatches = Math.max(1, importCounter);
    }, warmupSeconds * 1000);
    const endAt = started + seconds * 1000;
    const rssSamples: { at: number; rss: number }[] = [];
    const sampler = setInterval(() => {
      const memory = processMemory(server?.pid);
      if (memory) rssSamples.push({ at: (performance.now() - started) / 1000, rss: memory.rss });
    }, 1000);
    // What RSS holds, from the server's own /metrics: V8's heap in use, and memory outside it
    // (ArrayBuffers: the search counts' columns and bitsets), to tell data from slack.
    const heapSamples: HeapSample[] = [];
    const heapSampler = setInterval(() => {
      void scrapeHeap(port).then((sample) => sample && heapSamples.push({ ...sample, at: (performance.now() - started) / 1000, people: personCounter }));
    }, 5000);
    const progress = setInterval(() => {
      const elapsed = (performance.now() - started) / 1000;
      const requests = [...recorder.latencies.values()].reduce((sum, list) => sum + list.length, 0);
      const errors = [...recorder.errors.values()].reduce((sum, entry) => sum + entry.count, 0);
      const rss = rssSamples.at(-1)?.rss ?? Number.NaN;
      process.stderr.write(`  ${elapsed.toFixed(0)} s: ${requests} requests, ${errors} errors, RSS ${(rss / MiB).toFixed(1)} MiB, people ${personCounter}, imports ${importCounter}\n`);
    }, seconds >= 300 ? 30_000 : 10_000);

    const importTimes: number[] = [];
    let importsUnfinished = 0;
    const importer = (async () => {
      while (performance.now() < endAt) {
        const startedImport = performance.now();
        const accepted = await api<{ importId: string }>('POST import (200 rows)', 'POST', '/imports', importCsv());
        if (accepted.status === 202) {
          const deadline = performance.now() + 60_000;
          let done = false;
          while (performance.now() < deadline) {
            await sleep(200);
            const state = await api<{ status: string; rowsFailed: number }>('GET import', 'GET', `/imports/${accepted.body.importId}`);
            if (state.body?.status === 'COMPLETED' || state.body?.status === 'FAILED') {
              if (state.body.status !== 'COMPLETED' || state.body.rowsFailed !== 0) recorder.record('import to COMPLETED', performance.now() - startedImport, 500, state.text);
              else recorder.record('import to COMPLETED', performance.now() - startedImport, 200, '');
              done = true;
              break;
            }
          }
          if (!done) importsUnfinished++;
          importTimes.push(performance.now() - startedImport);
        }
        await sleep(Math.max(0, IMPORT_EVERY_MS - (performance.now() - startedImport)));
      }
    })();
    const workers = Array.from({ length: concurrency }, async () => {
      while (performance.now() < endAt) await chooseOperation()();
    });
    await Promise.all([...workers, importer]);
    clearInterval(sampler);
    clearTimeout(endOfWarmup);
    clearInterval(heapSampler);
    clearInterval(progress);
    const elapsed = (performance.now() - started) / 1000;
    recorder.measuring = false;

    // RSS swings by a tenth between collections: each end of the comparison is the median of ten
    // one-second samples, those right after warm-up and the last ten of the run.
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
    const warmRss = median(rssSamples.filter((sample) => sample.at >= warmupSeconds).slice(0, 10).map((sample) => sample.rss));
    const endRss = median(rssSamples.slice(-10).map((sample) => sample.rss));
    const peakAfterWarmup = Math.max(...rssSamples.filter((sample) => sample.at >= warmupSeconds).map((sample) => sample.rss));
    const growth = (endRss - warmRss) / warmRss;

    const rows: (string | number)[][] = [];
    const figures: Record<string, { requests: number; p50Ms: number; p99Ms: number; errors: number }> = {};
    let totalRequests = 0;
    let totalErrors = 0;
    for (const [operation, list] of [...recorder.latencies.entries()].sort(([a], [b]) => a.localeCompare(b))) {
      const sorted = [...list].sort((a, b) => a - b);
      const errors = recorder.errors.get(operation)?.count ?? 0;
      totalRequests += list.length;
      totalErrors += errors;
      figures[operation] = { requests: list.length, p50Ms: +percentile(sorted, 50).toFixed(1), p99Ms: +percentile(sorted, 99).toFixed(1), errors };
      rows.push([operation, list.length, +percentile(sorted, 50).toFixed(1), +percentile(sorted, 99).toFixed(1), errors]);
    }
    process.stdout.write(`${formatTable(['operation', 'requests', 'p50 ms', 'p99 ms', 'errors'], rows)}\n`);
    process.stdout.write(`${totalRequests} requests in ${elapsed.toFixed(0)} s (${(totalRequests / elapsed).toFixed(0)}/s), ${totalErrors} errors; ${importTimes.length} imports of ${IMPORT_ROWS} rows (${importsUnfinished} not finished within 60 s)\n`);
    for (const [operation, { count, samples }] of recorder.errors) {
      process.stdout.write(`errors of ${operation} (${count}):\n${samples.map((sample) => `  ${sample}`).join('\n')}\n`);
    }
    const searchTotals: Record<string, unknown> = {};
    for (const [operation, { countedBy, serverMs }] of recorder.searchTimings) {
      const sorted = [...serverMs].sort((a, b) => a - b);
      searchTotals[operation] = { countedBy, serverP50Ms: +percentile(sorted, 50).toFixed(1), serverP99Ms: +percentile(sorted, 99).toFixed(1) };
      process.stdout.write(
        `${operation}: totals counted by ${Object.entries(countedBy).map(([by, count]) => `${by} ${count}`).join(', ')}; ` +
          `server time (Server-Timing) p50 ${percentile(sorted, 50).toFixed(1)} ms, p99 ${percentile(sorted, 99).toFixed(1)} ms\n`,
      );
    }
    process.stdout.write(
      `server RSS (median of 10 one-second samples): ${(warmRss / MiB).toFixed(1)} MiB after warm-up (${warmupSeconds} s), ${(endRss / MiB).toFixed(1)} MiB at the end (${(growth * 100).toFixed(1)}%), ` +
        `peak after warm-up ${(peakAfterWarmup / MiB).toFixed(1)} MiB\n`,
    );
    const warmHeap = heapSamples.filter((sample) => sample.at >= warmupSeconds).slice(0, 4);
    const endHeap = heapSamples.slice(-4);
    const heapFigure = (samples: HeapSample[], key: 'heapUsed' | 'heapTotal' | 'external') => median(samples.map((sample) => sample[key])) / MiB;
    const heap = {
      heapUsedAfterWarmupMiB: +heapFigure(warmHeap, 'heapUsed').toFixed(1),
      heapUsedEndMiB: +heapFigure(endHeap, 'heapUsed').toFixed(1),
      heapTotalAfterWarmupMiB: +heapFigure(warmHeap, 'heapTotal').toFixed(1),
      heapTotalEndMiB: +heapFigure(endHeap, 'heapTotal').toFixed(1),
      externalAfterWarmupMiB: +heapFigure(warmHeap, 'external').toFixed(1),
      externalEndMiB: +heapFigure(endHeap, 'external').toFixed(1),
      peopleAfterWarmup: warmHeap[0]?.people ?? 0,
    };
    process.stdout.write(
      `server memory (median of 4 samples, 5 s apart, from /metrics): V8 heap used ${heap.heapUsedAfterWarmupMiB} -> ${heap.heapUsedEndMiB} MiB, ` +
        `V8 heap total ${heap.heapTotalAfterWarmupMiB} -> ${heap.heapTotalEndMiB} MiB, outside the heap (ArrayBuffers, native) ${heap.externalAfterWarmupMiB} -> ${heap.externalEndMiB} MiB; ` +
        `people created through the API ${heap.peopleAfterWarmup} -> ${personCounter}, live ${livePeopleAfterWarmup} -> ${people.length}\n`,
    );
    process.stdout.write('aims: 0 errors; RSS growth from the end of warm-up to the end < 10%\n');
    return {
      bench: 'soak',
      quick: options.quick,
      // 1.0: no growth of the server's memory over the run.
      ratio: +(endRss / warmRss).toFixed(3),
      seconds: Math.round(elapsed),
      concurrency,
      requests: totalRequests,
      errors: totalErrors,
      imports: importTimes.length,
      importsUnfinished,
      warmupSeconds,
      rssAfterWarmupMiB: +(warmRss / MiB).toFixed(1),
      rssEndMiB: +(endRss / MiB).toFixed(1),
      rssPeakAfterWarmupMiB: +(peakAfterWarmup / MiB).toFixed(1),
      rssGrowthPercent: +(growth * 100).toFixed(1),
      data,
      people: personCounter,
      livePeopleAfterWarmup,
      livePeopleEnd: people.length,
      ...heap,
      operations: figures,
      searchTotals,
    };
  } finally {
    if (server) await stopProcess(server);
    await dropPostgresDatabase(DATABASE);
  }
}
