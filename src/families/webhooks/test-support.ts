import { expect } from 'vitest';
import { idPrefixes, newId } from '../../ids.js';
import { call, type Tenant, type TestService } from '../../../test/harness.js';
import { insertMessage } from './queries.js';
import { type Answer, type Received, WebhookReceiver } from '../../../test/webhook-receiver.js';

export type { Answer, Received } from '../../../test/webhook-receiver.js';

/** A local webhook receiver answering each request with `answer` (test/webhook-receiver.ts). */
export type Receiver = WebhookReceiver;
export const startReceiver = (answer?: (request: Received) => Answer): Promise<WebhookReceiver> => WebhookReceiver.start(answer);

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
