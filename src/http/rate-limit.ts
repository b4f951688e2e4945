import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';
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
  /** The key's budget without drawing on it: a refusal when it is spent, else undefined. */
  refusalIfSpent(key: string): Promise<RateLimitDecision | undefined>;
  /** Resolves once the shared store is reachable (at once in process); false if it was not within the time. */
  ready(timeoutMs?: number): Promise<boolean>;
  /**
   * Another budget over the same store (the same Redis connection): its own maximum, in the same
   * window, with keys of its own under `name`. Closing the limiter it came from closes it too.
   */
  withBudget(budget: { name: string; max: number }): RateLimiter;
  close(): Promise<void>;
}

export interface RateLimiterOptions {
  max: number;
  windowSeconds: number;
  redisUrl?: string;
  keyPrefix?: string;
  now?: () => number;
  /**
   * Told of every refusal (a consume past the budget, or refusalIfSpent finding it spent), with
   * its reason: the budget's name for a budget of its own (withBudget: `signup`), else the kind of
   * key, the part before its first ':' (`token`, `address`). The metrics count them.
   */
  onRefused?: (reason: string) => void;
}

/**
 * A fixed-window budget per key. In process by default; with a Redis URL the counters live in
 * Redis, so every instance draws on the same budget.
 */
export function createRateLimiter(options: RateLimiterOptions): RateLimiter {
  const now = options.now ?? Date.now;
  let redis: Redis | undefined;
  if (options.redisUrl) {
    // No offline queue: while Redis is down a command fails at once and the insurance limiter
    // answers, instead of every request waiting on reconnection.
    // A command that gets no answer within commandTimeout fails too: a Redis that hangs must
    // not hang every request.
    // Loaded only when Redis is configured: a single instance need not carry it (about 20 MB).
    const { Redis: RedisClient } = createRequire(import.meta.url)('ioredis') as typeof import('ioredis');
    redis = new RedisClient(options.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: 250 });
    // Connection errors are answered by the insurance limiter; ioredis reconnects by itself.
    redis.on('error', () => {});
  }
  const keyPrefix = options.keyPrefix ?? 'rl';

  const ready = async (timeoutMs = 5_000) => {
    const client = redis;
    if (!client || client.status === 'ready') return true;
    return new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      client.once('ready', () => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  };

  const budgetOver = (max: number, prefix: string, budgetName: string | undefined, close: () => Promise<void>): RateLimiter => {
    const common = { points: max, duration: options.windowSeconds, keyPrefix: prefix };
    // If Redis is unreachable, each instance falls back to its own in-process budget rather than
    // failing every request: limits loosen by the number of instances for as long as it lasts.
    const limiter: RateLimiterAbstract = redis
      ? new RateLimiterRedis({ ...common, storeClient: redis, insuranceLimiter: new RateLimiterMemory(common) })
      : new RateLimiterMemory(common);

    const decide = (result: RateLimiterRes, allowed: boolean): RateLimitDecision => {
      const msBeforeNext = Math.max(0, result.msBeforeNext);
      return {
        allowed,
        limit: max,
        remaining: Math.max(0, result.remainingPoints),
        resetEpochSeconds: Math.ceil((now() + msBeforeNext) / 1000),
        retryAfterSeconds: Math.max(1, Math.ceil(msBeforeNext / 1000)),
      };
    };

    const refuse = (key: string, result: RateLimiterRes): RateLimitDecision => {
      options.onRefused?.(budgetName ?? key.split(':', 1)[0]!);
      return decide(result, false);
    };

    return {
      async consume(key) {
        try {
          return decide(await limiter.consume(key), true);
        } catch (rejection) {
          if (rejection instanceof RateLimiterRes) return refuse(key, rejection);
          throw rejection;
        }
      },
      async refusalIfSpent(key) {
        const state = await limiter.get(key).catch(() => null);
        return state && state.remainingPoints <= 0 ? refuse(key, state) : undefined;
      },
      ready,
      withBudget: (budget) => budgetOver(budget.max, `${keyPrefix}:${budget.name}`, budget.name, async () => {}),
      close,
    };
  };

  return budgetOver(options.max, keyPrefix, undefined, async () => {
    if (!redis) return;
    // quit() needs a live connection; an unreachable Redis is simply dropped.
    if (redis.status === 'ready') await redis.quit().catch(() => redis?.disconnect());
    else redis.disconnect();
  });
}
