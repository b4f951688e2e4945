import type { Kysely } from 'kysely';
import type { DB } from './schema.js';

/**
 * Runs `work` in one transaction: everything it writes commits together or not at all. On the
 * embedded store the whole transaction holds the single connection, so concurrent requests'
 * statements never interleave.
 */
export function inTransaction<T>(db: Kysely<DB>, work: (transaction: Kysely<DB>) => Promise<T>): Promise<T> {
  return db.transaction().execute(work);
}
