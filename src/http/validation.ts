import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance, FastifySchema } from 'fastify';
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
  });
  addFormats(ajv);
  return ajv;
}

/** A lone UTF-16 surrogate: JSON allows it ("\ud800"), PostgreSQL's jsonb refuses it and text would mangle it. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** The path of the first string PostgreSQL cannot store faithfully: one with NUL or a lone surrogate. */
function findUnstorable(value: unknown, path: string): string | undefined {
  if (typeof value === 'string') return value.includes('\u0000') || LONE_SURROGATE.test(value) ? path : undefined;
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) {
      const found = findUnstorable(value[index], `${path}/${index}`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      const found = findUnstorable(item, `${path}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

/**
 * Request validation: bodies are JSON and checked strictly (no type coercion: "5" is not 5);
 * path and query parameters are text and coerced to their declared types. Strings containing
 * NUL or unpaired surrogates are refused everywhere, since PostgreSQL cannot store them.
 */
export function installValidation(app: FastifyInstance): void {
  const bodyAjv = makeAjv(false);
  const parameterAjv = makeAjv('array');
  const sharedAdded = new WeakSet<Ajv>();

  app.setValidatorCompiler(({ schema, httpPart }) => {
    const ajv = httpPart === 'body' ? bodyAjv : parameterAjv;
    if (!sharedAdded.has(ajv)) {
      for (const shared of Object.values(app.getSchemas())) {
        const id = (shared as { $id?: string }).$id;
        if (id && !ajv.getSchema(id)) ajv.addSchema(shared as object);
      }
      sharedAdded.add(ajv);
    }
    const validate: ValidateFunction = ajv.compile(schema as FastifySchema);
    const withNulCheck = (data: unknown) => {
      if (!validate(data)) {
        withNulCheck.errors = validate.errors;
        return false;
      }
      const unstorablePath = findUnstorable(data, '');
      if (unstorablePath !== undefined) {
        const error: ErrorObject = { instancePath: unstorablePath, keyword: 'unstorable', schemaPath: '', params: {}, message: 'must not contain the NUL character or unpaired surrogates' };
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
 * Bodies: an empty JSON body counts as no body (clients often send the content type on a POST
 * without one), and an operation that declares no body refuses one that carries fields, as the
 * contract refuses unknown fields everywhere.
 */
export function installBodyRules(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') {
      done(null, undefined);
      return;
    }
    parseJson(request, text, done);
  });

  app.addHook('preValidation', async (request) => {
    if (request.routeOptions.schema?.body !== undefined) return;
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
