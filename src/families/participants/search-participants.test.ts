import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type Tenant, type TestService } from '../../../test/harness.js';
import { createProperties } from '../../../test/people-factory.js';
import { describeSecurity } from '../../../test/security.js';
import { participantNames } from './search-names.js';
import { type Comparable, createStudy, expectedOrder, insertIncentives, insertParticipants, insertSubmissions, type Participation } from './search-fixtures.js';
import { createForm } from '../signups/test-support.js';
import { insertPeople } from '../people/search-fixtures.js';

/**
 * E1, POST /studies/{studyId}/participants/search: every PARTICIPANT name sorted both ways and
 * filtered, checked against the fixture; PERSON names and custom properties through the
 * participant's person; paging, limits, errors and security.
 */

const NOW = Date.parse('2026-11-22T12:00:00.000Z');
const DAY = 86_400_000;
const ago = (days: number) => new Date(NOW - days * DAY).toISOString();

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
  service.deps.clock.set(new Date(NOW));
});
afterAll(async () => service.stop());

interface PageBody {
  results: { participantId: string; personId: string; email: string | null; status: string }[];
  total: number;
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string; endCursor: string };
}

const search = (tenant: Tenant, studyId: string, body: unknown, token = tenant.token) => call(service, 'POST', `/studies/${studyId}/participants/search`, { token, body });

async function readAll(tenant: Tenant, studyId: string, filter: unknown, size: number, between?: (page: number) => Promise<void>) {
  const ids: string[] = [];
  const totals: number[] = [];
  let startCursor: string | undefined;
  for (let page = 0; ; page++) {
    const response = await search(tenant, studyId, { filter, pageInfo: { size, ...(startCursor ? { startCursor } : {}) } });
    expect(response.statusCode, response.body).toBe(200);
    const body = response.json<PageBody>();
    ids.push(...body.results.map((participant) => participant.participantId));
    totals.push(body.total);
    if (!body.pageInfo.hasNextPage) return { ids, totals };
    startCursor = body.pageInfo.endCursor;
    await between?.(page);
  }
}

