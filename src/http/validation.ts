import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance, FastifyRequest, FastifySchema } from 'fastify';
import { badRequest } from './errors.js';

// ajv-formats ships CommonJS with a default export.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

function makeAjv(coerceTypes: boolean | 'array'): Ajv {
  const ajv = new Ajv({
    // The contract refuses unknown fields; Fastify's default would strip them silently.
    removeAdditional: false,
    useDefaults: true,
    coerceTypes,
    allErrors: false,
    strict: false,
    // Errors carry the schema they broke: a list's values name what is allowed (validation-errors.ts).
    verbose: true,
  });
  addFormats(ajv);
  return ajv;
}

/** A lone UTF-16 surrogate: JSON allows it ("\ud800"), PostgreSQL's jsonb refuses it and text would mangle it. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Text PostgreSQL cannot store faithfully: it holds NUL or a lone surrogate. */
const isUnstorable = (text: string) => text.includes('\u0000') || LONE_SURROGATE.test(text);

interface Unstorable {
  /** A JSON pointer: to the string, or to the object whose property name is unstorable. */
  path: string;
  inPropertyName: boolean;
}

/**
 * The first string PostgreSQL cannot store faithfully, in a value or in a property name: jsonb
 * keeps object keys as text too, so `{"properties":{"\u0000":"x"}}` fails in SQL just as a value does.
 */
