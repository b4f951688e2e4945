import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type Tenant, type TestService } from '../../../test/harness.js';
import { describeSecurity } from '../../../test/security.js';
import { accentRefusal, contrastRatio, relativeLuminance } from './contrast.js';
import { readImage } from './images.js';
import { findLogo, findPageBranding } from './service.js';
import { testImages } from './test-images.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service.stop());

interface Config {
  brandingConfigId: string;
  displayName: string;
  accentColor: string | null;
  logo: { contentType: string; byteSize: number; width: number; height: number; sha256: string; path: string } | null;
  logoAlt: string | null;
  createdAt: string;
  updatedAt: string;
  createdByUserId: string;
}

const png = { contentType: 'image/png', data: testImages.png };
const config = { displayName: 'Acme Research', accentColor: '#1D3F8F', logo: png, logoAlt: 'Acme' };

async function create(tenant: Tenant, body: object = config): Promise<Config> {
  const response = await call(service, 'POST', '/branding-configs', { token: tenant.token, body });
  expect(response.statusCode, response.body).toBe(201);
  return response.json<Config>();
}

/** The test PNG with bytes after its end that decoders ignore: an image of its own hash, held by no other test. */
const uniquePng = () => Buffer.concat([Buffer.from(testImages.png, 'base64'), Buffer.from(randomUUID())]).toString('base64');
const errorOf = (response: { json: <T>() => T }) => response.json<{ errors: { message: string; path: string[] }[] }>().errors[0]!;
const sha256 = (base64: string) => createHash('sha256').update(Buffer.from(base64, 'base64')).digest('hex');

