import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type Tenant, type TestService } from '../../../test/harness.js';
import { describeSecurity } from '../../../test/security.js';
import { idPrefixes, newId } from '../../ids.js';
import { createEndpoint, createStudy, type Receiver, startReceiver, walk, webhookHeaders } from './test-support.js';

let service: TestService;
let shared: Receiver;
beforeAll(async () => {
  // Receivers listen on 127.0.0.1 over http.
  service = await startTestService({ webhookAllowPrivateTargets: true, webhookAllowHttp: true });
  shared = await startReceiver();
});
afterAll(async () => {
  await shared.close();
  await service.stop();
});
afterEach(() => service.deps.clock.reset());

const notFound = { errors: [{ message: 'Webhook endpoint not found', path: ['endpointId'] }] };

interface Attempt {
  attemptId: string;
  endpointId: string;
  messageId: string;
  trigger: 'SCHEDULED' | 'MANUAL' | 'TEST';
  attemptedAt: string;
  durationMs: number;
  succeeded: boolean;
  responseStatus: number | null;
  responseBody: string | null;
  error: string | null;
}

async function testSend(tenant: Tenant, endpointId: string): Promise<Attempt> {
  const response = await call(service, 'POST', `/webhook-endpoints/${endpointId}/test`, { token: tenant.token });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<Attempt>();
}

async function attempts(tenant: Tenant, endpointId: string, query: Record<string, string> = {}) {
  const response = await call(service, 'GET', `/webhook-endpoints/${endpointId}/attempts`, { token: tenant.token, query });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<{ results: Attempt[]; total: number }>();
}

