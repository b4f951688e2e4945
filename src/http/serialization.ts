import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import { Ajv, type ValidateFunction } from 'ajv';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';

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
 * schemas (a search page: up to 1,000 rows): JSON.stringify writes them. fast-json-stringify
 * builds its text by concatenation and checks every value of a union against each of its members:
 * for a 1000-row page of people that was 6.2 of the 12.7 MB the request allocated (1,000,000
 * people, 8 clients: 199 ms at p50 with it, 161 without). What it also guaranteed, no field
 * beyond the schema and every value of its type, is then the presenters' (their return types are
 * the schema's); under the tests (NODE_ENV=test, as vitest sets it) every answer is also checked
 * against its schema, and one that does not match it exactly fails the request.
 */
export function presentedAnswers(app: Pick<FastifyInstance, 'getSchemas'>) {
  return {
    serializerCompiler: ({ schema }: { schema: unknown }) => {
      if (process.env.NODE_ENV !== 'test') return (data: unknown) => JSON.stringify(data);
      let check: ValidateFunction | undefined;
      return (data: unknown) => {
        // The shared schemas it names by $ref (PageInfo, PropertyValue) are registered by its first answer.
        check ??= exactly(schema, Object.values(app.getSchemas()));
        const text = JSON.stringify(data);
        if (!check(JSON.parse(text))) {
          const [error] = check.errors ?? [];
          throw new Error(`The answer does not match its schema at ${error?.instancePath || '/'}: ${error?.message} ${JSON.stringify(error?.params)}`);
        }
        return text;
      };
    },
  };
}

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
