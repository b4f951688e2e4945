import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import fc from 'fast-check';

/**
 * fast-check arbitraries derived from an OpenAPI 3.1 document: for each operation, requests with
 * valid path, query and header parameters and bodies (from the JSON schemas, $refs resolved) and
 * hostile ones (wrong types, missing and unknown fields, NUL and lone surrogates, huge strings,
 * deep nesting, bad cursors, wrong content types, malformed JSON); and a checker of responses
 * against the operation's documented statuses and response schemas.
 */

// ajv-formats ships CommonJS with a default export.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

export type JsonSchema = { [key: string]: unknown };

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema: JsonSchema;
}
interface MediaType {
  schema?: JsonSchema;
}
export interface Operation {
  operationId?: string;
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content: Record<string, MediaType> };
  responses: Record<string, { content?: Record<string, MediaType> }>;
  security?: unknown[];
}
export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, JsonSchema> };
}
export interface DocumentedOperation {
  method: string;
  path: string;
  name: string;
  operation: Operation;
}

const httpMethods = new Set(['get', 'put', 'post', 'delete', 'patch']);

export function operationsOf(document: OpenApiDocument): DocumentedOperation[] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => httpMethods.has(method))
      .map(([method, operation]) => ({ method: method.toUpperCase(), path, operation, name: `${method.toUpperCase()} ${path}` })),
  );
}

/** One request as sent through `app.inject`. */
export interface FuzzRequest {
  method: string;
  /** The URL below the service's root, with `/v1`, already percent-encoded. */
  url: string;
  headers: Record<string, string>;
  payload?: string;
  /** Which generator made it (for the report). */
  kind: string;
}

/**
 * Identifiers and other values seen in the service, by field name (`studyId`, `personId`,
 * `email`, `cursor` …): the fuzzed tenant's own (`own`), grown from the responses as the run
 * goes, and another workspace's (`foreign`), which the fuzzed token must never reach.
 */
export class Pools {
  readonly own = new Map<string, string[]>();
  readonly foreign = new Map<string, string[]>();
  private static readonly cap = 200;

  add(name: string, value: string, foreign = false): void {
    const map = foreign ? this.foreign : this.own;
    let list = map.get(name);
    if (!list) map.set(name, (list = []));
    if (list.includes(value)) return;
    if (list.length >= Pools.cap) list.splice(Math.floor(list.length / 2), 1);
    list.push(value);
  }

  /**
   * Adds every `…Id`, email and cursor of a JSON response body (cursors also under `cursor <scope>`),
   * and every two ids one object holds together (`studyId|participantId`: a participant's pair).
   */
  harvest(body: unknown, scope = '', depth = 0): void {
    if (depth > 6 || body === null || typeof body !== 'object') return;
    if (Array.isArray(body)) {
      for (const item of body.slice(0, 20)) this.harvest(item, scope, depth + 1);
      return;
    }
    const ids: [string, string][] = [];
    for (const [key, value] of Object.entries(body)) {
      if (typeof value === 'string' && value.length > 0 && value.length <= 300) {
        if (/Id$/.test(key) && /^[a-z]{2,5}_[A-Za-z0-9_]+$/.test(value)) {
          this.add(key, value);
          ids.push([key, value]);
        } else if (key === 'email') this.add('email', value);
        else if (key === 'endCursor' || key === 'startCursor') {
          this.add('cursor', value);
          if (scope) this.add(`cursor ${scope}`, value);
        }
      } else {
        this.harvest(value, scope, depth + 1);
      }
    }
    for (const [a, first] of ids) for (const [b, second] of ids) if (a !== b) this.add(`${a}|${b}`, `${first}|${second}`);
  }

  /** A value of the pool `name`, drawn when generated (pools grow during the run); undefined when it is empty. */
  draw(name: string, foreign = false): fc.Arbitrary<string | undefined> {
    return fc.nat().map((index) => {
      const list = (foreign ? this.foreign : this.own).get(name);
      return list && list.length > 0 ? list[index % list.length] : undefined;
    });
  }
}

/** The pool an identifier field or parameter draws from: `personIds` and `personIdOrEmail` draw persons. */
function poolName(name: string | undefined): string | undefined {
  if (name === undefined) return undefined;
  if (name === 'personIdOrEmail') return 'personId';
  if (/Ids$/.test(name)) return name.slice(0, -1);
  if (/Id$/.test(name)) return name;
  if (name === 'email' || name === 'recipientEmail') return 'email';
  if (name === 'startCursor') return 'cursor';
  return undefined;
}

export interface ArbitraryOptions {
  /** Extra values for a field or parameter by its name (tried besides the schema's own), e.g. the reference's property names. */
  hints?: Record<string, fc.Arbitrary<unknown>>;
  /** Values for a schema without any constraint (`{}`, a filter's value). */
  anything?: fc.Arbitrary<unknown>;
}

