import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type Tenant, type TestService } from '../../../test/harness.js';
import { createStudy } from '../../../test/participants-factory.js';
import { describeSecurity } from '../../../test/security.js';
import { findServableConsentForm } from './service.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service.stop());

interface Version {
  consentFormId: string;
  version: number;
  title: string;
  body: string;
  language: string;
  requiredStatements: { id: string; text: string }[];
  optionalChoices: { id: string; text: string }[];
  bodyHtml: string;
  contentSha256: string;
  createdAt: string;
  createdByUserId: string;
}
type Summary = Pick<Version, 'version' | 'title' | 'language' | 'contentSha256' | 'createdAt' | 'createdByUserId'>;
interface Form {
  consentFormId: string;
  name: string;
  currentVersion: Version;
  versions: Summary[];
  createdAt: string;
  updatedAt: string;
  createdByUserId: string;
}

const content = {
  title: 'Consent to an interview',
  body: '# About\n\nWe talk for **45 minutes**.\n\n- You may stop.\n- Ask [us](mailto:research@example.org).',
  language: 'en',
  requiredStatements: [
    { id: 'read', text: 'I have read this.' },
    { id: 'voluntary', text: 'I take part voluntarily.' },
  ],
  optionalChoices: [{ id: 'recording', text: 'I agree to be recorded.' }],
};
const form = { name: 'Interview consent', ...content };

async function createForm(tenant: Tenant, body: object = form): Promise<Form> {
  const response = await call(service, 'POST', '/consent-forms', { token: tenant.token, body });
  expect(response.statusCode, response.body).toBe(201);
  return response.json<Form>();
}

async function publish(tenant: Tenant, consentFormId: string, body: object): Promise<Version> {
  const response = await call(service, 'POST', `/consent-forms/${consentFormId}/versions`, { token: tenant.token, body });
  expect(response.statusCode, response.body).toBe(201);
  return response.json<Version>();
}

async function list(tenant: Tenant, query: Record<string, string> = {}) {
  const response = await call(service, 'GET', '/consent-forms', { token: tenant.token, query });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<{ results: { consentFormId: string; name: string; currentVersion: Summary }[]; total: number; pageInfo: { hasNextPage: boolean; endCursor: string } }>();
}

/** The hash as the documentation defines it, written out independently of the service's code. */
const documentedHash = (c: typeof content) =>
  createHash('sha256')
    .update(
      `{"body":${JSON.stringify(c.body)},"language":${JSON.stringify(c.language)},"optionalChoices":${JSON.stringify(c.optionalChoices)},"requiredStatements":${JSON.stringify(c.requiredStatements)},"title":${JSON.stringify(c.title)}}`,
      'utf8',
    )
    .digest('hex');

