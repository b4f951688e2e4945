import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type Tenant, type TestService } from '../../../test/harness.js';
import { describeSecurity } from '../../../test/security.js';
import { incentiveNames } from './search-names.js';
import { type Comparable, createStudy, expectedOrder, type IncentiveSeed, insertIncentives, insertParticipants } from '../participants/search-fixtures.js';
import { insertPeople } from '../people/search-fixtures.js';

/** E7, POST /incentives/search: every INCENTIVE name sorted and filtered, PARTICIPANT and PERSON names, deleted recipients, masking, errors, security. */

const NOW = Date.parse('2026-11-22T12:00:00.000Z');
const ago = (days: number) => new Date(NOW - days * 86_400_000).toISOString();

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
  service.deps.clock.set(new Date(NOW));
});
afterAll(async () => service.stop());

interface PageBody {
  results: { incentiveId: string; recipientEmail: string | null; personId: string; status: string; amountCents: number }[];
  total: number;
  pageInfo: { hasNextPage: boolean; endCursor: string };
}

const search = (tenant: Tenant, body: unknown, token = tenant.token) => call(service, 'POST', '/incentives/search', { token, body });

async function readAll(tenant: Tenant, body: { filter?: unknown; studyId?: string }, size: number) {
  const ids: string[] = [];
  const totals: number[] = [];
  let startCursor: string | undefined;
  for (;;) {
    const response = await search(tenant, { ...body, pageInfo: { size, ...(startCursor ? { startCursor } : {}) } });
    expect(response.statusCode, response.body).toBe(200);
    const page = response.json<PageBody>();
    ids.push(...page.results.map((incentive) => incentive.incentiveId));
    totals.push(page.total);
    if (!page.pageInfo.hasNextPage) return { ids, totals };
    startCursor = page.pageInfo.endCursor;
  }
}

