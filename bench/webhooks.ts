import { execFileSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { Agent, request } from 'undici';
import { startBenchService, stopProcess } from './lib/compiled-server.js';
import { dropPostgresDatabase, recreatePostgresDatabase, storeEnv } from './lib/store.js';
import { formatTable } from './lib/table.js';
import { type BenchOptions, type BenchResult, flagNumber } from './lib/types.js';

/**
 * `npm run bench -- webhooks`: the compiled server on a PostgreSQL database of its own, pushing
 * to a receiver on loopback that answers 204 at once.
 * - Latency: one write at a time (an opt-out toggled through the API); from the moment the write
 *   answered (its transaction had committed) to the receiver's receipt of its event, and from the
 *   moment the write was sent (an upper bound that includes the write itself).
 * - Throughput: a backlog of messages queued in one transaction (the outbox's own SQL shape),
 *   then woken by its commit's NOTIFY: deliveries per second until the receiver has them all.
 *   The floor is the same number of signed POSTs sent to the same receiver by a bare undici
 *   client at the dispatcher's concurrency per endpoint (16), from this process.
 */

const root = fileURLToPath(new URL('..', import.meta.url));
const DATABASE = 'bench_webhooks';
const PER_ENDPOINT = 16;

const percentile = (values: number[], fraction: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))] ?? Number.NaN;
};
const round = (value: number) => Math.round(value * 10) / 10;

