import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestService, storeKind, testDatabaseUrl, type TestService } from '../../../test/harness.js';
import { createPrivatePostgresDatabase } from '../../../test/private-database.js';
import { type RunningServer, startServer } from '../../../test/processes.js';
import { type Database, openDatabase } from '../../db/database.js';
import { migrateToLatest } from '../../db/migrate.js';
import { createWorkspace } from '../../families/workspaces/service.js';

/**
 * A kill -9 of the server right after a write's response (and once in the middle of a CSV import)
 * loses nothing the search totals count: the change log is written in the write's own transaction,
 * so the restarted server's counts, derived from the database again, count every write, and so
 * does (on PostgreSQL) another instance that stayed up. Every total is checked against SQL's: a
 * SEARCH_COUNTS=off service on the same store (opened here once the server is gone, as PGlite's
 * data directory is locked while a server runs), and plain count(*) statements.
 */

/** kill -9, and wait until the process is gone. */
async function crash(server: RunningServer) {
  server.child.kill('SIGKILL');
  expect((await server.exited).signal).toBe('SIGKILL');
}

describe(`search counts after kill -9 (${storeKind} store)`, () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'recruit-ops-counts-crash-'));
  // The server's store: a DATA_DIR, or a PostgreSQL database of its own beside the run's (the
  // server runs jobs across every workspace, which must not reach other files' rows).
  let storage: Record<string, string> = { DATA_DIR: dataDir };
  let databaseUrl: string | undefined;
  let dropDatabase: (() => Promise<void>) | undefined;
  let token: string;
  let server: RunningServer | undefined;
  /** On PostgreSQL: an instance that stays up through the crashes (counts on), and one with SEARCH_COUNTS=off. */
  let survivor: { pool: Database; service: TestService } | undefined;
  let sqlOnly: { pool: Database; service: TestService } | undefined;

  let ids: { colour: string; age: string; devices: string };
  let studyId: string;
  const personIds: string[] = [];
  const participantIds: string[] = [];

  beforeAll(async () => {
    if (testDatabaseUrl) {
      const created = await createPrivatePostgresDatabase(testDatabaseUrl);
      dropDatabase = created.drop;
      databaseUrl = created.url;
      storage = { DATABASE_URL: created.url };
    }
    // The workspace is made here, as `cli workspace create` makes it (a child process more would cost seconds).
    const store = databaseUrl ? await openDatabase({ databaseUrl, poolSize: 1 }) : await openDatabase({ dataDir });
    try {
      await migrateToLatest(store.db);
      token = (await createWorkspace(store.db, { name: 'Counts crash', email: 'crash@example.test' })).token;
    } finally {
      await store.close();
    }
  }, 60_000);

  afterAll(async () => {
    if (server && server.child.exitCode === null && server.child.signalCode === null) {
      server.child.kill('SIGKILL');
      await server.exited;
    }
    for (const instance of [survivor, sqlOnly]) {
      await instance?.service.stop();
      await instance?.pool.close();
    }
    rmSync(dataDir, { recursive: true, force: true });
    await dropDatabase?.();
  });

  async function api(target: RunningServer, method: string, url: string, body?: unknown, contentType = 'application/json') {
    const response = await fetch(`http://127.0.0.1:${target.port}/v1${url}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': contentType }) },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, text, json: <T>() => JSON.parse(text) as T };
  }

  async function ok<T>(target: RunningServer, method: string, url: string, body?: unknown, status = 200): Promise<T> {
    const response = await api(target, method, url, body);
    expect(response.status, `${method} ${url}: ${response.text}`).toBe(status);
    return response.json<T>();
  }

  const custom = (key: keyof typeof ids) => ({ propertyId: ids[key] });
  const participant = (propertyName: string) => ({ propertyGroup: 'PARTICIPANT', propertyName });
  /** What the test wrote, as far as the searches read it: the expected totals before the import. */
  interface Modelled {
    email: string;
    colour?: string;
    age?: number;
    devices?: string[];
    live: boolean;
    /** The participant's status when the person is in the study. */
    status?: string;
  }
  const model: Modelled[] = [];

  const searches = (): { url: string; filter?: unknown; matches: (person: Modelled) => boolean }[] => {
    const people = '/people/search';
    const e1 = `/studies/${studyId}/participants/search`;
    const inStudy = (person: Modelled) => person.status !== undefined;
    return [
      { url: people, matches: () => true },
      { url: people, filter: { filters: [{ property: custom('colour'), comparison: 'IS_ANY_OF', value: ['Red'] }] }, matches: (p) => p.colour === 'Red' },
      { url: people, filter: { filters: [{ property: custom('colour'), comparison: 'IS_NONE_OF', value: ['Green'] }] }, matches: (p) => p.colour !== 'Green' },
      { url: people, filter: { filters: [{ property: custom('age'), comparison: 'GREATER_THAN', value: 40 }] }, matches: (p) => (p.age ?? 0) > 40 },
      { url: people, filter: { filters: [{ property: custom('devices'), comparison: 'HAS_ANY_OF', value: ['Web'] }] }, matches: (p) => p.devices?.includes('Web') === true },
      {
        url: people,
        filter: { operator: 'OR', filters: [{ property: custom('age'), comparison: 'LESS_THAN', value: 25 }, { property: custom('colour'), comparison: 'IS_EMPTY' }] },
        matches: (p) => (p.age !== undefined && p.age < 25) || p.colour === undefined,
      },
      {
        url: people,
        filter: { filters: [{ property: custom('colour'), comparison: 'IS_ANY_OF', value: ['Blue'] }, { property: { propertyGroup: 'PERSON', propertyName: 'EMAIL' }, comparison: 'CONTAINS', value: 'imported' }] },
        matches: (p) => p.colour === 'Blue' && p.email.includes('imported'),
      },
      { url: e1, matches: inStudy },
      { url: e1, filter: { filters: [{ property: participant('STATUS'), comparison: 'IS_ANY_OF', value: ['INVITED'] }] }, matches: (p) => p.status === 'INVITED' },
      {
        url: e1,
        filter: { filters: [{ property: participant('STATUS'), comparison: 'IS_NONE_OF', value: ['INVITED'] }, { property: custom('age'), comparison: 'GREATER_THAN_OR_EQUAL', value: 30 }] },
        matches: (p) => inStudy(p) && p.status !== 'INVITED' && (p.age ?? 0) >= 30,
      },
    ];
  };
  const expected = () => searches().map((search) => model.filter((person) => person.live && search.matches(person)).length);

  const body = (filter: unknown) => ({ ...(filter === undefined ? {} : { filter }), pageInfo: { size: 1 } });

  async function serverTotals(target: RunningServer): Promise<number[]> {
    const totals: number[] = [];
    for (const search of searches()) totals.push((await ok<{ total: number }>(target, 'POST', search.url, body(search.filter))).total);
    return totals;
  }

  async function serviceTotals(service: TestService): Promise<number[]> {
    const totals: number[] = [];
    for (const search of searches()) {
      const response = await call(service, 'POST', search.url, { token, body: body(search.filter) });
      expect(response.statusCode, response.body).toBe(200);
      totals.push(response.json<{ total: number }>().total);
    }
    return totals;
  }

  /** The server's searches, made until its counts answer them (it prepares them in the background after the first). */
  async function warm(target: RunningServer) {
    await serverTotals(target);
    await sleep(300);
    return serverTotals(target);
  }

  /** Plain count(*): the live people, and the study's participants whose person is live. */
  async function plainCounts(db: Database['db']) {
    const { rows } = await sql<{ people: number; participants: number }>`
      select
        (select count(*) from people where deleted_at is null) as people,
        (select count(*) from participants as pt join people as p on p.workspace_id = pt.workspace_id and p.person_id = pt.person_id
          where pt.study_id = ${studyId} and p.deleted_at is null) as participants
    `.execute(db);
    return [Number(rows[0]!.people), Number(rows[0]!.participants)];
  }
  const unfiltered = (totals: number[]) => [totals[0], totals[7]];

  /** On PostgreSQL: the instance that stayed up counts what the crashed one wrote, by its counts, at once. */
  async function expectSurvivorCounts(what: string) {
    if (!survivor || !sqlOnly) return;
    const counts = survivor.service.deps.counts!;
    const before = { ...counts.answered };
    const seen = await serviceTotals(survivor.service);
    expect(counts.answered, `${what}: the survivor answered by its counts`).toEqual({ counts: before.counts + searches().length, sql: before.sql });
    expect(seen, what).toEqual(await serviceTotals(sqlOnly.service));
    expect(unfiltered(seen), `${what}: count(*)`).toEqual(await plainCounts(sqlOnly.pool.db));
  }


  async function createPerson(target: RunningServer, person: Omit<Modelled, 'live'>): Promise<string> {
    const properties: Record<string, unknown> = {};
    if (person.colour) properties[ids.colour] = person.colour;
    if (person.age !== undefined) properties[ids.age] = person.age;
    if (person.devices) properties[ids.devices] = person.devices;
    const created = await ok<{ personId: string }>(target, 'POST', '/people', { email: person.email, properties }, 201);
    model.push({ ...person, live: true });
    personIds.push(created.personId);
    return created.personId;
  }

  // The searches that check the counts, many in a row from one token on a loaded machine, would
  // meet the rate limit and the workspace's search time budget (429): both are lifted here, as in
  // test/harness.ts; their own tests set them.
  const liftedLimits = { RATE_LIMIT_MAX: '100000', SEARCH_BUDGET_MS_PER_SECOND: '0' };

  it('loses no write to a kill -9 right after its response, or in the middle of an import', { timeout: 180_000 }, async () => {
    // 1. A server with the fixture; its counts warm, writes of every kind, and kill -9 right after the last response.
    server = await startServer({ ...storage, ...liftedLimits, JOBS: 'on', JOB_POLL_SECONDS: '0.1' });
    const created = await ok<{ results: { personProperty: { propertyId: string; name: string } }[] }>(server, 'POST', '/properties/import', [
      { name: 'Colour', propertyType: 'SINGLE_SELECT', propertyOptions: [{ name: 'Red' }, { name: 'Green' }, { name: 'Blue' }] },
      { name: 'Age', propertyType: 'NUMBER' },
      { name: 'Devices', propertyType: 'MULTI_SELECT', propertyOptions: [{ name: 'iOS' }, { name: 'Web' }] },
    ]);
    const byName = Object.fromEntries(created.results.map((result) => [result.personProperty.name, result.personProperty.propertyId]));
    ids = { colour: byName.Colour!, age: byName.Age!, devices: byName.Devices! };
    const colours = ['Red', 'Green', 'Blue', undefined];
    for (let index = 0; index < 16; index++) {
      await createPerson(server, {
        email: `person${index}@example.test`,
        colour: colours[index % 4],
        age: 18 + index * 3,
        ...(index % 3 === 0 ? { devices: index % 2 === 0 ? ['Web'] : ['iOS', 'Web'] } : {}),
      });
    }
    studyId = (await ok<{ studyId: string }>(server, 'POST', '/studies', { studyType: 'INTERVIEWS', recruitmentStrategy: 'IN_SERVICE', studyPlan: { name: 'Crash' } }, 201)).studyId;
    await ok(server, 'PUT', `/studies/${studyId}/screener`, { questions: [{ name: 'How often do you shop online?', type: 'SHORT_FORM', isRequired: true }] });
    await ok(server, 'POST', `/studies/${studyId}/launch`);
    const added = await ok<{ results: { participantId: string }[] }>(server, 'POST', `/studies/${studyId}/participants`, { personIds: personIds.slice(0, 10) });
    participantIds.push(...added.results.map((result) => result.participantId));
    for (const person of model.slice(0, 10)) person.status = 'NOT_STARTED';

    if (databaseUrl) {
      const pool = await openDatabase({ databaseUrl, poolSize: 3, applicationName: 'counts-survivor' });
      survivor = { pool, service: await startTestService({}, { database: pool }) };
      const offPool = await openDatabase({ databaseUrl, poolSize: 3, applicationName: 'counts-sql-only' });
      sqlOnly = { pool: offPool, service: await startTestService({ searchCounts: false }, { database: offPool }) };
      const counts = survivor.service.deps.counts!;
      for (let round = 0; round < 10; round++) {
        const before = counts.answered.counts;
        await serviceTotals(survivor.service);
        await counts.settled();
        if (counts.answered.counts - before === searches().length) break;
      }
      await expectSurvivorCounts('warmed');
    }

    expect(await warm(server)).toEqual(expected());
    await createPerson(server, { email: 'late@example.test', colour: 'Red', age: 50 });
    await ok(server, 'PATCH', `/people/${personIds[1]}`, { properties: { [ids.colour]: 'Red', [ids.age]: 90, [ids.devices]: ['Web'] } });
    Object.assign(model[1]!, { colour: 'Red', age: 90, devices: ['Web'] });
    for (const index of [0, 1]) {
      await ok(server, 'PATCH', `/studies/${studyId}/participants/${participantIds[index]}`, { status: 'INVITED' });
      model[index]!.status = 'INVITED';
    }
    await ok(server, 'POST', `/studies/${studyId}/participants`, { personIds: personIds.slice(10, 13) });
    for (const person of model.slice(10, 13)) person.status = 'NOT_STARTED';
    await ok(server, 'DELETE', `/people/${personIds[2]}`);
    model[2]!.live = false;
    await crash(server);
    await expectSurvivorCounts('after the first crash');

    // 2. Restarted on the same store: every write is counted. Then a CSV import of several batches
    // (5,000 rows each on PostgreSQL; on the embedded store sized by time, 10 to 500 rows), killed once its first batch has committed. On PostgreSQL two batches are
    // written at once and the second commits right after the first, so the file holds five: the
    // crash lands while the third is being written.
    server = await startServer({ ...storage, ...liftedLimits, JOBS: 'on', JOB_POLL_SECONDS: '0.1' });
    const restarted = await warm(server);
    expect(restarted).toEqual(expected());
    expect([restarted[0], restarted[7], restarted[8]]).toEqual([16, 12, 2]);
    const rows = ['Email,Colour,Age'];
    // The file's first rows update people who exist; the rest are new people.
    for (let index = 3; index < 8; index++) rows.push(`person${index}@example.test,Blue,${70 + index}`);
    for (let index = 0; index < 20_000; index++) rows.push(`imported${index}@example.test,${['Red', 'Green', 'Blue'][index % 3]},${20 + (index % 50)}`);
    const started = await api(server, 'POST', '/imports', `${rows.join('\n')}\n`, 'text/csv');
    expect(started.status, started.text).toBe(202);
    const importId = started.json<{ importId: string }>().importId;
    let progress = { status: 'QUEUED', rowsImported: 0 };
    for (let attempt = 0; attempt < 3000 && progress.rowsImported === 0 && progress.status !== 'COMPLETED'; attempt++) {
      progress = await ok<typeof progress>(server, 'GET', `/imports/${importId}`);
      if (progress.rowsImported === 0) await sleep(10);
    }
    await crash(server);
    expect(progress.rowsImported, 'a batch had committed').toBeGreaterThan(0);
    expect(progress.status, 'the import had not finished').not.toBe('COMPLETED');
    await expectSurvivorCounts('after the crash in the middle of an import');

    // 3. Restarted once more, without jobs (the import stays where the crash left it): the counts are SQL's.
    server = await startServer({ ...storage, ...liftedLimits, JOBS: 'off' });
    const final = await warm(server);
    expect(await serverTotals(server)).toEqual(final);
    // At least the first batch went in (5 of its rows updated people who were there already), not the last.
    const firstBatch = storeKind === 'postgres' ? 5000 : 10;
    expect(final[0]).toBeGreaterThanOrEqual(16 + firstBatch - 5);
    expect(final[0]).toBeLessThan(16 + 20_000);
    server.child.kill('SIGTERM');
    expect(await server.exited).toEqual({ code: 0, signal: null });

    const store = databaseUrl ? await openDatabase({ databaseUrl, poolSize: 2 }) : await openDatabase({ dataDir });
    try {
      const check = await startTestService({ searchCounts: false }, { database: store });
      try {
        expect(final, 'the restarted server’s totals are SQL’s').toEqual(await serviceTotals(check));
      } finally {
        await check.stop();
      }
      expect(unfiltered(final), 'count(*)').toEqual(await plainCounts(store.db));
      // Everything the import committed before the crash is counted, and only that.
      const { rows: imported } = await sql<{ count: number }>`select count(*) as count from people where email like 'imported%' and deleted_at is null`.execute(store.db);
      expect(final[0]).toBe(16 + Number(imported[0]!.count));
    } finally {
      await store.close();
    }
    await expectSurvivorCounts('at the end');
  });
});
