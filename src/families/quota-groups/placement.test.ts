import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, type Tenant, type TestService, startTestService, testDatabaseUrl } from '../../../test/harness.js';
import { createPerson, createProperties } from '../../../test/people-factory.js';
import { addParticipants, createStudy } from '../../../test/participants-factory.js';
import { type Database, openDatabase } from '../../db/database.js';
import { inTransaction } from '../../db/transaction.js';
import { placeInQuotaGroup } from './service.js';

/**
 * Quota placement through the participant's page (POST /p/{token}), as people submit: the first
 * open matching group in order, OVER_QUOTA when none has a place, and exactly `cap` places under
 * many simultaneous submissions, in one instance (both stores) and across two (PostgreSQL).
 */
let service: TestService;
let pool: Database | undefined;
beforeAll(async () => {
  // On PostgreSQL a pool wide enough that many submissions are in flight at once.
  pool = testDatabaseUrl ? await openDatabase({ databaseUrl: testDatabaseUrl, poolSize: 16, applicationName: 'quota-placement' }) : undefined;
  service = await startTestService({ publicUrl: 'https://recruit.example.test' }, pool ? { database: pool } : {});
});
afterAll(async () => {
  await service?.stop();
  await pool?.close();
});

interface World {
  studyId: string;
  devices: string;
  tier: string;
}

/** A launched study whose screener asks how often (a select, qualifying all but "never") and the tier (mapped to a property). */
async function studyWithQuotas(on: TestService, tenant: Tenant, groups: (world: World) => unknown[]): Promise<World & { groupIds: string[] }> {
  const suffix = `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 6)}`;
  const properties = await createProperties(on, tenant, [
    { name: `Devices ${suffix}`, propertyType: 'MULTI_SELECT', propertyOptions: [{ name: 'iOS' }, { name: 'Android' }] },
    { name: `Tier ${suffix}`, propertyType: 'SINGLE_SELECT', propertyOptions: [{ name: 'Gold' }, { name: 'Silver' }] },
  ]);
  const devices = properties[`Devices ${suffix}`]!;
  const tier = properties[`Tier ${suffix}`]!;
  const studyId = await createStudy(on, tenant, { studyType: 'INTERVIEWS', studyPlan: { externalName: 'Checkout interviews' } });
  const screener = await call(on, 'PUT', `/studies/${studyId}/screener`, {
    token: tenant.token,
    body: {
      qualifyByDefault: true,
      questions: [
        { key: 'freq', name: 'How often do you shop online?', type: 'SINGLE_SELECT', isRequired: true, choices: [{ id: 'weekly', label: 'Weekly' }, { id: 'monthly', label: 'Monthly' }, { id: 'never', label: 'Never', rule: 'DISQUALIFIES' }] },
        { key: 'tier', name: 'Your tier?', type: 'SINGLE_SELECT', isRequired: false, mappedToPropertyId: tier, choices: [{ id: 'gold', label: 'Gold' }, { id: 'silver', label: 'Silver' }] },
      ],
    },
  });
  expect(screener.statusCode, screener.body).toBe(200);
  expect((await call(on, 'POST', `/studies/${studyId}/launch`, { token: tenant.token })).statusCode).toBe(200);
  const world = { studyId, devices, tier };
  const written = await call(on, 'PUT', `/studies/${studyId}/quota-groups`, { token: tenant.token, body: { quotaGroups: groups(world) } });
  expect(written.statusCode, written.body).toBe(200);
  return { ...world, groupIds: written.json<{ quotaGroups: { quotaGroupId: string }[] }>().quotaGroups.map((group) => group.quotaGroupId) };
}

interface Invitee {
  personId: string;
  participantId: string;
  path: string;
  fields: [string, string][];
  questionIds: string[];
}

