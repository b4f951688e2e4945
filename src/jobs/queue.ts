import type { Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import type { DB } from '../db/schema.js';
import { newId } from '../ids.js';

/**
 * The workspace id of work that belongs to no workspace (housekeeping, a schedule that fans out
 * over workspaces). Generated ids never start with '_', so it cannot meet a real workspace.
 */
export const SYSTEM_WORKSPACE_ID = '_system';

/**
 * The workspace a sweeping handler (one that looks for due rows rather than being handed one)
 * limits its queries to: the job's own, or undefined (every workspace) for a SYSTEM_WORKSPACE_ID
 * job. Production's schedules enqueue system jobs; a drain scoped to one workspace
 * (JobRunner.runDue({ workspaceId }): tests, the demo seed) enqueues its schedules' jobs in that
 * workspace, and they then touch nothing of any other.
 */
export function sweepScope(job: { workspaceId: string }): string | undefined {
  return job.workspaceId === SYSTEM_WORKSPACE_ID ? undefined : job.workspaceId;
}

export const DEFAULT_MAX_ATTEMPTS = 5;
export const DEFAULT_BACKOFF_SECONDS = 30;
/** Retries back off exponentially from the job's backoff, but never wait longer than this. */
export const MAX_BACKOFF_SECONDS = 6 * 60 * 60;

/** One job as its handler sees it. */
export interface Job<Payload = unknown> {
  jobId: string;
  queue: string;
  workspaceId: string;
  payload: Payload;
  singletonKey: string | null;
  /** 1 on the first run; a retry, or a run after another worker's lease expired, counts up. */
  attempt: number;
  maxAttempts: number;
  /**
   * Aborted when the service shuts down. A long handler should stop and throw: the job is then
   * put back in the queue without spending an attempt, and another instance picks it up.
   */
  signal: AbortSignal;
}

/**
 * The code that does one queue's work.
 *
 * A handler MUST be idempotent: the same job can run more than once. The runner records the
 * outcome only after `run` returns, so a process that dies (or stalls past its lease) after the
 * side effects but before that record runs the job again elsewhere; a retry re-runs work that
 * failed half-way. Write handlers as "make it so" (upserts, deletes that tolerate nothing left,
 * state checks before transitions), or keep their writes in one transaction with a check of
 * whether the work is already done.
 *
 * Handlers run outside any transaction of the runner's, on the service's database handle, so they
 * may open their own transactions (on the embedded store too: the runner holds no connection
 * while a handler runs).
 */
export interface JobHandler<Payload = unknown> {
  queue: string;
  /** Does the work; what it returns (JSON) is kept as the job's result. Throwing fails the attempt. */
  run(job: Job<Payload>): Promise<unknown>;
}

/** Recurring work: one job per period, enqueued once however many instances run the schedule. */
export interface Schedule {
  /** Names the schedule in singleton keys: `name@slot-start`. */
  name: string;
  queue: string;
  /** Period; slots are aligned to the epoch, so every instance computes the same ones. */
  everySeconds: number;
  payload?: unknown;
  maxAttempts?: number;
  backoffSeconds?: number;
}

export interface EnqueueOptions<Payload = unknown> {
  queue: string;
  /** The workspace whose work this is, or SYSTEM_WORKSPACE_ID. */
  workspaceId: string;
  payload?: Payload;
  /** Not before this time (default: the clock's now). */
  runAfter?: Date;
  /**
   * At most one kept job per (workspace, queue, key): a second enqueue with the same key returns
   * the first job. Finished jobs are kept (and keep their key) until the prune job removes them.
   */
  singletonKey?: string;
  maxAttempts?: number;
  /** First retry's delay; each further retry doubles it (up to MAX_BACKOFF_SECONDS). */
  backoffSeconds?: number;
}

export interface Enqueued {
  jobId: string;
  /** False when a job with the same singleton key already existed; jobId is then that job's. */
  created: boolean;
}

/**
 * Adds a job. Pass a transaction to enqueue atomically with the writes that call for the work:
 * if the transaction rolls back, the job was never there.
 */
export async function enqueueJob<Payload>(db: Kysely<DB>, clock: Clock, options: EnqueueOptions<Payload>): Promise<Enqueued> {
  const payload = JSON.stringify(options.payload ?? {});
  // PostgreSQL refuses \u0000 in jsonb: say so here rather than with a driver error.
  if (payload.includes('\\u0000')) throw new Error(`A job payload for queue ${options.queue} contains the NUL character`);
  const maxAttempts = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  const backoffSeconds = options.backoffSeconds ?? DEFAULT_BACKOFF_SECONDS;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1) throw new Error('maxAttempts must be a positive integer');
  if (!Number.isInteger(backoffSeconds) || backoffSeconds < 0) throw new Error('backoffSeconds must be a non-negative integer');
  const now = clock.now().toISOString();
  const jobId = newId('job');
  const inserted = await db
    .insertInto('jobs')
    .values({
      workspace_id: options.workspaceId,
      job_id: jobId,
      queue: options.queue,
      payload,
      state: 'queued',
      singleton_key: options.singletonKey ?? null,
      run_after: (options.runAfter ?? clock.now()).toISOString(),
      max_attempts: maxAttempts,
      backoff_seconds: backoffSeconds,
      created_at: now,
      updated_at: now,
    })
    .onConflict((conflict) => conflict.columns(['workspace_id', 'queue', 'singleton_key']).where('singleton_key', 'is not', null).doNothing())
    .returning('job_id')
    .executeTakeFirst();
  if (inserted) return { jobId: inserted.job_id, created: true };
  const existing = await db
    .selectFrom('jobs')
    .select('job_id')
    .where('workspace_id', '=', options.workspaceId)
    .where('queue', '=', options.queue)
    .where('singleton_key', '=', options.singletonKey ?? null)
    .executeTakeFirst();
  // Only a concurrent prune between the two statements gets here; the work is then done already.
  if (!existing) throw new Error(`Job ${options.queue}/${options.singletonKey} conflicted but is gone`);
  return { jobId: existing.job_id, created: false };
}

/** The delay before the retry that follows failed attempt `attempt` (1-based). */
export function backoffDelaySeconds(backoffSeconds: number, attempt: number): number {
  return Math.min(MAX_BACKOFF_SECONDS, backoffSeconds * 2 ** Math.max(0, attempt - 1));
}
