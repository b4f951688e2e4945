import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Clock } from '../clock.js';
import type { ConnectionState } from '../db/database.js';
import type { DB } from '../db/schema.js';
import { queueFigures } from '../jobs/queries.js';
import { ApiError, sendError } from './errors.js';

/** Every metric of the service's own starts with this; the process's (Node's) keep their usual names. */
export const METRIC_PREFIX = 'recruit_ops_';

/** The route label of a request that matched no route: never the raw URL, whose ids would explode the series. */
export const UNMATCHED_ROUTE = 'unmatched';

const JOB_STATES = ['queued', 'running', 'failed'] as const;

let processRegistry: Registry | undefined;

/**
 * The process's figures (CPU, memory, event loop lag, garbage collection, handles), collected
 * once per process into a registry of their own: collecting them again into every service's
 * registry would start another event-loop monitor and GC observer for each service a process
 * (a test run) builds.
 */
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

export interface ServiceMetricsOptions {
  db: Kysely<DB>;
  clock: Clock;
  connections: ConnectionState;
  /** The queues this instance has handlers for: each is reported, with zeros when the table holds none of its jobs. */
  queues: () => readonly string[];
  /** Told when the job figures could not be read at a scrape (they are then left out of it). */
  onCollectError: (error: unknown) => void;
}

/**
 * The metrics of one service instance, in a registry of its own (never prom-client's global
 * one), so several services in one process (tests, two instances on one database) never clash.
 * Counters count what this instance did; the job figures are read from the shared job table at
 * each scrape, so every instance reports the same ones.
 */
export class ServiceMetrics {
  readonly registry = new Registry();
  readonly requestDuration: Histogram<'method' | 'route' | 'status_code'>;
  readonly importRows: Counter<'outcome'>;
  readonly rateLimitRefusals: Counter<'reason'>;
  readonly webhookAttempts: Counter<'outcome'>;
  readonly mailAttempts: Counter<'outcome'>;
  private readonly stopListening: () => void;
  private readonly jobGauges: { jobs: Gauge<'queue' | 'state'>; oldest: Gauge<'queue'> };
  /** The job figures of the scrape under way: both job gauges' collect() share one query. */
  private reading: Promise<void> | undefined;

  constructor(private readonly options: ServiceMetricsOptions) {
    const registers = [this.registry];
    this.requestDuration = new Histogram({
      name: `${METRIC_PREFIX}http_request_duration_seconds`,
      help: 'Time to answer HTTP requests, by method, route template and status code; its _count is the number of requests.',
      labelNames: ['method', 'route', 'status_code'],
      registers,
    });
    this.importRows = new Counter({
      name: `${METRIC_PREFIX}import_rows_total`,
      help: 'CSV import rows this instance committed: imported (a person upserted) or failed (a row refused).',
      labelNames: ['outcome'],
      registers,
    });
    this.rateLimitRefusals = new Counter({
      name: `${METRIC_PREFIX}rate_limit_refusals_total`,
      help: "Requests refused with 429, by the budget spent: token (a token's), address (a client address's, on bad or missing tokens), signup (an address's public signup submissions).",
      labelNames: ['reason'],
      registers,
    });
    this.webhookAttempts = new Counter({
      name: `${METRIC_PREFIX}webhook_attempts_total`,
      help: 'Webhook delivery attempts this instance made and recorded: succeeded (a 2xx) or failed (anything else, no answer, a refused address).',
      labelNames: ['outcome'],
      registers,
    });
    this.mailAttempts = new Counter({
      name: `${METRIC_PREFIX}mail_attempts_total`,
      help: 'Messages this instance tried to send and recorded: sent (SMTP accepted), retrying (a temporary failure), failed (refused for good or retries spent), not_sent (never handed to SMTP: the person opted out, was deleted or became unreachable meanwhile).',
      labelNames: ['outcome'],
      registers,
    });
    this.stopListening = this.connectionMetrics(options.connections);
    this.jobGauges = this.jobMetrics();
  }

  /** The content type of what scrape() returns (Prometheus text format 0.0.4). */
  get contentType(): string {
    return this.registry.contentType;
  }

  /** Everything, in the Prometheus text format: this service's metrics and the process's. */
  scrape(): Promise<string> {
    return Registry.merge([processMetrics(), this.registry]).metrics();
  }

  /** Starts the process's metrics now rather than at the first scrape (their GC and event-loop figures begin then). */
  startProcessMetrics(): void {
    processMetrics();
  }

