/** One item of the service's error body `{ errors: [{ message, path }] }`. */
export interface ErrorItem {
  message: string;
  /** Where the offending value is: a body field from the root (array indexes as strings), or a parameter's name. */
  path: string[];
}

/**
 * An answer of status 400 or above, thrown by `unwrap` and by the paging helpers.
 *
 * The service answers errors in three shapes (see the OpenAPI document): `{ errors: [{ message,
 * path }] }` (400, 404, 409, 413, 415, 502), `{ message }` (the reference's 400 "emails field
 * cannot be empty") and plain text (401, 403, 429, 500, 503). `errors` holds every shape as items;
 * `body` is the body as it came.
 */
export class RecruitApiError extends Error {
  override readonly name = 'RecruitApiError';
  readonly status: number;
  readonly errors: ErrorItem[];
  /** The parsed JSON body, or the text when it is not JSON, or undefined when empty. */
  readonly body: unknown;
  /** `X-Request-Id` of the answer: the service logs it with the request. */
  readonly requestId: string | undefined;
  readonly response: Response;

  constructor(response: Response, body: unknown) {
    const errors = errorItems(body, response);
    const where = response.url ? ` ${new URL(response.url).pathname}` : '';
    const details = errors.map((item) => (item.path.length > 0 ? `${item.message} (${item.path.join('.')})` : item.message)).join('; ');
    super(`${response.status}${where}: ${details}`);
    this.status = response.status;
    this.errors = errors;
    this.body = body;
    this.requestId = response.headers.get('x-request-id') ?? undefined;
    this.response = response;
  }
}

function errorItems(body: unknown, response: Response): ErrorItem[] {
  if (typeof body === 'object' && body !== null) {
    const { errors, message } = body as { errors?: unknown; message?: unknown };
    if (Array.isArray(errors)) {
      return errors.map((item: unknown) => {
        const { message: itemMessage, path } = (item ?? {}) as { message?: unknown; path?: unknown };
        return {
          message: typeof itemMessage === 'string' ? itemMessage : JSON.stringify(item),
          path: Array.isArray(path) ? path.map(String) : [],
        };
      });
    }
    if (typeof message === 'string') return [{ message, path: [] }];
  }
  if (typeof body === 'string' && body.trim() !== '') return [{ message: body.trim(), path: [] }];
  return [{ message: response.statusText || `HTTP ${response.status}`, path: [] }];
}

/** What every call of the client answers (openapi-fetch's result): `data` on success, `error` otherwise. */
export interface CallResult<Data> {
  data?: Data;
  error?: unknown;
  response: Response;
}

/**
 * The data of a successful call, or a RecruitApiError for any other answer: for code that would
 * rather throw than check `error` after each call.
 *
 * ```ts
 * const study = unwrap(await api.GET('/studies/{studyId}', { params: { path: { studyId } } }));
 * ```
 */
export function unwrap<Data>(result: CallResult<Data>): Data {
  if (!result.response.ok) throw new RecruitApiError(result.response, result.error);
  // A success without a body (204) has no data: its type is then `never` or undefined already.
  return result.data as Data;
}
