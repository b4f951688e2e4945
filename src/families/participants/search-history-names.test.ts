import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StudyType } from '../../db/schema.js';
import { call, createTenant, startTestService, type Tenant, type TestService } from '../../../test/harness.js';
import { insertPeople } from '../people/search-fixtures.js';
import { createForm } from '../signups/test-support.js';
import { historyNames } from './search-history-names.js';
import {
  type Comparable,
  createStudy,
  expectedOrder,
  insertConsents,
  insertContacts,
  insertIncentives,
  insertParticipants,
  insertSubmissions,
  type Participation,
  setLastContact,
} from './search-fixtures.js';

/**
 * The PERSON names derived from participation history, checked against a model of the same
 * definitions computed here from the fixture: every name sorted both ways (nulls last, ties by
 * id, through cursors one row at a time) and filtered. People search reads them as E1 does.
 */

const NOW = Date.parse('2026-11-22T12:00:00.000Z');
const DAY = 86_400_000;
const ago = (days: number) => new Date(NOW - days * DAY).toISOString();

type StudyKey = 'INT1' | 'INT2' | 'GRP' | 'UNM1' | 'UNM2' | 'SUR1' | 'SUR2';
const studyTypes: Record<StudyKey, StudyType> = {
  INT1: 'INTERVIEWS',
  INT2: 'INTERVIEWS',
  GRP: 'GROUP_INTERVIEW',
  UNM1: 'UNMODERATED_TEST',
  UNM2: 'UNMODERATED_TEST',
  SUR1: 'SURVEY',
  SUR2: 'SURVEY',
};
const kindOf = (study: StudyKey) => (studyTypes[study] === 'UNMODERATED_TEST' ? 'UNMODERATED_TEST' : studyTypes[study] === 'SURVEY' ? 'SURVEY' : 'INTERVIEW');

interface Fixture {
  participations: (Participation & { study: StudyKey })[];
  contacts: number[];
  consents: number;
  lastContact: number | null;
  submissions?: { days: number; code: string | null; approval: 'PENDING_REVIEW' | 'APPROVED' | 'REJECTED' }[];
  /** Sent for the person's first participation. */
  incentives?: { days: number; cents: number; status: 'UNCLAIMED' | 'CLAIMED' | 'CANCELED' | 'ERROR' | 'SENT' | 'EXPIRED' }[];
}

