import { type ObjectOptions, type TSchema, Type } from '@sinclair/typebox';

/** The contract's validation-style error body: 400, and 404/409 with a resource path. */
export const ErrorBody = Type.Object(
  {
    errors: Type.Array(
      Type.Object({
        message: Type.String(),
        path: Type.Array(Type.String(), { description: 'Where the offending value is: body fields from the root (array indexes as strings), or the parameter name.' }),
      }),
    ),
  },
  { $id: 'ErrorBody', title: 'ErrorBody', examples: [{ errors: [{ message: 'Study not found', path: ['studyId'] }] }] },
);

export const errorBodyRef = Type.Ref(ErrorBody);

/** A response whose body is JSON for one status, with a description for the OpenAPI document. */
export function jsonResponse<T extends TSchema>(schema: T, description: string): T {
  return { ...schema, description } as T;
}

export function errorResponse(description: string) {
  return { ...Type.Ref(ErrorBody), description };
}

export function plainText(description: string, text: string) {
  return { description, content: { 'text/plain': { schema: { type: 'string', examples: [text] } } } };
}

/** The pageInfo of the documents' examples (cursors are opaque: any client must treat them so). */
export const examplePageInfo = {
  hasNextPage: true,
  hasPreviousPage: false,
  startCursor: 'WyIyMDI2LTExLTIyVDEwOjAwOjAwLjAwMFoiLCJzdHVfMDFKRDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAiXQ.mgF5XfEkTVTH8HRD9XuEGpAazs77QBeOZ_Es-HV8xXk',
  endCursor: 'WyIyMDI2LTExLTIwVDA5OjMwOjAwLjAwMFoiLCJzdHVfMDFKRDAwMDAwMDAwMDAwMDAwMDAwMDAwMjQiXQ.6HB69XYPoMn4aLRhvMUcKdYVZUTP3HCY9TT8mhqrwns',
};

export const PageInfo = Type.Object(
  {
    hasNextPage: Type.Boolean(),
    hasPreviousPage: Type.Boolean({ description: 'Always false: reverse pagination is not supported.' }),
    startCursor: Type.String({ description: 'The cursor of the first item of this page.' }),
    endCursor: Type.String({ description: 'Pass as startCursor to read the next page.' }),
  },
  { $id: 'PageInfo', title: 'PageInfo', examples: [examplePageInfo] },
);

export const ListQuery = Type.Object(
  {
    startCursor: Type.Optional(Type.String({ minLength: 1, maxLength: 2000, description: 'The endCursor of the previous page.' })),
    size: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 25, description: 'Items per page, 1–100.' })),
  },
  { additionalProperties: false },
);

/** A page of `item`; give `exampleItem` so the OpenAPI document shows a whole example page. */
export function paged<T extends TSchema>(item: T, title: string, exampleItem?: unknown) {
  return Type.Object(
    {
      results: Type.Array(item),
      total: Type.Integer({ description: 'Every item that matches, not only this page.' }),
      pageInfo: Type.Ref(PageInfo),
    },
    { title, ...(exampleItem === undefined ? {} : { examples: [{ results: [exampleItem], total: 26, pageInfo: examplePageInfo }] }) },
  );
}

/** A string that holds text, without NUL (PostgreSQL cannot store it; validation refuses it). */
export const Text = (options: { minLength?: number; maxLength?: number; description?: string; examples?: unknown[] } = {}) =>
  Type.String({ maxLength: 10_000, ...options });

export const IsoDate = (description?: string) => Type.String({ format: 'date', description, examples: ['2026-12-01'] });
export const IsoDateTime = (description?: string) => Type.String({ format: 'date-time', description, examples: ['2026-11-22T10:00:00.000Z'] });

/**
 * An object whose keys the client chooses (custom property values by property id), with its keys
 * bounded. TypeBox's `Type.Record(Type.String({ maxLength }), …)` compiles to
 * `patternProperties: {"^(.*)$": …}` and silently drops the key's limits, so they go into
 * `propertyNames`, which Ajv enforces (a 400 naming the offending key).
 */
export function KeyedRecord<V extends TSchema>(key: { minLength?: number; maxLength: number; pattern?: string }, value: V, options: ObjectOptions = {}) {
  return Type.Record(Type.String(), value, { ...options, propertyNames: { type: 'string', ...key } });
}
