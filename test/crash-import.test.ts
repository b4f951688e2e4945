import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operatorToken, storeKind } from './harness.js';
import { type RunningServer, startServer } from './processes.js';
import { apiOf, type CrashStorage, createCrashStorage, createWorkspaceWithCli, killHard, stopGracefully, until } from './crash-support.js';
import type { ImportResponse } from '../src/families/imports/test-support.js';

/**
 * kill -9 of a real server process (src/server.ts, as the other process tests run it) in the
 * middle of a CSV import, and a second process started on the same storage (the same DATA_DIR,
 * or the same PostgreSQL database): the import must finish with every row once. The import job
 * commits a batch of 5,000 rows (IMPORT_BATCH_ROWS) per transaction together with the import's
 * offset, so the kill loses at most the batch in flight, which the next run redoes from the
 * committed offset.
 */

const ROWS = 24_000;
/** Data rows (1-based) with an email the import refuses. */
const BAD_ROWS = new Set([7, 9_001, 23_999]);
/** Data rows that repeat an earlier row's email (in another batch): they update that person, never add one. */
const REPEATS = new Map([
  [12_345, 3],
  [20_002, 4_999],
]);

const emailOf = (row: number) => `person-${row}@crash.example`;

interface Expected {
  email: string;
  firstName: string;
  lastName: string;
  age: number;
  code: string;
  plan: string;
}

function buildCsv() {
  const lines = ['email,firstName,lastName,Age,Member code,Plan'];
  const people = new Map<string, Expected>();
  for (let row = 1; row <= ROWS; row++) {
    if (BAD_ROWS.has(row)) {
      lines.push(`not-an-email-${row},Bad,Row,1,BAD-${row},Free`);
      continue;
    }
    const repeated = REPEATS.get(row);
    if (repeated !== undefined) {
      // Upper-cased: emails match case-insensitively. The empty cells keep what the first row gave.
      lines.push(`${emailOf(repeated).toUpperCase()},Repeat${row},,,,`);
      people.get(emailOf(repeated))!.firstName = `Repeat${row}`;
      continue;
    }
    const person: Expected = { email: emailOf(row), firstName: `First${row}`, lastName: `Last${row}`, age: row % 90, code: `M-${row}`, plan: row % 3 === 0 ? 'Pro' : 'Free' };
    people.set(person.email, person);
    lines.push(`${person.email},${person.firstName},${person.lastName},${person.age},${person.code},${person.plan}`);
  }
  return { csv: `${lines.join('\n')}\n`, people };
}