// Days ago, for readability; 30 exactly sits on the _L30 boundary (included: both ends are).
const people: Record<string, Fixture> = {
  ann: {
    participations: [
      { study: 'INT1', status: 'COMPLETED', completedAt: ago(10), invitedAt: ago(20), rating: 5, screenerState: 'QUALIFIED', screenerSentAt: ago(25), screenerSubmittedAt: ago(22) },
      { study: 'INT2', status: 'COMPLETED', completedAt: ago(100), invitedAt: ago(120), noShowCount: 1, rating: 3 },
      { study: 'UNM1', status: 'COMPLETED', completedAt: ago(5), invitedAt: ago(6) },
      { study: 'SUR1', status: 'COMPLETED', completedAt: ago(400), invitedAt: ago(400) },
    ],
    contacts: [20, 120, 6, 400, 2],
    consents: 2,
    lastContact: 2,
    submissions: [
      { days: 100, code: 'fb', approval: 'APPROVED' },
      { days: 10, code: 'tw', approval: 'PENDING_REVIEW' },
    ],
    // 2025-10-18 (last calendar year, not the last 365 days), 2025-12-27 (both), and this year.
    incentives: [
      { days: 400, cents: 5000, status: 'CLAIMED' },
      { days: 330, cents: 2500, status: 'UNCLAIMED' },
      { days: 10, cents: 1000, status: 'SENT' },
      { days: 5, cents: 9999, status: 'CANCELED' },
    ],
  },
  bob: {
    participations: [
      { study: 'GRP', status: 'NO_SHOW', noShowCount: 2, invitedAt: ago(40), screenerState: 'SCREENER_SENT', screenerSentAt: ago(45) },
      { study: 'SUR1', status: 'COMPLETED', completedAt: ago(30), invitedAt: ago(31) },
      { study: 'UNM2', status: 'INVITED', invitedAt: ago(10) },
    ],
    contacts: [40, 10, 45],
    consents: 0,
    lastContact: 10,
    submissions: [{ days: 5, code: null, approval: 'REJECTED' }],
    incentives: [
      { days: 20, cents: 3000, status: 'EXPIRED' },
      { days: 1, cents: 700, status: 'ERROR' },
    ],
  },
  cat: { participations: [], contacts: [], consents: 0, lastContact: null },
  dan: {
    participations: [
      { study: 'INT1', status: 'COMPLETED', completedAt: ago(200), invitedAt: ago(210), rating: 4 },
      { study: 'GRP', status: 'COMPLETED', completedAt: ago(50), rating: 2, noShowCount: 1, screenerState: 'DISQUALIFIED', screenerSentAt: ago(60), screenerSubmittedAt: ago(58) },
      { study: 'INT2', status: 'CANCELED', invitedAt: ago(15) },
      { study: 'UNM1', status: 'COMPLETED', completedAt: ago(300) },
      { study: 'UNM2', status: 'COMPLETED', completedAt: ago(370) },
    ],
    contacts: [210, 60, 15],
    consents: 1,
    lastContact: 15,
    submissions: [
      { days: 50, code: 'fb', approval: 'APPROVED' },
      { days: 40, code: 'fb', approval: 'PENDING_REVIEW' },
    ],
  },
  eve: {
    participations: [
      { study: 'SUR2', status: 'COMPLETED', completedAt: ago(1) },
      { study: 'SUR1', status: 'COMPLETED', completedAt: ago(2) },
      { study: 'INT1', status: 'NO_SHOW', noShowCount: 1, invitedAt: ago(3), rating: 1 },
    ],
    contacts: [3],
    consents: 0,
    lastContact: 3,
  },
  fay: {
    participations: [
      { study: 'INT2', status: 'HIDDEN', completedAt: ago(20), rating: 5, invitedAt: ago(30) },
      { study: 'UNM1', status: 'INVITED', screenerState: 'SUBMITTED', screenerSentAt: ago(8), screenerSubmittedAt: ago(7), invitedAt: ago(9) },
    ],
    contacts: [30, 9, 8],
    consents: 0,
    lastContact: 8,
    submissions: [{ days: 3, code: 'zz', approval: 'APPROVED' }],
    incentives: [{ days: 700, cents: 8000, status: 'CLAIMED' }],
  },
};
const keys = Object.keys(people);

