import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type Tenant, type TestService } from '../../../test/harness.js';
import { describeSecurity } from '../../../test/security.js';
import { idPrefixes, newId } from '../../ids.js';
import { eventCatalogue, subscribableEventTypes } from './events.js';
import { createStudy, insertTestMessage, walk } from './test-support.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service.stop());
afterEach(() => service.deps.clock.reset());

interface Message {
  messageId: string;
  eventType: string;
  occurredAt: string;
  payload: { type: string; timestamp: string; data: Record<string, unknown> };
}

async function listMessages(tenant: Tenant, query: Record<string, string> = {}) {
  const response = await call(service, 'GET', '/webhook-messages', { token: tenant.token, query });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<{ results: Message[]; total: number }>();
}

/** A study at 10:00, a person's opt-out at 11:00 and another study at 12:00. */
async function threeMessages(tenant: Tenant) {
  service.deps.clock.set(new Date('2026-11-22T10:00:00.000Z'));
  const first = await createStudy(service, tenant, 'First');
  const optOut = await insertTestMessage(service, tenant.workspaceId, '2026-11-22T11:00:00.000Z');
  service.deps.clock.set(new Date('2026-11-22T12:00:00.000Z'));
  const second = await createStudy(service, tenant, 'Second');
  return { first, optOut, second };
}

describe('GET /webhook-messages', () => {
  it("lists the workspace's messages oldest first, one page at a time, with the total", async () => {
    const tenant = await createTenant(service);
    const other = await createTenant(service, 'Other workspace');
    await threeMessages(other);
    const { first, optOut, second } = await threeMessages(tenant);
    const { results, totals, pages } = await walk<Message>(service, tenant, '/webhook-messages');
    expect(pages).toBe(3);
    expect(totals).toEqual([3, 3, 3]);
    expect(results).toEqual([
      {
        messageId: expect.stringMatching(/^msg_/),
        eventType: 'study.status_changed',
        occurredAt: '2026-11-22T10:00:00.000Z',
        payload: { type: 'study.status_changed', timestamp: '2026-11-22T10:00:00.000Z', data: { studyId: first, from: null, to: 'DRAFT' } },
      },
      expect.objectContaining({ messageId: optOut, eventType: 'person.opted_out', occurredAt: '2026-11-22T11:00:00.000Z' }),
      expect.objectContaining({ eventType: 'study.status_changed', occurredAt: '2026-11-22T12:00:00.000Z', payload: expect.objectContaining({ data: { studyId: second, from: null, to: 'DRAFT' } }) }),
    ]);
  });

  it('narrows to one event type, and to messages at or after a time', async () => {
    const tenant = await createTenant(service);
    const { optOut, second } = await threeMessages(tenant);
    const studies = await listMessages(tenant, { eventType: 'study.status_changed' });
    expect(studies.total).toBe(2);
    expect(studies.results.every((message) => message.eventType === 'study.status_changed')).toBe(true);
    const since = await listMessages(tenant, { since: '2026-11-22T11:00:00.000Z' });
    expect(since.results.map((message) => message.messageId)).toEqual([optOut, since.results[1]!.messageId]);
    expect(since.results[1]!.payload.data.studyId).toBe(second);
    const both = await walk<Message>(service, tenant, '/webhook-messages', { eventType: 'study.status_changed', since: '2026-11-22T10:00:00.001Z' });
    expect(both.results.map((message) => message.payload.data.studyId)).toEqual([second]);
    expect(both.totals).toEqual([1]);
    expect((await listMessages(tenant, { eventType: 'import.failed' })).total).toBe(0);
    expect((await listMessages(tenant, { since: '2026-11-22T12:00:00.001Z' })).results).toEqual([]);
  });

  it('lists test messages too', async () => {
    const tenant = await createTenant(service);
    await service.deps.db
      .insertInto('webhook_messages')
      .values({ workspace_id: tenant.workspaceId, message_id: newId(idPrefixes.webhookMessage), event_type: 'webhook.test', occurred_at: new Date().toISOString(), payload: JSON.stringify({ type: 'webhook.test', timestamp: new Date().toISOString(), data: {} }) })
      .execute();
    expect((await listMessages(tenant, { eventType: 'webhook.test' })).total).toBe(1);
  });

  it("refuses a bad since, an empty event type, a size of 0, an unknown parameter and another filter's cursor (400)", async () => {
    const tenant = await createTenant(service);
    await threeMessages(tenant);
    const page = await call(service, 'GET', '/webhook-messages', { token: tenant.token, query: { size: '1', eventType: 'study.status_changed' } });
    const { endCursor } = page.json<{ pageInfo: { endCursor: string } }>().pageInfo;
    for (const [query, path] of [
      [{ since: 'yesterday' }, ['since']],
      [{ eventType: '' }, ['eventType']],
      [{ size: '0' }, ['size']],
      [{ type: 'study.status_changed' }, ['type']],
      [{ startCursor: endCursor }, ['startCursor']],
    ] as const) {
      const response = await call(service, 'GET', '/webhook-messages', { token: tenant.token, query });
      expect(response.statusCode, response.body).toBe(400);
      expect(response.json()).toEqual({ errors: [{ message: expect.any(String), path }] });
    }
  });
});

