import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';
import { idPrefixes, newId } from '../../ids.js';
import { call, type Tenant, type TestService } from '../../../test/harness.js';
import { insertMessage } from './queries.js';

/** What a receiver got: one POST. */
export interface Received {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Answer {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

/** A local webhook receiver on 127.0.0.1 (a random port), answering each request with `answer`. */
export interface Receiver {
  /** `http://127.0.0.1:<port>` and the given path. */
  url(path?: string): string;
  received: Received[];
  answer: (request: Received) => Answer;
  close(): Promise<void>;
}

export async function startReceiver(answer: (request: Received) => Answer = () => ({ status: 200, body: 'ok' })): Promise<Receiver> {
  const received: Received[] = [];
  const receiver: Receiver = {
    url: (path = '/hook') => `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`,
    received,
    answer,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const got = { method: request.method ?? '', path: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks).toString('utf8') };
      received.push(got);
      const reply = receiver.answer(got);
      // The sender reads 1 KB of the answer and drops the connection: a write after that is no error here.
      response.on('error', () => {});
      response.writeHead(reply.status, { 'content-type': 'text/plain', ...reply.headers });
      response.end(reply.body ?? '');
    });
  });
  server.on('clientError', (_error, socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return receiver;
}

/** The headers a Standard Webhooks verifier reads, as received. */
export function webhookHeaders(received: Received): Record<string, string> {
  return {
    'webhook-id': String(received.headers['webhook-id']),
    'webhook-timestamp': String(received.headers['webhook-timestamp']),
    'webhook-signature': String(received.headers['webhook-signature']),
  };
}

export interface CreatedEndpoint {
  endpointId: string;
  url: string;
  description: string;
  eventTypes: string[];
  enabled: boolean;
  disabledReason: string | null;
  previousSecretExpiresAt: string | null;
  createdAt: string;
  updatedAt: string;
  secret: string;
}

/** An endpoint made through POST /webhook-endpoints (which must answer 201). */
export async function createEndpoint(service: TestService, tenant: Tenant, body: object): Promise<CreatedEndpoint> {
  const response = await call(service, 'POST', '/webhook-endpoints', { token: tenant.token, body });
  expect(response.statusCode, response.body).toBe(201);
  return response.json<CreatedEndpoint>();
}

/** A study made through POST /studies: it records a `study.status_changed` message (null to DRAFT). */
export async function createStudy(service: TestService, tenant: Tenant, name = 'Checkout interviews'): Promise<string> {
  const response = await call(service, 'POST', '/studies', {
    token: tenant.token,
    body: { studyType: 'INTERVIEWS', recruitmentStrategy: 'IN_SERVICE', studyPlan: { name } },
  });
  expect(response.statusCode, response.body).toBe(201);
  return response.json<{ studyId: string }>().studyId;
}

/** A message written straight into the outbox (no endpoint gets a delivery of it). */
export async function insertTestMessage(service: TestService, workspaceId: string, occurredAt = new Date().toISOString()): Promise<string> {
  const messageId = newId(idPrefixes.webhookMessage);
  const payload = { type: 'person.opted_out', timestamp: occurredAt, data: { personId: 'per_01JD0000000000000000000000' } };
  await insertMessage(service.deps.db, { workspace_id: workspaceId, message_id: messageId, event_type: 'person.opted_out', occurred_at: occurredAt, payload: JSON.stringify(payload) });
  return messageId;
}

/** Every page of a list walked with `size`, through the cursors. */
export async function walk<T>(service: TestService, tenant: Tenant, path: string, query: Record<string, string> = {}, size = 1): Promise<{ results: T[]; totals: number[]; pages: number }> {
  const results: T[] = [];
  const totals: number[] = [];
  let startCursor: string | undefined;
  let pages = 0;
  for (;;) {
    const response = await call(service, 'GET', path, { token: tenant.token, query: { ...query, size: String(size), ...(startCursor ? { startCursor } : {}) } });
    expect(response.statusCode, response.body).toBe(200);
    const page = response.json<{ results: T[]; total: number; pageInfo: { hasNextPage: boolean; endCursor: string } }>();
    pages++;
    results.push(...page.results);
    totals.push(page.total);
    if (!page.pageInfo.hasNextPage) return { results, totals, pages };
    startCursor = page.pageInfo.endCursor;
    expect(pages, 'the walk ends').toBeLessThan(1000);
  }
}
