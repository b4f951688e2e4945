import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isDatabaseUnavailable, UNAVAILABLE_RETRY_AFTER_SECONDS } from '../db/unavailable.js';
import { type AjvLikeError, validationItems } from './validation-errors.js';

/** One item of the contract's validation-style error body. */
export interface ErrorItem {
  message: string;
  path: string[];
}

/**
 * The error catalogue: every error the service answers with on purpose, its status and the
 * shape of its body. Handlers and services throw ApiError; one handler turns it into a reply.
 */
export const errorCatalogue = {
  VALIDATION: { status: 400, body: 'errors' },
  BAD_REQUEST_MESSAGE: { status: 400, body: 'message' },
  UNAUTHORIZED: { status: 401, body: 'plain', text: 'Unauthorized' },
  FORBIDDEN: { status: 403, body: 'plain', text: 'Forbidden' },
  NOT_FOUND: { status: 404, body: 'errors' },
  CONFLICT: { status: 409, body: 'errors' },
  /** An upstream (an incentive provider) failed or did not answer in time. */
  BAD_GATEWAY: { status: 502, body: 'errors' },
  PAYLOAD_TOO_LARGE: { status: 413, body: 'errors' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, body: 'errors' },
  TOO_MANY_REQUESTS: { status: 429, body: 'plain', text: 'Too Many Requests' },
  INTERNAL: { status: 500, body: 'plain', text: 'Internal Server Error' },
  UNAVAILABLE: { status: 503, body: 'plain', text: 'Service Unavailable' },
} as const;

export type ErrorCode = keyof typeof errorCatalogue;

export class ApiError extends Error {
  constructor(
    readonly code: ErrorCode,
    readonly items: ErrorItem[] = [],
    message?: string,
    /** A 403's missing right, named in its WWW-Authenticate header (the body stays the reference's plain "Forbidden"). */
    readonly missingRight?: string,
  ) {
    super(message ?? items[0]?.message ?? code);
  }

  get status(): number {
    return errorCatalogue[this.code].status;
  }
}

export const badRequest = (message: string, path: string[]) => new ApiError('VALIDATION', [{ message, path }]);
export const notFound = (resource: string, path: string[]) =>
  new ApiError('NOT_FOUND', [{ message: `${resource} not found`, path }]);
export const conflict = (message: string, path: string[]) => new ApiError('CONFLICT', [{ message, path }]);
export const draftStatusError = () => conflict('Study is not in draft status', ['studyId']);
/** The name a 403 gives the personal-data right (tokens made without it: `token create --no-pii`). */
export const PERSONAL_DATA_RIGHT = 'personal-data';
/**
 * A 403 for a key without the personal-data right that asked for something answering a question
 * about personal data: filtering or looking up by a personal value, or writing one whose
 * uniqueness check would tell whether someone else holds it.
 */
export const personalDataRequired = (what: string) => new ApiError('FORBIDDEN', [], `${what} needs the personal-data right`, PERSONAL_DATA_RIGHT);
/** A 403 for a role without `right`. */
export const forbidden = (right: string) => new ApiError('FORBIDDEN', [], `needs the right ${right}`, right);
export const badGateway = (message: string, path: string[]) => new ApiError('BAD_GATEWAY', [{ message, path }]);

export function sendError(reply: FastifyReply, error: ApiError): FastifyReply {
  const entry = errorCatalogue[error.code];
  reply.code(entry.status);
  // RFC 6750 §3.1: a 403 may name the scope (here, the right) the token lacks.
  if (error.missingRight !== undefined) reply.header('WWW-Authenticate', `Bearer error="insufficient_scope", scope="${error.missingRight}"`);
  if (entry.body === 'plain') return reply.type('text/plain; charset=utf-8').send(entry.text);
  if (entry.body === 'message') return reply.type('application/json; charset=utf-8').send({ message: error.message });
  return reply.type('application/json; charset=utf-8').send({ errors: error.items });
}

/**
 * Errors Fastify raises before any route is found (a URL it cannot decode, a path parameter
 * longer than maxParamLength), which would otherwise get a JSON body of Fastify's own shape.
 */
export function answerFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  reply.header('X-Request-Id', request.id);
  if (error.code === 'FST_ERR_BAD_URL') sendError(reply, new ApiError('VALIDATION', [{ message: 'The URL is not valid', path: [] }]));
  else if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') sendError(reply, new ApiError('VALIDATION', [{ message: 'A path parameter is too long', path: [] }]));
  else {
    request.log.error({ err: error }, 'routing failed');
    sendError(reply, new ApiError('INTERNAL'));
  }
}

export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | ApiError, request: FastifyRequest, reply: FastifyReply) => {
    if (error instanceof ApiError) {
      if (error.status >= 500) request.log.error({ err: error }, 'request failed');
      return sendError(reply, error);
    }
    if (error.validation) return sendError(reply, new ApiError('VALIDATION', validationItems(error.validation as AjvLikeError[], error.validationContext)));
    const status = error.statusCode ?? 500;
    if (status === 413) return sendError(reply, new ApiError('PAYLOAD_TOO_LARGE', [{ message: 'The request body is too large', path: [] }]));
    if (status === 415) {
      return sendError(reply, new ApiError('UNSUPPORTED_MEDIA_TYPE', [{ message: `Unsupported content type ${request.headers['content-type'] ?? ''}`.trim(), path: [] }]));
    }
    if (status >= 400 && status < 500) {
      // Fastify's own client errors: malformed JSON, empty JSON body, bad content length.
      return sendError(reply, new ApiError('VALIDATION', [{ message: error.message.replace(/^FST_\w+: /, ''), path: [] }]));
    }
    if (isDatabaseUnavailable(error)) {
      request.log.warn({ err: error }, 'database unreachable');
      reply.header('Retry-After', String(UNAVAILABLE_RETRY_AFTER_SECONDS));
      return sendError(reply, new ApiError('UNAVAILABLE'));
    }
    request.log.error({ err: error }, 'unhandled error');
    return sendError(reply, new ApiError('INTERNAL'));
  });

  app.setNotFoundHandler((_request, reply) => reply.code(404).type('text/plain; charset=utf-8').send('Not Found'));
}
