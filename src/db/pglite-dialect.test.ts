import { setImmediate as nextTick } from 'node:timers/promises';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, sql } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from './database.js';
import { migrateToLatest } from './migrate.js';
import { PGliteDialect } from './pglite-dialect.js';
import type { DB } from './schema.js';

let database: Database;
let db: Kysely<DB>;

beforeAll(async () => {
  database = await openDatabase({ inMemory: true });
  db = database.db;
  await migrateToLatest(db);
  await sql`create table counters (name text primary key, value integer not null)`.execute(db);
  await sql`create table items (name text primary key)`.execute(db);
});
afterAll(async () => database.close());

beforeEach(async () => {
  await sql`delete from counters; delete from items; insert into counters values ('hits', 0)`.execute(db);
});

async function counter(handle: Kysely<DB> = db): Promise<number> {
  const { rows } = await sql<{ value: number }>`select value from counters where name = ${'hits'}`.execute(handle);
  return rows[0]!.value;
}

async function items(): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`select name from items order by name`.execute(db);
  return rows.map((row) => row.name);
}

describe('PGlite dialect', () => {
  it('never mixes the statements of concurrent transactions (no lost update)', async () => {
    const transactions = 60;
    await Promise.all(
      Array.from({ length: transactions }, (_, index) =>
        db.transaction().execute(async (trx) => {
          const value = await counter(trx);
          // Yield to the event loop between read and write, where another transaction's
          // statements would slip in if the connection were shared.
          await nextTick();
          if (index % 2 === 0) await sql`select pg_sleep(0)`.execute(trx);
          await sql`update counters set value = ${value + 1} where name = ${'hits'}`.execute(trx);
        }),
      ),
    );
    expect(await counter()).toBe(transactions);
  });

  it('rolls a failing transaction back whole while a concurrent one commits', async () => {
    const failing = db.transaction().execute(async (trx) => {
      await sql`insert into items values (${'from-failing'})`.execute(trx);
      await sql`update counters set value = 999 where name = ${'hits'}`.execute(trx);
      await nextTick();
      throw new Error('the work failed');
    });
    const committing = db.transaction().execute(async (trx) => {
      await sql`insert into items values (${'from-committing'})`.execute(trx);
      await nextTick();
      await sql`update counters set value = value + 1 where name = ${'hits'}`.execute(trx);
    });
    await expect(failing).rejects.toThrow('the work failed');
    await committing;
    expect(await items()).toEqual(['from-committing']);
    expect(await counter()).toBe(1);
  });

  it('keeps a standalone query out of a transaction that is in progress', async () => {
    let insideTransaction!: () => void;
    const started = new Promise<void>((resolve) => {
      insideTransaction = resolve;
    });
    const transaction = db.transaction().execute(async (trx) => {
      await sql`update counters set value = 999 where name = ${'hits'}`.execute(trx);
      insideTransaction();
      await nextTick();
      await nextTick();
      throw new Error('rolled back');
    });
    await started;
    // Issued while the transaction holds the connection: it must neither see the uncommitted
    // 999 nor run inside the transaction (and be rolled back with it).
    const seen = counter();
    const written = sql`insert into items values (${'standalone'})`.execute(db);
    await expect(transaction).rejects.toThrow('rolled back');
    expect(await seen).toBe(0);
    await written;
    expect(await items()).toEqual(['standalone']);
  });

  it('frees the connection after a failed statement, inside and outside transactions', async () => {
    await expect(sql`select * from no_such_table`.execute(db)).rejects.toThrow(/no_such_table/);
    await expect(
      db.transaction().execute(async (trx) => {
        await sql`insert into items values (${'lost'})`.execute(trx);
        await sql`select 1 / ${0}`.execute(trx);
      }),
    ).rejects.toThrow(/division by zero/);
    // The failed transaction was rolled back, so the connection is not left in an aborted one.
    expect(await counter()).toBe(0);
    expect(await items()).toEqual([]);
  });

  it('runs several statements without parameters in one exec, returning the last result', async () => {
    const { rows } = await sql<{ count: number }>`
      insert into items values ('a');
      insert into items values ('b');
      select count(*)::int as count from items;
    `.execute(db);
    expect(rows).toEqual([{ count: 2 }]);
    // Like PostgreSQL's simple protocol, a batch runs as one implicit transaction.
    await expect(sql`insert into items values ('c'); select 1 / 0;`.execute(db)).rejects.toThrow(/division by zero/);
    expect(await items()).toEqual(['a', 'b']);
  });

  it('reports affected rows as Kysely expects', async () => {
    await sql`insert into items values ('a'), ('b'), ('c')`.execute(db);
    const updated = await sql`update items set name = name || ${'!'} where name <> ${'c'}`.execute(db);
    expect(updated.numAffectedRows).toBe(2n);
    const none = await sql`delete from items where name = ${'missing'}`.execute(db);
    expect(none.numAffectedRows ?? 0n).toBe(0n);
    const result = await db.updateTable('users').set({ fullname: 'nobody' }).where('user_id', '=', 'missing').executeTakeFirst();
    expect(result.numUpdatedRows).toBe(0n);
  });

  it('recovers when a query gives up waiting for the connection', async () => {
    const pglite = await PGlite.create();
    const short = new Kysely<DB>({ dialect: new PGliteDialect(pglite, { acquireTimeoutMs: 100 }) });
    try {
      // A query on the root handle inside a transaction waits for the transaction's own
      // connection: it must time out, and the connection must not stay taken afterwards.
      await expect(
        short.transaction().execute(async () => {
          await sql`select 1`.execute(short);
        }),
      ).rejects.toThrow('Timed out waiting for the embedded database connection');
      const { rows } = await sql<{ one: number }>`select 1 as one`.execute(short);
      expect(rows).toEqual([{ one: 1 }]);
    } finally {
      await short.destroy();
      await pglite.close();
    }
  });

  it('tells how many wait for the connection, for how long, and how long each wait lasted', async () => {
    if (database.connections.kind !== 'queue') throw new Error('the embedded store serializes on a queue');
    const queue = database.connections.queue;
    const waits: number[] = [];
    const stop = queue.onWait((seconds) => waits.push(seconds));
    try {
      let letGo!: () => void;
      const holding = new Promise<void>((resolve) => {
        letGo = resolve;
      });
      let holds!: () => void;
      const held = new Promise<void>((resolve) => {
        holds = resolve;
      });
      const transaction = db.transaction().execute(async (trx) => {
        await sql`select 1`.execute(trx);
        holds();
        await holding;
      });
      await held;
      const queued = [sql`select 1`.execute(db), sql`select 2`.execute(db)];
      await nextTick();
      expect(queue.waiting).toBe(2);
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(queue.oldestWaitSeconds()).toBeGreaterThanOrEqual(0.015);
      letGo();
      await Promise.all([transaction, ...queued]);
      expect(queue.waiting).toBe(0);
      expect(queue.oldestWaitSeconds()).toBe(0);
      // The transaction's own wait (none), then the two that waited behind it.
      expect(waits).toHaveLength(3);
      expect(waits.filter((seconds) => seconds >= 0.015)).toHaveLength(2);
    } finally {
      stop();
    }
  });

  it('serves a background workspace’s statements after the others’ (issue 32: a search’s page behind another workspace’s one-row request)', async () => {
    if (database.connections.kind !== 'queue') throw new Error('the embedded store serializes on a queue');
    const queue = database.connections.queue;
    const heavy = '00000000-0000-4000-8000-0000000000a1';
    const light = '00000000-0000-4000-8000-0000000000b2';
    queue.setBackground((scope) => scope === heavy);
    try {
      let letGo!: () => void;
      const holding = new Promise<void>((resolve) => {
        letGo = resolve;
      });
      let holds!: () => void;
      const held = new Promise<void>((resolve) => {
        holds = resolve;
      });
      const transaction = db.transaction().execute(async (trx) => {
        await sql`select 1`.execute(trx);
        holds();
        await holding;
      });
      await held;
      const order: string[] = [];
      const queued = [
        sql`select 1`.execute(database.forTenant(heavy)).then(() => order.push('heavy 1')),
        sql`select 1`.execute(database.forTenant(heavy)).then(() => order.push('heavy 2')),
        sql`select 1`.execute(database.forTenant(light)).then(() => order.push('light')),
        sql`select 1`.execute(db).then(() => order.push('owner')),
      ];
      await nextTick();
      expect(queue.waiting).toBe(4);
      letGo();
      await Promise.all([transaction, ...queued]);
      // The heavy workspace asked first, and went last.
      expect(order.slice(0, 2).sort()).toEqual(['light', 'owner']);
      expect(order.slice(2)).toEqual(['heavy 1', 'heavy 2']);
    } finally {
      queue.setBackground(() => false);
    }
  });

  it('serves background handles’ statements (an import’s upload and job) after everyone else’s, the owner’s and a workspace’s', async () => {
    const workspace = '00000000-0000-4000-8000-0000000000c3';
    let letGo!: () => void;
    const holding = new Promise<void>((resolve) => {
      letGo = resolve;
    });
    let holds!: () => void;
    const held = new Promise<void>((resolve) => {
      holds = resolve;
    });
    const transaction = db.transaction().execute(async (trx) => {
      await sql`select 1`.execute(trx);
      holds();
      await holding;
    });
    await held;
    const order: string[] = [];
    const queued = [
      sql`select 1`.execute(database.background(null)).then(() => order.push('background owner')),
      sql`select 1`.execute(database.background(workspace)).then(() => order.push('background workspace')),
      sql`select 1`.execute(database.forTenant(workspace)).then(() => order.push('workspace')),
      sql`select 1`.execute(db).then(() => order.push('owner')),
    ];
    await nextTick();
    letGo();
    await Promise.all([transaction, ...queued]);
    // The background statements asked first, and went last, in the order they asked.
    expect(order.slice(0, 2).sort()).toEqual(['owner', 'workspace']);
    expect(order.slice(2)).toEqual(['background owner', 'background workspace']);
    // A background workspace handle is still that workspace's (row-level security).
    const { rows } = await sql<{ id: string }>`select current_setting('app.workspace_id') as id`.execute(database.background(workspace));
    expect(rows[0]!.id).toBe(workspace);
  });

  it('writes and reads bytea through its own codec (PGlite’s took ~2 s for a MiB), byte for byte, a view into a larger buffer too', async () => {
    await sql`create table if not exists blobs (name text primary key, data bytea not null)`.execute(db);
    const bytes = new Uint8Array(1024 * 1024);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7919) % 256;
    await sql`insert into blobs values ('mib', ${bytes})`.execute(db);
    const { rows } = await sql<{ data: Uint8Array; length: number }>`select data, length(data) as length from blobs where name = 'mib'`.execute(db);
    expect(rows[0]!.length).toBe(bytes.length);
    expect(rows[0]!.data).toBeInstanceOf(Uint8Array);
    expect(Buffer.from(rows[0]!.data).equals(Buffer.from(bytes))).toBe(true);
    const slice = Buffer.from(bytes.buffer, 10, 5);
    await sql`insert into blobs values ('slice', ${slice})`.execute(db);
    const { rows: sliced } = await sql<{ data: Uint8Array }>`select data from blobs where name = 'slice'`.execute(db);
    expect(Buffer.from(sliced[0]!.data).equals(slice)).toBe(true);
    await sql`drop table blobs`.execute(db);
  });
});
