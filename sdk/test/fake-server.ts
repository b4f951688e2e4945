import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the fake server saw of one request. */
export interface SeenRequest {
  method: string;
  url: URL;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Answer {
  status: number;
  headers?: Record<string, string>;
  /** An object is sent as JSON, a string as text/plain. */
  body?: unknown;
}

export interface FakeServer {
  /** The API root to give the client: `http://127.0.0.1:<port>/v1`. */
  baseUrl: string;
  requests: SeenRequest[];
  close(): Promise<void>;
}

/**
 * A real HTTP server on a free port that answers each request with `answer(request, index)`:
 * the SDK's unit tests exercise its fetch, its retries and its headers over a socket, as a
 * client of the service would.
 */
export async function startFakeServer(answer: (request: SeenRequest, index: number) => Answer): Promise<FakeServer> {
  const requests: SeenRequest[] = [];
  const server: Server = createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const seen: SeenRequest = {
        method: incoming.method ?? 'GET',
        url: new URL(incoming.url ?? '/', 'http://127.0.0.1'),
        headers: incoming.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      requests.push(seen);
      const { status, headers = {}, body } = answer(seen, requests.length - 1);
      const text = body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body);
      const type = body === undefined ? {} : { 'content-type': typeof body === 'string' ? 'text/plain; charset=utf-8' : 'application/json; charset=utf-8' };
      outgoing.writeHead(status, { ...type, ...headers });
      outgoing.end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
