import { type Kysely, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabaseUrl } from '../../test/harness.js';
import { type Database, openDatabase } from './database.js';
import { migrateToLatest } from './migrate.js';
import { preparedStatementName, reusableStatement } from './reusable-statement.js';
import type { DB } from './schema.js';
import { createWorkspace } from '../families/workspaces/service.js';

let database: Database;
let db: Kysely<DB>;
const workspaces: { workspaceId: string; name: string }[] = [];

beforeAll(async () => {
  database = await openDatabase({ databaseUrl: testDatabaseUrl, inMemory: true, poolSize: 2 });
  db = database.db;
  await migrateToLatest(db);
  for (const name of ['Reusable one', 'Reusable two']) {
    const { workspaceId } = await createWorkspace(db, { name, email: `admin.${name.replace(' ', '.').toLowerCase()}.${Date.now()}@example.test` });
    workspaces.push({ workspaceId, name });
  }
});
afterAll(async () => database.close());

const workspaceByIdAndName = reusableStatement((handle: Kysely<DB>, workspaceId: string, name: string) =>
  handle.selectFrom('workspaces').where('workspace_id', '=', workspaceId).where('name', '=', name).select(['workspace_id', 'name']),
);

describe('reusableStatement', () => {
  it('sends the same SQL text each time, bound to each call\'s values', async () => {
    const [first, second] = workspaces as [(typeof workspaces)[0], (typeof workspaces)[0]];
    const one = workspaceByIdAndName(db, first.workspaceId, first.name);
    const two = workspaceByIdAndName(db, second.workspaceId, second.name);
    expect(two.sql).toBe(one.sql);
    expect(two.parameters).toEqual([second.workspaceId, second.name]);
    expect((await db.executeQuery(one)).rows).toEqual([{ workspace_id: first.workspaceId, name: first.name }]);
    expect((await db.executeQuery(two)).rows).toEqual([{ workspace_id: second.workspaceId, name: second.name }]);
    // The values are bound, not spliced into the text: a mismatched pair finds nothing.
    expect((await db.executeQuery(workspaceByIdAndName(db, first.workspaceId, second.name))).rows).toEqual([]);
  });

  it('runs inside a transaction like any compiled query', async () => {
    const [first] = workspaces as [(typeof workspaces)[0]];
    const rows = await db.transaction().execute(async (trx) => (await trx.executeQuery(workspaceByIdAndName(trx, first.workspaceId, first.name))).rows);
    expect(rows).toEqual([{ workspace_id: first.workspaceId, name: first.name }]);
  });

  it.runIf(testDatabaseUrl)('runs on PostgreSQL as a statement prepared once per connection, also as a tenant under row-level security', async () => {
    const [first, second] = workspaces as [(typeof workspaces)[0], (typeof workspaces)[0]];
    const compiled = workspaceByIdAndName(db, first.workspaceId, first.name);
    const name = preparedStatementName(compiled.sql);
    expect(name).toMatch(/^reusable_\d+$/);
    // One transaction holds one connection: what it prepared shows in its session's pg_prepared_statements.
    const { rows, prepared } = await db.transaction().execute(async (trx) => {
      const rows = [];
      for (const { workspaceId, name: workspaceName } of [first, second, first]) rows.push(...(await trx.executeQuery(workspaceByIdAndName(trx, workspaceId, workspaceName))).rows);
      const prepared = await sql<{ name: string; statement: string }>`select name, statement from pg_prepared_statements where name = ${name}`.execute(trx);
      return { rows, prepared: prepared.rows };
    });
    expect(rows.map((row) => row.workspace_id)).toEqual([first.workspaceId, second.workspaceId, first.workspaceId]);
    expect(prepared).toEqual([{ name, statement: compiled.sql }]);
    // In a tenant's scope the prepared statement is planned under its policies: another workspace's row stays unseen.
    const seen = await database
      .forTenant(first.workspaceId)
      .transaction()
      .execute(async (trx) => {
        const own = (await trx.executeQuery(workspaceByIdAndName(trx, first.workspaceId, first.name))).rows;
        const other = (await trx.executeQuery(workspaceByIdAndName(trx, second.workspaceId, second.name))).rows;
        return { own, other };
      });
    expect(seen).toEqual({ own: [{ workspace_id: first.workspaceId, name: first.name }], other: [] });
  });

  it('leaves other statements unprepared', async () => {
    const text = db.selectFrom('workspaces').select('name').limit(1).compile().sql;
    expect(preparedStatementName(text)).toBeUndefined();
  });

  it('refuses a statement whose text depends on a parameter', () => {
    const spliced = reusableStatement((handle: Kysely<DB>, workspaceId: string) =>
      handle.selectFrom('workspaces').where('workspace_id', '=', sql.lit(workspaceId)).select('name'),
    );
    expect(() => spliced(db, 'wsp_anything')).toThrow(/parameter 0 is not bound/);
  });
});