/** People (with the given properties) added to the study, each with a SCREENER link whose page was opened. */
async function invite(on: TestService, tenant: Tenant, studyId: string, people: Record<string, unknown>[]): Promise<Invitee[]> {
  const persons = [];
  for (const properties of people) persons.push(await createPerson(on, tenant, { properties }));
  const participants = await addParticipants(on, tenant, studyId, persons.map((person) => person.personId));
  const invitees: Invitee[] = [];
  for (const [index, participant] of participants.entries()) {
    const link = await call(on, 'POST', `/studies/${studyId}/participants/${participant.participantId}/links`, { token: tenant.token, body: { purpose: 'SCREENER' } });
    expect(link.statusCode, link.body).toBe(201);
    const path = new URL(link.json<{ url: string }>().url).pathname;
    const page = await on.app.inject({ method: 'GET', url: path });
    expect(page.statusCode).toBe(200);
    const field = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(page.body)![1]!;
    const questionIds = [...page.body.matchAll(/name="q_([^"]+)"/g)].map((match) => match[1]!).filter((id, at, all) => all.indexOf(id) === at);
    invitees.push({ personId: persons[index]!.personId, participantId: participant.participantId, path, fields: [['formToken', field('formToken')], ['startedAt', field('startedAt')]], questionIds });
  }
  return invitees;
}

