import { type Kysely, sql } from 'kysely';

/**
 * Background jobs on the service's own database (src/jobs/). A job belongs to the workspace whose
 * work it does; system-wide work (housekeeping, fan-out over workspaces) uses the reserved
 * workspace id '_system', which no generated id can equal, so the workspace-first rule holds for
 * every key and index. There is no foreign key to workspaces for that reason.
 *
 * Runners claim across workspaces, so the due and leased indexes are partial: they hold only the
 * rows a claim looks at (queued, running), and a claim reads those whole rather than the table.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table jobs (
      workspace_id text not null,
      job_id text not null,
      queue text not null,
      payload jsonb not null,
      state text not null check (state in ('queued', 'running', 'completed', 'failed')),
      singleton_key text,
      run_after timestamptz not null,
      attempts integer not null default 0 check (attempts >= 0),
      max_attempts integer not null check (max_attempts >= 1),
      backoff_seconds integer not null check (backoff_seconds >= 0),
      lease_token text,
      locked_until timestamptz,
      result jsonb,
      last_error text,
      created_at timestamptz not null,
      started_at timestamptz,
      finished_at timestamptz,
      updated_at timestamptz not null,
      primary key (workspace_id, job_id),
      check ((state = 'running') = (lease_token is not null and locked_until is not null))
    );
    -- Unique among the jobs kept (finished ones until they are pruned), so a recurring slot or a
    -- per-entity piece of work is enqueued once however many instances ask.
    create unique index jobs_singleton on jobs (workspace_id, queue, singleton_key) where singleton_key is not null;
    create index jobs_due on jobs (workspace_id, run_after) where state = 'queued';
    create index jobs_leased on jobs (workspace_id, locked_until) where state = 'running';
    create index jobs_finished on jobs (workspace_id, finished_at) where state in ('completed', 'failed');
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table jobs`.execute(db);
}
