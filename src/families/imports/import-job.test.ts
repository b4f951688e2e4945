import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callTestHelper, createTenant, startTestService, storeKind, type Tenant, type TestService, uniqueEmail } from '../../../test/harness.js';
import { createPerson, createPopulation, createProperties } from '../../../test/people-factory.js';
import { JobRunner } from '../../jobs/runner.js';
import { closeAbandonedImports } from '../people/purge.js';
import { importJobHandler, type ImportJobOptions } from './job.js';
import { csvOf, peopleByEmail, readImport, startImport } from './test-support.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service.stop());

/**
 * The jobs run on runners of the import queue alone (the service's own handler, as another
 * instance would run it), drained for the test's own workspace: on PostgreSQL every test file's
 * service shares one database, and only runs of a workspace (or of every workspace, which no test
 * on that database makes) claim its jobs, so no other file's runner picks up an import these tests
 * hold half-done.
 */
async function setClock(at: Date) {
  const response = await callTestHelper(service, 'POST', '/clock', { body: { now: at.toISOString() } });
  expect(response.statusCode).toBe(200);
}
const later = (at: Date, seconds: number) => new Date(at.getTime() + seconds * 1000);

/** A runner of the import queue alone; with options, its handler stops where `afterBatch` says. */
function importRunner(options: ImportJobOptions = {}) {
  const runner = new JobRunner({ db: service.deps.db, clock: service.deps.clock });
  runner.register(importJobHandler(service.deps.db, service.deps.clock, options));
  return runner;
}

const own = (tenant: Tenant) => ({ workspaceId: tenant.workspaceId });

const jobOf = (importId: string) =>
  service.deps.db
    .selectFrom('imports as i')
    .innerJoin('jobs as j', (join) => join.onRef('j.workspace_id', '=', 'i.workspace_id').onRef('j.job_id', '=', 'i.job_id'))
    .where('i.import_id', '=', importId)
    .select(['j.job_id', 'j.state', 'j.attempts'])
    .executeTakeFirstOrThrow();
const chunkCount = async (importId: string) => (await service.deps.db.selectFrom('import_chunks').select('chunk_index').where('import_id', '=', importId).execute()).length;

async function duplicateEmails(tenant: Tenant) {
  const { rows } = await sql<{ email: string }>`
    select lower(email) as email from people where workspace_id = ${tenant.workspaceId} and deleted_at is null group by lower(email) having count(*) > 1
  `.execute(service.deps.db);
  return rows;
}

/**
 * Whether another session holds the batch lock of the import's batch starting at `from`, waiting
 * up to two seconds for one to take it (PostgreSQL).
 */
