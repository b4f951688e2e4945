import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, sendError } from './errors.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * The route's work is heavy in proportion to this weight (a search: the rows of its page):
     * a workspace runs heavy work at most up to its capacity at a time (WorkspaceWorkLimiter).
     */
    heavyWeight?: (request: FastifyRequest) => number;
  }
}

export class TooBusy extends Error {}

interface Waiting {
  weight: number;
  grant: () => void;
  refuse: () => void;
}

interface Lane {
  used: number;
  waiting: Waiting[];
}

/**
 * A weighted semaphore per workspace with a bounded queue. Issue 32: 16 concurrent 1000-row
 * searches from one read-only token moved another workspace's median from 5 ms to 860 ms: the
 * count limits draw on requests, not on their cost. Here a workspace's heavy work in flight weighs
 * at most `capacity` (a 1000-row search weighs 1000; one heavier than the capacity runs alone);
 * more waits its turn, first come first served, at most `queueMax` requests and `waitMs`; past
 * either, a 429 with Retry-After. Other workspaces never wait on it.
 */
export class WorkspaceWorkLimiter {
  private readonly lanes = new Map<string, Lane>();

  constructor(private readonly options: { capacity: number; queueMax: number; waitMs: number }) {}

  /** Resolves with the release once the work may start; rejects with TooBusy when the queue is full or the wait too long. */
  acquire(workspaceId: string, requested: number): Promise<() => void> {
    const weight = Math.min(Math.max(1, requested), this.options.capacity);
    let lane = this.lanes.get(workspaceId);
    if (!lane) this.lanes.set(workspaceId, (lane = { used: 0, waiting: [] }));
    const current = lane;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      current.used -= weight;
      this.pump(workspaceId, current);
    };
    if (current.waiting.length === 0 && current.used + weight <= this.options.capacity) {
      current.used += weight;
      return Promise.resolve(release);
    }
    if (current.waiting.length >= this.options.queueMax) return Promise.reject(new TooBusy());
    return new Promise((resolve, reject) => {
      const entry: Waiting = {
        weight,
        grant: () => {
          clearTimeout(timer);
          resolve(release);
        },
        refuse: () => reject(new TooBusy()),
      };
      const timer = setTimeout(() => {
        const at = current.waiting.indexOf(entry);
        if (at >= 0) current.waiting.splice(at, 1);
        entry.refuse();
        this.pump(workspaceId, current);
      }, this.options.waitMs);
      current.waiting.push(entry);
    });
  }

  /** Weight in flight and requests waiting, for tests and metrics. */
  state(workspaceId: string): { used: number; waiting: number } {
    const lane = this.lanes.get(workspaceId);
    return { used: lane?.used ?? 0, waiting: lane?.waiting.length ?? 0 };
  }

  private pump(workspaceId: string, lane: Lane): void {
    for (let next = lane.waiting[0]; next && lane.used + next.weight <= this.options.capacity; next = lane.waiting[0]) {
      lane.waiting.shift();
      lane.used += next.weight;
      next.grant();
    }
    if (lane.used === 0 && lane.waiting.length === 0) this.lanes.delete(workspaceId);
  }
}

/**
 * Routes that declare `config.heavyWeight` take their weight from the workspace's limiter before
 * the handler runs (after authentication and validation) and give it back when the response has
 * been sent, or the client went away.
 */
export function installHeavyWorkLimits(app: FastifyInstance, limiter: WorkspaceWorkLimiter, workspaceOf: (request: FastifyRequest) => string | undefined): void {
  const releases = new WeakMap<FastifyRequest, () => void>();
  const release = async (request: FastifyRequest) => {
    releases.get(request)?.();
    releases.delete(request);
  };
  app.addHook('preHandler', async (request: FastifyRequest, reply: FastifyReply) => {
    const weigh = request.routeOptions.config.heavyWeight;
    const workspaceId = weigh ? workspaceOf(request) : undefined;
    if (!weigh || !workspaceId) return;
    try {
      const releaseWeight = await limiter.acquire(workspaceId, weigh(request));
      // A client that went away while its request waited has no response to wait for.
      if (request.raw.destroyed) return releaseWeight();
      releases.set(request, releaseWeight);
    } catch (error) {
      if (!(error instanceof TooBusy)) throw error;
      reply.header('Retry-After', 1);
      return sendError(reply, new ApiError('TOO_MANY_REQUESTS'));
    }
  });
  app.addHook('onResponse', release);
  app.addHook('onRequestAbort', release);
}

/** A search weighs the rows of the page it asks for (`pageInfo.size`, 25 by default), at least 50: the count and filter cost something whatever the page. */
export const searchPageWeight = (request: FastifyRequest): number => Math.max(50, (request.body as { pageInfo?: { size?: number } } | undefined)?.pageInfo?.size ?? 25);
