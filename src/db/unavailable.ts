/**
 * Whether an error means the database cannot be reached right now (stopped, restarting, failing
 * over, or the network to it down), as opposed to a fault of the request or of the code: the
 * first is answered 503 with Retry-After, so clients back off and retry, the second 500.
 */

/** SQLSTATE classes and codes that say the server went away or is not accepting connections yet. */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300']);
/** Socket errors of a connection attempt or of a connection the server dropped. */
const UNAVAILABLE_SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
/** node-postgres reports a dropped connection and a connect timeout by message only. */
const UNAVAILABLE_MESSAGES = [/^Connection terminated/, /^timeout exceeded when trying to connect/, /^Client has encountered a connection error/, /^Connection ended unexpectedly/];

export function isDatabaseUnavailable(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; current = current.cause, depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && (UNAVAILABLE_SOCKET_CODES.has(code) || UNAVAILABLE_SQLSTATES.has(code) || code.startsWith('08'))) return true;
    if (UNAVAILABLE_MESSAGES.some((pattern) => pattern.test(current.message))) return true;
  }
  return false;
}

/** Seconds a client is told to wait before retrying while the database is unreachable. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 2;
