import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type Tenant, type TestService } from '../../../test/harness.js';
import { describeSecurity } from '../../../test/security.js';
import { idPrefixes, newId } from '../../ids.js';
import { createEndpoint, createStudy, insertTestMessage, type Receiver, startReceiver, webhookHeaders } from './test-support.js';

let service: TestService;
let receiver: Receiver;
beforeAll(async () => {
  service = await startTestService({ webhookAllowPrivateTargets: true, webhookAllowHttp: true });
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
  await service.stop();
});
afterEach(() => service.deps.clock.reset());

const endpointNotFound = { errors: [{ message: 'Webhook endpoint not found', path: ['endpointId'] }] };
const messageNotFound = { errors: [{ message: 'Webhook message not found', path: ['messageId'] }] };

/** What the receiver got for this endpoint's secret since `from`: the verified payloads, with their ids. */
function deliveredSince(from: number, secret: string) {
  return receiver.received.slice(from).map((got) => ({ id: got.headers['webhook-id'], payload: new Webhook(secret).verify(got.body, webhookHeaders(got)) as { type: string; data: Record<string, unknown> } }));
}

async function messages(tenant: Tenant, query: Record<string, string> = {}) {
  const response = await call(service, 'GET', '/webhook-messages', { token: tenant.token, query: { size: '100', ...query } });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<{ results: { messageId: string; eventType: string; occurredAt: string }[] }>().results;
}

async function attemptTriggers(tenant: Tenant, endpointId: string) {
  const response = await call(service, 'GET', `/webhook-endpoints/${endpointId}/attempts`, { token: tenant.token, query: { size: '100' } });
  return response.json<{ results: { trigger: string; messageId: string }[] }>().results;
}

const resend = (tenant: Tenant, endpointId: string, messageId: string) => call(service, 'POST', `/webhook-endpoints/${endpointId}/messages/${messageId}/resend`, { token: tenant.token });
const replay = (tenant: Tenant, endpointId: string, body: unknown) => call(service, 'POST', `/webhook-endpoints/${endpointId}/replay`, { token: tenant.token, body });

/** Three studies made an hour apart from 10:00, before any endpoint: three messages, no delivery. */
async function threeStudies(tenant: Tenant) {
  const studyIds = [];
  for (const [index, hour] of ['10', '11', '12'].entries()) {
    service.deps.clock.set(new Date(`2026-11-22T${hour}:00:00.000Z`));
    studyIds.push(await createStudy(service, tenant, `Study ${index}`));
  }
  service.deps.clock.set(new Date('2026-11-22T13:00:00.000Z'));
  return studyIds;
}