describe('POST /consent-forms', () => {
  it('creates a form with version 1, its HTML and its hash; read back, listed and read by version', async () => {
    const tenant = await createTenant(service);
    const created = await createForm(tenant);
    const version: Version = {
      consentFormId: expect.stringMatching(/^cfm_[0-9A-HJKMNP-TV-Z]{26}$/) as unknown as string,
      version: 1,
      ...content,
      bodyHtml:
        '<h1>About</h1>\n<p>We talk for <strong>45 minutes</strong>.</p>\n<ul>\n<li>You may stop.</li>\n<li>Ask <a href="mailto:research@example.org" rel="noopener noreferrer">us</a>.</li>\n</ul>\n',
      contentSha256: documentedHash(content),
      createdAt: expect.any(String) as unknown as string,
      createdByUserId: tenant.userId,
    };
    expect(created).toEqual({
      consentFormId: version.consentFormId,
      name: 'Interview consent',
      currentVersion: version,
      versions: [{ version: 1, title: content.title, language: 'en', contentSha256: version.contentSha256, createdAt: created.createdAt, createdByUserId: tenant.userId }],
      createdAt: expect.any(String),
      updatedAt: created.createdAt,
      createdByUserId: tenant.userId,
    });
    const read = await call(service, 'GET', `/consent-forms/${created.consentFormId}`, { token: tenant.token });
    expect(read.statusCode, read.body).toBe(200);
    expect(read.json()).toEqual(created);
    const one = await call(service, 'GET', `/consent-forms/${created.consentFormId}/versions/1`, { token: tenant.token });
    expect(one.statusCode, one.body).toBe(200);
    expect(one.json()).toEqual(created.currentVersion);
    expect((await list(tenant)).results).toEqual([
      { consentFormId: created.consentFormId, name: 'Interview consent', currentVersion: created.versions[0], createdAt: created.createdAt, updatedAt: created.updatedAt },
    ]);
  });

  it('takes Arabic text, empty statement lists and a body at its limit, and keeps the text as written', async () => {
    const tenant = await createTenant(service);
    const arabic = { name: 'موافقة', title: 'الموافقة على المشاركة', body: `${'نص '.repeat(16_666)}نص`, language: 'ar', requiredStatements: [], optionalChoices: [] };
    expect(arabic.body).toHaveLength(50_000);
    const created = await createForm(tenant, arabic);
    expect(created.currentVersion).toMatchObject({ title: arabic.title, body: arabic.body, requiredStatements: [], optionalChoices: [], language: 'ar' });
    expect(created.currentVersion.contentSha256).toBe(documentedHash(arabic));
  });

  it('pages the list by id with the exact total, a cursor bound to its workspace', async () => {
    const tenant = await createTenant(service);
    const made = [];
    for (let index = 0; index < 3; index++) made.push((await createForm(tenant, { ...form, name: `Form ${index}` })).consentFormId);
    const first = await list(tenant, { size: '2' });
    expect(first.total).toBe(3);
    expect(first.pageInfo.hasNextPage).toBe(true);
    const second = await list(tenant, { size: '2', startCursor: first.pageInfo.endCursor });
    expect([...first.results, ...second.results].map((item) => item.consentFormId)).toEqual(made);
    expect(second.pageInfo.hasNextPage).toBe(false);
    const other = await createTenant(service, 'Other workspace');
    const foreign = await call(service, 'GET', '/consent-forms', { token: other.token, query: { startCursor: first.pageInfo.endCursor } });
    expect(foreign.statusCode).toBe(400);
    expect(foreign.json()).toMatchObject({ errors: [{ path: ['startCursor'] }] });
  });

  const long = (length: number) => 'x'.repeat(length);
  it.each([
    ['no name', { name: undefined }, ['name']],
    ['an empty name', { name: '' }, ['name']],
    ['a name too long', { name: long(201) }, ['name']],
    ['no title', { title: undefined }, ['title']],
    ['a title too long', { title: long(201) }, ['title']],
    ['no body', { body: undefined }, ['body']],
    ['an empty body', { body: '' }, ['body']],
    ['a body too long', { body: long(50_001) }, ['body']],
    ['a NUL in the body', { body: 'a\u0000b' }, ['body']],
    ['no language', { language: undefined }, ['language']],
    ['a language that is not a short code', { language: 'English' }, ['language']],
    ['no required statements', { requiredStatements: undefined }, ['requiredStatements']],
    ['a statement without text', { requiredStatements: [{ id: 'read' }] }, ['requiredStatements', '0', 'text']],
    ['a statement with empty text', { requiredStatements: [{ id: 'read', text: '' }] }, ['requiredStatements', '0', 'text']],
    ['a statement text too long', { requiredStatements: [{ id: 'read', text: long(1001) }] }, ['requiredStatements', '0', 'text']],
    ['a statement id with capitals', { requiredStatements: [{ id: 'Read', text: 'x' }] }, ['requiredStatements', '0', 'id']],
    ['a choice id too long', { optionalChoices: [{ id: long(65), text: 'x' }] }, ['optionalChoices', '0', 'id']],
    ['a choice with an unknown field', { optionalChoices: [{ id: 'rec', text: 'x', checked: true }] }, ['optionalChoices', '0', 'checked']],
    ['21 statements', { requiredStatements: Array.from({ length: 21 }, (_, index) => ({ id: `s${index}`, text: 'x' })) }, ['requiredStatements']],
    ['an id used twice among statements', { requiredStatements: [{ id: 'read', text: 'a' }, { id: 'read', text: 'b' }] }, ['requiredStatements', '1', 'id']],
    ['a choice with a statement\'s id', { optionalChoices: [{ id: 'voluntary', text: 'b' }] }, ['optionalChoices', '0', 'id']],
    ['an unknown field', { version: 3 }, ['version']],
  ])('refuses %s with 400 naming the field, creating nothing', async (_case, change, path) => {
    const tenant = await createTenant(service);
    const response = await call(service, 'POST', '/consent-forms', { token: tenant.token, body: { ...form, ...change } });
    expect(response.statusCode, response.body).toBe(400);
    expect(response.json<{ errors: { path: string[] }[] }>().errors[0]!.path).toEqual(path);
    expect((await list(tenant)).total).toBe(0);
  });
});