describe('POST /webhook-endpoints/{endpointId}/test', () => {
  it('sends a signed webhook.test event and answers the attempt, with the first 1 KB of the answer', async () => {
    const answer = 'a'.repeat(1024) + 'b'.repeat(4096);
    const receiver = await startReceiver(() => ({ status: 200, body: answer }));
    try {
      const tenant = await createTenant(service);
      const endpoint = await createEndpoint(service, tenant, { url: receiver.url('/hooks/recruit?source=test'), eventTypes: ['person.opted_out'] });
      service.deps.clock.set(new Date('2026-11-22T10:00:00.000Z'));
      const attempt = await testSend(tenant, endpoint.endpointId);
      expect(attempt).toEqual({
        attemptId: expect.stringMatching(/^wha_/),
        endpointId: endpoint.endpointId,
        messageId: expect.stringMatching(/^msg_/),
        trigger: 'TEST',
        attemptedAt: '2026-11-22T10:00:00.000Z',
        durationMs: expect.any(Number),
        succeeded: true,
        responseStatus: 200,
        responseBody: 'a'.repeat(1024),
        error: null,
      });
      expect(receiver.received).toHaveLength(1);
      const [got] = receiver.received;
      expect(got).toMatchObject({ method: 'POST', path: '/hooks/recruit?source=test' });
      expect(got!.headers['content-type']).toBe('application/json');
      expect(got!.headers['webhook-id']).toBe(attempt.messageId);
      expect(Number(got!.headers['webhook-timestamp'])).toBeCloseTo(Date.now() / 1000, -2);
      expect(got!.headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
      const payload = new Webhook(endpoint.secret).verify(got!.body, webhookHeaders(got!));
      expect(payload).toEqual({
        type: 'webhook.test',
        timestamp: '2026-11-22T10:00:00.000Z',
        data: { endpointId: endpoint.endpointId, message: expect.any(String) },
      });
      // Another secret does not verify it.
      expect(() => new Webhook(`whsec_${Buffer.alloc(32, 1).toString('base64')}`).verify(got!.body, webhookHeaders(got!))).toThrow();
      // The attempt is recorded as answered, and the message kept.
      expect((await attempts(tenant, endpoint.endpointId)).results).toEqual([attempt]);
      const message = await call(service, 'GET', `/webhook-messages/${attempt.messageId}`, { token: tenant.token });
      expect(message.json()).toMatchObject({ messageId: attempt.messageId, eventType: 'webhook.test', payload });
    } finally {
      await receiver.close();
    }
  });

  it('signs with the new secret and the previous one for 24 hours after a rotation, then with the new one only', async () => {
    const tenant = await createTenant(service);
    const endpoint = await createEndpoint(service, tenant, { url: shared.url() });
    service.deps.clock.set(new Date('2026-11-22T10:00:00.000Z'));
    const rotated = await call(service, 'POST', `/webhook-endpoints/${endpoint.endpointId}/rotate-secret`, { token: tenant.token });
    const { secret } = rotated.json<{ secret: string }>();
    const before = shared.received.length;
    service.deps.clock.set(new Date('2026-11-23T09:00:00.000Z'));
    expect((await testSend(tenant, endpoint.endpointId)).succeeded).toBe(true);
    const during = shared.received[before]!;
    expect(String(during.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(new Webhook(secret).verify(during.body, webhookHeaders(during))).toMatchObject({ type: 'webhook.test' });
    expect(new Webhook(endpoint.secret).verify(during.body, webhookHeaders(during))).toMatchObject({ type: 'webhook.test' });
    service.deps.clock.set(new Date('2026-11-23T10:00:00.001Z'));
    expect((await testSend(tenant, endpoint.endpointId)).succeeded).toBe(true);
    const after = shared.received[before + 1]!;
    expect(String(after.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(new Webhook(secret).verify(after.body, webhookHeaders(after))).toMatchObject({ type: 'webhook.test' });
    expect(() => new Webhook(endpoint.secret).verify(after.body, webhookHeaders(after))).toThrow();
  });

  it('records a 500 as a failed attempt, with the answer', async () => {
    const receiver = await startReceiver(() => ({ status: 500, body: 'upstream unavailable' }));
    try {
      const tenant = await createTenant(service);
      const { endpointId } = await createEndpoint(service, tenant, { url: receiver.url() });
      const attempt = await testSend(tenant, endpointId);
      expect(attempt).toMatchObject({ succeeded: false, responseStatus: 500, responseBody: 'upstream unavailable', error: 'HTTP 500' });
      expect(receiver.received).toHaveLength(1);
      expect((await attempts(tenant, endpointId)).results).toEqual([attempt]);
      // A test send is not retried.
      expect(await service.webhooks.dispatcher.runDue(tenant.workspaceId)).toEqual({ attempted: 0, succeeded: 0, failed: 0 });
      expect(receiver.received).toHaveLength(1);
    } finally {
      await receiver.close();
    }
  });

  it('does not follow a redirect: the attempt fails, and the redirect target receives nothing', async () => {
    const target = await startReceiver();
    const redirecting = await startReceiver(() => ({ status: 301, headers: { location: target.url('/elsewhere') }, body: 'moved' }));
    try {
      const tenant = await createTenant(service);
      const { endpointId } = await createEndpoint(service, tenant, { url: redirecting.url() });
      const attempt = await testSend(tenant, endpointId);
      expect(attempt).toMatchObject({ succeeded: false, responseStatus: 301, responseBody: 'moved', error: `Redirects are not followed (HTTP 301 to ${target.url('/elsewhere')})` });
      expect(redirecting.received).toHaveLength(1);
      expect(target.received).toHaveLength(0);
    } finally {
      await Promise.all([target.close(), redirecting.close()]);
    }
  });

  it('records a refused connection as a failed attempt without a status', async () => {
    const gone = await startReceiver();
    const url = gone.url();
    await gone.close();
    const tenant = await createTenant(service);
    const { endpointId } = await createEndpoint(service, tenant, { url });
    const attempt = await testSend(tenant, endpointId);
    expect(attempt).toMatchObject({ succeeded: false, responseStatus: null, responseBody: null, error: expect.stringMatching(/ECONNREFUSED/) });
  });

  it('sends to a disabled endpoint too', async () => {
    const tenant = await createTenant(service);
    const { endpointId } = await createEndpoint(service, tenant, { url: shared.url(), enabled: false });
    const before = shared.received.length;
    expect((await testSend(tenant, endpointId)).succeeded).toBe(true);
    expect(shared.received).toHaveLength(before + 1);
  });

  it("answers 404 for an unknown id and for another workspace's, sending nothing", async () => {
    const tenant = await createTenant(service);
    const other = await createTenant(service, 'Other workspace');
    const theirs = await createEndpoint(service, other, { url: shared.url() });
    const before = shared.received.length;
    for (const endpointId of [newId(idPrefixes.webhookEndpoint), theirs.endpointId]) {
      const response = await call(service, 'POST', `/webhook-endpoints/${endpointId}/test`, { token: tenant.token });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual(notFound);
    }
    expect(shared.received).toHaveLength(before);
    expect((await attempts(other, theirs.endpointId)).total).toBe(0);
  });
});

describe('GET /webhook-endpoints/{endpointId}/attempts', () => {
  it('lists every attempt newest first, pages through them, and narrows to one message', async () => {
    const tenant = await createTenant(service);
    const { endpointId } = await createEndpoint(service, tenant, { url: shared.url(), eventTypes: ['study.status_changed'] });
    const tests = [await testSend(tenant, endpointId), await testSend(tenant, endpointId)];
    // A delivery of an event, then a re-send of it by hand: two attempts of one message.
    await createStudy(service, tenant);
    expect(await service.webhooks.dispatcher.runDue(tenant.workspaceId)).toEqual({ attempted: 1, succeeded: 1, failed: 0 });
    const scheduled = (await attempts(tenant, endpointId)).results[0]!;
    expect(scheduled).toMatchObject({ trigger: 'SCHEDULED', succeeded: true, responseStatus: 200, responseBody: 'ok' });
    const resend = await call(service, 'POST', `/webhook-endpoints/${endpointId}/messages/${scheduled.messageId}/resend`, { token: tenant.token });
    expect(resend.statusCode, resend.body).toBe(202);
    await service.webhooks.dispatcher.runDue(tenant.workspaceId);

    const all = await attempts(tenant, endpointId);
    expect(all.total).toBe(4);
    expect(all.results.map((attempt) => attempt.trigger)).toEqual(['MANUAL', 'SCHEDULED', 'TEST', 'TEST']);
    expect(all.results.slice(2)).toEqual([tests[1], tests[0]]);
    const ids = all.results.map((attempt) => attempt.attemptId);
    expect(ids).toEqual([...ids].sort().reverse());

    const walked = await walk<Attempt>(service, tenant, `/webhook-endpoints/${endpointId}/attempts`);
    expect(walked.results).toEqual(all.results);
    expect(walked.totals).toEqual([4, 4, 4, 4]);

    const ofMessage = await attempts(tenant, endpointId, { messageId: scheduled.messageId });
    expect(ofMessage.total).toBe(2);
    expect(ofMessage.results.map((attempt) => attempt.trigger)).toEqual(['MANUAL', 'SCHEDULED']);
    expect((await walk<Attempt>(service, tenant, `/webhook-endpoints/${endpointId}/attempts`, { messageId: tests[0]!.messageId })).results).toEqual([tests[0]]);
    expect((await attempts(tenant, endpointId, { messageId: newId(idPrefixes.webhookMessage) })).total).toBe(0);
  });

  it("lists only this endpoint's attempts", async () => {
    const tenant = await createTenant(service);
    const first = await createEndpoint(service, tenant, { url: shared.url() });
    const second = await createEndpoint(service, tenant, { url: shared.url() });
    const attempt = await testSend(tenant, first.endpointId);
    expect((await attempts(tenant, first.endpointId)).results).toEqual([attempt]);
    expect((await attempts(tenant, second.endpointId)).total).toBe(0);
  });

  it("answers 404 for an unknown id and for another workspace's", async () => {
    const tenant = await createTenant(service);
    const other = await createTenant(service, 'Other workspace');
    const theirs = await createEndpoint(service, other, { url: shared.url() });
    await testSend(other, theirs.endpointId);
    for (const endpointId of [newId(idPrefixes.webhookEndpoint), theirs.endpointId]) {
      const response = await call(service, 'GET', `/webhook-endpoints/${endpointId}/attempts`, { token: tenant.token });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual(notFound);
    }
  });

  it("refuses another query's cursor, a size over 100 and an unknown parameter (400)", async () => {
    const tenant = await createTenant(service);
    const { endpointId } = await createEndpoint(service, tenant, { url: shared.url() });
    const { messageId } = await testSend(tenant, endpointId);
    await testSend(tenant, endpointId);
    const page = await call(service, 'GET', `/webhook-endpoints/${endpointId}/attempts`, { token: tenant.token, query: { size: '1' } });
    const { endCursor } = page.json<{ pageInfo: { endCursor: string } }>().pageInfo;
    for (const [query, path] of [
      [{ startCursor: endCursor, messageId }, ['startCursor']],
      [{ size: '101' }, ['size']],
      [{ trigger: 'TEST' }, ['trigger']],
    ] as const) {
      const response = await call(service, 'GET', `/webhook-endpoints/${endpointId}/attempts`, { token: tenant.token, query });
      expect(response.statusCode, response.body).toBe(400);
      expect(response.json()).toEqual({ errors: [{ message: expect.any(String), path }] });
    }
  });
});

describe('DELETE /webhook-endpoints/{endpointId}, with attempts and pending deliveries', () => {
  it('deletes them with the endpoint and keeps the messages', async () => {
    const tenant = await createTenant(service);
    const { endpointId } = await createEndpoint(service, tenant, { url: shared.url() });
    const { messageId } = await testSend(tenant, endpointId);
    await createStudy(service, tenant);
    const response = await call(service, 'DELETE', `/webhook-endpoints/${endpointId}`, { token: tenant.token });
    expect(response.statusCode, response.body).toBe(200);
    expect((await service.webhooks.dispatcher.runDue(tenant.workspaceId)).attempted).toBe(0);
    const left = await service.deps.db.selectFrom('webhook_attempts').where('workspace_id', '=', tenant.workspaceId).select('attempt_id').execute();
    expect(left).toEqual([]);
    const messages = await call(service, 'GET', '/webhook-messages', { token: tenant.token });
    expect(messages.json<{ results: { messageId: string; eventType: string }[] }>().results.map((message) => message.eventType)).toEqual(['webhook.test', 'study.status_changed']);
    expect((await call(service, 'GET', `/webhook-messages/${messageId}`, { token: tenant.token })).statusCode).toBe(200);
  });
});

describeSecurity('POST /webhook-endpoints/{endpointId}/test', () => service, {
  method: 'POST',
  right: 'webhooks:write',
  addressesResource: true,
  request: async (tenant, serviceUnderTest) => ({ url: `/webhook-endpoints/${(await createEndpoint(serviceUnderTest, tenant, { url: shared.url() })).endpointId}/test` }),
});

describeSecurity('GET /webhook-endpoints/{endpointId}/attempts', () => service, {
  method: 'GET',
  right: 'webhooks:read',
  addressesResource: true,
  request: async (tenant, serviceUnderTest) => ({ url: `/webhook-endpoints/${(await createEndpoint(serviceUnderTest, tenant, { url: shared.url() })).endpointId}/attempts` }),
});