describe('POST /branding-configs', () => {
  it('creates a config with its logo described, the accent in lower case; read back and listed', async () => {
    const tenant = await createTenant(service);
    const created = await create(tenant);
    const hash = sha256(testImages.png);
    expect(created).toEqual({
      brandingConfigId: expect.stringMatching(/^brc_[0-9A-HJKMNP-TV-Z]{26}$/),
      displayName: 'Acme Research',
      accentColor: '#1d3f8f',
      logo: { contentType: 'image/png', byteSize: Buffer.from(testImages.png, 'base64').length, width: 120, height: 40, sha256: hash, path: `/p/assets/logo-${hash}.png` },
      logoAlt: 'Acme',
      createdAt: expect.any(String),
      updatedAt: created.createdAt,
      createdByUserId: tenant.userId,
    });
    const read = await call(service, 'GET', `/branding-configs/${created.brandingConfigId}`, { token: tenant.token });
    expect(read.statusCode).toBe(200);
    expect(read.json()).toEqual(created);
    const list = await call(service, 'GET', '/branding-configs', { token: tenant.token });
    expect(list.json()).toMatchObject({ results: [created], total: 1, pageInfo: { hasNextPage: false } });
  });

  it('takes a name alone, and each of the three image types, reading their dimensions', async () => {
    const tenant = await createTenant(service);
    expect(await create(tenant, { displayName: 'Plain' })).toMatchObject({ accentColor: null, logo: null, logoAlt: null });
    for (const [contentType, data, extension] of [
      ['image/jpeg', testImages.jpeg, 'jpg'],
      ['image/webp', testImages.webp, 'webp'],
      ['image/webp', testImages.webpExtended, 'webp'],
    ] as const) {
      const created = await create(tenant, { displayName: 'Typed', logo: { contentType, data } });
      expect(created.logo, contentType).toMatchObject({ contentType, width: 120, height: 40, path: `/p/assets/logo-${sha256(data)}.${extension}` });
    }
  });

  it('pages the list by id with the exact total, a cursor bound to its workspace', async () => {
    const tenant = await createTenant(service);
    const made = [];
    for (let index = 0; index < 3; index++) made.push((await create(tenant, { displayName: `Brand ${index}` })).brandingConfigId);
    const first = (await call(service, 'GET', '/branding-configs', { token: tenant.token, query: { size: '2' } })).json<{ results: Config[]; total: number; pageInfo: { hasNextPage: boolean; endCursor: string } }>();
    expect(first.total).toBe(3);
    expect(first.pageInfo.hasNextPage).toBe(true);
    const second = (await call(service, 'GET', '/branding-configs', { token: tenant.token, query: { size: '2', startCursor: first.pageInfo.endCursor } })).json<{ results: Config[]; pageInfo: { hasNextPage: boolean } }>();
    expect([...first.results, ...second.results].map((item) => item.brandingConfigId)).toEqual(made);
    expect(second.pageInfo.hasNextPage).toBe(false);
    const other = await createTenant(service, 'Other workspace');
    const foreign = await call(service, 'GET', '/branding-configs', { token: other.token, query: { startCursor: first.pageInfo.endCursor } });
    expect(foreign.statusCode).toBe(400);
    expect(errorOf(foreign).path).toEqual(['startCursor']);
  });

  it('refuses an accent that cannot keep 4.5:1 with the white page and its white text, naming accentColor and saying what is allowed', async () => {
    const tenant = await createTenant(service);
    for (const accent of ['#3b82f6', '#ffdd00', '#FFFFFF', '#777777']) {
      const response = await call(service, 'POST', '/branding-configs', { token: tenant.token, body: { ...config, accentColor: accent } });
      expect(response.statusCode, accent).toBe(400);
      const error = errorOf(response);
      expect(error.path).toEqual(['accentColor']);
      expect(error.message).toMatch(/contrast of [\d.]+:1 .*white background .* at least 4\.5:1 .*relative luminance is at most 0\.183/);
    }
    expect(errorOf(await call(service, 'POST', '/branding-configs', { token: tenant.token, body: { ...config, accentColor: '#3b82f6' } })).message).toContain('3.67:1');
    // #767676 is the lightest grey that passes (4.54:1).
    expect((await create(tenant, { ...config, accentColor: '#767676' })).accentColor).toBe('#767676');
    expect((await call(service, 'GET', '/branding-configs', { token: tenant.token })).json<{ total: number }>().total).toBe(1);
  });

  const bigPng = () => {
    // A valid PNG header padded past 256 KiB with an ancillary chunk.
    const bytes = Buffer.from(testImages.png, 'base64');
    return Buffer.concat([bytes.subarray(0, 33), Buffer.alloc(256 * 1024), bytes.subarray(33)]).toString('base64');
  };
  const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>').toString('base64');
  it.each([
    ['no displayName', { displayName: undefined }, ['displayName'], /displayName/],
    ['an empty displayName', { displayName: '' }, ['displayName'], /./],
    ['a displayName too long', { displayName: 'x'.repeat(101) }, ['displayName'], /./],
    ['an accent that is not #rrggbb', { accentColor: 'blue' }, ['accentColor'], /pattern/],
    ['an accent of three digits', { accentColor: '#123' }, ['accentColor'], /pattern/],
    ['an SVG content type', { logo: { contentType: 'image/svg+xml', data: svg } }, ['logo', 'contentType'], /SVG is not accepted.*image\/png, image\/jpeg or image\/webp/],
    ['SVG bytes called PNG', { logo: { contentType: 'image/png', data: svg } }, ['logo', 'data'], /SVG image, which is not accepted/],
    ['a GIF', { logo: { contentType: 'image/gif', data: Buffer.from('GIF89a\x01\x00\x01\x00').toString('base64') } }, ['logo', 'contentType'], /not accepted/],
    ['bytes that are no image', { logo: { contentType: 'image/png', data: Buffer.from('hello, world').toString('base64') } }, ['logo', 'data'], /not a PNG, JPEG or WebP/],
    ['a JPEG called PNG', { logo: { contentType: 'image/png', data: testImages.jpeg } }, ['logo', 'data'], /image\/jpeg image, not the image\/png/],
    ['a PNG cut short', { logo: { contentType: 'image/png', data: Buffer.from(testImages.png, 'base64').subarray(0, 20).toString('base64') } }, ['logo', 'data'], /cut short/],
    ['a logo over 256 KiB', { logo: { contentType: 'image/png', data: bigPng() } }, ['logo', 'data'], /at most 262,144 \(256 KiB\)/],
    ['data that is not base64', { logo: { contentType: 'image/png', data: 'not base64!' } }, ['logo', 'data'], /./],
    ['an unknown logo field', { logo: { ...png, name: 'x.png' } }, ['logo', 'name'], /./],
    ['a logoAlt too long', { logoAlt: 'x'.repeat(201) }, ['logoAlt'], /./],
    ['an unknown field', { brandingConfigId: 'brc_x' }, ['brandingConfigId'], /./],
  ])('refuses %s with 400 naming the field, creating nothing', async (_case, change, path, message) => {
    const tenant = await createTenant(service);
    const response = await call(service, 'POST', '/branding-configs', { token: tenant.token, body: { ...config, ...change } });
    expect(response.statusCode, response.body).toBe(400);
    expect(errorOf(response).path).toEqual(path);
    expect(errorOf(response).message).toMatch(message);
    expect((await call(service, 'GET', '/branding-configs', { token: tenant.token })).json<{ total: number }>().total).toBe(0);
  });

  it('refuses an image larger than 4096 pixels on a side, read from its header', async () => {
    const tenant = await createTenant(service);
    const bytes = Buffer.from(testImages.png, 'base64');
    bytes.writeUInt32BE(5000, 16);
    const response = await call(service, 'POST', '/branding-configs', { token: tenant.token, body: { ...config, logo: { contentType: 'image/png', data: bytes.toString('base64') } } });
    expect(response.statusCode).toBe(400);
    expect(errorOf(response)).toEqual({ message: 'logo.data: the image is 5000×40 pixels; at most 4096 on each side', path: ['logo', 'data'] });
  });
});

