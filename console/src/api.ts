import { createClient, type ErrorItem, RecruitApiError, type RecruitClient } from '@recruit-ops/sdk/browser';

export type { RecruitClient };

/** The API of the server that serves the console: the same origin, so the policy's connect-src 'self' holds. */
export const apiBaseUrl = `${location.origin}/v1`;

/** The typed client (the SDK's) for one token. Every call the console makes goes through one of these. */
export function createApi(token: string): RecruitClient {
  // Two retries of 429/503 at most: a person is waiting, and the error says what happened.
  return createClient({ baseUrl: apiBaseUrl, token, retries: { retries: 2, maxDelayMs: 5_000 } });
}

/**
 * The typed client of a signed-in session: the browser sends the session cookie (same origin),
 * and every call carries the session's CSRF token, which the API requires on writes.
 */
export function createSessionApi(csrfToken: string): RecruitClient {
  return createClient({ baseUrl: apiBaseUrl, headers: { 'X-CSRF-Token': csrfToken }, retries: { retries: 2, maxDelayMs: 5_000 } });
}

/** A client without credentials: the sign-in calls, before there is a session. */
export function createVisitorApi(): RecruitClient {
  return createClient({ baseUrl: apiBaseUrl, retries: false });
}

/**
 * A failed call in words: `summary` for the page, `fields` for the form fields that caused it
 * (each item's `path` is where the offending value is, as the API's 400/404/409 bodies say).
 */
export interface Problem {
  /** The HTTP status, or 0 when the server was not reached. */
  status: number;
  summary: string;
  fields: ErrorItem[];
  /** X-Request-Id of the answer: the server's log line of that request has it. */
  requestId?: string;
}

/** Turns what a call threw (a RecruitApiError from `unwrap`, a network failure, a bug) into a Problem. */
export function describeProblem(error: unknown): Problem {
  if (error instanceof RecruitApiError) {
    const requestId = error.requestId;
    const withId = (summary: string): Problem => ({ status: error.status, summary, fields: [], ...(requestId ? { requestId } : {}) });
    switch (error.status) {
      case 401:
        return withId('This token was not accepted: it is wrong, revoked, or its user is deactivated.');
      case 403:
        return withId('Your role may not do this.');
      case 429: {
        const retryAfter = error.response.headers.get('retry-after');
        return withId(`Too many requests for this token. Try again${retryAfter ? ` in ${retryAfter} s` : ' shortly'}.`);
      }
      default:
        if (error.status >= 500) return withId(`The server failed to answer (${error.status}).${requestId ? ` Request id ${requestId}.` : ''}`);
    }
    const located = error.errors.filter((item) => item.path.length > 0);
    const summary = error.errors.map((item) => item.message).join(' ');
    return { status: error.status, summary: summary || `The request was refused (${error.status}).`, fields: located, ...(requestId ? { requestId } : {}) };
  }
  if (error instanceof TypeError) return { status: 0, summary: 'The server could not be reached. Check the connection and try again.', fields: [] };
  return { status: 0, summary: error instanceof Error ? error.message : String(error), fields: [] };
}

/**
 * The message for the field at `path` (`['studyPlan', 'name']`), if the problem names it or a
 * value inside it (`['studyPlan', 'incentive', 'amount']` belongs to `['studyPlan', 'incentive']`).
 */
export function fieldMessage(problem: Problem | undefined, path: readonly string[]): string | undefined {
  const found = problem?.fields.filter((item) => path.every((part, index) => item.path[index] === part));
  return found && found.length > 0 ? found.map((item) => item.message).join(' ') : undefined;
}

/** The problem's items that no field of the form shows (`shownPaths`): the page shows them in its notice. */
export function unplacedMessages(problem: Problem, shownPaths: readonly (readonly string[])[]): string[] {
  return problem.fields
    .filter((item) => !shownPaths.some((path) => path.every((part, index) => item.path[index] === part)))
    .map((item) => `${item.message} (${item.path.join('.')})`);
}
