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

  it("opens each workspace's link on connections that served another workspace last: each page its own study", async () => {
    // The link is looked up in whatever scope the connection is (participant_link_by_digest), then
    // the page is read in the link's workspace: turns between two workspaces must not mix them.
    const [first, second] = [await createTenant(service), await createTenant(service)];
    const a = await participantWithLink(first, { studyPlan: { externalName: 'Coffee at home' } });
    const b = await participantWithLink(second, { studyPlan: { externalName: 'Cycling to work' } });
    for (let round = 0; round < 3; round++) {
      const [pageA, pageB] = [await open(a.path), await open(b.path)];
      expect(pageA.statusCode).toBe(200);
      expect(pageB.statusCode).toBe(200);
      expect(pageA.body).toContain('Coffee at home');
      expect(pageA.body).not.toContain('Cycling to work');
      expect(pageB.body).toContain('Cycling to work');
      expect(pageB.body).not.toContain('Coffee at home');
    }
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

/** A launched study with the guide's screener (a mapped choice, a number with ranges shown only to shoppers), one participant and a link. */
async function shopperWithLink(tenant: Tenant, qualifyByDefault = false) {
  const property = (
    await call(service, 'POST', '/properties/import', { token: tenant.token, body: [{ name: `Shopping frequency ${Date.now()}`, propertyType: 'SINGLE_SELECT', propertyOptions: [{ name: 'Weekly' }, { name: 'Monthly' }, { name: 'Never' }] }] })
  ).json<{ results: { personProperty: { propertyId: string } }[] }>().results[0]!.personProperty.propertyId;
  const studyId = await createStudy(service, tenant, { studyType: 'INTERVIEWS', studyPlan: { externalName: 'Checkout interviews' } });
  const screener = await call(service, 'PUT', `/studies/${studyId}/screener`, {
    token: tenant.token,
    body: {
      qualifyByDefault,
      questions: [
        { key: 'freq', name: 'How often do you shop online?', type: 'SINGLE_SELECT', isRequired: true, mappedToPropertyId: property, choices: [{ id: 'weekly', label: 'weekly' }, { id: 'monthly', label: 'Monthly' }, { id: 'never', label: 'Never', rule: 'DISQUALIFIES' }] },
        { key: 'orders', name: 'How many orders did you place last month?', type: 'NUMBER', minimum: 0, integer: true, isRequired: true, ranges: [{ max: 0, rule: 'DISQUALIFIES' }, { min: 10, rule: 'QUALIFIES' }], showWhen: { questionKey: 'freq', choiceIds: ['weekly', 'monthly'] } },
        { key: 'why', name: 'Anything else?', type: 'LONG_FORM', isRequired: false },
      ],
    },
  });
  expect(screener.statusCode, screener.body).toBe(200);
  expect((await call(service, 'POST', `/studies/${studyId}/launch`, { token: tenant.token })).statusCode).toBe(200);
  const person = await createPerson(service, tenant);
  const [participant] = await addParticipants(service, tenant, studyId, [person.personId]);
  const link = (await call(service, 'POST', `/studies/${studyId}/participants/${participant!.participantId}/links`, { token: tenant.token, body: { purpose: 'SCREENER' } })).json<{ url: string; linkId: string }>();
  const path = new URL(link.url).pathname;
  const page = await open(path);
  const field = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(page.body)![1]!;
  const questionIds = [...page.body.matchAll(/name="q_([^"]+)"/g)].map((match) => match[1]!).filter((id, index, all) => all.indexOf(id) === index);
  return { studyId, property, person, participantId: participant!.participantId, path, formToken: field('formToken'), startedAt: field('startedAt'), questionIds, linkId: link.linkId };
}

function post(path: string, fields: [string, string][], headers: Record<string, string> = {}) {
  return service.app.inject({ method: 'POST', url: path, headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin', ...headers }, payload: new URLSearchParams(fields).toString() });
}

describe('POST /p/{token}: the screener sent', () => {
  it('qualifies by the rules in one transaction: states with events and webhooks, answers kept, the mapped answer written to the person, the time to complete', async () => {
    const tenant = await createTenant(service);
    const world = await shopperWithLink(tenant);
    const [freq, orders] = world.questionIds;
    const sent = await post(world.path, [['formToken', world.formToken], ['startedAt', world.startedAt], ['website', ''], [`q_${freq}`, 'weekly'], [`q_${orders}`, '12']]);
    expect(sent.statusCode, sent.body).toBe(200);
    expect(sent.body).toContain('Thank you');
    const participant = (await call(service, 'GET', `/studies/${world.studyId}/participants/${world.participantId}`, { token: tenant.token })).json<{ screenerState: string; screenerResponseDate: string | null }>();
    expect(participant.screenerState).toBe('QUALIFIED');
    expect(participant.screenerResponseDate).not.toBeNull();
    const events = await service.deps.db.selectFrom('participant_status_events').select(['field', 'from_value', 'to_value', 'user_id']).where('participant_id', '=', world.participantId).orderBy('event_id').execute();
    expect(events).toEqual([
      { field: 'screenerState', from_value: 'NOT_SENT', to_value: 'SUBMITTED', user_id: null },
      { field: 'screenerState', from_value: 'SUBMITTED', to_value: 'QUALIFIED', user_id: null },
    ]);
    const webhooks = await service.deps.db.selectFrom('webhook_messages').select(['event_type']).where('workspace_id', '=', tenant.workspaceId).execute();
    expect(webhooks.filter((row) => row.event_type === 'participant.screener_changed')).toHaveLength(2);
    const response = await service.deps.db.selectFrom('screener_responses').selectAll().where('participant_id', '=', world.participantId).executeTakeFirstOrThrow();
    expect(response).toMatchObject({ outcome: 'QUALIFIED', suspected_bot: false, revision: 1, link_id: world.linkId });
    expect(response.decided_by).toMatchObject({ kind: 'RANGE', rule: 'QUALIFIES' });
    expect(response.seconds_to_complete).toBeGreaterThanOrEqual(0);
    const answers = await service.deps.db.selectFrom('screener_answers').select(['question_id', 'value']).where('participant_id', '=', world.participantId).orderBy('question_id').execute();
    expect(answers.map((answer) => answer.value).sort()).toEqual([12, 'weekly'].sort());
    const person = (await call(service, 'GET', `/people/${world.person.personId}`, { token: tenant.token })).json<{ properties: Record<string, unknown> }>();
    // The choice's label "weekly" is written as the property's option, "Weekly".
    expect(person.properties[world.property]).toBe('Weekly');
  });

  it('disqualifies without saying why, and a later visit or post says it was answered and changes nothing', async () => {
    const tenant = await createTenant(service);
    const world = await shopperWithLink(tenant);
    const [freq, orders] = world.questionIds;
    // "never" hides the orders question: the number posted for it is dropped, not refused.
    const sent = await post(world.path, [['formToken', world.formToken], ['startedAt', world.startedAt], [`q_${freq}`, 'never'], [`q_${orders}`, 'lots']]);
    expect(sent.statusCode).toBe(200);
    expect(sent.body).toContain('This study is not the right fit this time');
    expect(sent.body).not.toMatch(/never|disqualif/i);
    expect((await service.deps.db.selectFrom('participants').select('screener_state').where('participant_id', '=', world.participantId).executeTakeFirstOrThrow()).screener_state).toBe('DISQUALIFIED');
    const again = await post(world.path, [['formToken', world.formToken], ['startedAt', world.startedAt], [`q_${freq}`, 'weekly'], [`q_${orders}`, '12']]);
    expect(again.body).toContain('You have already answered');
    expect((await open(world.path)).body).toContain('You have already answered');
    expect((await service.deps.db.selectFrom('participants').select('screener_state').where('participant_id', '=', world.participantId).executeTakeFirstOrThrow()).screener_state).toBe('DISQUALIFIED');
    expect(await service.deps.db.selectFrom('screener_answers').select('value').where('participant_id', '=', world.participantId).execute()).toEqual([{ value: 'never' }]);
  });

  it('sends the page back with each error beside its field and linked from a summary, in the study\'s language, keeping what was typed; nothing is written', async () => {
    const tenant = await createTenant(service);
    const world = await shopperWithLink(tenant);
    const [freq, orders, why] = world.questionIds;
    const cases: [string, [string, string][], RegExp][] = [
      ['nothing answered', [], /Answer this question/],
      ['not a number', [[`q_${freq}`, 'weekly'], [`q_${orders}`, 'twelve']], /Enter a number, like 12/],
      ['a fraction', [[`q_${freq}`, 'weekly'], [`q_${orders}`, '1.5']], /Enter a whole number/],
      ['below the minimum', [[`q_${freq}`, 'weekly'], [`q_${orders}`, '-1']], /Enter a number of 0 or more/],
      ['an unknown choice', [[`q_${freq}`, 'daily']], /Choose one of the options shown/],
      ['too long', [[`q_${freq}`, 'never'], [`q_${why}`, 'x'.repeat(5001)]], /Write at most 5,000 characters/],
    ];
    for (const [name, fields, message] of cases) {
      const sent = await post(world.path, [['formToken', world.formToken], ['startedAt', world.startedAt], ...fields]);
      expect(sent.statusCode, name).toBe(400);
      expect(sent.body, name).toMatch(message);
      expect(sent.body, name).toContain('<div class="error-summary" role="alert"');
      const target = /<div class="error-summary"[\s\S]*?<a href="#([^"]+)"/.exec(sent.body)![1]!;
      expect(sent.body, name).toContain(`id="${target}"`);
      for (const [field, value] of fields) if (field !== `q_${freq}` && value.length < 100) expect(sent.body, name).toContain(`value="${value}"`);
      if (fields[0]?.[1] === 'weekly') expect(sent.body, name).toMatch(/value="weekly" checked/);
    }
    expect((await service.deps.db.selectFrom('participants').select('screener_state').where('participant_id', '=', world.participantId).executeTakeFirstOrThrow()).screener_state).toBe('NOT_SENT');
    expect(await service.deps.db.selectFrom('screener_answers').select('value').where('participant_id', '=', world.participantId).execute()).toEqual([]);
    await call(service, 'PATCH', `/studies/${world.studyId}`, { token: tenant.token, body: { studyPlan: { language: 'fr' } } });
    const french = await post(world.path, [['formToken', world.formToken], ['startedAt', world.startedAt]]);
    expect(french.body).toContain('Répondez à cette question.');
    expect(french.body).toContain('<html lang="fr"');
  });

  it('refuses a post without the form token, with an altered one or another time, or from another site: nothing is written', async () => {
    const tenant = await createTenant(service);
    const world = await shopperWithLink(tenant);
    const [freq, orders] = world.questionIds;
    const answers: [string, string][] = [[`q_${freq}`, 'weekly'], [`q_${orders}`, '12']];
    const altered = world.formToken.slice(0, -1) + (world.formToken.endsWith('A') ? 'B' : 'A');
    for (const [name, fields, headers] of [
      ['no token', [['startedAt', world.startedAt], ...answers], {}],
      ['altered token', [['formToken', altered], ['startedAt', world.startedAt], ...answers], {}],
      ['another start time', [['formToken', world.formToken], ['startedAt', String(Number(world.startedAt) - 60_000)], ...answers], {}],
      ['cross-site', [['formToken', world.formToken], ['startedAt', world.startedAt], ...answers], { 'sec-fetch-site': 'cross-site' }],
      ['another origin', [['formToken', world.formToken], ['startedAt', world.startedAt], ...answers], { 'sec-fetch-site': '', origin: 'https://evil.example' }],
    ] as [string, [string, string][], Record<string, string>][]) {
      const requestHeaders = { ...headers };
      if (requestHeaders['sec-fetch-site'] === '') delete requestHeaders['sec-fetch-site'];
      const sent = await service.app.inject({
        method: 'POST',
        url: world.path,
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...(name === 'another origin' ? {} : { 'sec-fetch-site': 'same-origin' }), ...requestHeaders },
        payload: new URLSearchParams(fields).toString(),
      });
      expect(sent.statusCode, name).toBe(403);
      expect(sent.body, name).toContain('Your answers were not sent');
    }
    expect((await service.deps.db.selectFrom('participants').select('screener_state').where('participant_id', '=', world.participantId).executeTakeFirstOrThrow()).screener_state).toBe('NOT_SENT');
  });

  it("keeps a filled honeypot's submission for review, whatever the rules say", async () => {
    const tenant = await createTenant(service);
    const world = await shopperWithLink(tenant);
    const [freq, orders] = world.questionIds;
    const sent = await post(world.path, [['formToken', world.formToken], ['startedAt', world.startedAt], ['website', 'http://spam.example'], [`q_${freq}`, 'weekly'], [`q_${orders}`, '12']]);
    expect(sent.statusCode).toBe(200);
    expect(sent.body).toContain('Thank you');
    expect((await service.deps.db.selectFrom('participants').select('screener_state').where('participant_id', '=', world.participantId).executeTakeFirstOrThrow()).screener_state).toBe('SUBMITTED');
    expect(await service.deps.db.selectFrom('screener_responses').select(['outcome', 'suspected_bot']).where('participant_id', '=', world.participantId).executeTakeFirstOrThrow()).toEqual({ outcome: 'NEEDS_REVIEW', suspected_bot: true });
  });

  it('records one submission when many are sent at once', async () => {
    const tenant = await createTenant(service);
    const world = await shopperWithLink(tenant, true);
    const [freq, orders] = world.questionIds;
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, index) => post(world.path, [['formToken', world.formToken], ['startedAt', world.startedAt], [`q_${freq}`, index % 2 ? 'weekly' : 'monthly'], [`q_${orders}`, String(index + 1)]])),
    );
    expect(results.map((result) => result.statusCode)).toEqual(Array(12).fill(200));
    expect(results.filter((result) => result.body.includes('Thank you'))).toHaveLength(1);
    expect(await service.deps.db.selectFrom('screener_responses').select('participant_id').where('participant_id', '=', world.participantId).execute()).toHaveLength(1);
    expect(await service.deps.db.selectFrom('screener_answers').select('value').where('participant_id', '=', world.participantId).execute()).toHaveLength(2);
    const events = await service.deps.db.selectFrom('participant_status_events').select('to_value').where('participant_id', '=', world.participantId).execute();
    expect(events.map((event) => event.to_value).sort()).toEqual(['QUALIFIED', 'SUBMITTED']);
  });
});
