import { type ChildProcess, execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { TremendousFake } from '../test/fakes/tremendous-fake.js';
import { startBenchService, stopProcess } from './lib/compiled-server.js';
import { sampleMemory } from './lib/memory.js';
import { dropPostgresDatabase, recreatePostgresDatabase, storeEnv } from './lib/store.js';
import { formatTable } from './lib/table.js';
import { type BenchOptions, type BenchResult, flagNumber } from './lib/types.js';

/**
 * `npm run bench -- incentives`: N incentives (default 10,000) sent at concurrency 32 to the
 * compiled server on a PostgreSQL database of its own, each ordered through the Tremendous
 * adapter from the workspace's account, reaching the Tremendous fake (test/fakes/tremendous-fake.ts)
 * in this process on loopback (TREMENDOUS_API_URL). Measured: incentives ordered per second, the
 * time from the request's sending to the order's arrival at the fake (p50/p99) and to the
 * answer, orders created twice for one external_id (must be 0), and the server's peak RSS while
 * sending. The fake answers at once: the figures are the service's own cost, not Tremendous's.
 */

const root = fileURLToPath(new URL('..', import.meta.url));
const DATABASE = 'bench_incentives';

const percentile = (values: number[], fraction: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))] ?? Number.NaN;
};
const round = (value: number) => Math.round(value * 10) / 10;

export async function run(options: BenchOptions): Promise<BenchResult> {
  const count = flagNumber(options.flags, 'incentives', options.quick ? 500 : 10_000);
  const concurrency = flagNumber(options.flags, 'concurrency', 32);

  process.stderr.write('building dist/ (npm run build)\n');
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' });

  const fake = await TremendousFake.start();
  const store = await recreatePostgresDatabase(DATABASE);
  let server: ChildProcess | undefined;
  const agent = new Agent({ connections: concurrency, keepAliveTimeout: 10_000 });
  try {
    const started = await startBenchService({ ...storeEnv(store), TREMENDOUS_API_URL: fake.url, JOBS: 'on' }, 'Incentives bench');
    server = started.child;
    const base = `http://127.0.0.1:${started.port}/v1`;
    const headers = { authorization: `Bearer ${started.token}`, 'content-type': 'application/json' };
    const api = async <T>(method: 'GET' | 'POST' | 'PUT', url: string, body?: unknown): Promise<{ status: number; body: T }> => {
      const response = await request(`${base}${url}`, { method, headers, dispatcher: agent, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
      const text = await response.body.text();
      return { status: response.statusCode, body: (text ? JSON.parse(text) : undefined) as T };
    };
    const must = <T>(answer: { status: number; body: T }, what: string) => {
      if (answer.status >= 300) throw new Error(`${what}: ${answer.status} ${JSON.stringify(answer.body)}`);
      return answer.body;
    };
    const pool = async (total: number, work: (index: number) => Promise<void>) => {
      let next = 0;
      await Promise.all(Array.from({ length: concurrency }, async () => {
        while (next < total) await work(next++);
      }));
    };

    must(await api('PUT', '/incentive-provider', { provider: 'tremendous', credentials: { apiKey: fake.apiKey, campaignId: 'BENCH', webhookSecret: 'bench-webhook-key' } }), 'PUT /incentive-provider');
    const study = must(await api<{ studyId: string }>('POST', '/studies', { studyType: 'INTERVIEWS', recruitmentStrategy: 'IN_SERVICE', studyPlan: { name: 'Incentives bench' } }), 'POST /studies');
    process.stderr.write(`seeding ${count} people and participants\n`);
    const personIds: string[] = new Array<string>(count);
    await pool(count, async (index) => {
      personIds[index] = must(await api<{ personId: string }>('POST', '/people', { email: `paid-${index}@bench.example`, firstName: `P${index}` }), 'POST /people').personId;
    });
    const participantIds: string[] = [];
    for (let offset = 0; offset < count; offset += 1000) {
      const added = must(await api<{ results: { participantId: string }[] }>('POST', `/studies/${study.studyId}/participants`, { personIds: personIds.slice(offset, offset + 1000) }), 'add participants');
      participantIds.push(...added.results.map((participant) => participant.participantId));
    }

    process.stderr.write(`sending ${count} incentives at concurrency ${concurrency}\n`);
    const sentAt = new Map<string, number>();
    const toAnswer: number[] = [];
    const statuses = new Map<string, number>();
    const memory = sampleMemory(server.pid);
    const begin = performance.now();
    await pool(count, async (index) => {
      const sent = performance.now();
      const answer = await api<{ incentiveId: string; status: string }>('POST', '/incentives', { participantId: participantIds[index], type: 'MONEY_OR_GIFT_CARD', amountCents: 2500 });
      toAnswer.push(performance.now() - sent);
      const key = answer.status === 201 ? answer.body.status : `HTTP ${answer.status}`;
      statuses.set(key, (statuses.get(key) ?? 0) + 1);
      if (answer.status === 201) sentAt.set(answer.body.incentiveId, sent);
    });
    const seconds = (performance.now() - begin) / 1000;
    const { peakRss } = memory.stop();

    const toOrder: number[] = [];
    for (const receipt of fake.receipts) {
      if (receipt.operation !== 'order' || !receipt.externalId) continue;
      const sent = sentAt.get(receipt.externalId);
      if (sent !== undefined && receipt.status === 201) toOrder.push(receipt.receivedAt - sent);
    }
    const figures = {
      incentives: count,
      concurrency,
      ordersPerSecond: Math.round(fake.createdPerExternalId.size / seconds),
      requestToOrderP50Ms: round(percentile(toOrder, 0.5)),
      requestToOrderP99Ms: round(percentile(toOrder, 0.99)),
      requestToAnswerP50Ms: round(percentile(toAnswer, 0.5)),
      requestToAnswerP99Ms: round(percentile(toAnswer, 0.99)),
      ordersAtProvider: fake.createdPerExternalId.size,
      doubleOrders: fake.doubleOrders(),
      unclaimed: statuses.get('UNCLAIMED') ?? 0,
      otherAnswers: Object.fromEntries([...statuses].filter(([status]) => status !== 'UNCLAIMED')),
      serverPeakRssMiB: Math.round(peakRss / 1024 / 1024),
    };
    process.stdout.write(
      `\n${formatTable(
        ['figure', 'value'],
        [
          ['incentives sent (concurrency)', `${count} (${concurrency})`],
          ['orders/s', figures.ordersPerSecond],
          ['request → order at the fake p50 (ms)', figures.requestToOrderP50Ms],
          ['request → order at the fake p99 (ms)', figures.requestToOrderP99Ms],
          ['request → answer p50 (ms)', figures.requestToAnswerP50Ms],
          ['request → answer p99 (ms)', figures.requestToAnswerP99Ms],
          ['orders at the fake / double orders', `${figures.ordersAtProvider} / ${figures.doubleOrders}`],
          ['answered UNCLAIMED', figures.unclaimed],
          ['server peak RSS (MiB)', figures.serverPeakRssMiB],
        ],
      )}\n\n`,
    );
    return { bench: 'incentives', quick: options.quick, ratio: 1, ...figures };
  } finally {
    if (server) await stopProcess(server);
    await agent.close();
    await fake.close();
    await dropPostgresDatabase(DATABASE);
  }
}