const MAX_DEPTH = 9;
const SHORT = 24;

/** Arbitraries for values a schema accepts (as far as the schema alone says: a value may still be refused for what it means). */
export class SchemaArbitraries {
  constructor(
    private readonly document: OpenApiDocument,
    private readonly pools: Pools,
    private readonly options: ArbitraryOptions = {},
  ) {}

  resolve(schema: JsonSchema): JsonSchema {
    let current = schema;
    for (let hops = 0; typeof current.$ref === 'string' && hops < 10; hops++) {
      const name = current.$ref.replace('#/components/schemas/', '');
      const target = this.document.components.schemas[name];
      if (!target) throw new Error(`unresolved $ref ${current.$ref}`);
      current = target;
    }
    return current;
  }

  /** An id-like value for a field: mostly the tenant's own, sometimes another workspace's. */
  private fromPools(pool: string, base: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
    const own = this.pools.draw(pool).chain((value) => (value === undefined ? base : fc.constant(value)));
    const foreign = this.pools.draw(pool, true).chain((value) => (value === undefined ? base : fc.constant(value)));
    const other = this.pools.draw(pool === 'email' ? 'personId' : 'email').chain((value) => (value === undefined ? base : fc.constant(value)));
    // A new email mostly (a known one is a conflict on create); a known id mostly.
    if (pool === 'email') return fc.oneof({ arbitrary: own, weight: 2 }, { arbitrary: foreign, weight: 1 }, { arbitrary: base, weight: 5 });
    return fc.oneof({ arbitrary: own, weight: 16 }, { arbitrary: foreign, weight: 1 }, { arbitrary: other, weight: 1 }, { arbitrary: base, weight: 2 });
  }

  valid(input: JsonSchema, name?: string, depth = 0): fc.Arbitrary<unknown> {
    const schema = this.resolve(input);
    const base = this.validOfSchema(schema, name, depth);
    const hint = name === undefined ? undefined : this.options.hints?.[name];
    const pool = schema.type === 'string' || schema.type === undefined ? poolName(name) : undefined;
    let result = base;
    if (pool !== undefined && schema.enum === undefined) {
      const combined = pool === 'personId' && name === 'personIdOrEmail' ? fc.oneof(this.fromPools('personId', base), this.fromPools('email', base)) : this.fromPools(pool, base);
      result = combined;
    }
    if (hint !== undefined) result = fc.oneof({ arbitrary: hint, weight: 3 }, { arbitrary: result, weight: 1 });
    return result;
  }

  private validOfSchema(schema: JsonSchema, name: string | undefined, depth: number): fc.Arbitrary<unknown> {
    if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
    if (Array.isArray(schema.anyOf)) return fc.oneof(...(schema.anyOf as JsonSchema[]).map((branch) => this.valid(branch, name, depth)));
    if (schema.if !== undefined) {
      const branches = [schema.then, schema.else].filter((branch): branch is JsonSchema => branch !== undefined && typeof branch === 'object');
      return fc.oneof(...branches.map((branch) => this.valid(branch, name, depth)));
    }
    if (Array.isArray(schema.type)) return fc.oneof(...(schema.type as string[]).map((type) => this.validOfSchema({ ...schema, type }, name, depth)));
    switch (schema.type) {
      case 'string':
        return this.validString(schema);
      case 'integer':
      case 'number':
        return this.validNumber(schema);
      case 'boolean':
        return fc.boolean();
      case 'null':
        return fc.constant(null);
      case 'array':
        return this.validArray(schema, name, depth);
      case 'object':
        return this.validObject(schema, depth);
      default:
        return this.options.anything ?? fc.jsonValue({ maxDepth: 2 });
    }
  }

  private validString(schema: JsonSchema): fc.Arbitrary<string> {
    const minLength = (schema.minLength as number | undefined) ?? 0;
    const maxLength = (schema.maxLength as number | undefined) ?? 10_000;
    const fits = (text: string) => text.length >= minLength && text.length <= maxLength;
    switch (schema.format) {
      case 'email':
        return fc.emailAddress({ size: 'small' }).filter(fits);
      case 'date':
        return fc.date({ min: new Date('1900-01-01T00:00:00Z'), max: new Date('2199-12-31T00:00:00Z'), noInvalidDate: true }).map((date) => date.toISOString().slice(0, 10));
      case 'date-time':
        return fc.date({ min: new Date('1900-01-01T00:00:00Z'), max: new Date('2199-12-31T00:00:00Z'), noInvalidDate: true }).map((date) => date.toISOString());
      case 'uri':
        return fc.webUrl({ size: 'small' }).filter(fits);
    }
    if (typeof schema.pattern === 'string') {
      return fc.stringMatching(new RegExp(schema.pattern), { size: 'small' }).filter(fits);
    }
    const short = Math.min(maxLength, Math.max(minLength, SHORT));
    return fc.oneof(
      { arbitrary: fc.string({ minLength, maxLength: short }), weight: 4 },
      { arbitrary: fc.string({ minLength, maxLength: short, unit: 'grapheme' }), weight: 2 },
      // At the bound exactly.
      { arbitrary: fc.constant(maxLength <= 100_000 ? 'x'.repeat(maxLength) : 'x'.repeat(minLength)), weight: 1 },
    );
  }

