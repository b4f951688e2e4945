import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, startTestService, type TestService } from '../../test/harness.js';
import { createClock } from '../clock.js';
import { propertyTypes } from '../families/properties/schemas.js';
import { studyStatuses, studyTypes } from '../families/studies/schemas.js';
import { allRoles } from '../http/rights.js';
import { seedDemo } from './demo.js';

let service: TestService;
let seeded: Awaited<ReturnType<typeof seedDemo>>;
beforeAll(async () => {
  service = await startTestService();
  seeded = await seedDemo(service.deps.db, createClock());
});
afterAll(async () => service.stop());

interface StudyRow {
  studyId: string;
  studyType: string;
  status: string;
  populationId: string | null;
  owners: { userId: string }[];
}

describe('seedDemo', () => {
  it('makes one study of every type in every status, readable through the API', async () => {
    const response = await call(service, 'GET', '/studies', { token: seeded.token, query: { size: '100' } });
    expect(response.statusCode, response.body).toBe(200);
    const { results, total } = response.json<{ results: StudyRow[]; total: number }>();
    expect(total).toBe(studyTypes.length * studyStatuses.length);
    const kinds = results.map((study) => `${study.studyType}/${study.status}`).sort();
    expect(kinds).toEqual(studyTypes.flatMap((studyType) => studyStatuses.map((status) => `${studyType}/${status}`)).sort());
    expect(results.map((study) => study.studyId).sort()).toEqual([...seeded.studyIds].sort());
    for (const study of results) {
      expect(study.populationId).toBe(seeded.populationIds[0]);
      expect(study.owners.map((owner) => owner.userId).sort()).toEqual([seeded.users.RESEARCHER, seeded.users.OPS_MANAGER].sort());
    }
  });

  it('gives every study a screener: SERVICE with questions, or the survey platform for surveys', async () => {
    for (const studyId of seeded.studyIds) {
      const response = await call(service, 'GET', `/studies/${studyId}`, { token: seeded.token });
      expect(response.statusCode, response.body).toBe(200);
      const study = response.json();
      expect(study.studyPlan.includeScreener).toBe(true);
      if (study.studyType === 'SURVEY') {
        expect(study.screener).toMatchObject({ studyId, type: 'EXTERNAL_SURVEY' });
      } else {
        expect(study.screener).toMatchObject({ studyId, type: 'SERVICE' });
        expect(study.screener.questions).toHaveLength(2);
      }
    }
  });

  it('makes a user of every role, each with a working token, in teams', async () => {
    expect(Object.keys(seeded.tokens).sort()).toEqual([...allRoles].sort());
    for (const role of allRoles) {
      const response = await call(service, 'GET', '/me', { token: seeded.tokens[role] });
      expect(response.statusCode, `${role}: ${response.body}`).toBe(200);
      expect(response.json()).toMatchObject({ userId: seeded.users[role], role, workspaceId: seeded.workspaceId, status: 'ACTIVE' });
    }
    const researcher = await call(service, 'GET', '/me', { token: seeded.tokens.RESEARCHER });
    expect(researcher.json().teams.map((team: { name: string }) => team.name)).toEqual(['Checkout', 'Discovery']);
    const teams = await call(service, 'GET', '/teams', { token: seeded.token });
    expect(teams.json().results.map((team: { name: string }) => team.name)).toEqual(['Checkout', 'Discovery', 'Platform', 'Research Ops']);
  });

  it('makes a template from the draft interview study', async () => {
    const response = await call(service, 'GET', `/study-templates/${seeded.studyTemplateId}`, { token: seeded.token });
    expect(response.statusCode, response.body).toBe(200);
    const draftInterview = seeded.studyIds[studyTypes.indexOf('INTERVIEWS') * studyStatuses.length];
    expect(response.json()).toMatchObject({ studyTemplateId: seeded.studyTemplateId, studyType: 'INTERVIEWS', hasScreener: true, createdFromStudyId: draftInterview });
  });

  it('makes person properties of every type with options, in an ALL group and a group for the beta testers', async () => {
    const response = await call(service, 'GET', '/properties', { token: seeded.token, query: { size: '100' } });
    expect(response.statusCode, response.body).toBe(200);
    const { results } = response.json<{ results: { propertyId: string; propertyType: string; propertyOptions: unknown[]; propertyGroupId: string }[] }>();
    expect(results.map((property) => property.propertyId)).toEqual(seeded.propertyIds);
    expect(new Set(results.map((property) => property.propertyType))).toEqual(new Set(propertyTypes));
    for (const property of results) {
      const isSelect = property.propertyType === 'SINGLE_SELECT' || property.propertyType === 'MULTI_SELECT';
      expect(property.propertyOptions.length > 0, property.propertyType).toBe(isSelect);
    }
    const groups = await call(service, 'GET', '/property-groups', { token: seeded.token });
    expect(groups.json().results.map((group: { propertyGroupId: string; scopeType: string; populationIds: string[] }) => [group.propertyGroupId, group.scopeType, group.populationIds])).toEqual([
      [seeded.propertyGroupIds[0], 'ALL', []],
      [seeded.propertyGroupIds[1], 'SPECIFIC', [seeded.populationIds[1]]],
    ]);
    const forCustomers = await call(service, 'GET', '/property-groups', { token: seeded.token, query: { populationId: seeded.populationIds[0]! } });
    expect(forCustomers.json().results.map((group: { propertyGroupId: string }) => group.propertyGroupId)).toEqual([seeded.propertyGroupIds[0]]);
  });

  it('can run again beside an earlier seed: a second, separate workspace', async () => {
    const again = await seedDemo(service.deps.db, createClock());
    expect(again.workspaceId).not.toBe(seeded.workspaceId);
    const first = await call(service, 'GET', '/studies', { token: seeded.token, query: { size: '100' } });
    const second = await call(service, 'GET', '/studies', { token: again.token, query: { size: '100' } });
    expect(second.json().total).toBe(first.json().total);
    const firstIds = new Set(first.json<{ results: StudyRow[] }>().results.map((study) => study.studyId));
    for (const study of second.json<{ results: StudyRow[] }>().results) expect(firstIds.has(study.studyId)).toBe(false);
  });
});

