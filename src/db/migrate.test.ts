import { randomBytes } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabaseUrl } from '../../test/harness.js';
import { type Database, openDatabase } from './database.js';
import { isUpToDate, migrateToLatest } from './migrate.js';
import { migrations } from './migrations/index.js';
import type { DB } from './schema.js';

const allMigrations = Object.keys(migrations);
const notWorkspaceOwned = new Set(['service_secrets', 'kysely_migration', 'kysely_migration_lock']);
/**
 * Indexes that answer a condition on their first key alone, the workspace then checked on the few
 * rows they find. The trigram indexes of 20261124100000_text_search: GIN could lead with
 * workspace_id (btree_gin), but the workspace's key lists all its people, and intersecting it
 * with the needle's trigrams made an email CONTAINS at 1,000,000 people 5–8 ms instead of 0.9 ms.
 * And the participant links' token digest: a link is looked up by its token alone, before the
 * workspace is known (the token is what names it); the row found then says its workspace.
 * And the branding configs' logo hash: a participant page's logo is fetched by its path, the
 * image's SHA-256, with no workspace in it (the same bytes are the same image, whoever holds them).
 * And the calendar feeds' token digest: a feed's URL names no workspace, as a participant link's.
 * And the person's sign-in links and sessions, by their token's digest: /me/link/<token> and the
 * session cookie name no workspace either; the row found says it.
 * And the booked sessions by start: the reminders' sweep (src/families/scheduling/reminders.ts)
 * finds every workspace's sessions starting in a few minutes' range in one statement, a system
 * job's; led by workspace_id it would probe each workspace in turn.
 */
// The console's sessions, emailed sign-in links and single sign-on attempts are found by their secret's digest before any workspace is known, as the person's own.
const notLedByWorkspace = new Set(['people_email_trgm', 'participant_links_by_token', 'branding_configs_logo', 'calendar_feeds_by_token', 'sessions_by_start', 'person_access_links_token', 'person_sessions_token', 'user_sessions_token', 'user_sign_in_links_token', 'sso_sign_in_attempts_flow']);

/** A store that has never been migrated: an in-memory PGlite, or a new database on the test server. */
interface FreshStore {
  open(): Promise<Database>;
  drop(): Promise<void>;
}

function freshEmbedded(): FreshStore {
  let database: Database | undefined;
  return {
    // One in-memory database, handed out once per caller (PGlite has one connection anyway).
    open: async () => (database ??= await openDatabase({ inMemory: true })),
    drop: async () => database?.close(),
  };
}