describe('E1: PARTICIPANT names', () => {
  let tenant: Tenant;
  let studyId: string;
  let participantIds: string[];
  // Seven participants of an interview study; each column per participant (null: none).
  const rows: Participation[] = [
    { status: 'COMPLETED', approvalStatus: 'APPROVED', screenerState: 'QUALIFIED', screenerSentAt: ago(9), screenerSubmittedAt: ago(8), interviewStartTime: '2026-11-20T15:00:00.000Z', completedAt: ago(2), rating: 5, note: 'great', quotaGroup: 'b', consentSubmittedAt: ago(10) },
    { status: 'SCHEDULED', approvalStatus: 'APPROVED', screenerState: 'SUBMITTED', screenerSentAt: ago(7), screenerSubmittedAt: ago(6), interviewStartTime: '2026-11-25T09:30:00.000Z', note: 'call first', quotaGroup: 'a' },
    { status: 'INVITED', approvalStatus: 'PENDING_REVIEW', screenerState: 'SCREENER_SENT', screenerSentAt: ago(3), invitedAt: ago(3) },
    { status: 'NOT_STARTED' },
    { status: 'NO_SHOW', approvalStatus: 'REJECTED', screenerState: 'DISQUALIFIED', screenerSentAt: ago(9), screenerSubmittedAt: ago(7), interviewStartTime: '2026-11-20T08:00:00.000Z', quotaGroup: 'a', noShowCount: 1 },
    { status: 'CANCELED', approvalStatus: 'REJECTED', interviewStartTime: '2026-11-25T17:00:00.000Z', testCompletedAt: ago(1) },
    { status: 'HIDDEN', approvalStatus: 'APPROVED', screenerState: 'QUALIFIED', screenerSentAt: ago(9), screenerSubmittedAt: ago(9), consentSubmittedAt: ago(4), note: 'archive' },
  ];
  const day = (iso: string | null | undefined) => (iso ? `${iso.slice(0, 10)}T00:00:00.000Z` : null);
  const state = (status: string) => (['NOT_STARTED', 'INVITED', 'SCHEDULED', 'NO_SHOW'].includes(status) ? 'IN_PROGRESS' : status);
  const shortlist = (approval: string) => (approval === 'APPROVED' ? 'SHORTLISTED' : approval === 'REJECTED' ? 'REMOVED' : 'PENDING');
  const match = (screener: string) => (screener === 'QUALIFIED' ? true : screener === 'DISQUALIFIED' ? false : null);
  const model: Record<string, (row: Participation, index: number) => Comparable> = {
    PARTICIPANT_ID: (_row, index) => participantIds[index]!,
    STATUS: (row) => row.status!,
    STATE: (row) => state(row.status!),
    APPROVAL_STATUS: (row) => row.approvalStatus ?? 'PENDING_REVIEW',
    SCREENER_STATUS: (row) => row.screenerState ?? 'NOT_SENT',
    SCREENER_SENT_AT: (row) => row.screenerSentAt ?? null,
    SCREENER_SUBMITTED_AT: (row) => row.screenerSubmittedAt ?? null,
    TEST_COMPLETED_AT: (row) => row.testCompletedAt ?? null,
    INTERVIEW_START_TIME: (row) => row.interviewStartTime ?? null,
    INTERVIEW_START_DATE: (row) => day(row.interviewStartTime),
    // Paid: UNCLAIMED, CLAIMED and SENT incentives of this participant (see the incentives inserted below).
    INCENTIVE_PAID: (_row, index) => [2500 + 1000, 0, 700, 0, 0, 0, 0][index]!,
    CONSENT_FORM_SUBMITTED: (row) => !!row.consentSubmittedAt,
    RECRUITMENT_CRITERIA_MATCH: (row) => match(row.screenerState ?? 'NOT_SENT'),
    // Submissions to a form of the study's population count; another population's form does not.
    STUDY_FIRST_SIGNUP_REFERRAL_CODE: (_row, index) => (index === 0 ? 'a1' : null),
    STUDY_LAST_SIGNUP_REFERRAL_CODE: (_row, index) => (index === 0 ? 'a2' : null),
    STUDY_QUOTA_GROUP: (row) => row.quotaGroup ?? null,
    STUDY_SHORTLIST_STATUS: (row) => shortlist(row.approvalStatus ?? 'PENDING_REVIEW'),
    STUDY_NOTE: (row) => row.note ?? null,
  };

  beforeAll(async () => {
    tenant = await createTenant(service);
    const studyForm = await createForm(service, tenant);
    const otherForm = await createForm(service, tenant);
    studyId = await createStudy(service, tenant, 'INTERVIEWS', 'Searched', studyForm.populationId);
    const people = await insertPeople(service, tenant.workspaceId, rows.map((_row, index) => ({ email: `p${index}@example.org` })));
    await insertSubmissions(service, tenant.workspaceId, [
      { signupFormId: studyForm.signupFormId, personId: people[0]!, at: ago(10), referralCode: 'a1' },
      { signupFormId: studyForm.signupFormId, personId: people[0]!, at: ago(5), referralCode: 'a2' },
      { signupFormId: otherForm.signupFormId, personId: people[0]!, at: ago(1), referralCode: 'g' },
      { signupFormId: studyForm.signupFormId, personId: people[1]!, at: ago(3), referralCode: null },
      { signupFormId: otherForm.signupFormId, personId: people[4]!, at: ago(3), referralCode: 'g' },
    ]);
    participantIds = await insertParticipants(service, tenant.workspaceId, rows.map((participation, index) => ({ studyId, studyType: 'INTERVIEWS', personId: people[index]!, participation })));
    await insertIncentives(service, tenant.workspaceId, [
      { participantId: participantIds[0]!, studyId, personId: people[0]!, sentAt: ago(5), amountCents: 2500, status: 'CLAIMED', sentByUserId: tenant.userId },
      { participantId: participantIds[0]!, studyId, personId: people[0]!, sentAt: ago(4), amountCents: 1000, status: 'SENT', sentByUserId: tenant.userId },
      { participantId: participantIds[0]!, studyId, personId: people[0]!, sentAt: ago(3), amountCents: 4000, status: 'CANCELED', sentByUserId: tenant.userId },
      { participantId: participantIds[1]!, studyId, personId: people[1]!, sentAt: ago(3), amountCents: 9000, status: 'EXPIRED', sentByUserId: tenant.userId },
      { participantId: participantIds[2]!, studyId, personId: people[2]!, sentAt: ago(2), amountCents: 700, status: 'UNCLAIMED', sentByUserId: tenant.userId },
    ]);
    // A participant of another study, and one whose person is deleted, never appear.
    const otherStudy = await createStudy(service, tenant, 'INTERVIEWS');
    await insertParticipants(service, tenant.workspaceId, [{ studyId: otherStudy, studyType: 'INTERVIEWS', personId: people[0]!, participation: { status: 'COMPLETED' } }]);
    const [deleted] = await insertPeople(service, tenant.workspaceId, [{ email: 'gone@example.org', deletedAt: ago(1) }]);
    await insertParticipants(service, tenant.workspaceId, [{ studyId, studyType: 'INTERVIEWS', personId: deleted!, participation: { status: 'INVITED' } }]);
  });

  it('the model covers every PARTICIPANT name', () => {
    expect(Object.keys(model).sort()).toEqual(Object.keys(participantNames).sort());
  });

  for (const name of Object.keys(participantNames)) {
    it(`sorts by PARTICIPANT.${name} both ways, nulls last, ties by participant id, also one row per page`, async () => {
      for (const direction of ['ASC', 'DESC'] as const) {
        const order = expectedOrder(rows.map((row, index) => ({ id: participantIds[index]!, value: model[name]!(row, index) })), direction);
        const filter = { filters: [], sort: { operator: direction, propertyGroup: 'PARTICIPANT', propertyName: name } };
        expect((await readAll(tenant, studyId, filter, 1000)).ids, `${name} ${direction}`).toEqual(order);
        const paged = await readAll(tenant, studyId, filter, 1);
        expect(paged.ids, `${name} ${direction}, one per page`).toEqual(order);
        expect(new Set(paged.totals)).toEqual(new Set([rows.length]));
      }
    });
  }

  const filterCases: [string, object, (row: Participation, index: number) => boolean][] = [
    ['STATUS IS_ANY_OF', { comparison: 'IS_ANY_OF', value: ['INVITED', 'SCHEDULED'] }, (row) => ['INVITED', 'SCHEDULED'].includes(row.status!)],
    ['STATUS IS_NONE_OF', { comparison: 'IS_NONE_OF', value: ['HIDDEN'] }, (row) => row.status !== 'HIDDEN'],
    ['STATE IS_ANY_OF', { comparison: 'IS_ANY_OF', value: ['IN_PROGRESS'] }, (row) => state(row.status!) === 'IN_PROGRESS'],
    ['APPROVAL_STATUS IS_ANY_OF', { comparison: 'IS_ANY_OF', value: ['REJECTED'] }, (row) => row.approvalStatus === 'REJECTED'],
    ['SCREENER_STATUS IS_ANY_OF', { comparison: 'IS_ANY_OF', value: ['QUALIFIED', 'SUBMITTED'] }, (row) => ['QUALIFIED', 'SUBMITTED'].includes(row.screenerState ?? '')],
    ['SCREENER_SENT_AT IN_LAST_DAYS', { comparison: 'IN_LAST_DAYS', value: 7 }, (row) => !!row.screenerSentAt && row.screenerSentAt >= ago(7)],
    ['INTERVIEW_START_TIME AFTER', { comparison: 'AFTER', value: '2026-11-22' }, (row) => !!row.interviewStartTime && row.interviewStartTime >= '2026-11-23'],
    ['INTERVIEW_START_DATE ON', { comparison: 'ON', value: '2026-11-25' }, (row) => row.interviewStartTime?.startsWith('2026-11-25') ?? false],
    ['TEST_COMPLETED_AT IS_NOT_EMPTY', { comparison: 'IS_NOT_EMPTY' }, (row) => !!row.testCompletedAt],
    ['CONSENT_FORM_SUBMITTED IS_TRUE', { comparison: 'IS_TRUE' }, (row) => !!row.consentSubmittedAt],
    ['RECRUITMENT_CRITERIA_MATCH IS_FALSE', { comparison: 'IS_FALSE' }, (row) => row.screenerState === 'DISQUALIFIED'],
    ['RECRUITMENT_CRITERIA_MATCH IS_EMPTY', { comparison: 'IS_EMPTY' }, (row) => !['QUALIFIED', 'DISQUALIFIED'].includes(row.screenerState ?? '')],
    ['STUDY_QUOTA_GROUP IN', { comparison: 'IN', value: ['a'] }, (row) => row.quotaGroup === 'a'],
    ['STUDY_NOTE CONTAINS', { comparison: 'CONTAINS', value: 'CALL' }, (row) => row.note?.includes('call') ?? false],
    ['STUDY_SHORTLIST_STATUS IS_ANY_OF', { comparison: 'IS_ANY_OF', value: ['SHORTLISTED'] }, (row) => row.approvalStatus === 'APPROVED'],
    ['INCENTIVE_PAID EQUALS', { comparison: 'EQUALS', value: 0 }, (_row, index) => ![0, 2].includes(index)],
    ['PARTICIPANT_ID STARTS_WITH', { comparison: 'STARTS_WITH', value: 'ptc_' }, () => true],
  ];
  for (const [label, comparison, wanted] of filterCases) {
    it(`filters by PARTICIPANT.${label}`, async () => {
      const name = label.split(' ')[0]!;
      const filter = { filters: [{ property: { propertyGroup: 'PARTICIPANT', propertyName: name }, ...comparison }] };
      const want = rows.flatMap((row, index) => (wanted(row, index) ? [participantIds[index]!] : []));
      const found = await readAll(tenant, studyId, filter, 1000);
      expect(found.ids, label).toEqual(want);
      expect(found.totals).toEqual([want.length]);
    });
  }

  it("reads INCENTIVE names from the participant's most recent incentive, empty when there is none", async () => {
    const byAmount = { filters: [], sort: { operator: 'DESC', propertyGroup: 'INCENTIVE', propertyName: 'AMOUNT' } };
    // Latest incentives: p0 4000 (CANCELED), p1 9000 (EXPIRED), p2 700; the others none (last).
    const rest = participantIds.slice(3).reverse();
    expect((await readAll(tenant, studyId, byAmount, 1)).ids).toEqual([participantIds[1], participantIds[0], participantIds[2], ...rest]);
    const canceled = { filters: [{ property: { propertyGroup: 'INCENTIVE', propertyName: 'STATUS' }, comparison: 'IS_ANY_OF', value: ['CANCELED', 'EXPIRED'] }] };
    expect((await readAll(tenant, studyId, canceled, 10)).ids).toEqual([participantIds[0], participantIds[1]]);
    const none = { filters: [{ property: { propertyGroup: 'INCENTIVE', propertyName: 'SENT_AT' }, comparison: 'IS_EMPTY' }] };
    expect((await readAll(tenant, studyId, none, 10)).ids).toEqual(participantIds.slice(3));
  });

  it('combines PARTICIPANT and PERSON names in nested groups', async () => {
    const filter = {
      operator: 'OR',
      filters: [
        { operator: 'AND', filters: [{ property: { propertyGroup: 'PARTICIPANT', propertyName: 'STATUS' }, comparison: 'IS_ANY_OF', value: ['SCHEDULED', 'NO_SHOW'] }, { property: { propertyGroup: 'PARTICIPANT', propertyName: 'STUDY_QUOTA_GROUP' }, comparison: 'EQUALS', value: 'a' }] },
        { property: { propertyGroup: 'PERSON', propertyName: 'EMAIL' }, comparison: 'EQUALS', value: 'P3@EXAMPLE.ORG' },
      ],
    };
    expect((await readAll(tenant, studyId, filter, 1000)).ids).toEqual([participantIds[1], participantIds[3], participantIds[4]]);
  });
});

