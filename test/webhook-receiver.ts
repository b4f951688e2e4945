import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedDelivery {
  headers: IncomingHttpHeaders;
  body: string;
  receivedAtMs: number;
}

/** How the receiver answers the nth request (0-based): a status and a body. */
export type Answer = (request: ReceivedDelivery, index: number) => { status: number; body?: string; delayMs?: number };

/**
 * A webhook receiver on loopback, as an integrator's would be: it records every request (headers,
 * raw body, arrival time) and answers as the test says (200 by default).
 */
export class WebhookReceiver {
  readonly received: ReceivedDelivery[] = [];
  answer: Answer = () => ({ status: 200, body: 'ok' });
  private waiters: { count: number; resolve: () => void }[] = [];

  /** Where to send: set once the server listens. */
  url = '';

  private constructor(private readonly server: Server) {}

  static async start(path = '/hooks'): Promise<WebhookReceiver> {
    const server = createServer();
    const receiver = new WebhookReceiver(server);
    server.on('request', (request: IncomingMessage, response: ServerResponse) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const delivery = { headers: request.headers, body: Buffer.concat(chunks).toString('utf8'), receivedAtMs: Date.now() };
        const index = receiver.received.length;
        receiver.received.push(delivery);
        const { status, body = '', delayMs = 0 } = receiver.answer(delivery, index);
        setTimeout(() => {
          response.writeHead(status, { 'content-type': 'text/plain' }).end(body);
          receiver.notify();
        }, delayMs);
      });
    });
    server.keepAliveTimeout = 1000;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
    return receiver;
  }

  /** The parsed bodies received so far. */
  events(): { type: string; timestamp: string; data: Record<string, unknown> }[] {
    return this.received.map((delivery) => JSON.parse(delivery.body) as { type: string; timestamp: string; data: Record<string, unknown> });
  }

  /** Resolves once `count` requests have been answered in all; rejects after `timeoutMs`. */
  waitFor(count: number, timeoutMs = 10_000): Promise<void> {
    if (this.received.length >= count) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`expected ${count} deliveries within ${timeoutMs} ms, got ${this.received.length}`)), timeoutMs);
      this.waiters.push({ count, resolve: () => (clearTimeout(timer), resolve()) });
    });
  }

  private notify(): void {
    const ready = this.waiters.filter((waiter) => this.received.length >= waiter.count);
    this.waiters = this.waiters.filter((waiter) => this.received.length < waiter.count);
    for (const waiter of ready) waiter.resolve();
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
