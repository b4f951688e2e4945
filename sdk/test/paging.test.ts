import { afterEach, describe, expect, it } from 'vitest';
import { createClient, type ItemOf, RecruitApiError, type RecruitClient, type Schema } from '../src/index.js';
import { type Answer, type FakeServer, type SeenRequest, startFakeServer } from './fake-server.js';

let server: FakeServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** Pages of `items`, `size` at a time, with cursors "c<index of the next item>", read by `cursorOf`. */
function pager(items: unknown[], size: number, cursorOf: (request: SeenRequest) => string | undefined) {
  return (request: SeenRequest): Answer => {
    const cursor = cursorOf(request);
    const start = cursor === undefined ? 0 : Number(cursor.slice(1));
    const results = items.slice(start, start + size);
    const end = start + results.length;
    return {
      status: 200,
      body: { results, total: items.length, pageInfo: { hasNextPage: end < items.length, hasPreviousPage: false, startCursor: `c${start}`, endCursor: `c${end}` } },
    };
  };
}

const studies = Array.from({ length: 7 }, (_, index) => ({ studyId: `stu_${index}`, status: 'PAUSED' }));
const people = Array.from({ length: 5 }, (_, index) => ({ personId: `per_${index}`, email: `p${index}@example.org` }));
const filter = {
  filters: [{ property: { propertyGroup: 'PERSON', propertyName: 'EMAIL' }, comparison: 'CONTAINS', value: 'example.org' }],
  sort: { operator: 'DESC' as const, propertyGroup: 'PERSON' as const, propertyName: 'LAST_CONTACT_DATE' },
};

describe('paginate over a list (GET, cursor in the query)', () => {
  it('yields every item of every page, typed, sending each endCursor as the next startCursor with the query kept', async () => {
    server = await startFakeServer(pager(studies, 3, (request) => request.url.searchParams.get('startCursor') ?? undefined));
    const api = createClient({ baseUrl: server.baseUrl, token: 't' });
    const ids: string[] = [];
    for await (const study of api.paginate('/studies', { params: { query: { status: 'PAUSED', size: 3 } } })) ids.push(study.studyId);
    expect(ids).toEqual(studies.map((study) => study.studyId));
    expect(server.requests.map((request) => request.url.search)).toEqual([
      '?status=PAUSED&size=3',
      '?status=PAUSED&size=3&startCursor=c3',
      '?status=PAUSED&size=3&startCursor=c6',
    ]);
    expect(server.requests.every((request) => request.method === 'GET')).toBe(true);
  });

  it('starts from a startCursor given, and pages() answers whole pages with the endCursor to poll from later', async () => {
    server = await startFakeServer(pager(studies, 2, (request) => request.url.searchParams.get('startCursor') ?? undefined));
    const api = createClient({ baseUrl: server.baseUrl, token: 't' });
    const pages = [];
    for await (const page of api.pages('/study-status-events', { params: { query: { startCursor: 'c2', size: 2 } } })) pages.push(page);
    expect(pages.map((page) => page.results.length)).toEqual([2, 2, 1]);
    expect(pages.at(-1)!.pageInfo).toMatchObject({ hasNextPage: false, endCursor: 'c7' });
    expect(server.requests[0]!.url.searchParams.get('startCursor')).toBe('c2');
  });

  it('fills path parameters of a nested list', async () => {
    server = await startFakeServer(pager([{ propertyId: 'prp_1' }], 25, () => undefined));
    const api = createClient({ baseUrl: server.baseUrl, token: 't' });
    const found = [];
    for await (const property of api.paginate('/property-groups/{propertyGroupId}/properties', { params: { path: { propertyGroupId: 'pgr_1' } } })) {
      found.push(property.propertyId);
    }
    expect(found).toEqual(['prp_1']);
    expect(server.requests[0]!.url.pathname).toBe('/v1/property-groups/pgr_1/properties');
  });
});