describe('POST /webhook-endpoints/{endpointId}/messages/{messageId}/resend', () => {
  it('queues a delivered message again: the next run delivers it once more, with the same webhook-id, as MANUAL', async () => {
    const tenant = await createTenant(service);
    const endpoint = await createEndpoint(service, tenant, { url: receiver.url() });
    const from = receiver.received.length;
    const studyId = await createStudy(service, tenant);
    await service.webhooks.dispatcher.runDue(tenant.workspaceId);
    const [message] = await messages(tenant);
    const response = await resend(tenant, endpoint.endpointId, message!.messageId);
    expect(response.statusCode, response.body).toBe(202);
    expect(response.json()).toEqual({ endpointId: endpoint.endpointId, messageId: message!.messageId, state: 'PENDING' });
    expect(await service.webhooks.dispatcher.runDue(tenant.workspaceId)).toEqual({ attempted: 1, succeeded: 1, failed: 0 });
    const delivered = deliveredSince(from, endpoint.secret);
    expect(delivered.map((item) => item.id)).toEqual([message!.messageId, message!.messageId]);
    expect(delivered[1]!.payload).toMatchObject({ type: 'study.status_changed', data: { studyId, from: null, to: 'DRAFT' } });
    // What was delivered is the message's payload, each time.
    const read = await call(service, 'GET', `/webhook-messages/${message!.messageId}`, { token: tenant.token });
    expect(delivered.map((item) => item.payload)).toEqual([read.json().payload, read.json().payload]);
    expect((await attemptTriggers(tenant, endpoint.endpointId)).map((attempt) => attempt.trigger)).toEqual(['MANUAL', 'SCHEDULED']);
  });

  it('queues a message of a type the endpoint does not subscribe to', async () => {
    const tenant = await createTenant(service);
    const endpoint = await createEndpoint(service, tenant, { url: receiver.url(), eventTypes: ['import.completed'] });
    const messageId = await insertTestMessage(service, tenant.workspaceId);
    const from = receiver.received.length;
    expect((await resend(tenant, endpoint.endpointId, messageId)).statusCode).toBe(202);
    await service.webhooks.dispatcher.runDue(tenant.workspaceId);
    expect(deliveredSince(from, endpoint.secret)).toEqual([{ id: messageId, payload: expect.objectContaining({ type: 'person.opted_out' }) }]);
  });

  it('queues a test message again', async () => {
    const tenant = await createTenant(service);
    const endpoint = await createEndpoint(service, tenant, { url: receiver.url() });
    const test = await call(service, 'POST', `/webhook-endpoints/${endpoint.endpointId}/test`, { token: tenant.token });
    const { messageId } = test.json<{ messageId: string }>();
    const from = receiver.received.length;
    expect((await resend(tenant, endpoint.endpointId, messageId)).json()).toEqual({ endpointId: endpoint.endpointId, messageId, state: 'PENDING' });
    expect(await service.webhooks.dispatcher.runDue(tenant.workspaceId)).toEqual({ attempted: 1, succeeded: 1, failed: 0 });
    expect(deliveredSince(from, endpoint.secret)).toEqual([{ id: messageId, payload: expect.objectContaining({ type: 'webhook.test' }) }]);
  });

  it('holds a re-send to a disabled endpoint until it is enabled again', async () => {
    const tenant = await createTenant(service);
    const endpoint = await createEndpoint(service, tenant, { url: receiver.url(), enabled: false });
    const messageId = await insertTestMessage(service, tenant.workspaceId);
    const from = receiver.received.length;
    expect((await resend(tenant, endpoint.endpointId, messageId)).statusCode).toBe(202);
    expect((await service.webhooks.dispatcher.runDue(tenant.workspaceId)).attempted).toBe(0);
    const enabled = await call(service, 'PATCH', `/webhook-endpoints/${endpoint.endpointId}`, { token: tenant.token, body: { enabled: true } });
    expect(enabled.statusCode, enabled.body).toBe(200);
    expect((await service.webhooks.dispatcher.runDue(tenant.workspaceId)).succeeded).toBe(1);
    expect(deliveredSince(from, endpoint.secret).map((item) => item.id)).toEqual([messageId]);
  });

  it("answers 404 for an unknown or another workspace's endpoint (path endpointId) and message (path messageId)", async () => {
    const tenant = await createTenant(service);
    const other = await createTenant(service, 'Other workspace');
    const mine = await createEndpoint(service, tenant, { url: receiver.url() });
    const theirs = await createEndpoint(service, other, { url: receiver.url() });
    const myMessage = await insertTestMessage(service, tenant.workspaceId);
    const theirMessage = await insertTestMessage(service, other.workspaceId);
    for (const [endpointId, messageId, expected] of [
      [newId(idPrefixes.webhookEndpoint), myMessage, endpointNotFound],
      [theirs.endpointId, myMessage, endpointNotFound],
      [theirs.endpointId, theirMessage, endpointNotFound],
      [mine.endpointId, newId(idPrefixes.webhookMessage), messageNotFound],
      [mine.endpointId, theirMessage, messageNotFound],
    ] as const) {
      const response = await resend(tenant, endpointId, messageId);
      expect(response.statusCode, `${endpointId} ${messageId}`).toBe(404);
      expect(response.json()).toEqual(expected);
    }
    expect((await service.webhooks.dispatcher.runDue(other.workspaceId)).attempted).toBe(0);
  });
});

