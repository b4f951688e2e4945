import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { linkTokenDigest } from '../families/participant-links/tokens.js';
import { call, createTenant, startTestService, type Tenant, type TestService } from '../../test/harness.js';
import { createPerson } from '../../test/people-factory.js';
import { addParticipants, createStudy } from '../../test/participants-factory.js';
import { describeSecurity } from '../../test/security.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService({ publicUrl: 'https://recruit.example.test' });
});
afterAll(async () => service.stop());

/** A study with a screener (launched unless told), one participant, and a SCREENER link of theirs. */
async function participantWithLink(tenant: Tenant, options: { launch?: boolean; studyPlan?: Record<string, unknown> } = {}) {
  const studyId = await createStudy(service, tenant, { studyType: 'INTERVIEWS', screener: true, launch: options.launch ?? true, studyPlan: { externalName: 'Shopping habits', ...options.studyPlan } });
  const person = await createPerson(service, tenant);
  const [participant] = await addParticipants(service, tenant, studyId, [person.personId]);
  const response = await call(service, 'POST', `/studies/${studyId}/participants/${participant!.participantId}/links`, { token: tenant.token, body: { purpose: 'SCREENER' } });
  expect(response.statusCode, response.body).toBe(201);
  const link = response.json<{ linkId: string; url: string; purpose: string; expiresAt: string | null }>();
  return { studyId, person, participant: participant!, link, path: new URL(link.url).pathname };
}

const open = (path: string, headers: Record<string, string> = {}) => service.app.inject({ method: 'GET', url: path, headers });

describe('POST /studies/{studyId}/participants/{participantId}/links', () => {
  it("makes a link to the participant's screener: a 256-bit token under PUBLIC_URL, kept only as its SHA-256", async () => {
    const tenant = await createTenant(service);
    const { link, participant } = await participantWithLink(tenant);
    expect(link).toMatchObject({ linkId: expect.stringMatching(/^lnk_/), purpose: 'SCREENER', url: expect.stringMatching(/^https:\/\/recruit\.example\.test\/p\/[A-Za-z0-9_-]{43}$/) });
    expect(Date.parse(link.expiresAt!) - Date.now()).toBeGreaterThan(89 * 86_400_000);
    const token = link.url.split('/p/')[1]!;
    const rows = await service.deps.db.selectFrom('participant_links').selectAll().where('link_id', '=', link.linkId).execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ participant_id: participant.participantId, purpose: 'SCREENER', created_by_user_id: tenant.userId });
    expect(Buffer.from(rows[0]!.token_sha256).equals(linkTokenDigest(token))).toBe(true);
    // The token is nowhere in the row: not as text, not as bytes.
    expect(JSON.stringify(rows[0])).not.toContain(token);
  });

  it('makes a new link each time; the earlier ones still open the page', async () => {
    const tenant = await createTenant(service);
    const { studyId, participant, path } = await participantWithLink(tenant);
    const again = await call(service, 'POST', `/studies/${studyId}/participants/${participant.participantId}/links`, { token: tenant.token, body: { purpose: 'SCREENER' } });
    expect(again.statusCode).toBe(201);
    expect(new URL(again.json<{ url: string }>().url).pathname).not.toBe(path);
    expect((await open(path)).statusCode).toBe(200);
    expect((await open(new URL(again.json<{ url: string }>().url).pathname)).statusCode).toBe(200);
  });

  it('refuses an unknown purpose naming the allowed values, and nothing is made', async () => {
    const tenant = await createTenant(service);
    const { studyId, participant } = await participantWithLink(tenant);
    const before = await service.deps.db.selectFrom('participant_links').select(({ fn }) => fn.countAll<number>().as('n')).where('workspace_id', '=', tenant.workspaceId).executeTakeFirstOrThrow();
    for (const body of [{ purpose: 'ADMIN' }, {}, { purpose: 'SCREENER', extra: 1 }]) {
      const response = await call(service, 'POST', `/studies/${studyId}/participants/${participant.participantId}/links`, { token: tenant.token, body });
      expect(response.statusCode, JSON.stringify(body)).toBe(400);
      expect(JSON.stringify(response.json())).toMatch(/purpose|extra/);
    }
    const wrong = await call(service, 'POST', `/studies/${studyId}/participants/${participant.participantId}/links`, { token: tenant.token, body: { purpose: 'ADMIN' } });
    expect(JSON.stringify(wrong.json())).toContain('SCREENER');
    const after = await service.deps.db.selectFrom('participant_links').select(({ fn }) => fn.countAll<number>().as('n')).where('workspace_id', '=', tenant.workspaceId).executeTakeFirstOrThrow();
    expect(Number(after.n)).toBe(Number(before.n));
  });

  it('answers 404 naming the study or the participant', async () => {
    const tenant = await createTenant(service);
    const { studyId, participant } = await participantWithLink(tenant);
    const otherStudy = await createStudy(service, tenant, { studyType: 'INTERVIEWS' });
    const unknownStudy = await call(service, 'POST', `/studies/stu_unknown/participants/${participant.participantId}/links`, { token: tenant.token, body: { purpose: 'SCREENER' } });
    expect(unknownStudy.statusCode).toBe(404);
    expect(unknownStudy.json()).toEqual({ errors: [{ message: 'Study not found', path: ['studyId'] }] });
    for (const url of [`/studies/${otherStudy}/participants/${participant.participantId}/links`, `/studies/${studyId}/participants/ptc_unknown/links`]) {
      const response = await call(service, 'POST', url, { token: tenant.token, body: { purpose: 'SCREENER' } });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({ errors: [{ message: 'Participant not found', path: ['participantId'] }] });
    }
  });
});

