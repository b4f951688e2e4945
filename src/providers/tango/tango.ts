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
} from '../provider.js';
import { TANGO_CLAIMED_REWARD_STATUSES, tangoExternalRefId } from './refs.js';
import { readTangoWebhook } from './webhook.js';

export { TANGO_CLAIMED_REWARD_STATUSES, incentiveIdFromTangoRef, tangoExternalRefId } from './refs.js';

/**
 * Tango Card (Tango RaaS API v2) as an incentive provider. Written to Tango's published
 * documentation (docs/operating/payout-providers-tango.md lists the pages) and tested against
 * test/fakes/tango-fake.ts, never against the live service.
 *
 * - Auth: HTTP Basic with the platform name and key.
 * - Order: POST /orders with `externalRefID` as the idempotency key. Tango keeps one order per
 *   externalRefID per account and answers a repeat with the first order (200 instead of 201), so a
 *   retry after a timeout or a 5xx never pays twice ("order requests receiving a 5XX error may
 *   occasionally process after a network connection is lost").
 * - The currency of an order is the currency of the catalog item (UTID) ordered: the request has no
 *   currency field, so each currency the workspace pays in needs a UTID of that currency.
 * - Resend: POST /orders/{referenceOrderID}/resends.
 * - Void: Tango cancels line items, not orders (POST /lineItems/{referenceLineItemID}/cancel), and
 *   only for a fully unredeemed Choice Product within five calendar days of sending: anything else
 *   is a definite refusal.
 * - Status: GET /orders/{referenceOrderID} (or GET /orders?externalRefID=…) and the order's line
 *   items (GET /lineItems?referenceOrderID=…) for redemption and delivery.
 */

/** Tango's two environments (the base URIs its documentation gives). */
export const TANGO_SANDBOX_API_URL = 'https://integration-api.tangocard.com/raas/v2';
export const TANGO_PRODUCTION_API_URL = 'https://api.tangocard.com/raas/v2';

/** What a workspace stores to pay through Tango (the framework encrypts them under SECRETS_KEY). */
export const TANGO_CREDENTIALS = [
  { name: 'platformName', required: true, secret: false, description: 'Platform name (Basic auth user), from the Tango portal' },
  { name: 'platformKey', required: true, secret: true, description: 'Platform key (Basic auth password), from the Tango portal' },
  { name: 'customerIdentifier', required: true, secret: false, description: 'The customer (group) the orders are placed under' },
  { name: 'accountIdentifier', required: true, secret: false, description: 'The funded account orders are paid from; idempotency is per account' },
  { name: 'utid', required: false, secret: false, description: 'Default catalog item (UTID) ordered, in the currency `utidCurrency`' },
  { name: 'utidCurrency', required: false, secret: false, description: 'ISO 4217 currency of `utid` (USD when absent)' },
  { name: 'utid<CURRENCY>', required: false, secret: false, description: 'Catalog item for one currency, e.g. utidEUR; wins over `utid`' },
  { name: 'etid', required: false, secret: false, description: 'Email template id for the reward email' },
  { name: 'webhookSecret', required: false, secret: true, description: 'The base64 HMAC key given to Tango as hmacSharedSecretKey; passed to readWebhook as `secret`' },
] as const;

/**
 * The currencies a workspace may name a catalog item for (`utidEUR`, …): the ones the service pays
 * in (src/families/incentives/currencies.ts; a test keeps the two lists equal, since adapters
 * import no family).
 */
export const TANGO_ITEM_CURRENCIES = ['USD', 'EUR', 'GBP', 'CAD', 'AUD', 'NZD', 'CHF', 'SEK', 'NOK', 'DKK', 'JPY', 'BHD'] as const;

/** The credential names, for the framework's validation. */
export const TANGO_REQUIRED_CREDENTIALS = TANGO_CREDENTIALS.filter((credential) => credential.required).map((credential) => credential.name);
export const TANGO_WEBHOOK_SECRET_CREDENTIAL = 'webhookSecret';

export interface TangoSettings {
  credentials: Readonly<Record<string, string>>;
  /** The RaaS v2 base URL, ending in /raas/v2 (sandbox, production, or a fake on loopback). */
  apiBaseUrl: string;
}

/** A workspace's Tango settings that cannot work (a missing credential): named, before any call. */
export class TangoConfigurationError extends Error {
  override readonly name = 'TangoConfigurationError';
}