async function batchLockHeldElsewhere(importId: string, from: number): Promise<boolean> {
  for (let attempt = 0; attempt < 40; attempt++) {
    const { rows } = await sql<{ held: number }>`
      select count(*)::int as held from pg_locks
      where locktype = 'advisory' and objsubid = 2 and granted and pid <> pg_backend_pid()
        and classid::bigint = (hashtext(${`import-batch:${importId}`})::bigint & 4294967295) and objid = ${from}
    `.execute(service.deps.db);
    if (rows[0]!.held > 0) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return false;
}

describe('the import job', () => {
  it('resumes after a crash between batches: every row once, none lost, no duplicates', async () => {
    const start = new Date('2026-12-01T00:00:00.000Z');
    await setClock(start);
    const tenant = await createTenant(service);
    const existing = await createPerson(service, tenant, { firstName: 'Before' });
    const emails = Array.from({ length: 35 }, (_, index) => uniqueEmail(`row${index + 1}`));
    emails[4] = existing.email.toUpperCase();
    emails[11] = 'broken-address';
    emails[29] = emails[2]!;
    const rows = emails.map((email, index) => [email, `Name ${index + 1}`]);
    const importId = await startImport(service, tenant, csvOf([['email', 'firstName'], ...rows]));

    const crashing = importRunner({ batchSize: 10, afterBatch: (id, batch) => {
      if (id === importId && batch === 2) throw new Error('simulated crash after the second batch');
    } });
    const first = await crashing.runDue(own(tenant));
    expect(first.jobs).toMatchObject([{ outcome: 'retrying', error: 'simulated crash after the second batch' }]);
    expect(await readImport(service, tenant, importId)).toEqual({
      importId,
      status: 'RUNNING',
      rowsTotal: 20,
      rowsImported: 19,
      rowsFailed: 1,
      // Data row 12 is the file's row 13: the header is row 1.
      errors: [{ row: 13, message: 'email is not a valid email address' }],
      lastRow: 21,
    });
    const midway = await peopleByEmail(service, tenant.workspaceId);
    // The existing person, and the 18 new people of rows 1-20 (row 5 updated the existing one, row 12 failed).
    expect(midway.size).toBe(19);
    expect(midway.get(existing.email.toLowerCase())!.first_name).toBe('Name 5');
    expect(midway.has(emails[20]!)).toBe(false);

    // The retry's backoff has passed: another runner picks the import up where it stopped.
    await setClock(later(start, 3600));
    await importRunner().runDue(own(tenant));
    expect(await readImport(service, tenant, importId)).toEqual({
      importId,
      status: 'COMPLETED',
      rowsTotal: 35,
      rowsImported: 34,
      rowsFailed: 1,
      errors: [{ row: 13, message: 'email is not a valid email address' }],
      lastRow: 36,
    });
    expect(await jobOf(importId)).toMatchObject({ state: 'completed', attempts: 2 });
    const people = await peopleByEmail(service, tenant.workspaceId);
    const expected = new Set([existing.email.toLowerCase(), ...emails.filter((email) => email.includes('@')).map((email) => email.toLowerCase())]);
    expect(new Set(people.keys())).toEqual(expected);
    expect(people.size).toBe(33);
    expect(await duplicateEmails(tenant)).toEqual([]);
    // Row 30 repeated row 3's email after the crash: an update, not a second person.
    expect(people.get(emails[2]!)!.first_name).toBe('Name 30');
    expect(people.get(emails[34]!)!.first_name).toBe('Name 35');
    expect(await chunkCount(importId)).toBe(0);
  });

  it.each([
    ['a budget no batch fits: the least rows (10)', 1e-6, 10],
    ['a budget every batch fits: batchSize (60)', 1e6, 60],
  ] as const)('sizes batches by a budget of time (the embedded store), with %s; the file parsed in slices of 64 bytes; every row once', async (_what, batchBudgetMs, size) => {
    await setClock(new Date('2026-12-04T00:00:00.000Z'));
    const tenant = await createTenant(service);
    const emails = Array.from({ length: 175 }, (_, index) => uniqueEmail(`sized${index + 1}`));
    const importId = await startImport(service, tenant, csvOf([['email', 'firstName'], ...emails.map((email, index) => [email, `Name ${index + 1}`])]));
    const batches: number[] = [];
    await importRunner({ batchSize: 60, batchBudgetMs, parseSliceBytes: 64, onRowsCommitted: (rows) => batches.push(rows.imported + rows.failed) }).runDue(own(tenant));
    // The first batch has 50 rows; the second fills while the first commits, before its time is
    // known (between 10 and 60); from the third on, each has the size the budget gives (the last the rest).
    expect(batches[0]).toBe(50);
    expect(batches.reduce((sum, rows) => sum + rows, 0)).toBe(175);
    expect(batches.length).toBeGreaterThanOrEqual(4);
    expect(batches.slice(2, -1).every((rows) => rows === size)).toBe(true);
    expect(batches.at(-1)).toBeLessThanOrEqual(size);
    expect(await readImport(service, tenant, importId)).toMatchObject({ status: 'COMPLETED', rowsTotal: 175, rowsImported: 175, rowsFailed: 0 });
    const people = await peopleByEmail(service, tenant.workspaceId);
    expect(new Set(people.keys())).toEqual(new Set(emails.map((email) => email.toLowerCase())));
    expect(people.get(emails[174]!.toLowerCase())!.first_name).toBe('Name 175');
  });

  it('writes two batches at once yet commits them in order: a crash keeps exactly the batches before it, and a later row still wins', async () => {
    const start = new Date('2026-12-07T00:00:00.000Z');
    await setClock(start);
    const tenant = await createTenant(service);
    const populationId = await createPopulation(service, tenant);
    const emails = Array.from({ length: 60 }, (_, index) => uniqueEmail(`pair${index + 1}`));
    // Row 25 (the third batch) repeats row 18's email (the second): that batch waits for the one
    // before it. Row 45 (the fifth) repeats row 12's, two batches apart.
    emails[24] = emails[17]!.toUpperCase();
    emails[44] = emails[11]!;
    const rows = emails.map((email, index) => [email, `Name ${index + 1}`]);
    const importId = await startImport(service, tenant, csvOf([['email', 'firstName'], ...rows]), { populationId });

    let fifthWasWriting = false;
    const crashing = importRunner({ batchSize: 10, concurrentBatches: 2, afterBatch: async (id, batch) => {
      if (id !== importId || batch !== 4) return;
      // The fifth batch (from offset 40) is written beside the fourth: on PostgreSQL its
      // transaction holds its batch lock, waiting to commit after this one is told of.
      if (storeKind === 'postgres') fifthWasWriting = await batchLockHeldElsewhere(importId, 40);
      throw new Error('simulated crash after the fourth batch');
    } });
    expect((await crashing.runDue(own(tenant))).jobs).toMatchObject([{ outcome: 'retrying', error: 'simulated crash after the fourth batch' }]);
    if (storeKind === 'postgres') expect(fifthWasWriting).toBe(true);
    expect(await readImport(service, tenant, importId)).toMatchObject({ status: 'RUNNING', rowsTotal: 40, rowsImported: 40, rowsFailed: 0 });
    const midway = await peopleByEmail(service, tenant.workspaceId);
    // Rows 1-40 are 39 people (row 25 updated row 18's); nothing of the fifth batch is left.
    expect(new Set(midway.keys())).toEqual(new Set(emails.slice(0, 40).map((email) => email.toLowerCase())));
    expect(midway.get(emails[17]!.toLowerCase())!.first_name).toBe('Name 25');
    expect(midway.get(emails[11]!)!.first_name).toBe('Name 12');

    await setClock(later(start, 3600));
    await importRunner({ batchSize: 10, concurrentBatches: 2 }).runDue(own(tenant));
    expect(await readImport(service, tenant, importId)).toEqual({ importId, status: 'COMPLETED', rowsTotal: 60, rowsImported: 60, rowsFailed: 0, errors: [], lastRow: 61 });
    const people = await peopleByEmail(service, tenant.workspaceId);
    expect(people.size).toBe(58);
    expect(await duplicateEmails(tenant)).toEqual([]);
    expect(people.get(emails[11]!)!.first_name).toBe('Name 45');
    expect(people.get(emails[59]!)!.first_name).toBe('Name 60');
    const members = await service.deps.db.selectFrom('population_members').select('person_id').where('workspace_id', '=', tenant.workspaceId).where('population_id', '=', populationId).execute();
    expect(new Set(members.map((member) => member.person_id))).toEqual(new Set([...people.values()].map((person) => person.person_id)));
    expect(members).toHaveLength(58);
  });

  // 2 s alone; 15-30 s in a full PostgreSQL run, where its ANALYZE of people (the import's, with one
  // planner statistics object per custom property of every file's workspaces) waits on and holds up
  // the other files' property creations for people's SHARE UPDATE EXCLUSIVE lock.
  it('resumes an import of a unique property after a crash: each value claimed once, into the population, taken values refused by row', async () => {
    const start = new Date('2026-12-05T00:00:00.000Z');
    await setClock(start);
    const tenant = await createTenant(service);
    const { Code } = await createProperties(service, tenant, [{ name: 'Code', propertyType: 'STRING', isUnique: true }]);
    const populationId = await createPopulation(service, tenant);
    const existing = await createPerson(service, tenant, { firstName: 'Before', properties: { [Code!]: 'OLD-1' } });
    const holder = await createPerson(service, tenant, { properties: { [Code!]: 'HELD' } });
    const emails = Array.from({ length: 30 }, (_, index) => uniqueEmail(`code${index + 1}`));
    const codes = emails.map((_, index) => `C-${index + 1}`);
    emails[1] = existing.email.toUpperCase();
    codes[8] = 'HELD';
    // Row 22 asks for row 3's value (claimed in an earlier batch, before the crash); row 27 gives
    // row 5's person a new value, which frees the old one.
    codes[21] = codes[2]!;
    emails[26] = emails[4]!;
    const rows = emails.map((email, index) => [email, `Name ${index + 1}`, codes[index]!]);
    const importId = await startImport(service, tenant, csvOf([['email', 'firstName', 'Code'], ...rows]), { populationId });

    const crashing = importRunner({ batchSize: 5, afterBatch: (_id, batch) => {
      if (batch === 3) throw new Error('simulated crash after the third batch');
    } });
    expect((await crashing.runDue(own(tenant))).jobs).toMatchObject([{ outcome: 'retrying' }]);
    expect(await readImport(service, tenant, importId)).toMatchObject({ status: 'RUNNING', rowsTotal: 15, rowsImported: 14, rowsFailed: 1 });

    await setClock(later(start, 3600));
    await importRunner({ batchSize: 5 }).runDue(own(tenant));
    const taken = 'Code: another person already has this value of a unique property';
    expect(await readImport(service, tenant, importId)).toEqual({
      importId,
      status: 'COMPLETED',
      rowsTotal: 30,
      rowsImported: 28,
      rowsFailed: 2,
      // Data rows 9 and 22, under the header.
      errors: [{ row: 10, message: taken }, { row: 23, message: taken }],
      lastRow: 31,
    });
    const people = await peopleByEmail(service, tenant.workspaceId);
    // The two people made before, and the 26 new people of rows 1-30 (row 2 updated the existing
    // one, rows 9 and 22 were refused, row 27 repeated row 5's email).
    expect(people.size).toBe(28);
    expect(await duplicateEmails(tenant)).toEqual([]);
    expect(people.get(existing.email.toLowerCase())).toMatchObject({ person_id: existing.personId, first_name: 'Name 2', properties: { [Code!]: 'C-2' } });
    expect(people.get(emails[4]!)).toMatchObject({ first_name: 'Name 27', properties: { [Code!]: 'C-27' } });
    expect(people.has(emails[8]!)).toBe(false);

    const claims = await service.deps.db.selectFrom('person_unique_values').select(['value_key', 'person_id']).where('workspace_id', '=', tenant.workspaceId).execute();
    const holderOf = new Map(claims.map((claim) => [claim.value_key, claim.person_id]));
    // Every live person's value is claimed by them, and nothing else is claimed.
    const expected = new Map([...people.values()].map((person) => [String((person.properties as Record<string, unknown>)[Code!]), person.person_id]));
    expect(holderOf).toEqual(expected);
    expect(holderOf.get('HELD')).toBe(holder.personId);
    expect(holderOf.has('OLD-1')).toBe(false);
    expect(holderOf.has('C-5')).toBe(false);

    // Every person a row went into, new or existing, joined the population, once.
    const members = await service.deps.db.selectFrom('population_members').select('person_id').where('workspace_id', '=', tenant.workspaceId).where('population_id', '=', populationId).execute();
    expect(new Set(members.map((member) => member.person_id))).toEqual(new Set([...people.values()].filter((person) => person.person_id !== holder.personId).map((person) => person.person_id)));
    expect(members).toHaveLength(27);
  }, 120_000);

  it('reads FAILED once its job runs out of attempts, keeping the rows it committed', async () => {
    let now = new Date('2026-12-02T00:00:00.000Z');
    await setClock(now);
    const tenant = await createTenant(service);
    const rows = Array.from({ length: 40 }, (_, index) => [uniqueEmail(`fail${index + 1}`)]);
    const importId = await startImport(service, tenant, csvOf([['email'], ...rows]));
    const failing = importRunner({ batchSize: 5, afterBatch: (id) => {
      if (id === importId) throw new Error('simulated failure after each batch');
    } });
    const outcomes: string[] = [];
    for (let attempt = 1; attempt <= 5; attempt++) {
      const report = await failing.runDue(own(tenant));
      outcomes.push(...report.jobs.map((run) => run.outcome));
      // Past the backoff (30 s, doubling), so the next drain retries.
      now = later(now, 3600);
      await setClock(now);
    }
    expect(outcomes).toEqual(['retrying', 'retrying', 'retrying', 'retrying', 'failed']);
    expect(await readImport(service, tenant, importId)).toEqual({
      importId,
      status: 'FAILED',
      rowsTotal: 25,
      rowsImported: 25,
      rowsFailed: 0,
      errors: [],
      lastRow: 26,
      failureReason: 'Its background work failed 5 times; the last time: simulated failure after each batch',
    });
    expect(await jobOf(importId)).toMatchObject({ state: 'failed', attempts: 5 });
    expect(await chunkCount(importId)).toBe(0);
    expect((await peopleByEmail(service, tenant.workspaceId)).size).toBe(25);
    // Nothing runs it again.
    expect((await importRunner().runDue(own(tenant))).jobs).toEqual([]);
    expect((await readImport(service, tenant, importId)).status).toBe('FAILED');
  });

  it('reads FAILED when the runner dies on the last attempt, and a late wake-up writes nothing', async () => {
    const start = new Date('2026-12-03T00:00:00.000Z');
    await setClock(start);
    const tenant = await createTenant(service);
    const rows = Array.from({ length: 20 }, (_, index) => [uniqueEmail(`stall${index + 1}`)]);
    const importId = await startImport(service, tenant, csvOf([['email'], ...rows]));
    // This attempt is the last one.
    await service.deps.db.updateTable('jobs').set({ max_attempts: 1 }).where('job_id', '=', (await jobOf(importId)).job_id).execute();

    let stalled!: () => void;
    let reached!: () => void;
    const atFirstBatch = new Promise<void>((resolve) => (reached = resolve));
    const wakeUp = new Promise<void>((resolve) => (stalled = resolve));
    const stalling = importRunner({ batchSize: 5, afterBatch: async (id, batch) => {
      if (id !== importId || batch !== 1) return;
      reached();
      await wakeUp;
    } });
    const stalledDrain = stalling.runDue(own(tenant));
    await atFirstBatch;
    expect(await readImport(service, tenant, importId)).toMatchObject({ status: 'RUNNING', rowsImported: 5 });

    // The lease (60 s) lapses with no attempts left: the next drain fails the job, and the
    // recurring sweep closes the import and drops its stored file.
    await setClock(later(start, 120));
    await importRunner().runDue(own(tenant));
    expect(await jobOf(importId)).toMatchObject({ state: 'failed', attempts: 1 });
    expect(await readImport(service, tenant, importId)).toEqual({
      importId,
      status: 'FAILED',
      rowsTotal: 5,
      rowsImported: 5,
      rowsFailed: 0,
      errors: [],
      lastRow: 6,
      failureReason: 'Its background work failed for good',
    });
    expect(await chunkCount(importId)).toBe(1);
    expect(await closeAbandonedImports(service.deps.db, own(tenant))).toBe(1);
    expect(await chunkCount(importId)).toBe(0);
    expect(await service.deps.db.selectFrom('imports').select('status').where('import_id', '=', importId).executeTakeFirstOrThrow()).toEqual({ status: 'FAILED' });

    stalled();
    const report = await stalledDrain;
    expect(report.jobs).toMatchObject([{ outcome: 'lease-lost' }]);
    expect((await peopleByEmail(service, tenant.workspaceId)).size).toBe(5);
    expect(await readImport(service, tenant, importId)).toMatchObject({ status: 'FAILED', rowsImported: 5 });
  });

  it('counts the row where the file breaks once when a stalled run wakes up after a takeover', async () => {
    const start = new Date('2026-12-06T00:00:00.000Z');
    await setClock(start);
    const tenant = await createTenant(service);
    const [first, second] = [uniqueEmail('broken1'), uniqueEmail('broken2')];
    const importId = await startImport(service, tenant, `email,firstName\n${first},One\n${second},Two\n${uniqueEmail('broken3')},"Three\n`);

    let wake!: () => void;
    let reached!: () => void;
    const atLastBatch = new Promise<void>((resolve) => (reached = resolve));
    const wakeUp = new Promise<void>((resolve) => (wake = resolve));
    // The two good rows are one batch; the run stalls after committing it, before it records the broken row.
    const stalling = importRunner({ batchSize: 5, afterBatch: async () => {
      reached();
      await wakeUp;
    } });
    const stalledDrain = stalling.runDue(own(tenant));
    await atLastBatch;

    await setClock(later(start, 120));
    await importRunner({}).runDue(own(tenant));
    const failed = {
      importId,
      status: 'FAILED',
      rowsTotal: 3,
      rowsImported: 2,
      rowsFailed: 1,
      errors: [{ row: 4, message: expect.stringMatching(/^Row 4 \(line 4 of the file\): the cell in "firstName" \(column 2, B\) opens a quote that is never closed/) }],
      lastRow: 4,
      failureReason: expect.stringMatching(/row 4 and the rows after it were not imported$/),
    };
    expect(await readImport(service, tenant, importId)).toEqual(failed);

    wake();
    const report = await stalledDrain;
    expect(report.jobs).toMatchObject([{ outcome: 'lease-lost' }]);
    expect(await readImport(service, tenant, importId)).toEqual(failed);
  });

  it('lets another runner take over a stalled run, which then stops without writing', async () => {
    const start = new Date('2026-12-04T00:00:00.000Z');
    await setClock(start);
    const tenant = await createTenant(service);
    const rows = Array.from({ length: 12 }, (_, index) => [uniqueEmail(`takeover${index + 1}`), `First ${index + 1}`]);
    const importId = await startImport(service, tenant, csvOf([['email', 'firstName'], ...rows]));

    let wake!: () => void;
    let reached!: () => void;
    const atFirstBatch = new Promise<void>((resolve) => (reached = resolve));
    const wakeUp = new Promise<void>((resolve) => (wake = resolve));
    const stalling = importRunner({ batchSize: 4, afterBatch: async (id, batch) => {
      if (id !== importId || batch !== 1) return;
      reached();
      await wakeUp;
    } });
    const stalledDrain = stalling.runDue(own(tenant));
    await atFirstBatch;

    await setClock(later(start, 120));
    await importRunner().runDue(own(tenant));
    expect(await readImport(service, tenant, importId)).toMatchObject({ status: 'COMPLETED', rowsTotal: 12, rowsImported: 12 });
    expect(await jobOf(importId)).toMatchObject({ state: 'completed', attempts: 2 });

    wake();
    await stalledDrain;
    expect(await readImport(service, tenant, importId)).toMatchObject({ status: 'COMPLETED', rowsTotal: 12, rowsImported: 12, rowsFailed: 0 });
    expect((await peopleByEmail(service, tenant.workspaceId)).size).toBe(12);
    expect(await duplicateEmails(tenant)).toEqual([]);
  });
});
