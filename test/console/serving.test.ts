import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleDistDirectory } from '../../src/http/console.js';
import { startTestService, type TestService } from '../harness.js';

/**
 * How the server serves the console (src/http/console.ts), through inject: no browser. Needs the
 * console built (`npm run build`, which `npm test` runs first).
 */
const expectedPolicy =
  "default-src 'self';script-src 'self';style-src 'self';img-src 'self' data:;connect-src 'self';font-src 'self';object-src 'none';base-uri 'none';frame-ancestors 'none';form-action 'self'";

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service?.stop());

const get = (url: string, method: 'GET' | 'HEAD' | 'POST' = 'GET') => service.app.inject({ method, url });

describe('the console at /console', () => {
  it('serves its page at /console and /console/ under the strict policy and the security headers', async () => {
    for (const url of ['/console', '/console/']) {
      const response = await get(url);
      expect(response.statusCode, `${url}: ${response.body}`).toBe(200);
      expect(response.headers['content-type']).toMatch(/^text\/html/);
      expect(response.body).toContain('<div id="app"></div>');
      expect(response.headers['content-security-policy']).toBe(expectedPolicy);
      expect(response.headers['x-content-type-options']).toBe('nosniff');
      expect(response.headers['x-frame-options']).toBe('DENY');
      expect(response.headers['referrer-policy']).toBe('no-referrer');
      expect(response.headers['cross-origin-opener-policy']).toBe('same-origin');
      expect(response.headers['cache-control']).toBe('no-cache');
    }
  });

  it('answers a page of the app (a path that is no file) with index.html: the app routes it', async () => {
    for (const url of ['/console/studies', '/console/studies/stu_123?status=ACTIVE', '/console/no/such/page']) {
      const response = await get(url);
      expect(response.statusCode, url).toBe(200);
      expect(response.body, url).toContain('<div id="app"></div>');
      expect(response.headers['content-security-policy'], url).toBe(expectedPolicy);
    }
  });

  it('serves the hashed assets to be kept, and a missing asset is a 404, not the page', async () => {
    const assets = readdirSync(path.join(consoleDistDirectory, 'assets'));
    const script = assets.find((name) => name.endsWith('.js'));
    const style = assets.find((name) => name.endsWith('.css'));
    for (const [name, type] of [
      [script, /javascript/],
      [style, /text\/css/],
    ] as const) {
      const response = await get(`/console/assets/${name}`);
      expect(response.statusCode, name).toBe(200);
      expect(response.headers['content-type']).toMatch(type);
      expect(response.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    }
    const missing = await get('/console/assets/index-gone.js');
    expect(missing.statusCode).toBe(404);
    expect(missing.body).toBe('Not Found');
    expect((await get('/console/studies', 'POST')).statusCode).toBe(404);
  });

  it('emits no inline script or style (the policy would block it)', async () => {
    const page = (await get('/console/')).body;
    expect(page).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(page).not.toMatch(/<style/);
    expect(page).not.toMatch(/\sstyle=/);
    expect(page).not.toMatch(/\son[a-z]+=/);
  });

  it('leaves the API, /docs and the OpenAPI document as they were', async () => {
    const api = await get('/v1/me');
    expect(api.statusCode).toBe(401);
    expect(api.headers['content-security-policy']).toBeUndefined();
    const docs = await get('/docs/');
    expect(docs.statusCode).toBe(200);
    expect(docs.headers['content-security-policy']).not.toBe(expectedPolicy);
    const document = (await get('/v1/openapi.json')).json() as { paths: Record<string, unknown> };
    expect(Object.keys(document.paths).filter((route) => route.includes('console'))).toEqual([]);
  });
});

describe('the console without a build', () => {
  it('answers 503 in words on every console path, and the API still serves', async () => {
    const empty = mkdtempSync(path.join(tmpdir(), 'recruit-ops-no-console-'));
    const unbuilt = await startTestService({}, { consoleRoot: empty });
    try {
      for (const url of ['/console', '/console/', '/console/studies/xyz']) {
        const response = await unbuilt.app.inject({ method: 'GET', url });
        expect(response.statusCode, url).toBe(503);
        expect(response.headers['content-type']).toMatch(/^text\/plain/);
        expect(response.body).toMatch(/The console is not built: .*index\.html is missing\. Run `npm run build`/);
      }
      expect((await unbuilt.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    } finally {
      await unbuilt.stop();
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
