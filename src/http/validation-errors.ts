import type { ErrorItem } from './errors.js';

/**
 * An Ajv error as the validators report it (installValidation compiles with `verbose`, so each
 * error also carries the schema it broke and that schema's parent).
 */
export interface AjvLikeError {
  instancePath?: string;
  schemaPath?: string;
  keyword?: string;
  message?: string;
  params?: Record<string, unknown>;
  /** The value of the keyword broken: for `anyOf`, the branches. */
  schema?: unknown;
  /** The schema holding the keyword broken: for a `type` error, the one that may also list the values (its `enum` or `const`). */
  parentSchema?: unknown;
  /** Set by Ajv on the error of a `propertyNames` rule: the offending key of the object at instancePath. */
  propertyName?: string;
}

const contextLocation: Record<string, string> = { body: 'body', params: 'path', querystring: 'query', headers: 'header' };

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A value as a message lists it: text bare, anything else as JSON. */
const shown = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));

/** The values a schema allows, when it is a list of them (`enum`, `const`, or `type: "null"`); undefined otherwise. */
function valuesOf(schema: unknown): unknown[] | undefined {
  if (!isRecord(schema)) return undefined;
  if (Array.isArray(schema.enum)) return schema.enum;
  if (Object.hasOwn(schema, 'const')) return [schema.const];
  if (schema.type === 'null' && Object.keys(schema).every((key) => key === 'type' || key === 'description')) return [null];
  return undefined;
}

/** Whether a schema lists its values (`enum` or `const`): a value of another type is then told the list too. */
const listsValues = (schema: unknown) => isRecord(schema) && (Array.isArray(schema.enum) || Object.hasOwn(schema, 'const'));

/** "must be one of: A, B, C", with null said apart ("…, or null") as it is no value of the list. */
function oneOf(values: unknown[]): string {
  const listed = [...new Set(values.filter((value) => value !== null).map(shown))];
  const orNull = values.includes(null) ? ', or null' : '';
  if (listed.length === 0) return 'must be null';
  return listed.length === 1 ? `must be ${listed[0]}${orNull}` : `must be one of: ${listed.join(', ')}${orNull}`;
}

/** The root a schema path starts from: `#` for the schema compiled, a shared schema's $id for one reached by $ref. */
const schemaRoot = (schemaPath: string) => schemaPath.split('/')[0];

const within = (instancePath: string, container: string) => instancePath === container || instancePath.startsWith(`${container}/`);

/**
 * Ajv's errors reduced to one per mistake, said as the client can act on it:
 *
 * - a value outside a list of values (`enum`; TypeBox's union of literals, which is an `anyOf` of
 *   `const`s and gave an error per literal plus one for the `anyOf`) is one error naming the
 *   values: "must be one of: DRAFT, ACTIVE, PAUSED, CLOSED"; a value of the wrong type there too;
 * - an `anyOf` of other shapes keeps the errors of the branch the value came closest to (the
 *   deepest, among branches of the value's type), so a rating of 7 is "must be <= 5 or null";
 * - an `if` error ("must match "else" schema") only wraps the errors of the branch taken, which
 *   say what is wrong: it is dropped.
 *
 * Ajv reports an `anyOf`'s branch errors just before the `anyOf` error itself (a nested one's
 * before its parent's), so one pass replaces each `anyOf` and the errors before it that fall
 * within it by what they mean.
 */
export function reduceValidationErrors(errors: readonly AjvLikeError[]): AjvLikeError[] {
  const reduced: AjvLikeError[] = [];
  for (const error of errors) {
    if (error.keyword === 'anyOf') {
      const branchErrors: AjvLikeError[] = [];
      while (reduced.length > 0 && belongsTo(reduced.at(-1)!, error)) branchErrors.unshift(reduced.pop()!);
      reduced.push(...reduceAnyOf(error, branchErrors));
    } else if (error.keyword === 'enum' || error.keyword === 'const' || (error.keyword === 'type' && listsValues(error.parentSchema))) {
      const values = valuesOf(error.keyword === 'type' ? error.parentSchema : { [error.keyword]: error.schema ?? error.params?.allowedValues ?? error.params?.allowedValue });
      reduced.push({ ...error, keyword: 'values', message: oneOf(values ?? []) });
    } else {
      reduced.push(error);
    }
  }
  const meaningful = reduced.filter((error) => error.keyword !== 'if');
  return meaningful.length > 0 ? meaningful : reduced;
}

