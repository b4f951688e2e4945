import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, callTestHelper, createTenant, startTestService, type TestService } from '../../test/harness.js';
import { createParticipant, incentiveRow, sendIncentive, setClock } from '../../test/incentives-factory.js';
import { createClock } from '../clock.js';
import { incentiveStatuses } from '../families/incentives/states.js';
import { approvalStatuses, participantStatuses, screenerStates } from '../families/participants/states.js';
import { propertyTypes } from '../families/properties/schemas.js';
import { studyStatuses, studyTypes } from '../families/studies/schemas.js';
import { allRoles } from '../http/rights.js';
import { seedDemo } from './demo.js';
import { groupSessionTiming } from './demo-incentives.js';

let service: TestService;
let seeded: Awaited<ReturnType<typeof seedDemo>>;
/**
 * A seed makes ~600 small transactions (each participant moved through the real PATCH service):
 * a few seconds alone, far longer on a machine busy with other test files, so the hooks and the
 * test that seeds a second time get a generous timeout.
 */
const SEED_TIMEOUT_MS = 180_000;

beforeAll(async () => {
  service = await startTestService();
  seeded = await seedDemo(service.deps.db, createClock(), service.deps.providers);
}, SEED_TIMEOUT_MS);
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

  it('gives every study a SERVICE screener: with questions, or empty (includeScreener) for surveys', async () => {
    for (const studyId of seeded.studyIds) {
      const response = await call(service, 'GET', `/studies/${studyId}`, { token: seeded.token });
      expect(response.statusCode, response.body).toBe(200);
      const study = response.json();
      expect(study.studyPlan.includeScreener).toBe(true);
      if (study.studyType === 'SURVEY') {
        expect(study.screener).toMatchObject({ studyId, type: 'SERVICE', questions: [] });
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

  it('can run again beside an earlier seed: a second, separate workspace, expiring none of another workspace\'s incentives', { timeout: SEED_TIMEOUT_MS }, async () => {
    // Another workspace's incentive, unclaimed since before the demo's group session: the seed's
    // expiry runs a year after that session, and must leave it alone.
    const tenant = await createTenant(service);
    await setClock(service, new Date(groupSessionTiming(new Date()).sentAt.getTime() - 24 * 60 * 60 * 1000));
    const { participantId } = await createParticipant(service, tenant);
    const foreign = await sendIncentive(service, tenant, participantId);
    expect((await callTestHelper(service, 'DELETE', '/clock')).statusCode).toBe(200);

    const again = await seedDemo(service.deps.db, createClock(), service.deps.providers);
    expect(again.workspaceId).not.toBe(seeded.workspaceId);
    expect(await incentiveRow(service, tenant, foreign.incentiveId)).toMatchObject({ status: 'UNCLAIMED', provider_state: 'ORDERED' });
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

interface ParticipantRow {
  participantId: string;
  status: string;
  approvalStatus: string;
  screenerState: string;
  interviewStartTime: string | null;
  testCompletedAt: string | null;
}

/** Every participant of every seeded study, read through E1, with its study. */
async function allParticipants() {
  const found: (ParticipantRow & { study: StudyRow })[] = [];
  const studies = (await call(service, 'GET', '/studies', { token: seeded.token, query: { size: '100' } })).json<{ results: StudyRow[] }>().results;
  for (const study of studies) {
    const response = await call(service, 'POST', `/studies/${study.studyId}/participants/search`, { token: seeded.token, body: { pageInfo: { size: 1000 } } });
    expect(response.statusCode, response.body).toBe(200);
    const page = response.json<{ results: ParticipantRow[]; total: number }>();
    expect(page.total).toBe(page.results.length);
    found.push(...page.results.map((participant) => ({ ...participant, study })));
  }
  return found;
}

const isInterview = (studyType: string) => studyType === 'INTERVIEWS' || studyType === 'GROUP_INTERVIEW';

async function searchPeople(filters: object[]) {
  const response = await call(service, 'POST', '/people/search', { token: seeded.token, body: { filter: { filters }, pageInfo: { size: 1000 } } });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<{ results: { personId: string }[]; total: number }>();
}
const person = (propertyName: string) => ({ propertyGroup: 'PERSON', propertyName });

describe('seedDemo: participants', () => {
  it('has participants in every status, approval status and screener state, as the rules allow them', async () => {
    const participants = await allParticipants();
    expect(participants).toHaveLength(seeded.participantCount);
    expect(seeded.participantCount).toBeGreaterThan(200);
    expect(new Set(participants.map((participant) => participant.status))).toEqual(new Set(participantStatuses));
    expect(new Set(participants.map((participant) => participant.approvalStatus))).toEqual(new Set(approvalStatuses));
    expect(new Set(participants.map((participant) => participant.screenerState))).toEqual(new Set(screenerStates));
    for (const participant of participants) {
      const where = `${participant.study.studyType}/${participant.study.status} ${participant.participantId}`;
      if (participant.status === 'SCHEDULED' || participant.status === 'NO_SHOW') expect(isInterview(participant.study.studyType), where).toBe(true);
      if (participant.status === 'SCHEDULED') expect(participant.interviewStartTime, where).not.toBeNull();
      if (participant.status === 'COMPLETED') expect(participant.testCompletedAt ?? participant.interviewStartTime, where).not.toBeNull();
      // A draft study reaches no one: nobody in it was invited, scheduled or sent a screener.
      if (participant.study.status === 'DRAFT') {
        expect(['NOT_STARTED', 'CANCELED', 'HIDDEN'], where).toContain(participant.status);
        expect(participant.screenerState, where).toBe('NOT_SENT');
      }
    }
    // Every type of study has its closed history of completions, and every status of the active ones.
    for (const studyType of studyTypes) {
      const closed = participants.filter((participant) => participant.study.studyType === studyType && participant.study.status === 'CLOSED');
      expect(closed.filter((participant) => participant.status === 'COMPLETED').length, studyType).toBeGreaterThan(0);
      const active = new Set(participants.filter((participant) => participant.study.studyType === studyType && participant.study.status === 'ACTIVE').map((participant) => participant.status));
      const expected = participantStatuses.filter((status) => isInterview(studyType) || (status !== 'SCHEDULED' && status !== 'NO_SHOW'));
      for (const status of expected) expect(active, `${studyType}: ${status}`).toContain(status);
    }
  });

  it('makes a participation history the derived names find: interviews completed, recent ones, show rates, incentives paid', async () => {
    const everCompleted = await searchPeople([{ property: person('TOTAL_NUMBER_OF_INTERVIEWS_COMPLETED'), comparison: 'GREATER_THAN_OR_EQUAL', value: 1 }]);
    const twice = await searchPeople([{ property: person('TOTAL_NUMBER_OF_INTERVIEWS_COMPLETED'), comparison: 'GREATER_THAN_OR_EQUAL', value: 2 }]);
    const lastQuarter = await searchPeople([{ property: person('TOTAL_NUMBER_OF_INTERVIEWS_COMPLETED_L90'), comparison: 'GREATER_THAN_OR_EQUAL', value: 1 }]);
    const lastMonth = await searchPeople([{ property: person('TOTAL_NUMBER_OF_INTERVIEWS_COMPLETED_L30'), comparison: 'GREATER_THAN_OR_EQUAL', value: 1 }]);
    expect(everCompleted.total).toBeGreaterThan(lastQuarter.total);
    expect(lastQuarter.total).toBeGreaterThan(lastMonth.total);
    expect(lastMonth.total).toBeGreaterThan(0);
    expect(twice.total).toBeGreaterThan(0);
    const mixed = await searchPeople([
      { property: person('SHOW_RATE'), comparison: 'GREATER_THAN', value: 0 },
      { property: person('SHOW_RATE'), comparison: 'LESS_THAN', value: 1 },
    ]);
    expect(mixed.total).toBeGreaterThan(0);
    expect((await searchPeople([{ property: person('SHOW_RATE'), comparison: 'EQUALS', value: 0 }])).total).toBeGreaterThan(0);
    expect((await searchPeople([{ property: person('TOTAL_NUMBER_OF_UNMOD_TESTS_COMPLETED'), comparison: 'GREATER_THAN_OR_EQUAL', value: 1 }])).total).toBeGreaterThan(0);
    expect((await searchPeople([{ property: person('TOTAL_NUMBER_OF_SURVEYS_COMPLETED_L365'), comparison: 'GREATER_THAN_OR_EQUAL', value: 1 }])).total).toBeGreaterThan(0);
    expect((await searchPeople([{ property: person('TOTAL_SENT_ALL_TIME'), comparison: 'GREATER_THAN', value: 0 }])).total).toBeGreaterThan(0);
    expect((await searchPeople([{ property: person('SCREENER_STATUS'), comparison: 'IS_ANY_OF', value: ['DISQUALIFIED'] }])).total).toBeGreaterThan(0);
  });
});

interface IncentiveRow {
  incentiveId: string;
  type: string;
  status: string;
  sentAt: string;
  studyId: string;
}

describe('seedDemo: incentives', () => {
  it('has incentives in every status, each reached the way the service reaches it', async () => {
    const response = await call(service, 'POST', '/incentives/search', { token: seeded.token, body: { pageInfo: { size: 1000 } } });
    expect(response.statusCode, response.body).toBe(200);
    const { results } = response.json<{ results: IncentiveRow[] }>();
    expect(new Set(results.map((incentive) => incentive.status))).toEqual(new Set(incentiveStatuses));
    for (const status of incentiveStatuses) {
      expect(results.filter((incentive) => incentive.status === status).map((incentive) => incentive.incentiveId).sort(), status).toEqual([...seeded.incentiveIds[status]].sort());
    }
    const typesIn = (status: string) => new Set(results.filter((incentive) => incentive.status === status).map((incentive) => incentive.type));
    expect(typesIn('SENT')).toEqual(new Set(['CUSTOM', 'RECRUITMENT_FEE']));
    expect(typesIn('CANCELED')).toEqual(new Set(['CUSTOM', 'MONEY_OR_GIFT_CARD']));
    for (const status of ['UNCLAIMED', 'CLAIMED', 'ERROR', 'EXPIRED']) for (const type of typesIn(status)) expect(['MONEY_OR_GIFT_CARD', 'PROVIDER_ONE_MONEY'], status).toContain(type);
    const expired = results.find((incentive) => incentive.status === 'EXPIRED')!;
    expect(Date.parse(expired.sentAt)).toBeGreaterThanOrEqual(Date.parse('2026-02-01T00:00:00.000Z'));
    // Canceling needs the incentive's study in DRAFT (the reference's rule).
    for (const canceled of results.filter((incentive) => incentive.status === 'CANCELED')) {
      expect((await call(service, 'GET', `/studies/${canceled.studyId}`, { token: seeded.token })).json().status).toBe('DRAFT');
    }
  });
});

describe('seedDemo: signups and segments', () => {
  it('makes a signup form on the beta population with submissions in every approval status, some with referral codes', async () => {
    const form = await call(service, 'GET', `/signups/${seeded.signupFormId}`, { token: seeded.token });
    expect(form.statusCode, form.body).toBe(200);
    expect(form.json().populationId).toBe(seeded.populationIds[1]);
    const response = await call(service, 'POST', `/signups/${seeded.signupFormId}/submissions/search`, { token: seeded.token, body: {} });
    expect(response.statusCode, response.body).toBe(200);
    const { results } = response.json<{ results: { submissionId: string; approvalStatus: string; referralCode: string | null; personId: string }[] }>();
    expect(results.map((submission) => submission.submissionId).sort()).toEqual([...seeded.submissionIds].sort());
    expect(new Set(results.map((submission) => submission.approvalStatus))).toEqual(new Set(approvalStatuses));
    expect(results.filter((submission) => submission.referralCode === 'SPRING-NEWSLETTER')).toHaveLength(2);
    expect(results.some((submission) => submission.referralCode === null)).toBe(true);
    const referred = await searchPeople([{ property: person('SIGNUP_REFERRAL_CODES'), comparison: 'HAS_ANY_OF', value: ['SPRING-NEWSLETTER'] }]);
    expect(referred.total).toBe(2);
  });

  it('makes two segments whose members a people search finds', async () => {
    const listed = await call(service, 'GET', '/segments', { token: seeded.token });
    expect(listed.statusCode, listed.body).toBe(200);
    expect(listed.json<{ results: { segmentId: string; name: string }[] }>().results.map((segment) => [segment.segmentId, segment.name])).toEqual([
      [seeded.segmentIds[0], 'Weekly shoppers'],
      [seeded.segmentIds[1], 'Engaged this quarter'],
    ]);
    const engaged = await searchPeople([{ property: person('SEGMENT_MEMBERSHIP'), comparison: 'HAS_ANY_OF', value: [seeded.segmentIds[1]] }]);
    const lastQuarter = await searchPeople([{ property: person('TOTAL_NUMBER_OF_INTERVIEWS_COMPLETED_L90'), comparison: 'GREATER_THAN_OR_EQUAL', value: 1 }]);
    expect(engaged.total).toBeGreaterThan(0);
    expect(engaged.results.map((found) => found.personId).sort()).toEqual(lastQuarter.results.map((found) => found.personId).sort());
    const weekly = await searchPeople([{ property: person('SEGMENT_MEMBERSHIP'), comparison: 'HAS_ANY_OF', value: [seeded.segmentIds[0]] }]);
    expect(weekly.total).toBeGreaterThan(100);
  });
});
