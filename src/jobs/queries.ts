import { randomUUID } from 'node:crypto';
import { type Kysely, type RawBuilder, sql } from 'kysely';
import { plusSeconds } from '../clock.js';
import type { DB } from '../db/schema.js';
import { backoffDelaySeconds } from './queue.js';

/** A job a runner holds: the lease token proves it still does when the outcome is recorded. */
export interface ClaimedJob {
  workspaceId: string;
  jobId: string;
  queue: string;
  payload: unknown;
  singletonKey: string | null;
  attempt: number;
  maxAttempts: number;
  backoffSeconds: number;
  leaseToken: string;
}

interface ClaimedRow {
  workspace_id: string;
  job_id: string;
  queue: string;
  payload: unknown;
  singleton_key: string | null;
  attempts: number;
  max_attempts: number;
  backoff_seconds: number;
  lease_token: string;
}

export interface ClaimOptions {
  /** Only these queues: a runner never takes work it has no handler for (rolling deploys). */
  queues: readonly string[];
  now: Date;
  leaseSeconds: number;
  /** Only this workspace's jobs (a drain scoped to one workspace); every workspace's without it. */
  workspaceId?: string;
}

/** `and workspace_id = …` when a workspace is given, else nothing. */
function inWorkspace(workspaceId: string | undefined) {
  return workspaceId === undefined ? sql`` : sql`and workspace_id = ${workspaceId}`;
}

/**
 * Takes the next due job of `queues` and marks it running under a new lease, in one statement
 * (one short transaction): FOR UPDATE SKIP LOCKED passes over rows another runner is claiming,
 * and the row lock makes PostgreSQL re-check the state of a row another claim has just changed,
 * so two runners never hold the same job. A running job whose lease expired (its worker died
 * or stalled) is due again while it has attempts left.
 */
export async function claimJob(db: Kysely<DB>, options: ClaimOptions): Promise<ClaimedJob | undefined> {
  if (options.queues.length === 0) return undefined;
  const now = options.now.toISOString();
  const token = randomUUID();
  const { rows } = await sql<ClaimedRow>`
    with next as (
      select workspace_id, job_id from jobs
      where queue in (${sql.join(options.queues)}) ${inWorkspace(options.workspaceId)}
        and ((state = 'queued' and run_after <= ${now})
          or (state = 'running' and locked_until <= ${now} and attempts < max_attempts))
      order by run_after, job_id
      limit 1
      for update skip locked
    )
    update jobs set state = 'running', attempts = jobs.attempts + 1, lease_token = ${token},
      locked_until = ${plusSeconds(options.now, options.leaseSeconds)}, started_at = ${now}, updated_at = ${now}
    from next
    where jobs.workspace_id = next.workspace_id and jobs.job_id = next.job_id
    returning jobs.workspace_id, jobs.job_id, jobs.queue, jobs.payload, jobs.singleton_key, jobs.attempts,
      jobs.max_attempts, jobs.backoff_seconds, jobs.lease_token
  `.execute(db);
  const row = rows[0];
  if (!row) return undefined;
  return {
    workspaceId: row.workspace_id,
    jobId: row.job_id,
    queue: row.queue,
    payload: row.payload,
    singletonKey: row.singleton_key,
    attempt: row.attempts,
    maxAttempts: row.max_attempts,
    backoffSeconds: row.backoff_seconds,
    leaseToken: row.lease_token,
  };
}

export interface ExpiredJob {
  workspaceId: string;
  jobId: string;
  queue: string;
  attempt: number;
  lastError: string;
}

/** Fails the running jobs of `queues` (of one workspace, when given) whose lease expired on their last attempt. */
export async function failExhaustedLeases(db: Kysely<DB>, queues: readonly string[], now: Date, workspaceId?: string): Promise<ExpiredJob[]> {
  if (queues.length === 0) return [];
  const at = now.toISOString();
  const { rows } = await sql<{ workspace_id: string; job_id: string; queue: string; attempts: number; last_error: string }>`
    with expired as (
      select workspace_id, job_id from jobs
      where queue in (${sql.join(queues)}) ${inWorkspace(workspaceId)} and state = 'running' and locked_until <= ${at} and attempts >= max_attempts
      for update skip locked
    )
    update jobs set state = 'failed', lease_token = null, locked_until = null, finished_at = ${at}, updated_at = ${at},
      last_error = 'the lease of attempt ' || jobs.attempts || ' expired (its worker stopped or stalled); no attempts left'
    from expired
    where jobs.workspace_id = expired.workspace_id and jobs.job_id = expired.job_id
    returning jobs.workspace_id, jobs.job_id, jobs.queue, jobs.attempts, jobs.last_error
  `.execute(db);
  return rows.map((row) => ({ workspaceId: row.workspace_id, jobId: row.job_id, queue: row.queue, attempt: row.attempts, lastError: row.last_error }));
}