describe('E7: searching incentives', () => {
  let tenant: Tenant;
  let studies: string[];
  let people: string[];
  let seeds: IncentiveSeed[];
  let ids: string[];
  let otherSender: string;
  const emails = ['ann@example.org', 'bob@example.org', 'cy@example.org'];

  beforeAll(async () => {
    tenant = await createTenant(service);
    otherSender = (await tenant.tokenFor('RESEARCHER')).userId;
    studies = [await createStudy(service, tenant, 'INTERVIEWS', 'A'), await createStudy(service, tenant, 'SURVEY', 'B')];
    people = await insertPeople(service, tenant.workspaceId, emails.map((email) => ({ email })));
    const participants = await insertParticipants(service, tenant.workspaceId, [
      { studyId: studies[0]!, studyType: 'INTERVIEWS', personId: people[0]!, participation: { status: 'COMPLETED', completedAt: ago(3) } },
      { studyId: studies[0]!, studyType: 'INTERVIEWS', personId: people[1]!, participation: { status: 'SCHEDULED', interviewStartTime: ago(-2) } },
      { studyId: studies[1]!, studyType: 'SURVEY', personId: people[0]!, participation: { status: 'INVITED' } },
      { studyId: studies[1]!, studyType: 'SURVEY', personId: people[2]!, participation: { status: 'COMPLETED', completedAt: ago(1) } },
    ]);
    const seed = (index: number, extra: Partial<IncentiveSeed>): IncentiveSeed => {
      const study = index < 2 ? 0 : 1;
      return { participantId: participants[index]!, studyId: studies[study]!, personId: people[[0, 1, 0, 2][index]!]!, sentAt: ago(10), amountCents: 1000, sentByUserId: tenant.userId, ...extra };
    };
    seeds = [
      seed(0, { amountCents: 5000, status: 'CLAIMED', budgetId: 'bud_b', sentAt: ago(9) }),
      seed(1, { amountCents: 2500, currency: 'EUR', status: 'UNCLAIMED', type: 'PROVIDER_ONE_MONEY', sentAt: ago(2), sentByUserId: otherSender }),
      seed(2, { amountCents: 300, status: 'SENT', type: 'CUSTOM', customIncentiveId: 'swag', customIncentiveValue: 'T-shirt', sentAt: ago(5) }),
      seed(3, { amountCents: 2500, status: 'CANCELED', budgetId: 'bud_a', sentAt: ago(1) }),
      seed(3, { amountCents: 150, status: 'SENT', type: 'RECRUITMENT_FEE', sentAt: ago(30) }),
      seed(0, { amountCents: 999, status: 'EXPIRED', sentAt: ago(400) }),
    ];
    ids = await insertIncentives(service, tenant.workspaceId, seeds);
    // Another workspace's incentives never appear.
    const other = await createTenant(service, 'Other');
    const otherStudy = await createStudy(service, other, 'INTERVIEWS');
    const [stranger] = await insertPeople(service, other.workspaceId, [{ email: 'ann@example.org' }]);
    const [theirs] = await insertParticipants(service, other.workspaceId, [{ studyId: otherStudy, studyType: 'INTERVIEWS', personId: stranger!, participation: {} }]);
    await insertIncentives(service, other.workspaceId, [{ participantId: theirs!, studyId: otherStudy, personId: stranger!, sentAt: ago(1), amountCents: 1, sentByUserId: other.userId }]);
  });

  const model: Record<string, (seed: IncentiveSeed) => Comparable> = {
    EMAIL: (seed) => emails[people.indexOf(seed.personId)]!,
    TYPE: (seed) => seed.type ?? (seed.status === 'SENT' ? 'CUSTOM' : 'MONEY_OR_GIFT_CARD'),
    AMOUNT: (seed) => seed.amountCents,
    CURRENCY: (seed) => seed.currency ?? 'USD',
    STATUS: (seed) => seed.status!,
    STUDY: (seed) => seed.studyId,
    SENDER: (seed) => seed.sentByUserId,
    SENT_AT: (seed) => seed.sentAt,
    INCENTIVE_BUDGET: (seed) => seed.budgetId ?? null,
    CUSTOM_INCENTIVE: (seed) => seed.customIncentiveId ?? null,
    CUSTOM_INCENTIVE_VALUE: (seed) => seed.customIncentiveValue ?? null,
  };

  it('lists the incentives of the workspace in the order they were sent, with recipients', async () => {
    const response = await search(tenant, undefined);
    expect(response.statusCode, response.body).toBe(200);
    const body = response.json<PageBody>();
    expect(body.total).toBe(6);
    expect(body.results.map((incentive) => incentive.incentiveId)).toEqual(ids);
    expect(body.results[0]).toMatchObject({ incentiveId: ids[0], recipientEmail: 'ann@example.org', amountCents: 5000, status: 'CLAIMED', studyId: studies[0], budgetId: 'bud_b' });
  });

  it('the model covers every INCENTIVE name', () => {
    expect(Object.keys(model).sort()).toEqual(Object.keys(incentiveNames).sort());
  });

  for (const name of Object.keys(incentiveNames)) {
    it(`sorts by INCENTIVE.${name} both ways, nulls last, ties by incentive id, also one row per page`, async () => {
      for (const direction of ['ASC', 'DESC'] as const) {
        const order = expectedOrder(seeds.map((seed, index) => ({ id: ids[index]!, value: model[name]!(seed) })), direction);
        const filter = { filters: [], sort: { operator: direction, propertyGroup: 'INCENTIVE', propertyName: name } };
        expect((await readAll(tenant, { filter }, 1000)).ids, `${name} ${direction}`).toEqual(order);
        expect((await readAll(tenant, { filter }, 1)).ids, `${name} ${direction}, one per page`).toEqual(order);
      }
    });
  }

  it('filters by INCENTIVE names', async () => {
    const cases: [object, number[]][] = [
      [{ propertyName: 'STATUS', comparison: 'IS_ANY_OF', value: ['UNCLAIMED', 'CLAIMED'] }, [0, 1]],
      [{ propertyName: 'TYPE', comparison: 'IS_NONE_OF', value: ['MONEY_OR_GIFT_CARD'] }, [1, 2, 4]],
      [{ propertyName: 'AMOUNT', comparison: 'BETWEEN', value: [300, 2500] }, [1, 2, 3, 5]],
      [{ propertyName: 'SENT_AT', comparison: 'IN_LAST_DAYS', value: 7 }, [1, 2, 3]],
      [{ propertyName: 'INCENTIVE_BUDGET', comparison: 'IS_NOT_EMPTY' }, [0, 3]],
      [{ propertyName: 'CUSTOM_INCENTIVE_VALUE', comparison: 'CONTAINS', value: 'shirt' }, [2]],
      [{ propertyName: 'SENDER', comparison: 'EQUALS', value: otherSender }, [1]],
      [{ propertyName: 'EMAIL', comparison: 'EQUALS', value: 'CY@example.org' }, [3, 4]],
    ];
    for (const [filter, want] of cases) {
      const { propertyName, ...comparison } = filter as { propertyName: string };
      const body = { filter: { filters: [{ property: { propertyGroup: 'INCENTIVE', propertyName }, ...comparison }] } };
      const found = await readAll(tenant, body, 1000);
      expect(found.ids, JSON.stringify(filter)).toEqual(want.map((index) => ids[index]!));
      expect(found.totals).toEqual([want.length]);
    }
    const study = await readAll(tenant, { filter: { filters: [{ property: { propertyGroup: 'INCENTIVE', propertyName: 'STUDY' }, comparison: 'EQUALS', value: studies[1] }] } }, 10);
    expect(study.ids).toEqual([ids[2], ids[3], ids[4]]);
  });

  it('scopes to one study with studyId, and filters by PARTICIPANT and PERSON names', async () => {
    expect((await readAll(tenant, { studyId: studies[0] }, 2)).ids).toEqual([ids[0], ids[1], ids[5]]);
    const completed = { filters: [{ property: { propertyGroup: 'PARTICIPANT', propertyName: 'STATUS' }, comparison: 'IS_ANY_OF', value: ['COMPLETED'] }] };
    expect((await readAll(tenant, { filter: completed }, 10)).ids).toEqual([ids[0], ids[3], ids[4], ids[5]]);
    const completedInB = await readAll(tenant, { filter: completed, studyId: studies[1] }, 10);
    expect(completedInB.ids).toEqual([ids[3], ids[4]]);
    const byRecipient = { filters: [], sort: { operator: 'ASC', propertyGroup: 'PERSON', propertyName: 'EMAIL' } };
    expect((await readAll(tenant, { filter: byRecipient }, 1)).ids).toEqual([ids[0], ids[2], ids[5], ids[1], ids[3], ids[4]]);
  });

  it("keeps a deleted recipient's incentives, with recipientEmail null and PERSON names empty", async () => {
    const own = await createTenant(service);
    const study = await createStudy(service, own, 'INTERVIEWS');
    const [kept, gone] = await insertPeople(service, own.workspaceId, [{ email: 'kept@example.org' }, { email: 'gone@example.org' }]);
    const participants = await insertParticipants(service, own.workspaceId, [kept!, gone!].map((personId) => ({ studyId: study, studyType: 'INTERVIEWS', personId, participation: {} })));
    const [keptIncentive, goneIncentive] = await insertIncentives(service, own.workspaceId, [
      { participantId: participants[0]!, studyId: study, personId: kept!, sentAt: ago(2), amountCents: 100, sentByUserId: own.userId },
      { participantId: participants[1]!, studyId: study, personId: gone!, sentAt: ago(1), amountCents: 200, sentByUserId: own.userId },
    ]);
    expect((await call(service, 'DELETE', `/people/${gone}`, { token: own.token })).statusCode).toBe(200);
    const page = (await search(own, {})).json<PageBody>();
    expect(page.results.map((incentive) => [incentive.incentiveId, incentive.recipientEmail])).toEqual([
      [keptIncentive, 'kept@example.org'],
      [goneIncentive, null],
    ]);
    const noEmail = { filters: [{ property: { propertyGroup: 'PERSON', propertyName: 'EMAIL' }, comparison: 'IS_EMPTY' }] };
    expect((await readAll(own, { filter: noEmail }, 10)).ids).toEqual([goneIncentive]);
    // Sorting by a never-null PERSON name still puts the deleted recipient's incentive last, through cursors.
    const byOptOut = { filters: [], sort: { operator: 'DESC', propertyGroup: 'PERSON', propertyName: 'OPTED_OUT' } };
    expect((await readAll(own, { filter: byOptOut }, 1)).ids).toEqual([keptIncentive, goneIncentive]);
  });

  it('masks recipients for a token without the personal-data right, and refuses filtering on them (403)', async () => {
    const { token } = await tenant.tokenFor('OBSERVER', { canReadPersonalData: false });
    const masked = (await search(tenant, {}, token)).json<PageBody>();
    expect(new Set(masked.results.map((incentive) => incentive.recipientEmail))).toEqual(new Set(['***@***']));
    const byEmail = { filter: { filters: [{ property: { propertyGroup: 'INCENTIVE', propertyName: 'EMAIL' }, comparison: 'IS_NOT_EMPTY' }] } };
    expect((await search(tenant, byEmail, token)).statusCode).toBe(403);
  });

  it('answers 404 for an unknown or foreign study; 400 for bad input and cursors', async () => {
    const other = await createTenant(service, 'Other');
    for (const studyId of ['stu_nope', await createStudy(service, other, 'INTERVIEWS')]) {
      const response = await search(tenant, { studyId });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({ errors: [{ message: 'Study not found', path: ['studyId'] }] });
    }
    for (const [body, path] of [
      [{ pageInfo: { size: 1001 } }, ['pageInfo', 'size']],
      [{ filter: { filters: [{ property: { propertyGroup: 'INCENTIVE', propertyName: 'AMOUNT' }, comparison: 'GREATER_THAN', value: '10' }] } }, ['filter', 'filters', '0', 'value']],
      [{ filter: { filters: [{ property: { propertyGroup: 'INCENTIVE', propertyName: 'STATUS' }, comparison: 'IS_ANY_OF', value: ['PAID'] }] } }, ['filter', 'filters', '0', 'value', '0']],
      [{ pageInfo: { startCursor: 'not-a-cursor' } }, ['pageInfo', 'startCursor']],
    ] as const) {
      const response = await search(tenant, body);
      expect(response.statusCode, JSON.stringify(body)).toBe(400);
      expect(response.json<{ errors: { path: string[] }[] }>().errors[0]!.path).toEqual(path);
    }
    const cursor = (await search(tenant, { pageInfo: { size: 1 } })).json<PageBody>().pageInfo.endCursor;
    expect((await search(tenant, { studyId: studies[0], pageInfo: { startCursor: cursor } })).statusCode).toBe(400);
  });
});

describeSecurity('POST /incentives/search', () => service, {
  method: 'POST',
  right: 'incentives:read',
  addressesResource: false,
  request: async () => ({ url: '/incentives/search', body: {} }),
});
