import { gunzipSync, brotliDecompressSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../test/harness.js';
import { chooseEncoding } from './openapi-document.js';

// Issue 32: the 720 KB document was built and serialized for every request, unthrottled.
let service: TestService;
beforeAll(async () => {
  service = await startTestService({ openapiRateLimitMax: 4 });
});
afterAll(async () => service.stop());

const get = (headers: Record<string, string>, remoteAddress: string) => service.app.inject({ method: 'GET', url: '/v1/openapi.json', headers, remoteAddress });

describe('GET /v1/openapi.json', () => {
  it('answers gzip or brotli when taken, with an ETag and Cache-Control; If-None-Match gets a 304 without the body', async () => {
    const plain = await get({}, '10.0.0.1');
    expect(plain.statusCode).toBe(200);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers['content-type']).toBe('application/json; charset=utf-8');
    const document = plain.json<{ openapi: string; paths: object }>();
    expect(document.openapi).toMatch(/^3\./);
    const etag = plain.headers.etag as string;
    expect(etag).toMatch(/^"[\w-]{32}"$/);
    expect(plain.headers['cache-control']).toBe('public, max-age=300, must-revalidate');
    expect(plain.headers.vary).toContain('Accept-Encoding');

    const gzipped = await get({ 'accept-encoding': 'gzip, deflate' }, '10.0.0.1');
    expect(gzipped.headers['content-encoding']).toBe('gzip');
    expect(gzipped.rawPayload.length).toBeLessThan(plain.rawPayload.length / 5);
    expect(JSON.parse(gunzipSync(gzipped.rawPayload).toString())).toEqual(document);

    const brotli = await get({ 'accept-encoding': 'gzip, br' }, '10.0.0.1');
    expect(brotli.headers['content-encoding']).toBe('br');
    expect(JSON.parse(brotliDecompressSync(brotli.rawPayload).toString())).toEqual(document);
    expect(brotli.headers.etag).toBe(etag);

    const unchanged = await get({ 'if-none-match': etag, 'accept-encoding': 'br' }, '10.0.0.1');
    expect(unchanged.statusCode).toBe(304);
    expect(unchanged.rawPayload.length).toBe(0);
    expect(unchanged.headers.etag).toBe(etag);
  });

  it('limits each client address (OPENAPI_RATE_LIMIT_MAX): past it a 429 with Retry-After in the error format; another address is served', async () => {
    for (let i = 0; i < 4; i++) expect((await get({ 'if-none-match': '"x"' }, '10.0.0.2')).statusCode).toBe(200);
    const started = performance.now();
    const refused = await get({}, '10.0.0.2');
    expect(refused.statusCode).toBe(429);
    // Held a moment before it is answered (at most 1 s, never past Retry-After): a loop that ignores
    // Retry-After sends about one a second, not hundreds.
    expect(performance.now() - started).toBeGreaterThanOrEqual(900);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(refused.headers['x-ratelimit-limit']).toBe('4');
    expect(refused.headers['x-ratelimit-remaining']).toBe('0');
    // The catalogue's 429, as every rate limit answers it (plain text).
    expect(refused.body).toBe('Too Many Requests');
    expect((await get({}, '10.0.0.3')).statusCode).toBe(200);
  });

  it.each([
    ['gzip, deflate, br', 'br'],
    ['gzip', 'gzip'],
    ['br;q=0, gzip;q=0.5', 'gzip'],
    ['identity', 'identity'],
    ['*', 'br'],
    ['', 'identity'],
  ] as const)('chooses for Accept-Encoding "%s": %s', (header, encoding) => {
    expect(chooseEncoding(header)).toBe(encoding);
  });
});
