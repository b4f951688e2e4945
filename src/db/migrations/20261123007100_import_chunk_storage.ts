import { type Kysely, sql } from 'kysely';

/**
 * Stored import chunks are kept uncompressed (out of line, as before). Compressing each 1 MiB
 * chunk as it arrived cost the database about 9 ms of CPU per chunk and made the upload's inserts
 * about three times slower (bench/import.ts); the chunks live only until their import finishes.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table import_chunks alter column data set storage external`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table import_chunks alter column data set storage extended`.execute(db);
}
