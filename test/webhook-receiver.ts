import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a receiver got. */
export interface Received {
  method: string;
  /** The request's path and query. */
  path: string;
  headers: IncomingHttpHeaders;
  /** The raw body, as signed. */
  body: string;
  receivedAtMs: number;
}

/** What the receiver answers the nth request (0-based) with. */
export interface Answer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
  /** Answer after this long (a slow receiver). */
  delayMs?: number;
}

/**
 * A webhook receiver on 127.0.0.1 (a random port), as an integrator's would be: it records every
 * request (method, path, headers, raw body, arrival time) and answers as the test says (200 by
 * default). Every webhook test uses it: src/families/webhooks/*.test.ts, the crash test, metrics.
 */
export class WebhookReceiver {
  readonly received: Received[] = [];
  private waiters: { count: number; resolve: () => void }[] = [];

  private constructor(
    private readonly server: Server,
    public answer: (request: Received, index: number) => Answer,
  ) {}

  static async start(answer: (request: Received, index: number) => Answer = () => ({ status: 200, body: 'ok' })): Promise<WebhookReceiver> {
    const server = createServer();
    const receiver = new WebhookReceiver(server, answer);
    server.on('request', (request: IncomingMessage, response: ServerResponse) => receiver.handle(request, response));
    server.on('clientError', (_error, socket) => socket.destroy());
    server.keepAliveTimeout = 1000;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  /** `http://127.0.0.1:<port>` and `path`. */
  url(path = '/hooks'): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}${path}`;
  }

  /** The parsed bodies received so far. */
  events(): { type: string; timestamp: string; data: Record<string, unknown> }[] {
    return this.received.map((request) => JSON.parse(request.body) as { type: string; timestamp: string; data: Record<string, unknown> });
  }

  /** Resolves once `count` requests have been answered in all; rejects after `timeoutMs`. */
  waitFor(count: number, timeoutMs = 10_000): Promise<void> {
    if (this.received.length >= count) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`expected ${count} deliveries within ${timeoutMs} ms, got ${this.received.length}`)), timeoutMs);
      this.waiters.push({ count, resolve: () => (clearTimeout(timer), resolve()) });
    });
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(request: IncomingMessage, response: ServerResponse): void {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const received = { method: request.method ?? '', path: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks).toString('utf8'), receivedAtMs: Date.now() };
      const index = this.received.length;
      this.received.push(received);
      const { status, headers = {}, body = '', delayMs = 0 } = this.answer(received, index);
      // The sender reads 1 KB of an answer and drops the connection (and a killed server drops it too): a write after that is no error here.
      response.on('error', () => {});
      const reply = () => {
        response.writeHead(status, { 'content-type': 'text/plain', ...headers }).end(body);
        this.notify();
      };
      if (delayMs > 0) setTimeout(reply, delayMs);
      else reply();
    });
  }

  private notify(): void {
    const ready = this.waiters.filter((waiter) => this.received.length >= waiter.count);
    this.waiters = this.waiters.filter((waiter) => this.received.length < waiter.count);
    for (const waiter of ready) waiter.resolve();
  }
}