describe('POST /consent-forms/{consentFormId}/versions', () => {
  it('publishes version 2 as the current one; version 1 stays as it was', async () => {
    const tenant = await createTenant(service);
    const created = await createForm(tenant);
    const second = { ...content, title: 'Consent, revised', optionalChoices: [...content.optionalChoices, { id: 'quotes', text: 'You may quote me.' }] };
    const published = await publish(tenant, created.consentFormId, second);
    expect(published).toMatchObject({ consentFormId: created.consentFormId, version: 2, ...second, contentSha256: documentedHash(second), createdByUserId: tenant.userId });
    expect(published.contentSha256).not.toBe(created.currentVersion.contentSha256);
    const read = (await call(service, 'GET', `/consent-forms/${created.consentFormId}`, { token: tenant.token })).json<Form>();
    expect(read.currentVersion).toEqual(published);
    expect(read.versions.map((version) => version.version)).toEqual([2, 1]);
    expect(read.updatedAt).toBe(published.createdAt);
    expect((await call(service, 'GET', `/consent-forms/${created.consentFormId}/versions/1`, { token: tenant.token })).json()).toEqual(created.currentVersion);
    expect((await list(tenant)).results[0]!.currentVersion.version).toBe(2);
    // The same content again is a new version with the same hash: the hash is of the content alone.
    expect((await publish(tenant, created.consentFormId, content)).contentSha256).toBe(created.currentVersion.contentSha256);
  });

  it('numbers concurrent publishes of one form 2…n, each once', async () => {
    const tenant = await createTenant(service);
    const created = await createForm(tenant);
    const versions = await Promise.all(Array.from({ length: 6 }, (_, index) => publish(tenant, created.consentFormId, { ...content, title: `Take ${index}` })));
    expect(versions.map((version) => version.version).sort((a, b) => a - b)).toEqual([2, 3, 4, 5, 6, 7]);
    const read = (await call(service, 'GET', `/consent-forms/${created.consentFormId}`, { token: tenant.token })).json<Form>();
    expect(read.currentVersion.version).toBe(7);
    expect(read.versions).toHaveLength(7);
  });

  it('has no route that changes a version, and the database refuses an update of one', async () => {
    const tenant = await createTenant(service);
    const created = await createForm(tenant);
    for (const method of ['PUT', 'PATCH', 'DELETE'] as const) {
      for (const url of ['/v1/consent-forms/:consentFormId/versions/:version', '/v1/consent-forms/:consentFormId']) expect(service.app.hasRoute({ method, url }), `${method} ${url}`).toBe(false);
      const response = await call(service, method, `/consent-forms/${created.consentFormId}/versions/1`, { token: tenant.token });
      expect(response.statusCode, method).toBe(404);
    }
    expect(service.app.hasRoute({ method: 'GET', url: '/v1/consent-forms/:consentFormId/versions/:version' })).toBe(true);
    await expect(
      sql`update consent_form_versions set title = 'changed' where workspace_id = ${tenant.workspaceId} and consent_form_id = ${created.consentFormId}`.execute(service.deps.db),
    ).rejects.toThrow(/immutable/);
    expect((await call(service, 'GET', `/consent-forms/${created.consentFormId}/versions/1`, { token: tenant.token })).json()).toEqual(created.currentVersion);
  });

  it('refuses invalid content with 400 naming the field, publishing nothing', async () => {
    const tenant = await createTenant(service);
    const created = await createForm(tenant);
    for (const [change, path] of [
      [{ body: '' }, ['body']],
      [{ language: 'e' }, ['language']],
      [{ name: 'A name is the form\'s, not a version\'s' }, ['name']],
      [{ optionalChoices: [{ id: 'read', text: 'dup' }] }, ['optionalChoices', '0', 'id']],
    ] as const) {
      const response = await call(service, 'POST', `/consent-forms/${created.consentFormId}/versions`, { token: tenant.token, body: { ...content, ...change } });
      expect(response.statusCode, response.body).toBe(400);
      expect(response.json<{ errors: { path: string[] }[] }>().errors[0]!.path).toEqual(path);
    }
    const read = (await call(service, 'GET', `/consent-forms/${created.consentFormId}`, { token: tenant.token })).json<Form>();
    expect(read.versions).toHaveLength(1);
  });

  it('answers 404 for an unknown form, and for another workspace\'s, naming consentFormId', async () => {
    const tenant = await createTenant(service);
    const other = await createTenant(service, 'Other workspace');
    const theirs = await createForm(other);
    for (const consentFormId of ['cfm_01JD0000000000000000000000', theirs.consentFormId]) {
      const response = await call(service, 'POST', `/consent-forms/${consentFormId}/versions`, { token: tenant.token, body: content });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({ errors: [{ message: 'Consent form not found', path: ['consentFormId'] }] });
    }
    expect((await call(service, 'GET', `/consent-forms/${theirs.consentFormId}`, { token: other.token })).json<Form>().versions).toHaveLength(1);
  });
});

