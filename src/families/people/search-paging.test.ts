import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant, startTestService, type Tenant, type TestService } from '../../../test/harness.js';
import { createPanel, insertPeople, type Panel, type PersonSeed, search, type SearchResult } from './search-fixtures.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service.stop());

type Comparable = string | number | boolean | null;

/** Reads every page of a search at `size`, checking each page's shape; returns the ids in order and the totals seen. */
async function readAllPages(token: string, filter: unknown, size: number, between?: (page: number) => Promise<void>) {
  const ids: string[] = [];
  const totals: number[] = [];
  let startCursor: string | undefined;
  for (let page = 0; page < 1000; page++) {
    const response = await search(service, token, { filter, pageInfo: { size, ...(startCursor ? { startCursor } : {}) } });
    expect(response.statusCode, response.body).toBe(200);
    const body = response.json<SearchResult>();
    expect(body.results.length).toBeLessThanOrEqual(size);
    expect(body.pageInfo.hasPreviousPage).toBe(false);
    ids.push(...body.results.map((person) => person.personId));
    totals.push(body.total);
    if (!body.pageInfo.hasNextPage) return { ids, totals };
    expect(body.results).toHaveLength(size);
    startCursor = body.pageInfo.endCursor;
    await between?.(page);
  }
  throw new Error('too many pages');
}

