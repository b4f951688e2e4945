/** How the client retries answers of 429 (rate limit) and 503 (the service's database is unavailable). */
export interface RetryOptions {
  /** Retries after the first attempt (default 3); 0 never retries. */
  retries?: number;
  /** The first wait when the answer names no `Retry-After` (default 500 ms); it doubles on each retry, with jitter. */
  minDelayMs?: number;
  /**
   * The longest wait (default 60 s, the service's default rate-limit window). A `Retry-After`
   * beyond it is not waited for: that answer is returned, so the caller decides.
   */
  maxDelayMs?: number;
  /** Called before each wait: for logging. */
  onRetry?: (retry: RetryEvent) => void;
}

export interface RetryEvent {
  request: Request;
  response: Response;
  /** 1 for the first retry. */
  retry: number;
  delayMs: number;
}

const retriedStatuses = new Set([429, 503]);

/**
 * Methods that may be sent again without an Idempotency-Key. PUT, DELETE and PATCH set what they
 * name (the service's PATCH bodies are values, not increments), so sending one again leaves the
 * same state; a POST creates or acts, so it is retried only with a key, which makes the service
 * answer a repeat with the first answer instead of acting twice.
 */
const repeatableMethods = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'PATCH']);

/** Whether `request` may be sent again: a repeatable method, or a POST carrying an Idempotency-Key. */
export function mayRetry(request: Request): boolean {
  return repeatableMethods.has(request.method) || (request.method === 'POST' && (request.headers.get('idempotency-key') ?? '') !== '');
}

/**
 * The wait a `Retry-After` header asks for, in milliseconds: delay-seconds or an HTTP date
 * (RFC 9110 §10.2.3). Undefined when absent or unreadable.
 */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  if (header === null) return undefined;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  // A date must name a weekday or month: Date.parse alone reads "12" or "1.5" as years.
  if (!/[a-z]/i.test(value)) return undefined;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * A fetch that sends a request again after a 429 or 503, when `mayRetry` allows: after the
 * answer's `Retry-After`, or else after an exponential backoff with jitter, at most `retries`
 * times. The request is cloned for each attempt, so its body and headers (its Idempotency-Key
 * too) are the same every time. Aborting the request's signal ends the wait.
 */
export function retryingFetch(fetchImpl: (request: Request) => Promise<Response>, options: RetryOptions = {}): (request: Request) => Promise<Response> {
  const retries = Math.max(0, Math.floor(options.retries ?? 3));
  const minDelayMs = options.minDelayMs ?? 500;
  const maxDelayMs = options.maxDelayMs ?? 60_000;
  return async (request) => {
    const repeatable = retries > 0 && mayRetry(request);
    for (let attempt = 0; ; attempt++) {
      const last = !repeatable || attempt >= retries;
      // The last attempt may consume the original; the others send a copy (a body is read once).
      const response = await fetchImpl(last ? request : request.clone());
      if (last || !retriedStatuses.has(response.status)) return response;
      const asked = retryAfterMs(response.headers.get('retry-after'));
      if (asked !== undefined && asked > maxDelayMs) return response;
      const backoff = Math.min(maxDelayMs, minDelayMs * 2 ** attempt);
      const delayMs = asked ?? backoff / 2 + (Math.random() * backoff) / 2;
      options.onRetry?.({ request, response, retry: attempt + 1, delayMs });
      // Read nothing more of the refused answer: cancelling its body frees the connection.
      await response.body?.cancel().catch(() => undefined);
      await sleep(delayMs, request.signal);
    }
  };
}

function sleep(ms: number, signal: AbortSignal | null): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason as Error);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