describe('GET /webhook-messages/{messageId}', () => {
  it('reads one message as the list shows it', async () => {
    const tenant = await createTenant(service);
    await threeMessages(tenant);
    const [message] = (await listMessages(tenant)).results;
    const response = await call(service, 'GET', `/webhook-messages/${message!.messageId}`, { token: tenant.token });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toEqual(message);
  });

  it("answers 404 for an unknown id and for another workspace's", async () => {
    const tenant = await createTenant(service);
    const other = await createTenant(service, 'Other workspace');
    const theirs = await insertTestMessage(service, other.workspaceId);
    for (const messageId of [newId(idPrefixes.webhookMessage), theirs]) {
      const response = await call(service, 'GET', `/webhook-messages/${messageId}`, { token: tenant.token });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({ errors: [{ message: 'Webhook message not found', path: ['messageId'] }] });
    }
  });
});

describe('GET /webhook-event-types', () => {
  it('lists every type an endpoint can subscribe to, with its description and the schema of its data', async () => {
    const tenant = await createTenant(service);
    const response = await call(service, 'GET', '/webhook-event-types', { token: tenant.token });
    expect(response.statusCode, response.body).toBe(200);
    const { results } = response.json<{ results: { type: string; description: string; dataSchema: { type: string; properties: Record<string, unknown> } }[] }>();
    expect(results.map((item) => item.type)).toEqual(subscribableEventTypes);
    expect(results.map((item) => item.type)).toEqual(expect.arrayContaining(['study.status_changed', 'participant.status_changed', 'incentive.status_changed', 'person.deleted', 'import.completed', 'signup.submitted']));
    expect(results.map((item) => item.type)).not.toContain('webhook.test');
    for (const item of results) {
      expect(item.description, item.type).not.toBe('');
      expect(item.dataSchema.type).toBe('object');
      expect(Object.keys(item.dataSchema.properties)).toEqual(Object.keys(eventCatalogue[item.type as keyof typeof eventCatalogue].properties));
    }
  });
});

describeSecurity('GET /webhook-messages', () => service, {
  method: 'GET',
  right: 'webhooks:read',
  addressesResource: false,
  request: async () => ({ url: '/webhook-messages' }),
});

describeSecurity('GET /webhook-messages/{messageId}', () => service, {
  method: 'GET',
  right: 'webhooks:read',
  addressesResource: true,
  request: async (tenant, serviceUnderTest) => ({ url: `/webhook-messages/${await insertTestMessage(serviceUnderTest, tenant.workspaceId)}` }),
});

describeSecurity('GET /webhook-event-types', () => service, {
  method: 'GET',
  right: 'webhooks:read',
  addressesResource: false,
  request: async () => ({ url: '/webhook-event-types' }),
});

describe('Webhooks: rights', () => {
  it('every webhooks operation requires webhooks:read to read and webhooks:write to change (the right describeSecurity is given)', () => {
    const document = service.app.swagger() as unknown as { paths: Record<string, Record<string, { tags?: string[]; 'x-required-right'?: string }>> };
    const rights = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([, operation]) => operation.tags?.includes('Webhooks'))
        .map(([method, operation]) => `${method.toUpperCase()} ${path} ${operation['x-required-right']}`),
    );
    expect(rights.sort()).toEqual(
      [
        'GET /webhook-endpoints webhooks:read',
        'POST /webhook-endpoints webhooks:write',
        'GET /webhook-endpoints/{endpointId} webhooks:read',
        'PATCH /webhook-endpoints/{endpointId} webhooks:write',
        'DELETE /webhook-endpoints/{endpointId} webhooks:write',
        'POST /webhook-endpoints/{endpointId}/rotate-secret webhooks:write',
        'POST /webhook-endpoints/{endpointId}/test webhooks:write',
        'GET /webhook-endpoints/{endpointId}/attempts webhooks:read',
        'POST /webhook-endpoints/{endpointId}/messages/{messageId}/resend webhooks:write',
        'POST /webhook-endpoints/{endpointId}/replay webhooks:write',
        'GET /webhook-messages webhooks:read',
        'GET /webhook-messages/{messageId} webhooks:read',
        'GET /webhook-event-types webhooks:read',
      ].sort(),
    );
  });
});
