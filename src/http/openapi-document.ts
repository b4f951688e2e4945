import { createHash } from 'node:crypto';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { setRateLimitHeaders } from './auth.js';
import { ApiError, sendError } from './errors.js';
import { apiPrefix } from './openapi.js';
import type { RateLimiter } from './rate-limit.js';

const compressGzip = promisify(gzip);
const compressBrotli = promisify(brotliCompress);

interface Prepared {
  identity: Buffer;
  gzip: Buffer;
  br: Buffer;
  etag: string;
}

/** The encoding the client takes that costs the fewest bytes: br, then gzip, else none. */
export function chooseEncoding(acceptEncoding: string | undefined): 'br' | 'gzip' | 'identity' {
  const accepted = new Map<string, number>();
  for (const part of (acceptEncoding ?? '').toLowerCase().split(',')) {
    const [name = '', ...parameters] = part.trim().split(';');
    const q = parameters.map((parameter) => /^\s*q=([\d.]+)\s*$/.exec(parameter)?.[1]).find((value) => value !== undefined);
    if (name) accepted.set(name.trim(), q === undefined ? 1 : Number(q));
  }
  const weight = (name: string) => accepted.get(name) ?? (accepted.has('*') ? accepted.get('*')! : 0);
  if (weight('br') > 0) return 'br';
  if (weight('gzip') > 0) return 'gzip';
  return 'identity';
}

/**
 * GET /v1/openapi.json, public: the API's OpenAPI document (about 720 KB). Issue 32: built and
 * serialized on every request, unthrottled, 16 loops of it moved another workspace's median to
 * 920 ms. It is now serialized and compressed (gzip, brotli, off the event loop) once, on the first
 * request; answered with an ETag, so a client that has it gets a 304, and Cache-Control; and each
 * client address draws on a budget of its own (OPENAPI_RATE_LIMIT_MAX per rate-limit window),
 * past which it gets the catalogue's 429 with Retry-After.
 */
/** The longest a refused request for the document waits for its 429. */
const REFUSAL_PAUSE_MS = 1_000;

export function installOpenApiDocument(app: FastifyInstance, options: { limiter: RateLimiter; max: number }): void {
  const limiter = options.limiter.withBudget({ name: 'openapi', max: options.max });
  let prepared: Promise<Prepared> | undefined;
  const prepare = async (): Promise<Prepared> => {
    const identity = Buffer.from(JSON.stringify(app.swagger()));
    const [gzipped, brotli] = await Promise.all([
      compressGzip(identity, { level: 9 }),
      compressBrotli(identity, { params: { [constants.BROTLI_PARAM_QUALITY]: 9, [constants.BROTLI_PARAM_SIZE_HINT]: identity.length } }),
    ]);
    return { identity, gzip: gzipped, br: brotli, etag: `"${createHash('sha256').update(identity).digest('base64url').slice(0, 32)}"` };
  };

  // The budget is drawn on in the route's onRequest hook, the first thing that runs after the
  // request id: a refusal skips validation, the preHandler hooks and the handler (16 loops of this
  // document from one address are refused hundreds of times a second, on the event loop every
  // other workspace's request waits for).
  const guard = async (request: FastifyRequest, reply: FastifyReply) => {
    const decision = await limiter.consume(`address:${request.ip}`);
    setRateLimitHeaders(reply, decision);
    if (!decision.allowed) {
      reply.header('Retry-After', decision.retryAfterSeconds);
      // Answered after a pause (at most REFUSAL_PAUSE_MS, never past Retry-After): a client that
      // loops without reading Retry-After was refused ~24,000 times in 5 s by 16 loops, each a
      // request parsed and answered on the event loop every other workspace waits for; paused, a
      // loop sends about one a second. The socket waits, not the event loop.
      await new Promise((resolve) => setTimeout(resolve, Math.min(REFUSAL_PAUSE_MS, decision.retryAfterSeconds * 1000)));
      return sendError(reply, new ApiError('TOO_MANY_REQUESTS'));
    }
  };

  app.get(`${apiPrefix}/openapi.json`, { schema: { hide: true }, config: { public: true }, onRequest: guard }, async (request, reply) => {
    prepared ??= prepare();
    prepared.catch(() => (prepared = undefined));
    const document = await prepared;
    reply.header('ETag', document.etag).header('Cache-Control', 'public, max-age=300, must-revalidate').header('Vary', 'Accept-Encoding');
    const ifNoneMatch = request.headers['if-none-match'];
    if (ifNoneMatch && (ifNoneMatch.trim() === '*' || ifNoneMatch.split(',').some((tag) => tag.trim().replace(/^W\//, '') === document.etag))) {
      return reply.code(304).send();
    }
    const encoding = chooseEncoding(request.headers['accept-encoding']);
    if (encoding !== 'identity') reply.header('Content-Encoding', encoding);
    return reply.type('application/json; charset=utf-8').send(document[encoding]);
  });
}
