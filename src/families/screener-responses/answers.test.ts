import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type Tenant, type TestService } from '../../../test/harness.js';
import { createPerson, createProperties } from '../../../test/people-factory.js';
import { addParticipants, createStudy } from '../../../test/participants-factory.js';
import { describeSecurity } from '../../../test/security.js';
import { submitScreener } from './service.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService({ publicUrl: 'https://recruit.example.test' });
});
afterAll(async () => service.stop());

interface Answer {
  questionId: string;
  questionKey: string;
  revision: number;
  text: string;
  type: string;
  choices: { id: string; label: string }[] | null;
  value: unknown;
  choiceLabels: string[] | null;
  masked: boolean;
}
interface Response {
  participantId: string;
  personId: string;
  outcome: string;
  decidedBy: { kind: string };
  suspectedBot: boolean;
  startedAt: string | null;
  submittedAt: string;
  secondsToComplete: number | null;
  revision: number;
  answers: Answer[];
}

const screenerBody = (secret: string, freqText = 'How often do you shop online?') => ({
  qualifyByDefault: false,
  questions: [
    {
      key: 'freq',
      name: freqText,
      type: 'SINGLE_SELECT',
      isRequired: true,
      choices: [
        { id: 'weekly', label: 'Weekly', rule: 'QUALIFIES' },
        { id: 'monthly', label: 'Monthly' },
        { id: 'never', label: 'Never', rule: 'DISQUALIFIES' },
      ],
    },
    { key: 'nick', name: 'Your nickname', type: 'SHORT_FORM', isRequired: false, mappedToPropertyId: secret },
    { key: 'mail', name: 'Your work email', type: 'EMAIL', isRequired: false },
    { key: 'note', name: 'Anything else?', type: 'LONG_FORM', isRequired: false },
    { key: 'orders', name: 'Orders last month', type: 'NUMBER', isRequired: false },
  ],
});

/** A launched study whose screener asks five questions, one mapped to a PII property, with `count` participants. */
async function studyWithScreener(tenant: Tenant, count: number) {
  const { Nickname } = await createProperties(service, tenant, [{ name: 'Nickname', propertyType: 'STRING', isPII: true }]);
  const studyId = await createStudy(service, tenant, { studyType: 'INTERVIEWS' });
  const put = await call(service, 'PUT', `/studies/${studyId}/screener`, { token: tenant.token, body: screenerBody(Nickname!) });
  expect(put.statusCode, put.body).toBe(200);
  expect((await call(service, 'POST', `/studies/${studyId}/launch`, { token: tenant.token })).statusCode).toBe(200);
  const people = await Promise.all(Array.from({ length: count }, () => createPerson(service, tenant)));
  const participants = count === 0 ? [] : await addParticipants(
    service,
    tenant,
    studyId,
    people.map((person) => person.personId),
  );
  const questions = await service.deps.db.selectFrom('screener_questions').select(['question_id', 'question_key']).where('workspace_id', '=', tenant.workspaceId).orderBy('position').execute();
  const ids = Object.fromEntries(questions.map((question) => [question.question_key, question.question_id]));
  return { studyId, participants: participants.map((participant) => participant.participantId), ids, secret: Nickname! };
}

/** Answers sent through the submission service the page calls (the page's own tests cover the form). */
async function answer(tenant: Tenant, studyId: string, participantId: string, answers: Record<string, unknown>, options: { suspectedBot?: boolean } = {}) {
  const started = new Date(Date.now() - 95_000).toISOString();
  const result = await submitScreener(service.deps.tenantDb(tenant.workspaceId), {
    workspaceId: tenant.workspaceId,
    studyId,
    participantId,
    linkId: 'lnk_none',
    answers,
    startedAt: started,
    suspectedBot: options.suspectedBot ?? false,
    at: new Date().toISOString(),
  });
  expect(result.kind).toBe('RECORDED');
  return result;
}

const responseUrl = (studyId: string, participantId: string) => `/studies/${studyId}/participants/${participantId}/screener-response`;