function findUnstorable(value: unknown, path: string): Unstorable | undefined {
  if (typeof value === 'string') return isUnstorable(value) ? { path, inPropertyName: false } : undefined;
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      const found = findUnstorable(value[index], `${path}/${index}`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      // The path names the object, not the key: the key itself cannot be echoed back faithfully.
      if (isUnstorable(key)) return { path, inPropertyName: true };
      const found = findUnstorable(item, `${path}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

/**
 * Marks a schema whose `enum` the operation checks itself, for a refusal that knows more than the
 * schema can (a filter's comparison: those of the property's type, once the property is known).
 * The document lists the values as usual; the validators check the schema without its `enum`.
 */
export const CHECKED_BY_OPERATION = 'x-checked-by-operation';

const isRecord = (value: unknown): value is Record<string | symbol, unknown> => typeof value === 'object' && value !== null;

/** The schema as the validators check it: without the `enum` of schemas marked CHECKED_BY_OPERATION, copied only where that changes it. */
export function validatedSchema<T>(schema: T): T {
  if (Array.isArray(schema)) {
    const items = schema.map((item: unknown) => validatedSchema(item));
    return items.some((item, index) => item !== schema[index]) ? (items as T) : schema;
  }
  if (!isRecord(schema)) return schema;
  let copy: Record<string | symbol, unknown> | undefined;
  for (const [key, value] of Object.entries(schema)) {
    const validated = validatedSchema(value);
    if (validated !== value) (copy ??= { ...schema })[key] = validated;
  }
  if (schema[CHECKED_BY_OPERATION] === true && 'enum' in schema) delete (copy ??= { ...schema }).enum;
  return (copy ?? schema) as T;
}

/**
 * Request validation: bodies are JSON and checked strictly (no type coercion: "5" is not 5);
 * path and query parameters are text and coerced to their declared types. Strings containing
 * NUL or unpaired surrogates are refused everywhere, values and property names alike, since
 * PostgreSQL cannot store them.
 */
export function installValidation(app: FastifyInstance): void {
  const bodyAjv = makeAjv(false);
  const parameterAjv = makeAjv('array');
  const sharedAdded = new WeakSet<Ajv>();

  const compile = (ajv: Ajv, schema: FastifySchema): ValidateFunction => {
    if (!sharedAdded.has(ajv)) {
      for (const shared of Object.values(app.getSchemas())) {
        const id = (shared as { $id?: string }).$id;
        if (id && !ajv.getSchema(id)) ajv.addSchema(validatedSchema(shared as object));
      }
      sharedAdded.add(ajv);
    }
    return ajv.compile(validatedSchema(schema));
  };

  // Each validator is compiled on its first request, not at start: compiling them all before
  // listening took a fifth of the start, and most routes of a given instance are seldom called.
  app.setValidatorCompiler(({ schema, httpPart }) => {
    const ajv = httpPart === 'body' ? bodyAjv : parameterAjv;
    let compiled: ValidateFunction | undefined;
    const withNulCheck = (data: unknown) => {
      const validate = (compiled ??= compile(ajv, schema as FastifySchema));
      if (!validate(data)) {
        withNulCheck.errors = validate.errors;
        return false;
      }
      const unstorable = findUnstorable(data, '');
      if (unstorable !== undefined) {
        const message = unstorable.inPropertyName
          ? 'must not have a property name with the NUL character or unpaired surrogates'
          : 'must not contain the NUL character or unpaired surrogates';
        const error: ErrorObject = { instancePath: unstorable.path, keyword: 'unstorable', schemaPath: '', params: {}, message };
        withNulCheck.errors = [error];
        return false;
      }
      withNulCheck.errors = null;
      return true;
    };
    withNulCheck.errors = null as ErrorObject[] | null | undefined;
    return withNulCheck;
  });
}

/**
 * How deep a JSON body may nest. The deepest a request of this API needs is a search filter with
 * its groups at the deepest allowed level, about 14; the validators and checks that walk a body
 * recurse, so a body nested thousands deep would overflow their stack (a 500) before the filter's
 * own depth rule could answer.
 */
export const JSON_DEPTH_MAX = 32;

/** Whether `value` nests deeper than `limit` (objects and arrays), walked without recursion. */
function nestsDeeperThan(value: unknown, limit: number): boolean {
  const stack: { value: unknown; depth: number }[] = [{ value, depth: 0 }];
  while (stack.length > 0) {
    const { value: current, depth } = stack.pop()!;
    if (current === null || typeof current !== 'object') continue;
    if (depth + 1 > limit) return true;
    for (const child of Array.isArray(current) ? current : Object.values(current)) {
      if (child !== null && typeof child === 'object') stack.push({ value: child, depth: depth + 1 });
    }
  }
  return false;
}

/**
 * Bodies: an empty JSON body counts as no body (clients often send the content type on a POST
 * without one), and an operation that declares no body refuses one that carries fields, as the
 * contract refuses unknown fields everywhere.
 */
declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route takes an HTML form (application/x-www-form-urlencoded) and reads its fields itself. */
    acceptsForm?: boolean;
  }
}

export function installBodyRules(app: FastifyInstance): void {
  // Fastify's own parser (its checks against prototype poisoning included) answers through the
  // callback and returns nothing (fastify/lib/content-type-parser.js); its declared type also
  // admits a parser that returns a promise instead, which no caller would then await.
  const parseJson = app.getDefaultJsonParser('error', 'error') as (request: FastifyRequest, body: string, done: (error: Error | null, parsed?: unknown) => void) => void;
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') {
      done(null, undefined);
      return;
    }
    parseJson(request, text, (error: Error | null, parsed?: unknown) => {
      if (error) return done(error, undefined);
      if (nestsDeeperThan(parsed, JSON_DEPTH_MAX)) return done(badRequest(`The request body nests deeper than ${JSON_DEPTH_MAX} levels`, []), undefined);
      done(null, parsed);
    });
  });

  app.addHook('preValidation', async (request) => {
    if (request.routeOptions.schema?.body !== undefined) return;
    // An HTML form's route reads its fields itself and answers in HTML (the participant's pages).
    if (request.routeOptions.config.acceptsForm) return;
    const body: unknown = request.body;
    if (body === undefined || body === null) return;
    if (typeof body === 'object' && !Array.isArray(body)) {
      const [field] = Object.keys(body);
      if (field !== undefined) throw badRequest(`${field} is not a known field`, [field]);
      return;
    }
    throw badRequest('This operation takes no body', []);
  });
}