/** The model: each derived name's value for one person, from the fixture. */
function model(fixture: Fixture, participantIds: string[]): Record<string, Comparable> {
  const within = (at: string | null | undefined, days?: number) => !!at && (days === undefined || (at >= ago(days) && at <= ago(0)));
  const windows = { '': undefined, _L30: 30, _L90: 90, _L365: 365 } as const;
  const values: Record<string, Comparable> = {};
  const parts = fixture.participations;
  const count = (predicate: (part: (typeof parts)[number]) => boolean) => parts.filter(predicate).length;
  const max = (list: (string | null | undefined)[]) => list.filter((value): value is string => !!value).sort().at(-1) ?? null;
  for (const [suffix, days] of Object.entries(windows)) {
    values[`INVITED_TO_STUDY${suffix}`] = count((part) => within(part.invitedAt, days));
    values[`TOTAL_NUMBER_OF_CONTACT${suffix}`] = fixture.contacts.filter((contact) => within(ago(contact), days)).length;
    values[`TOTAL_NUMBER_OF_INTERVIEWS_COMPLETED${suffix}`] = count((part) => kindOf(part.study) === 'INTERVIEW' && within(part.completedAt, days));
    values[`TOTAL_NUMBER_OF_UNMOD_TESTS_COMPLETED${suffix}`] = count((part) => kindOf(part.study) === 'UNMODERATED_TEST' && within(part.completedAt, days));
    values[`TOTAL_NUMBER_OF_SURVEYS_COMPLETED${suffix}`] = count((part) => kindOf(part.study) === 'SURVEY' && within(part.completedAt, days));
  }
  values.LAST_CONTACT_DATE = fixture.lastContact === null ? null : ago(fixture.lastContact);
  values.STUDY_MEMBERSHIP = parts.length;
  const paid = (fixture.incentives ?? []).filter((incentive) => ['UNCLAIMED', 'CLAIMED', 'SENT'].includes(incentive.status));
  const sum = (list: typeof paid) => list.reduce((total, incentive) => total + incentive.cents, 0);
  values.TOTAL_SENT_LAST_YEAR = sum(paid.filter((incentive) => within(ago(incentive.days), 365)));
  values.TOTAL_SENT_LAST_CALENDAR_YEAR = sum(paid.filter((incentive) => ago(incentive.days).startsWith('2025-')));
  values.TOTAL_SENT_ALL_TIME = sum(paid);
  values.LAST_INTERVIEW_DATE = max(parts.filter((part) => kindOf(part.study) === 'INTERVIEW').map((part) => part.completedAt));
  values.LAST_UNMOD_TEST_DATE = max(parts.filter((part) => kindOf(part.study) === 'UNMODERATED_TEST').map((part) => part.completedAt));
  values.LAST_SURVEY_DATE = max(parts.filter((part) => kindOf(part.study) === 'SURVEY').map((part) => part.completedAt));
  const noShows = parts.filter((part) => kindOf(part.study) === 'INTERVIEW').reduce((sum, part) => sum + (part.noShowCount ?? 0), 0);
  const interviews = count((part) => kindOf(part.study) === 'INTERVIEW' && !!part.completedAt);
  values.TOTAL_NUMBER_OF_NO_SHOW_INTERVIEWS = noShows;
  values.SHOW_RATE = interviews + noShows === 0 ? null : Math.round((interviews / (interviews + noShows)) * 1e4) / 1e4;
  const ratings = parts.map((part) => part.rating).filter((rating): rating is number => typeof rating === 'number');
  values.PARTICIPANT_RATING = ratings.length === 0 ? null : Math.round((ratings.reduce((a, b) => a + b, 0) / ratings.length) * 100) / 100;
  values.TOTAL_RATINGS = ratings.length;
  values.CONSENT_SUBMISSIONS = fixture.consents;
  values.CONSENT_FORM_WAS_SUBMITTED = fixture.consents > 0;
  const screened = parts
    .map((part, index) => ({ part, id: participantIds[index]! }))
    .filter(({ part }) => (part.screenerState ?? 'NOT_SENT') !== 'NOT_SENT')
    .sort((a, b) => {
      const at = (x: typeof a) => x.part.screenerSubmittedAt ?? x.part.screenerSentAt ?? '';
      return at(a) === at(b) ? (a.id < b.id ? 1 : -1) : at(a) < at(b) ? 1 : -1;
    });
  values.SCREENER_STATUS = screened[0]?.part.screenerState ?? null;
  values.SCREENER_SUBMITTED_AT = max(parts.map((part) => part.screenerSubmittedAt));
  // Oldest first; the fixture has no two submissions of one person at the same time.
  const submissions = [...(fixture.submissions ?? [])].sort((a, b) => b.days - a.days);
  const codes = submissions.filter((submission) => submission.code !== null);
  values.SIGNUP_REFERRAL_CODES = new Set(codes.map((submission) => submission.code)).size;
  values.FORM_SIGNEDUP_AT = submissions.length === 0 ? null : ago(submissions.at(-1)!.days);
  values.FORM_APPROVAL_STATUS = submissions.at(-1)?.approval ?? null;
  values.FORM_FIRST_SIGNUP_REFERRAL_CODE = codes[0]?.code ?? null;
  values.FORM_LAST_SIGNUP_REFERRAL_CODE = codes.at(-1)?.code ?? null;
  return values;
}

