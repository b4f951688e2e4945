import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type Tenant, type TestService } from '../../../test/harness.js';
import { addParticipants, createStudy } from '../../../test/participants-factory.js';
import { createPerson, createProperties, type PersonResponse } from '../../../test/people-factory.js';

const DAY_MS = 86_400_000;

/**
 * What the counts keep from one count for the next at the same version (workspace.ts,
 * `reusedLeaves`): a search made again is answered from its kept result, a search sharing a leaf
 * with an earlier one takes that leaf, and any write moves the version, after which nothing kept
 * is used: the totals stay exact.
 */
describe('search counts reused at one version', () => {
  let service: TestService;
  let tenant: Tenant;
  let ids: Record<'Age' | 'Colour' | 'Joined', string>;
  const people: PersonResponse[] = [];
  let studyA: string;
  let studyB: string;

  beforeAll(async () => {
    service = await startTestService();
    tenant = await createTenant(service, 'Reused counts');
    ids = (await createProperties(service, tenant, [
      { name: 'Age', propertyType: 'NUMBER' },
      { name: 'Colour', propertyType: 'SINGLE_SELECT', propertyOptions: [{ name: 'Red' }, { name: 'Blue' }] },
      { name: 'Joined', propertyType: 'DATETIME' },
    ])) as typeof ids;
    // Ages 20, 25, … 75; red and blue in turn; joined 1, 3, 5, … 23 days before the service's now.
    const now = service.deps.clock.now().getTime();
    for (let index = 0; index < 12; index++) {
      const joined = new Date(now - (1 + index * 2) * DAY_MS).toISOString();
      people.push(await createPerson(service, tenant, { firstName: `R${index}`, properties: { [ids.Age]: 20 + index * 5, [ids.Colour]: index % 2 === 0 ? 'Red' : 'Blue', [ids.Joined]: joined } }));
    }
    studyA = await createStudy(service, tenant, { studyType: 'INTERVIEWS', screener: true, launch: true });
    studyB = await createStudy(service, tenant, { studyType: 'INTERVIEWS', screener: true, launch: true });
    await addParticipants(service, tenant, studyA, people.slice(0, 6).map((person) => person.personId));
    await addParticipants(service, tenant, studyB, people.slice(6).map((person) => person.personId));
  }, 60_000);
  afterAll(async () => service.stop());

  const counts = () => service.deps.counts!;
  const olderThan = (age: number) => ({ property: { propertyId: ids.Age }, comparison: 'GREATER_THAN_OR_EQUAL', value: age });
  const colour = (name: string) => ({ property: { propertyId: ids.Colour }, comparison: 'IS_ANY_OF', value: [name] });

  async function search(url: string, filter: object): Promise<{ total: number; ids: string[]; countedBy: string }> {
    const response = await call(service, 'POST', url, { token: tenant.token, body: { filter, pageInfo: { size: 100 } } });
    expect(response.statusCode, response.body).toBe(200);
    const page = response.json<{ total: number; results: { personId: string }[] }>();
    return { total: page.total, ids: page.results.map((row) => row.personId).sort(), countedBy: String(response.headers['server-timing'] ?? '').includes('counts') ? 'counts' : 'sql' };
  }
  const searchPeople = (filter: object) => search('/people/search', filter);

  /** Searches until the counts answer `filter` (the first search of a column prepares it in the background). */
  async function countedSearch(url: string, filter: object) {
    for (let round = 0; round < 20; round++) {
      const found = await search(url, filter);
      if (found.countedBy === 'counts') return found;
      await counts().settled();
    }
    throw new Error(`the counts never answered ${JSON.stringify(filter)}`);
  }

  it('answers the same search again from the result it kept, and a search sharing a leaf from that leaf', async () => {
    const filter = { filters: [olderThan(50), colour('Red')] };
    const first = await countedSearch('/people/search', filter);
    // Red at 50, 60, 70.
    expect(first.total).toBe(3);
    const before = { ...counts().reused };
    const again = await searchPeople(filter);
    expect(again).toEqual(first);
    expect(counts().reused.results).toBe(before.results + 1);

    // The same leaves in another tree: both are taken, the whole is counted anew.
    const either = await searchPeople({ operator: 'OR', filters: [olderThan(50), colour('Red')] });
    expect(either.total).toBe(6 + 3);
    expect(counts().reused.leaves).toBe(before.leaves + 2);
    expect(counts().reused.results).toBe(before.results + 1);
  });

  it('uses nothing it kept once a write moved the counts on: the totals follow every write', async () => {
    const filter = { filters: [olderThan(50), colour('Red')] };
    const first = await countedSearch('/people/search', filter);
    const kept = counts().reused.results;
    // Blue at 45 becomes red at 55: one more match.
    const moved = people[5]!;
    const patched = await call(service, 'PATCH', `/people/${moved.personId}`, { token: tenant.token, body: { properties: { [ids.Age]: 55, [ids.Colour]: 'Red' } } });
    expect(patched.statusCode, patched.body).toBe(200);
    const after = await searchPeople(filter);
    expect(after.countedBy).toBe('counts');
    expect(after.total).toBe(first.total + 1);
    expect(after.ids).toEqual([...first.ids, moved.personId].sort());
    expect(counts().reused.results).toBe(kept);
    // And back: the result kept after the first write is not used either.
    const reverted = await call(service, 'PATCH', `/people/${moved.personId}`, { token: tenant.token, body: { properties: { [ids.Age]: 45, [ids.Colour]: 'Blue' } } });
    expect(reverted.statusCode, reverted.body).toBe(200);
    expect(await searchPeople(filter)).toEqual(first);
    expect(counts().reused.results).toBe(kept);
  });

  it('moves a window with the clock: a count kept for one now is not used for another', async () => {
    const filter = { filters: [{ property: { propertyId: ids.Joined }, comparison: 'IN_LAST_DAYS', value: 10 }] };
    const clock = service.deps.clock;
    clock.set(clock.now());
    try {
      // Joined 1, 3, 5, 7 and 9 days ago.
      expect((await countedSearch('/people/search', filter)).total).toBe(5);
      // Four days on, with nothing written: those are now 5, 7, 9, 11 and 13 days ago.
      clock.set(new Date(clock.now().getTime() + 4 * DAY_MS));
      const later = await searchPeople(filter);
      expect(later.countedBy).toBe('counts');
      expect(later.total).toBe(3);
    } finally {
      clock.reset();
    }
  });

  it("keeps one study's count apart from another's with the same filter", async () => {
    const filter = { filters: [olderThan(40)] };
    const inA = await countedSearch(`/studies/${studyA}/participants/search`, filter);
    const inB = await countedSearch(`/studies/${studyB}/participants/search`, filter);
    // Study A holds ages 20–45, study B 50–75.
    expect(inA.total).toBe(2);
    expect(inB.total).toBe(6);
    expect((await search(`/studies/${studyA}/participants/search`, filter)).total).toBe(2);
    expect((await search(`/studies/${studyB}/participants/search`, filter)).total).toBe(6);
  });
});