describe('paginate over a search (POST, cursor in the body)', () => {
  it("keeps the filter and size, moves pageInfo.startCursor, and gives each page's request its own Idempotency-Key", async () => {
    server = await startFakeServer(pager(people, 2, (request) => (JSON.parse(request.body) as { pageInfo?: { startCursor?: string } }).pageInfo?.startCursor));
    const api = createClient({ baseUrl: server.baseUrl, token: 't' });
    const emails: string[] = [];
    for await (const person of api.paginate('/people/search', { body: { filter, pageInfo: { size: 2 } } })) emails.push(person.email ?? '');
    expect(emails).toEqual(people.map((person) => person.email));
    expect(server.requests.map((request) => JSON.parse(request.body) as unknown)).toEqual([
      { filter, pageInfo: { size: 2 } },
      { filter, pageInfo: { size: 2, startCursor: 'c2' } },
      { filter, pageInfo: { size: 2, startCursor: 'c4' } },
    ]);
    const keys = server.requests.map((request) => request.headers['idempotency-key']);
    expect(new Set(keys).size).toBe(3);
    expect(keys.every((key) => typeof key === 'string' && key.length > 0)).toBe(true);
  });

  it('sends a bare search without pageInfo, and a key given for the first page is not reused on the next', async () => {
    server = await startFakeServer(pager(people, 4, (request) => (JSON.parse(request.body) as { pageInfo?: { startCursor?: string } }).pageInfo?.startCursor));
    const api = createClient({ baseUrl: server.baseUrl, token: 't' });
    let count = 0;
    for await (const participant of api.paginate('/studies/{studyId}/participants/search', {
      params: { path: { studyId: 'stu_1' }, header: { 'Idempotency-Key': 'mine' } },
      body: {},
    })) {
      void participant;
      count++;
    }
    expect(count).toBe(5);
    expect(server.requests.map((request) => JSON.parse(request.body) as unknown)).toEqual([{}, { pageInfo: { startCursor: 'c4' } }]);
    expect(server.requests.map((request) => request.headers['idempotency-key'])).not.toContain('mine');
  });
});

describe('paging failures', () => {
  it('throws a RecruitApiError when a page is refused (a cursor of another query is a 400)', async () => {
    server = await startFakeServer(() => ({ status: 400, body: { errors: [{ message: 'startCursor is not a valid cursor for this query', path: ['startCursor'] }] } }));
    const api = createClient({ baseUrl: server.baseUrl, token: 't' });
    const iterate = async () => {
      for await (const study of api.paginate('/studies', { params: { query: { startCursor: 'forged' } } })) void study;
    };
    await expect(iterate()).rejects.toBeInstanceOf(RecruitApiError);
    await expect(iterate()).rejects.toMatchObject({ status: 400, errors: [{ path: ['startCursor'] }] });
  });

  it('stops with an error instead of looping when hasNextPage comes without a new cursor', async () => {
    server = await startFakeServer(() => ({
      status: 200,
      body: { results: [{ studyId: 'stu_0' }], total: 2, pageInfo: { hasNextPage: true, hasPreviousPage: false, startCursor: 'same', endCursor: 'same' } },
    }));
    const api = createClient({ baseUrl: server.baseUrl, token: 't' });
    const seen: string[] = [];
    const iterate = async () => {
      for await (const study of api.paginate('/studies')) seen.push(study.studyId);
    };
    await expect(iterate()).rejects.toThrow(/hasNextPage without a new endCursor/);
    expect(seen).toEqual(['stu_0', 'stu_0']);
    expect(server.requests).toHaveLength(2);
  });

  it('reads only the pages it is asked for: breaking out sends no further request', async () => {
    server = await startFakeServer(pager(studies, 2, (request) => request.url.searchParams.get('startCursor') ?? undefined));
    const api = createClient({ baseUrl: server.baseUrl, token: 't' });
    for await (const study of api.paginate('/studies', { params: { query: { size: 2 } } })) {
      if (study.studyId === 'stu_2') break;
    }
    expect(server.requests).toHaveLength(2);
  });
});

describe('paging types', () => {
  it('accept every paged operation, refuse the others, and type the items (checked by `npm run typecheck`)', () => {
    // Never called: what matters is that it compiles, each @ts-expect-error included.
    function typeChecks(api: RecruitClient) {
      // @ts-expect-error GET /me is not paged
      void api.paginate('/me');
      // @ts-expect-error POST /studies is not a search
      void api.pages('/studies', { body: {} });
      // @ts-expect-error a nested list needs its path parameters
      void api.paginate('/property-groups/{propertyGroupId}/properties');
      void api.paginate('/incentives/search', { body: { studyId: 'stu_1' } });
    }
    const summary: ItemOf<'/studies'> = { studyId: 'stu_1' } as Schema<'StudySummary'>;
    const event: ItemOf<'/participant-status-events'>['eventId'] = '1042';
    expect([typeof typeChecks, summary.studyId, event]).toEqual(['function', 'stu_1', '1042']);
  });
});
