import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiPath } from '../../scripts/write-openapi.js';
import { issueLink, redeemSignInLink } from '../families/sign-in/service.js';
import { createTenant, startTestService, type TestService } from '../../test/harness.js';

/**
 * Every status a route answers is one its operation documents, and the statuses the shared
 * mechanisms document on every route are ones it answers: driven by the committed openapi.json,
 * each operation gets the requests any client may send by mistake (no body or a body of the wrong
 * type, too large, malformed, or with fields it does not take).
 */

interface Operation {
  responses: Record<string, unknown>;
  requestBody?: { content: Record<string, unknown> };
  security?: unknown[];
}
const document = JSON.parse(readFileSync(openApiPath, 'utf8')) as { paths: Record<string, Record<string, Operation>> };
const operations = Object.entries(document.paths).flatMap(([path, item]) =>
  Object.entries(item).map(([method, operation]) => ({ method: method.toUpperCase(), path, operation, name: `${method.toUpperCase()} ${path}` })),
);
/** Fastify reads a body on every method but GET, HEAD and TRACE. */
const bodyMethods = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

let service: TestService;
let token: string;
/** The console's session (cookie and CSRF token) of the same user, for the routes only a session cookie reaches. */
let session: { cookie: string; csrf: string };
beforeAll(async () => {
  service = await startTestService();
  const tenant = await createTenant(service);
  token = tenant.token;
  const link = await issueLink(service.deps.db, tenant.workspaceId, tenant.userId, 'SIGN_IN', service.deps.clock.now().toISOString());
  const started = await redeemSignInLink(service.deps.db, service.deps.clock, link.token);
  session = { cookie: `recruit_session=${started.secret}`, csrf: started.info.csrfToken };
});
afterAll(async () => service.stop());

/** The operation with made-up path parameters: the body is judged before any handler looks them up. */
const send = (method: string, path: string, headers: Record<string, string> = {}, payload?: string) =>
  service.app.inject({
    method: method as 'POST',
    url: `/v1${path.replace(/\{[^}]+\}/g, 'unknown_id')}`,
    headers: { ...(document.paths[path]?.[method.toLowerCase()]?.security?.some((scheme) => 'sessionCookie' in (scheme as object)) ? { cookie: session.cookie, 'x-csrf-token': session.csrf } : { authorization: `Bearer ${token}` }), ...headers },
    ...(payload === undefined ? {} : { payload }),
  });

const documented = (operation: Operation) => Object.keys(operation.responses).map(Number);

describe('documented statuses (openapi.json)', () => {
  it('covers the operations of the document', () => {
    expect(operations.length).toBeGreaterThan(40);
    expect(operations.some(({ method }) => method === 'DELETE')).toBe(true);
  });

  it('documents 413 and 415 exactly on the operations whose method carries a body', () => {
    for (const { method, operation, name } of operations) {
      const statuses = documented(operation);
      expect(statuses.includes(413), `${name} documents 413`).toBe(bodyMethods.has(method));
      expect(statuses.includes(415), `${name} documents 415`).toBe(bodyMethods.has(method));
    }
  });

  it('answers a body that is not JSON (nor the operation\'s own type) with 415, documented, on every body method; a GET ignores it', async () => {
    for (const { method, path, operation, name } of operations) {
      const response = await send(method, path, { 'content-type': 'application/xml' }, '<person/>');
      expect(documented(operation), `${name} answered ${response.statusCode}: ${response.body}`).toContain(response.statusCode);
      if (bodyMethods.has(method)) {
        expect(response.statusCode, name).toBe(415);
        expect(response.json(), name).toEqual({ errors: [{ message: 'Unsupported content type application/xml', path: [] }] });
      } else {
        expect(response.statusCode, name).not.toBe(415);
      }
    }
  });

  it('answers a body without a content type with 415, documented, on every body method', async () => {
    for (const { method, path, operation, name } of operations.filter(({ method }) => bodyMethods.has(method))) {
      const response = await send(method, path, {}, 'hello');
      expect(response.statusCode, `${name}: ${response.body}`).toBe(415);
      expect(documented(operation), name).toContain(415);
    }
  });

  it('answers a body over 1 MiB with 413, documented, on every body method (a CSV import: over 2 GiB)', async () => {
    const large = JSON.stringify({ padding: 'x'.repeat(1024 * 1024) });
    for (const { method, path, operation, name } of operations.filter(({ method }) => bodyMethods.has(method))) {
      // POST /imports streams its CSV up to 2 GiB; its own limit is tested in create-import.test.ts.
      if (operation.requestBody?.content['text/csv']) continue;
      const response = await send(method, path, { 'content-type': 'application/json' }, large);
      expect(response.statusCode, `${name}: ${response.body}`).toBe(413);
      expect(documented(operation), name).toContain(413);
    }
  });

  it('answers malformed JSON, and a JSON body with a field the operation does not take, with a documented 400', async () => {
    for (const { method, path, operation, name } of operations.filter(({ method }) => bodyMethods.has(method))) {
      // An operation that takes text/csv alone refuses well-formed JSON as a type (415), documented too.
      const csvOnly = operation.requestBody !== undefined && operation.requestBody.content['application/json'] === undefined;
      for (const [payload, status] of [['{"unfinished":', 400], ['{"notAField":true}', csvOnly ? 415 : 400]] as const) {
        const response = await send(method, path, { 'content-type': 'application/json' }, payload);
        expect(response.statusCode, `${name} ${payload}: ${response.body}`).toBe(status);
        expect(documented(operation), `${name} ${payload}`).toContain(response.statusCode);
      }
    }
  });

  it('DELETE /people/{personId} with a body: 415 for a type no parser takes, 400 for text or fields, all documented; an empty JSON object is no body', async () => {
    const operation = document.paths['/people/{personId}']!.delete!;
    expect(documented(operation)).toEqual(expect.arrayContaining([400, 413, 415]));
    expect((await send('DELETE', '/people/{personId}', { 'content-type': 'application/x-www-form-urlencoded' }, 'force=1')).statusCode).toBe(415);
    expect((await send('DELETE', '/people/{personId}', {}, 'force=1')).statusCode).toBe(415);
    const text = await send('DELETE', '/people/{personId}', { 'content-type': 'text/plain' }, 'please');
    expect(text.statusCode).toBe(400);
    expect(text.json()).toEqual({ errors: [{ message: 'This operation takes no body', path: [] }] });
    const fields = await send('DELETE', '/people/{personId}', { 'content-type': 'application/json' }, '{"force":true}');
    expect(fields.statusCode).toBe(400);
    expect(fields.json()).toEqual({ errors: [{ message: 'force is not a known field', path: ['force'] }] });
    // No body worth refusing: the person is looked up (and not found).
    expect((await send('DELETE', '/people/{personId}', { 'content-type': 'application/json' }, '{}')).statusCode).toBe(404);
  });
});