function freshPostgres(serverUrl: string): FreshStore {
  const name = `test_migrate_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const handles: Database[] = [];
  let created: Promise<void> | undefined;
  const create = async () => {
    const admin = await openDatabase({ databaseUrl: serverUrl, poolSize: 1 });
    try {
      await sql`create database ${sql.id(name)}`.execute(admin.db);
    } finally {
      await admin.close();
    }
  };
  return {
    open: async () => {
      await (created ??= create());
      const database = await openDatabase({ databaseUrl: url.toString(), poolSize: 2 });
      handles.push(database);
      return database;
    },
    drop: async () => {
      for (const handle of handles) await handle.close();
      if (!created) return;
      const admin = await openDatabase({ databaseUrl: serverUrl, poolSize: 1 });
      try {
        await sql`drop database if exists ${sql.id(name)} with (force)`.execute(admin.db);
      } finally {
        await admin.close();
      }
    },
  };
}

async function tablesAndLeadingKeyColumns(db: Kysely<DB>) {
  const { rows } = await sql<{ table: string; leading: string | null }>`
    select t.table_name as "table",
      (select a.attname from pg_index i
        join pg_attribute a on a.attrelid = i.indrelid and a.attnum = i.indkey[0]
        where i.indrelid = format('%I.%I', t.table_schema, t.table_name)::regclass and i.indisprimary) as leading
    from information_schema.tables t
    where t.table_schema = current_schema() and t.table_type = 'BASE TABLE'
    order by t.table_name
  `.execute(db);
  return rows;
}

async function indexesNotLedByWorkspace(db: Kysely<DB>) {
  const { rows } = await sql<{ index: string }>`
    select ic.relname as "index"
    from pg_index i
      join pg_class ic on ic.oid = i.indexrelid
      join pg_class tc on tc.oid = i.indrelid
      join pg_namespace n on n.oid = tc.relnamespace
      left join pg_attribute a on a.attrelid = i.indrelid and a.attnum = i.indkey[0]
    where n.nspname = current_schema()
      and tc.relname not in ('workspaces', 'service_secrets', 'kysely_migration', 'kysely_migration_lock')
      and a.attname is distinct from 'workspace_id'
    order by ic.relname
  `.execute(db);
  return rows.map((row) => row.index);
}

const stores: [string, () => FreshStore][] = [['embedded', freshEmbedded]];
const serverUrl = testDatabaseUrl;
if (serverUrl) stores.push(['postgres', () => freshPostgres(serverUrl)]);

describe.each(stores)('migrations on a fresh %s store', (_kind, makeStore) => {
  let store: FreshStore;
  let database: Database;
  beforeAll(async () => {
    store = makeStore();
    database = await store.open();
  });
  afterAll(async () => store.drop());

  it('applies every migration once, then nothing', async () => {
    expect(allMigrations[0]).toBe('20261122000000_foundation');
    expect(await migrateToLatest(database.db)).toEqual({ migrated: allMigrations });
    expect(await migrateToLatest(database.db)).toEqual({ migrated: [] });
  });

  it('leads the primary key of every workspace-owned table with workspace_id', async () => {
    const tables = await tablesAndLeadingKeyColumns(database.db);
    expect(tables.map((table) => table.table)).toEqual(expect.arrayContaining(['workspaces', 'users', 'studies', 'api_tokens']));
    const owned = tables.filter((table) => !notWorkspaceOwned.has(table.table));
    expect(owned.filter((table) => table.leading !== 'workspace_id')).toEqual([]);
  });

  it('leads every index of a workspace-owned table with workspace_id', async () => {
    expect((await indexesNotLedByWorkspace(database.db)).filter((index) => !notLedByWorkspace.has(index))).toEqual([]);
  });
});

describe.each(stores)('concurrent migrations on a fresh %s store', (_kind, makeStore) => {
  let store: FreshStore;
  beforeAll(() => {
    store = makeStore();
  });
  afterAll(async () => store.drop());

  it('apply each migration exactly once', async () => {
    const [first, second] = [await store.open(), await store.open()];
    const outcomes = await Promise.all([migrateToLatest(first.db), migrateToLatest(second.db)]);
    expect(outcomes.flatMap((outcome) => outcome.migrated).sort()).toEqual(allMigrations);
    expect(await migrateToLatest(first.db)).toEqual({ migrated: [] });
  });
});

describe.each(stores)('starting on an up-to-date %s store', (_kind, makeStore) => {
  let store: FreshStore;
  let database: Database;
  beforeAll(async () => {
    store = makeStore();
    database = await store.open();
    await migrateToLatest(database.db);
  });
  afterAll(async () => store.drop());

  it('recognises it without the Migrator: two reads and no lock', async () => {
    const statements: string[] = [];
    const watched = database.db.withPlugin({
      transformQuery: (args) => {
        statements.push(args.node.kind);
        return args.node;
      },
      transformResult: async (args) => args.result,
    });
    expect(await isUpToDate(watched)).toBe(true);
    expect(await migrateToLatest(watched)).toEqual({ migrated: [] });
    // isUpToDate's two reads, then the same two inside migrateToLatest: nothing creates, locks or writes.
    expect(statements).toEqual(['RawNode', 'RawNode', 'RawNode', 'RawNode']);
  });

  it('is not up to date when a known migration is missing', async () => {
    await database.db
      .transaction()
      .execute(async (trx) => {
        await sql`delete from kysely_migration where name = ${allMigrations.at(-1)}`.execute(trx);
        expect(await isUpToDate(trx)).toBe(false);
        throw new RollBack();
      })
      .catch((error: unknown) => {
        if (!(error instanceof RollBack)) throw error;
      });
    expect(await isUpToDate(database.db)).toBe(true);
  });

  it('leaves a database from a newer version to the Migrator, which refuses it', async () => {
    await sql`insert into kysely_migration (name, timestamp) values ('29991231000000_from_a_newer_version', now())`.execute(database.db);
    try {
      expect(await isUpToDate(database.db)).toBe(false);
      await expect(migrateToLatest(database.db)).rejects.toThrow(/corrupted migrations/);
    } finally {
      await sql`delete from kysely_migration where name = '29991231000000_from_a_newer_version'`.execute(database.db);
    }
    expect(await isUpToDate(database.db)).toBe(true);
  });

  it('is not up to date on a database never migrated', async () => {
    const fresh = makeStore();
    try {
      expect(await isUpToDate((await fresh.open()).db)).toBe(false);
    } finally {
      await fresh.drop();
    }
  });
});

class RollBack extends Error {}
