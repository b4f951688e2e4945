import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testImages } from '../families/branding/test-images.js';
import { call, createTenant, startTestService, type Tenant, type TestService } from '../../test/harness.js';
import { createPerson } from '../../test/people-factory.js';
import { addParticipants, createStudy } from '../../test/participants-factory.js';
import { accentStylesheetPath } from './branding.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService({ publicUrl: 'https://recruit.example.test', participantRateLimitMax: 40 });
});
afterAll(async () => service.stop());

const logo = { contentType: 'image/webp', data: testImages.webp };

async function brand(tenant: Tenant, body: object): Promise<{ brandingConfigId: string; logo: { path: string; sha256: string } | null }> {
  const response = await call(service, 'POST', '/branding-configs', { token: tenant.token, body });
  expect(response.statusCode, response.body).toBe(201);
  return response.json();
}

/** A page of a participant of a study whose plan names `brandingConfigId`. */
async function pageOf(tenant: Tenant, brandingConfigId: string | undefined, options: { launch?: boolean } = {}) {
  const studyId = await createStudy(service, tenant, {
    studyType: 'INTERVIEWS',
    screener: true,
    launch: options.launch ?? true,
    studyPlan: { externalName: 'Shopping habits', ...(brandingConfigId ? { brandingConfigId } : {}) },
  });
  const person = await createPerson(service, tenant);
  const [participant] = await addParticipants(service, tenant, studyId, [person.personId]);
  const response = await call(service, 'POST', `/studies/${studyId}/participants/${participant!.participantId}/links`, { token: tenant.token, body: { purpose: 'SCREENER' } });
  expect(response.statusCode, response.body).toBe(201);
  return service.app.inject({ method: 'GET', url: new URL(response.json<{ url: string }>().url).pathname });
}

const get = (url: string, remoteAddress = '127.0.0.1') => service.app.inject({ method: 'GET', url, remoteAddress });
const stylesheetsOf = (html: string) => [...html.matchAll(/<link rel="stylesheet" href="([^"]+)"/g)].map((match) => match[1]!);