describeSecurity('POST /studies/{studyId}/participants/{participantId}/links', () => service, {
  method: 'POST',
  right: 'participants:write',
  addressesResource: true,
  request: async (tenant) => {
    const studyId = await createStudy(service, tenant, { studyType: 'INTERVIEWS' });
    const person = await createPerson(service, tenant);
    const [participant] = await addParticipants(service, tenant, studyId, [person.personId]);
    return { url: `/studies/${studyId}/participants/${participant!.participantId}/links`, body: { purpose: 'SCREENER' } };
  },
});

describe('GET /p/{token}: the screener page', () => {
  it("shows the study's questions, each labelled by its text, in a form that posts to the page itself with its anti-forgery field", async () => {
    const tenant = await createTenant(service);
    const { path } = await participantWithLink(tenant);
    const page = await open(path);
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.body).toMatch(/^<!doctype html>\n<html lang="en" dir="ltr">/);
    expect(page.body).toContain('<title>Shopping habits: a few questions – Test workspace</title>');
    expect(page.body).toMatch(/<label for="q-([^"]+)">How often do you shop online\?<\/label>/);
    const control = /<label for="(q-[^"]+)">/.exec(page.body)![1]!;
    expect(page.body).toContain(`id="${control}"`);
    expect(page.body).toContain(`<form method="post" action="${path}"`);
    expect(page.body).toMatch(/<input type="hidden" name="formToken" value="[A-Za-z0-9_-]{43}"/);
  });

  it('is sent with a strict Content-Security-Policy, no referrer, no cookie, not cached; its stylesheet from the same origin, cached for good', async () => {
    const tenant = await createTenant(service);
    const { path } = await participantWithLink(tenant);
    const page = await open(path);
    expect(page.headers['content-security-policy']).toBe("default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'");
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.headers['set-cookie']).toBeUndefined();
    expect(page.headers['x-frame-options']).toBe('DENY');
    expect(page.body).not.toMatch(/<script|style=|https?:\/\/(?!recruit\.example\.test)/);
    const stylesheet = /<link rel="stylesheet" href="([^"]+)"/.exec(page.body)![1]!;
    expect(stylesheet).toMatch(/^\/p\/assets\/participant-[0-9a-f]{16}\.css$/);
    const css = await open(stylesheet);
    expect(css.statusCode).toBe(200);
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(css.headers['cache-control']).toBe('public, max-age=31536000, immutable');
  });

  it("speaks the study's language, else the browser's when shipped, else English; Arabic right to left", async () => {
    const tenant = await createTenant(service);
    const german = await participantWithLink(tenant, { studyPlan: { language: 'de' } });
    expect((await open(german.path, { 'accept-language': 'fr' })).body).toContain('<html lang="de" dir="ltr">');
    expect((await open(german.path)).body).toContain('Antworten senden');
    const arabic = await participantWithLink(tenant, { studyPlan: { language: 'ar' } });
    expect((await open(arabic.path)).body).toContain('<html lang="ar" dir="rtl">');
    const unset = await participantWithLink(tenant);
    expect((await open(unset.path, { 'accept-language': 'es-MX,es;q=0.9,en;q=0.5' })).body).toContain('<html lang="es" dir="ltr">');
    expect((await open(unset.path, { 'accept-language': 'ja' })).body).toContain('<html lang="en" dir="ltr">');
    const unshipped = await participantWithLink(tenant, { studyPlan: { language: 'pt' } });
    expect((await open(unshipped.path, { 'accept-language': 'fr-CA' })).body).toContain('<html lang="fr" dir="ltr">');
  });

  it('answers a forged, altered, truncated or otherwise spelled token with the same plain 404 page, and names nobody', async () => {
    const tenant = await createTenant(service);
    const { path, person } = await participantWithLink(tenant);
    const token = path.slice('/p/'.length);
    const flip = (text: string, at: number) => text.slice(0, at) + (text[at] === 'A' ? 'B' : 'A') + text.slice(at + 1);
    // The last character carries 4 bits of the token and 2 spare bits: setting a spare bit spells the same bytes another way.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const spare = token.slice(0, -1) + alphabet[alphabet.indexOf(token[42]!) ^ 1];
    expect(Buffer.from(spare, 'base64url').equals(Buffer.from(token, 'base64url'))).toBe(true);
    const percentEncoded = `%${token.charCodeAt(0).toString(16).toUpperCase()}${token.slice(1)}`;
    for (const forged of [flip(token, 0), flip(token, 20), token.slice(0, -1), `${token}A`, 'A'.repeat(43), spare, percentEncoded, '..%2F..%2Fv1%2Fme']) {
      const page = await open(`/p/${forged}`);
      expect(page.statusCode, forged).toBe(404);
      expect(page.body).toContain('This link does not work');
      expect(page.body).not.toContain(person.email);
      expect(page.body).not.toContain('Test workspace');
      expect(page.headers['content-security-policy']).toContain("default-src 'none'");
    }
  });

  it('says plainly, with no form, when the study is paused, closed or not launched, or the person opted out', async () => {
    const tenant = await createTenant(service);
    const draft = await participantWithLink(tenant, { launch: false });
    const paused = await participantWithLink(tenant);
    const closed = await participantWithLink(tenant);
    const optedOut = await participantWithLink(tenant);
    expect((await call(service, 'POST', `/studies/${paused.studyId}/status`, { token: tenant.token, body: { status: 'PAUSED' } })).statusCode).toBe(200);
    expect((await call(service, 'POST', `/studies/${closed.studyId}/status`, { token: tenant.token, body: { status: 'CLOSED' } })).statusCode).toBe(200);
    expect((await call(service, 'PUT', `/people/${optedOut.person.personId}/opted-out`, { token: tenant.token, body: { isOptedOut: true } })).statusCode).toBe(200);
    for (const [world, text] of [
      [draft, 'This study is paused'],
      [paused, 'This study is paused'],
      [closed, 'This study has closed'],
      [optedOut, 'You will not be contacted'],
    ] as const) {
      const page = await open(world.path);
      expect(page.statusCode).toBe(200);
      expect(page.body).toContain(text);
      expect(page.body).not.toContain('<form');
    }
  });

  it('answers an expired link with 410, and a deleted person\'s link as unknown', async () => {
    const tenant = await createTenant(service);
    const expired = await participantWithLink(tenant);
    await service.deps.db.updateTable('participant_links').set({ expires_at: new Date(Date.now() - 1000).toISOString() }).where('link_id', '=', expired.link.linkId).execute();
    const page = await open(expired.path);
    expect(page.statusCode).toBe(410);
    expect(page.body).toContain('This link has expired');
    const deleted = await participantWithLink(tenant);
    expect((await call(service, 'DELETE', `/people/${deleted.person.personId}`, { token: tenant.token })).statusCode).toBeLessThan(300);
    expect((await open(deleted.path)).statusCode).toBe(404);
    expect(await service.deps.db.selectFrom('participant_links').select('link_id').where('link_id', '=', deleted.link.linkId).execute()).toEqual([]);
  });
});

