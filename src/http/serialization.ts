import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import { Ajv, type ValidateFunction } from 'ajv';
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify';

type SerializerFactory = NonNullable<NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildSerializer']>;

const buildEager = SerializerSelector();

/**
 * Response serializers compiled on a route's first answer with that status, not at start: Fastify
 * would otherwise build one fast-json-stringify function per route and status before listening
 * (about 400 ms of a 600 ms start, and the memory of code for answers never given).
 */
export const lazySerializers: SerializerFactory = (externalSchemas, options) => {
  const build = buildEager(externalSchemas, options);
  return (route) => {
    let serialize: ((data: unknown) => string) | undefined;
    return (data: unknown) => (serialize ??= build(route))(data);
  };
};

/**
 * Route options for a route whose answers are built field by field by presenters typed by their
 * schemas (a search page: up to 1,000 rows): JSON.stringify writes them, or the route writes its
 * answer's JSON itself and sends the text (see sendJson). fast-json-stringify builds its text by
 * concatenation and checks every value of a union against each of its members: for a 1000-row
 * page of people that was 6.2 of the 12.7 MB the request allocated (1,000,000 people, 8 clients:
 * 199 ms at p50 with it, 161 without). What it also guaranteed, no field beyond the schema and
 * every value of its type, is then the presenters' (their return types are the schema's); under
 * the tests (NODE_ENV=test, as vitest sets it) every 200 answer, however written, is also checked
 * against its schema, and one that does not match it exactly fails the request.
 */
export function presentedAnswers(app: Pick<FastifyInstance, 'getSchemas'>) {
  const serializerCompiler = () => (data: unknown) => JSON.stringify(data);
  if (process.env.NODE_ENV !== 'test') return { serializerCompiler };
  let check: ValidateFunction | undefined;
  return {
    serializerCompiler,
    onSend: async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
      if (reply.statusCode !== 200 || typeof payload !== 'string') return payload;
      // The shared schemas it names by $ref (PageInfo, PropertyValue) are registered by its first answer.
      check ??= exactly((request.routeOptions.schema?.response as Record<number, unknown>)[200], Object.values(app.getSchemas()));
      if (!check(JSON.parse(payload))) {
        const [error] = check.errors ?? [];
        throw new Error(`The answer does not match its schema at ${error?.instancePath || '/'}: ${error?.message} ${JSON.stringify(error?.params)}`);
      }
      return payload;
    },
  };
}

/** Sends JSON the route wrote itself, as it is: the route's serializer is skipped (under the tests, presentedAnswers still checks it). */
export const sendJson = (reply: FastifyReply, text: string) => reply.type('application/json; charset=utf-8').send(text);

/** A page's answer, `{ results, total, pageInfo }`, around results already written as JSON, one text each. */
export const pageJson = (results: readonly string[], total: number, pageInfo: object) =>
  `{"results":[${results.join(',')}],"total":${JSON.stringify(total)},"pageInfo":${JSON.stringify(pageInfo)}}`;

/**
 * A check of a JSON answer against `schema`, with no field beyond those its objects name: each
 * object with named properties and no word on others refuses them. Shapes and types, not formats
 * (fast-json-stringify did not check those either: a masked or an erased person's email is not an address).
 */
function exactly(schema: unknown, references: unknown[]): ValidateFunction {
  const closed = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(closed);
    if (node === null || typeof node !== 'object') return node;
    const copy: Record<string, unknown> = Object.fromEntries(Object.entries(node).map(([key, value]) => [key, closed(value)]));
    if (copy.properties !== undefined && copy.additionalProperties === undefined && copy.patternProperties === undefined) copy.additionalProperties = false;
    return copy;
  };
  const ajv = new Ajv({ strict: false, validateFormats: false, allErrors: false });
  for (const reference of references) ajv.addSchema(closed(reference) as object);
  return ajv.compile(closed(schema) as object);
}