describe('GET /studies/{studyId}/participants/{participantId}/screener-response', () => {
  it('answers the response with each answer and its question as it was asked, the outcome and why, the times', async () => {
    const tenant = await createTenant(service);
    const world = await studyWithScreener(tenant, 1);
    const participantId = world.participants[0]!;
    await answer(tenant, world.studyId, participantId, { [world.ids.freq!]: 'weekly', [world.ids.nick!]: 'Ziggy', [world.ids.mail!]: 'z@example.test', [world.ids.orders!]: '-3' });
    // A later edit of the question changes nothing of what was asked.
    const edited = await call(service, 'PUT', `/studies/${world.studyId}/screener`, { token: tenant.token, body: screenerBody(world.secret, 'How often do you buy things online?') });
    expect(edited.statusCode).toBe(200);
    const response = await call(service, 'GET', responseUrl(world.studyId, participantId), { token: tenant.token });
    expect(response.statusCode, response.body).toBe(200);
    const body = response.json<Response>();
    expect(body).toMatchObject({ participantId, outcome: 'QUALIFIED', decidedBy: { kind: 'CHOICE', questionKey: 'freq', choiceId: 'weekly', rule: 'QUALIFIES' }, suspectedBot: false, revision: 1 });
    expect(body.secondsToComplete).toBeGreaterThanOrEqual(94);
    expect(Date.parse(body.submittedAt) - Date.parse(body.startedAt!)).toBeGreaterThanOrEqual(94_000);
    expect(body.answers.map((item) => item.questionKey)).toEqual(['freq', 'nick', 'mail', 'orders']);
    expect(body.answers[0]).toEqual({
      questionId: world.ids.freq,
      questionKey: 'freq',
      revision: 1,
      text: 'How often do you shop online?',
      type: 'SINGLE_SELECT',
      choices: [
        { id: 'weekly', label: 'Weekly' },
        { id: 'monthly', label: 'Monthly' },
        { id: 'never', label: 'Never' },
      ],
      value: 'weekly',
      choiceLabels: ['Weekly'],
      masked: false,
    });
    expect(body.answers.slice(1).map((item) => [item.value, item.masked])).toEqual([
      ['Ziggy', false],
      ['z@example.test', false],
      [-3, false],
    ]);
  });

  it('masks answers to questions mapped to PII properties, and emails, for a token without the personal-data right', async () => {
    const tenant = await createTenant(service);
    const world = await studyWithScreener(tenant, 1);
    const participantId = world.participants[0]!;
    await answer(tenant, world.studyId, participantId, { [world.ids.freq!]: 'monthly', [world.ids.nick!]: 'Ziggy', [world.ids.mail!]: 'z@example.test', [world.ids.note!]: 'Fine' });
    const { token } = await tenant.tokenFor('OBSERVER', { canReadPersonalData: false });
    const response = await call(service, 'GET', responseUrl(world.studyId, participantId), { token });
    expect(response.statusCode).toBe(200);
    expect(response.body).not.toContain('Ziggy');
    expect(response.body).not.toContain('z@example.test');
    const answers = response.json<Response>().answers;
    expect(answers.map((item) => [item.questionKey, item.value, item.masked])).toEqual([
      ['freq', 'monthly', false],
      ['nick', '***', true],
      ['mail', '***@***', true],
      ['note', 'Fine', false],
    ]);
    // Marked not personal, the property's answers are read.
    await service.deps.db.updateTable('person_properties').set({ is_pii: false }).where('property_id', '=', world.secret).execute();
    expect((await call(service, 'GET', responseUrl(world.studyId, participantId), { token })).body).toContain('Ziggy');
  });

  it('refuses a token made without the screeners right (403 naming the scope)', async () => {
    const tenant = await createTenant(service);
    const world = await studyWithScreener(tenant, 1);
    await answer(tenant, world.studyId, world.participants[0]!, { [world.ids.freq!]: 'never' });
    const { token } = await tenant.tokenFor('RESEARCHER', { canReadScreeners: false });
    for (const url of [responseUrl(world.studyId, world.participants[0]!), `/studies/${world.studyId}/screener-responses`, `/studies/${world.studyId}/screener-responses/export`]) {
      const response = await call(service, 'GET', url, { token });
      expect(response.statusCode, url).toBe(403);
      expect(response.headers['www-authenticate']).toContain('scope="screeners"');
      expect(response.body).toBe('Forbidden');
    }
    expect((await call(service, 'GET', `/studies/${world.studyId}/screener-funnel`, { token })).statusCode).toBe(200);
  });

  it('answers 404 naming the study, the participant, or the participant without a response', async () => {
    const tenant = await createTenant(service);
    const world = await studyWithScreener(tenant, 1);
    const other = await createStudy(service, tenant, { studyType: 'INTERVIEWS' });
    const cases: [string, object][] = [
      [responseUrl('stu_unknown', world.participants[0]!), { message: 'Study not found', path: ['studyId'] }],
      [responseUrl(other, world.participants[0]!), { message: 'Participant not found', path: ['participantId'] }],
      [responseUrl(world.studyId, 'ptc_unknown'), { message: 'Participant not found', path: ['participantId'] }],
      [responseUrl(world.studyId, world.participants[0]!), { message: 'Screener response not found', path: ['participantId'] }],
    ];
    for (const [url, error] of cases) {
      const response = await call(service, 'GET', url, { token: tenant.token });
      expect(response.statusCode, url).toBe(404);
      expect(response.json(), url).toEqual({ errors: [error] });
    }
  });
});