describe('PATCH /branding-configs/{brandingConfigId}', () => {
  it('changes only the fields given; null removes the accent, the logo and its text', async () => {
    const tenant = await createTenant(service);
    const created = await create(tenant);
    const renamed = await call(service, 'PATCH', `/branding-configs/${created.brandingConfigId}`, { token: tenant.token, body: { displayName: 'Acme Labs' } });
    expect(renamed.statusCode, renamed.body).toBe(200);
    expect(renamed.json()).toEqual({ ...created, displayName: 'Acme Labs', updatedAt: expect.any(String) });
    const relogo = await call(service, 'PATCH', `/branding-configs/${created.brandingConfigId}`, { token: tenant.token, body: { logo: { contentType: 'image/webp', data: testImages.webp }, accentColor: '#0f6e3a' } });
    expect(relogo.json<Config>()).toMatchObject({ accentColor: '#0f6e3a', logo: { contentType: 'image/webp', sha256: sha256(testImages.webp) }, logoAlt: 'Acme' });
    const cleared = await call(service, 'PATCH', `/branding-configs/${created.brandingConfigId}`, { token: tenant.token, body: { accentColor: null, logo: null, logoAlt: null } });
    expect(cleared.json()).toMatchObject({ displayName: 'Acme Labs', accentColor: null, logo: null, logoAlt: null });
    expect((await call(service, 'PATCH', `/branding-configs/${created.brandingConfigId}`, { token: tenant.token, body: {} })).json()).toMatchObject({ displayName: 'Acme Labs' });
  });

  it('refuses a low-contrast accent, a wrong image and a null name with 400, changing nothing', async () => {
    const tenant = await createTenant(service);
    const created = await create(tenant);
    for (const [body, path] of [
      [{ accentColor: '#9ca3af' }, ['accentColor']],
      [{ logo: { contentType: 'image/webp', data: testImages.png } }, ['logo', 'data']],
      [{ logo: { contentType: 'image/svg+xml', data: testImages.png } }, ['logo', 'contentType']],
      [{ displayName: null }, ['displayName']],
    ] as const) {
      const response = await call(service, 'PATCH', `/branding-configs/${created.brandingConfigId}`, { token: tenant.token, body });
      expect(response.statusCode, JSON.stringify(body)).toBe(400);
      expect(errorOf(response).path).toEqual(path);
    }
    expect((await call(service, 'GET', `/branding-configs/${created.brandingConfigId}`, { token: tenant.token })).json()).toEqual(created);
  });
});