  private validNumber(schema: JsonSchema): fc.Arbitrary<number> {
    const min = schema.minimum as number | undefined;
    const max = schema.maximum as number | undefined;
    if (schema.type === 'integer') {
      const integer = fc.integer({ min: min ?? -1_000_000, max: max ?? 2_000_000_000 });
      const bounds = [min, max].filter((bound): bound is number => bound !== undefined);
      return bounds.length > 0 ? fc.oneof(integer, fc.constantFrom(...bounds)) : integer;
    }
    return fc.double({ min: min ?? -1e9, max: max ?? 1e9, noNaN: true, noDefaultInfinity: true });
  }

  private validArray(schema: JsonSchema, name: string | undefined, depth: number): fc.Arbitrary<unknown[]> {
    const minLength = (schema.minItems as number | undefined) ?? 0;
    if (depth >= MAX_DEPTH && minLength === 0) return fc.constant([]);
    const maxLength = Math.max(minLength, Math.min((schema.maxItems as number | undefined) ?? 4, 4));
    const items = this.valid((schema.items as JsonSchema | undefined) ?? {}, name, depth + 1);
    if (schema.uniqueItems) return fc.uniqueArray(items, { minLength, maxLength, selector: (item) => JSON.stringify(item) });
    return fc.array(items, { minLength, maxLength });
  }

  private validObject(schema: JsonSchema, depth: number): fc.Arbitrary<Record<string, unknown>> {
    const properties = (schema.properties as Record<string, JsonSchema> | undefined) ?? {};
    const required = new Set((schema.required as string[] | undefined) ?? []);
    const keys = Object.keys(properties).filter((key) => depth < MAX_DEPTH || required.has(key));
    const record = fc.record(Object.fromEntries(keys.map((key) => [key, this.valid(properties[key]!, key, depth + 1)])), {
      requiredKeys: keys.filter((key) => required.has(key)),
    });
    const additional = schema.additionalProperties;
    if (additional === undefined || additional === false || depth >= MAX_DEPTH) return record;
    const keySchema = (schema.propertyNames as JsonSchema | undefined) ?? { type: 'string', minLength: 1, maxLength: 40 };
    const key = fc.oneof(
      { arbitrary: this.fromPools('propertyId', this.validString(keySchema)).map(String), weight: 2 },
      { arbitrary: this.options.hints?.propertyKey?.map(String) ?? this.validString(keySchema), weight: 1 },
      { arbitrary: this.validString(keySchema), weight: 1 },
    );
    const values = additional === true ? (this.options.anything ?? fc.jsonValue({ maxDepth: 2 })) : this.valid(additional as JsonSchema, undefined, depth + 1);
    const maxKeys = Math.min((schema.maxProperties as number | undefined) ?? 3, 3);
    return fc.tuple(record, fc.dictionary(key, values, { maxKeys })).map(([fixed, extra]) => ({ ...extra, ...fixed }));
  }
}

// ---------------------------------------------------------------------------------------------
// Hostile values

/** Strings no field should take as they are. */
export const hostileStrings = (maxLength = 200): fc.Arbitrary<string> =>
  fc.oneof(
    fc.constantFrom('', ' ', '\u0000', 'a\u0000b', '\ud800', 'x\udfff', '\udc00\ud800', '\ufeff', '\u202e', 'null', 'undefined', '[object Object]', '../../etc/passwd', "'; drop table people; --", '%00', '\\', '"', '💥'),
    fc.string({ unit: 'binary', maxLength: 30 }),
    fc.string({ maxLength: 10 }).map((text) => `${text}\u0000${text}`),
    fc.string({ maxLength: 10 }).map((text) => `${text}\ud83d`),
    fc.constantFrom(maxLength + 1, maxLength * 2 + 1, 70_000).map((length) => 'y'.repeat(length)),
  );

/** A value nested `levels` deep, of arrays or objects. */
export function nested(levels: number, kind: 'array' | 'object' | 'mixed'): unknown {
  let value: unknown = 1;
  for (let level = 0; level < levels; level++) {
    const asArray = kind === 'array' || (kind === 'mixed' && level % 2 === 0);
    value = asArray ? [value] : { a: value };
  }
  return value;
}

