import { type Kysely, sql } from 'kysely';

/**
 * CSV imports of people. The uploaded file is stored first, in chunks of about 1 MiB each
 * written in its own short transaction (no request holds the file in memory, and a crash never
 * leaves a half-written chunk counted); only then is the import QUEUED and its job enqueued.
 * The job commits rows in batches, each batch in the transaction that advances
 * `rows_committed`, so a rerun resumes after the last committed row. Chunks hold personal data
 * and are deleted when the import finishes. Error messages carry row numbers, never cell values.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table imports (
      workspace_id text not null references workspaces,
      import_id text not null,
      status text not null check (status in ('RECEIVING', 'QUEUED', 'RUNNING', 'COMPLETED', 'FAILED')),
      population_id text,
      created_by_user_id text not null,
      byte_count bigint not null default 0,
      chunk_count integer not null default 0,
      job_id text,
      rows_committed integer not null default 0,
      rows_total integer,
      rows_imported integer not null default 0,
      rows_failed integer not null default 0,
      error_count integer not null default 0,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      finished_at timestamptz,
      primary key (workspace_id, import_id)
    );
    -- Partial: only unfinished imports, so the sweep that scans it across workspaces stays cheap.
    create index imports_unfinished on imports (workspace_id, updated_at) where status in ('RECEIVING', 'QUEUED', 'RUNNING');

    create table import_chunks (
      workspace_id text not null,
      import_id text not null,
      chunk_index integer not null,
      data bytea not null,
      primary key (workspace_id, import_id, chunk_index),
      foreign key (workspace_id, import_id) references imports on delete cascade
    );

    create table import_errors (
      workspace_id text not null,
      import_id text not null,
      row_number integer not null,
      message text not null,
      primary key (workspace_id, import_id, row_number),
      foreign key (workspace_id, import_id) references imports on delete cascade
    );
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop table import_errors, import_chunks, imports`.execute(db);
}