describe('E1: the person behind each participant', () => {
  it('filters and sorts by custom person properties of every type, and presents the person masked without the right', async () => {
    const tenant = await createTenant(service);
    const ids = await createProperties(service, tenant, [
      { name: 'Country', propertyType: 'SINGLE_SELECT', propertyOptions: [{ name: 'US' }, { name: 'GB' }, { name: 'DE' }] },
      { name: 'Age', propertyType: 'NUMBER' },
      { name: 'Job', propertyType: 'STRING' },
      { name: 'Since', propertyType: 'DATETIME' },
      { name: 'Driver', propertyType: 'BOOLEAN' },
      { name: 'Devices', propertyType: 'MULTI_SELECT', propertyOptions: [{ name: 'iOS' }, { name: 'Android' }] },
      { name: 'Home', propertyType: 'LOCATION' },
    ]);
    const studyId = await createStudy(service, tenant, 'SURVEY');
    const seeds = [
      { email: 'us@example.org', firstName: 'Una', properties: { [ids.Country!]: 'US', [ids.Age!]: 30, [ids.Job!]: 'Baker', [ids.Since!]: ago(10), [ids.Driver!]: true, [ids.Devices!]: ['iOS'], [ids.Home!]: { country: 'US', lat: 40.7, lng: -74 } } },
      { email: 'gb@example.org', firstName: 'Gil', properties: { [ids.Country!]: 'GB', [ids.Age!]: 65, [ids.Job!]: 'Teacher', [ids.Since!]: ago(400), [ids.Driver!]: false, [ids.Devices!]: ['Android', 'iOS'], [ids.Home!]: { country: 'GB', lat: 51.5, lng: -0.1 } } },
      { email: 'de@example.org', firstName: 'Dag', properties: { [ids.Country!]: 'DE', [ids.Age!]: 45 } },
      { email: 'none@example.org' },
    ];
    const people = await insertPeople(service, tenant.workspaceId, seeds);
    const participants = await insertParticipants(service, tenant.workspaceId, people.map((personId) => ({ studyId, studyType: 'SURVEY', personId, participation: {} })));
    const custom = (propertyId: string, comparison: string, value?: unknown) => ({ filters: [{ property: { propertyId }, comparison, ...(value === undefined ? {} : { value }) }] });
    const cases: [object, number[]][] = [
      [custom(ids.Country!, 'IS_ANY_OF', ['US', 'GB']), [0, 1]],
      [custom(ids.Age!, 'BETWEEN', [40, 70]), [1, 2]],
      [custom(ids.Job!, 'CONTAINS', 'each'), [1]],
      [custom(ids.Since!, 'IN_LAST_DAYS', 30), [0]],
      [custom(ids.Driver!, 'IS_FALSE'), [1]],
      [custom(ids.Devices!, 'HAS_ALL_OF', ['iOS', 'Android']), [1]],
      [custom(ids.Home!, 'WITHIN_KM', { lat: 51.5, lng: 0, km: 50 }), [1]],
      [custom(ids.Home!, 'COUNTRY_IS', ['us']), [0]],
      [custom(ids.Country!, 'IS_EMPTY'), [3]],
      [{ operator: 'OR', filters: [custom(ids.Country!, 'IS_ANY_OF', ['DE']).filters[0], custom(ids.Age!, 'GREATER_THAN_OR_EQUAL', 60).filters[0]] }, [1, 2]],
    ];
    for (const [filter, want] of cases) {
      expect((await readAll(tenant, studyId, filter, 1000)).ids, JSON.stringify(filter)).toEqual(want.map((index) => participants[index]!));
    }
    const byAge = await readAll(tenant, studyId, { filters: [], sort: { operator: 'DESC', propertyGroup: 'PERSON', propertyName: ids.Age! } }, 1);
    expect(byAge.ids).toEqual([1, 2, 0, 3].map((index) => participants[index]!));

    const response = await search(tenant, studyId, { pageInfo: { size: 1 } });
    expect(response.json<PageBody>().results[0]).toMatchObject({ participantId: participants[0], personId: people[0], email: 'us@example.org', status: 'NOT_STARTED', addedToStudyAt: expect.any(String) });
    const { token } = await tenant.tokenFor('OBSERVER', { canReadPersonalData: false });
    const masked = await search(tenant, studyId, { pageInfo: { size: 1 } }, token);
    expect(masked.json<PageBody>().results[0]!.email).toBe('***@***');
    expect((await search(tenant, studyId, { filter: { filters: [{ property: { propertyGroup: 'PERSON', propertyName: 'EMAIL' }, comparison: 'IS_NOT_EMPTY' }] } }, token)).statusCode).toBe(403);
  });
});