describe('POST /people/search: sorting', () => {
  let tenant: Tenant;
  let panel: Panel;
  let ids: string[];
  // Six people; each column gives, per person, the stored value and the value it sorts by (null: none, sorts last).
  const columns = {
    firstName: ['bea', 'abe', 'bea', null, 'cid', 'abe'],
    lastName: ['cole', null, 'abel', null, 'dunn', 'abe'],
    email: ['c@example.org', 'A@example.org', 'b@example.org', 'd@example.org', 'E@example.org', 'f@example.org'],
    phone: ['2', null, '1', '2', null, '3'],
    importSource: ['csv', null, 'api', 'csv', null, 'api'],
    importedAt: ['2026-01-02T00:00:00.000000Z', null, '2026-01-01T00:00:00.000000Z', '2026-01-02T00:00:00.000000Z', null, '2026-01-03T00:00:00.000000Z'],
    lastImportId: ['imp_b', null, 'imp_a', 'imp_b', null, 'imp_c'],
    isOptedOut: [false, true, false, false, true, false],
    contactStatus: ['CONTACTABLE', 'OPTED_OUT', 'UNREACHABLE', 'CONTACTABLE', 'OPTED_OUT', 'CONTACTABLE'] as const,
    contactStatusUpdatedAt: [null, '2026-02-01T00:00:00.000000Z', '2026-01-01T00:00:00.000000Z', null, '2026-02-01T00:00:00.000000Z', null],
    // Microseconds apart: a cursor that went through a JS Date would lose them and skip or repeat.
    updatedAt: ['2026-11-03T00:00:00.000001Z', '2026-11-01T00:00:00.000000Z', '2026-11-03T00:00:00.000002Z', '2026-11-03T00:00:00.000001Z', '2026-11-04T00:00:00.000000Z', '2026-11-01T00:00:00.000001Z'],
  };
  const populationCounts = [1, 2, 0, 1, 0, 2];

  beforeAll(async () => {
    tenant = await createTenant(service);
    panel = await createPanel(service, tenant);
    const populations = [[panel.populationA], [panel.populationA, panel.populationB], [], [panel.populationB], [], [panel.populationA, panel.populationB]];
    const properties = [
      { [panel.occupation]: 'baker', [panel.age]: 30, [panel.lastSeen]: '2026-05-01T00:00:00.000001Z', [panel.hasCar]: true, [panel.tier]: 'Gold', [panel.devices]: ['iOS'], [panel.home]: { country: 'GB' } },
      { [panel.age]: 30, [panel.lastSeen]: '2026-05-01T00:00:00.000002Z', [panel.hasCar]: false, [panel.devices]: ['Android', 'iOS'], [panel.home]: { country: 'FR' } },
      { [panel.occupation]: 'actor', [panel.tier]: 'Silver' },
      { [panel.occupation]: 'baker', [panel.age]: 5, [panel.lastSeen]: '2026-05-01T00:00:00.000001Z', [panel.hasCar]: true, [panel.tier]: 'Gold', [panel.devices]: ['iOS'], [panel.home]: { country: 'GB' } },
      { [panel.occupation]: '', [panel.age]: -1.5, [panel.lastSeen]: 'not a date', [panel.hasCar]: 'yes', [panel.devices]: [], [panel.home]: 'GB' },
      { [panel.occupation]: 'cook', [panel.age]: 100, [panel.lastSeen]: '2025-01-01T00:00:00.000000Z', [panel.hasCar]: false, [panel.tier]: 'Silver', [panel.devices]: ['Android'], [panel.home]: { country: 'DE' } },
    ];
    const seeds: PersonSeed[] = properties.map((props, index) => ({
      email: columns.email[index]!,
      firstName: columns.firstName[index],
      lastName: columns.lastName[index],
      phone: columns.phone[index],
      importSource: columns.importSource[index],
      importedAt: columns.importedAt[index],
      lastImportId: columns.lastImportId[index],
      isOptedOut: columns.isOptedOut[index],
      contactStatus: columns.contactStatus[index],
      contactStatusUpdatedAt: columns.contactStatusUpdatedAt[index],
      updatedAt: columns.updatedAt[index],
      properties: props,
      populationIds: populations[index],
    }));
    ids = await insertPeople(service, tenant.workspaceId, seeds);
    // Deleted people never appear, whatever the sort.
    await insertPeople(service, tenant.workspaceId, [{ email: 'gone@example.org', firstName: 'aaa', deletedAt: '2026-11-01T00:00:00Z' }]);
  });

  const names = (index: number) => [columns.firstName[index], columns.lastName[index]].filter(Boolean).join(' ') || null;
  const sortCases: [string, (index: number) => Comparable][] = [
    ['PERSON_ID', (index) => ids[index]!],
    ['NAME', names],
    ['FIRST_NAME', (index) => columns.firstName[index]!],
    ['LAST_NAME', (index) => columns.lastName[index]!],
    ['EMAIL', (index) => columns.email[index]!.toLowerCase()],
    ['PHONE', (index) => columns.phone[index]!],
    ['IMPORT_SOURCE', (index) => columns.importSource[index]!],
    ['IMPORT_DATE', (index) => columns.importedAt[index]!],
    ['IMPORT_UPLOAD_LIST', (index) => columns.lastImportId[index]!],
    ['OPTED_OUT', (index) => columns.isOptedOut[index]!],
    ['CONTACT_STATUS', (index) => columns.contactStatus[index]!],
    ['CONTACT_STATUS_UPDATE_DATE', (index) => columns.contactStatusUpdatedAt[index]!],
    ['LAST_CHANGED_AT', (index) => columns.updatedAt[index]!],
    ['POPULATION_MEMBERSHIP', (index) => populationCounts[index]!],
  ];
  const customCases: [keyof Panel, Comparable[]][] = [
    ['occupation', ['baker', null, 'actor', 'baker', '', 'cook']],
    ['age', [30, 30, null, 5, -1.5, 100]],
    ['lastSeen', ['2026-05-01T00:00:00.000001Z', '2026-05-01T00:00:00.000002Z', null, '2026-05-01T00:00:00.000001Z', null, '2025-01-01T00:00:00.000000Z']],
    ['hasCar', [true, false, null, true, null, false]],
    ['tier', ['Gold', null, 'Silver', 'Gold', null, 'Silver']],
    // jsonb orders arrays by length first, then element by element.
    ['devices', [2, 3, null, 2, 0, 1]],
    ['home', ['GB', 'FR', null, 'GB', null, 'DE']],
  ];

  /** Nulls last; ties by person id in the sort's direction. */
  function expectedOrder(valueOf: (index: number) => Comparable, direction: 'ASC' | 'DESC') {
    const sign = direction === 'ASC' ? 1 : -1;
    return ids
      .map((id, index) => ({ id, value: valueOf(index) }))
      .sort((a, b) => {
        if (a.value === null || b.value === null) return a.value === b.value ? sign * (a.id < b.id ? -1 : 1) : a.value === null ? 1 : -1;
        if (a.value !== b.value) return sign * (a.value < b.value ? -1 : 1);
        return sign * (a.id < b.id ? -1 : 1);
      })
      .map((entry) => entry.id);
  }

  const check = async (propertyName: string, valueOf: (index: number) => Comparable) => {
    for (const direction of ['ASC', 'DESC'] as const) {
      const filter = { filters: [], sort: { operator: direction, propertyGroup: 'PERSON', propertyName } };
      const expected = expectedOrder(valueOf, direction);
      const whole = await readAllPages(tenant.token, filter, 1000);
      expect(whole.ids, `${propertyName} ${direction}`).toEqual(expected);
      // Page by page, one person at a time: every boundary goes through a cursor.
      const paged = await readAllPages(tenant.token, filter, 1);
      expect(paged.ids, `${propertyName} ${direction}, paged`).toEqual(expected);
      expect(new Set(paged.totals)).toEqual(new Set([6]));
    }
  };

  for (const [name, valueOf] of sortCases) it(`sorts by ${name}, nulls last, ties by person id`, async () => check(name, valueOf));
  for (const [key, values] of customCases) {
    it(`sorts by the custom property ${key}, nulls last, ties by person id`, async () => check(panel[key], (index) => values[index]!));
  }

  it('sorts by person id ascending without a sort', async () => {
    expect((await readAllPages(tenant.token, undefined, 4)).ids).toEqual([...ids].sort());
  });
});

