import { afterEach, describe, expect, it } from 'vitest';
import { createClient, RecruitApiError, retryAfterMs, unwrap } from '../src/index.js';
import { type Answer, type FakeServer, type SeenRequest, startFakeServer } from './fake-server.js';

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const study = { studyId: 'stu_1', status: 'DRAFT' };
const studyBody = { studyType: 'INTERVIEWS', recruitmentStrategy: 'IN_SERVICE', studyPlan: { name: 'Checkout interviews' } } as const;
const me = { userId: 'usr_1', workspaceId: 'wsp_1' };

let server: FakeServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function serve(answer: (request: SeenRequest, index: number) => Answer): Promise<FakeServer> {
  server = await startFakeServer(answer);
  return server;
}

/** Answers the listed statuses in turn (with their headers), then 200 with `body`. */
const inTurn =
  (refusals: Answer[], body: unknown) =>
  (_request: SeenRequest, index: number): Answer =>
    refusals[index] ?? { status: 200, body };

describe('bearer auth', () => {
  it('sends the token on every request, and a call may set its own Authorization', async () => {
    const { baseUrl, requests } = await serve(() => ({ status: 200, body: me }));
    const api = createClient({ baseUrl, token: 'rk_wsp_secret' });
    expect(unwrap(await api.GET('/me'))).toEqual(me);
    await api.GET('/me', { headers: { Authorization: 'Bearer rk_other' } });
    expect(requests.map((request) => request.headers.authorization)).toEqual(['Bearer rk_wsp_secret', 'Bearer rk_other']);
    expect(requests[0]!.url.pathname).toBe('/v1/me');
  });

  it('takes the token from a function for each request (rotation), and sends none without one', async () => {
    const { baseUrl, requests } = await serve(() => ({ status: 200, body: me }));
    let current = 'rk_first';
    const api = createClient({ baseUrl, token: async () => current });
    await api.GET('/me');
    current = 'rk_second';
    await api.GET('/me');
    await createClient({ baseUrl }).GET('/me');
    expect(requests.map((request) => request.headers.authorization)).toEqual(['Bearer rk_first', 'Bearer rk_second', undefined]);
  });
});