describe('E1: paging', () => {
  it('pages through a large result with a small size: no duplicates, no gaps, exact total, also with participants added and removed between pages', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(service, tenant, 'INTERVIEWS');
    const people = await insertPeople(service, tenant.workspaceId, Array.from({ length: 120 }, (_, index) => ({ email: `p${index}@example.org` })));
    const participants = await insertParticipants(
      service,
      tenant.workspaceId,
      people.map((personId, index) => ({ studyId, studyType: 'INTERVIEWS', personId, participation: { status: index % 3 === 0 ? 'INVITED' : 'NOT_STARTED', invitedAt: index % 3 === 0 ? ago(index % 7) : null } })),
    );
    const filter = { filters: [], sort: { operator: 'DESC', propertyGroup: 'PARTICIPANT', propertyName: 'STATUS' } };
    const whole = await readAll(tenant, studyId, filter, 1000);
    expect(whole.ids).toHaveLength(120);
    expect((await readAll(tenant, studyId, filter, 7)).ids).toEqual(whole.ids);

    // Between pages: a new participant joins and the person of an unseen one is deleted.
    const extra = await insertPeople(service, tenant.workspaceId, [{ email: 'late@example.org' }]);
    let removed: string | undefined;
    const paged = await readAll(tenant, studyId, filter, 10, async (page) => {
      if (page === 2) {
        await insertParticipants(service, tenant.workspaceId, [{ studyId, studyType: 'INTERVIEWS', personId: extra[0]!, participation: { status: 'INVITED' } }]);
        removed = whole.ids[100];
        const index = participants.indexOf(removed!);
        await service.deps.db.updateTable('people').set({ deleted_at: ago(0) }).where('person_id', '=', people[index]!).execute();
      }
    });
    expect(new Set(paged.ids).size).toBe(paged.ids.length);
    // Everyone who matched throughout is there, in order; the removed one is not.
    expect(paged.ids.filter((id) => whole.ids.includes(id))).toEqual(whole.ids.filter((id) => id !== removed));
    expect(paged.totals.at(-1)).toBe(120);
  });

  it('defaults to 25, allows 1000, and gives empty cursors for an empty result', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(service, tenant, 'INTERVIEWS');
    const empty = await search(tenant, studyId, undefined);
    expect(empty.statusCode).toBe(200);
    expect(empty.json()).toEqual({ results: [], total: 0, pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: '', endCursor: '' } });
    const people = await insertPeople(service, tenant.workspaceId, Array.from({ length: 30 }, (_, index) => ({ email: `p${index}@example.org` })));
    await insertParticipants(service, tenant.workspaceId, people.map((personId) => ({ studyId, studyType: 'INTERVIEWS', personId, participation: {} })));
    const first = await search(tenant, studyId, {});
    expect(first.json<PageBody>().results).toHaveLength(25);
    expect(first.json<PageBody>()).toMatchObject({ total: 30, pageInfo: { hasNextPage: true } });
    expect(first.headers['x-ratelimit-limit']).toBeDefined();
    expect(first.headers['x-ratelimit-remaining']).toBeDefined();
    expect(first.headers['x-ratelimit-reset']).toBeDefined();
    expect((await search(tenant, studyId, { pageInfo: { size: 1000 } })).json<PageBody>().results).toHaveLength(30);
  });
});

