import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type IncentiveProvider,
  type ProviderCallOptions,
  type ProviderOrder,
  type ProviderOrderResult,
  type ProviderOrderState,
  ProviderRefusal,
  type ProviderTarget,
} from './provider.js';

export type SandboxOperation = 'order' | 'resend' | 'void' | 'status';

/**
 * What the next call of an operation does instead of succeeding:
 * - `refuse`: a definite refusal (ProviderRefusal); nothing happens at the provider;
 * - `lose-request`: fails with an unknown outcome before doing anything (the request never arrived);
 * - `lose-response`: does the work, then fails with an unknown outcome (the answer never came back);
 * - `hang`: never answers; the call ends only when the service gives up (its signal aborts).
 */
export type SandboxFault = 'refuse' | 'lose-request' | 'lose-response' | 'hang';

/**
 * What this process saw of one order: tests read it. The sandbox's answers never depend on it,
 * since another instance (or this one before a restart) may have placed the order.
 */
export interface SandboxOrderRecord {
  workspaceId: string;
  incentiveId: string;
  reference: string;
  /** The order as this process placed it; undefined when only a resend or void of it came here. */
  order?: ProviderOrder;
  voided: boolean;
  resends: number;
}

/** An unknown outcome, as a network error or a provider's 5xx would be. */
export class SandboxConnectionError extends Error {
  override readonly name = 'SandboxConnectionError';
}

/** The sandbox's id of an order: derived from the incentive, so every instance (and every retry) computes the same one. */
export function sandboxReference(workspaceId: string, incentiveId: string): string {
  return `sbx_${createHash('sha256').update(`${workspaceId}/${incentiveId}`).digest('hex').slice(0, 24)}`;
}

/**
 * The built-in provider, and the default: it reaches nothing outside the process and pays no one.
 * It keeps no state that its answers depend on, as the contract asks of every instance: an
 * order's reference is derived from the incentive, so ordering again returns the same order
 * (idempotent by incentive, as a real provider is), and an order this process has not seen (placed
 * by another instance, or before a restart) is treated as placed: resending it succeeds, and
 * voiding succeeds always. Whether an order may be resent or voided is the service's to decide
 * from its own records (an incentive canceled or expired is never resent). What each process saw
 * is kept in `orders` for tests only; tests make calls fail with `injectFault`.
 */
export class SandboxProvider implements IncentiveProvider {
  readonly name = 'sandbox';
  /** What this process saw, by `workspaceId/incentiveId` (tests read it; answers never depend on it). */
  readonly orders = new Map<string, SandboxOrderRecord>();
  /** Calls received per operation, faulty ones included. */
  readonly calls: Record<SandboxOperation, number> = { order: 0, resend: 0, void: 0, status: 0 };
  private readonly faults: Record<SandboxOperation, SandboxFault[]> = { order: [], resend: [], void: [], status: [] };
  /** How long every call takes before answering (tests widen race windows with it). */
  latencyMs = 0;

  /** Makes the next `times` calls of `operation` (after any faults already queued) fail with `fault`. */
  injectFault(operation: SandboxOperation, fault: SandboxFault, times = 1): void {
    for (let count = 0; count < times; count++) this.faults[operation].push(fault);
  }

  /** Forgets queued faults and latency (what was seen stays). */
  clearFaults(): void {
    this.latencyMs = 0;
    for (const operation of Object.keys(this.faults) as SandboxOperation[]) this.faults[operation] = [];
  }

  orderOf(workspaceId: string, incentiveId: string): SandboxOrderRecord | undefined {
    return this.orders.get(`${workspaceId}/${incentiveId}`);
  }

  async order(order: ProviderOrder, options: ProviderCallOptions): Promise<ProviderOrderResult> {
    return this.perform('order', options, () => {
      const seen = this.seen(order.workspaceId, order.incentiveId);
      // Only the first order counts: a second one with the same incentive is the same order.
      seen.order ??= { ...order };
      return { reference: seen.reference };
    });
  }

  async resend(target: ProviderTarget, options: ProviderCallOptions): Promise<void> {
    return this.perform('resend', options, () => {
      this.seen(target.workspaceId, target.incentiveId).resends++;
    });
  }

  async void(target: ProviderTarget, options: ProviderCallOptions): Promise<void> {
    return this.perform('void', options, () => {
      this.seen(target.workspaceId, target.incentiveId).voided = true;
    });
  }

  /**
   * What this process saw of the order. The sandbox sends no claims, so an order is `open` until
   * voided; one placed by another instance reads `not_found` here, which the reconciliation treats
   * as "order again with the same key", harmless since ordering is idempotent.
   */
  async status(target: ProviderTarget, options: ProviderCallOptions): Promise<ProviderOrderState> {
    return this.perform('status', options, () => {
      const seen = this.orders.get(`${target.workspaceId}/${target.incentiveId}`);
      if (!seen?.order) return { state: 'not_found' };
      return seen.voided ? { state: 'canceled' } : { state: 'open' };
    });
  }

  private seen(workspaceId: string, incentiveId: string): SandboxOrderRecord {
    const key = `${workspaceId}/${incentiveId}`;
    let record = this.orders.get(key);
    if (!record) {
      record = { workspaceId, incentiveId, reference: sandboxReference(workspaceId, incentiveId), voided: false, resends: 0 };
      this.orders.set(key, record);
    }
    return record;
  }

  private async perform<T>(operation: SandboxOperation, options: ProviderCallOptions, work: () => T): Promise<T> {
    this.calls[operation]++;
    if (this.latencyMs > 0) await sleep(this.latencyMs, undefined, { signal: options.signal }).catch(() => undefined);
    const fault = this.faults[operation].shift();
    if (fault === undefined) return work();
    if (fault === 'refuse') throw new ProviderRefusal(`The sandbox refused this ${operation} (injected)`);
    if (fault === 'lose-request') throw new SandboxConnectionError(`The sandbox lost this ${operation} request (injected)`);
    if (fault === 'lose-response') {
      work();
      throw new SandboxConnectionError(`The sandbox lost the answer to this ${operation} (injected)`);
    }
    return new Promise<T>((_resolve, reject) => {
      const stop = () => reject(new SandboxConnectionError(`The sandbox never answered this ${operation} (injected)`));
      if (options.signal.aborted) stop();
      else options.signal.addEventListener('abort', stop, { once: true });
    });
  }
}