let service: TestService;
let tenant: Tenant;
let personIds: Record<string, string>;
let expected: Record<string, Record<string, Comparable>>;
let studies: Record<StudyKey, string>;

beforeAll(async () => {
  service = await startTestService();
  service.deps.clock.set(new Date(NOW));
  tenant = await createTenant(service);
  studies = {} as Record<StudyKey, string>;
  for (const key of Object.keys(studyTypes) as StudyKey[]) studies[key] = await createStudy(service, tenant, studyTypes[key], key);
  const ids = await insertPeople(service, tenant.workspaceId, keys.map((key) => ({ email: `${key}@example.org`, firstName: key })));
  const form = await createForm(service, tenant);
  personIds = Object.fromEntries(keys.map((key, index) => [key, ids[index]!]));
  expected = {};
  for (const key of keys) {
    const fixture = people[key]!;
    const personId = personIds[key]!;
    const participantIds = await insertParticipants(
      service,
      tenant.workspaceId,
      fixture.participations.map((participation) => ({ studyId: studies[participation.study], studyType: studyTypes[participation.study], personId, participation })),
    );
    await insertContacts(service, tenant.workspaceId, fixture.contacts.map((days) => ({ personId, participantId: participantIds[0]!, studyId: studies[fixture.participations[0]!.study], at: ago(days) })));
    await insertConsents(service, tenant.workspaceId, Array.from({ length: fixture.consents }, (_, index) => ({ personId, studyId: studies.SUR1, at: ago(index + 1) })));
    await setLastContact(service, tenant.workspaceId, personId, fixture.lastContact === null ? null : ago(fixture.lastContact));
    await insertIncentives(
      service,
      tenant.workspaceId,
      (fixture.incentives ?? []).map((incentive) => ({
        participantId: participantIds[0]!,
        studyId: studies[fixture.participations[0]!.study],
        personId,
        sentAt: ago(incentive.days),
        amountCents: incentive.cents,
        status: incentive.status,
        sentByUserId: tenant.userId,
      })),
    );
    await insertSubmissions(
      service,
      tenant.workspaceId,
      (fixture.submissions ?? []).map((submission) => ({ signupFormId: form.signupFormId, personId, at: ago(submission.days), referralCode: submission.code, approvalStatus: submission.approval })),
    );
    expected[key] = model(fixture, participantIds);
  }
  // Another workspace's history never counts here.
  const other = await createTenant(service, 'Other');
  const [stranger] = await insertPeople(service, other.workspaceId, [{ email: 'ann@example.org' }]);
  const otherStudy = await createStudy(service, other, 'INTERVIEWS');
  await insertParticipants(service, other.workspaceId, [{ studyId: otherStudy, studyType: 'INTERVIEWS', personId: stranger!, participation: { status: 'COMPLETED', completedAt: ago(1), invitedAt: ago(1), rating: 1 } }]);
});
afterAll(async () => service.stop());

async function readAll(filter: unknown, size: number): Promise<{ ids: string[]; totals: number[] }> {
  const ids: string[] = [];
  const totals: number[] = [];
  let startCursor: string | undefined;
  for (;;) {
    const response = await call(service, 'POST', '/people/search', { token: tenant.token, body: { filter, pageInfo: { size, ...(startCursor ? { startCursor } : {}) } } });
    expect(response.statusCode, response.body).toBe(200);
    const body = response.json<{ results: { personId: string }[]; total: number; pageInfo: { hasNextPage: boolean; endCursor: string } }>();
    ids.push(...body.results.map((person) => person.personId));
    totals.push(body.total);
    if (!body.pageInfo.hasNextPage) return { ids, totals };
    startCursor = body.pageInfo.endCursor;
  }
}

const derivedNames = Object.keys(historyNames);