describe('GET /studies/{studyId}/screener-responses', () => {
  it('pages through the responses with cursors, counts them all, and filters by outcome', async () => {
    const tenant = await createTenant(service);
    const world = await studyWithScreener(tenant, 4);
    const [a, b, c] = world.participants;
    await answer(tenant, world.studyId, a!, { [world.ids.freq!]: 'weekly' });
    await answer(tenant, world.studyId, b!, { [world.ids.freq!]: 'never' });
    await answer(tenant, world.studyId, c!, { [world.ids.freq!]: 'monthly', [world.ids.nick!]: 'Ziggy' });
    const url = `/studies/${world.studyId}/screener-responses`;
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 3; page++) {
      const response = await call(service, 'GET', url, { token: tenant.token, query: { size: '2', ...(cursor ? { startCursor: cursor } : {}) } });
      expect(response.statusCode, response.body).toBe(200);
      const body = response.json<{ results: Response[]; total: number; pageInfo: { hasNextPage: boolean; endCursor: string } }>();
      expect(body.total).toBe(3);
      seen.push(...body.results.map((result) => result.participantId));
      if (!body.pageInfo.hasNextPage) break;
      cursor = body.pageInfo.endCursor;
    }
    expect(seen).toEqual([a, b, c].sort());
    const full = (await call(service, 'GET', url, { token: tenant.token })).json<{ results: Response[] }>();
    expect(full.results.find((result) => result.participantId === c)!.answers.map((item) => item.value)).toEqual(['monthly', 'Ziggy']);
    const disqualified = await call(service, 'GET', url, { token: tenant.token, query: { outcome: 'DISQUALIFIED' } });
    expect(disqualified.json<{ results: Response[]; total: number }>()).toMatchObject({ total: 1, results: [{ participantId: b, outcome: 'DISQUALIFIED' }] });
    const review = await call(service, 'GET', url, { token: tenant.token, query: { outcome: 'NEEDS_REVIEW' } });
    expect(review.json<{ total: number }>().total).toBe(1);
  });

  it('refuses a bad size, an unknown outcome, and a cursor altered or from another query (400 naming the parameter)', async () => {
    const tenant = await createTenant(service);
    const world = await studyWithScreener(tenant, 2);
    for (const participantId of world.participants) await answer(tenant, world.studyId, participantId, { [world.ids.freq!]: 'weekly' });
    const url = `/studies/${world.studyId}/screener-responses`;
    const first = (await call(service, 'GET', url, { token: tenant.token, query: { size: '1' } })).json<{ pageInfo: { endCursor: string } }>();
    const other = await createStudy(service, tenant, { studyType: 'INTERVIEWS' });
    const cases: [string, Record<string, string>, string][] = [
      [url, { size: '0' }, 'size'],
      [url, { size: '101' }, 'size'],
      [url, { outcome: 'MAYBE' }, 'outcome'],
      [url, { startCursor: `${first.pageInfo.endCursor.slice(0, -2)}xx` }, 'startCursor'],
      [url, { startCursor: first.pageInfo.endCursor, outcome: 'QUALIFIED' }, 'startCursor'],
      [`/studies/${other}/screener-responses`, { startCursor: first.pageInfo.endCursor }, 'startCursor'],
    ];
    for (const [target, query, path] of cases) {
      const response = await call(service, 'GET', target, { token: tenant.token, query });
      expect(response.statusCode, JSON.stringify(query)).toBe(400);
      expect(response.json<{ errors: { path: string[] }[] }>().errors[0]!.path, JSON.stringify(query)).toEqual([path]);
    }
    const unknown = await call(service, 'GET', '/studies/stu_unknown/screener-responses', { token: tenant.token });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ errors: [{ message: 'Study not found', path: ['studyId'] }] });
  });
});

