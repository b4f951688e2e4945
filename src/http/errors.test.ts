import { Type } from '@sinclair/typebox';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type Tenant, type TestService } from '../../test/harness.js';
import { LogCapture } from '../../test/log-capture.js';
import { errorCatalogue } from './errors.js';

let service: TestService;
let tenant: Tenant;
const logs = new LogCapture();

const validStudy = { studyType: 'INTERVIEWS', recruitmentStrategy: 'IN_SERVICE', studyPlan: { name: 'Checkout interviews' } };

beforeAll(async () => {
  service = await startTestService(
    { logLevel: 'info' },
    {
      logger: true,
      logStream: logs,
      // Routes that fail the way a bug does: a plain exception, and SQL the database refuses.
      extraRoutes: (app) => {
        app.get('/v1/test-only/bug', { config: { public: true } }, async () => {
          throw new Error('secret internal detail');
        });
        // A path parameter of a list of values (no documented route has one yet).
        app.get(
          '/v1/test-only/colours/:colour',
          { config: { public: true }, schema: { hide: true, params: Type.Object({ colour: Type.Union([Type.Literal('RED'), Type.Literal('GREEN')]) }) } },
          async () => ({}),
        );
        app.get('/v1/test-only/sql', { config: { public: true } }, async () => {
          await sql`select secret_column from secret_table where token = ${'secret-value'}`.execute(service.deps.db);
          return {};
        });
      },
    },
  );
  tenant = await createTenant(service);
});
afterAll(async () => service.stop());

function expectErrorsBody(response: { statusCode: number; headers: Record<string, unknown>; body: string }, status: number) {
  expect(response.statusCode, response.body).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  const body = JSON.parse(response.body) as { errors: { message: string; path: string[] }[] };
  expect(Object.keys(body)).toEqual(['errors']);
  expect(body.errors.length).toBeGreaterThan(0);
  for (const item of body.errors) {
    expect(Object.keys(item).sort()).toEqual(['message', 'path']);
    expect(typeof item.message).toBe('string');
    expect(item.path.every((segment) => typeof segment === 'string')).toBe(true);
  }
  return body.errors;
}

function expectPlain(response: { statusCode: number; headers: Record<string, unknown>; body: string }, status: number, text: string) {
  expect(response.statusCode).toBe(status);
  expect(response.headers['content-type']).toMatch(/^text\/plain/);
  expect(response.body).toBe(text);
}