describe("the participant pages wear the study's branding", () => {
  it('shows the display name in the title, header and footer, the logo from this server, and the accent through a stylesheet of its own', async () => {
    const tenant = await createTenant(service);
    const config = await brand(tenant, { displayName: 'Acme Research', accentColor: '#0F6E3A', logo, logoAlt: 'Acme logo' });
    const page = await pageOf(tenant, config.brandingConfigId);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('<title>Shopping habits: a few questions – Acme Research</title>');
    expect(page.body).toContain(`<header class="site"><img class="logo" src="${config.logo!.path}" alt="Acme logo" width="120" height="40"/><p>Acme Research</p></header>`);
    expect(page.body).not.toContain('Test workspace');
    // No inline style, no script, nothing from another origin: the CSP's img-src and style-src 'self' hold.
    expect(page.body).not.toMatch(/<script|style=|src="https?:|href="https?:\/\/(?!recruit\.example\.test)/);
    const [, accent] = stylesheetsOf(page.body);
    expect(accent).toBe(accentStylesheetPath('#0f6e3a'));
    expect(accent).toMatch(/^\/p\/assets\/brand-0f6e3a-[0-9a-f]{16}\.css$/);

    const css = await get(accent!);
    expect(css.statusCode).toBe(200);
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(css.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(css.headers['x-content-type-options']).toBe('nosniff');
    expect(css.body).toBe(':root { --accent: #0f6e3a; }\n');

    const image = await get(config.logo!.path);
    expect(image.statusCode).toBe(200);
    expect(image.headers['content-type']).toBe('image/webp');
    expect(image.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(image.headers['x-content-type-options']).toBe('nosniff');
    expect(image.headers['content-security-policy']).toMatch(/default-src 'none'/);
    expect(image.headers['set-cookie']).toBeUndefined();
    expect(image.rawPayload.equals(Buffer.from(testImages.webp, 'base64'))).toBe(true);
    expect(createHash('sha256').update(image.rawPayload).digest('hex')).toBe(config.logo!.sha256);
  });

  it('shows a logo without text as decoration (the name beside it says who), and no accent stylesheet without an accent', async () => {
    const tenant = await createTenant(service);
    const config = await brand(tenant, { displayName: 'Quiet Lab', logo });
    const page = await pageOf(tenant, config.brandingConfigId);
    // `alt` with no value is alt="" (preact writes an empty attribute so): decorative for screen readers.
    expect(page.body).toContain(`<img class="logo" src="${config.logo!.path}" alt width="120" height="40"/><p>Quiet Lab</p>`);
    expect(stylesheetsOf(page.body)).toHaveLength(1);
  });

  it('brands the notices too (a study not yet launched)', async () => {
    const tenant = await createTenant(service);
    const config = await brand(tenant, { displayName: 'Acme Research', accentColor: '#1d3f8f' });
    const page = await pageOf(tenant, config.brandingConfigId, { launch: false });
    expect(page.body).toContain('<p>Acme Research</p>');
    expect(stylesheetsOf(page.body)).toEqual([expect.stringMatching(/participant-/), accentStylesheetPath('#1d3f8f')]);
  });

  it("falls back to the workspace's name and the pages' own style for an unknown id, another workspace's config, or a config deleted since", async () => {
    const tenant = await createTenant(service);
    const other = await createTenant(service, 'Other workspace');
    const theirs = await brand(other, { displayName: 'Not yours', accentColor: '#0f6e3a', logo });
    const mine = await brand(tenant, { displayName: 'Gone soon', accentColor: '#0f6e3a' });
    expect((await call(service, 'DELETE', `/branding-configs/${mine.brandingConfigId}`, { token: tenant.token })).statusCode).toBe(200);
    for (const id of [undefined, 'br_1', theirs.brandingConfigId, mine.brandingConfigId]) {
      const page = await pageOf(tenant, id);
      expect(page.statusCode, id).toBe(200);
      expect(page.body, id).toContain('<header class="site"><p>Test workspace</p></header>');
      expect(page.body, id).not.toMatch(/Not yours|Gone soon|<img/);
      expect(stylesheetsOf(page.body), id).toHaveLength(1);
    }
  });
});

describe('the brand assets', () => {
  it('answer 404 for a logo no workspace holds, a wrong extension, or a name off the pattern; and for a stylesheet of a refused accent or a wrong hash', async () => {
    const tenant = await createTenant(service);
    const config = await brand(tenant, { displayName: 'Acme', logo });
    const hash = config.logo!.sha256;
    for (const url of [
      `/p/assets/logo-${'0'.repeat(64)}.webp`,
      `/p/assets/logo-${hash}.png`,
      `/p/assets/logo-${hash}.svg`,
      `/p/assets/logo-${hash.toUpperCase()}.webp`,
      `/p/assets/logo-${hash}.webp.html`,
      `/p/assets/logo-${hash.slice(0, 63)}.webp`,
      '/p/assets/logo-..%2F..%2Fetc%2Fpasswd',
      accentStylesheetPath('#ffffff'),
      accentStylesheetPath('#3b82f6'),
      accentStylesheetPath('#0f6e3a').replace(/-[0-9a-f]{16}\.css$/, `-${'0'.repeat(16)}.css`),
      '/p/assets/brand-0f6e3a.css',
      '/p/assets/brand-}body{display:none.css',
    ]) {
      const response = await get(url);
      expect(response.statusCode, url).toBe(404);
      expect(response.headers['x-content-type-options'], url).toBe('nosniff');
      expect(response.headers['content-type'], url).toBe('text/plain; charset=utf-8');
    }
  });

  it('serves a logo whatever workspace holds it, to anyone with its hash (it is public on the pages), without a token', async () => {
    const tenant = await createTenant(service);
    const config = await brand(tenant, { displayName: 'Acme', logo: { contentType: 'image/png', data: testImages.png } });
    const response = await service.app.inject({ method: 'GET', url: config.logo!.path });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('image/png');
    expect(response.headers['cross-origin-resource-policy']).toBe('same-origin');
  });

  it('rate-limits logo requests per address', async () => {
    const tenant = await createTenant(service);
    const config = await brand(tenant, { displayName: 'Acme', logo });
    const statuses = [];
    for (let index = 0; index < 42; index++) statuses.push((await get(config.logo!.path, '203.0.113.9')).statusCode);
    expect(statuses.slice(0, 40).every((status) => status === 200)).toBe(true);
    const refused = await get(config.logo!.path, '203.0.113.9');
    expect(refused.statusCode).toBe(429);
    expect(refused.headers['retry-after']).toBeDefined();
    expect((await get(config.logo!.path, '203.0.113.10')).statusCode).toBe(200);
  });
});
