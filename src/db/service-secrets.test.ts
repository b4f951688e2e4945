import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPrivateDatabase, type PrivateDatabase } from '../../test/private-database.js';
import { serviceSecret } from './service-secrets.js';

describe('service secrets: generated once, then only read', () => {
  let store: PrivateDatabase;
  beforeAll(async () => {
    store = await openPrivateDatabase();
  }, 120_000);
  afterAll(async () => store?.drop());

  it('generates 32 random bytes the first time and gives the same ones after', async () => {
    const first = await serviceSecret(store.database.db, 'test-first');
    expect(first).toHaveLength(32);
    expect((await serviceSecret(store.database.db, 'test-first')).equals(first)).toBe(true);
    expect((await serviceSecret(store.database.db, 'test-other')).equals(first)).toBe(false);
  });

  it('writes nothing once the secret exists: a start is not a write transaction', async () => {
    const stored = await serviceSecret(store.database.db, 'test-read-only');
    await store.database.db.connection().execute(async (connection) => {
      await sql`set default_transaction_read_only = on`.execute(connection);
      try {
        expect((await serviceSecret(connection, 'test-read-only')).equals(stored)).toBe(true);
        // The same connection refuses a write, so the read above proves that none was tried.
        await expect(serviceSecret(connection, 'test-missing')).rejects.toThrow(/read-only/);
      } finally {
        await sql`set default_transaction_read_only = off`.execute(connection);
      }
    });
  });

  it('gives instances generating it at once the same secret', async () => {
    const [one, two] = await Promise.all([serviceSecret(store.database.db, 'test-race'), serviceSecret(store.database.db, 'test-race')]);
    expect(one.equals(two)).toBe(true);
  });
});