describe('not found, and another workspace', () => {
  it("answers 404 naming brandingConfigId for an unknown id and for another workspace's, on every route", async () => {
    const tenant = await createTenant(service);
    const other = await createTenant(service, 'Other workspace');
    const theirs = await create(other);
    for (const id of ['brc_01JD0000000000000000000000', theirs.brandingConfigId]) {
      for (const [method, body] of [['GET', undefined], ['PATCH', { displayName: 'Mine now' }], ['DELETE', undefined]] as const) {
        const response = await call(service, method, `/branding-configs/${id}`, { token: tenant.token, body });
        expect(response.statusCode, `${method} ${id}`).toBe(404);
        expect(response.json()).toEqual({ errors: [{ message: 'Branding config not found', path: ['brandingConfigId'] }] });
      }
    }
    expect((await call(service, 'GET', `/branding-configs/${theirs.brandingConfigId}`, { token: other.token })).json()).toEqual(theirs);
  });
});

describe('DELETE /branding-configs/{brandingConfigId}', () => {
  it('deletes the config; a study naming it falls back to the defaults, and its logo is no longer served', async () => {
    const tenant = await createTenant(service);
    const created = await create(tenant, { ...config, logo: { contentType: 'image/png', data: uniquePng() } });
    expect(await findLogo(service.deps.db, created.logo!.sha256)).toMatchObject({ contentType: 'image/png' });
    const deleted = await call(service, 'DELETE', `/branding-configs/${created.brandingConfigId}`, { token: tenant.token });
    expect(deleted.statusCode, deleted.body).toBe(200);
    expect(deleted.json()).toEqual({ brandingConfigId: created.brandingConfigId });
    expect((await call(service, 'GET', `/branding-configs/${created.brandingConfigId}`, { token: tenant.token })).statusCode).toBe(404);
    expect(await findPageBranding(service.deps.db, tenant.workspaceId, created.brandingConfigId)).toBeUndefined();
    expect(await findLogo(service.deps.db, created.logo!.sha256)).toBeUndefined();
  });
});

describe("a study's brandingConfigId", () => {
  it('stays free text: an unknown id is accepted and kept, and the pages find no branding for it', async () => {
    const tenant = await createTenant(service);
    const other = await createTenant(service, 'Other workspace');
    const mine = await create(tenant);
    const theirs = await create(other);
    for (const brandingConfigId of ['br_1', theirs.brandingConfigId, mine.brandingConfigId]) {
      const response = await call(service, 'POST', '/studies', { token: tenant.token, body: { studyType: 'INTERVIEWS', recruitmentStrategy: 'IN_SERVICE', studyPlan: { name: 'Study', brandingConfigId } } });
      expect(response.statusCode, response.body).toBe(201);
      const study = await call(service, 'GET', `/studies/${response.json<{ studyId: string }>().studyId}`, { token: tenant.token });
      expect(study.json<{ studyPlan: { brandingConfigId: string } }>().studyPlan.brandingConfigId).toBe(brandingConfigId);
    }
    const db = service.deps.db;
    expect(await findPageBranding(db, tenant.workspaceId, mine.brandingConfigId)).toEqual({
      displayName: 'Acme Research',
      accentColor: '#1d3f8f',
      logo: { path: mine.logo!.path, alt: 'Acme', width: 120, height: 40 },
    });
    expect(await findPageBranding(db, tenant.workspaceId, 'br_1')).toBeUndefined();
    expect(await findPageBranding(db, tenant.workspaceId, theirs.brandingConfigId)).toBeUndefined();
    expect(await findPageBranding(db, tenant.workspaceId, undefined)).toBeUndefined();
  });
});