/** An answer whose outcome is unknown (5xx, 429, a body that is not Tango's): the service retries with the same key. */
export class TangoUnavailable extends Error {
  override readonly name = 'TangoUnavailable';
}

export function createTangoProvider(settings: TangoSettings): IncentiveProvider {
  return new TangoProvider(settings);
}

/** Tango's error body (its "response classes" page): `errors[]` with an i18nKey per problem. */
interface TangoErrorBody {
  httpCode?: number;
  httpPhrase?: string;
  requestId?: string;
  errors?: { path?: string; code?: number; i18nKey?: string; message?: string }[];
  message?: string;
}

interface TangoOrder {
  referenceOrderID: string;
  externalRefID?: string;
  status?: string;
}

interface TangoLineItem {
  referenceLineItemID: string;
  status?: string;
  rewardStatus?: string;
  emailStatus?: string;
  deliveryStatus?: string;
  canCancel?: boolean;
}

/** Email statuses of a reward that did not reach its recipient (GET /lineItems `emailStatus` values). */
const UNDELIVERED_EMAIL_STATUSES: ReadonlySet<string> = new Set(['BOUNCE', 'DROPPED', 'BLOCKED']);

/** Digits after the decimal point of a currency (ISO 4217 exponent as CLDR has it: JPY 0, USD 2, BHD 3). */
export function currencyExponent(currency: string): number {
  try {
    return new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
  } catch {
    throw new ProviderRefusal(`${currency} is not an ISO 4217 currency code`);
  }
}

/** An amount in the minor unit as Tango's `amount` (a decimal number in the major unit). */
export function tangoAmount(amountMinor: number, currency: string): number {
  if (!Number.isSafeInteger(amountMinor) || amountMinor <= 0) throw new ProviderRefusal(`amount must be a positive whole number of the minor unit, got ${amountMinor}`);
  // Division is correctly rounded, so the double printed is the decimal meant (e.g. 1999 / 100 → 19.99).
  return amountMinor / 10 ** currencyExponent(currency);
}

function describeError(status: number, body: TangoErrorBody | undefined): string {
  const details = (body?.errors ?? [])
    .map((error) => [error.path, error.message].filter(Boolean).join(': ') + (error.i18nKey ? ` (i18nKey ${error.i18nKey})` : ''))
    .filter(Boolean)
    .join('; ');
  const phrase = body?.httpPhrase ? ` ${body.httpPhrase}` : '';
  return `Tango answered ${status}${phrase}${details ? `: ${details}` : body?.message ? `: ${body.message}` : ''}${body?.requestId ? ` [requestId ${body.requestId}]` : ''}`;
}

export class TangoProvider implements IncentiveProvider {
  readonly name = 'tango';
  private readonly baseUrl: string;
  private readonly authorization: string;
  private readonly credentials: Readonly<Record<string, string>>;

  constructor(settings: TangoSettings) {
    const missing = TANGO_REQUIRED_CREDENTIALS.filter((name) => !settings.credentials[name]);
    if (missing.length > 0) throw new TangoConfigurationError(`Tango needs the credentials ${missing.join(', ')}`);
    if (!settings.credentials.utid && !Object.keys(settings.credentials).some((name) => /^utid[A-Z]{3}$/.test(name) && settings.credentials[name])) {
      throw new TangoConfigurationError('Tango needs a catalog item to order: utid (with utidCurrency) or utid<CURRENCY>');
    }
    let url: URL;
    try {
      url = new URL(settings.apiBaseUrl);
    } catch {
      throw new TangoConfigurationError(`apiBaseUrl ${settings.apiBaseUrl} is not a URL`);
    }
    this.baseUrl = url.href.replace(/\/+$/, '');
    this.credentials = settings.credentials;
    this.authorization = `Basic ${Buffer.from(`${settings.credentials.platformName}:${settings.credentials.platformKey}`).toString('base64')}`;
  }

  /** The catalog item ordered for a currency, or a refusal naming the currency. */
  utidFor(currency: string): string {
    const specific = this.credentials[`utid${currency}`];
    if (specific) return specific;
    if (this.credentials.utid && (this.credentials.utidCurrency ?? 'USD') === currency) return this.credentials.utid;
    throw new ProviderRefusal(`Tango pays ${currency} only through a catalog item (UTID) in ${currency}; none is configured for this workspace (set utid${currency})`);
  }