/** RFC 4180 records of a CSV text (quoted cells, doubled quotes, CRLF). */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let cell = '';
  let quoted = false;
  for (let index = 0; index < text.length; index++) {
    const char = text[index]!;
    if (quoted) {
      if (char === '"' && text[index + 1] === '"') {
        cell += '"';
        index++;
      } else if (char === '"') quoted = false;
      else cell += char;
    } else if (char === '"') quoted = true;
    else if (char === ',') {
      record.push(cell);
      cell = '';
    } else if (char === '\r' && text[index + 1] === '\n') {
      record.push(cell);
      records.push(record);
      record = [];
      cell = '';
      index++;
    } else cell += char;
  }
  return records;
}

describe('GET /studies/{studyId}/screener-responses/export', () => {
  it('streams one CSV row per response, a column per question (older ones after), formulas neutralised, personal answers masked', async () => {
    const tenant = await createTenant(service);
    const world = await studyWithScreener(tenant, 3);
    const [a, b] = world.participants;
    await answer(tenant, world.studyId, a!, { [world.ids.freq!]: 'weekly', [world.ids.nick!]: '=HYPERLINK("http://evil.example","x")', [world.ids.note!]: 'Line one,\nline "two"', [world.ids.orders!]: '-3' });
    // A new revision drops the note question and adds another; b answers that one.
    const { secret } = world;
    const revised = screenerBody(secret);
    revised.questions = [...revised.questions.filter((question) => question.key !== 'note'), { key: 'device', name: 'Which device?', type: 'SHORT_FORM', isRequired: false }];
    expect((await call(service, 'PUT', `/studies/${world.studyId}/screener`, { token: tenant.token, body: revised })).statusCode).toBe(200);
    const device = (await service.deps.db.selectFrom('screener_questions').select('question_id').where('workspace_id', '=', tenant.workspaceId).where('question_key', '=', 'device').executeTakeFirstOrThrow()).question_id;
    const freq2 = (await service.deps.db.selectFrom('screener_questions').select('question_id').where('workspace_id', '=', tenant.workspaceId).where('question_key', '=', 'freq').where('revision', '=', 2).executeTakeFirstOrThrow()).question_id;
    await answer(tenant, world.studyId, b!, { [freq2]: 'never', [device]: '@SUM(1+1)' });

    const response = await call(service, 'GET', `/studies/${world.studyId}/screener-responses/export`, { token: tenant.token });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(response.headers['content-disposition']).toBe(`attachment; filename="screener-responses-${world.studyId}.csv"`);
    const records = parseCsv(response.body);
    expect(records[0]).toEqual([
      'participantId', 'personId', 'submittedAt', 'startedAt', 'secondsToComplete', 'outcome', 'decidedBy', 'suspectedBot', 'revision',
      'How often do you shop online?', 'Your nickname', 'Your work email', 'Orders last month', 'Which device?', 'Anything else?',
    ]);
    expect(records).toHaveLength(3);
    const rowOf = (participantId: string) => Object.fromEntries(records[0]!.map((header, index) => [header, records.find((record) => record[0] === participantId)![index]]));
    expect(rowOf(a!)).toMatchObject({
      outcome: 'QUALIFIED',
      revision: '1',
      suspectedBot: 'false',
      'How often do you shop online?': 'Weekly',
      'Your nickname': `'=HYPERLINK("http://evil.example","x")`,
      'Anything else?': 'Line one,\nline "two"',
      'Orders last month': '-3',
      'Which device?': '',
    });
    expect(JSON.parse(rowOf(a!).decidedBy!)).toMatchObject({ kind: 'CHOICE', choiceId: 'weekly' });
    expect(rowOf(b!)).toMatchObject({ outcome: 'DISQUALIFIED', revision: '2', 'How often do you shop online?': 'Never', 'Which device?': "'@SUM(1+1)", 'Anything else?': '' });

    const { token } = await tenant.tokenFor('OBSERVER', { canReadPersonalData: false });
    const masked = await call(service, 'GET', `/studies/${world.studyId}/screener-responses/export`, { token, query: { outcome: 'QUALIFIED' } });
    expect(masked.statusCode).toBe(200);
    expect(masked.body).not.toContain('HYPERLINK');
    expect(parseCsv(masked.body)).toHaveLength(2);
    expect(parseCsv(masked.body)[1]![10]).toBe('***');
  });

  it('writes every response of a study larger than one batch, each once', async () => {
    const tenant = await createTenant(service);
    const world = await studyWithScreener(tenant, 0);
    const participants = [];
    for (let start = 0; start < 520; start += 100) {
      const people = await Promise.all(Array.from({ length: Math.min(100, 520 - start) }, () => createPerson(service, tenant)));
      participants.push(...(await addParticipants(service, tenant, world.studyId, people.map((person) => person.personId))));
    }
    for (const participant of participants) await answer(tenant, world.studyId, participant.participantId, { [world.ids.freq!]: 'weekly' });
    const response = await call(service, 'GET', `/studies/${world.studyId}/screener-responses/export`, { token: tenant.token });
    const ids = parseCsv(response.body).slice(1).map((record) => record[0]);
    expect(ids).toHaveLength(520);
    expect(new Set(ids).size).toBe(520);
  }, 120_000);

  it('answers 404 naming the study and 400 naming an unknown outcome', async () => {
    const tenant = await createTenant(service);
    const unknown = await call(service, 'GET', '/studies/stu_unknown/screener-responses/export', { token: tenant.token });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ errors: [{ message: 'Study not found', path: ['studyId'] }] });
    const studyId = await createStudy(service, tenant, { studyType: 'INTERVIEWS' });
    const bad = await call(service, 'GET', `/studies/${studyId}/screener-responses/export`, { token: tenant.token, query: { outcome: 'X' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json<{ errors: { path: string[] }[] }>().errors[0]!.path).toEqual(['outcome']);
  });
});