describe('derived PERSON names: sorting', () => {
  it('the model covers every derived name', () => {
    expect(Object.keys(expected.ann!).sort()).toEqual(Object.keys(historyNames).sort());
  });

  for (const name of derivedNames) {
    it(`sorts by ${name} both ways, nulls last, ties by person id, also one row per page`, async () => {
      for (const direction of ['ASC', 'DESC'] as const) {
        const order = expectedOrder(keys.map((key) => ({ id: personIds[key]!, value: expected[key]![name]! })), direction);
        const filter = { filters: [], sort: { operator: direction, propertyGroup: 'PERSON', propertyName: name } };
        expect((await readAll(filter, 1000)).ids, `${name} ${direction}`).toEqual(order);
        const paged = await readAll(filter, 1);
        expect(paged.ids, `${name} ${direction}, one per page`).toEqual(order);
        expect(new Set(paged.totals)).toEqual(new Set([keys.length]));
      }
    });
  }
});

describe('derived PERSON names: paging while time passes', () => {
  it('reads every page of a walk at the instant of its first page, so keys that age do not repeat or skip rows', async () => {
    const filter = { filters: [], sort: { operator: 'DESC', propertyGroup: 'PERSON', propertyName: 'TOTAL_NUMBER_OF_CONTACT_L30' } };
    const atStart = (await readAll(filter, 1000)).ids;
    const first = await call(service, 'POST', '/people/search', { token: tenant.token, body: { filter, pageInfo: { size: 2 } } });
    const body = first.json<{ results: { personId: string }[]; pageInfo: { endCursor: string } }>();
    // Three weeks on, most contacts have left the 30-day window: the keys of unseen people fell.
    service.deps.clock.set(new Date(NOW + 21 * DAY));
    try {
      const ids = body.results.map((person) => person.personId);
      let startCursor: string | undefined = body.pageInfo.endCursor;
      while (startCursor) {
        const page = await call(service, 'POST', '/people/search', { token: tenant.token, body: { filter, pageInfo: { size: 2, startCursor } } });
        const next = page.json<{ results: { personId: string }[]; pageInfo: { hasNextPage: boolean; endCursor: string } }>();
        ids.push(...next.results.map((person) => person.personId));
        startCursor = next.pageInfo.hasNextPage ? next.pageInfo.endCursor : undefined;
      }
      expect(ids).toEqual(atStart);
      // A new walk reads the new instant.
      expect((await readAll(filter, 1000)).ids).not.toEqual(atStart);
    } finally {
      service.deps.clock.set(new Date(NOW));
    }
  });
});