export async function run(options: BenchOptions): Promise<BenchResult> {
  const writes = flagNumber(options.flags, 'writes', options.quick ? 50 : 300);
  const backlog = flagNumber(options.flags, 'backlog', options.quick ? 2_000 : 20_000);

  process.stderr.write('building dist/ (npm run build)\n');
  execFileSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' });

  // The receiver: counts what arrives, by webhook-id, with the time of arrival.
  const arrivals = new Map<string, number>();
  let waiter: { count: number; resolve: () => void } | undefined;
  const receiver = createServer((incoming, response) => {
    incoming.resume();
    incoming.on('end', () => {
      arrivals.set(String(incoming.headers['webhook-id']), performance.now());
      response.writeHead(204).end();
      if (waiter && arrivals.size >= waiter.count) {
        const done = waiter;
        waiter = undefined;
        done.resolve();
      }
    });
  });
  receiver.keepAliveTimeout = 10_000;
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  const arrived = (count: number, timeoutMs: number) =>
    arrivals.size >= count
      ? Promise.resolve()
      : new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`only ${arrivals.size} of ${count} deliveries within ${timeoutMs} ms`)), timeoutMs);
          waiter = { count, resolve: () => (clearTimeout(timer), resolve()) };
        });

  const store = await recreatePostgresDatabase(DATABASE);
  let server: ChildProcess | undefined;
  const pool = new pg.Pool({ connectionString: store.kind === 'postgres' ? store.databaseUrl : '', max: 2 });
  try {
    const started = await startBenchService({ ...storeEnv(store), WEBHOOK_ALLOW_PRIVATE_TARGETS: 'on', WEBHOOK_ALLOW_HTTP: 'on' }, 'Webhooks bench');
    server = started.child;
    const { port, token, workspaceId } = started;
    const base = `http://127.0.0.1:${port}/v1`;
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const post = async (method: string, url: string, body: unknown) => {
      const response = await fetch(`${base}${url}`, { method, headers, body: JSON.stringify(body) });
      const text = await response.text();
      if (!response.ok) throw new Error(`${method} ${url}: ${response.status} ${text}`);
      return JSON.parse(text) as Record<string, unknown>;
    };
    const endpoint = await post('POST', '/webhook-endpoints', { url: receiverUrl, eventTypes: ['person.opted_out', 'person.opted_in', 'person.deleted'] });
    const secret = String(endpoint.secret);
    const person = await post('POST', '/people', { email: 'toggled@example.org' });

    // Latency, one write at a time.
    process.stderr.write(`latency: ${writes} writes, one at a time\n`);
    const fromResponse: number[] = [];
    const fromRequest: number[] = [];
    for (let index = 0; index < writes; index++) {
      const sent = performance.now();
      await post('PUT', `/people/${String(person.personId)}/opted-out`, { isOptedOut: index % 2 === 0 });
      const answered = performance.now();
      await arrived(index + 1, 10_000);
      const receipt = Math.max(...[...arrivals.values()].slice(-1));
      fromResponse.push(Math.max(0, receipt - answered));
      fromRequest.push(receipt - sent);
    }

    // Throughput: a backlog queued in one transaction, woken by its commit.
    process.stderr.write(`throughput: ${backlog} deliveries queued at once\n`);
    const before = arrivals.size;
    const at = new Date().toISOString();
    const client = await pool.connect();
    let queuedAt: number;
    try {
      await client.query('begin');
      await client.query(
        `insert into webhook_messages (workspace_id, message_id, event_type, occurred_at, payload)
         select $1, 'msg_bench_' || lpad(n::text, 8, '0'), 'person.deleted', $2::timestamptz, jsonb_build_object('type', 'person.deleted', 'timestamp', $2::text, 'data', jsonb_build_object('personId', 'per_' || n))
         from generate_series(1, $3) as n`,
        [workspaceId, at, backlog],
      );
      await client.query(
        `insert into webhook_deliveries (workspace_id, endpoint_id, message_id, state, next_attempt_at, created_at)
         select $1, $2, 'msg_bench_' || lpad(n::text, 8, '0'), 'PENDING', $3::timestamptz, $3::timestamptz from generate_series(1, $4) as n`,
        [workspaceId, endpoint.endpointId, at, backlog],
      );
      await client.query(`select pg_notify('webhook_deliveries', '')`);
      queuedAt = performance.now();
      await client.query('commit');
    } finally {
      client.release();
    }
    await arrived(before + backlog, 600_000);
    const serviceSeconds = (Math.max(...[...arrivals.values()]) - queuedAt) / 1000;
    const serviceRate = backlog / serviceSeconds;

    // Floor: the same signed POSTs from a bare client at the same concurrency.
    const floorAgent = new Agent({ connections: PER_ENDPOINT, keepAliveTimeout: 10_000 });
    const signer = new Webhook(secret);
    const floorStart = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: PER_ENDPOINT }, async () => {
        while (next < backlog) {
          const index = next++;
          const id = `msg_floor_${index}`;
          const body = JSON.stringify({ type: 'person.deleted', timestamp: at, data: { personId: `per_${index}` } });
          const now = new Date();
          const response = await request(receiverUrl, {
            method: 'POST',
            dispatcher: floorAgent,
            headers: { 'content-type': 'application/json', 'webhook-id': id, 'webhook-timestamp': String(Math.floor(now.getTime() / 1000)), 'webhook-signature': signer.sign(id, now, body) },
            body,
          });
          await response.body.dump();
        }
      }),
    );
    const floorRate = backlog / ((performance.now() - floorStart) / 1000);
    await floorAgent.close();

    const attempts = await pool.query<{ attempts: string; failed: string }>(
      `select count(*) as attempts, count(*) filter (where not succeeded) as failed from webhook_attempts where workspace_id = $1`,
      [workspaceId],
    );
    const figures = {
      commitToReceiptP50Ms: round(percentile(fromResponse, 0.5)),
      commitToReceiptP99Ms: round(percentile(fromResponse, 0.99)),
      writeToReceiptP50Ms: round(percentile(fromRequest, 0.5)),
      writeToReceiptP99Ms: round(percentile(fromRequest, 0.99)),
      deliveriesPerSecond: Math.round(serviceRate),
      floorDeliveriesPerSecond: Math.round(floorRate),
      attempts: Number(attempts.rows[0]!.attempts),
      failedAttempts: Number(attempts.rows[0]!.failed),
    };
    process.stdout.write(
      `\n${formatTable(
        ['figure', 'value', 'aim'],
        [
          ['commit → receipt p50 (ms)', figures.commitToReceiptP50Ms, '< 200'],
          ['commit → receipt p99 (ms)', figures.commitToReceiptP99Ms, ''],
          ['write sent → receipt p50 (ms)', figures.writeToReceiptP50Ms, ''],
          ['write sent → receipt p99 (ms)', figures.writeToReceiptP99Ms, ''],
          [`deliveries/s (${backlog} queued)`, figures.deliveriesPerSecond, '>= 500'],
          ['floor: bare signed POSTs/s', figures.floorDeliveriesPerSecond, ''],
          ['attempts recorded (failed)', `${figures.attempts} (${figures.failedAttempts})`, ''],
        ],
      )}\n\n`,
    );
    return { bench: 'webhooks', quick: options.quick, ratio: Math.round((serviceRate / floorRate) * 100) / 100, writes, backlog, ...figures };
  } finally {
    if (server) await stopProcess(server);
    await pool.end();
    receiver.closeAllConnections();
    receiver.close();
    await dropPostgresDatabase(DATABASE);
  }
}