describe('400 validation errors', () => {
  it('refuses an unknown body field, naming it from the root', async () => {
    const top = await call(service, 'POST', '/studies', { token: tenant.token, body: { ...validStudy, studyTyp: 'SURVEY' } });
    expect(expectErrorsBody(top, 400)).toEqual([{ message: 'studyTyp is not a known field', path: ['studyTyp'] }]);

    const nested = await call(service, 'POST', '/studies', {
      token: tenant.token,
      body: { ...validStudy, studyPlan: { name: 'x', scheduler: { interviewDurationMinutes: 30, timezone: 'UTC' } } },
    });
    expect(expectErrorsBody(nested, 400)).toEqual([{ message: 'timezone is not a known field', path: ['studyPlan', 'scheduler', 'timezone'] }]);
  });

  it('refuses a value of the wrong type without coercing it, naming its path', async () => {
    const response = await call(service, 'POST', '/studies', {
      token: tenant.token,
      body: { ...validStudy, studyPlan: { name: 'x', participationLimit: '5' } },
    });
    const [item] = expectErrorsBody(response, 400);
    expect(item!.path).toEqual(['studyPlan', 'participationLimit']);

    const enumValue = await call(service, 'POST', '/studies', { token: tenant.token, body: { ...validStudy, studyType: 5 } });
    expect(expectErrorsBody(enumValue, 400)[0]!.path).toEqual(['studyType']);
  });

  it('refuses malformed JSON, an empty JSON body and a body that is not an object with a JSON errors body', async () => {
    for (const payload of ['{"studyType": "SURVEY",', '', 'null', '"text"', '[1]']) {
      const response = await service.app.inject({
        method: 'POST',
        url: '/v1/studies',
        headers: { authorization: `Bearer ${tenant.token}`, 'content-type': 'application/json' },
        payload,
      });
      const [item] = expectErrorsBody(response, 400);
      expect(item!.path, payload).toEqual([]);
      expect(item!.message).not.toMatch(/FST_|at .*\.js/);
    }
  });

  it('refuses the NUL character anywhere with a 400, never a 500', async () => {
    const inBody = await call(service, 'POST', '/studies', { token: tenant.token, body: { ...validStudy, studyPlan: { name: 'Check\u0000out' } } });
    expect(expectErrorsBody(inBody, 400)).toEqual([{ message: 'name must not contain the NUL character or unpaired surrogates', path: ['studyPlan', 'name'] }]);

    const inPath = await call(service, 'GET', '/studies/stu_%00abc', { token: tenant.token });
    expect(expectErrorsBody(inPath, 400)[0]!.path).toEqual(['studyId']);

    const inQuery = await call(service, 'GET', '/studies', { token: tenant.token, query: { startCursor: 'abc\u0000def' } });
    expect(expectErrorsBody(inQuery, 400)[0]!.path).toEqual(['startCursor']);

    // In a property name: jsonb keeps keys as text too. The path names the object holding the key.
    const inKey = await call(service, 'POST', '/people', { token: tenant.token, body: { email: 'nul@example.org', properties: { 'a\u0000b': 'x' } } });
    expect(expectErrorsBody(inKey, 400)).toEqual([{ message: 'properties must not have a property name with the NUL character or unpaired surrogates', path: ['properties'] }]);
  });

  it('refuses a body nested deeper than any request needs with a 400, never a 500 (a stack overflow in validation)', async () => {
    // A filter of 30,000 nested groups, written out as text (JSON.stringify itself would overflow):
    // under 1 MiB, and deep enough to overflow a recursive validator.
    const leaf = '{"property":{"propertyGroup":"PERSON","propertyName":"EMAIL"},"comparison":"IS_EMPTY"}';
    const groups = 30_000;
    const body = `{"filter":{"filters":[${'{"operator":"AND","filters":['.repeat(groups)}${leaf}${']}'.repeat(groups)}]}}`;
    expect(body.length).toBeLessThan(1024 * 1024);
    const deep = await call(service, 'POST', '/people/search', { token: tenant.token, body, headers: { 'content-type': 'application/json' } });
    expect(expectErrorsBody(deep, 400)).toEqual([{ message: 'The request body nests deeper than 32 levels', path: [] }]);
    // The deepest filter the language allows still reaches its own rule (and a 200 when within it).
    const nest = (depth: number): object => (depth === 0 ? { property: { propertyGroup: 'PERSON', propertyName: 'EMAIL' }, comparison: 'IS_EMPTY' } : { operator: 'AND', filters: [nest(depth - 1)] });
    expect((await call(service, 'POST', '/people/search', { token: tenant.token, body: { filter: { filters: [nest(4)] } } })).statusCode).toBe(200);
    expect(expectErrorsBody(await call(service, 'POST', '/people/search', { token: tenant.token, body: { filter: { filters: [nest(5)] } } }), 400)[0]!.message).toMatch(/nest at most 4 levels/);
  });

  it('refuses an unpaired UTF-16 surrogate with a 400 naming the field, and writes nothing', async () => {
    const before = (await call(service, 'GET', '/studies', { token: tenant.token })).json().total;
    for (const method of ['POST', 'PATCH'] as const) {
      const studyId = method === 'PATCH' ? (await call(service, 'POST', '/studies', { token: tenant.token, body: validStudy })).json().studyId : undefined;
      const response = await service.app.inject({
        method,
        url: studyId ? `/v1/studies/${studyId}` : '/v1/studies',
        headers: { authorization: `Bearer ${tenant.token}`, 'content-type': 'application/json' },
        // Raw JSON: "\ud800" is valid JSON text but not a storable string.
        payload: `{"studyPlan":{"name":"a\\ud800b"}${method === 'POST' ? ',"studyType":"INTERVIEWS","recruitmentStrategy":"IN_SERVICE"' : ''}}`,
      });
      expect(expectErrorsBody(response, 400), method).toEqual([expect.objectContaining({ path: ['studyPlan', 'name'] })]);
    }
    const after = (await call(service, 'GET', '/studies', { token: tenant.token })).json().total;
    expect(after).toBe(before + 1);
  });

  it('names a query parameter of the wrong type by its name', async () => {
    const response = await call(service, 'GET', '/studies', { token: tenant.token, query: { size: 'abc' } });
    expect(expectErrorsBody(response, 400)).toEqual([expect.objectContaining({ path: ['size'] })]);

    const tooLarge = await call(service, 'GET', '/studies', { token: tenant.token, query: { size: '101' } });
    expect(expectErrorsBody(tooLarge, 400)[0]!.path).toEqual(['size']);

    const unknown = await call(service, 'GET', '/studies', { token: tenant.token, query: { sizes: '10' } });
    expect(expectErrorsBody(unknown, 400)[0]!.path).toEqual(['sizes']);

    const emptyCursor = await call(service, 'GET', '/studies', { token: tenant.token, query: { startCursor: '' } });
    expect(expectErrorsBody(emptyCursor, 400)[0]!.path).toEqual(['startCursor']);

    const badCursor = await call(service, 'GET', '/studies', { token: tenant.token, query: { startCursor: 'garbage' } });
    expect(expectErrorsBody(badCursor, 400)).toEqual([{ message: 'startCursor is not a valid cursor for this query', path: ['startCursor'] }]);
  });

  it('answers a URL that cannot be decoded, and a path parameter of any length, with the errors body', async () => {
    const undecodable = await service.app.inject({ method: 'GET', url: '/v1/studies/%E0%A4%A', headers: { authorization: `Bearer ${tenant.token}` } });
    expect(expectErrorsBody(undecodable, 400)).toEqual([{ message: 'The URL is not valid', path: [] }]);
    expect(undecodable.headers['x-request-id']).toBeTruthy();

    const long = await call(service, 'GET', `/studies/stu_${'x'.repeat(250)}`, { token: tenant.token });
    expect(expectErrorsBody(long, 400)[0]!.path).toEqual(['studyId']);

    const huge = await call(service, 'GET', `/studies/stu_${'x'.repeat(5000)}`, { token: tenant.token });
    expect(expectErrorsBody(huge, 400)).toEqual([{ message: 'A path parameter is too long', path: [] }]);
  });

  it('answers a body that is not JSON with 415 and a JSON errors body', async () => {
    const response = await service.app.inject({
      method: 'POST',
      url: '/v1/studies',
      headers: { authorization: `Bearer ${tenant.token}`, 'content-type': 'text/csv' },
      payload: 'a,b',
    });
    expectErrorsBody(response, 415);
  });

  it('answers a body over the limit with 413 and a JSON errors body', async () => {
    const response = await call(service, 'POST', '/studies', {
      token: tenant.token,
      body: { ...validStudy, studyPlan: { name: 'x', description: 'y'.repeat(1024 * 1024) } },
    });
    expectErrorsBody(response, 413);
  });
});

