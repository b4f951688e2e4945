import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type Tenant, type TestService } from '../../../test/harness.js';
import { testDatabaseUrl } from '../../../test/harness.js';
import { addParticipants, createStudy, patchParticipant, type ParticipantResponse } from '../../../test/participants-factory.js';
import { createPerson, createProperties, type PersonResponse } from '../../../test/people-factory.js';
import { type Database, openDatabase } from '../../db/database.js';
import type { SearchCounts } from './index.js';

/**
 * The search counts of two instances, each with a pool of its own on one PostgreSQL database: a
 * write committed through one is counted by the other's very next search, answered by its counts
 * (no waiting, no background preparation), and every total is the one SQL counts (an instance with
 * SEARCH_COUNTS=off on the same database, and plain count(*) statements).
 */
describe.skipIf(!testDatabaseUrl)('search counts across instances (PostgreSQL)', () => {
  let poolA: Database;
  let poolB: Database;
  let a: TestService;
  let b: TestService;
  let off: TestService;
  let tenant: Tenant;
  let ids: Record<'Colour' | 'Age' | 'Devices', string>;
  let studyId: string;
  const people: PersonResponse[] = [];
  let participants: ParticipantResponse[] = [];

  const countsOf = (service: TestService): SearchCounts => service.deps.counts!;

  beforeAll(async () => {
    poolA = await openDatabase({ databaseUrl: testDatabaseUrl!, poolSize: 4, applicationName: 'counts-instance-a' });
    poolB = await openDatabase({ databaseUrl: testDatabaseUrl!, poolSize: 4, applicationName: 'counts-instance-b' });
    a = await startTestService({}, { database: poolA });
    b = await startTestService({}, { database: poolB });
    off = await startTestService({ searchCounts: false });
    expect(a.deps.counts).toBeDefined();
    expect(b.deps.counts).toBeDefined();
    expect(off.deps.counts).toBeUndefined();

    tenant = await createTenant(a, 'Counts across instances');
    const options = [{ name: 'Red' }, { name: 'Green' }, { name: 'Blue' }];
    ids = (await createProperties(a, tenant, [
      { name: 'Colour', propertyType: 'SINGLE_SELECT', propertyOptions: options },
      { name: 'Age', propertyType: 'NUMBER' },
      { name: 'Devices', propertyType: 'MULTI_SELECT', propertyOptions: [{ name: 'iOS' }, { name: 'Android' }, { name: 'Web' }] },
    ])) as typeof ids;
    const colours = ['Red', 'Green', 'Blue', null];
    const devices = [['iOS'], ['Android', 'Web'], [], ['iOS', 'Web'], null];
    for (let index = 0; index < 14; index++) {
      const properties: Record<string, unknown> = { [ids.Age]: 15 + index * 3 };
      if (colours[index % 4]) properties[ids.Colour] = colours[index % 4];
      if (devices[index % 5]) properties[ids.Devices] = devices[index % 5];
      people.push(await createPerson(a, tenant, { firstName: `P${index}`, email: `p${index}.${Date.now().toString(36)}@${index % 3 === 0 ? 'crowd' : 'solo'}.example.test`, properties }));
    }
    studyId = await createStudy(a, tenant, { studyType: 'INTERVIEWS', screener: true, launch: true });
    participants = await addParticipants(a, tenant, studyId, people.slice(0, 9).map((person) => person.personId));
  }, 60_000);

  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await off?.stop();
    await poolA?.close();
    await poolB?.close();
  });

  const custom = (key: keyof typeof ids) => ({ propertyId: ids[key] });
  const participant = (propertyName: string) => ({ propertyGroup: 'PARTICIPANT', propertyName });

  /** People searches: column leaves of each kind held, complements, groups, and a leaf SQL answers (an email's substring). */
  const peopleFilters = (): unknown[] => [
    undefined,
    { filters: [] },
    { filters: [{ property: custom('Colour'), comparison: 'IS_ANY_OF', value: ['Red'] }] },
    { filters: [{ property: custom('Colour'), comparison: 'IS_NONE_OF', value: ['Red', 'Blue'] }] },
    { filters: [{ property: custom('Colour'), comparison: 'IS_EMPTY' }] },
    { filters: [{ property: custom('Age'), comparison: 'GREATER_THAN', value: 30 }] },
    { filters: [{ property: custom('Age'), comparison: 'BETWEEN', value: [20, 40] }] },
    { filters: [{ property: custom('Devices'), comparison: 'HAS_ANY_OF', value: ['Web'] }] },
    { filters: [{ property: custom('Devices'), comparison: 'HAS_ALL_OF', value: ['iOS', 'Web'] }] },
    { filters: [{ property: custom('Devices'), comparison: 'IS_NOT_EMPTY' }] },
    {
      operator: 'OR',
      filters: [
        { property: custom('Age'), comparison: 'LESS_THAN_OR_EQUAL', value: 20 },
        { operator: 'AND', filters: [{ property: custom('Colour'), comparison: 'IS_ANY_OF', value: ['Green'] }, { property: custom('Devices'), comparison: 'HAS_NONE_OF', value: ['iOS'] }] },
      ],
    },
    { filters: [{ property: custom('Colour'), comparison: 'IS_ANY_OF', value: ['Red', 'Green'] }, { property: { propertyGroup: 'PERSON', propertyName: 'EMAIL' }, comparison: 'CONTAINS', value: '@crowd.' }] },
  ];

  /** E1 searches: the participant's own fields, with the person's columns and a SQL leaf. */
  const participantFilters = (): unknown[] => [
    undefined,
    { filters: [{ property: participant('STATUS'), comparison: 'IS_ANY_OF', value: ['INVITED'] }] },
    { filters: [{ property: participant('STATUS'), comparison: 'IS_NONE_OF', value: ['NOT_STARTED'] }] },
    { filters: [{ property: participant('STATE'), comparison: 'IS_ANY_OF', value: ['IN_PROGRESS'] }, { property: custom('Age'), comparison: 'GREATER_THAN_OR_EQUAL', value: 24 }] },
    { operator: 'OR', filters: [{ property: participant('STATUS'), comparison: 'IS_ANY_OF', value: ['INVITED'] }, { property: custom('Colour'), comparison: 'IS_ANY_OF', value: ['Blue'] }] },
    { filters: [{ property: participant('STUDY_NOTE'), comparison: 'IS_EMPTY' }, { property: { propertyGroup: 'PERSON', propertyName: 'EMAIL' }, comparison: 'CONTAINS', value: '@solo.' }] },
  ];

  async function total(service: TestService, url: string, filter: unknown): Promise<number> {
    const response = await call(service, 'POST', url, { token: tenant.token, body: { ...(filter === undefined ? {} : { filter }), pageInfo: { size: 2 } } });
    expect(response.statusCode, `${url} ${JSON.stringify(filter)}: ${response.body}`).toBe(200);
    return response.json<{ total: number }>().total;
  }

  /** Every search's total on `service`, people searches first. */
  async function totals(service: TestService): Promise<number[]> {
    const found: number[] = [];
    for (const filter of peopleFilters()) found.push(await total(service, '/people/search', filter));
    for (const filter of participantFilters()) found.push(await total(service, `/studies/${studyId}/participants/search`, filter));
    return found;
  }
  const searches = () => peopleFilters().length + participantFilters().length;

  /** Plain count(*) of the unfiltered searches: the live people, and the study's participants whose person is live. */
  async function sqlTotals(): Promise<{ people: number; participants: number }> {
    const { rows } = await sql<{ people: number; participants: number }>`
      select
        (select count(*) from people where workspace_id = ${tenant.workspaceId} and deleted_at is null) as people,
        (select count(*) from participants as pt join people as p on p.workspace_id = pt.workspace_id and p.person_id = pt.person_id
          where pt.workspace_id = ${tenant.workspaceId} and pt.study_id = ${studyId} and p.deleted_at is null) as participants
    `.execute(off.deps.db);
    return { people: Number(rows[0]!.people), participants: Number(rows[0]!.participants) };
  }

  /** Searches until every search of `service` is answered by its counts (each search prepares what it names, one preparation at a time). */
  async function warm(service: TestService) {
    const counts = countsOf(service);
    for (let round = 0; round < 10; round++) {
      const before = counts.answered.counts;
      await totals(service);
      await counts.settled();
      if (counts.answered.counts - before === searches()) return;
    }
    throw new Error(`the counts did not become ready: ${JSON.stringify(counts.answered)}`);
  }

  /**
   * B's next searches, made at once after a write through A: each answered by B's counts, and
   * equal to SQL's totals (the SEARCH_COUNTS=off instance's, and count(*)), as are A's.
   */
  async function expectCountedByB(what: string) {
    const counts = countsOf(b);
    const before = { ...counts.answered };
    const seenByB = await totals(b);
    expect(counts.answered, `${what}: B answered every search by its counts`).toEqual({ counts: before.counts + searches(), sql: before.sql });
    const bySql = await totals(off);
    expect(seenByB, what).toEqual(bySql);
    const plain = await sqlTotals();
    expect([seenByB[0], seenByB[peopleFilters().length]], `${what}: count(*)`).toEqual([plain.people, plain.participants]);
    const beforeA = countsOf(a).answered.counts;
    expect(await totals(a), `${what}: on A`).toEqual(bySql);
    expect(countsOf(a).answered.counts - beforeA, `${what}: A answered by its counts`).toBe(searches());
    return seenByB;
  }

  it('warms both instances: the first searches are SQL’s, the next ones the counts’', async () => {
    for (const service of [a, b]) {
      const counts = countsOf(service);
      const before = { ...counts.answered };
      await totals(service);
      expect(counts.answered.sql).toBeGreaterThan(before.sql);
      await warm(service);
      const warmed = counts.answered.counts;
      await totals(service);
      expect(counts.answered.counts - warmed).toBe(searches());
    }
    const seen = await expectCountedByB('after warming');
    // The fixture is not trivial: searches match some but not all.
    expect(seen[0]).toBe(14);
    expect(seen[peopleFilters().length]).toBe(9);
    expect(seen.some((count, index) => index > 1 && count > 0 && count < 14)).toBe(true);
  });

  it('counts a person created through A on B’s next search', async () => {
    people.push(await createPerson(a, tenant, { email: `new.${Date.now().toString(36)}@crowd.example.test`, properties: { [ids.Colour]: 'Red', [ids.Age]: 41, [ids.Devices]: ['iOS', 'Web'] } }));
    const seen = await expectCountedByB('person created');
    expect(seen[0]).toBe(15);
  });

  it('counts a property value changed through A on B’s next search', async () => {
    const response = await call(a, 'PATCH', `/people/${people[0]!.personId}`, { token: tenant.token, body: { properties: { [ids.Colour]: 'Green', [ids.Age]: 99, [ids.Devices]: ['Android'] } } });
    expect(response.statusCode, response.body).toBe(200);
    await expectCountedByB('values changed');
    const cleared = await call(a, 'PATCH', `/people/${people[1]!.personId}`, { token: tenant.token, body: { properties: { [ids.Colour]: null, [ids.Devices]: null } } });
    expect(cleared.statusCode, cleared.body).toBe(200);
    await expectCountedByB('values cleared');
  });

  it('counts a person deleted through A (a participant among them) on B’s next search', async () => {
    const response = await call(a, 'DELETE', `/people/${people[2]!.personId}`, { token: tenant.token });
    expect(response.statusCode, response.body).toBe(200);
    const seen = await expectCountedByB('person deleted');
    expect(seen[0]).toBe(14);
    expect(seen[peopleFilters().length]).toBe(8);
  });

  it('counts participant status moves and participants added through A on B’s next search', async () => {
    await patchParticipant(a, tenant, studyId, participants[3]!.participantId, { status: 'INVITED' });
    await patchParticipant(a, tenant, studyId, participants[4]!.participantId, { status: 'INVITED' });
    await expectCountedByB('status moved');
    await patchParticipant(a, tenant, studyId, participants[5]!.participantId, { note: 'call first' });
    await expectCountedByB('note set');
    const added = await addParticipants(a, tenant, studyId, people.slice(9).map((person) => person.personId));
    participants.push(...added);
    const seen = await expectCountedByB('participants added');
    expect(seen[peopleFilters().length]).toBe(8 + added.length);
  });

  it('counts a write made by plain SQL on A’s pool (the triggers log it, not the services)', async () => {
    await sql`
      update people set properties = properties || jsonb_build_object(${ids.Colour}::text, 'Blue', ${ids.Age}::text, 18)
      where workspace_id = ${tenant.workspaceId} and person_id = any(${[people[5]!.personId, people[6]!.personId]})
    `.execute(poolA.db);
    await expectCountedByB('hand-run update');
    await sql`delete from participants where workspace_id = ${tenant.workspaceId} and participant_id = ${participants[7]!.participantId}`.execute(poolA.db);
    const seen = await expectCountedByB('participant row deleted by hand');
    expect(seen[peopleFilters().length]).toBe(7 + (participants.length - 9));
  });

  it('counts several writes of one transaction, and none of a rolled-back one', async () => {
    await poolA.db.transaction().execute(async (transaction) => {
      await sql`update people set deleted_at = now() where workspace_id = ${tenant.workspaceId} and person_id = ${people[8]!.personId}`.execute(transaction);
      await sql`update participants set status = 'INVITED' where workspace_id = ${tenant.workspaceId} and participant_id = ${participants[0]!.participantId}`.execute(transaction);
    });
    await expectCountedByB('one transaction');
    await expect(
      poolA.db.transaction().execute(async (transaction) => {
        await sql`update people set deleted_at = now() where workspace_id = ${tenant.workspaceId}`.execute(transaction);
        throw new Error('rolled back');
      }),
    ).rejects.toThrow('rolled back');
    const seen = await expectCountedByB('rolled back');
    expect(seen[0]).toBeGreaterThan(10);
  });

  it('counts a write committed while B’s count of an earlier snapshot is open on its next search', async () => {
    // B's search runs while A's transaction is open and uncommitted: B counts without it, then with it.
    const counts = countsOf(b);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let written!: () => void;
    const wrote = new Promise<void>((resolve) => (written = resolve));
    const writing = poolA.db.transaction().execute(async (transaction) => {
      await createPersonRow(transaction);
      written();
      await held;
    });
    await wrote;
    const before = counts.answered.counts;
    const during = await totals(b);
    expect(during).toEqual(await totals(off));
    release();
    await writing;
    const after = await expectCountedByB('after the open transaction committed');
    expect(after[0]).toBe(during[0]! + 1);
    expect(counts.answered.counts - before).toBe(2 * searches());
  });

  it('applies a write once while an open transaction holds xmin back: the next searches read without the lock, and a newer write is still counted', async () => {
    await warm(a);
    const counts = countsOf(a);
    // A transaction with an xid, left open: every snapshot's xmin stays at or below it, so the
    // writes below sit above the watermark of every catch-up until it ends.
    const holder = await openDatabase({ databaseUrl: testDatabaseUrl!, poolSize: 1, applicationName: 'counts-xmin-holder' });
    const held = await holder.db.startTransaction().execute();
    try {
      await sql`select pg_current_xact_id()`.execute(held);
      const before = await total(a, '/people/search', undefined);
      people.push(await createPerson(a, tenant, { firstName: 'Above the watermark', email: `xmin.${Date.now().toString(36)}@solo.example.test` }));
      expect(await total(a, '/people/search', undefined)).toBe(before + 1);
      const paths = { ...counts.paths };
      for (let search = 0; search < 3; search++) expect(await total(a, '/people/search', undefined)).toBe(before + 1);
      expect(counts.paths, 'nothing new to apply: no lock').toEqual({ ...paths, lockFree: paths.lockFree + 3 });
      people.push(await createPerson(a, tenant, { firstName: 'Newer still', email: `xmin2.${Date.now().toString(36)}@solo.example.test` }));
      expect(await total(a, '/people/search', undefined)).toBe(before + 2);
      expect(counts.paths.locked, 'the newer write was applied under the lock').toBe(paths.locked + 1);
      expect(await totals(a)).toEqual(await totals(off));
    } finally {
      await held.rollback().execute();
      await holder.close();
    }
  });

  it('counts a second study’s participants apart from the first’s', async () => {
    const second = await createStudy(a, tenant, { studyType: 'INTERVIEWS', screener: true, launch: true });
    const e1 = (study: string) => `/studies/${study}/participants/search`;
    const status = { filters: [{ property: participant('STATUS'), comparison: 'IS_ANY_OF', value: ['INVITED'] }] };
    const counts = countsOf(b);
    await total(b, e1(second), status);
    await counts.settled();
    const [moved] = await addParticipants(a, tenant, second, [people[3]!.personId, people[4]!.personId]);
    await patchParticipant(a, tenant, second, moved!.participantId, { status: 'INVITED' });
    const before = counts.answered.counts;
    for (const [study, filter] of [[second, status], [second, undefined], [studyId, status], [studyId, undefined]] as const) {
      expect(await total(b, e1(study), filter), `${study} ${JSON.stringify(filter)}`).toBe(await total(off, e1(study), filter));
    }
    expect(counts.answered.counts - before).toBe(4);
    expect(await total(b, e1(second), undefined)).toBe(2);
    expect(await total(b, e1(second), status)).toBe(1);
  });

  it('answers by SQL, and rightly, the searches naming a number it cannot compare exactly', async () => {
    // 16 significant digits: the column turns inexact, and searches naming it are SQL's from then on.
    const response = await call(a, 'PATCH', `/people/${people[9]!.personId}`, { token: tenant.token, body: { properties: { [ids.Age]: 30.00000000000001 } } });
    expect(response.statusCode, response.body).toBe(200);
    const counts = countsOf(b);
    const before = { ...counts.answered };
    const seen = await totals(b);
    expect(seen).toEqual(await totals(off));
    const namingAge = [...peopleFilters(), ...participantFilters()].filter((filter) => JSON.stringify(filter ?? null).includes(ids.Age)).length;
    expect(namingAge).toBeGreaterThan(0);
    expect(counts.answered).toEqual({ counts: before.counts + searches() - namingAge, sql: before.sql + namingAge });
    const exactly = { filters: [{ property: custom('Age'), comparison: 'EQUALS', value: 30.00000000000001 }] };
    expect(await total(b, '/people/search', exactly)).toBe(1);
    expect(await total(b, '/people/search', { filters: [{ property: custom('Age'), comparison: 'EQUALS', value: 30 }] })).toBe(await total(off, '/people/search', { filters: [{ property: custom('Age'), comparison: 'EQUALS', value: 30 }] }));
  });

  async function createPersonRow(transaction: typeof poolA.db) {
    await sql`
      insert into people (workspace_id, person_id, email, properties, created_at, updated_at)
      values (${tenant.workspaceId}, ${`per_counts${Date.now().toString(36)}`}, ${`open.${Date.now().toString(36)}@crowd.example.test`},
        jsonb_build_object(${ids.Colour}::text, 'Red', ${ids.Age}::text, 77), now(), now())
    `.execute(transaction);
  }
});
