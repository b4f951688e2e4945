import type { MaybeOptionalInit } from 'openapi-fetch';
import type { paths } from './generated/openapi.js';
import { pagedOperations } from './generated/operations.js';

/**
 * Which operations are paged, worked out from the generated types alone: an operation whose 200
 * answer is `{ results: [...], pageInfo: { hasNextPage, endCursor } }` and that takes a cursor, in
 * the query (`startCursor`, the lists) or in the body (`pageInfo.startCursor`, the searches).
 */

interface PageShape {
  results: unknown[];
  pageInfo: { hasNextPage: boolean; endCursor: string };
}

type JsonOk<Operation> = Operation extends { responses: { 200: { content: { 'application/json': infer Body } } } } ? Body : never;

type QueryOf<Operation> = Operation extends { parameters: { query?: infer Query } } ? NonNullable<Query> : never;
type JsonBodyOf<Operation> = Operation extends { requestBody?: { content: { 'application/json': infer Body } } } ? NonNullable<Body> : never;
type PageInfoOf<Body> = Body extends { pageInfo?: infer PageInfo } ? NonNullable<PageInfo> : never;

/** `[never]` is checked apart: `keyof never` is every key, so a missing query would pass. */
type HasKey<T, Key extends string> = [T] extends [never] ? false : Key extends keyof T ? true : false;

type IsPage<Operation> = [JsonOk<Operation>] extends [never] ? false : JsonOk<Operation> extends PageShape ? true : false;

/** GET lists: the cursor travels in the query, `?startCursor=…&size=…`. */
export type ListPath = {
  [Path in keyof paths]: paths[Path] extends { get: infer Operation }
    ? IsPage<Operation> extends true
      ? HasKey<QueryOf<Operation>, 'startCursor'> extends true
        ? Path
        : never
      : never
    : never;
}[keyof paths];

/** POST searches: the cursor travels in the body, `{ ..., pageInfo: { startCursor, size } }`. */
export type SearchPath = {
  [Path in keyof paths]: paths[Path] extends { post: infer Operation }
    ? IsPage<Operation> extends true
      ? HasKey<PageInfoOf<JsonBodyOf<Operation>>, 'startCursor'> extends true
        ? Path
        : never
      : never
    : never;
}[keyof paths];

/** Every paged operation's path: the lists and the searches. */
export type PagedPath = ListPath | SearchPath;

type PagedMethod<Path extends PagedPath> = Path extends SearchPath ? 'post' : 'get';
type PagedOperation<Path extends PagedPath> = paths[Path][PagedMethod<Path>];

/** One page of `Path`'s answer, as the service sends it. */
export type PageOf<Path extends PagedPath> = JsonOk<PagedOperation<Path>>;
/** One item of `Path`'s pages. */
export type ItemOf<Path extends PagedPath> = PageOf<Path> extends { results: (infer Item)[] } ? Item : never;

/** The options of the first page: those of the GET or POST call itself (query, body, path parameters, headers). */
export type PagedInit<Path extends PagedPath> = MaybeOptionalInit<paths[Path], PagedMethod<Path>>;
export type PagedInitParam<Path extends PagedPath> = undefined extends PagedInit<Path> ? [init?: PagedInit<Path>] : [init: PagedInit<Path>];

// The run-time table (generated from the same document) must name the same operations with the
// same methods as the types: this fails to compile when they disagree.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Assert<Condition extends true> = Condition;
type RuntimePaged = { [Path in keyof typeof pagedOperations]: (typeof pagedOperations)[Path] };
type TypedPaged = { [Path in PagedPath]: PagedMethod<Path> };
type _PagedTablesAgree = Assert<Same<RuntimePaged, TypedPaged>>;

/** The method that pages `path`, from the generated table. */
export function pagedMethod(path: PagedPath): 'get' | 'post' {
  return pagedOperations[path];
}