  /** Records one answered request under its route template. */
  observeRequest(request: FastifyRequest, reply: FastifyReply): void {
    this.requestDuration.observe(
      { method: request.method, route: request.routeOptions.url ?? UNMATCHED_ROUTE, status_code: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
  }

  countImportRows(rows: { imported: number; failed: number }): void {
    if (rows.imported > 0) this.importRows.inc({ outcome: 'imported' }, rows.imported);
    if (rows.failed > 0) this.importRows.inc({ outcome: 'failed' }, rows.failed);
  }

  countWebhookAttempts(attempts: { succeeded: number; failed: number }): void {
    if (attempts.succeeded > 0) this.webhookAttempts.inc({ outcome: 'succeeded' }, attempts.succeeded);
    if (attempts.failed > 0) this.webhookAttempts.inc({ outcome: 'failed' }, attempts.failed);
  }

  countMailAttempts(attempts: Partial<Record<'sent' | 'retrying' | 'failed' | 'not_sent', number>>): void {
    for (const [outcome, count] of Object.entries(attempts)) if (count > 0) this.mailAttempts.inc({ outcome }, count);
  }

  countRateLimitRefusal(reason: string): void {
    this.rateLimitRefusals.inc({ reason });
  }

  /** Stops listening to the database's queue (the database may outlive this service). */
  close(): void {
    this.stopListening();
  }

  private connectionMetrics(connections: ConnectionState): () => void {
    const registers = [this.registry];
    if (connections.kind === 'pool') {
      const { pool, max } = connections;
      new Gauge({
        name: `${METRIC_PREFIX}db_pool_connections`,
        help: 'PostgreSQL connections the pool holds open, idle or in use.',
        registers,
        collect() {
          this.set(pool.totalCount);
        },
      });
      new Gauge({
        name: `${METRIC_PREFIX}db_pool_idle_connections`,
        help: 'PostgreSQL connections of the pool open and idle.',
        registers,
        collect() {
          this.set(pool.idleCount);
        },
      });
      new Gauge({
        name: `${METRIC_PREFIX}db_pool_waiting_requests`,
        help: 'Queries and transactions waiting for a connection of the pool (all of them are in use).',
        registers,
        collect() {
          this.set(pool.waitingCount);
        },
      });
      new Gauge({ name: `${METRIC_PREFIX}db_pool_max_connections`, help: 'The most connections the pool opens.', registers }).set(max);
      return () => {};
    }
    const { queue } = connections;
    new Gauge({
      name: `${METRIC_PREFIX}db_queue_depth`,
      help: "Queries and transactions waiting for the embedded store's single connection (the one holding it not counted).",
      registers,
      collect() {
        this.set(queue.waiting);
      },
    });
    new Gauge({
      name: `${METRIC_PREFIX}db_queue_oldest_wait_seconds`,
      help: "How long the longest-waiting query or transaction has waited so far for the embedded store's connection (0 when none waits).",
      registers,
      collect() {
        this.set(queue.oldestWaitSeconds());
      },
    });
    const waits = new Histogram({
      name: `${METRIC_PREFIX}db_queue_wait_seconds`,
      help: "How long each query or transaction waited for the embedded store's single connection.",
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    });
    return queue.onWait((seconds) => waits.observe(seconds));
  }

  private jobMetrics() {
    const registers = [this.registry];
    const read = () => {
      this.reading ??= this.readJobFigures().finally(() => {
        this.reading = undefined;
      });
      return this.reading;
    };
    const jobs = new Gauge({
      name: `${METRIC_PREFIX}jobs`,
      help: 'Background jobs in the job table (every instance and workspace), by queue (kind) and state: queued (due or not yet), running, failed (kept 30 days).',
      labelNames: ['queue', 'state'],
      registers,
      collect: read,
    });
    const oldest = new Gauge({
      name: `${METRIC_PREFIX}jobs_oldest_queued_age_seconds`,
      help: 'By queue: how long the longest-waiting due job has waited since it became due (0 when none waits).',
      labelNames: ['queue'],
      registers,
      collect: read,
    });
    return { jobs, oldest };
  }

  private async readJobFigures(): Promise<void> {
    const { jobs, oldest } = this.jobGauges;
    const now = this.options.clock.now();
    let figures;
    try {
      figures = await queueFigures(this.options.db, now);
    } catch (error) {
      // A scrape still answers (the process's and the request figures are worth having while
      // the database is away); the job figures are left out rather than shown stale.
      jobs.reset();
      oldest.reset();
      this.options.onCollectError(error);
      return;
    }
    jobs.reset();
    oldest.reset();
    const byQueue = new Map(figures.map((figure) => [figure.queue, figure]));
    for (const queue of this.options.queues()) {
      if (!byQueue.has(queue)) byQueue.set(queue, { queue, queued: 0, running: 0, failed: 0, oldestDueAt: null });
    }
    for (const figure of byQueue.values()) {
      for (const state of JOB_STATES) jobs.set({ queue: figure.queue, state }, figure[state]);
      const age = figure.oldestDueAt === null ? 0 : Math.max(0, (now.getTime() - new Date(figure.oldestDueAt).getTime()) / 1000);
      oldest.set({ queue: figure.queue }, age);
    }
  }
}

const digest = (value: string) => createHash('sha256').update(value).digest();

/** Whether the Authorization header carries `Bearer <token>`, compared in constant time (over fixed-length digests). */
export function presentsMetricsToken(authorization: string | undefined, expectedDigest: Buffer): boolean {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  const given = digest(match?.[1] ?? '');
  return timingSafeEqual(given, expectedDigest) && match !== null;
}

/**
 * GET /metrics, for the operator's scraper: closed to anyone without the metrics token (401 with
 * the catalogue's plain body, never the figures). Public to the API's own guard (no API token, no
 * rate-limit budget drawn) and hidden from the API's OpenAPI document, like /healthz and /readyz.
 */
export function installMetricsRoute(app: FastifyInstance, metrics: ServiceMetrics, token: string): void {
  const expected = digest(token);
  metrics.startProcessMetrics();
  app.get('/metrics', { schema: { hide: true }, config: { public: true } }, async (request, reply) => {
    if (!presentsMetricsToken(request.headers.authorization, expected)) return sendError(reply, new ApiError('UNAUTHORIZED'));
    const text = await metrics.scrape();
    return reply.header('Cache-Control', 'no-store').type(metrics.contentType).send(text);
  });
}
