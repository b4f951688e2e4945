import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A fake of the Tremendous REST API v2 on loopback, for tests and the incentives bench: the part
 * of the published reference (https://developers.tremendous.com/reference) the adapter
 * (src/providers/tremendous/adapter.ts) uses, answered as documented. It is written from the
 * documentation, not recorded from the live service: it proves the adapter keeps the documented
 * contract, not that the documentation is complete.
 *
 * What it does: Bearer API keys (401 otherwise); POST /orders (one reward, `external_id`
 * idempotent: a repeated external_id answers 201 with the first order and creates nothing);
 * GET /orders/{id or external_id}; GET /rewards/{id}; POST /rewards/{id}/resend; POST
 * /rewards/{id}/cancel (refused once redeemed); the error body `{ "errors": { "message", "payload" } }`
 * with 400, 401, 404, 422, 429 and 5xx; signed webhooks (`Tremendous-Webhook-Signature:
 * sha256=<hex HMAC-SHA256 of the body with the webhook's private key>`) sent to the URL a test
 * gives, and forged or replayed ones on demand. Faults are injected per operation.
 *
 * What it does not: funding sources and balances (every order is paid), campaigns and products
 * (any campaign id is taken), order approvals, fraud review, LINK or PHONE delivery, rate limits
 * of its own (429 only when injected), pagination, and the real service's timing.
 */

export type TremendousOperation = 'order' | 'getOrder' | 'getReward' | 'resend' | 'cancel';
/**
 * - `hang`: never answers (the client's timeout ends it);
 * - `fail-before`: 500, nothing done;
 * - `fail-after`: the work done, then 500 (the answer lost);
 * - `refuse`: 422, nothing done;
 * - `throttle`: 429 with Retry-After, nothing done;
 * - `drop-after`: the work done, then the connection destroyed without an answer.
 */
export type TremendousFault = 'hang' | 'fail-before' | 'fail-after' | 'refuse' | 'throttle' | 'drop-after';

export interface FakeReward {
  id: string;
  order_id: string;
  created_at: string;
  value: { denomination: number; currency_code: string };
  recipient: { name: string; email: string };
  delivery: { method: 'EMAIL'; status: 'SCHEDULED' | 'PENDING' | 'SUCCEEDED' | 'FAILED' };
}

export interface FakeOrder {
  id: string;
  external_id: string | null;
  created_at: string;
  status: 'EXECUTED' | 'CANCELED' | 'FAILED';
  payment: { subtotal: number; total: number; fees: number };
  rewards: FakeReward[];
}

/** One request the fake received. */
export interface TremendousReceipt {
  operation: TremendousOperation | 'unknown';
  method: string;
  path: string;
  externalId?: string;
  /** The fake did the work asked (an order created, a resend counted, a reward canceled). */
  acted: boolean;
  /** performance.now() when the request's body had arrived (the bench measures to it). */
  receivedAt: number;
  status: number | null;
}

const id = () => randomBytes(6).toString('hex').toUpperCase();

export class TremendousFake {
  readonly apiKeys = new Set<string>();
  readonly orders = new Map<string, FakeOrder>();
  readonly receipts: TremendousReceipt[] = [];
  /** Orders created, per external_id: a second one would be a double payment. */
  readonly createdPerExternalId = new Map<string, number>();
  readonly resends = new Map<string, number>();
  readonly redeemed = new Set<string>();
  latencyMs = 0;
  /** Holds every answer back after doing the work (orders in flight at their client, as before a kill). */
  hold = false;
  private readonly byExternalId = new Map<string, string>();
  private readonly rewards = new Map<string, { reward: FakeReward; order: FakeOrder }>();
  private readonly faults: Record<TremendousOperation, TremendousFault[]> = { order: [], getOrder: [], getReward: [], resend: [], cancel: [] };
  private readonly hanging = new Set<http.ServerResponse>();
  private readonly server: http.Server;
  webhook: { url: string; privateKey: string } | undefined;
  /** Webhook deliveries sent, with what the receiver answered (a replay sends a body again). */
  readonly sentWebhooks: { body: string; status: number }[] = [];

  private constructor() {
    this.server = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => void this.receive(request, response, Buffer.concat(chunks).toString('utf8')));
    });
    this.server.keepAliveTimeout = 5_000;
  }

  static async start(apiKey = `TEST_${randomBytes(16).toString('hex')}`): Promise<TremendousFake> {
    const fake = new TremendousFake();
    fake.apiKeys.add(apiKey);
    await new Promise<void>((resolve) => fake.server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  get apiKey(): string {
    return [...this.apiKeys][0]!;
  }

  /** The API's base URL, as TREMENDOUS_API_URL takes it. */
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/api/v2`;
  }

  injectFault(operation: TremendousOperation, fault: TremendousFault, times = 1): void {
    for (let count = 0; count < times; count++) this.faults[operation].push(fault);
  }

  clearFaults(): void {
    this.latencyMs = 0;
    for (const operation of Object.keys(this.faults) as TremendousOperation[]) this.faults[operation] = [];
  }

  orderOf(externalId: string): FakeOrder | undefined {
    const orderId = this.byExternalId.get(externalId);
    return orderId ? this.orders.get(orderId) : undefined;
  }

  receiptsOf(externalId: string, operation: TremendousOperation = 'order'): TremendousReceipt[] {
    return this.receipts.filter((receipt) => receipt.externalId === externalId && receipt.operation === operation);
  }

  /** Orders created more than once for one external_id: what must never happen. */
  doubleOrders(): number {
    return [...this.createdPerExternalId.values()].filter((count) => count > 1).length;
  }

  /** The webhook body Tremendous sends for an event about a reward. */
  webhookBody(event: string, rewardId: string, uuid: string = randomUUID()): string {
    return JSON.stringify({ event, uuid, created_utc: new Date().toISOString(), payload: { resource: { id: rewardId, type: 'rewards' }, meta: {} } });
  }

  static sign(body: string, privateKey: string): string {
    return `sha256=${createHmac('sha256', privateKey).update(body).digest('hex')}`;
  }

  /**
   * Changes a reward's delivery as Tremendous would see it, and (unless `notify` is false, a
   * webhook lost) sends the webhook: SUCCEEDED → REWARDS.DELIVERY.SUCCEEDED, FAILED → REWARDS.DELIVERY.FAILED.
   */
  async deliver(externalId: string, status: 'SUCCEEDED' | 'FAILED', options: { notify?: boolean } = {}): Promise<{ body: string; status: number } | undefined> {
    const order = this.orderOf(externalId);
    const reward = order?.rewards[0];
    if (!reward) throw new Error(`The fake holds no order ${externalId}`);
    reward.delivery.status = status;
    if (options.notify === false) return undefined;
    return this.sendWebhook(this.webhookBody(status === 'SUCCEEDED' ? 'REWARDS.DELIVERY.SUCCEEDED' : 'REWARDS.DELIVERY.FAILED', reward.id));
  }

  /** Sends `body` to the webhook URL, signed with its private key (or with `signature` given: a forgery). */
  async sendWebhook(body: string, options: { signature?: string } = {}): Promise<{ body: string; status: number }> {
    if (!this.webhook) throw new Error('No webhook is set on the fake');
    const response = await fetch(this.webhook.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'tremendous-webhook-signature': options.signature ?? TremendousFake.sign(body, this.webhook.privateKey) },
      body,
    });
    await response.text();
    const sent = { body, status: response.status };
    this.sentWebhooks.push(sent);
    return sent;
  }

  async close(): Promise<void> {
    for (const response of this.hanging) response.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async receive(request: http.IncomingMessage, response: http.ServerResponse, text: string) {
    const url = new URL(request.url ?? '/', 'http://fake');
    const path = url.pathname.replace(/^\/api\/v2/, '');
    const method = request.method ?? 'GET';
    const route = this.route(method, path);
    const receipt: TremendousReceipt = { operation: route?.operation ?? 'unknown', method, path, acted: false, status: null, receivedAt: performance.now() };
    this.receipts.push(receipt);
    const answer = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      receipt.status = status;
      this.hanging.delete(response);
      if (!response.destroyed) response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
    };
    const error = (status: number, message: string, payload: unknown = {}) => answer(status, { errors: { message, payload } });
    if (this.latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, this.latencyMs));

    const authorization = request.headers.authorization ?? '';
    if (!authorization.startsWith('Bearer ') || !this.apiKeys.has(authorization.slice('Bearer '.length))) return error(401, 'Unauthorized: the API key is missing or invalid');
    if (!route) return error(404, 'Resource not found');

    let body: Record<string, unknown> = {};
    if (method === 'POST' && text) {
      try {
        body = JSON.parse(text) as Record<string, unknown>;
      } catch {
        return error(400, 'The request body is not valid JSON');
      }
    }
    if (route.operation === 'order') receipt.externalId = typeof body.external_id === 'string' ? body.external_id : undefined;
    const fault = this.faults[route.operation].shift();
    if (fault === 'hang') {
      this.hanging.add(response);
      response.on('close', () => this.hanging.delete(response));
      return;
    }
    if (fault === 'fail-before') return error(500, 'Internal server error (injected)');
    if (fault === 'refuse') return error(422, 'The request was refused (injected)');
    if (fault === 'throttle') return answer(429, { errors: { message: 'Too many requests (injected)', payload: {} } }, { 'retry-after': '1' });

    const result = route.handle(body, receipt);
    if (fault === 'fail-after') return error(500, 'Internal server error (injected, after the work was done)');
    if (fault === 'drop-after') {
      receipt.status = null;
      response.destroy();
      return;
    }
    if (this.hold) {
      this.hanging.add(response);
      response.on('close', () => this.hanging.delete(response));
      return;
    }
    return answer(result.status, result.body);
  }

  private route(method: string, path: string): { operation: TremendousOperation; handle: (body: Record<string, unknown>, receipt: TremendousReceipt) => { status: number; body: unknown } } | undefined {
    const notFound = { status: 404, body: { errors: { message: 'Resource not found', payload: {} } } };
    if (method === 'POST' && path === '/orders') return { operation: 'order', handle: (body, receipt) => this.createOrder(body, receipt) };
    let match = /^\/orders\/([^/]+)$/.exec(path);
    if (method === 'GET' && match) {
      const key = decodeURIComponent(match[1]!);
      return { operation: 'getOrder', handle: () => { const order = this.orders.get(key) ?? this.orderOf(key); return order ? { status: 200, body: { order } } : notFound; } };
    }
    match = /^\/rewards\/([^/]+)$/.exec(path);
    if (method === 'GET' && match) {
      const rewardId = decodeURIComponent(match[1]!);
      return { operation: 'getReward', handle: () => { const found = this.rewards.get(rewardId); return found ? { status: 200, body: { reward: found.reward } } : notFound; } };
    }
    match = /^\/rewards\/([^/]+)\/(resend|cancel)$/.exec(path);
    if (method === 'POST' && match) {
      const rewardId = decodeURIComponent(match[1]!);
      const action = match[2] as 'resend' | 'cancel';
      return {
        operation: action,
        handle: (_body, receipt) => {
          const found = this.rewards.get(rewardId);
          if (!found) return notFound;
          if (found.order.status === 'CANCELED') return { status: 422, body: { errors: { message: 'The reward was canceled', payload: {} } } };
          if (action === 'resend') {
            receipt.acted = true;
            this.resends.set(rewardId, (this.resends.get(rewardId) ?? 0) + 1);
            found.reward.delivery.status = 'SCHEDULED';
            return { status: 200, body: {} };
          }
          if (this.redeemed.has(rewardId)) return { status: 422, body: { errors: { message: 'The reward was already redeemed and cannot be canceled', payload: {} } } };
          receipt.acted = true;
          found.order.status = 'CANCELED';
          return { status: 200, body: { reward: found.reward } };
        },
      };
    }
    return undefined;
  }

  private createOrder(body: Record<string, unknown>, receipt: TremendousReceipt): { status: number; body: unknown } {
    const invalid = (message: string, field: string) => ({ status: 400, body: { errors: { message, payload: { [field]: [message] } } } });
    const externalId = typeof body.external_id === 'string' ? body.external_id : null;
    if (externalId !== null) {
      const first = this.orderOf(externalId);
      if (first) return { status: 201, body: { order: first } };
    }
    const payment = body.payment as { funding_source_id?: unknown } | undefined;
    if (typeof payment?.funding_source_id !== 'string') return invalid('payment.funding_source_id is required', 'payment');
    const reward = body.reward as { campaign_id?: unknown; products?: unknown; value?: { denomination?: unknown; currency_code?: unknown }; recipient?: { name?: unknown; email?: unknown }; delivery?: { method?: unknown } } | undefined;
    if (!reward) return invalid('reward is required', 'reward');
    if (typeof reward.campaign_id !== 'string' && !Array.isArray(reward.products)) return invalid('Either products or campaign_id must be specified', 'reward');
    const denomination = reward.value?.denomination;
    if (typeof denomination !== 'number' || !(denomination > 0)) return invalid('reward.value.denomination must be a positive number', 'reward');
    const currency = reward.value?.currency_code;
    if (typeof currency !== 'string' || !/^[A-Z]{3}$/.test(currency)) return invalid('reward.value.currency_code must be an ISO 4217 code', 'reward');
    if (typeof reward.recipient?.email !== 'string' || !reward.recipient.email.includes('@')) return invalid('reward.recipient.email is invalid', 'reward');
    if (typeof reward.recipient.name !== 'string' || reward.recipient.name === '') return invalid('reward.recipient.name is required', 'reward');
    if (reward.delivery?.method !== 'EMAIL') return invalid('reward.delivery.method must be EMAIL in this fake', 'reward');
    const at = new Date().toISOString();
    const orderId = id();
    const order: FakeOrder = {
      id: orderId,
      external_id: externalId,
      created_at: at,
      status: 'EXECUTED',
      payment: { subtotal: denomination, total: denomination, fees: 0 },
      rewards: [],
    };
    const created: FakeReward = {
      id: id(),
      order_id: orderId,
      created_at: at,
      value: { denomination, currency_code: currency },
      recipient: { name: reward.recipient.name, email: reward.recipient.email },
      delivery: { method: 'EMAIL', status: 'SCHEDULED' },
    };
    order.rewards.push(created);
    this.orders.set(orderId, order);
    this.rewards.set(created.id, { reward: created, order });
    if (externalId !== null) {
      this.byExternalId.set(externalId, orderId);
      this.createdPerExternalId.set(externalId, (this.createdPerExternalId.get(externalId) ?? 0) + 1);
    }
    receipt.acted = true;
    return { status: 201, body: { order } };
  }
}