describe('400: a value outside a list of values', () => {
  const studyTypes = 'must be one of: SURVEY, INTERVIEWS, UNMODERATED_TEST, GROUP_INTERVIEW';
  const refused = async (method: string, url: string, options: { body?: unknown; query?: Record<string, string> }) =>
    expectErrorsBody(await call(service, method, url, { token: tenant.token, ...options }), 400);

  it('names the allowed values for a body field, whatever the schema spells the list with', async () => {
    // A string `enum`.
    expect(await refused('POST', '/studies', { body: { ...validStudy, studyType: 'INTERVIEW' } })).toEqual([{ message: `studyType ${studyTypes}`, path: ['studyType'] }]);
    // A value of another type gets the same answer: the list is what the client needs.
    expect(await refused('POST', '/studies', { body: { ...validStudy, studyType: 5 } })).toEqual([{ message: `studyType ${studyTypes}`, path: ['studyType'] }]);
    // A union of literals (an anyOf of consts): one error, not one per literal and one for the anyOf.
    expect(await refused('POST', '/incentives', { body: { participantId: 'ptc_x', type: 'CASH', amountCents: 100 } })).toEqual([
      { message: 'type must be one of: MONEY_OR_GIFT_CARD, PROVIDER_ONE_MONEY, RECRUITMENT_FEE, CUSTOM', path: ['type'] },
    ]);
    // A list of one.
    expect(await refused('PATCH', '/studies/stu_x/participants/ptc_x', { body: { consentFormSubmitted: false } })).toEqual([
      { message: 'consentFormSubmitted must be true', path: ['consentFormSubmitted'] },
    ]);
  });

  it('names them for a nested field and for an item of an array', async () => {
    const question = { name: 'How often do you shop online?', type: 'SHORT_FORM', isRequired: true };
    expect(await refused('PUT', '/studies/stu_x/screener', { body: { questions: [question, { ...question, category: 'complex' }] } })).toEqual([
      { message: 'category must be one of: simple, contact, consent', path: ['questions', '1', 'category'] },
    ]);
    expect(await refused('POST', '/properties/import', { body: [{ name: 'Shoe size', propertyType: 'NUMBER' }, { name: 'Pet', propertyType: 'TEXT' }] })).toEqual([
      { message: 'propertyType must be one of: STRING, NUMBER, DATETIME, BOOLEAN, SINGLE_SELECT, MULTI_SELECT, LOCATION', path: ['1', 'propertyType'] },
    ]);
    const sort = { operator: 'UP', propertyGroup: 'PERSON', propertyName: 'EMAIL' };
    expect(await refused('POST', '/people/search', { body: { filter: { filters: [], sort } } })).toEqual([{ message: 'operator must be one of: ASC, DESC', path: ['filter', 'sort', 'operator'] }]);
  });

  it('names them for a query parameter and a path parameter', async () => {
    expect(await refused('GET', '/studies', { query: { status: 'OPEN' } })).toEqual([{ message: 'status must be one of: DRAFT, ACTIVE, PAUSED, CLOSED', path: ['status'] }]);
    const response = await service.app.inject({ method: 'GET', url: '/v1/test-only/colours/BLUE' });
    expect(expectErrorsBody(response, 400)).toEqual([{ message: 'colour must be one of: RED, GREEN', path: ['colour'] }]);
    expect((await service.app.inject({ method: 'GET', url: '/v1/test-only/colours/GREEN' })).statusCode).toBe(200);
  });

  it('says a nullable field may also be null, in one error', async () => {
    expect(await refused('PATCH', '/studies/stu_x/participants/ptc_x', { body: { rating: 7 } })).toEqual([{ message: 'rating must be <= 5 or null', path: ['rating'] }]);
    expect(await refused('PATCH', '/studies/stu_x/participants/ptc_x', { body: { note: 5 } })).toEqual([{ message: 'note must be string or null', path: ['note'] }]);
  });
});