describe('GET /consent-forms/{consentFormId}/versions/{version}', () => {
  it('answers 404 naming version for a version the form does not have, and 400 for one that is not a whole number from 1', async () => {
    const tenant = await createTenant(service);
    const created = await createForm(tenant);
    const missing = await call(service, 'GET', `/consent-forms/${created.consentFormId}/versions/2`, { token: tenant.token });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toEqual({ errors: [{ message: 'Consent form version not found', path: ['version'] }] });
    for (const version of ['0', 'one', '1.5']) {
      const response = await call(service, 'GET', `/consent-forms/${created.consentFormId}/versions/${version}`, { token: tenant.token });
      expect(response.statusCode, version).toBe(400);
      expect(response.json<{ errors: { path: string[] }[] }>().errors[0]!.path).toEqual(['version']);
    }
    const unknown = await call(service, 'GET', '/consent-forms/cfm_01JD0000000000000000000000/versions/1', { token: tenant.token });
    expect(unknown.json()).toEqual({ errors: [{ message: 'Consent form not found', path: ['consentFormId'] }] });
  });
});

describe("a study's consentFormId and consent forms", () => {
  it('serves the current version when the id names a form of the workspace; a free name, or another workspace\'s form, serves nothing and stays valid', async () => {
    const tenant = await createTenant(service);
    const other = await createTenant(service, 'Other workspace');
    const created = await createForm(tenant);
    const theirs = await createForm(other);
    await publish(tenant, created.consentFormId, { ...content, title: 'Second' });
    // Free names are still accepted on studies, as before this resource.
    await createStudy(service, tenant, { studyType: 'INTERVIEWS', studyPlan: { consentFormId: 'consent-2026-v2' } });
    await createStudy(service, tenant, { studyType: 'INTERVIEWS', studyPlan: { consentFormId: created.consentFormId } });
    const db = service.deps.db;
    expect(await findServableConsentForm(db, tenant.workspaceId, created.consentFormId)).toMatchObject({ version: 2, title: 'Second' });
    expect(await findServableConsentForm(db, tenant.workspaceId, 'consent-2026-v2')).toBeUndefined();
    expect(await findServableConsentForm(db, tenant.workspaceId, theirs.consentFormId)).toBeUndefined();
    expect(await findServableConsentForm(db, tenant.workspaceId, null)).toBeUndefined();
  });
});

describeSecurity('POST /consent-forms', () => service, {
  method: 'POST',
  right: 'consent-forms:write',
  addressesResource: false,
  request: async () => ({ url: '/consent-forms', body: form }),
});

describeSecurity('GET /consent-forms', () => service, {
  method: 'GET',
  right: 'consent-forms:read',
  addressesResource: false,
  request: async () => ({ url: '/consent-forms' }),
});

describeSecurity('GET /consent-forms/{consentFormId}', () => service, {
  method: 'GET',
  right: 'consent-forms:read',
  addressesResource: true,
  request: async (tenant) => ({ url: `/consent-forms/${(await createForm(tenant)).consentFormId}` }),
});

describeSecurity('POST /consent-forms/{consentFormId}/versions', () => service, {
  method: 'POST',
  right: 'consent-forms:write',
  addressesResource: true,
  request: async (tenant) => ({ url: `/consent-forms/${(await createForm(tenant)).consentFormId}/versions`, body: content }),
});

describeSecurity('GET /consent-forms/{consentFormId}/versions/{version}', () => service, {
  method: 'GET',
  right: 'consent-forms:read',
  addressesResource: true,
  request: async (tenant) => ({ url: `/consent-forms/${(await createForm(tenant)).consentFormId}/versions/1` }),
});

describe('rights', () => {
  it('lets every role read consent forms, and the roles that write studies write them', async () => {
    const { rolesWithRight } = await import('../../http/rights.js');
    // Every built-in role; a CUSTOM user holds what their custom role holds (docs/api/users.md).
    expect(rolesWithRight('consent-forms:read')).toEqual(['SUPER_ADMIN', 'OPS_MANAGER', 'RESEARCHER', 'DEVELOPER', 'COLLABORATOR', 'OBSERVER']);
    expect(rolesWithRight('consent-forms:write')).toEqual(rolesWithRight('studies:write'));
    expect(rolesWithRight('consent-forms:write')).toEqual(['SUPER_ADMIN', 'OPS_MANAGER', 'RESEARCHER', 'DEVELOPER', 'COLLABORATOR']);
  });
});