describe('POST /people/search: paging', () => {
  it('pages through a large result with no duplicates or gaps and an exact total, also while people are added and removed', async () => {
    const tenant = await createTenant(service);
    const panel = await createPanel(service, tenant);
    const original = await insertPeople(
      service,
      tenant.workspaceId,
      Array.from({ length: 57 }, (_, index) => ({ email: `p${index}@example.org`, properties: { [panel.age]: index % 7 } })),
    );
    const filter = { filters: [{ property: { propertyId: panel.age }, comparison: 'GREATER_THAN_OR_EQUAL', value: 0 }], sort: { operator: 'DESC', propertyGroup: 'PERSON', propertyName: panel.age } };
    const plain = await readAllPages(tenant.token, filter, 10);
    expect(plain.ids).toHaveLength(57);
    expect(new Set(plain.ids)).toEqual(new Set(original));
    expect(new Set(plain.totals)).toEqual(new Set([57]));

    let added = 0;
    const removed: string[] = [];
    const during = await readAllPages(tenant.token, filter, 10, async (page) => {
      // New people at both ends of the order, and one that matches no more.
      await insertPeople(service, tenant.workspaceId, [
        { email: `new-high-${page}@example.org`, properties: { [panel.age]: 6 } },
        { email: `new-low-${page}@example.org`, properties: { [panel.age]: 0 } },
        { email: `new-none-${page}@example.org` },
      ]);
      added += 2;
      const victim = original[50 - page]!;
      await service.deps.db.updateTable('people').set({ deleted_at: new Date().toISOString() }).where('person_id', '=', victim).execute();
      removed.push(victim);
    });
    expect(new Set(during.ids).size).toBe(during.ids.length);
    for (const id of original.filter((id) => !removed.includes(id))) expect(during.ids).toContain(id);
    expect(during.totals[0]).toBe(57);
    expect(during.totals.at(-1)).toBe(57 + added - removed.length);
  });

  it('defaults to pages of 25 and allows 1000', async () => {
    const tenant = await createTenant(service);
    await insertPeople(service, tenant.workspaceId, Array.from({ length: 30 }, (_, index) => ({ email: `d${index}@example.org` })));
    const first = await search(service, tenant.token, undefined);
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json<SearchResult>()).toMatchObject({ total: 30, pageInfo: { hasNextPage: true } });
    expect(first.json<SearchResult>().results).toHaveLength(25);
    const whole = await search(service, tenant.token, { pageInfo: { size: 1000 } });
    expect(whole.json<SearchResult>().results).toHaveLength(30);
    expect(whole.json<SearchResult>().pageInfo.hasNextPage).toBe(false);
  });

  it('gives empty cursors for an empty result', async () => {
    const tenant = await createTenant(service);
    const response = await search(service, tenant.token, {});
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ results: [], total: 0, pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: '', endCursor: '' } });
  });

  it("refuses a tampered cursor, and one of another filter, sort or workspace (400 at pageInfo.startCursor)", async () => {
    const tenant = await createTenant(service);
    await insertPeople(service, tenant.workspaceId, Array.from({ length: 3 }, (_, index) => ({ email: `c${index}@example.org`, firstName: `n${index}` })));
    const filter = { filters: [{ property: { propertyGroup: 'PERSON', propertyName: 'FIRST_NAME' }, comparison: 'STARTS_WITH', value: 'n' }] };
    const first = await search(service, tenant.token, { filter, pageInfo: { size: 1 } });
    const cursor = first.json<SearchResult>().pageInfo.endCursor;
    const again = await search(service, tenant.token, { filter, pageInfo: { size: 1, startCursor: cursor } });
    expect(again.statusCode).toBe(200);
    const other = await createTenant(service);
    const refusals = [
      search(service, tenant.token, { filter, pageInfo: { startCursor: `${cursor.slice(0, -1)}${cursor.endsWith('A') ? 'B' : 'A'}` } }),
      search(service, tenant.token, { filter, pageInfo: { startCursor: cursor.slice(0, 20) } }),
      search(service, tenant.token, { filter: { ...filter, operator: 'OR' }, pageInfo: { startCursor: cursor } }),
      search(service, tenant.token, { filter: { ...filter, sort: { operator: 'DESC', propertyGroup: 'PERSON', propertyName: 'PERSON_ID' } }, pageInfo: { startCursor: cursor } }),
      search(service, other.token, { filter, pageInfo: { startCursor: cursor } }),
    ];
    for (const response of await Promise.all(refusals)) {
      expect(response.statusCode, response.body).toBe(400);
      expect(response.json().errors[0].path).toEqual(['pageInfo', 'startCursor']);
    }
  });

  it('hides the sort values a cursor carries: sorted by EMAIL, no cursor shows an email or a piece of one, in any encoding (issue 32, item 7)', async () => {
    const tenant = await createTenant(service);
    const emails = ['zed.secret@example.org', 'amy.private@example.org', 'kim.hidden@example.org'];
    await insertPeople(service, tenant.workspaceId, emails.map((email) => ({ email })));
    const filter = { filters: [], sort: { operator: 'ASC', propertyGroup: 'PERSON', propertyName: 'EMAIL' } };
    let startCursor: string | undefined;
    const cursors: string[] = [];
    for (let page = 0; page < 3; page++) {
      const response = await search(service, tenant.token, { filter, pageInfo: { size: 1, ...(startCursor ? { startCursor } : {}) } });
      expect(response.statusCode, response.body).toBe(200);
      const { pageInfo } = response.json<SearchResult>();
      cursors.push(pageInfo.startCursor, pageInfo.endCursor);
      startCursor = pageInfo.endCursor;
    }
    for (const cursor of cursors) {
      const decodings = [cursor, Buffer.from(cursor, 'base64url').toString('latin1'), Buffer.from(cursor, 'base64url').toString('utf8')];
      for (const text of decodings) for (const email of emails) for (const piece of [email, email.split('@')[0]!, email.slice(0, 4)]) expect(text).not.toContain(piece);
    }
  });
});