  async order(order: ProviderOrder, { signal }: ProviderCallOptions): Promise<ProviderOrderResult> {
    const utid = this.utidFor(order.currency);
    const amount = tangoAmount(order.amountCents, order.currency);
    const externalRefID = tangoExternalRefId(order.incentiveId);
    const [firstName, ...rest] = (order.recipientName ?? '').trim().split(/\s+/).filter(Boolean);
    const body = {
      accountIdentifier: this.credentials.accountIdentifier,
      customerIdentifier: this.credentials.customerIdentifier,
      utid,
      amount,
      externalRefID,
      sendEmail: true,
      // Tango requires a first name when it sends the email; a person without a name on file is "Participant".
      recipient: { email: order.recipientEmail, firstName: (firstName ?? 'Participant').slice(0, 100), ...(rest.length ? { lastName: rest.join(' ').slice(0, 100) } : {}) },
      ...(this.credentials.etid ? { etid: this.credentials.etid } : {}),
      notes: `workspace ${order.workspaceId}`.slice(0, 150),
    };
    const answer = await this.request<TangoOrder>('POST', '/orders', { body, signal });
    if (answer.status !== 200 && answer.status !== 201) throw this.failure(answer.status, answer.body, 'order');
    const placed = answer.body as TangoOrder | undefined;
    if (!placed?.referenceOrderID) throw new TangoUnavailable(`Tango answered ${answer.status} without a referenceOrderID`);
    if (placed.externalRefID !== undefined && placed.externalRefID !== externalRefID) {
      throw new TangoUnavailable(`Tango answered with order ${placed.referenceOrderID} of externalRefID ${placed.externalRefID}, not ${externalRefID}`);
    }
    return { reference: placed.referenceOrderID };
  }

  async resend(target: ProviderTarget, { signal }: ProviderCallOptions): Promise<void> {
    const reference = target.reference ?? (await this.findByExternalRef(target.incentiveId, signal))?.referenceOrderID;
    if (!reference) throw new ProviderRefusal(`Tango has no order for incentive ${target.incentiveId} to resend`);
    const answer = await this.request('POST', `/orders/${encodeURIComponent(reference)}/resends`, { body: {}, signal });
    if (answer.status !== 200 && answer.status !== 201) throw this.failure(answer.status, answer.body, 'resend');
  }

  /**
   * Cancels every line item of the order. An order Tango does not know, or one already canceled or
   * failed (refunded), counts as voided. Tango cancels only fully unredeemed Choice Products within
   * five days of sending (`canCancel`); anything else is a refusal, since it will not become possible.
   */
  async void(target: ProviderTarget, { signal }: ProviderCallOptions): Promise<void> {
    const order = await this.findOrder(target, signal);
    if (!order || order.status === 'CANCELLED' || order.status === 'FAILED') return;
    const items = await this.lineItems(order.referenceOrderID, signal);
    const open = items.filter((item) => item.status !== 'CANCELLED' && item.status !== 'FAILED' && item.rewardStatus !== 'CANCELLED');
    if (items.length === 0) throw new ProviderRefusal(`Tango order ${order.referenceOrderID} has no line item to cancel yet`);
    for (const item of open) {
      if (item.canCancel === false) {
        throw new ProviderRefusal(
          `Tango will not cancel line item ${item.referenceLineItemID} of order ${order.referenceOrderID}: only a fully unredeemed Choice Product within five days of sending can be canceled`,
        );
      }
      const answer = await this.request('POST', `/lineItems/${encodeURIComponent(item.referenceLineItemID)}/cancel`, {
        body: { reasonCode: 'OTHER', otherReason: 'Incentive canceled by the research team' },
        signal,
      });
      if (answer.status !== 200 && answer.status !== 202) throw this.failure(answer.status, answer.body, 'cancel');
    }
  }

