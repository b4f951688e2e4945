import { type Kysely, sql } from 'kysely';

/**
 * Backfills (issue 36, item 5): a panel's history brought from another tool as a CSV file, one row
 * per participation. The file is stored in chunks as it arrives (as imports are), and a job writes
 * its rows in batches, set-based, into the same tables the service's own work writes: studies,
 * participants, participant status events, incentives and their ledger entries. Every row it writes
 * carries the backfill's id (`backfill_id`), so what was brought can be told apart and listed.
 *
 * - studies.backfill_key: the study's key in the other tool; a backfilled study is made once per key
 *   (the unique index), so a second file naming it adds to the same study.
 * - A participation's natural key is (study, person), participants' own unique index: a row already
 *   there is skipped, so the same file twice changes nothing.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table backfills (
      workspace_id text not null references workspaces,
      backfill_id text not null,
      status text not null check (status in ('RECEIVING', 'QUEUED', 'RUNNING', 'COMPLETED', 'FAILED')),
      delimiter text not null default ',' check (delimiter in (',', ';', E'\t')),
      created_by_user_id text not null,
      byte_count bigint not null default 0,
      chunk_count integer not null default 0,
      job_id text,
      rows_committed integer not null default 0,
      rows_total integer,
      rows_written integer not null default 0,
      rows_skipped integer not null default 0,
      rows_failed integer not null default 0,
      error_count integer not null default 0,
      studies_created integer not null default 0,
      incentives_written integer not null default 0,
      last_row_number integer,
      failure_reason text,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      finished_at timestamptz,
      primary key (workspace_id, backfill_id)
    );
    create index backfills_unfinished on backfills (workspace_id, updated_at) where status in ('RECEIVING', 'QUEUED', 'RUNNING');

    create table backfill_chunks (
      workspace_id text not null,
      backfill_id text not null,
      chunk_index integer not null,
      data bytea not null,
      primary key (workspace_id, backfill_id, chunk_index),
      foreign key (workspace_id, backfill_id) references backfills on delete cascade
    );
    alter table backfill_chunks alter column data set storage external;

    create table backfill_errors (
      workspace_id text not null,
      backfill_id text not null,
      row_number integer not null,
      column_name text,
      message text not null,
      primary key (workspace_id, backfill_id, row_number),
      foreign key (workspace_id, backfill_id) references backfills on delete cascade
    );

    alter table studies add column backfill_id text;
    alter table studies add column backfill_key text;
    create unique index studies_by_backfill_key on studies (workspace_id, backfill_key) where backfill_key is not null;
    alter table participants add column backfill_id text;
    create index participants_of_backfill on participants (workspace_id, backfill_id, participant_id) where backfill_id is not null;
    alter table participant_status_events add column backfill_id text;
    alter table incentives add column backfill_id text;
    alter table incentive_ledger add column backfill_id text;
  `.execute(db);
  for (const table of ['backfills', 'backfill_chunks', 'backfill_errors']) {
    await sql`alter table ${sql.raw(table)} enable row level security`.execute(db);
    await sql`
      create policy tenant_isolation on ${sql.raw(table)}
      using (workspace_id = current_setting('app.workspace_id', true)) with check (workspace_id = current_setting('app.workspace_id', true))
    `.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table incentive_ledger drop column backfill_id;
    alter table incentives drop column backfill_id;
    alter table participant_status_events drop column backfill_id;
    drop index participants_of_backfill;
    alter table participants drop column backfill_id;
    drop index studies_by_backfill_key;
    alter table studies drop column backfill_key;
    alter table studies drop column backfill_id;
    drop table backfill_errors, backfill_chunks, backfills;
  `.execute(db);
}