describe('POST /webhook-endpoints/{endpointId}/replay', () => {
  it('queues every message since a time; the next run delivers them, signed, as MANUAL', async () => {
    const tenant = await createTenant(service);
    const studyIds = await threeStudies(tenant);
    const endpoint = await createEndpoint(service, tenant, { url: receiver.url() });
    // Nothing was queued for an endpoint made after the events.
    expect((await service.webhooks.dispatcher.runDue(tenant.workspaceId)).attempted).toBe(0);
    const from = receiver.received.length;
    const response = await replay(tenant, endpoint.endpointId, { since: '2026-11-22T00:00:00.000Z' });
    expect(response.statusCode, response.body).toBe(202);
    expect(response.json()).toEqual({ queued: 3 });
    expect(await service.webhooks.dispatcher.runDue(tenant.workspaceId)).toEqual({ attempted: 3, succeeded: 3, failed: 0 });
    const delivered = deliveredSince(from, endpoint.secret);
    expect(delivered.map((item) => item.payload.data.studyId).sort()).toEqual([...studyIds].sort());
    expect(delivered.every((item) => item.payload.type === 'study.status_changed')).toBe(true);
    expect((await attemptTriggers(tenant, endpoint.endpointId)).map((attempt) => attempt.trigger)).toEqual(['MANUAL', 'MANUAL', 'MANUAL']);
    // A replay delivers again what was delivered.
    expect((await replay(tenant, endpoint.endpointId, { since: '2026-11-22T00:00:00.000Z' })).json()).toEqual({ queued: 3 });
    expect((await service.webhooks.dispatcher.runDue(tenant.workspaceId)).succeeded).toBe(3);
  });

  it('takes since inclusive and until exclusive', async () => {
    const tenant = await createTenant(service);
    const studyIds = await threeStudies(tenant);
    const endpoint = await createEndpoint(service, tenant, { url: receiver.url() });
    const from = receiver.received.length;
    const response = await replay(tenant, endpoint.endpointId, { since: '2026-11-22T11:00:00.000Z', until: '2026-11-22T12:00:00.000Z' });
    expect(response.json()).toEqual({ queued: 1 });
    await service.webhooks.dispatcher.runDue(tenant.workspaceId);
    expect(deliveredSince(from, endpoint.secret).map((item) => item.payload.data.studyId)).toEqual([studyIds[1]]);
  });

  it("replays the endpoint's event types by default, or those given; never test messages", async () => {
    const tenant = await createTenant(service);
    await threeStudies(tenant);
    const other = await createEndpoint(service, tenant, { url: receiver.url() });
    await call(service, 'POST', `/webhook-endpoints/${other.endpointId}/test`, { token: tenant.token });
    const endpoint = await createEndpoint(service, tenant, { url: receiver.url(), eventTypes: ['person.opted_out'] });
    const since = '2026-11-22T00:00:00.000Z';
    expect((await replay(tenant, endpoint.endpointId, { since })).json()).toEqual({ queued: 0 });
    expect((await replay(tenant, endpoint.endpointId, { since, eventTypes: ['study.status_changed', 'person.opted_in'] })).json()).toEqual({ queued: 3 });
    // Every type: the studies' messages, not the test message sent to the other endpoint.
    expect((await replay(tenant, other.endpointId, { since })).json()).toEqual({ queued: 3 });
  });

  it("queues nothing from another workspace's messages", async () => {
    const tenant = await createTenant(service);
    const other = await createTenant(service, 'Other workspace');
    await threeStudies(other);
    const endpoint = await createEndpoint(service, tenant, { url: receiver.url() });
    expect((await replay(tenant, endpoint.endpointId, { since: '2026-11-22T00:00:00.000Z' })).json()).toEqual({ queued: 0 });
  });

  it('accepts a since just within the 30 days messages are kept', async () => {
    const tenant = await createTenant(service);
    const { endpointId } = await createEndpoint(service, tenant, { url: receiver.url() });
    service.deps.clock.set(new Date('2026-11-22T13:00:00.000Z'));
    const response = await replay(tenant, endpointId, { since: '2026-10-23T13:00:00.000Z' });
    expect(response.statusCode, response.body).toBe(202);
  });

  it.each([
    ['a since older than 30 days', { since: '2026-10-23T12:59:59.999Z' }, ['since']],
    ['an until equal to since', { since: '2026-11-22T10:00:00.000Z', until: '2026-11-22T10:00:00.000Z' }, ['until']],
    ['an until before since', { since: '2026-11-22T10:00:00.000Z', until: '2026-11-22T09:00:00.000Z' }, ['until']],
    ['no since', {}, ['since']],
    ['a since that is not a time', { since: 'yesterday' }, ['since']],
    ['an unknown event type', { since: '2026-11-22T10:00:00.000Z', eventTypes: ['study.exploded'] }, ['eventTypes', '0']],
    ['an unknown field', { since: '2026-11-22T10:00:00.000Z', messageIds: [] }, ['messageIds']],
  ])('refuses %s with 400, queuing nothing', async (_case, body, path) => {
    const tenant = await createTenant(service);
    await threeStudies(tenant);
    const { endpointId } = await createEndpoint(service, tenant, { url: receiver.url() });
    const response = await replay(tenant, endpointId, body);
    expect(response.statusCode, response.body).toBe(400);
    expect(response.json()).toEqual({ errors: [{ message: expect.any(String), path }] });
    expect((await service.webhooks.dispatcher.runDue(tenant.workspaceId)).attempted).toBe(0);
  });

  it("answers 404 for an unknown id and for another workspace's, queuing nothing", async () => {
    const tenant = await createTenant(service);
    const other = await createTenant(service, 'Other workspace');
    await threeStudies(other);
    const theirs = await createEndpoint(service, other, { url: receiver.url() });
    for (const endpointId of [newId(idPrefixes.webhookEndpoint), theirs.endpointId]) {
      const response = await replay(tenant, endpointId, { since: '2026-11-22T00:00:00.000Z' });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual(endpointNotFound);
    }
    expect((await service.webhooks.dispatcher.runDue(other.workspaceId)).attempted).toBe(0);
  });
});

describeSecurity('POST /webhook-endpoints/{endpointId}/messages/{messageId}/resend', () => service, {
  method: 'POST',
  right: 'webhooks:write',
  addressesResource: true,
  request: async (tenant, serviceUnderTest) => {
    const { endpointId } = await createEndpoint(serviceUnderTest, tenant, { url: receiver.url() });
    return { url: `/webhook-endpoints/${endpointId}/messages/${await insertTestMessage(serviceUnderTest, tenant.workspaceId)}/resend` };
  },
});

describeSecurity('POST /webhook-endpoints/{endpointId}/replay', () => service, {
  method: 'POST',
  right: 'webhooks:write',
  addressesResource: true,
  request: async (tenant, serviceUnderTest) => ({
    url: `/webhook-endpoints/${(await createEndpoint(serviceUnderTest, tenant, { url: receiver.url() })).endpointId}/replay`,
    body: { since: new Date(Date.now() - 3_600_000).toISOString() },
  }),
});
