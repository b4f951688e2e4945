import { createHmac, timingSafeEqual } from 'node:crypto';
import {
  type IncentiveProvider,
  type ProviderCallOptions,
  type ProviderOrder,
  type ProviderOrderResult,
  type ProviderOrderState,
  ProviderRefusal,
  type ProviderTarget,
  type ProviderWebhookEvent,
  type ProviderWebhookInput,
  ProviderWebhookRejected,
} from '../provider.js';

/**
 * Tremendous (REST API v2, https://developers.tremendous.com/reference), as its published
 * reference describes it; tested against test/fakes/tremendous-fake.ts, never the live service.
 *
 * - An incentive is one order of one reward, delivered by EMAIL, with `external_id` = the
 *   incentive id: Tremendous answers a repeated external_id with the first order (201 again)
 *   and creates nothing, which is the contract's idempotency. GET /orders/{id} takes the
 *   external_id in place of the id, so an order whose answer was lost is found by the incentive.
 * - The service's reference of an order is the reward's id (resend and cancel act on rewards).
 * - Answers: 2xx done; 429, 5xx, a timeout or a lost connection: unknown (asked again with the
 *   same external_id); any other 4xx (401 bad key, 402/422 refused, 400 invalid): a definite
 *   refusal, nothing was ordered.
 * - Cancel: POST /rewards/{id}/cancel, which Tremendous allows for rewards not yet redeemed; a
 *   refusal (already redeemed) leaves the incentive UNCLAIMED, as the contract says.
 * - Webhooks: `Tremendous-Webhook-Signature: sha256=<hex HMAC-SHA256 of the raw body, keyed
 *   with the webhook's private key>`; the body's `uuid` is the event id. Tremendous publishes no
 *   redemption event: REWARDS.DELIVERY.SUCCEEDED (the reward reached the recipient) is reported
 *   as `claimed`, REWARDS.DELIVERY.FAILED (a bounce) as `failed`; other events are acknowledged
 *   and not acted on (REWARDS.CANCELED is picked up by the reconciliation's status lookup).
 */
export const tremendousApiUrls = {
  SANDBOX: 'https://testflight.tremendous.com/api/v2',
  PRODUCTION: 'https://www.tremendous.com/api/v2',
} as const;

/**
 * apiKey: the API key (Bearer); campaignId: the campaign that sets what the recipient may choose
 * (gift cards, bank transfer…); fundingSourceId: what pays, `balance` unless given;
 * webhookSecret: the private key of the organization's webhook (verifies its signatures).
 */
export const tremendousCredentials = { required: ['apiKey', 'campaignId', 'webhookSecret'], optional: ['fundingSourceId'] } as const;

export const TREMENDOUS_SIGNATURE_HEADER = 'tremendous-webhook-signature';

/** The decimal a minor-unit amount is in the currency's own exponent (JPY 0, USD 2, BHD 3). */
export function denominationOf(amountMinor: number, currency: string): number {
  const exponent = new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
  return Number((amountMinor / 10 ** exponent).toFixed(exponent));
}

interface TremendousReward {
  id: string;
  order_id?: string;
  delivery?: { method?: string; status?: string };
}

interface TremendousOrder {
  id: string;
  external_id?: string | null;
  status: string;
  rewards?: TremendousReward[];
}

/** A 4xx other than 408 and 429 is Tremendous saying no; everything else leaves the outcome unknown. */
const definite = (status: number) => status >= 400 && status < 500 && status !== 408 && status !== 429;