/** A JSON text nested `levels` deep, made as text (JSON.stringify would recurse). */
export const nestedText = (levels: number, kind: 'array' | 'object') =>
  kind === 'array' ? `${'['.repeat(levels)}1${']'.repeat(levels)}` : `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;

const wrongTypeValues = fc.constantFrom<unknown>(0, -1, 1.5, 1e308, -1e308, 2 ** 53 + 1, '', 'x', '1', 'true', true, false, null, [], {}, [null], { '': null }, ['a', 1]);

const hostileValue = (pools: Pools): fc.Arbitrary<unknown> =>
  fc.oneof(
    { arbitrary: wrongTypeValues, weight: 4 },
    { arbitrary: hostileStrings(), weight: 4 },
    { arbitrary: fc.integer({ min: 40, max: 400 }).chain((levels) => fc.constantFrom('array', 'object', 'mixed').map((kind) => nested(levels, kind as 'array'))), weight: 1 },
    { arbitrary: fc.constantFrom('personId', 'studyId', 'participantId', 'incentiveId', 'populationId', 'propertyId').chain((name) => pools.draw(name, true).map((id) => id ?? 'per_X')), weight: 1 },
  );

/** Every node of a JSON value, as the path to it (the root is []). */
function nodesOf(value: unknown, path: (string | number)[] = [], out: (string | number)[][] = []): (string | number)[][] {
  out.push(path);
  if (out.length > 500) return out;
  if (Array.isArray(value)) value.forEach((item, index) => nodesOf(item, [...path, index], out));
  else if (value !== null && typeof value === 'object') for (const [key, item] of Object.entries(value)) nodesOf(item, [...path, key], out);
  return out;
}

function clone<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

interface Mutation {
  at: number;
  kind: 'replace' | 'delete' | 'unknown-field' | 'unknown-field-deep' | 'proto';
  value: unknown;
  key: string;
}

/** `value` with the mutations applied, each at a node picked by its `at`. */
function mutate(value: unknown, mutations: Mutation[]): unknown {
  let root = clone(value);
  for (const { value: shared, ...mutation } of mutations) {
    // Constants are shared between draws: each use gets its own copy (no cycles, no aliasing).
    const replacement = clone(shared);
    const nodes = nodesOf(root);
    const path = nodes[mutation.at % nodes.length]!;
    const parent = path.length === 0 ? undefined : (path.slice(0, -1).reduce<unknown>((node, key) => (node as Record<string | number, unknown>)[key], root) as Record<string | number, unknown>);
    const last = path[path.length - 1];
    const target = path.reduce<unknown>((node, key) => (node as Record<string | number, unknown>)[key], root);
    switch (mutation.kind) {
      case 'replace':
        if (parent === undefined) root = replacement;
        else parent[last!] = replacement;
        break;
      case 'delete':
        if (parent !== undefined) {
          if (Array.isArray(parent)) parent.splice(last as number, 1);
          else delete parent[last!];
        }
        break;
      case 'unknown-field':
      case 'unknown-field-deep':
        if (target !== null && typeof target === 'object' && !Array.isArray(target)) (target as Record<string, unknown>)[mutation.key] = replacement;
        else if (Array.isArray(target)) target.push(replacement);
        break;
      case 'proto':
        if (target !== null && typeof target === 'object' && !Array.isArray(target)) {
          // Set as an own property, so JSON.stringify writes the "__proto__" key out.
          Object.defineProperty(target, mutation.key === 'constructor' ? 'constructor' : '__proto__', { value: { polluted: true }, enumerable: true, configurable: true, writable: true });
        }
        break;
    }
  }
  return root;
}

const mutationArb = (pools: Pools): fc.Arbitrary<Mutation> =>
  fc.record({
    at: fc.nat(),
    kind: fc.constantFrom<Mutation['kind']>('replace', 'replace', 'replace', 'delete', 'delete', 'unknown-field', 'unknown-field-deep', 'proto'),
    value: hostileValue(pools),
    key: fc.oneof(fc.constantFrom('unknownField', 'constructor', 'prototype', '', 'a\u0000', '\ud800', 'toString', 'hasOwnProperty'), fc.string({ maxLength: 12 })),
  });

// ---------------------------------------------------------------------------------------------
// Requests

const MiB = 1024 * 1024;
const jsonTypes = fc.constantFrom('application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON', 'application/json;charset=UTF-8');
const wrongTypes = fc.constantFrom(
  'text/plain',
  'application/xml',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=xyz',
  'application/jsonx',
  'application/vnd.api+json',
  'application/json; charset=utf-16',
  'application/json; charset=latin1',
  'text/csv',
  '*/*',
  ';',
  'application/octet-stream',
  'text/json',
);

/** Well-formed but refused, or not JSON at all. */
const malformedJson = (validText: fc.Arbitrary<string>): fc.Arbitrary<string> =>
  fc.oneof(
    fc.constantFrom('{', '{"a":', '{"a":1,}', "{'a':1}", '[1,]', 'nul', 'tru', '{"a":01}', '{"a":1e999}', '{"a":"\u0000"}', '{"a":"\\u0000"}', '{"a":"\\ud800"}', '{"a":"\\x"}', '\ufeff{}', '{}{}', '{"a":NaN}', '{"a":Infinity}', '{"__proto__":{"x":1}}', '{"constructor":{"prototype":{"x":1}}}', '{"a":1,"a":2}', '"just a string"', '1', 'null', 'true', '[]', '[{}]', ' '),
    fc.tuple(validText, fc.nat()).map(([text, cut]) => text.slice(0, text.length === 0 ? 0 : cut % text.length)),
    fc.tuple(validText, fc.nat(), fc.constantFrom('}', ']', ',', ':', '"', '\\', '\u0000', '\n', '\ud800', '{')).map(([text, at, char]) => {
      const index = text.length === 0 ? 0 : at % text.length;
      return `${text.slice(0, index)}${char}${text.slice(index)}`;
    }),
    fc.string({ unit: 'binary', maxLength: 60 }),
    fc.integer({ min: 50, max: 5000 }).chain((levels) => fc.constantFrom('array', 'object').map((kind) => nestedText(levels, kind as 'array'))),
  );

/** Percent-encodes a parameter value; hostile raw forms are passed through as they are. */
export const encode = (value: string) => encodeURIComponent(value);
const safeEncode = (value: string) => {
  try {
    return encodeURIComponent(value);
  } catch {
    // A lone surrogate: what a client would send is its CESU-8 bytes, not valid UTF-8.
    return value.replace(/[\ud800-\udfff]/g, '%ED%A0%80').replace(/[^%A-Za-z0-9]/g, (char) => `%${char.charCodeAt(0).toString(16).padStart(2, '0')}`);
  }
};

/** Raw (already encoded) parameter text no parameter should take. */
const hostileParameter = (pools: Pools, maxLength: number): fc.Arbitrary<string> =>
  fc.oneof(
    fc.constantFrom('abc', '1.5', '-1', '0', '101', '1e3', '9'.repeat(30), ' 5', '0x10', 'NaN', 'Infinity', 'true', '%5B%5D', '%00', 'a%00b', '%ED%A0%80', '%F0%9F', '%FF', '%', '%zz', '%E2%82', '..', '.', '%2F', 'a%2Fb', '%2e%2e', '%20', '+', 'null', '%F0%9F%92%A5'),
    fc.constantFrom(maxLength + 1, 1000, 20_000).map((length) => 'p'.repeat(length)),
    hostileStrings(maxLength).map(safeEncode),
    fc.constantFrom('personId', 'studyId', 'email', 'participantId', 'incentiveId', 'signupFormId').chain((name) => pools.draw(name, true).map((id) => safeEncode(id ?? 'x'))),
  );

/** Cursors that are not a valid cursor of the query: random base64, truncated or altered real ones, another query's. */
const badCursor = (pools: Pools): fc.Arbitrary<string> =>
  fc.oneof(
    fc.base64String({ maxLength: 80 }),
    fc.tuple(fc.base64String({ minLength: 4, maxLength: 60 }), fc.base64String({ minLength: 4, maxLength: 60 })).map(([a, b]) => `${a}.${b}`.replace(/=/g, '')),
    fc.tuple(pools.draw('cursor'), fc.nat()).map(([cursor, cut]) => (cursor ?? 'eyJ9.x').slice(0, 1 + (cut % Math.max(1, (cursor ?? 'eyJ9.x').length - 1)))),
    fc.tuple(pools.draw('cursor'), fc.nat(), fc.constantFrom('A', 'B', '_', '-', '.')).map(([cursor, at, char]) => {
      const text = cursor ?? 'eyJ9.x';
      const index = at % text.length;
      return `${text.slice(0, index)}${char}${text.slice(index + 1)}`;
    }),
    pools.draw('cursor').map((cursor) => `${cursor ?? ''}.extra`),
    fc.constantFrom('.', '..', 'a.', '.b', 'W10.AAAA', `${Buffer.from('[1,2]').toString('base64url')}.sig`, `${Buffer.from('{"a":1}').toString('base64url')}.sig`),
  ).map(encode);

export interface RequestOptions {
  /** The fuzzed tenant's bearer token (sent on every request). */
  token: string;
  /** Values the CSV import body is made of (text/csv operations). */
  csv?: fc.Arbitrary<string>;
}

/** Valid or hostile requests for one operation. */
export function requestArbitrary(op: DocumentedOperation, schemas: SchemaArbitraries, pools: Pools, options: RequestOptions): fc.Arbitrary<FuzzRequest> {
  const parameters = op.operation.parameters ?? [];
  const byPlace = (place: Parameter['in']) => parameters.filter((parameter) => parameter.in === place);

  // Each parameter: valid (mostly), hostile, or left out (when optional).
  type Drawn = { value: string | undefined; hostile: boolean };
  const good = (arbitrary: fc.Arbitrary<string | undefined>) => arbitrary.map((value): Drawn => ({ value, hostile: false }));
  const bad = (arbitrary: fc.Arbitrary<string | undefined>) => arbitrary.map((value): Drawn => ({ value, hostile: true }));
  const parameterValue = (parameter: Parameter): fc.Arbitrary<Drawn> => {
    const schema = schemas.resolve(parameter.schema);
    const valid = schemas.valid(schema, parameter.name).map((value) => (value === undefined ? undefined : encode(typeof value === 'string' ? value : JSON.stringify(value))));
    const maxLength = (schema.maxLength as number | undefined) ?? 200;
    const hostile = { arbitrary: bad(hostileParameter(pools, maxLength)), weight: 3 };
    const omitted = { arbitrary: good(fc.constant(undefined)), weight: 8 };
    if (parameter.name === 'startCursor') {
      const cursor = (name: string) => pools.draw(name).map((value) => (value === undefined ? undefined : encode(value)));
      return fc.oneof(omitted, { arbitrary: good(cursor(`cursor ${op.name}`)), weight: 6 }, { arbitrary: bad(cursor('cursor')), weight: 1 }, { arbitrary: bad(badCursor(pools)), weight: 3 }, hostile);
    }
    const choices: fc.WeightedArbitrary<Drawn>[] = [{ arbitrary: good(valid), weight: 12 }, hostile];
    if (!parameter.required || parameter.in === 'header') choices.push(omitted);
    return fc.oneof(...choices);
  };

  const pathParameters = byPlace('path');
  // Two ids of one path (a study and its participant) are often a pair the service made together.
  const pairName = pathParameters.length === 2 ? `${pathParameters[0]!.name}|${pathParameters[1]!.name}` : undefined;
  const independent: fc.Arbitrary<(readonly [string, Drawn])[]> = fc.tuple(...pathParameters.map((parameter) => parameterValue(parameter).map((drawn) => [parameter.name, drawn] as const)));
  const pathEntries =
    pairName === undefined
      ? independent
      : fc.oneof(
          independent,
          pools.draw(pairName).chain((pair) => {
            if (pair === undefined) return independent;
            const [first, second] = pair.split('|');
            const entries: (readonly [string, Drawn])[] = [
              [pathParameters[0]!.name, { value: encode(first!), hostile: false }],
              [pathParameters[1]!.name, { value: encode(second!), hostile: false }],
            ];
            return fc.constant(entries);
          }),
        );
  const path = pathEntries.map((entries) => {
    let url = op.path;
    for (const [name, { value }] of entries) {
      // A dot segment (also percent-encoded) is resolved by the client before sending, so the
      // request would name another path: the router never sees it as a parameter.
      const segment = value === undefined || value === '' ? 'x' : /^(\.|%2e){1,2}$/i.test(value) ? `${value}x` : value;
      url = url.replace(`{${name}}`, segment);
    }
    return { url: `/v1${url}`, hostile: entries.some(([, drawn]) => drawn.hostile) };
  });

  const queryParameters = byPlace('query');
  const query = fc
    .tuple(
      fc.tuple(...queryParameters.map((parameter) => parameterValue(parameter).map((value) => [parameter.name, value] as const))),
      // Repeated and unknown parameters.
      fc.oneof(
        { arbitrary: fc.constant<string[]>([]), weight: 8 },
        { arbitrary: fc.constantFrom(['unknown=1'], ['size=1', 'size=2'], ['startCursor=a', 'startCursor=b'], ['studyId=a', 'studyId=b'], ['a[b]=1'], ['=1'], ['&&&'], ['size[]=1'], ['%00=1']), weight: 1 },
      ),
    )
    .map(([entries, extra]) => {
      const parts = entries.filter(([, drawn]) => drawn.value !== undefined).map(([name, drawn]) => `${name}=${drawn.value}`);
      parts.push(...extra);
      return { search: parts.length > 0 ? `?${parts.join('&')}` : '', hostile: extra.length > 0 || entries.some(([, drawn]) => drawn.hostile) };
    });

  // Keys are reused now and then: the same request replays, another one is refused.
  const idempotencyKey = fc.oneof(
    { arbitrary: good(fc.constant(undefined)), weight: 10 },
    { arbitrary: good(fc.constantFrom('key-1', 'key-2', 'key-3')), weight: 1 },
    { arbitrary: good(fc.uuid()), weight: 3 },
    { arbitrary: bad(fc.constantFrom('', ' ', 'k'.repeat(256), 'caf\u00e9', '\t', 'a b')), weight: 1 },
  );
  const headers = fc.tuple(
    ...byPlace('header').map((parameter) => (parameter.name.toLowerCase() === 'idempotency-key' ? idempotencyKey : parameterValue(parameter)).map((drawn) => [parameter.name.toLowerCase(), drawn] as const)),
  );

  const body = bodyArbitrary(op, schemas, pools, options);

  return fc.tuple(path, query, headers, body).map(([url, search, headerEntries, [kind, contentType, payload]]) => {
    const requestHeaders: Record<string, string> = { authorization: `Bearer ${options.token}` };
    for (const [name, drawn] of headerEntries) if (drawn.value !== undefined) requestHeaders[name] = drawn.value;
    if (contentType !== undefined) requestHeaders['content-type'] = contentType;
    const hostile = [url.hostile && 'path', search.hostile && 'query', headerEntries.some(([, drawn]) => drawn.hostile) && 'header'].filter(Boolean);
    return {
      method: op.method,
      url: `${url.url}${search.search}`,
      headers: requestHeaders,
      ...(payload === undefined ? {} : { payload }),
      kind: hostile.length > 0 ? `${kind}, bad ${hostile.join('+')}` : kind,
    };
  });
}

type Body = readonly [kind: string, contentType: string | undefined, payload: string | undefined];

function bodyArbitrary(op: DocumentedOperation, schemas: SchemaArbitraries, pools: Pools, options: RequestOptions): fc.Arbitrary<Body> {
  const content = op.operation.requestBody?.content ?? {};
  const jsonSchema = content['application/json']?.schema;
  const csv = content['text/csv'] !== undefined;
  const mayCarryBody = op.method !== 'GET';

  const examples = jsonSchema ? examplesOf(content['application/json']!, schemas.resolve(jsonSchema)) : [];
  const fromSchema: fc.Arbitrary<unknown> = jsonSchema ? schemas.valid(jsonSchema) : fc.constant(undefined);
  // The document's own examples, their ids swapped for real ones: requests that get past the checks of meaning.
  const valid = examples.length === 0 ? fromSchema : fc.oneof({ arbitrary: fromSchema, weight: 3 }, { arbitrary: fc.constantFrom(...examples).chain((example) => withPoolIds(example, pools)), weight: 2 });
  const validText = valid.map((value) => (value === undefined ? '' : JSON.stringify(value)));
  const choices: fc.WeightedArbitrary<Body>[] = [];

  if (jsonSchema) {
    choices.push(
      { arbitrary: fc.tuple(valid, jsonTypes).map(([value, type]) => ['valid', type, JSON.stringify(value)] as const), weight: 10 },
      {
        arbitrary: fc.tuple(valid, fc.array(mutationArb(pools), { minLength: 1, maxLength: 3 }), jsonTypes).map(([value, mutations, type]) => ['mutated', type, JSON.stringify(mutate(value, mutations)) ?? 'null'] as const),
        weight: 10,
      },
      { arbitrary: fc.tuple(malformedJson(validText), jsonTypes).map(([text, type]) => ['malformed', type, text] as const), weight: 3 },
      // Near the 1 MiB limit: a long string in a field of a valid body (refused by its maxLength, or 413 past the limit).
      {
        arbitrary: fc.tuple(valid, fc.constantFrom(MiB - 4096, MiB - 64, MiB + 1, 3 * MiB)).map(([value, size]) => {
          const object = value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
          const [field] = Object.keys(object);
          const padded = JSON.stringify({ ...object, [field ?? 'padding']: '' });
          const text = padded.replace(`"${field ?? 'padding'}":""`, `"${field ?? 'padding'}":"${'z'.repeat(Math.max(0, size - padded.length))}"`);
          return ['huge', 'application/json', text] as const;
        }),
        weight: 1,
      },
    );
  }
  if (csv) {
    choices.push({ arbitrary: (options.csv ?? fc.constant('email\n')).map((text) => ['csv', 'text/csv', text] as const), weight: 10 });
    choices.push({ arbitrary: fc.tuple(fc.string({ unit: 'binary', maxLength: 200 }), fc.constantFrom('text/csv', 'text/csv; charset=utf-8')).map(([text, type]) => ['csv-garbage', type, text] as const), weight: 3 });
  }
  if (!jsonSchema && !csv) {
    // No body: none, an empty JSON object (counted as none), or a body it must refuse.
    choices.push({ arbitrary: fc.constant(['none', undefined, undefined] as const), weight: 10 });
    if (mayCarryBody) choices.push({ arbitrary: fc.constantFrom<Body>(['empty', 'application/json', ''], ['empty-object', 'application/json', '{}']), weight: 3 });
    choices.push({ arbitrary: fc.tuple(fc.jsonValue({ maxDepth: 2 }), jsonTypes).map(([value, type]) => ['unexpected', type, JSON.stringify(value) ?? 'null'] as const), weight: 2 });
  }
  if (mayCarryBody) {
    choices.push(
      { arbitrary: fc.constantFrom<Body>(['no-body', undefined, undefined], ['empty-json', 'application/json', ''], ['json-null', 'application/json', 'null']), weight: 2 },
      { arbitrary: fc.tuple(validText, wrongTypes).map(([text, type]) => ['wrong-type', type, text] as const), weight: 2 },
      { arbitrary: validText.map((text) => ['missing-type', undefined, text] as const), weight: 1 },
      { arbitrary: fc.integer({ min: 33, max: 600 }).chain((levels) => fc.constantFrom('array', 'object').map((kind) => ['deep', 'application/json', nestedText(levels, kind as 'array')] as const)), weight: 1 },
    );
  } else {
    // A GET with a body: Fastify does not read it.
    choices.push({ arbitrary: validText.map((text) => ['get-body', 'application/json', text || '{"a":1}'] as const), weight: 1 });
  }
  return fc.oneof(...choices);
}

/** The examples of a request body's media type and its schema. */
function examplesOf(media: MediaType & { example?: unknown; examples?: unknown }, schema: JsonSchema): unknown[] {
  const found: unknown[] = [];
  if (media.example !== undefined) found.push(media.example);
  if (media.examples !== null && typeof media.examples === 'object') {
    for (const example of Object.values(media.examples as Record<string, { value?: unknown }>)) if (example?.value !== undefined) found.push(example.value);
  }
  if (Array.isArray(schema.examples)) found.push(...(schema.examples as unknown[]));
  return found;
}

/** `value` with every id (a `…Id` or `…Ids` field) replaced by one of the pool of that name, drawn. */
function withPoolIds(value: unknown, pools: Pools, name?: string): fc.Arbitrary<unknown> {
  if (typeof value === 'string') {
    const pool = poolName(name);
    return pool === undefined || pool === 'cursor' ? fc.constant(value) : pools.draw(pool).map((drawn) => drawn ?? value);
  }
  if (Array.isArray(value)) return value.length === 0 ? fc.constant([]) : fc.tuple(...value.map((item) => withPoolIds(item, pools, name)));
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value);
    if (entries.length === 0) return fc.constant({});
    return fc.tuple(...entries.map(([key, item]) => withPoolIds(item, pools, key).map((drawn) => [key, drawn] as const))).map((pairs) => Object.fromEntries(pairs));
  }
  return fc.constant(value);
}

// ---------------------------------------------------------------------------------------------
// Responses

export interface Judged {
  /** Why the response breaks the contract; undefined when it keeps it. */
  problem?: string;
}

/** Checks responses against an operation's documented statuses and their response schemas. */
export class ResponseChecker {
  private readonly ajv: Ajv;
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(document: OpenApiDocument) {
    this.ajv = new Ajv({ strict: false, allErrors: true, validateFormats: true });
    addFormats(this.ajv);
    // The components, under an id every response schema's $ref is rewritten to point into.
    this.ajv.addSchema({ $id: 'openapi', components: document.components } as object);
  }

  private validator(key: string, schema: JsonSchema): ValidateFunction {
    let validate = this.validators.get(key);
    if (!validate) {
      const rewritten = JSON.parse(JSON.stringify(schema).replace(/"#\/components\//g, '"openapi#/components/')) as object;
      validate = this.ajv.compile(rewritten);
      this.validators.set(key, validate);
    }
    return validate;
  }

  judge(op: DocumentedOperation, status: number, contentType: string | undefined, body: string): Judged {
    if (status >= 500) return { problem: `a server error ${status}` };
    const documented = op.operation.responses[String(status)] ?? op.operation.responses.default;
    if (!documented) return { problem: `status ${status} is not documented (documented: ${Object.keys(op.operation.responses).join(', ')})` };
    const content = documented.content;
    if (!content || Object.keys(content).length === 0) {
      return body.length === 0 ? {} : { problem: `status ${status} documents no content, but the body is ${JSON.stringify(body.slice(0, 200))}` };
    }
    const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
    const media = content[type];
    if (!media) return { problem: `content type ${JSON.stringify(contentType)} of status ${status} is not documented (documented: ${Object.keys(content).join(', ')})` };
    if (!media.schema) return {};
    let value: unknown = body;
    if (type === 'application/json') {
      try {
        value = JSON.parse(body);
      } catch {
        return { problem: `the ${status} body is not JSON: ${JSON.stringify(body.slice(0, 200))}` };
      }
    }
    const validate = this.validator(`${op.name} ${status} ${type}`, media.schema);
    if (!validate(value)) {
      return { problem: `the ${status} body does not match its schema: ${this.ajv.errorsText(validate.errors, { dataVar: 'body' })}` };
    }
    return {};
  }
}

/** A request, printed so that it can be sent again (bodies cut past 2,000 characters, with their length). */
export function describeRequest(request: FuzzRequest): string {
  const { authorization: _authorization, ...headers } = request.headers;
  const payload =
    request.payload === undefined ? '(no body)' : request.payload.length > 2000 ? `${JSON.stringify(request.payload.slice(0, 2000))}… (${request.payload.length} characters)` : JSON.stringify(request.payload);
  const url = request.url.length > 500 ? `${request.url.slice(0, 500)}… (${request.url.length} characters)` : request.url;
  return `${request.method} ${url} [${request.kind}]\n  headers: ${JSON.stringify(headers)}\n  body: ${payload}`;
}
