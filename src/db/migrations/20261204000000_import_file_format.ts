import { type Kysely, sql } from 'kysely';

/**
 * What an import learned of its file at upload, and what its report says about the rows read.
 * `delimiter`: the file's field separator, detected from its header row (a `;` or tab file from a
 * spreadsheet program), which the job must parse it with. `last_row_number`: the file's row (the
 * header is row 1) of the last row a committed batch read, so the report says which rows were read
 * even when the import stops. `failure_reason`: why a FAILED import stopped, as its webhook said.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table imports
      add column delimiter text not null default ',' check (delimiter in (',', ';', E'\t')),
      add column last_row_number integer,
      add column failure_reason text
  `.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table imports drop column delimiter, drop column last_row_number, drop column failure_reason`.execute(db);
}