describe('404', () => {
  it('answers an unknown route with plain "Not Found"', async () => {
    for (const [method, url] of [
      ['GET', '/v1/no-such-route'],
      ['POST', '/v1/studies/stu_x/no-such-action'],
      ['DELETE', '/v1/me'],
      ['GET', '/'],
    ] as const) {
      const response = await service.app.inject({ method, url, headers: { authorization: `Bearer ${tenant.token}` } });
      expectPlain(response, 404, 'Not Found');
    }
  });

  it('answers an unknown resource with the errors body naming the parameter', async () => {
    const response = await call(service, 'GET', '/studies/stu_doesnotexist', { token: tenant.token });
    expect(expectErrorsBody(response, 404)).toEqual([{ message: 'Study not found', path: ['studyId'] }]);
  });
});

describe('500', () => {
  it('answers a bug with plain "Internal Server Error", and logs it whole', async () => {
    const response = await service.app.inject({ method: 'GET', url: '/v1/test-only/bug', headers: { 'x-request-id': 'bug-request-1' } });
    expectPlain(response, 500, 'Internal Server Error');
    expect(response.body).not.toContain('secret');

    const logged = logs.forRequest('bug-request-1').filter((line) => line.level >= 50);
    expect(logged).toHaveLength(1);
    expect(logged[0]!.err?.message).toBe('secret internal detail');
    expect(logged[0]!.err?.stack).toContain('errors.test.ts');
  });

  it('never leaks SQL or the database error', async () => {
    const response = await service.app.inject({ method: 'GET', url: '/v1/test-only/sql', headers: { 'x-request-id': 'sql-request-1' } });
    expectPlain(response, 500, 'Internal Server Error');
    expect(response.body).not.toMatch(/secret|select|relation/i);
    expect(JSON.stringify(response.headers)).not.toMatch(/secret|select|relation/i);
    expect(logs.forRequest('sql-request-1').some((line) => line.level >= 50 && /secret_table/.test(line.err?.message ?? ''))).toBe(true);
  });
});

describe('error catalogue', () => {
  it('gives every code a client-error or server-error status and a plain text for plain bodies', () => {
    for (const [code, entry] of Object.entries(errorCatalogue)) {
      expect(entry.status, code).toBeGreaterThanOrEqual(400);
      expect(entry.status, code).toBeLessThan(600);
      if (entry.body === 'plain') expect('text' in entry && entry.text.length > 0, code).toBe(true);
    }
  });
});