describe('contrast and images', () => {
  it("computes WCAG's relative luminance and contrast ratio", () => {
    expect(relativeLuminance('#ffffff')).toBeCloseTo(1, 6);
    expect(relativeLuminance('#000000')).toBe(0);
    expect(contrastRatio('#000000', '#ffffff')).toBeCloseTo(21, 6);
    expect(contrastRatio('#767676', '#ffffff')).toBeCloseTo(4.54, 2);
    expect(contrastRatio('#777777', '#ffffff')).toBeCloseTo(4.48, 2);
    expect(accentRefusal('#767676')).toBeUndefined();
    expect(accentRefusal('#777777')).toMatch(/4\.47:1/);
  });

  it('reads each format by its magic bytes, never by its name', () => {
    expect(readImage(Buffer.from(testImages.png, 'base64'))).toEqual({ contentType: 'image/png', width: 120, height: 40 });
    expect(readImage(Buffer.from(testImages.jpeg, 'base64'))).toEqual({ contentType: 'image/jpeg', width: 120, height: 40 });
    expect(readImage(Buffer.from(testImages.webp, 'base64'))).toEqual({ contentType: 'image/webp', width: 120, height: 40 });
    expect(readImage(Buffer.from(testImages.webpExtended, 'base64'))).toEqual({ contentType: 'image/webp', width: 120, height: 40 });
    expect(readImage(Buffer.from('<?xml version="1.0"?>\n<svg/>'))).toMatch(/SVG/);
    expect(readImage(Buffer.from([0xff, 0xd8, 0xff, 0xd9]))).toMatch(/no frame header/);
    expect(readImage(Buffer.alloc(0))).toMatch(/not a PNG, JPEG or WebP/);
  });
});

const created = (tenant: Tenant) => create(tenant, { displayName: 'Secured' });

describeSecurity('POST /branding-configs', () => service, {
  method: 'POST',
  right: 'branding:write',
  addressesResource: false,
  request: async () => ({ url: '/branding-configs', body: config }),
});

describeSecurity('GET /branding-configs', () => service, {
  method: 'GET',
  right: 'branding:read',
  addressesResource: false,
  request: async () => ({ url: '/branding-configs' }),
});

describeSecurity('GET /branding-configs/{brandingConfigId}', () => service, {
  method: 'GET',
  right: 'branding:read',
  addressesResource: true,
  request: async (tenant) => ({ url: `/branding-configs/${(await created(tenant)).brandingConfigId}` }),
});

describeSecurity('PATCH /branding-configs/{brandingConfigId}', () => service, {
  method: 'PATCH',
  right: 'branding:write',
  addressesResource: true,
  request: async (tenant) => ({ url: `/branding-configs/${(await created(tenant)).brandingConfigId}`, body: { accentColor: '#0f6e3a' } }),
});

describeSecurity('DELETE /branding-configs/{brandingConfigId}', () => service, {
  method: 'DELETE',
  right: 'branding:write',
  addressesResource: true,
  request: async (tenant) => ({ url: `/branding-configs/${(await created(tenant)).brandingConfigId}` }),
});

describe('rights', () => {
  it('lets every role read branding configs, and the roles that write studies write them', async () => {
    const { rolesWithRight } = await import('../../http/rights.js');
    // Every built-in role; a CUSTOM user holds what their custom role holds (docs/api/users.md).
    expect(rolesWithRight('branding:read')).toEqual(['SUPER_ADMIN', 'OPS_MANAGER', 'RESEARCHER', 'DEVELOPER', 'COLLABORATOR', 'OBSERVER']);
    expect(rolesWithRight('branding:write')).toEqual(rolesWithRight('studies:write'));
  });
});