describe('retries', () => {
  it('waits the Retry-After of a 429 (seconds), then sends the request again', async () => {
    const { baseUrl, requests } = await serve(inTurn([{ status: 429, headers: { 'retry-after': '1' }, body: 'Too Many Requests' }], me));
    const waits: number[] = [];
    const api = createClient({ baseUrl, token: 't', retries: { onRetry: ({ delayMs }) => waits.push(delayMs) } });
    const startedAt = Date.now();
    const { data, response } = await api.GET('/me');
    expect(response.status).toBe(200);
    expect(data).toEqual(me);
    expect(requests).toHaveLength(2);
    expect(waits).toEqual([1000]);
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(950);
  });

  it('backs off exponentially on a 503 without Retry-After, and gives up after `retries`, answering the last 503', async () => {
    const { baseUrl, requests } = await serve(() => ({ status: 503, body: 'Service Unavailable' }));
    const waits: number[] = [];
    const api = createClient({ baseUrl, token: 't', retries: { retries: 3, minDelayMs: 20, onRetry: ({ delayMs }) => waits.push(delayMs) } });
    const result = await api.GET('/me');
    expect(result.response.status).toBe(503);
    expect(result.error).toBe('Service Unavailable');
    expect(requests).toHaveLength(4);
    // Each wait is the doubled backoff with up to half of it taken off (jitter): 20, 40, 80 ms.
    expect(waits).toHaveLength(3);
    waits.forEach((wait, index) => {
      expect(wait).toBeGreaterThanOrEqual(10 * 2 ** index);
      expect(wait).toBeLessThanOrEqual(20 * 2 ** index);
    });
    const thrown = await Promise.resolve(result).then(unwrap).catch((error: unknown) => error);
    expect(thrown).toBeInstanceOf(RecruitApiError);
    expect(thrown).toMatchObject({ status: 503, errors: [{ message: 'Service Unavailable', path: [] }] });
  });

  it('retries a 503 that names a Retry-After as an HTTP date', async () => {
    const { baseUrl, requests } = await serve(inTurn([{ status: 503, headers: { 'retry-after': new Date(Date.now() - 1000).toUTCString() } }], me));
    const api = createClient({ baseUrl, token: 't' });
    expect(unwrap(await api.GET('/me'))).toEqual(me);
    expect(requests).toHaveLength(2);
  });

  it('does not wait a Retry-After longer than maxDelayMs: it answers the 429 at once', async () => {
    const { baseUrl, requests } = await serve(() => ({ status: 429, headers: { 'retry-after': '120' }, body: 'Too Many Requests' }));
    const api = createClient({ baseUrl, token: 't', retries: { maxDelayMs: 5_000 } });
    const startedAt = Date.now();
    const { response } = await api.GET('/me');
    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('120');
    expect(requests).toHaveLength(1);
    expect(Date.now() - startedAt).toBeLessThan(1000);
  });

  it('retries a POST with the same Idempotency-Key and the same body on each attempt', async () => {
    const { baseUrl, requests } = await serve(
      inTurn([{ status: 503, headers: { 'retry-after': '0' } }, { status: 429, headers: { 'retry-after': '0' } }], study),
    );
    const api = createClient({ baseUrl, token: 't' });
    expect(unwrap(await api.POST('/studies', { body: studyBody }))).toEqual(study);
    expect(requests).toHaveLength(3);
    const key = requests[0]!.headers['idempotency-key'];
    expect(key).toMatch(uuid);
    for (const request of requests) {
      expect(request.method).toBe('POST');
      expect(request.headers['idempotency-key']).toBe(key);
      expect(JSON.parse(request.body)).toEqual(studyBody);
    }
  });

  it('never retries a POST that carries no Idempotency-Key', async () => {
    const { baseUrl, requests } = await serve(() => ({ status: 429, headers: { 'retry-after': '0' }, body: 'Too Many Requests' }));
    const keyless = createClient({ baseUrl, token: 't', idempotencyKeys: false });
    expect((await keyless.POST('/studies', { body: studyBody })).response.status).toBe(429);
    expect(requests).toHaveLength(1);
    const optedOut = createClient({ baseUrl, token: 't' });
    expect((await optedOut.POST('/studies', { body: studyBody, headers: { 'Idempotency-Key': null } })).response.status).toBe(429);
    expect(requests).toHaveLength(2);
    expect(requests.map((request) => request.headers['idempotency-key'])).toEqual([undefined, undefined]);
  });

  it('sends a POST whose operation takes no key (POST /imports) without one, once', async () => {
    const { baseUrl, requests } = await serve(() => ({ status: 503, headers: { 'retry-after': '0' }, body: 'Service Unavailable' }));
    const api = createClient({ baseUrl, token: 't' });
    const csv = 'email,firstName\ngrace@example.org,Grace\n';
    expect((await api.POST('/imports', { body: csv })).response.status).toBe(503);
    expect(requests).toHaveLength(1);
    expect(requests[0]!.headers['idempotency-key']).toBeUndefined();
    // A documented text/csv body goes as it is, with its media type.
    expect(requests[0]!.headers['content-type']).toBe('text/csv');
    expect(requests[0]!.body).toBe(csv);
    // A media type the call names is kept; a Blob goes as it is too.
    await api.POST('/imports', { body: new Blob([csv]), headers: { 'Content-Type': 'text/csv; charset=utf-8' }, params: { query: { populationId: 'pop_1' } } });
    expect(requests[1]!.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(requests[1]!.body).toBe(csv);
    expect(requests[1]!.url.search).toBe('?populationId=pop_1');
  });

  it('retries PUT, PATCH and DELETE (they set what they name) without a key', async () => {
    const { baseUrl, requests } = await serve((_request, index) => (index % 2 === 0 ? { status: 503, headers: { 'retry-after': '0' } } : { status: 200, body: study }));
    const api = createClient({ baseUrl, token: 't' });
    await api.PATCH('/studies/{studyId}', { params: { path: { studyId: 'stu_1' } }, body: { studyPlan: { language: 'en' } } });
    await api.PUT('/studies/{studyId}/screener', { params: { path: { studyId: 'stu_1' } }, body: { questions: [] } });
    await api.DELETE('/studies/{studyId}/screener', { params: { path: { studyId: 'stu_1' } } });
    expect(requests.map((request) => request.method)).toEqual(['PATCH', 'PATCH', 'PUT', 'PUT', 'DELETE', 'DELETE']);
    expect(requests.every((request) => request.headers['idempotency-key'] === undefined)).toBe(true);
  });

  it('sends each request once with retries: false, and stops waiting when the call is aborted', async () => {
    const { baseUrl, requests } = await serve(() => ({ status: 429, headers: { 'retry-after': '30' } }));
    await createClient({ baseUrl, token: 't', retries: false }).GET('/me');
    expect(requests).toHaveLength(1);
    const controller = new AbortController();
    const api = createClient({ baseUrl, token: 't', retries: { onRetry: () => setTimeout(() => controller.abort(new Error('gave up')), 20) } });
    const startedAt = Date.now();
    await expect(api.GET('/me', { signal: controller.signal })).rejects.toThrow('gave up');
    expect(Date.now() - startedAt).toBeLessThan(5_000);
    expect(requests).toHaveLength(2);
  });
});

describe('retryAfterMs', () => {
  it('reads delay-seconds and HTTP dates, and nothing else', () => {
    const now = Date.parse('2026-11-22T10:00:00Z');
    expect(retryAfterMs('0', now)).toBe(0);
    expect(retryAfterMs(' 12 ', now)).toBe(12_000);
    expect(retryAfterMs('Sun, 22 Nov 2026 10:00:30 GMT', now)).toBe(30_000);
    expect(retryAfterMs('Sun, 22 Nov 2026 09:00:00 GMT', now)).toBe(0);
    for (const unreadable of [null, '', '-1', '1.5', 'soon']) expect(retryAfterMs(unreadable, now), String(unreadable)).toBeUndefined();
  });
});

describe('Idempotency-Key', () => {
  it('is a new random UUID on every POST that takes one, and absent from other methods', async () => {
    const { baseUrl, requests } = await serve(() => ({ status: 201, body: study }));
    const api = createClient({ baseUrl, token: 't' });
    await api.POST('/studies', { body: studyBody });
    await api.POST('/studies', { body: studyBody });
    await api.POST('/studies/{studyId}/launch', { params: { path: { studyId: 'stu_1' } } });
    await api.GET('/studies/{studyId}', { params: { path: { studyId: 'stu_1' } } });
    const keys = requests.map((request) => request.headers['idempotency-key']);
    expect(keys.slice(0, 3).every((key) => uuid.test(String(key)))).toBe(true);
    expect(new Set(keys.slice(0, 3)).size).toBe(3);
    expect(keys[3]).toBeUndefined();
  });

  it("keeps a call's own key (in params.header or headers), and takes keys from a function when given", async () => {
    const { baseUrl, requests } = await serve(() => ({ status: 201, body: study }));
    const api = createClient({ baseUrl, token: 't' });
    await api.POST('/studies', { body: studyBody, params: { header: { 'Idempotency-Key': 'order-42' } } });
    await api.POST('/studies', { body: studyBody, headers: { 'idempotency-key': 'order-43' } });
    await api.POST('/studies', { body: studyBody, headers: new Headers({ 'Idempotency-Key': 'order-44' }) });
    let made = 0;
    await createClient({ baseUrl, token: 't', idempotencyKeys: () => `key-${++made}` }).POST('/studies', { body: studyBody });
    expect(requests.map((request) => request.headers['idempotency-key'])).toEqual(['order-42', 'order-43', 'order-44', 'key-1']);
  });

  it('is not sent to the public signup route, which takes none', async () => {
    const { baseUrl, requests } = await serve(() => ({ status: 201, body: { submissionId: 'sub_1' } }));
    await createClient({ baseUrl }).POST('/public/signups/{signupFormId}/submissions', {
      params: { path: { signupFormId: 'suf_1' } },
      body: { email: 'ada@example.org' },
    });
    expect(requests[0]!.headers['idempotency-key']).toBeUndefined();
    expect(requests[0]!.headers.authorization).toBeUndefined();
  });
});

describe('errors', () => {
  it('gives the error body typed beside the response, and unwrap throws it as a RecruitApiError with the request id', async () => {
    const { baseUrl } = await serve(() => ({
      status: 404,
      headers: { 'x-request-id': 'req-7' },
      body: { errors: [{ message: 'Study not found', path: ['studyId'] }] },
    }));
    const api = createClient({ baseUrl, token: 't' });
    const result = await api.GET('/studies/{studyId}', { params: { path: { studyId: 'stu_missing' } } });
    expect(result.data).toBeUndefined();
    expect(result.response.status).toBe(404);
    // Typed from the document: the 404 body is the ErrorBody schema.
    const items = typeof result.error === 'object' && 'errors' in result.error ? result.error.errors : [];
    expect(items).toEqual([{ message: 'Study not found', path: ['studyId'] }]);

    let thrown: unknown;
    try {
      unwrap(result);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(RecruitApiError);
    const error = thrown as RecruitApiError;
    expect(error.status).toBe(404);
    expect(error.errors).toEqual([{ message: 'Study not found', path: ['studyId'] }]);
    expect(error.requestId).toBe('req-7');
    expect(error.message).toBe('404 /v1/studies/stu_missing: Study not found (studyId)');
  });

  it('reads the three error shapes of the service into items', async () => {
    const answers: Answer[] = [
      { status: 400, body: { message: 'emails field cannot be empty' } },
      { status: 401, body: 'Unauthorized' },
      { status: 409, body: { errors: [{ message: 'Study is not in draft status', path: ['studyId'] }] } },
    ];
    const { baseUrl } = await serve((_request, index) => answers[index]!);
    const api = createClient({ baseUrl, token: 't' });
    const errors: RecruitApiError[] = [];
    for (let index = 0; index < answers.length; index++) {
      try {
        unwrap(await api.GET('/me'));
      } catch (error) {
        errors.push(error as RecruitApiError);
      }
    }
    expect(errors.map((error) => [error.status, error.errors])).toEqual([
      [400, [{ message: 'emails field cannot be empty', path: [] }]],
      [401, [{ message: 'Unauthorized', path: [] }]],
      [409, [{ message: 'Study is not in draft status', path: ['studyId'] }]],
    ]);
  });
});