describe(`kill -9 of the server mid-import, then a restart (${storeKind} store)`, () => {
  let storage: CrashStorage;
  let workspace: { workspaceId: string; token: string };
  const servers: RunningServer[] = [];
  // Jobs polled often, so the import starts at once; the test helpers move the clock past the
  // killed run's lease (60 s by the service's clock) instead of waiting for it in real time.
  const serverEnv = () => ({ ...storage.env, TEST_HELPERS: '1', TEST_HELPERS_TOKEN: operatorToken, JOBS: 'on', JOB_POLL_SECONDS: '0.2', RATE_LIMIT_MAX: '100000' });

  beforeAll(async () => {
    storage = await createCrashStorage('recruit-ops-crash-import');
    workspace = await createWorkspaceWithCli(storage, 'Crash import');
  }, 120_000);
  afterAll(async () => {
    for (const server of servers) if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
    await Promise.all(servers.map((server) => server.exited));
    await storage?.dispose();
  });

  it('completes with exactly the expected rows: every person of the file once, none half-written', { timeout: 300_000 }, async () => {
    const first = await startServer(serverEnv());
    servers.push(first);
    let api = apiOf(first, workspace.token);

    const properties = await api<{ results: { personProperty: { propertyId: string; name: string } }[]; errors: unknown[] }>('POST', '/properties/import', {
      body: [
        { name: 'Age', propertyType: 'NUMBER' },
        { name: 'Member code', propertyType: 'STRING', isUnique: true },
        { name: 'Plan', propertyType: 'SINGLE_SELECT', propertyOptions: [{ name: 'Free' }, { name: 'Pro' }] },
      ],
    });
    expect(properties.status, properties.text).toBe(200);
    expect(properties.body.errors).toEqual([]);
    const propertyId = Object.fromEntries(properties.body.results.map(({ personProperty }) => [personProperty.name, personProperty.propertyId]));
    const population = await api<{ populationId: string }>('POST', '/populations', { body: { name: 'Imported panel' } });
    expect(population.status, population.text).toBe(201);
    const populationId = population.body.populationId;

    const { csv, people } = buildCsv();
    const accepted = await api<{ importId: string }>('POST', `/imports?populationId=${populationId}`, { csv });
    expect(accepted.status, accepted.text).toBe(202);
    const { importId } = accepted.body;

    // Killed as soon as a batch is committed and the import is still running.
    let seen: ImportResponse | undefined;
    await until(
      first,
      'the first batch committed',
      async () => {
        seen = (await api<ImportResponse>('GET', `/imports/${importId}`)).body;
        return seen.rowsTotal > 0;
      },
      { everyMs: 10 },
    );
    await killHard(first);
    expect(seen).toMatchObject({ status: 'RUNNING' });
    expect(seen!.rowsTotal).toBeLessThan(ROWS);
    const committedBeforeKill = seen!.rowsTotal;

    const second = await startServer(serverEnv());
    servers.push(second);
    api = apiOf(second, workspace.token);
    // Right after the restart the import reads as the kill left it: nothing undone, nothing more.
    const afterRestart = (await api<ImportResponse>('GET', `/imports/${importId}`)).body;
    expect(afterRestart.status).toBe('RUNNING');
    expect(afterRestart.rowsTotal).toBeGreaterThanOrEqual(committedBeforeKill);
    expect(afterRestart.rowsTotal).toBeLessThan(ROWS);
    // The clock is the operator's (TEST_HELPERS_TOKEN), no workspace token's.
    const moved = await apiOf(second, operatorToken)('POST', '/test-helpers/clock', { body: { now: new Date(Date.now() + 5 * 60_000).toISOString() } });
    expect(moved.status, moved.text).toBe(200);

    let finished: ImportResponse | undefined;
    await until(second, 'the import finished', async () => {
      finished = (await api<ImportResponse>('GET', `/imports/${importId}`)).body;
      return finished.status !== 'RUNNING' && finished.status !== 'QUEUED';
    });
    expect(finished).toEqual({
      importId,
      status: 'COMPLETED',
      rowsTotal: ROWS,
      rowsImported: ROWS - BAD_ROWS.size,
      rowsFailed: BAD_ROWS.size,
      // The file's rows: the header is row 1, data row N is row N + 1.
      errors: [...BAD_ROWS].map((row) => ({ row: row + 1, message: 'email is not a valid email address' })),
      lastRow: ROWS + 1,
    });
    await stopGracefully(second);

    // The store itself, read with no server running.
    const database = await storage.open();
    try {
      const { db } = database;
      const job = await db
        .selectFrom('imports as i')
        .innerJoin('jobs as j', (join) => join.onRef('j.workspace_id', '=', 'i.workspace_id').onRef('j.job_id', '=', 'i.job_id'))
        .where('i.import_id', '=', importId)
        .select(['j.state', 'j.attempts', 'i.rows_committed'])
        .executeTakeFirstOrThrow();
      // The killed run was attempt 1; the run after the restart finished it.
      expect(job).toEqual({ state: 'completed', attempts: 2, rows_committed: ROWS });

      const duplicates = await sql<{ email: string; copies: number }>`
        select lower(email) as email, count(*)::int as copies from people
        where workspace_id = ${workspace.workspaceId} and deleted_at is null group by lower(email) having count(*) > 1
      `.execute(db);
      expect(duplicates.rows).toEqual([]);

      const rows = await db
        .selectFrom('people')
        .select(['person_id', 'email', 'first_name', 'last_name', 'properties', 'last_import_id', 'deleted_at'])
        .where('workspace_id', '=', workspace.workspaceId)
        .execute();
      expect(rows.length).toBe(people.size);
      const byEmail = new Map(rows.map((row) => [row.email!, row]));
      const wrong: string[] = [];
      for (const person of people.values()) {
        const row = byEmail.get(person.email);
        const properties = row?.properties ?? {};
        const whole =
          row !== undefined &&
          row.deleted_at === null &&
          row.first_name === person.firstName &&
          row.last_name === person.lastName &&
          row.last_import_id === importId &&
          properties[propertyId.Age!] === person.age &&
          properties[propertyId['Member code']!] === person.code &&
          properties[propertyId.Plan!] === person.plan;
        if (!whole) wrong.push(`${person.email}: ${JSON.stringify(row ?? 'missing')}`);
      }
      expect(wrong.slice(0, 5), `${wrong.length} people missing or not as the file says`).toEqual([]);

      // The rows written beside each person in its batch's transaction: one unique-value claim
      // and one population membership each, for exactly the imported people.
      const claims = await db
        .selectFrom('person_unique_values')
        .select(['person_id'])
        .where('workspace_id', '=', workspace.workspaceId)
        .where('property_id', '=', propertyId['Member code']!)
        .execute();
      const personIds = new Set(rows.map((row) => row.person_id));
      expect(claims.length).toBe(people.size);
      expect(new Set(claims.map((claim) => claim.person_id))).toEqual(personIds);
      const members = await db.selectFrom('population_members').select(['person_id']).where('workspace_id', '=', workspace.workspaceId).where('population_id', '=', populationId).execute();
      expect(members.length).toBe(people.size);
      expect(new Set(members.map((member) => member.person_id))).toEqual(personIds);
    } finally {
      await database.close();
    }
  });
});
