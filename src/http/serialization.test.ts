import { Type } from '@sinclair/typebox';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { pageJson, presentedAnswers, sendJson } from './serialization.js';

/**
 * A route whose answers JSON.stringify writes: under the tests, each answer is checked against its
 * schema, so a presenter that adds a field or a value of the wrong type fails the request instead
 * of reaching a client (fast-json-stringify would have dropped the one and coerced the other).
 */
describe('answers written by JSON.stringify', () => {
  /** `answer` as the route returns it, or (written) as JSON text the route wrote and sent itself. */
  async function serve(answer: unknown, written = false) {
    const app = Fastify();
    app.addSchema(Type.Object({ hasNextPage: Type.Boolean() }, { $id: 'Paging' }));
    app.get(
      '/page',
      {
        ...presentedAnswers(app),
        schema: {
          response: {
            200: Type.Object({
              results: Type.Array(Type.Object({ id: Type.String(), tags: Type.Record(Type.String(), Type.Union([Type.String(), Type.Number()])) })),
              paging: Type.Ref('Paging'),
            }),
          },
        },
      },
      async (_request, reply) => (written ? sendJson(reply, JSON.stringify(answer)) : answer),
    );
    const response = await app.inject({ method: 'GET', url: '/page' });
    await app.close();
    return response;
  }

  const exact = { results: [{ id: 'a', tags: { x: 'y', n: 2 } }], paging: { hasNextPage: false } };

  it('writes an answer that is exactly its schema as it is', async () => {
    const response = await serve(exact);
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(response.body).toBe(JSON.stringify(exact));
  });

  it('fails an answer with a field its schema does not name, at any depth, also in a shared schema', async () => {
    for (const answer of [
      { ...exact, countedBy: 'counts' },
      { ...exact, results: [{ id: 'a', tags: {}, person_no: 7 }] },
      { ...exact, paging: { hasNextPage: false, sort_key: 'x' } },
    ]) {
      expect((await serve(answer)).statusCode, JSON.stringify(answer)).toBe(500);
    }
  });

  it('fails a value of the wrong type, and a missing field', async () => {
    expect((await serve({ ...exact, results: [{ id: 1, tags: {} }] })).statusCode).toBe(500);
    expect((await serve({ ...exact, results: [{ id: 'a', tags: { x: true } }] })).statusCode).toBe(500);
    expect((await serve({ results: [] })).statusCode).toBe(500);
  });

  it('checks an answer the route wrote itself as text just the same', async () => {
    const response = await serve(exact, true);
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(response.json()).toEqual(exact);
    expect((await serve({ ...exact, results: [{ id: 'a', tags: {}, person_no: 7 }] }, true)).statusCode).toBe(500);
    expect((await serve({ ...exact, results: [{ id: 'a', tags: { x: true } }] }, true)).statusCode).toBe(500);
  });
});

describe('a page written around results already in JSON', () => {
  it('is the page JSON.stringify would write, each result as written', () => {
    const results = [{ id: 'a', tags: { x: '"quoted"' } }, { id: 'b\u2028', tags: {} }];
    const pageInfo = { hasNextPage: true, endCursor: 'c' };
    const text = pageJson(results.map((result) => JSON.stringify(result)), 2, pageInfo);
    expect(JSON.parse(text)).toEqual({ results, total: 2, pageInfo });
    expect(JSON.parse(pageJson([], 0, pageInfo))).toEqual({ results: [], total: 0, pageInfo });
  });
});