/** Sends the screener: how often, and the tier when given. */
function submit(on: TestService, invitee: Invitee, freq: string, tier?: string) {
  const [freqId, tierId] = invitee.questionIds;
  const fields: [string, string][] = [...invitee.fields, [`q_${freqId}`, freq], ...(tier ? [[`q_${tierId}`, tier] as [string, string]] : [])];
  return on.app.inject({ method: 'POST', url: invitee.path, headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' }, payload: new URLSearchParams(fields).toString() });
}

async function stateOf(on: TestService, participantId: string) {
  const participant = await on.deps.db.selectFrom('participants').select(['screener_state', 'quota_group']).where('participant_id', '=', participantId).executeTakeFirstOrThrow();
  const response = await on.deps.db.selectFrom('screener_responses').select(['outcome', 'decided_by']).where('participant_id', '=', participantId).executeTakeFirst();
  return { state: participant.screener_state, quotaGroup: participant.quota_group, outcome: response?.outcome, decidedBy: response?.decided_by as { kind: string; matchedQuotaGroupIds?: string[] } | undefined };
}

async function filledOf(on: TestService, tenant: Tenant, studyId: string) {
  const listed = await call(on, 'GET', `/studies/${studyId}/quota-groups`, { token: tenant.token });
  expect(listed.statusCode).toBe(200);
  return listed.json<{ quotaGroups: { name: string; filled: number; cap: number; isFull: boolean }[] }>().quotaGroups.map((group) => [group.name, group.filled]);
}

describe('POST /p/{token}: quota places', () => {
  it('puts a qualified person in the first open group they meet, in order: by answer, by property, by an answer mapped in the same submission', async () => {
    const tenant = await createTenant(service);
    const world = await studyWithQuotas(service, tenant, ({ devices, tier }) => [
      { name: 'Weekly on iOS', cap: 1, answers: [{ questionKey: 'freq', choiceIds: ['weekly'] }], filter: { filters: [{ property: { propertyId: devices }, comparison: 'HAS_ANY_OF', value: ['iOS'] }] } },
      { name: 'Gold members', cap: 5, filter: { filters: [{ property: { propertyId: tier }, comparison: 'IS_ANY_OF', value: ['Gold'] }] } },
      { name: 'Weekly', cap: 5, answers: [{ questionKey: 'freq', choiceIds: ['weekly'] }] },
    ]);
    const [iosWeekly, iosWeeklyToo, androidWeekly, gold, monthly] = await invite(service, tenant, world.studyId, [
      { [world.devices]: ['iOS'] },
      { [world.devices]: ['iOS', 'Android'] },
      { [world.devices]: ['Android'] },
      {},
      {},
    ]);
    expect((await submit(service, iosWeekly!, 'weekly')).body).toContain('Thank you');
    expect(await stateOf(service, iosWeekly!.participantId)).toMatchObject({ state: 'QUALIFIED', quotaGroup: 'Weekly on iOS', outcome: 'QUALIFIED' });
    // The first group is full: the next open group the person meets.
    await submit(service, iosWeeklyToo!, 'weekly');
    expect(await stateOf(service, iosWeeklyToo!.participantId)).toMatchObject({ state: 'QUALIFIED', quotaGroup: 'Weekly' });
    await submit(service, androidWeekly!, 'weekly');
    expect(await stateOf(service, androidWeekly!.participantId)).toMatchObject({ quotaGroup: 'Weekly' });
    // The tier answered is written to the person before the groups are chosen.
    await submit(service, gold!, 'monthly', 'gold');
    expect(await stateOf(service, gold!.participantId)).toMatchObject({ state: 'QUALIFIED', quotaGroup: 'Gold members' });
    // Meets no group: over quota (the study admits only people its groups describe).
    const none = await submit(service, monthly!, 'monthly');
    expect(none.statusCode).toBe(200);
    expect(none.body).toContain('This study is full');
    expect(await stateOf(service, monthly!.participantId)).toEqual({ state: 'DISQUALIFIED', quotaGroup: null, outcome: 'OVER_QUOTA', decidedBy: expect.objectContaining({ kind: 'OVER_QUOTA', matchedQuotaGroupIds: [] }) });
    expect(await filledOf(service, tenant, world.studyId)).toEqual([['Weekly on iOS', 1], ['Gold members', 1], ['Weekly', 2]]);
    // The team reads the placement on the participant, as quotaGroup, and can search by it.
    const participant = await call(service, 'GET', `/studies/${world.studyId}/participants/${gold!.participantId}`, { token: tenant.token });
    expect(participant.json<{ quotaGroup: string }>().quotaGroup).toBe('Gold members');
  });

  it('tells a person whose groups are full, kindly and in the study\'s language, that the study is full, and nothing more; they are DISQUALIFIED with the reason kept for the team', async () => {
    const tenant = await createTenant(service);
    const world = await studyWithQuotas(service, tenant, () => [{ name: 'Secret weekly segment', cap: 1, answers: [{ questionKey: 'freq', choiceIds: ['weekly'] }] }]);
    const [first, second, third] = await invite(service, tenant, world.studyId, [{}, {}, {}]);
    expect((await stateOf(service, (await submit(service, first!, 'weekly'), first!).participantId)).quotaGroup).toBe('Secret weekly segment');
    const full = await submit(service, second!, 'weekly');
    expect(full.statusCode).toBe(200);
    expect(full.body).toContain('<h1');
    expect(full.body).toContain('This study is full');
    expect(full.body).toContain('This study already has all the participants it needs');
    expect(full.body).not.toMatch(/Secret weekly segment|quota|weekly|<form/i);
    expect(await stateOf(service, second!.participantId)).toEqual({
      state: 'DISQUALIFIED',
      quotaGroup: null,
      outcome: 'OVER_QUOTA',
      decidedBy: { kind: 'OVER_QUOTA', matchedQuotaGroupIds: [world.groupIds[0]], qualifiedBy: { kind: 'DEFAULT', qualifyByDefault: true } },
    });
    const events = await service.deps.db.selectFrom('participant_status_events').select(['from_value', 'to_value']).where('participant_id', '=', second!.participantId).orderBy('event_id').execute();
    expect(events).toEqual([{ from_value: 'NOT_SENT', to_value: 'SUBMITTED' }, { from_value: 'SUBMITTED', to_value: 'DISQUALIFIED' }]);
    // A second visit says it was answered, as for any submission.
    expect((await service.app.inject({ method: 'GET', url: second!.path })).body).toContain('You have already answered');
    await call(service, 'PATCH', `/studies/${world.studyId}`, { token: tenant.token, body: { studyPlan: { language: 'de' } } });
    const german = await submit(service, third!, 'weekly');
    expect(german.body).toContain('Diese Studie ist voll');
    expect(german.body).toContain('<html lang="de"');
  });

  it('places only qualified submissions: disqualified ones and those left for review take no place; without groups nobody is over quota', async () => {
    const tenant = await createTenant(service);
    const world = await studyWithQuotas(service, tenant, () => [{ name: 'Everyone', cap: 1 }]);
    const [never, bot, placed] = await invite(service, tenant, world.studyId, [{}, {}, {}]);
    expect((await submit(service, never!, 'never')).body).toContain('not the right fit');
    expect(await stateOf(service, never!.participantId)).toMatchObject({ state: 'DISQUALIFIED', quotaGroup: null, outcome: 'DISQUALIFIED' });
    await service.app.inject({
      method: 'POST',
      url: bot!.path,
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' },
      payload: new URLSearchParams([...bot!.fields, ['website', 'http://spam.example'], [`q_${bot!.questionIds[0]}`, 'weekly']]).toString(),
    });
    expect(await stateOf(service, bot!.participantId)).toMatchObject({ state: 'SUBMITTED', quotaGroup: null, outcome: 'NEEDS_REVIEW' });
    expect(await filledOf(service, tenant, world.studyId)).toEqual([['Everyone', 0]]);
    await submit(service, placed!, 'monthly');
    expect(await stateOf(service, placed!.participantId)).toMatchObject({ state: 'QUALIFIED', quotaGroup: 'Everyone' });

    const free = await studyWithQuotas(service, tenant, () => []);
    const [anyone] = await invite(service, tenant, free.studyId, [{}]);
    await submit(service, anyone!, 'weekly');
    expect(await stateOf(service, anyone!.participantId)).toMatchObject({ state: 'QUALIFIED', quotaGroup: null, outcome: 'QUALIFIED' });
  });

  it('takes nobody more into a group whose cap was lowered below its places; raising it opens places again', async () => {
    const tenant = await createTenant(service);
    const world = await studyWithQuotas(service, tenant, () => [{ name: 'Everyone', cap: 3 }]);
    const invitees = await invite(service, tenant, world.studyId, [{}, {}, {}, {}]);
    await submit(service, invitees[0]!, 'weekly');
    await submit(service, invitees[1]!, 'weekly');
    const lowered = await call(service, 'PUT', `/studies/${world.studyId}/quota-groups`, { token: tenant.token, body: { quotaGroups: [{ quotaGroupId: world.groupIds[0], name: 'Everyone', cap: 1 }] } });
    expect(lowered.json<{ quotaGroups: { filled: number; isFull: boolean }[] }>().quotaGroups[0]).toMatchObject({ filled: 2, isFull: true });
    await submit(service, invitees[2]!, 'weekly');
    expect(await stateOf(service, invitees[2]!.participantId)).toMatchObject({ outcome: 'OVER_QUOTA' });
    await call(service, 'PUT', `/studies/${world.studyId}/quota-groups`, { token: tenant.token, body: { quotaGroups: [{ quotaGroupId: world.groupIds[0], name: 'Everyone', cap: 3 }] } });
    await submit(service, invitees[3]!, 'weekly');
    expect(await stateOf(service, invitees[3]!.participantId)).toMatchObject({ outcome: 'QUALIFIED', quotaGroup: 'Everyone' });
    expect(await filledOf(service, tenant, world.studyId)).toEqual([['Everyone', 3]]);
  });

  it("keeps a deleted person's place filled: the group holds no personal data, and a place once taken is not given back", async () => {
    const tenant = await createTenant(service);
    const world = await studyWithQuotas(service, tenant, () => [{ name: 'Everyone', cap: 2 }]);
    const [placed] = await invite(service, tenant, world.studyId, [{}]);
    await submit(service, placed!, 'weekly');
    expect((await call(service, 'DELETE', `/people/${placed!.personId}`, { token: tenant.token })).statusCode).toBeLessThan(300);
    expect(await filledOf(service, tenant, world.studyId)).toEqual([['Everyone', 1]]);
  });

  it('gives the place back when the submission that took it is rolled back', async () => {
    const tenant = await createTenant(service);
    const world = await studyWithQuotas(service, tenant, () => [{ name: 'Everyone', cap: 1 }]);
    const [invitee] = await invite(service, tenant, world.studyId, [{}]);
    const failure = new Error('the submission failed after taking its place');
    await expect(
      inTransaction(service.deps.db, async (transaction) => {
        const placement = await placeInQuotaGroup(transaction, { workspaceId: tenant.workspaceId, studyId: world.studyId, personId: invitee!.personId, answersByKey: new Map(), at: new Date().toISOString() });
        expect(placement).toEqual({ kind: 'PLACED', quotaGroupId: world.groupIds[0], name: 'Everyone' });
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(await filledOf(service, tenant, world.studyId)).toEqual([['Everyone', 0]]);
    await submit(service, invitee!, 'weekly');
    expect(await stateOf(service, invitee!.participantId)).toMatchObject({ quotaGroup: 'Everyone' });
  });
});

/** Many people submitting at once into groups of few places: exactly the caps are placed, the rest are over quota. */
async function race(instances: TestService[], tenant: Tenant, people: number, cap: number) {
  const world = await studyWithQuotas(instances[0]!, tenant, () => [
    { name: 'Weekly', cap, answers: [{ questionKey: 'freq', choiceIds: ['weekly'] }] },
    { name: 'Anyone', cap: 2 },
  ]);
  const invitees = await invite(instances[0]!, tenant, world.studyId, Array.from({ length: people }, () => ({})));
  const sent = await Promise.all(invitees.map((invitee, index) => submit(instances[index % instances.length]!, invitee, 'weekly')));
  expect(sent.map((response) => response.statusCode)).toEqual(Array(people).fill(200));
  const full = sent.filter((response) => response.body.includes('This study is full')).length;
  const states = await Promise.all(invitees.map((invitee) => stateOf(instances[0]!, invitee.participantId)));
  const byGroup = (name: string | null) => states.filter((state) => state.quotaGroup === name).length;
  expect(byGroup('Weekly')).toBe(cap);
  expect(byGroup('Anyone')).toBe(2);
  expect(states.filter((state) => state.outcome === 'OVER_QUOTA')).toHaveLength(people - cap - 2);
  expect(full).toBe(people - cap - 2);
  expect(states.filter((state) => state.state === 'QUALIFIED')).toHaveLength(cap + 2);
  expect(await filledOf(instances[0]!, tenant, world.studyId)).toEqual([['Weekly', cap], ['Anyone', 2]]);
  // The team's funnel counts the same: over quota by outcome, places by the participants' quotaGroup.
  const funnel = await call(instances[0]!, 'GET', `/studies/${world.studyId}/screener-funnel`, { token: tenant.token });
  expect(funnel.statusCode, funnel.body).toBe(200);
  expect(funnel.json()).toMatchObject({ qualified: cap + 2, overQuota: people - cap - 2 });
  expect(funnel.json<{ quotaGroups: { name: string; participants: number }[] }>().quotaGroups).toEqual(expect.arrayContaining([{ name: 'Weekly', participants: cap }, { name: 'Anyone', participants: 2 }]));
}

describe('quota places under concurrency', () => {
  it('places exactly 7 of 40 people submitting at once into a group of 7 (and 2 into the next), the rest over quota', async () => {
    const tenant = await createTenant(service);
    await race([service], tenant, 40, 7);
  }, 120_000);

  it('records one submission and takes one place when one person sends the form many times at once', async () => {
    const tenant = await createTenant(service);
    const world = await studyWithQuotas(service, tenant, () => [{ name: 'Everyone', cap: 5 }]);
    const [invitee] = await invite(service, tenant, world.studyId, [{}]);
    const sent = await Promise.all(Array.from({ length: 10 }, () => submit(service, invitee!, 'weekly')));
    expect(sent.filter((response) => response.body.includes('Thank you for your answers') || response.body.includes('have been sent'))).toHaveLength(1);
    expect(await filledOf(service, tenant, world.studyId)).toEqual([['Everyone', 1]]);
  }, 60_000);
});

describe.skipIf(!testDatabaseUrl)('a place taken last (PostgreSQL: two transactions at once)', () => {
  it('undoes a submission written for a group that filled meanwhile and places it in the next: one event, one response, one set of answers', async () => {
    // The submission writes its rows for the group that had a place when read, then takes that
    // place last. Here another transaction holds the group's last place while it does: the
    // submission waits on the row, finds it full, goes back to its savepoint and takes the next.
    const tenant = await createTenant(service);
    const world = await studyWithQuotas(service, tenant, () => [
      { name: 'Weekly', cap: 1, answers: [{ questionKey: 'freq', choiceIds: ['weekly'] }] },
      { name: 'Anyone', cap: 5 },
    ]);
    const [invitee] = await invite(service, tenant, world.studyId, [{}]);
    const other = await openDatabase({ databaseUrl: testDatabaseUrl!, poolSize: 1, applicationName: 'quota-holder' });
    try {
      const holder = await other.db.startTransaction().execute();
      await sql`update quota_groups set filled = filled + 1 where quota_group_id = ${world.groupIds[0]!} and filled < cap`.execute(holder);
      const sent = submit(service, invitee!, 'weekly');
      // The submission reaches the row and waits for the holder's commit.
      await expect
        .poll(async () => (await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and query like 'update "quota_groups"%'`.execute(service.deps.db)).rows[0]!.n)
        .toBe(1);
      await holder.commit().execute();
      expect((await sent).statusCode).toBe(200);
    } finally {
      await other.close();
    }
    expect(await stateOf(service, invitee!.participantId)).toMatchObject({ state: 'QUALIFIED', quotaGroup: 'Anyone', outcome: 'QUALIFIED' });
    expect(await filledOf(service, tenant, world.studyId)).toEqual([['Weekly', 1], ['Anyone', 1]]);
    const count = async (table: 'screener_responses' | 'screener_answers') =>
      Number((await service.deps.db.selectFrom(table).select(({ fn }) => fn.countAll().as('n')).where('participant_id', '=', invitee!.participantId).executeTakeFirstOrThrow()).n);
    const events = await service.deps.db.selectFrom('participant_status_events').select(['field', 'to_value']).where('participant_id', '=', invitee!.participantId).orderBy('event_id').execute();
    // The submission's own moves, once each: submitted, then qualified.
    expect(events.filter((event) => event.field === 'screenerState').map((event) => event.to_value)).toEqual(['SUBMITTED', 'QUALIFIED']);
    expect(await count('screener_responses')).toBe(1);
    expect(await count('screener_answers')).toBe(1);
    const webhooks = await service.deps.db.selectFrom('webhook_messages').select('payload').where('workspace_id', '=', tenant.workspaceId).where('event_type', 'like', 'participant.%').execute();
    expect(webhooks.filter((row) => JSON.stringify(row.payload).includes(invitee!.participantId) && JSON.stringify(row.payload).includes('QUALIFIED'))).toHaveLength(1);
  }, 60_000);
});

describe.skipIf(!testDatabaseUrl)('quota places across two instances (PostgreSQL)', () => {
  let poolA: Database;
  let poolB: Database;
  let a: TestService;
  let b: TestService;
  beforeAll(async () => {
    poolA = await openDatabase({ databaseUrl: testDatabaseUrl!, poolSize: 8, applicationName: 'quota-instance-a' });
    poolB = await openDatabase({ databaseUrl: testDatabaseUrl!, poolSize: 8, applicationName: 'quota-instance-b' });
    a = await startTestService({ publicUrl: 'https://recruit.example.test' }, { database: poolA });
    b = await startTestService({ publicUrl: 'https://recruit.example.test' }, { database: poolB });
  });
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await poolA?.close();
    await poolB?.close();
  });

  it('places exactly 7 of 40 people whose submissions alternate between two instances on one database', async () => {
    const tenant = await createTenant(a);
    await race([a, b], tenant, 40, 7);
  }, 120_000);
});