/** Narrows an update to the job while `job`'s lease holds it. */
function heldBy(job: ClaimedJob) {
  return sql<boolean>`workspace_id = ${job.workspaceId} and job_id = ${job.jobId} and lease_token = ${job.leaseToken}`;
}

async function updateHeld(db: Kysely<DB>, job: ClaimedJob, assignments: RawBuilder<unknown>): Promise<boolean> {
  const result = await sql`update jobs set ${assignments} where ${heldBy(job)}`.execute(db);
  return (result.numAffectedRows ?? 0n) > 0n;
}

/** Records success; false when the lease was lost (another runner took the job over). */
export function completeJob(db: Kysely<DB>, job: ClaimedJob, resultJson: string, now: Date): Promise<boolean> {
  const at = now.toISOString();
  return updateHeld(
    db,
    job,
    sql`state = 'completed', result = ${resultJson}::jsonb, lease_token = null, locked_until = null, finished_at = ${at}, updated_at = ${at}`,
  );
}

export type FailureOutcome = 'retrying' | 'failed' | 'lease-lost';

/** Records a failed attempt: queued again after the backoff, or failed for good after the last attempt. */
export async function failJob(db: Kysely<DB>, job: ClaimedJob, message: string, now: Date): Promise<FailureOutcome> {
  const at = now.toISOString();
  if (job.attempt >= job.maxAttempts) {
    const held = await updateHeld(
      db,
      job,
      sql`state = 'failed', last_error = ${message}, lease_token = null, locked_until = null, finished_at = ${at}, updated_at = ${at}`,
    );
    return held ? 'failed' : 'lease-lost';
  }
  const runAfter = new Date(now.getTime() + backoffDelaySeconds(job.backoffSeconds, job.attempt) * 1000).toISOString();
  const held = await updateHeld(
    db,
    job,
    sql`state = 'queued', last_error = ${message}, run_after = ${runAfter}, lease_token = null, locked_until = null, updated_at = ${at}`,
  );
  return held ? 'retrying' : 'lease-lost';
}

/** Puts a job back, due now, without spending the attempt (the runner is shutting down). */
export function releaseJob(db: Kysely<DB>, job: ClaimedJob, now: Date): Promise<boolean> {
  const at = now.toISOString();
  return updateHeld(
    db,
    job,
    sql`state = 'queued', attempts = attempts - 1, run_after = ${at}, lease_token = null, locked_until = null, updated_at = ${at}`,
  );
}

/** Extends the lease of a job still running; false when it was lost. */
export function renewLease(db: Kysely<DB>, job: ClaimedJob, now: Date, leaseSeconds: number): Promise<boolean> {
  return updateHeld(db, job, sql`locked_until = ${plusSeconds(now, leaseSeconds)}, updated_at = ${now.toISOString()}`);
}

/**
 * Deletes up to `limit` jobs of `state` that finished before `before` (of one workspace, when
 * given); returns how many. Bounded so that one statement stays short on the embedded store, which
 * runs on the event loop.
 */
export async function deleteFinishedJobs(db: Kysely<DB>, state: 'completed' | 'failed', before: Date, limit: number, workspaceId?: string): Promise<number> {
  const result = await sql`
    delete from jobs where (workspace_id, job_id) in (
      select workspace_id, job_id from jobs where state = ${state} and finished_at < ${before.toISOString()} ${inWorkspace(workspaceId)} limit ${limit}
    )
  `.execute(db);
  return Number(result.numAffectedRows ?? 0n);
}

/** What the job table holds of one queue, for the metrics. */
export interface QueueFigures {
  queue: string;
  /** Jobs waiting to run, due or not yet (a retry's backoff, a later run_after). */
  queued: number;
  running: number;
  /** Failed for good, kept until the prune job removes them (FAILED_RETENTION_DAYS). */
  failed: number;
  /** When the longest-waiting due job became due; null when no queued job is due. */
  oldestDueAt: string | null;
}

/**
 * Every queue's figures in one statement over the job table alone, of every workspace: a scrape
 * of the metrics costs one query however many queues and workspaces there are.
 */
export async function queueFigures(db: Kysely<DB>, now: Date): Promise<QueueFigures[]> {
  const { rows } = await sql<{ queue: string; queued: number; running: number; failed: number; oldest_due_at: string | null }>`
    select queue,
      count(*) filter (where state = 'queued')::int as queued,
      count(*) filter (where state = 'running')::int as running,
      count(*) filter (where state = 'failed')::int as failed,
      min(run_after) filter (where state = 'queued' and run_after <= ${now.toISOString()}) as oldest_due_at
    from jobs
    where state in ('queued', 'running', 'failed')
    group by queue
  `.execute(db);
  return rows.map((row) => ({ queue: row.queue, queued: row.queued, running: row.running, failed: row.failed, oldestDueAt: row.oldest_due_at }));
}
