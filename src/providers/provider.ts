/**
 * Incentive provider adapters: how money reaches a participant. The incentives family records
 * every incentive first and then talks to the provider through this interface only, so a
 * provider is one adapter file.
 *
 * Adding a real provider (say "acme"):
 *
 * ```ts
 * // src/providers/acme.ts
 * export class AcmeProvider implements IncentiveProvider {
 *   readonly name = 'acme';
 *   async order(order: ProviderOrder, { signal }: ProviderCallOptions) {
 *     const response = await fetch('https://api.acme.example/rewards', {
 *       method: 'POST', signal,
 *       // The provider's own idempotency key: re-ordering the same incentive returns the first order.
 *       headers: { 'Idempotency-Key': `${order.workspaceId}:${order.incentiveId}`, … },
 *       body: JSON.stringify({ amount: order.amountCents, currency: order.currency, email: order.recipientEmail,
 *         metadata: { workspaceId: order.workspaceId, incentiveId: order.incentiveId } }),
 *     });
 *     if (response.status === 422) throw new ProviderRefusal(await response.text()); // a definite "no"
 *     if (!response.ok) throw new Error(`acme answered ${response.status}`);         // outcome unknown: retried
 *     return { reference: (await response.json()).id };
 *   }
 *   async resend(target: ProviderTarget, options: ProviderCallOptions) { … }
 *   async void(target: ProviderTarget, options: ProviderCallOptions) { … }  // an unknown order counts as voided
 * }
 * ```
 *
 * then name it in `providerFactories` (src/providers/index.ts): `acme: () => new AcmeProvider()`,
 * and start the service with `INCENTIVE_PROVIDER=acme`. Its webhook (a route of its own) turns
 * each delivery into a ProviderReport and hands it to `recordProviderReport`
 * (src/families/incentives/service.ts), the code path the test helpers' claim and fail take.
 *
 * The rules every adapter keeps:
 * - Idempotent by incentive: `order` with an incentive id already ordered returns that order
 *   (never a second payment); `void` of an order already voided, or never placed, succeeds.
 * - Outcomes are either known or unknown. Throw ProviderRefusal only when the provider
 *   definitely did not (and will not) do the thing; any other error, and a timeout, means
 *   "unknown": the service keeps the incentive in a retrying state and asks again with the same
 *   idempotency key until it gets a known answer.
 * - Honour `signal`: the service aborts a call after its timeout and treats it as unknown.
 */

/** A payment to place at the provider. */
export interface ProviderOrder {
  workspaceId: string;
  /** The service's incentive id: the provider-side idempotency key of this order. */
  incentiveId: string;
  type: 'MONEY_OR_GIFT_CARD' | 'PROVIDER_ONE_MONEY';
  /** The amount in the currency's minor unit (ISO 4217 exponent: cents for USD, yen for JPY, fils for BHD). */
  amountCents: number;
  /** ISO 4217 code, upper case. */
  currency: string;
  recipientEmail: string;
  recipientName: string | null;
}

export interface ProviderOrderResult {
  /** The provider's id of the order. */
  reference: string;
}

/** An order already placed (or maybe placed: `reference` is null when its outcome was never known). */
export interface ProviderTarget {
  workspaceId: string;
  incentiveId: string;
  reference: string | null;
}

export interface ProviderCallOptions {
  /** Aborted when the service stops waiting (its timeout): the outcome is then unknown. */
  signal: AbortSignal;
}

export interface IncentiveProvider {
  readonly name: string;
  /** Places the order; idempotent by `order.incentiveId`. */
  order(order: ProviderOrder, options: ProviderCallOptions): Promise<ProviderOrderResult>;
  /** Sends the recipient the claim email again. */
  resend(target: ProviderTarget, options: ProviderCallOptions): Promise<void>;
  /** Voids the order so it can no longer be claimed; an order never placed counts as voided. */
  void(target: ProviderTarget, options: ProviderCallOptions): Promise<void>;
  /**
   * Asks the provider what became of an order (the reconciliation job, for orders whose webhook
   * never came). Looks the order up by its reference when known, else by the idempotency key
   * (the incentive id); an order the provider does not know is `not_found`.
   */
  status(target: ProviderTarget, options: ProviderCallOptions): Promise<ProviderOrderState>;
  /**
   * Verifies and reads one webhook delivery of this provider. Throws ProviderWebhookRejected when
   * the signature (or anything else that proves the sender) does not hold; never trusts a body
   * before that. Absent for providers that send no webhooks (the sandbox).
   */
  readWebhook?(delivery: ProviderWebhookInput): ProviderWebhookEvent;
}

/** What became of an order, in the service's words. */
export type ProviderOrderState =
  /** Placed, not claimed yet (delivered or not). */
  | { state: 'open' }
  | { state: 'claimed' }
  /** The provider could not deliver it, or rejected it after accepting it. */
  | { state: 'failed'; reason: string }
  | { state: 'canceled' }
  | { state: 'not_found' };

/** One webhook request as it arrived: the exact bytes, since signatures are over them. */
export interface ProviderWebhookInput {
  headers: Record<string, string | string[] | undefined>;
  rawBody: Buffer;
  /** The workspace's webhook secret for this provider, decrypted. */
  secret: string;
  /** The service's clock, for timestamp tolerance. */
  now: Date;
}

/** A verified webhook delivery. */
export interface ProviderWebhookEvent {
  /** The provider's id of this event: a delivery seen before is acknowledged and not applied again. */
  eventId: string;
  /**
   * What it reports, if it concerns an order's state; null for events the service does not act on.
   * The incentive is named by `incentiveId` when the delivery carries it, else found by the
   * order's `reference` (Tremendous's webhooks name only the reward).
   */
  report: (Omit<ProviderReport, 'workspaceId' | 'incentiveId'> & { incentiveId?: string }) | null;
}

/** A webhook whose sender could not be proven (bad or missing signature, stale timestamp). */
export class ProviderWebhookRejected extends Error {
  override readonly name = 'ProviderWebhookRejected';
}

/** The provider definitely did not do what it was asked (and will not): a known outcome. */
export class ProviderRefusal extends Error {
  override readonly name = 'ProviderRefusal';
}

/** What a provider reports about an order after placing it (a webhook, or the test helpers). */
export interface ProviderReport {
  workspaceId: string;
  incentiveId: string;
  /** `claimed`: the recipient claimed the money; `failed`: the provider could not deliver it. */
  kind: 'claimed' | 'failed';
  /** Why it failed, in the provider's words. */
  reason?: string;
  /** The provider's id of the order, if the report carries it. */
  reference?: string;
}