describe('GET /studies/{studyId}/screener-funnel', () => {
  const form = (path: string, fields: [string, string][]) =>
    service.app.inject({ method: 'POST', url: path, headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' }, payload: new URLSearchParams(fields).toString() });

  it('counts sent, opened, started, submitted, each outcome, and the quota groups', async () => {
    const tenant = await createTenant(service);
    const world = await studyWithScreener(tenant, 7);
    const [sentOnly, opener, starter, qualified, disqualified, review, deleted] = world.participants;
    for (const participantId of [sentOnly, opener, starter, qualified, disqualified, review, deleted]) {
      const moved = await call(service, 'PATCH', `/studies/${world.studyId}/participants/${participantId}`, { token: tenant.token, body: { screenerState: 'SCREENER_SENT' } });
      expect(moved.statusCode, moved.body).toBe(200);
    }
    const linkOf = async (participantId: string) =>
      new URL((await call(service, 'POST', `/studies/${world.studyId}/participants/${participantId}/links`, { token: tenant.token, body: { purpose: 'SCREENER' } })).json<{ url: string }>().url).pathname;
    // Opened only.
    expect((await service.app.inject({ method: 'GET', url: await linkOf(opener!) })).statusCode).toBe(200);
    // Opened, then sent with a required answer missing (refused): started; sent again refused, counted once.
    const starterPath = await linkOf(starter!);
    const page = await service.app.inject({ method: 'GET', url: starterPath });
    const field = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(page.body)![1]!;
    for (let attempt = 0; attempt < 2; attempt++) expect((await form(starterPath, [['formToken', field('formToken')], ['startedAt', field('startedAt')]])).statusCode).toBe(400);
    // Submitted through the page (opened too), and through the service.
    const qualifiedPath = await linkOf(qualified!);
    const qualifiedPage = await service.app.inject({ method: 'GET', url: qualifiedPath });
    const qualifiedField = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(qualifiedPage.body)![1]!;
    const sent = await form(qualifiedPath, [['formToken', qualifiedField('formToken')], ['startedAt', qualifiedField('startedAt')], [`q_${world.ids.freq}`, 'weekly']]);
    expect(sent.statusCode, sent.body).toBe(200);
    await answer(tenant, world.studyId, disqualified!, { [world.ids.freq!]: 'never' });
    await answer(tenant, world.studyId, review!, { [world.ids.freq!]: 'monthly' });
    await answer(tenant, world.studyId, deleted!, { [world.ids.freq!]: 'weekly' });
    await service.deps.db.updateTable('participants').set({ quota_group: 'Weekly shoppers' }).where('participant_id', 'in', [qualified!, deleted!]).execute();
    await service.deps.db.updateTable('participants').set({ quota_group: 'Monthly shoppers' }).where('participant_id', '=', review!).execute();
    // A deleted person counts nowhere (their answers and links are erased with them).
    const deletedPerson = (await service.deps.db.selectFrom('participants').select('person_id').where('participant_id', '=', deleted!).executeTakeFirstOrThrow()).person_id;
    expect((await call(service, 'DELETE', `/people/${deletedPerson}`, { token: tenant.token })).statusCode).toBe(200);

    const funnel = await call(service, 'GET', `/studies/${world.studyId}/screener-funnel`, { token: tenant.token });
    expect(funnel.statusCode, funnel.body).toBe(200);
    expect(funnel.json()).toEqual({
      studyId: world.studyId,
      participants: 6,
      sent: 6,
      opened: 3,
      started: 4,
      submitted: 3,
      qualified: 1,
      disqualified: 1,
      needsReview: 1,
      overQuota: 0,
      quotaGroups: [
        { name: 'Monthly shoppers', participants: 1 },
        { name: 'Weekly shoppers', participants: 1 },
      ],
    });
  });

  it('answers zeros for a study nobody answered, and 404 naming an unknown study', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(service, tenant, { studyType: 'INTERVIEWS' });
    expect((await call(service, 'GET', `/studies/${studyId}/screener-funnel`, { token: tenant.token })).json()).toMatchObject({ participants: 0, sent: 0, submitted: 0, quotaGroups: [] });
    const unknown = await call(service, 'GET', '/studies/stu_unknown/screener-funnel', { token: tenant.token });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json()).toEqual({ errors: [{ message: 'Study not found', path: ['studyId'] }] });
  });
});