describe('derived PERSON names: filtering', () => {
  /** A filter on `name` and which fixture people it must find. */
  function filterFor(name: string): { filter: object; matches: (value: Comparable) => boolean } | undefined {
    const definition = historyNames[name]!;
    const property = { propertyGroup: 'PERSON', propertyName: name };
    switch (definition.type) {
      case 'number':
        return { filter: { property, comparison: 'GREATER_THAN_OR_EQUAL', value: 1 }, matches: (value) => typeof value === 'number' && value >= 1 };
      case 'datetime':
        return { filter: { property, comparison: 'IN_LAST_DAYS', value: 30 }, matches: (value) => typeof value === 'string' && value >= ago(30) && value <= ago(0) };
      case 'boolean':
        return { filter: { property, comparison: 'IS_TRUE' }, matches: (value) => value === true };
      case 'enum':
        return { filter: { property, comparison: 'IS_ANY_OF', value: ['QUALIFIED', 'SCREENER_SENT'].filter((option) => definition.options!.some((known) => known.name === option)).concat(definition.options![0]!.name) }, matches: (value) => value === 'QUALIFIED' || value === 'SCREENER_SENT' || value === definition.options![0]!.name };
      default:
        return undefined;
    }
  }

  for (const name of derivedNames) {
    const made = filterFor(name);
    if (!made) continue;
    it(`filters by ${name} (and its complement with IS_EMPTY / NOT)`, async () => {
      const want = keys.filter((key) => made.matches(expected[key]![name]!)).map((key) => personIds[key]!).sort();
      expect((await readAll({ filters: [made.filter] }, 1000)).ids.sort(), name).toEqual(want);
      const empty = keys.filter((key) => expected[key]![name] === null).map((key) => personIds[key]!).sort();
      expect((await readAll({ filters: [{ property: { propertyGroup: 'PERSON', propertyName: name }, comparison: 'IS_EMPTY' }] }, 1000)).ids.sort(), `${name} IS_EMPTY`).toEqual(empty);
    });
  }

  it('filters by study membership, with an unknown study a 404 naming the value', async () => {
    const property = { propertyGroup: 'PERSON', propertyName: 'STUDY_MEMBERSHIP' };
    const inGroup = keys.filter((key) => people[key]!.participations.some((part) => part.study === 'GRP')).map((key) => personIds[key]!).sort();
    expect((await readAll({ filters: [{ property, comparison: 'HAS_ANY_OF', value: [studies.GRP] }] }, 1000)).ids.sort()).toEqual(inGroup);
    const both = keys.filter((key) => ['INT1', 'UNM1'].every((study) => people[key]!.participations.some((part) => part.study === study))).map((key) => personIds[key]!).sort();
    expect((await readAll({ filters: [{ property, comparison: 'HAS_ALL_OF', value: [studies.INT1, studies.UNM1] }] }, 1000)).ids.sort()).toEqual(both);
    const response = await call(service, 'POST', '/people/search', {
      token: tenant.token,
      body: { filter: { filters: [{ property, comparison: 'HAS_ANY_OF', value: [studies.INT1, 'stu_unknown'] }] } },
    });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ errors: [{ message: 'Study not found', path: ['filter', 'filters', '0', 'value', '1'] }] });
  });

  it('filters by signup referral codes, a set of free-text values', async () => {
    const property = { propertyGroup: 'PERSON', propertyName: 'SIGNUP_REFERRAL_CODES' };
    const withCode = (code: string) => keys.filter((key) => people[key]!.submissions?.some((submission) => submission.code === code)).map((key) => personIds[key]!).sort();
    expect((await readAll({ filters: [{ property, comparison: 'HAS_ANY_OF', value: ['fb'] }] }, 1000)).ids.sort()).toEqual(withCode('fb'));
    expect((await readAll({ filters: [{ property, comparison: 'HAS_ALL_OF', value: ['fb', 'tw'] }] }, 1000)).ids).toEqual([personIds.ann]);
    const none = keys.filter((key) => !people[key]!.submissions?.some((submission) => submission.code === 'fb')).map((key) => personIds[key]!).sort();
    expect((await readAll({ filters: [{ property, comparison: 'HAS_NONE_OF', value: ['fb'] }] }, 1000)).ids.sort()).toEqual(none);
  });

  it('combines derived names in nested groups: interviews in the last 90 days < 2 OR show rate below 0.5', async () => {
    const filter = {
      operator: 'OR',
      filters: [
        { property: { propertyGroup: 'PERSON', propertyName: 'TOTAL_NUMBER_OF_INTERVIEWS_COMPLETED_L90' }, comparison: 'LESS_THAN', value: 2 },
        { operator: 'AND', filters: [{ property: { propertyGroup: 'PERSON', propertyName: 'SHOW_RATE' }, comparison: 'LESS_THAN', value: 0.5 }] },
      ],
    };
    const want = keys
      .filter((key) => (expected[key]!.TOTAL_NUMBER_OF_INTERVIEWS_COMPLETED_L90 as number) < 2 || (expected[key]!.SHOW_RATE !== null && (expected[key]!.SHOW_RATE as number) < 0.5))
      .map((key) => personIds[key]!)
      .sort();
    expect((await readAll(filter, 1000)).ids.sort()).toEqual(want);
  });
});
