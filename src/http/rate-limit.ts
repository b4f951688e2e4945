import { Redis } from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';

export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Unix epoch seconds at which the budget refills (GitHub's meaning of X-RateLimit-Reset). */
  resetEpochSeconds: number;
  retryAfterSeconds: number;
}

export interface RateLimiter {
  consume(key: string): Promise<RateLimitDecision>;
  close(): Promise<void>;
}

export interface RateLimiterOptions {
  max: number;
  windowSeconds: number;
  redisUrl?: string;
  keyPrefix?: string;
  now?: () => number;
}

/**
 * A fixed-window budget per key. In process by default; with a Redis URL the counters live in
 * Redis, so every instance draws on the same budget.
 */
export function createRateLimiter(options: RateLimiterOptions): RateLimiter {
  const now = options.now ?? Date.now;
  let redis: Redis | undefined;
  let limiter: RateLimiterAbstract;
  const common = { points: options.max, duration: options.windowSeconds, keyPrefix: options.keyPrefix ?? 'rl' };
  if (options.redisUrl) {
    redis = new Redis(options.redisUrl, { enableOfflineQueue: true, maxRetriesPerRequest: 2, lazyConnect: false });
    limiter = new RateLimiterRedis({ ...common, storeClient: redis });
  } else {
    limiter = new RateLimiterMemory(common);
  }

  const decide = (result: RateLimiterRes, allowed: boolean): RateLimitDecision => {
    const msBeforeNext = Math.max(0, result.msBeforeNext);
    return {
      allowed,
      limit: options.max,
      remaining: Math.max(0, result.remainingPoints),
      resetEpochSeconds: Math.ceil((now() + msBeforeNext) / 1000),
      retryAfterSeconds: Math.max(1, Math.ceil(msBeforeNext / 1000)),
    };
  };

  return {
    async consume(key) {
      try {
        return decide(await limiter.consume(key), true);
      } catch (rejection) {
        if (rejection instanceof RateLimiterRes) return decide(rejection, false);
        throw rejection;
      }
    },
    async close() {
      await redis?.quit();
    },
  };
}
