import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { LRUCache } from 'lru-cache';
import type { UserRole } from '../db/schema.js';
import { ApiError, forbidden, sendError } from './errors.js';
import type { RateLimitDecision, RateLimiter } from './rate-limit.js';
import { effectiveRights, type Right } from './rights.js';
import { isWrite, presentsCsrfToken, sessionDigest, sessionSecretOf } from './session-cookie.js';
import { digestToken, parseToken } from './tokens.js';

/** Who is calling: the token's user, its workspace and what the token may see. */
export interface Principal {
  workspaceId: string;
  userId: string;
  /** The API key's id, or for a console session the session's (`ses_…`). */
  tokenId: string;
  role: UserRole;
  /**
   * What this credential may do, computed once at lookup (effectiveRights): the role's rights,
   * or the custom role's for CUSTOM, intersected with the key's own when the key is limited.
   * The auth hook checks a route's right here, and so does every rule that depends on a right.
   */
  rights: ReadonlySet<Right>;
  canReadPersonalData: boolean;
  canReadScreeners: boolean;
  /** When the credential stops working (ms since the epoch); absent: it does not expire. */
  expiresAtMs?: number;
  /** How the caller authenticated: a bearer API key, or the console's session cookie. */
  via: 'API_KEY' | 'SESSION';
}

/** The user a token belongs to, as the token store finds it. */
export interface TokenOwner {
  workspaceId: string;
  userId: string;
  tokenId: string;
  role: UserRole;
  status: 'INVITED' | 'ACTIVE' | 'DEACTIVATED';
  /** The rights of the user's custom role (role CUSTOM), else null. */
  customRoleRights: string[] | null;
  /** The rights the key is limited to, or null (all of its user's). */
  keyRights: string[] | null;
  canReadPersonalData: boolean;
  canReadScreeners: boolean;
  /** ISO time the key expires at, or null. */
  expiresAt: string | null;
}

/** A principal of a token owner: the rights worked out once, here. */
export function principalOfOwner(owner: TokenOwner): Principal {
  return {
    workspaceId: owner.workspaceId,
    userId: owner.userId,
    tokenId: owner.tokenId,
    role: owner.role,
    rights: effectiveRights(owner.role, owner.customRoleRights, owner.keyRights),
    canReadPersonalData: owner.canReadPersonalData,
    canReadScreeners: owner.canReadScreeners,
    ...(owner.expiresAt === null ? {} : { expiresAtMs: Date.parse(owner.expiresAt) }),
    via: 'API_KEY',
  };
}

/** An invalidation, as broadcast to the other instances (see principal-broadcast.ts). */
export type Invalidation = { kind: 'user'; workspaceId: string; userId: string } | { kind: 'token'; workspaceId: string; tokenId: string };

/**
 * Finds the owner of the unrevoked token with this digest in this workspace, or undefined. The
 * users family keeps tokens; the service hands its lookup in, so the hook imports no family.
 */
export type TokenLookup = (workspaceId: string, digest: string) => Promise<TokenOwner | undefined>;

/**
 * Finds the principal of the live session with this secret's digest (its idle clock restarted),
 * or undefined: ended, idle or past its end, or its user not ACTIVE. The sign-in family keeps
 * sessions; the service hands its lookup in.
 */
export type SessionLookup = (digest: Buffer) => Promise<Principal | undefined>;

/** The PrincipalCache key of a session: its digest under a prefix of its own. */
export const sessionCacheKey = (digest: Buffer) => `session:${digest.toString('hex')}`;

export interface RouteAccess {
  /** The right the operation requires; absent on public routes. */
  right?: Right;
  public?: boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | undefined;
  }
  interface FastifyContextConfig {
    right?: Right;
    public?: boolean;
    /** A public route that the console's session cookie authenticates itself (documented with the sessionCookie scheme). */
    sessionCookie?: boolean;
    /**
     * The operator token (TEST_HELPERS_TOKEN) is accepted here: `only`, it alone (no workspace
     * token reaches the route: 401 without a credential, 403 with any other); `also`, besides a
     * workspace token holding `right`. The request is then marked `operator`.
     */
    operator?: 'only' | 'also';
  }
  interface FastifyRequest {
    /** The request carries the operator token (only on routes with `config.operator`). */
    operator?: boolean;
  }
}

/**
 * Token → principal, remembered for a few seconds so that authentication costs no database
 * round trip on a hot path. A deactivation, a role change or a revocation made through this
 * process is seen at once (invalidateUser, invalidateToken); on the other instances at once too
 * when REDIS_URL is set (the invalidation is broadcast over Redis pub/sub: `broadcast`, and
 * `apply` on receipt), else within the cache's lifetime (AUTH_CACHE_SECONDS).
 */
