import createFetchClient, { type Client, type HeadersOptions, type Middleware } from 'openapi-fetch';
import { RecruitApiError } from './errors.js';
import type { paths } from './generated/openapi.js';
import { idempotencyKeyPaths, requestMediaTypes } from './generated/operations.js';
import { type ItemOf, type PagedInitParam, type PagedPath, type PageOf, pagedMethod } from './paging.js';
import { type RetryOptions, retryingFetch } from './retry.js';

export interface RecruitClientOptions {
  /** The API root, with its version: `http://127.0.0.1:8080/v1`. */
  baseUrl: string;
  /**
   * The bearer token (`rk_…`, from `cli workspace create` or `cli token create`), or a function
   * that answers it for each request (a token read from a vault, rotated). Without one, only the
   * public routes answer.
   */
  token?: string | (() => string | Promise<string>);
  /** The fetch to send with (default: the global fetch). */
  fetch?: (request: Request) => Promise<Response>;
  /** Retries of 429 and 503 (see RetryOptions); `false` sends each request once. */
  retries?: RetryOptions | false;
  /**
   * An `Idempotency-Key` on every POST that takes one (default `true`: a random UUID per call,
   * the same on each of that call's retries), or a function that makes the keys. `false`: none,
   * unless a call gives its own; such POSTs are then never retried.
   */
  idempotencyKeys?: boolean | (() => string);
  /** Headers sent with every request (a User-Agent, say). */
  headers?: HeadersOptions;
}

/**
 * The typed client: openapi-fetch's methods over the service's paths (`GET`, `POST`, `PUT`,
 * `PATCH`, `DELETE`: each answers `{ data }` or `{ error }`, with `response`), and the paging helpers.
 *
 * A call's own Idempotency-Key: `params: { header: { 'Idempotency-Key': key } }` (or in
 * `headers`); no key on one call: `headers: { 'Idempotency-Key': null }`.
 */
export interface RecruitClient extends Client<paths> {
  /**
   * Every page of a list (GET, cursor in the query) or a search (POST, cursor in the body's
   * `pageInfo`), from the first (or from the `startCursor` given) until `hasNextPage` is false.
   * The last page's `pageInfo.endCursor` is where to continue later (the event feeds). A page
   * that is not a success throws a RecruitApiError.
   */
  pages<Path extends PagedPath>(path: Path, ...init: PagedInitParam<Path>): AsyncGenerator<PageOf<Path>, void, undefined>;
  /** Every item of every page of a list or a search (see `pages`), one at a time. */
  paginate<Path extends PagedPath>(path: Path, ...init: PagedInitParam<Path>): AsyncGenerator<ItemOf<Path>, void, undefined>;
}

/** What the wrappers below see of a call's options: openapi-fetch's, without the types of each path. */
interface LooseInit {
  params?: { query?: Record<string, unknown>; header?: Record<string, unknown>; path?: Record<string, unknown> };
  body?: unknown;
  headers?: HeadersOptions;
  bodySerializer?: (body: unknown) => unknown;
  [option: string]: unknown;
}
interface LooseResult {
  data?: unknown;
  error?: unknown;
  response: Response;
}
type Send = (method: string, path: string, init?: LooseInit) => Promise<LooseResult>;
type Call = (path: string, init?: LooseInit) => Promise<LooseResult>;

interface LoosePage {
  results: unknown[];
  pageInfo: { hasNextPage: boolean; endCursor: string };
}

