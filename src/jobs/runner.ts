import type { Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import type { DB } from '../db/schema.js';
import {
  type ClaimedJob,
  claimJob,
  completeJob,
  failExhaustedLeases,
  failJob,
  releaseJob,
  renewLease,
} from './queries.js';
import { enqueueJob, type JobHandler, type Schedule, SYSTEM_WORKSPACE_ID } from './queue.js';

/** The part of pino (Fastify's logger) the runner writes to. */
export interface JobLogger {
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

const silent: JobLogger = { warn: () => {}, error: () => {} };

export interface JobRunnerOptions {
  db: Kysely<DB>;
  clock: Clock;
  log?: JobLogger;
  /** Jobs this runner runs at once (default 4). */
  concurrency?: number;
  /**
   * How long a claim holds a job (default 60 s). The runner renews it every third of that while
   * the handler runs, so it lapses only when the process dies or stalls; then another runner
   * takes the job over.
   */
  leaseSeconds?: number;
  /** A drain stops after this many runs, so handlers that keep enqueuing due work cannot spin it forever. */
  maxRunsPerDrain?: number;
  /** How long stop() waits for running handlers before giving up on them (their leases lapse). */
  stopTimeoutMs?: number;
}

export type JobOutcome = 'completed' | 'retrying' | 'failed' | 'lease-lost' | 'released';

export interface JobRun {
  jobId: string;
  queue: string;
  workspaceId: string;
  attempt: number;
  outcome: JobOutcome;
  error?: string;
}

export interface DrainOptions {
  /**
   * Only this workspace's work: the current slot of every schedule is enqueued as a job of this
   * workspace (so its sweeping handlers touch only this workspace's rows, see sweepScope), and only
   * this workspace's jobs are claimed. For tests and the demo seed, on a database that other
   * tenants' data shares; production's poller drains every workspace.
   */
  workspaceId?: string;
}

/** What one drain did: `ran` counts handler runs; `failed` also counts jobs failed for an expired lease. */
export interface DrainReport {
  ran: number;
  completed: number;
  retrying: number;
  failed: number;
  jobs: JobRun[];
}

const LAST_ERROR_LENGTH_MAX = 4000;

function describeError(thrown: unknown): string {
  const text = thrown instanceof Error ? (thrown.name && thrown.name !== 'Error' ? `${thrown.name}: ${thrown.message}` : thrown.message) : String(thrown);
  // PostgreSQL refuses NUL in text; a message is for people, so drop it.
  return text.replaceAll('\u0000', '').slice(0, LAST_ERROR_LENGTH_MAX);
}

/**
 * Runs the jobs of the queues it has handlers for, on the shared database: any number of runners
 * (in one process or many) may drain the same table, and each job runs once per attempt (see
 * claimJob). Drains of one runner never overlap: a second waits for the first, so `runDue()`
 * returns only when the work due at its call has been done, even if the poller was mid-drain.
 */
export class JobRunner {
  private readonly db: Kysely<DB>;
  private readonly clock: Clock;
  private readonly log: JobLogger;
  private readonly concurrency: number;
  private readonly leaseSeconds: number;
  private readonly maxRunsPerDrain: number;
  private readonly stopTimeoutMs: number;
  private readonly handlers = new Map<string, JobHandler>();
  private readonly schedules = new Map<string, Schedule>();
  /** The last slot this process enqueued per schedule, to skip the insert until the next slot. */
  private readonly enqueuedSlots = new Map<string, string>();
  private readonly shutdown = new AbortController();
  private tail: Promise<unknown> = Promise.resolve();
  private pollTimer: NodeJS.Timeout | undefined;

  constructor(options: JobRunnerOptions) {
    this.db = options.db;
    this.clock = options.clock;
    this.log = options.log ?? silent;
    this.concurrency = options.concurrency ?? 4;
    this.leaseSeconds = options.leaseSeconds ?? 60;
    this.maxRunsPerDrain = options.maxRunsPerDrain ?? 10_000;
    this.stopTimeoutMs = options.stopTimeoutMs ?? 10_000;
    if (!Number.isInteger(this.concurrency) || this.concurrency < 1) throw new Error('concurrency must be a positive integer');
    if (!(this.leaseSeconds > 0)) throw new Error('leaseSeconds must be positive');
  }

  /** Adds the handler of a queue; this runner then claims that queue's jobs. */
  register<Payload>(handler: JobHandler<Payload>): void {
    if (this.handlers.has(handler.queue)) throw new Error(`Queue ${handler.queue} already has a handler`);
    this.handlers.set(handler.queue, handler as JobHandler);
  }

  /** Adds recurring work; its queue must have a handler already. */
  schedule(schedule: Schedule): void {
    if (!this.handlers.has(schedule.queue)) throw new Error(`Schedule ${schedule.name}: queue ${schedule.queue} has no handler`);
    if (this.schedules.has(schedule.name)) throw new Error(`Schedule ${schedule.name} already exists`);
    if (!Number.isInteger(schedule.everySeconds) || schedule.everySeconds < 1) throw new Error(`Schedule ${schedule.name}: everySeconds must be a positive integer`);
    this.schedules.set(schedule.name, schedule);
  }

  get queues(): string[] {
    return [...this.handlers.keys()];
  }

  /**
   * Enqueues the current slot of every schedule, then runs every due job until none is left: of
   * every workspace, or with `workspaceId` of that workspace alone (see DrainOptions).
   */
  runDue(options: DrainOptions = {}): Promise<DrainReport> {
    const drain = this.tail.then(() => this.drain(options.workspaceId));
    this.tail = drain.catch(() => undefined);
    return drain;
  }

  /** Drains every `pollSeconds` (the first time after one period) until stop(). */
  start(pollSeconds: number): void {
    if (this.pollTimer || this.shutdown.signal.aborted) return;
    const poll = async () => {
      try {
        await this.runDue();
      } catch (error) {
        this.log.error({ err: error }, 'background jobs: a drain failed; retrying at the next poll');
      }
      if (!this.shutdown.signal.aborted) next();
    };
    const next = () => {
      // Fire and forget: a poll logs its own failure and schedules the next one.
      this.pollTimer = setTimeout(() => void poll(), pollSeconds * 1000);
      // The poller alone never keeps a process alive (a CLI run, a test).
      this.pollTimer.unref();
    };
    next();
  }

  /**
   * Stops polling and claiming, tells running handlers to stop (Job.signal), and waits for them,
   * at most stopTimeoutMs. Afterwards runDue() does nothing. Call it before the database closes.
   */
  async stop(): Promise<void> {
    if (!this.shutdown.signal.aborted) this.shutdown.abort();
    clearTimeout(this.pollTimer);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), this.stopTimeoutMs);
    });
    const ended = await Promise.race([this.tail.then(() => 'done' as const), timedOut]);
    clearTimeout(timer);
    if (ended === 'timeout') this.log.warn({}, 'background jobs: handlers still running at shutdown; their leases will lapse and another instance will retry them');
  }

  private async drain(workspaceId: string | undefined): Promise<DrainReport> {
    const report: DrainReport = { ran: 0, completed: 0, retrying: 0, failed: 0, jobs: [] };
    if (this.shutdown.signal.aborted) return report;
    const queues = this.queues;
    await this.enqueueScheduled(workspaceId);
    for (const expired of await failExhaustedLeases(this.db, queues, this.clock.now(), workspaceId)) {
      this.log.warn({ jobId: expired.jobId, queue: expired.queue }, `background job failed: ${expired.lastError}`);
      report.failed++;
      report.jobs.push({ jobId: expired.jobId, queue: expired.queue, workspaceId: expired.workspaceId, attempt: expired.attempt, outcome: 'failed', error: expired.lastError });
    }
    const runs: JobRun[] = [];
    let claimed = 0;
    const worker = async () => {
      while (!this.shutdown.signal.aborted && claimed < this.maxRunsPerDrain) {
        const job = await claimJob(this.db, { queues, now: this.clock.now(), leaseSeconds: this.leaseSeconds, workspaceId });
        if (!job) return;
        if (this.shutdown.signal.aborted) {
          // Stopped while this claim was under way (it may even have taken a job another worker
          // just put back): the job goes back at once, unrun, for the next instance or start.
          // It never ran, so the drain's report leaves it out.
          await releaseJob(this.db, job, this.clock.now());
          return;
        }
        claimed++;
        runs.push(await this.execute(job));
      }
    };
    // Every worker finishes its job before the drain settles, even when another one's query fails.
    const settled = await Promise.allSettled(Array.from({ length: this.concurrency }, worker));
    for (const run of runs) {
      report.ran++;
      if (run.outcome === 'completed') report.completed++;
      else if (run.outcome === 'retrying') report.retrying++;
      else if (run.outcome === 'failed') report.failed++;
      report.jobs.push(run);
    }
    const failure = settled.find((result) => result.status === 'rejected');
    if (failure) throw failure.reason;
    if (claimed >= this.maxRunsPerDrain) this.log.warn({ claimed }, 'background jobs: drain stopped at its run limit; the rest runs at the next one');
    return report;
  }

  /**
   * Enqueues the current slot of every schedule: as system jobs, or as jobs of `workspaceId`. The
   * singleton key is per workspace, so a slot runs once system-wide and once per workspace that
   * asked for it. Scoped slots are not remembered (the insert of one already there does nothing):
   * a service with test helpers may be asked for any number of workspaces.
   */
  private async enqueueScheduled(workspaceId: string | undefined): Promise<void> {
    const now = this.clock.now().getTime();
    for (const schedule of this.schedules.values()) {
      const periodMs = schedule.everySeconds * 1000;
      const slot = new Date(Math.floor(now / periodMs) * periodMs);
      const key = `${schedule.name}@${slot.toISOString()}`;
      if (workspaceId === undefined && this.enqueuedSlots.get(schedule.name) === key) continue;
      await enqueueJob(this.db, this.clock, {
        queue: schedule.queue,
        workspaceId: workspaceId ?? SYSTEM_WORKSPACE_ID,
        payload: schedule.payload,
        runAfter: slot,
        singletonKey: key,
        maxAttempts: schedule.maxAttempts,
        backoffSeconds: schedule.backoffSeconds,
      });
      if (workspaceId === undefined) this.enqueuedSlots.set(schedule.name, key);
    }
  }

  private async execute(job: ClaimedJob): Promise<JobRun> {
    const handler = this.handlers.get(job.queue);
    // Claims name only registered queues, and handlers are never removed.
    if (!handler) throw new Error(`No handler for queue ${job.queue}`);
    const run = { jobId: job.jobId, queue: job.queue, workspaceId: job.workspaceId, attempt: job.attempt };
    const heartbeat = setInterval(() => {
      renewLease(this.db, job, this.clock.now(), this.leaseSeconds).then(
        (held) => {
          if (!held) this.log.warn({ jobId: job.jobId, queue: job.queue }, 'background job: lease lost while running; another runner took it over');
        },
        (error: unknown) => this.log.error({ err: error, jobId: job.jobId }, 'background job: lease renewal failed'),
      );
    }, (this.leaseSeconds * 1000) / 3);
    heartbeat.unref();
    try {
      let resultJson: string;
      try {
        const result = await handler.run({
          jobId: job.jobId,
          queue: job.queue,
          workspaceId: job.workspaceId,
          payload: job.payload,
          singletonKey: job.singletonKey,
          attempt: job.attempt,
          maxAttempts: job.maxAttempts,
          signal: this.shutdown.signal,
        });
        resultJson = JSON.stringify(result ?? null) ?? 'null';
        if (resultJson.includes('\\u0000')) throw new Error('The job result contains the NUL character');
      } catch (thrown) {
        const error = describeError(thrown);
        if (this.shutdown.signal.aborted) {
          const released = await releaseJob(this.db, job, this.clock.now());
          return { ...run, outcome: released ? 'released' : 'lease-lost', error };
        }
        const outcome = await failJob(this.db, job, error, this.clock.now());
        this.log.warn({ err: thrown, jobId: job.jobId, queue: job.queue, attempt: job.attempt, outcome }, 'background job attempt failed');
        return { ...run, outcome, error };
      }
      const held = await completeJob(this.db, job, resultJson, this.clock.now());
      if (!held) this.log.warn({ jobId: job.jobId, queue: job.queue }, 'background job finished after its lease was lost; another runner took it over');
      return { ...run, outcome: held ? 'completed' : 'lease-lost' };
    } finally {
      clearInterval(heartbeat);
    }
  }
}
