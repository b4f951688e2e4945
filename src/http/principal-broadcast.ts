import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';
import type { Invalidation, PrincipalCache } from './auth.js';

/**
 * Carries the PrincipalCache's invalidations to every instance over Redis pub/sub: a deactivation,
 * a role change or a key's revocation made on one instance stops the credentials cached on all
 * the others at once, rather than within AUTH_CACHE_SECONDS.
 *
 * Two connections (a subscribed one can send nothing else). Each message names the instance that
 * sent it, which ignores its own. While Redis is unreachable a message is lost: the other
 * instances then see the change within AUTH_CACHE_SECONDS, as without Redis; `onLost` is told.
 */
export interface PrincipalBroadcast {
  /** Resolves true once subscribed (false after timeoutMs): messages sent before are not received. */
  ready(timeoutMs?: number): Promise<boolean>;
  close(): Promise<void>;
}

interface Message {
  from: string;
  invalidation: Invalidation;
}

export function broadcastInvalidations(cache: PrincipalCache, options: { redisUrl: string; channel: string; onLost?: (error: unknown) => void }): PrincipalBroadcast {
  const { Redis: RedisClient } = createRequire(import.meta.url)('ioredis') as typeof import('ioredis');
  const instance = randomUUID();
  const publisher: Redis = new RedisClient(options.redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1, commandTimeout: 1_000 });
  const subscriber: Redis = new RedisClient(options.redisUrl, { maxRetriesPerRequest: 1 });
  publisher.on('error', () => {});
  subscriber.on('error', () => {});
  let subscribed = false;
  const subscribing = new Promise<void>((resolve) => {
    const subscribe = () => {
      subscriber
        .subscribe(options.channel)
        .then(() => {
          subscribed = true;
          resolve();
        })
        .catch(() => {});
    };
    // ioredis subscribes again by itself after a reconnection (autoResubscribe).
    if (subscriber.status === 'ready') subscribe();
    else subscriber.once('ready', subscribe);
  });
  subscriber.on('message', (channel: string, text: string) => {
    if (channel !== options.channel) return;
    let message: Message;
    try {
      message = JSON.parse(text) as Message;
    } catch {
      return;
    }
    if (message.from === instance || typeof message.invalidation?.workspaceId !== 'string') return;
    cache.apply(message.invalidation);
  });
  cache.broadcast = (invalidation) => {
    const message: Message = { from: instance, invalidation };
    publisher.publish(options.channel, JSON.stringify(message)).catch((error: unknown) => options.onLost?.(error));
  };
  return {
    async ready(timeoutMs = 5_000) {
      if (subscribed) return true;
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), timeoutMs);
      });
      const result = await Promise.race([subscribing.then(() => true), timedOut]);
      clearTimeout(timer);
      return result;
    },
    async close() {
      cache.broadcast = undefined;
      for (const client of [publisher, subscriber]) {
        if (client.status === 'ready') await client.quit().catch(() => client.disconnect());
        else client.disconnect();
      }
    },
  };
}
