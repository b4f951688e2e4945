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
  /** Milliseconds of heavy work the workspace may still start now; below zero, a debt. */
  credit: number;
  /** When credit was last refilled (the clock's milliseconds). */
  refilledAt: number;
  /** Wakes the queue once the credit is back above zero. */
  refill?: NodeJS.Timeout | undefined;
}

export interface WorkspaceWorkLimits {
  /** Weight a workspace may have in flight at once (a search weighs the rows of its page). */
  capacity: number;
  /** Requests that may wait for their turn; past it, TooBusy at once. */
  queueMax: number;
  /** How long a request may wait for its turn before it is refused with TooBusy. */
  waitMs: number;
  /**
   * Milliseconds of heavy work a workspace earns each second (its share of the process): each
   * heavy request is charged the time it held, from its start until its answer was sent. Omitted:
   * no budget of time, only the weight.
   */
  budgetMsPerSecond?: number | undefined;
  /** The most a workspace may save up of that budget, to spend in a burst (default one second's). */
  burstMs?: number | undefined;
  /** The clock, in milliseconds (tests drive it). */
  now?: () => number;
}

/**
 * A weighted semaphore per workspace with a bounded queue, and a budget of time. Issue 32: 16
 * concurrent 1000-row searches from one read-only token moved another workspace's median from 5 ms
 * to 860 ms: the count limits draw on requests, not on their cost. Here a workspace's heavy work in
 * flight weighs at most `capacity` (a 1000-row search weighs 1000; one heavier than the capacity
 * runs alone). The weight alone still let two searches at a time take the process (another
 * workspace's one-row request waited 1.0 s at the median on the embedded store, 315 ms on
 * PostgreSQL): so each heavy request is also charged what it measurably cost, the milliseconds it
 * held from its start to its answer, against a budget that refills at `budgetMsPerSecond` (a
 * token bucket of time, `burstMs` deep). A workspace whose budget is spent starts nothing until it
 * has refilled: its heavy work holds at most that share of the process, however it is split into
 * requests. More waits its turn, first come first served, at most `queueMax` requests and
 * `waitMs`; past either, a 429 with Retry-After. Other workspaces never wait on it.
 */
export class WorkspaceWorkLimiter {
  private readonly lanes = new Map<string, Lane>();
  private readonly now: () => number;
  private readonly burstMs: number;

  constructor(private readonly options: WorkspaceWorkLimits) {
    this.now = options.now ?? (() => performance.now());
    this.burstMs = options.burstMs ?? options.budgetMsPerSecond ?? 0;
  }

  /** Resolves with the release once the work may start; rejects with TooBusy when the queue is full or the wait too long. */
  acquire(workspaceId: string, requested: number): Promise<() => void> {
    const weight = Math.min(Math.max(1, requested), this.options.capacity);
    let lane = this.lanes.get(workspaceId);
    if (!lane) this.lanes.set(workspaceId, (lane = { used: 0, waiting: [], credit: this.burstMs, refilledAt: this.now() }));
    const current = lane;
    const start = (): (() => void) => {
      current.used += weight;
      const startedAt = this.now();
      let released = false;
      return () => {
        if (released) return;
        released = true;
        current.used -= weight;
        if (this.options.budgetMsPerSecond !== undefined) {
          this.refill(current);
          current.credit -= this.now() - startedAt;
        }
        this.pump(workspaceId, current);
      };
    };
    if (current.waiting.length === 0 && this.mayStart(current, weight)) return Promise.resolve(start());
    if (current.waiting.length >= this.options.queueMax) return Promise.reject(new TooBusy());
    return new Promise((resolve, reject) => {
      const entry: Waiting = {
        weight,
        grant: () => {
          clearTimeout(timer);
          resolve(start());
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
      this.wakeWhenRefilled(workspaceId, current);
    });
  }

  /** Weight in flight, requests waiting and the budget left (ms; below zero a debt), for tests and metrics. */
  state(workspaceId: string): { used: number; waiting: number; creditMs: number } {
    const lane = this.lanes.get(workspaceId);
    if (lane) this.refill(lane);
    return { used: lane?.used ?? 0, waiting: lane?.waiting.length ?? 0, creditMs: lane?.credit ?? this.burstMs };
  }

  /** Whether the workspace has heavy work in flight or waiting (the embedded store serves its statements after others'). */
  busy(workspaceId: string): boolean {
    const lane = this.lanes.get(workspaceId);
    return lane !== undefined && (lane.used > 0 || lane.waiting.length > 0);
  }

  private refill(lane: Lane): void {
    const now = this.now();
    const rate = this.options.budgetMsPerSecond;
    if (rate !== undefined) lane.credit = Math.min(this.burstMs, lane.credit + ((now - lane.refilledAt) * rate) / 1000);
    lane.refilledAt = now;
  }

  private mayStart(lane: Lane, weight: number): boolean {
    if (lane.used + weight > this.options.capacity) return false;
    if (this.options.budgetMsPerSecond === undefined) return true;
    this.refill(lane);
    return lane.credit > 0;
  }

  private pump(workspaceId: string, lane: Lane): void {
    for (let next = lane.waiting[0]; next && this.mayStart(lane, next.weight); next = lane.waiting[0]) {
      lane.waiting.shift();
      next.grant();
    }
    this.wakeWhenRefilled(workspaceId, lane);
    // A lane in debt is kept: dropping it would forgive the debt.
    if (lane.used === 0 && lane.waiting.length === 0 && lane.credit >= this.burstMs) {
      clearTimeout(lane.refill);
      this.lanes.delete(workspaceId);
    }
  }

  /** With the head of the queue held back by the budget alone (nothing in flight will release), a timer for when it has refilled. */
  private wakeWhenRefilled(workspaceId: string, lane: Lane): void {
    const rate = this.options.budgetMsPerSecond;
    if (rate === undefined || lane.refill !== undefined || lane.waiting.length === 0 || lane.credit > 0) return;
    const inMs = Math.ceil((-lane.credit * 1000) / Math.max(rate, 1e-3)) + 1;
    lane.refill = setTimeout(() => {
      lane.refill = undefined;
      this.pump(workspaceId, lane);
    }, inMs);
    // The waiters' own timers, and their sockets, keep the process up; this one need not.
    lane.refill.unref();
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
      // A client that went away while its request waited has no response to wait for. Its
      // socket says so, not request.raw: Node destroys a request once its body has been read, and
      // with that test every search with a body gave its weight back at once (none was limited).
      if (request.socket.destroyed || reply.raw.destroyed) return releaseWeight();
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