describe('seedDemo: people', () => {
  it('makes a few thousand people with values of every property type, in both populations', async () => {
    expect(seeded.peopleCount).toBeGreaterThanOrEqual(2000);
    const db = service.deps.db;
    const people = await db.selectFrom('people').where('workspace_id', '=', seeded.workspaceId).select(['person_id', 'properties', 'is_opted_out', 'contact_status']).execute();
    expect(people).toHaveLength(seeded.peopleCount);
    const typed = await call(service, 'GET', '/properties', { token: seeded.token, query: { size: '100' } });
    const types = new Map(typed.json<{ results: { propertyId: string; propertyType: string }[] }>().results.map((property) => [property.propertyId, property.propertyType]));
    const typesWithValues = new Set(people.flatMap((person) => Object.keys(person.properties).map((propertyId) => types.get(propertyId))));
    expect(typesWithValues).toEqual(new Set(propertyTypes));
    expect(people.some((person) => person.is_opted_out && person.contact_status === 'OPTED_OUT')).toBe(true);
    for (const populationId of seeded.populationIds) {
      const { count } = await db
        .selectFrom('population_members')
        .where('workspace_id', '=', seeded.workspaceId)
        .where('population_id', '=', populationId)
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .executeTakeFirstOrThrow();
      expect(Number(count)).toBeGreaterThan(100);
    }
  });

  it('gives people that read back through the API with their populations, and claims their unique values', async () => {
    const [first] = await service.deps.db.selectFrom('people').where('workspace_id', '=', seeded.workspaceId).select('person_id').orderBy('person_id').limit(1).execute();
    const response = await call(service, 'GET', `/people/${first!.person_id}`, { token: seeded.token });
    expect(response.statusCode, response.body).toBe(200);
    const person = response.json<{ email: string; properties: Record<string, unknown> }>();
    expect(person.email).toMatch(/@demo\.example$/);
    const customerNumber = seeded.propertyIds[0]!;
    const duplicate = await call(service, 'POST', '/people', { token: seeded.token, body: { email: 'new@demo.example', properties: { [customerNumber]: person.properties[customerNumber] } } });
    expect(duplicate.statusCode).toBe(409);
  });
});
