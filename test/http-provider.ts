import http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type IncentiveProvider,
  type ProviderCallOptions,
  type ProviderOrder,
  type ProviderOrderResult,
  type ProviderOrderState,
  ProviderRefusal,
  type ProviderTarget,
} from '../src/providers/provider.js';

/**
 * An incentive provider outside the server's process, for tests that kill the server: a small
 * HTTP service the test runs (FakeProvider), and the adapter a server uses to reach it
 * (HttpTestProvider, installed by test/server-with-http-provider.ts). Its protocol is the one the
 * adapter example in src/providers/provider.ts sketches: POST /orders with the order and an
 * `Idempotency-Key` of `workspaceId:incentiveId`; a key already ordered answers that order again.
 */

/** The adapter: the service's provider calls as HTTP requests to the fake provider at `baseUrl`. */
export class HttpTestProvider implements IncentiveProvider {
  readonly name = 'sandbox';
  constructor(private readonly baseUrl: string) {}

  async order(order: ProviderOrder, { signal }: ProviderCallOptions): Promise<ProviderOrderResult> {
    const body = await this.post('/orders', `${order.workspaceId}:${order.incentiveId}`, order, signal);
    return { reference: (body as { orderId: string }).orderId };
  }

  async resend(target: ProviderTarget, { signal }: ProviderCallOptions): Promise<void> {
    await this.post('/resends', `${target.workspaceId}:${target.incentiveId}`, target, signal);
  }

  async void(target: ProviderTarget, { signal }: ProviderCallOptions): Promise<void> {
    await this.post('/voids', `${target.workspaceId}:${target.incentiveId}`, target, signal);
  }

  /** This fake keeps no claims: an order it placed is open. */
  async status(target: ProviderTarget, { signal }: ProviderCallOptions): Promise<ProviderOrderState> {
    const body = (await this.post('/lookups', `${target.workspaceId}:${target.incentiveId}`, target, signal)) as { orderId?: string } | undefined;
    return body?.orderId ? { state: 'open' } : { state: 'not_found' };
  }

  private async post(path: string, key: string, payload: unknown, signal: AbortSignal): Promise<unknown> {
    const response = await fetch(`${this.baseUrl}${path}`, {
      method: 'POST',
      signal,
      headers: { 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify(payload),
    });
    const text = await response.text();
    if (response.status === 422) throw new ProviderRefusal(text);
    if (!response.ok) throw new Error(`the provider answered ${response.status}`);
    return text ? JSON.parse(text) : undefined;
  }
}

/** One request the fake provider received. */
export interface Receipt {
  operation: 'orders' | 'resends' | 'voids' | 'lookups';
  key: string;
  incentiveId: string;
  /** Whether the requester was sent an answer (false: it was held, and its connection closed first). */
  answered: boolean;
}

/**
 * The provider's side, in the test's process: it outlives the server processes the test kills.
 * An order is placed when its request arrives (before any answer goes back), once per
 * idempotency key; `hold` keeps the answers back, so the orders are in flight at the server.
 */
export class FakeProvider {
  readonly receipts: Receipt[] = [];
  /** Orders placed, by idempotency key: one per key, however often it is asked. */
  readonly orders = new Map<string, { orderId: string; incentiveId: string }>();
  hold = false;
  private readonly held = new Set<http.ServerResponse>();
  private readonly server: http.Server;

  private constructor() {
    this.server = http.createServer((request, response) => {
      let text = '';
      request.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      request.on('end', () => this.receive(request, response, text));
    });
  }

  static async start(): Promise<FakeProvider> {
    const provider = new FakeProvider();
    await new Promise<void>((resolve) => provider.server.listen(0, '127.0.0.1', resolve));
    return provider;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  receiptsOf(incentiveId: string, operation: Receipt['operation'] = 'orders'): Receipt[] {
    return this.receipts.filter((receipt) => receipt.incentiveId === incentiveId && receipt.operation === operation);
  }

  async close(): Promise<void> {
    for (const response of this.held) response.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private receive(request: http.IncomingMessage, response: http.ServerResponse, text: string) {
    const operation = request.url?.slice(1) as Receipt['operation'];
    const key = String(request.headers['idempotency-key'] ?? '');
    const { incentiveId } = JSON.parse(text) as { incentiveId: string };
    const receipt: Receipt = { operation, key, incentiveId, answered: false };
    this.receipts.push(receipt);
    let answer: unknown = {};
    if (operation === 'orders') {
      let order = this.orders.get(key);
      if (!order) this.orders.set(key, (order = { orderId: `ord_${this.orders.size + 1}`, incentiveId }));
      answer = { orderId: order.orderId };
    } else if (operation === 'lookups') {
      answer = { orderId: this.orders.get(key)?.orderId };
    }
    const send = () => {
      this.held.delete(response);
      if (response.destroyed) return;
      receipt.answered = true;
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
    };
    if (!this.hold) return send();
    this.held.add(response);
    response.on('close', () => this.held.delete(response));
  }
}