describe('the pages\' rate limits', () => {
  it('refuse past the budget per link and per address with a 429 page and Retry-After; other links and addresses are served', async () => {
    const limited = await startTestService({ participantRateLimitMax: 6, participantLinkRateLimitMax: 3 }, { rateLimitKeyPrefix: `pages-${Date.now()}` });
    try {
      const tenant = await createTenant(limited);
      const make = async () => {
        const studyId = await createStudy(limited, tenant, { studyType: 'INTERVIEWS', screener: true, launch: true });
        const person = await createPerson(limited, tenant);
        const [participant] = await addParticipants(limited, tenant, studyId, [person.personId]);
        const response = await call(limited, 'POST', `/studies/${studyId}/participants/${participant!.participantId}/links`, { token: tenant.token, body: { purpose: 'SCREENER' } });
        return new URL(response.json<{ url: string }>().url).pathname;
      };
      const [first, second] = [await make(), await make()];
      const get = (path: string, address: string) => limited.app.inject({ method: 'GET', url: path, remoteAddress: address });
      for (let index = 0; index < 3; index++) expect((await get(first, '192.0.2.1')).statusCode).toBe(200);
      const refused = await get(first, '192.0.2.2');
      expect(refused.statusCode).toBe(429);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect(refused.body).toContain('Too many requests');
      for (let index = 0; index < 3; index++) expect((await get(second, '192.0.2.1')).statusCode).toBe(200);
      // The address has spent its 6: even a link with budget left is refused to it, not to another address.
      expect((await get(second, '192.0.2.1')).statusCode).toBe(429);
      expect((await get(`/p/${'A'.repeat(43)}`, '192.0.2.1')).statusCode).toBe(429);
      expect((await get(`/p/${'A'.repeat(43)}`, '192.0.2.3')).statusCode).toBe(404);
    } finally {
      await limited.stop();
    }
  });
});