export class PrincipalCache {
  private readonly cache: LRUCache<string, Principal>;
  constructor(ttlSeconds: number) {
    this.cache = new LRUCache({ max: 50_000, ttl: Math.max(1, ttlSeconds * 1000), ttlAutopurge: false });
    this.enabled = ttlSeconds > 0;
  }
  private readonly enabled: boolean;
  /** Lookups under way: when an entry expires under load, one query serves every waiting request. */
  private readonly pending = new Map<string, Promise<Principal | undefined>>();
  /** Bumped by every invalidation, so a lookup that began before one does not refill the cache. */
  private generation = 0;
  get(digest: string) {
    return this.enabled ? this.cache.get(digest) : undefined;
  }
  set(digest: string, principal: Principal) {
    if (this.enabled) this.cache.set(digest, principal);
  }
  /** The principal from `lookup`, run once for all concurrent callers of the same digest. */
  load(digest: string, lookup: () => Promise<Principal | undefined>): Promise<Principal | undefined> {
    const under = this.pending.get(digest);
    if (under) return under;
    const generation = this.generation;
    const loading = lookup()
      .then((principal) => {
        if (principal && generation === this.generation) this.set(digest, principal);
        return principal;
      })
      .finally(() => {
        if (this.pending.get(digest) === loading) this.pending.delete(digest);
      });
    this.pending.set(digest, loading);
    return loading;
  }
  /** Where invalidations go to reach the other instances (set by the broadcaster, when Redis is configured). */
  broadcast: ((invalidation: Invalidation) => void) | undefined;
  /** Forgets every credential of the user (their keys and sessions), here and on every instance. */
  invalidateUser(workspaceId: string, userId: string) {
    this.apply({ kind: 'user', workspaceId, userId });
    this.broadcast?.({ kind: 'user', workspaceId, userId });
  }
  /** Forgets one key (or session), here and on every instance. */
  invalidateToken(workspaceId: string, tokenId: string) {
    this.apply({ kind: 'token', workspaceId, tokenId });
    this.broadcast?.({ kind: 'token', workspaceId, tokenId });
  }
  /** An invalidation, applied to this instance only (a received broadcast). */
  apply(invalidation: Invalidation) {
    this.generation++;
    this.pending.clear();
    for (const [digest, principal] of this.cache.entries()) {
      if (principal.workspaceId !== invalidation.workspaceId) continue;
      if (invalidation.kind === 'user' ? principal.userId === invalidation.userId : principal.tokenId === invalidation.tokenId) this.cache.delete(digest);
    }
  }
  clear() {
    this.generation++;
    this.pending.clear();
    this.cache.clear();
  }
}

interface Credential {
  workspaceId: string;
  digest: string;
}

/** The bearer token of a request, if it has the shape of one of ours. */
function readCredential(authorization: string | undefined): Credential | undefined {
  if (!authorization) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  if (!match) return undefined;
  const token = match[1]!;
  const parsed = parseToken(token);
  return parsed ? { workspaceId: parsed.workspaceId, digest: digestToken(token) } : undefined;
}

function lookupPrincipal(findTokenOwner: TokenLookup, cache: PrincipalCache, credential: Credential): Promise<Principal | undefined> {
  const { workspaceId, digest } = credential;
  return cache.load(digest, async () => {
    const owner = await findTokenOwner(workspaceId, digest);
    if (!owner || owner.status === 'DEACTIVATED') return undefined;
    return principalOfOwner(owner);
  });
}

/**
 * The principal of the request's session cookie, through the same cache as API keys (keyed by the
 * session's digest, so invalidateUser ends a user's sessions and keys at once).
 */
export function lookupSessionPrincipal(findSessionOwner: SessionLookup, cache: PrincipalCache, secret: string): Promise<Principal | undefined> {
  const digest = sessionDigest(secret);
  const key = sessionCacheKey(digest);
  return Promise.resolve(cache.get(key) ?? cache.load(key, () => findSessionOwner(digest)));
}

export function setRateLimitHeaders(reply: FastifyReply, decision: RateLimitDecision) {
  reply.header('X-RateLimit-Limit', decision.limit);
  reply.header('X-RateLimit-Remaining', decision.remaining);
  reply.header('X-RateLimit-Reset', decision.resetEpochSeconds);
}

/**
 * The one mechanism that guards every route: authenticate, draw on the rate-limit budget
 * (the token's, or the client address's for a bad token, so guessing tokens is slow), then
 * check the route's declared right.
 */