/** Whether an error comes from one of the branches of an `anyOf` error reported after it. */
function belongsTo(candidate: AjvLikeError, anyOf: AjvLikeError): boolean {
  if (!within(candidate.instancePath ?? '', anyOf.instancePath ?? '')) return false;
  const path = candidate.schemaPath ?? '';
  const anyOfPath = anyOf.schemaPath ?? '';
  // A branch that is a $ref reports paths from the referenced schema's root: within the anyOf
  // by its instance path alone. A path from the anyOf's own root must run through the anyOf.
  return schemaRoot(path) !== schemaRoot(anyOfPath) || path.startsWith(`${anyOfPath}/`);
}

/** The branch an error of an `anyOf`'s branches came from (its index in the schema path), or -1 from a $ref'd schema. */
function branchOf(error: AjvLikeError, anyOf: AjvLikeError): number {
  const prefix = `${anyOf.schemaPath ?? ''}/`;
  const path = error.schemaPath ?? '';
  return path.startsWith(prefix) ? Number(path.slice(prefix.length).split('/')[0]) : -1;
}

function reduceAnyOf(anyOf: AjvLikeError, branchErrors: AjvLikeError[]): AjvLikeError[] {
  const branches = Array.isArray(anyOf.schema) ? (anyOf.schema as unknown[]) : [];
  const listed = branches.map(valuesOf);
  if (branches.length > 0 && listed.every((values) => values !== undefined)) {
    return [{ ...anyOf, keyword: 'values', message: oneOf(listed.flat()) }];
  }
  const at = anyOf.instancePath ?? '';
  const byBranch = new Map<number, AjvLikeError[]>();
  for (const error of branchErrors) {
    const branch = branchOf(error, anyOf);
    byBranch.set(branch, [...(byBranch.get(branch) ?? []), error]);
  }
  // A branch whose only complaint is the value's type at the anyOf itself was not the one meant.
  const wrongType = (errors: AjvLikeError[]) => errors.every((error) => error.keyword === 'type' && error.instancePath === at);
  const candidates = [...byBranch.values()].filter((errors) => !wrongType(errors));
  if (candidates.length === 0) {
    const types = [...byBranch.values()].flat().map((error) => error.params?.type).filter((type) => type !== undefined);
    return [{ ...anyOf, keyword: 'type', message: types.length > 0 ? `must be ${[...new Set(types.flat().map(String))].join(' or ')}` : (anyOf.message ?? 'is invalid') }];
  }
  const depth = (errors: AjvLikeError[]) => Math.max(...errors.map((error) => (error.instancePath ?? '').split('/').length));
  const chosen = candidates.reduce((best, errors) => (depth(errors) > depth(best) ? errors : best));
  const nullable = listed.some((values) => values?.length === 1 && values[0] === null);
  if (nullable && chosen.length === 1 && chosen[0]!.instancePath === at && chosen[0]!.keyword !== 'values') {
    return [{ ...chosen[0]!, message: `${chosen[0]!.message ?? 'is invalid'} or null` }];
  }
  return chosen;
}

/** An Ajv error as the contract's {message, path}: path from the body's root, array indexes as strings. */
export function validationItem(error: AjvLikeError, context: string | undefined): ErrorItem {
  const path = (error.instancePath ?? '')
    .split('/')
    .slice(1)
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'));
  // Headers arrive lowercased; name them as they are documented (Idempotency-Key).
  if (context === 'headers' && path[0] !== undefined) path[0] = path[0].replace(/(^|-)([a-z])/g, (_match, dash: string, letter: string) => dash + letter.toUpperCase());
  const params = error.params ?? {};
  let message = error.message ?? 'is invalid';
  if (typeof error.propertyName === 'string') {
    path.push(error.propertyName);
    return { message: `The property name ${message}`, path };
  }
  if (error.keyword === 'additionalProperties' && typeof params.additionalProperty === 'string') {
    path.push(params.additionalProperty);
    message = 'is not a known field';
  } else if (error.keyword === 'required' && typeof params.missingProperty === 'string') {
    path.push(params.missingProperty);
    message = 'is required';
  }
  const where = contextLocation[context ?? 'body'] ?? 'body';
  if (path.length === 0) return { message: `${where === 'body' ? 'The request body' : 'The request'} ${message}`, path };
  return { message: `${path.at(-1)} ${message}`, path };
}

/** The contract's error items for a failed validation: one per mistake (reduceValidationErrors), each said once. */
export function validationItems(errors: readonly AjvLikeError[], context: string | undefined): ErrorItem[] {
  // A broken `propertyNames` rule comes as two errors: the rule the key broke (which names
  // the key) and a generic "property name must be valid"; the first says it all.
  const named = errors.some((item) => typeof item.propertyName === 'string');
  const items = reduceValidationErrors(errors.filter((item) => !(named && item.keyword === 'propertyNames'))).map((item) => validationItem(item, context));
  const seen = new Set<string>();
  return items.filter((item) => {
    const key = JSON.stringify(item);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