export class TremendousError extends Error {
  override readonly name = 'TremendousError';
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export class TremendousProvider implements IncentiveProvider {
  readonly name = 'tremendous';
  private readonly apiKey: string;
  private readonly campaignId: string;
  private readonly fundingSourceId: string;

  constructor(private readonly settings: { credentials: Readonly<Record<string, string>>; apiBaseUrl: string }) {
    const { apiKey, campaignId, fundingSourceId } = settings.credentials;
    if (!apiKey || !campaignId) throw new Error('A Tremendous account needs apiKey and campaignId');
    this.apiKey = apiKey;
    this.campaignId = campaignId;
    this.fundingSourceId = fundingSourceId || 'balance';
  }

  async order(order: ProviderOrder, { signal }: ProviderCallOptions): Promise<ProviderOrderResult> {
    const { body } = await this.request<{ order: TremendousOrder }>('POST', '/orders', signal, {
      external_id: order.incentiveId,
      payment: { funding_source_id: this.fundingSourceId },
      reward: {
        campaign_id: this.campaignId,
        value: { denomination: denominationOf(order.amountCents, order.currency), currency_code: order.currency },
        recipient: { name: order.recipientName ?? order.recipientEmail, email: order.recipientEmail },
        delivery: { method: 'EMAIL' },
      },
    });
    const reward = body.order.rewards?.[0];
    if (!reward) throw new Error('Tremendous answered an order without its reward');
    return { reference: reward.id };
  }

  async resend(target: ProviderTarget, { signal }: ProviderCallOptions): Promise<void> {
    const rewardId = await this.rewardIdOf(target, signal);
    if (!rewardId) throw new ProviderRefusal('Tremendous holds no order for this incentive');
    try {
      await this.request('POST', `/rewards/${encodeURIComponent(rewardId)}/resend`, signal, {});
    } catch (error) {
      if (error instanceof TremendousError && error.status === 404) throw new ProviderRefusal(error.message);
      throw error;
    }
  }

  async void(target: ProviderTarget, { signal }: ProviderCallOptions): Promise<void> {
    const rewardId = await this.rewardIdOf(target, signal);
    // Never placed: nothing to cancel, which counts as voided.
    if (!rewardId) return;
    try {
      await this.request('POST', `/rewards/${encodeURIComponent(rewardId)}/cancel`, signal, {});
    } catch (error) {
      if (error instanceof TremendousError && error.status === 404) return;
      if (!(error instanceof ProviderRefusal)) throw error;
      // Canceled already (by a retry whose answer was lost, or in Tremendous's dashboard): done.
      const state = await this.status(target, { signal });
      if (state.state === 'canceled' || state.state === 'not_found') return;
      throw error;
    }
  }

  async status(target: ProviderTarget, { signal }: ProviderCallOptions): Promise<ProviderOrderState> {
    const order = await this.findOrder(target.incentiveId, signal);
    if (!order) return { state: 'not_found' };
    if (order.status === 'CANCELED') return { state: 'canceled' };
    if (order.status === 'FAILED') return { state: 'failed', reason: 'Tremendous reports the order FAILED' };
    const delivery = order.rewards?.[0]?.delivery?.status;
    if (delivery === 'SUCCEEDED') return { state: 'claimed' };
    if (delivery === 'FAILED') return { state: 'failed', reason: 'Tremendous reports the reward delivery FAILED' };
    return { state: 'open' };
  }

  readWebhook(delivery: ProviderWebhookInput): ProviderWebhookEvent {
    const header = delivery.headers[TREMENDOUS_SIGNATURE_HEADER];
    const given = typeof header === 'string' && header.startsWith('sha256=') ? Buffer.from(header.slice('sha256='.length), 'hex') : Buffer.alloc(0);
    const expected = createHmac('sha256', delivery.secret).update(delivery.rawBody).digest();
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new ProviderWebhookRejected('The Tremendous signature does not hold');
    let parsed: { event?: unknown; uuid?: unknown; payload?: { resource?: { id?: unknown; type?: unknown } } };
    try {
      parsed = JSON.parse(delivery.rawBody.toString('utf8')) as typeof parsed;
    } catch {
      throw new ProviderWebhookRejected('A signed Tremendous webhook whose body is not JSON');
    }
    if (typeof parsed.uuid !== 'string' || parsed.uuid === '' || typeof parsed.event !== 'string') throw new ProviderWebhookRejected('A Tremendous webhook without its uuid or event');
    const resource = parsed.payload?.resource;
    const rewardId = resource && typeof resource.id === 'string' && (resource.type === undefined || resource.type === 'rewards') ? resource.id : undefined;
    const base = { eventId: parsed.uuid };
    if (!rewardId) return { ...base, report: null };
    if (parsed.event === 'REWARDS.DELIVERY.SUCCEEDED') return { ...base, report: { kind: 'claimed', reference: rewardId } };
    if (parsed.event === 'REWARDS.DELIVERY.FAILED') return { ...base, report: { kind: 'failed', reference: rewardId, reason: 'Tremendous could not deliver the reward (REWARDS.DELIVERY.FAILED)' } };
    return { ...base, report: null };
  }

  private async rewardIdOf(target: ProviderTarget, signal: AbortSignal): Promise<string | undefined> {
    if (target.reference) return target.reference;
    return (await this.findOrder(target.incentiveId, signal))?.rewards?.[0]?.id;
  }

  /** The order placed for an incentive, by its external_id (GET /orders/{id} takes either); undefined when there is none. */
  private async findOrder(incentiveId: string, signal: AbortSignal): Promise<TremendousOrder | undefined> {
    try {
      const { body } = await this.request<{ order: TremendousOrder }>('GET', `/orders/${encodeURIComponent(incentiveId)}`, signal);
      return body.order;
    } catch (error) {
      if (error instanceof TremendousError && error.status === 404) return undefined;
      throw error;
    }
  }

  private async request<T = unknown>(method: 'GET' | 'POST', path: string, signal: AbortSignal, payload?: unknown): Promise<{ status: number; body: T }> {
    const response = await fetch(`${this.settings.apiBaseUrl}${path}`, {
      method,
      signal,
      redirect: 'error',
      headers: {
        authorization: `Bearer ${this.apiKey}`,
        accept: 'application/json',
        ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(payload === undefined ? {} : { body: JSON.stringify(payload) }),
    });
    const text = await response.text();
    if (response.ok) return { status: response.status, body: (text ? JSON.parse(text) : {}) as T };
    const message = `Tremendous answered ${response.status}: ${errorMessage(text)}`;
    if (definite(response.status) && response.status !== 404) throw new ProviderRefusal(message);
    throw new TremendousError(response.status, message);
  }
}

/** Tremendous's error body is `{ "errors": { "message": …, "payload": … } }`. */
function errorMessage(text: string): string {
  try {
    const parsed = JSON.parse(text) as { errors?: { message?: unknown } };
    if (typeof parsed.errors?.message === 'string') return parsed.errors.message.slice(0, 500);
  } catch {
    // not JSON: the text itself
  }
  return text.slice(0, 200);
}
