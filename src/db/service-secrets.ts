import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from './schema.js';

/**
 * A random secret of 32 bytes generated once and kept in service_secrets (a table the tenant role
 * cannot read), the same for every instance. Read first, written only when missing: inserting at
 * every start made each start a write transaction (on the embedded store a WAL flush, 60-100 ms of
 * its start). When two instances generate it at once, the first insert wins and both read that one.
 */
export async function serviceSecret(db: Kysely<DB>, name: string): Promise<Buffer> {
  const read = () => db.selectFrom('service_secrets').where('name', '=', name).select('value').executeTakeFirst();
  let row = await read();
  if (!row) {
    await db
      .insertInto('service_secrets')
      .values({ name, value: randomBytes(32).toString('base64') })
      .onConflict((conflict) => conflict.column('name').doNothing())
      .execute();
    row = await read();
    if (!row) throw new Error(`service secret "${name}" was neither found nor stored`);
  }
  return Buffer.from(row.value, 'base64');
}