/** A study with one answered participant, for the security cases. */
async function answered(tenant: Tenant) {
  const world = await studyWithScreener(tenant, 1);
  await answer(tenant, world.studyId, world.participants[0]!, { [world.ids.freq!]: 'weekly' });
  return world;
}

describeSecurity('GET /studies/{studyId}/participants/{participantId}/screener-response', () => service, {
  method: 'GET',
  right: 'participants:read',
  addressesResource: true,
  request: async (tenant) => {
    const world = await answered(tenant);
    return { url: responseUrl(world.studyId, world.participants[0]!) };
  },
});

describeSecurity('GET /studies/{studyId}/screener-responses', () => service, {
  method: 'GET',
  right: 'participants:read',
  addressesResource: true,
  request: async (tenant) => ({ url: `/studies/${(await answered(tenant)).studyId}/screener-responses` }),
});

describeSecurity('GET /studies/{studyId}/screener-responses/export', () => service, {
  method: 'GET',
  right: 'participants:read',
  addressesResource: true,
  request: async (tenant) => ({ url: `/studies/${(await answered(tenant)).studyId}/screener-responses/export` }),
});

describeSecurity('GET /studies/{studyId}/screener-funnel', () => service, {
  method: 'GET',
  right: 'participants:read',
  addressesResource: true,
  request: async (tenant) => ({ url: `/studies/${await createStudy(service, tenant, { studyType: 'INTERVIEWS' })}/screener-funnel` }),
});