  async status(target: ProviderTarget, { signal }: ProviderCallOptions): Promise<ProviderOrderState> {
    const order = await this.findOrder(target, signal);
    if (!order) return { state: 'not_found' };
    if (order.status === 'FAILED') return { state: 'failed', reason: `Tango order ${order.referenceOrderID} FAILED` };
    if (order.status === 'CANCELLED') return { state: 'canceled' };
    const items = await this.lineItems(order.referenceOrderID, signal);
    if (items.some((item) => item.rewardStatus && TANGO_CLAIMED_REWARD_STATUSES.has(item.rewardStatus))) return { state: 'claimed' };
    if (items.length > 0 && items.every((item) => item.status === 'CANCELLED' || item.rewardStatus === 'CANCELLED')) return { state: 'canceled' };
    const failed = items.find((item) => item.status === 'FAILED');
    if (failed) return { state: 'failed', reason: `Tango line item ${failed.referenceLineItemID} FAILED` };
    const bounced = items.find((item) => item.emailStatus && UNDELIVERED_EMAIL_STATUSES.has(item.emailStatus));
    if (bounced) return { state: 'failed', reason: `Tango could not deliver the reward email (${bounced.emailStatus})` };
    return { state: 'open' };
  }

  readWebhook(delivery: ProviderWebhookInput): ProviderWebhookEvent {
    return readTangoWebhook(delivery);
  }

  /** The order by its reference when known, else by externalRefID; null when Tango has none. */
  private async findOrder(target: ProviderTarget, signal: AbortSignal): Promise<TangoOrder | null> {
    if (!target.reference) return this.findByExternalRef(target.incentiveId, signal);
    const answer = await this.request<TangoOrder>('GET', `/orders/${encodeURIComponent(target.reference)}`, { signal });
    if (answer.status === 404) return null;
    if (answer.status !== 200) throw this.failure(answer.status, answer.body, 'lookup');
    const order = answer.body as TangoOrder | undefined;
    if (!order?.referenceOrderID) throw new TangoUnavailable(`Tango answered 200 to GET /orders/${target.reference} without an order`);
    return order;
  }

  private async findByExternalRef(incentiveId: string, signal: AbortSignal): Promise<TangoOrder | null> {
    const query = new URLSearchParams({
      externalRefID: tangoExternalRefId(incentiveId),
      accountIdentifier: this.credentials.accountIdentifier!,
      customerIdentifier: this.credentials.customerIdentifier!,
    });
    const answer = await this.request<{ orders?: TangoOrder[] }>('GET', `/orders?${query}`, { signal });
    if (answer.status !== 200) throw this.failure(answer.status, answer.body, 'lookup');
    const orders = (answer.body as { orders?: TangoOrder[] } | undefined)?.orders;
    if (!Array.isArray(orders)) throw new TangoUnavailable('Tango answered GET /orders without an orders list');
    return orders[0] ?? null;
  }

  private async lineItems(referenceOrderID: string, signal: AbortSignal): Promise<TangoLineItem[]> {
    const answer = await this.request<{ lineItems?: TangoLineItem[] }>('GET', `/lineItems?${new URLSearchParams({ referenceOrderID })}`, { signal });
    if (answer.status === 404) return [];
    if (answer.status !== 200) throw this.failure(answer.status, answer.body, 'lookup');
    const items = (answer.body as { lineItems?: TangoLineItem[] } | undefined)?.lineItems;
    if (!Array.isArray(items)) throw new TangoUnavailable('Tango answered GET /lineItems without a lineItems list');
    return items;
  }

  /**
   * A 4xx other than 408 and 429 is Tango's definite "no" (bad request, bad credentials, insufficient
   * funds, forbidden, not found, conflict, unprocessable): retrying the same request gets the same
   * answer. 408, 429 and 5xx leave the outcome unknown (an order may still be placed).
   */
  private failure(status: number, body: unknown, operation: string): Error {
    const described = describeError(status, body as TangoErrorBody | undefined);
    if (status >= 400 && status < 500 && status !== 408 && status !== 429) return new ProviderRefusal(`${operation}: ${described}`);
    return new TangoUnavailable(`${operation}: ${described}`);
  }

  private async request<T>(method: 'GET' | 'POST', path: string, options: { body?: unknown; signal: AbortSignal }): Promise<{ status: number; body: T | TangoErrorBody | undefined }> {
    const response = await fetch(`${this.baseUrl}${path}`, {
      method,
      signal: options.signal,
      headers: {
        authorization: this.authorization,
        accept: 'application/json',
        ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
    });
    const text = await response.text();
    let body: T | TangoErrorBody | undefined;
    if (text) {
      try {
        body = JSON.parse(text) as T | TangoErrorBody;
      } catch {
        // A body that is not JSON (a proxy's error page): the outcome is unknown whatever the status.
        throw new TangoUnavailable(`Tango answered ${response.status} with a body that is not JSON`);
      }
    }
    return { status: response.status, body };
  }
}