describe('E1: bad input', () => {
  let tenant: Tenant;
  let studyId: string;
  beforeAll(async () => {
    tenant = await createTenant(service);
    studyId = await createStudy(service, tenant, 'INTERVIEWS');
  });
  const status = { property: { propertyGroup: 'PARTICIPANT', propertyName: 'STATUS' }, comparison: 'IS_ANY_OF', value: ['INVITED'] };
  const refused = async (body: unknown, path: string[], code = 400) => {
    const response = await search(tenant, studyId, body);
    expect(response.statusCode, response.body).toBe(code);
    expect(response.json<{ errors: { path: string[] }[] }>().errors[0]!.path).toEqual(path);
  };

  it('refuses page sizes out of 1–1000, unknown fields, and bad filters, naming the path', async () => {
    await refused({ pageInfo: { size: 0 } }, ['pageInfo', 'size']);
    await refused({ pageInfo: { size: 1001 } }, ['pageInfo', 'size']);
    await refused({ filters: [] }, ['filters']);
    await refused({ filter: { filters: [{ ...status, value: ['ARRIVED'] }] } }, ['filter', 'filters', '0', 'value', '0']);
    await refused({ filter: { filters: [{ ...status, comparison: 'CONTAINS', value: 'x' }] } }, ['filter', 'filters', '0', 'comparison']);
    await refused({ filter: { filters: [{ property: { propertyGroup: 'PARTICIPANT', propertyName: 'SHOE_SIZE' }, comparison: 'IS_EMPTY' }] } }, ['filter', 'filters', '0', 'property', 'propertyName']);
    await refused({ filter: { filters: [], sort: { operator: 'UP', propertyGroup: 'PARTICIPANT', propertyName: 'STATUS' } } }, ['filter', 'sort', 'operator']);
  });

  it('allows 50 Filters through every level and 4 levels of groups, and refuses one more of either', async () => {
    const fifty = Array.from({ length: 50 }, () => status);
    expect((await search(tenant, studyId, { filter: { filters: [{ operator: 'OR', filters: fifty }] } })).statusCode).toBe(200);
    await refused({ filter: { filters: [{ operator: 'OR', filters: fifty }, status] } }, ['filter', 'filters', '1']);
    const nest = (depth: number): object => (depth === 0 ? status : { operator: 'AND', filters: [nest(depth - 1)] });
    expect((await search(tenant, studyId, { filter: { filters: [nest(4)] } })).statusCode).toBe(200);
    await refused({ filter: { filters: [nest(5)] } }, ['filter', 'filters', '0', 'filters', '0', 'filters', '0', 'filters', '0', 'filters', '0']);
  });

  it("refuses a tampered cursor, and another study's or another filter's cursor", async () => {
    const people = await insertPeople(service, tenant.workspaceId, [{ email: 'a@example.org' }, { email: 'b@example.org' }]);
    await insertParticipants(service, tenant.workspaceId, people.map((personId) => ({ studyId, studyType: 'INTERVIEWS', personId, participation: {} })));
    const cursor = (await search(tenant, studyId, { pageInfo: { size: 1 } })).json<PageBody>().pageInfo.endCursor;
    await refused({ pageInfo: { startCursor: `${cursor.slice(0, -2)}xx` } }, ['pageInfo', 'startCursor']);
    await refused({ filter: { filters: [status] }, pageInfo: { startCursor: cursor } }, ['pageInfo', 'startCursor']);
    const otherStudy = await createStudy(service, tenant, 'INTERVIEWS');
    const response = await search(tenant, otherStudy, { pageInfo: { startCursor: cursor } });
    expect(response.statusCode).toBe(400);
  });

  it("answers 404 for an unknown study, another workspace's study, and an unknown study in a membership filter", async () => {
    const response = await search(tenant, 'stu_unknown', {});
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ errors: [{ message: 'Study not found', path: ['studyId'] }] });
    const filter = { filters: [{ property: { propertyGroup: 'PERSON', propertyName: 'STUDY_MEMBERSHIP' }, comparison: 'HAS_ANY_OF', value: ['stu_nope'] }] };
    await refused({ filter }, ['filter', 'filters', '0', 'value', '0'], 404);
  });
});

describeSecurity('POST /studies/{studyId}/participants/search', () => service, {
  method: 'POST',
  right: 'participants:read',
  addressesResource: true,
  request: async (tenant, svc) => ({ url: `/studies/${await createStudy(svc, tenant, 'INTERVIEWS')}/participants/search`, body: { pageInfo: { size: 5 } } }),
});