export function installAuthentication(
  app: FastifyInstance,
  deps: {
    findTokenOwner: TokenLookup;
    findSessionOwner?: SessionLookup;
    cache: PrincipalCache;
    limiter: RateLimiter;
    operatorToken?: string | undefined;
    /** The service's clock, in ms (an expiring key is refused from its expiry on). */
    now?: () => number;
    /** Told of each authenticated request (a key's lastUsedAt): must be cheap, it is on every request. */
    onAuthenticated?: (principal: Principal) => void;
  },
) {
  const now = deps.now ?? Date.now;
  const operatorDigest = deps.operatorToken === undefined ? undefined : createHash('sha256').update(deps.operatorToken).digest();
  const refuseTooMany = (reply: FastifyReply, decision: RateLimitDecision) => {
    setRateLimitHeaders(reply, decision);
    reply.header('Retry-After', decision.retryAfterSeconds);
    return sendError(reply, new ApiError('TOO_MANY_REQUESTS'));
  };

  app.decorateRequest('principal', undefined);
  app.decorateRequest('operator', false);
  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    // Unknown paths reach the not-found handler with no route options: nothing to guard.
    if (!request.routeOptions.url) return;
    const config = request.routeOptions.config;
    if (config.public) return;
    if (config.operator) {
      const authorization = request.headers.authorization;
      if (operatorDigest !== undefined && presentsBearer(authorization, operatorDigest)) {
        request.operator = true;
        return;
      }
      if (config.operator === 'only') {
        // Not a lookup of workspace tokens: whatever else is presented, it is not the operator's.
        const refusal = await deps.limiter.consume(`address:${request.ip}`);
        if (!refusal.allowed) return refuseTooMany(reply, refusal);
        setRateLimitHeaders(reply, refusal);
        return sendError(reply, new ApiError(authorization ? 'FORBIDDEN' : 'UNAUTHORIZED'));
      }
    }
    // Fail closed: a route that declares neither a right nor `public` serves nobody.
    const right = config.right;
    if (!right) return sendError(reply, new ApiError('FORBIDDEN'));

    const credential = readCredential(request.headers.authorization);
    // The console's session cookie, only when no Authorization header is sent: the API's bearer keys are unchanged.
    const sessionSecret = request.headers.authorization === undefined && deps.findSessionOwner ? sessionSecretOf(request) : undefined;
    let principal = credential ? deps.cache.get(credential.digest) : sessionSecret !== undefined ? deps.cache.get(sessionCacheKey(sessionDigest(sessionSecret))) : undefined;
    if (!principal) {
      // A client address that has spent its budget on bad tokens costs no database lookup.
      const refusal = await deps.limiter.refusalIfSpent(`address:${request.ip}`);
      if (refusal) return refuseTooMany(reply, refusal);
      if (credential) principal = await lookupPrincipal(deps.findTokenOwner, deps.cache, credential);
      else if (sessionSecret !== undefined && deps.findSessionOwner) principal = await lookupSessionPrincipal(deps.findSessionOwner, deps.cache, sessionSecret);
    }
    const decision = await deps.limiter.consume(principal ? `token:${principal.tokenId}` : `address:${request.ip}`);
    if (!decision.allowed) return refuseTooMany(reply, decision);
    setRateLimitHeaders(reply, decision);
    if (!principal) return sendError(reply, new ApiError('UNAUTHORIZED'));
    // An expired key: refused from its expiry on, even while its principal is cached.
    if (principal.expiresAtMs !== undefined && now() >= principal.expiresAtMs) return sendError(reply, new ApiError('UNAUTHORIZED'));
    // A write by the session cookie carries the session's CSRF token (session-cookie.ts); a bearer key needs none.
    if (principal.via === 'SESSION' && isWrite(request.method) && (sessionSecret === undefined || !presentsCsrfToken(request, sessionSecret))) {
      return sendError(reply, new ApiError('FORBIDDEN', [], 'the X-CSRF-Token header is missing or wrong'));
    }
    if (!principal.rights.has(right)) return sendError(reply, forbidden(right));
    deps.onAuthenticated?.(principal);
    request.principal = principal;
  });
}

/** Whether the Authorization header carries `Bearer <token>` with this token's SHA-256, compared in constant time over fixed-length digests. */
function presentsBearer(authorization: string | undefined, expectedDigest: Buffer): boolean {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  const given = createHash('sha256').update(match?.[1] ?? '').digest();
  return timingSafeEqual(given, expectedDigest) && match !== null;
}

/** The principal of an authenticated route; a route without a right has none. */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new Error(`Route ${request.routeOptions.url} read a principal it does not authenticate`);
  return request.principal;
}