export function createClient(options: RecruitClientOptions): RecruitClient {
  const baseFetch = options.fetch ?? ((request: Request) => globalThis.fetch(request));
  const inner = createFetchClient<paths>({
    baseUrl: options.baseUrl,
    fetch: options.retries === false ? baseFetch : retryingFetch(baseFetch, options.retries),
    ...(options.headers !== undefined ? { headers: options.headers } : {}),
  });
  const { token } = options;
  if (token !== undefined) inner.use(bearer(token));

  const makeKey = options.idempotencyKeys === false ? undefined : typeof options.idempotencyKeys === 'function' ? options.idempotencyKeys : () => globalThis.crypto.randomUUID();

  /** A call's options with what the service expects added: an Idempotency-Key, a non-JSON body sent as is. */
  function prepare(method: string, path: string, init: LooseInit | undefined): LooseInit | undefined {
    let prepared = init;
    const mediaType = requestMediaTypes[`${method} ${path}`];
    if (mediaType !== undefined && prepared?.body !== undefined && prepared.bodySerializer === undefined) {
      // openapi-fetch would send JSON; a CSV (a string, Blob or stream) goes as it is, under its media type unless the call names one.
      const headers = namesHeader(prepared, 'content-type') ? prepared.headers : withHeader(prepared.headers, 'Content-Type', mediaType);
      prepared = { ...prepared, bodySerializer: (body) => body, ...(headers !== undefined ? { headers } : {}) };
    }
    if (method === 'post' && makeKey !== undefined && idempotencyKeyPaths.has(path) && !namesHeader(prepared, 'idempotency-key')) {
      // Chosen here, before openapi-fetch builds the Request: every retry resends that Request, key and all.
      prepared = { ...prepared, headers: withHeader(prepared?.headers, 'Idempotency-Key', makeKey()) };
    }
    return prepared;
  }

  // openapi-fetch's typed methods are generic over every path; one loose view of `request`
  // serves the wrappers, which hand each call on unchanged but for prepare().
  const send = inner.request as unknown as Send;
  const sender =
    (method: string): Call =>
    (path, init) =>
      send(method, path, prepare(method, path, init));

  async function* pages(path: PagedPath, init?: LooseInit): AsyncGenerator<LoosePage, void, undefined> {
    const method = pagedMethod(path);
    // A key given for the first page would be refused on the next (same key, another body): each page gets its own.
    const base = withoutIdempotencyKey(init);
    let cursor = method === 'get' ? base?.params?.query?.startCursor : pageInfoOf(base?.body).startCursor;
    for (;;) {
      const pageInit: LooseInit =
        method === 'get'
          ? { ...base, params: { ...base?.params, query: { ...base?.params?.query, startCursor: cursor } } }
          : { ...base, body: withBodyCursor(base?.body, cursor) };
      const { data, error, response } = await send(method, path, prepare(method, path, pageInit));
      if (!response.ok) throw new RecruitApiError(response, error);
      const page = data as LoosePage;
      yield page;
      if (!page.pageInfo.hasNextPage) return;
      if (!page.pageInfo.endCursor || page.pageInfo.endCursor === cursor) {
        throw new Error(`${method.toUpperCase()} ${path}: hasNextPage without a new endCursor; stopping rather than reading the same page again`);
      }
      cursor = page.pageInfo.endCursor;
    }
  }

  async function* paginate(path: PagedPath, init?: LooseInit): AsyncGenerator<unknown, void, undefined> {
    for await (const page of pages(path, init)) yield* page.results;
  }

  const client = {
    request: (method: string, path: string, init?: LooseInit) => sender(method.toLowerCase())(path, init),
    GET: sender('get'),
    PUT: sender('put'),
    POST: sender('post'),
    DELETE: sender('delete'),
    OPTIONS: sender('options'),
    HEAD: sender('head'),
    PATCH: sender('patch'),
    TRACE: sender('trace'),
    use: inner.use,
    eject: inner.eject,
    pages,
    paginate,
  };
  // The same functions under their typed signatures (RecruitClient), which the loose ones above implement.
  return client as unknown as RecruitClient;
}

function bearer(token: NonNullable<RecruitClientOptions['token']>): Middleware {
  return {
    async onRequest({ request }) {
      // A call that sets its own Authorization keeps it.
      if (request.headers.has('authorization')) return;
      request.headers.set('Authorization', `Bearer ${typeof token === 'function' ? await token() : token}`);
    },
  };
}

/** Whether the call names header `name` (lowercase) itself: a value, or null to send none. */
function namesHeader(init: LooseInit | undefined, name: string): boolean {
  const given = init?.params?.header;
  if (given && Object.entries(given).some(([key, value]) => key.toLowerCase() === name && value !== undefined && value !== null)) return true;
  const headers = init?.headers;
  if (headers === undefined) return false;
  if (headers instanceof Headers) return headers.has(name);
  if (Array.isArray(headers)) return headers.some(([key]) => key.toLowerCase() === name);
  return Object.entries(headers).some(([key, value]) => key.toLowerCase() === name && value !== undefined);
}

/** `headers` with `name: value` added. */
function withHeader(headers: HeadersOptions | undefined, name: string, value: string): HeadersOptions {
  if (headers === undefined) return { [name]: value };
  if (headers instanceof Headers) {
    const copy = new Headers(headers);
    copy.set(name, value);
    return copy;
  }
  if (Array.isArray(headers)) return [...headers, [name, value]];
  return { ...headers, [name]: value };
}

function withoutIdempotencyKey(init: LooseInit | undefined): LooseInit | undefined {
  if (init === undefined) return undefined;
  const isKey = (key: string) => key.toLowerCase() === 'idempotency-key';
  const { params, headers } = init;
  let kept: HeadersOptions | undefined = headers;
  if (headers instanceof Headers) {
    kept = new Headers(headers);
    kept.delete('idempotency-key');
  } else if (Array.isArray(headers)) kept = headers.filter(([key]) => !isKey(key));
  else if (headers !== undefined) kept = Object.fromEntries(Object.entries(headers).filter(([key]) => !isKey(key)));
  const header = params?.header ? Object.fromEntries(Object.entries(params.header).filter(([key]) => !isKey(key))) : undefined;
  return { ...init, ...(params ? { params: { ...params, header } } : {}), ...(kept !== undefined ? { headers: kept } : {}) };
}

function pageInfoOf(body: unknown): { startCursor?: unknown; [field: string]: unknown } {
  const pageInfo = typeof body === 'object' && body !== null ? (body as { pageInfo?: unknown }).pageInfo : undefined;
  return typeof pageInfo === 'object' && pageInfo !== null ? (pageInfo as Record<string, unknown>) : {};
}

/** A search body with `pageInfo.startCursor` set (or left out, for the first page). */
function withBodyCursor(body: unknown, cursor: unknown): Record<string, unknown> {
  const fields = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
  const pageInfo = { ...pageInfoOf(body), startCursor: cursor };
  if (cursor === undefined) delete pageInfo.startCursor;
  return Object.keys(pageInfo).length > 0 ? { ...fields, pageInfo } : { ...fields };
}
