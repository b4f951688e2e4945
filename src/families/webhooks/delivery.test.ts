import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, callTestHelper, createTenant, startTestService, storeKind, type Tenant, type TestService } from '../../../test/harness.js';
import { createParticipant, createStudy, sendIncentive } from '../../../test/incentives-factory.js';
import { patchParticipant } from '../../../test/participants-factory.js';
import { startPrivateTestService } from '../../../test/private-database.js';
import { WebhookReceiver } from '../../../test/webhook-receiver.js';
import { inTransaction } from '../../db/transaction.js';
import { withdrawOnPage } from '../consent/page.js';
import { runJobs, startImport } from '../imports/test-support.js';
import { createForm, submitted } from '../signups/test-support.js';
import { subscribableEventTypes } from './events.js';
import { recordEvents } from './outbox.js';
import { attemptsMax, retryDelaysSeconds } from './schedule.js';
import { stopStudyMessages } from '../participants/service.js';

/**
 * Delivery end to end, to a real HTTP receiver on loopback: the service's clock starts in a
 * year of this file's own and moves forward to make retries due; deliveries are sent with
 * dispatcher.runDue for the test's workspace (the live dispatcher is off in tests but where a
 * test starts it, and then on a database of its own: a live dispatcher claims every workspace's
 * due deliveries, and would take other files' from under their runDue).
 */
const ERA = Date.parse('7100-01-01T00:00:00.000Z');

let service: TestService;
let receiver: WebhookReceiver;
beforeAll(async () => {
  service = await startTestService({ webhookAllowPrivateTargets: true, webhookAllowHttp: true });
  service.deps.clock.set(new Date(ERA));
  receiver = await WebhookReceiver.start();
});
afterAll(async () => {
  await service.stop();
  await receiver.close();
});

interface CreatedEndpoint {
  endpointId: string;
  secret: string;
}

async function createEndpoint(tenant: Tenant, url: string, body: object = {}, on: TestService = service): Promise<CreatedEndpoint> {
  const response = await call(on, 'POST', '/webhook-endpoints', { token: tenant.token, body: { url, ...body } });
  expect(response.statusCode, response.body).toBe(201);
  return response.json<CreatedEndpoint>();
}

const runDue = (tenant: Tenant, on: TestService = service) => on.webhooks.dispatcher.runDue(tenant.workspaceId);
const moveClock = (seconds: number) => service.deps.clock.set(new Date(service.deps.clock.now().getTime() + seconds * 1000));

async function attempts(tenant: Tenant, endpointId: string) {
  const response = await call(service, 'GET', `/webhook-endpoints/${endpointId}/attempts`, { token: tenant.token, query: { size: '100' } });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<{ results: { messageId: string; succeeded: boolean; responseStatus: number | null; trigger: string; error: string | null }[] }>().results;
}

async function deliveryState(tenant: Tenant, endpointId: string) {
  return service.deps.db
    .selectFrom('webhook_deliveries')
    .select(['message_id', 'state', 'attempt_count', 'next_attempt_at'])
    .where('workspace_id', '=', tenant.workspaceId)
    .where('endpoint_id', '=', endpointId)
    .execute();
}

/** A receiver of its own per test, answering as the test says. */
async function freshReceiver(): Promise<WebhookReceiver> {
  const own = await WebhookReceiver.start();
  cleanups.push(() => own.close());
  return own;
}
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

describe('webhook delivery', () => {
  it('delivers every event type, each verified by the Standard Webhooks library', async () => {
    const tenant = await createTenant(service);
    const own = await freshReceiver();
    const endpoint = await createEndpoint(tenant, own.url());

    // study.status_changed (created, launched), participant.* (status, approval, screener)
    const studyId = await createStudy(service, tenant, { studyPlan: { name: 'Screened study', includeScreener: true } });
    expect((await call(service, 'POST', `/studies/${studyId}/launch`, { token: tenant.token })).statusCode).toBe(200);
    const participant = await createParticipant(service, tenant, { studyId });
    await patchParticipant(service, tenant, studyId, participant.participantId, { status: 'INVITED' });
    await patchParticipant(service, tenant, studyId, participant.participantId, { approvalStatus: 'APPROVED' });
    await patchParticipant(service, tenant, studyId, participant.participantId, { screenerState: 'SCREENER_SENT' });
    // incentive.status_changed: sent, claimed, failed, canceled (a DRAFT study's participants)
    const payee = await createParticipant(service, tenant);
    const claimed = await sendIncentive(service, tenant, payee.participantId);
    expect((await callTestHelper(service, 'POST', `/incentives/${claimed.incentiveId}/claim`)).statusCode).toBe(200);
    const failed = await sendIncentive(service, tenant, payee.participantId);
    expect((await callTestHelper(service, 'POST', `/incentives/${failed.incentiveId}/fail`)).statusCode).toBe(200);
    const canceled = await sendIncentive(service, tenant, payee.participantId, { type: 'CUSTOM', amountCents: 100 });
    expect((await call(service, 'POST', `/incentives/${canceled.incentiveId}/cancel`, { token: tenant.token })).statusCode).toBe(200);
    // incentive.approval_changed: one above the approval threshold (null → PENDING), withdrawn by a cancel (→ WITHDRAWN)
    expect((await call(service, 'PUT', '/incentive-approval-settings', { token: tenant.token, body: { thresholds: [{ currency: 'USD', amountCents: 100_000 }] } })).statusCode).toBe(200);
    const waiting = await sendIncentive(service, tenant, payee.participantId, { amountCents: 100_001 });
    expect((await call(service, 'POST', `/incentives/${waiting.incentiveId}/cancel`, { token: tenant.token })).statusCode).toBe(200);
    // person.opted_out, person.opted_in, person.deleted
    for (const isOptedOut of [true, false]) {
      const response = await call(service, 'PUT', `/people/${payee.personId}/opted-out`, { token: tenant.token, body: { isOptedOut } });
      expect(response.statusCode, response.body).toBe(200);
    }
    expect((await call(service, 'DELETE', `/people/${participant.personId}`, { token: tenant.token })).statusCode).toBe(200);
    // import.completed, import.failed (a file that is not CSV from its second row on)
    await startImport(service, tenant, 'email\nimported@example.test\n');
    await startImport(service, tenant, 'email\n"unterminated@example.test\n');
    await runJobs(service, tenant);
    // consent.withdrawn: a study consent withdrawn as the participant's withdrawal page does
    const consentStudy = await createStudy(service, tenant, { studyPlan: { name: 'Consented study', consentFormId: 'study-terms' } });
    const consenting = await createParticipant(service, tenant, { studyId: consentStudy });
    expect((await call(service, 'POST', '/consent-submissions', { token: tenant.token, body: { personId: consenting.personId, studyId: consentStudy } })).statusCode).toBe(201);
    expect((await withdrawOnPage(service.deps.db, { workspaceId: tenant.workspaceId, studyId: consentStudy, participantId: consenting.participantId, at: new Date().toISOString() })).kind).toBe('WITHDRAWN');
    // booking.created, booking.moved, booking.canceled: the owner hosts every hour of every day
    const interviews = await call(service, 'POST', '/studies', { token: tenant.token, body: { studyType: 'INTERVIEWS', recruitmentStrategy: 'IN_SERVICE', studyPlan: { name: 'Booked study' } } });
    const interviewStudy = interviews.json<{ studyId: string }>().studyId;
    const allDay = [{ start: '00:00', end: '24:00' }];
    const weeklyHours = Object.fromEntries(['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY', 'SUNDAY'].map((day) => [day, allDay]));
    expect((await call(service, 'PUT', `/studies/${interviewStudy}/schedule`, { token: tenant.token, body: { minimumNoticeMinutes: 60, hosts: [{ userId: tenant.userId, timeZone: 'UTC', weeklyHours, overrides: [] }] } })).statusCode).toBe(200);
    expect((await call(service, 'POST', `/studies/${interviewStudy}/launch`, { token: tenant.token })).statusCode).toBe(200);
    const interviewee = await createParticipant(service, tenant, { studyId: interviewStudy });
    const open = (await call(service, 'GET', `/studies/${interviewStudy}/slots`, { token: tenant.token })).json<{ slots: { startTime: string }[] }>().slots;
    const booked = await call(service, 'POST', `/studies/${interviewStudy}/bookings`, { token: tenant.token, body: { participantId: interviewee.participantId, startTime: open[0]!.startTime } });
    expect(booked.statusCode, booked.body).toBe(201);
    const bookingUrl = `/studies/${interviewStudy}/bookings/${booked.json<{ bookingId: string }>().bookingId}`;
    expect((await call(service, 'POST', `${bookingUrl}/move`, { token: tenant.token, body: { startTime: open[1]!.startTime } })).statusCode).toBe(200);
    expect((await call(service, 'POST', `${bookingUrl}/cancel`, { token: tenant.token, body: {} })).statusCode).toBe(200);
    // person.updated (a team edit), participant.messages_stopped (the person stops one study's messages on their page)
    expect((await call(service, 'PATCH', `/people/${payee.personId}`, { token: tenant.token, body: { firstName: 'Renamed' } })).statusCode).toBe(200);
    expect(await stopStudyMessages(service.deps.db, tenant.workspaceId, interviewee.personId, interviewee.participantId, new Date().toISOString())).toBe('STOPPED');
    // signup.submitted, and consent.submitted (the form carried a consent)
    const form = await createForm(service, tenant, { consentFormId: 'panel-terms' });
    await submitted(service, form.signupFormId, { email: 'signup@example.test', consentFormId: 'panel-terms' });

    const report = await runDue(tenant);
    expect(report.failed).toBe(0);
    const types = own.received.map((delivery) => {
      const event = new Webhook(endpoint.secret).verify(delivery.body, delivery.headers as Record<string, string>) as { type: string };
      expect(delivery.headers['webhook-id']).toMatch(/^msg_/);
      return event.type;
    });
    expect(new Set(types)).toEqual(new Set(subscribableEventTypes));
    expect(report.succeeded).toBe(own.received.length);
    const incentiveMoves = own.events().filter((event) => event.type === 'incentive.status_changed').map((event) => `${String(event.data.from)}→${String(event.data.to)}`);
    expect(incentiveMoves.sort()).toEqual(['UNCLAIMED→CLAIMED', 'UNCLAIMED→ERROR', 'SENT→CANCELED', 'null→SENT', 'null→UNCLAIMED', 'null→UNCLAIMED', 'null→UNCLAIMED', 'UNCLAIMED→CANCELED'].sort());
    const importEvents = own.events().filter((event) => event.type.startsWith('import.'));
    expect(importEvents.map((event) => event.type).sort()).toEqual(['import.completed', 'import.failed']);
    expect(importEvents.find((event) => event.type === 'import.completed')!.data).toMatchObject({ importedCount: 1, errorCount: 0 });
  });

  it('delivers only the event types an endpoint subscribes to, and nothing to a disabled one', async () => {
    const tenant = await createTenant(service);
    const studies = await freshReceiver();
    const people = await freshReceiver();
    const disabled = await freshReceiver();
    await createEndpoint(tenant, studies.url(), { eventTypes: ['study.status_changed'] });
    await createEndpoint(tenant, people.url(), { eventTypes: ['person.deleted'] });
    await createEndpoint(tenant, disabled.url(), { enabled: false });
    await createStudy(service, tenant);
    await runDue(tenant);
    expect(studies.events().map((event) => event.type)).toEqual(['study.status_changed']);
    expect(people.received).toEqual([]);
    expect(disabled.received).toEqual([]);
  });

  it('retries a failing receiver exactly once after each failure, by the schedule, then stops', async () => {
    const tenant = await createTenant(service);
    const own = await freshReceiver();
    own.answer = (_delivery, index) => (index < 3 ? { status: 503, body: 'not now' } : { status: 204 });
    const { endpointId } = await createEndpoint(tenant, own.url());
    await createStudy(service, tenant);

    expect(await runDue(tenant)).toEqual({ attempted: 1, succeeded: 0, failed: 1 });
    // Not due again before its delay: nothing is sent.
    expect((await runDue(tenant)).attempted).toBe(0);
    for (const [failure, delay] of retryDelaysSeconds.slice(0, 3).entries()) {
      moveClock(delay * 0.85);
      expect((await runDue(tenant)).attempted, `not before ${delay} s less 10% (retry ${failure + 1})`).toBe(0);
      moveClock(delay * 0.3);
      expect((await runDue(tenant)).attempted, `by ${delay} s and 10% (retry ${failure + 1})`).toBe(1);
    }
    expect(own.received).toHaveLength(4);
    expect(new Set(own.received.map((delivery) => delivery.headers['webhook-id'])).size).toBe(1);
    moveClock(7 * 86_400);
    expect((await runDue(tenant)).attempted).toBe(0);
    expect(own.received).toHaveLength(4);
    expect((await deliveryState(tenant, endpointId)).map((row) => [row.state, row.attempt_count])).toEqual([['SUCCEEDED', 4]]);
    const recorded = await attempts(tenant, endpointId);
    expect(recorded.map((attempt) => [attempt.succeeded, attempt.responseStatus, attempt.trigger])).toEqual([
      [true, 204, 'SCHEDULED'],
      [false, 503, 'SCHEDULED'],
      [false, 503, 'SCHEDULED'],
      [false, 503, 'SCHEDULED'],
    ]);
    expect(recorded[1]!.error).toBe('HTTP 503');
  });

  it(`gives a delivery up after ${attemptsMax} attempts, and disables an endpoint failing for 5 days, saying why`, async () => {
    const tenant = await createTenant(service);
    const own = await freshReceiver();
    own.answer = () => ({ status: 500 });
    const { endpointId } = await createEndpoint(tenant, own.url());
    await createStudy(service, tenant);
    const firstFailureAt = service.deps.clock.now().toISOString().replace(/\.\d+Z$/, 'Z');
    await runDue(tenant);
    for (const delay of retryDelaysSeconds) {
      moveClock(delay * 1.11);
      await runDue(tenant);
    }
    expect(own.received).toHaveLength(attemptsMax);
    expect((await deliveryState(tenant, endpointId)).map((row) => row.state)).toEqual(['FAILED']);
    expect((await call(service, 'GET', `/webhook-endpoints/${endpointId}`, { token: tenant.token })).json()).toMatchObject({ enabled: true });

    // Five days after the first failure, the next failure disables it.
    moveClock(2 * 86_400);
    await createStudy(service, tenant);
    await runDue(tenant);
    const endpoint = (await call(service, 'GET', `/webhook-endpoints/${endpointId}`, { token: tenant.token })).json<{ enabled: boolean; disabledReason: string }>();
    expect(endpoint.enabled).toBe(false);
    expect(endpoint.disabledReason).toMatch(new RegExp(`^Disabled at \\S+: every attempt failed since ${firstFailureAt} \\(last: HTTP 500\\)$`));
    // Disabled: a new event is queued for nobody.
    const before = own.received.length;
    await createStudy(service, tenant);
    moveClock(86_400);
    expect((await runDue(tenant)).attempted).toBe(0);
    expect(own.received).toHaveLength(before);
    // Enabled again, its pending retry goes out.
    own.answer = () => ({ status: 200 });
    const enabled = await call(service, 'PATCH', `/webhook-endpoints/${endpointId}`, { token: tenant.token, body: { enabled: true } });
    expect(enabled.json()).toMatchObject({ enabled: true, disabledReason: null });
    expect((await runDue(tenant)).succeeded).toBe(1);
  });

  it('records no message and sends nothing for a change that rolls back', async () => {
    const tenant = await createTenant(service);
    const own = await freshReceiver();
    await createEndpoint(tenant, own.url());
    const at = service.deps.clock.now().toISOString();
    await expect(
      inTransaction(service.deps.db, async (transaction) => {
        await recordEvents(transaction, tenant.workspaceId, [{ type: 'person.deleted', data: { personId: 'per_rolled_back' } }], at);
        throw new Error('the change fails after its event was recorded');
      }),
    ).rejects.toThrow('the change fails');
    const messages = await service.deps.db.selectFrom('webhook_messages').select('message_id').where('workspace_id', '=', tenant.workspaceId).execute();
    expect(messages).toEqual([]);
    expect((await runDue(tenant)).attempted).toBe(0);
    expect(own.received).toEqual([]);
  });

  it('signs with the previous secret too for 24 hours after a rotation, then with the new one alone', async () => {
    const tenant = await createTenant(service);
    const own = await freshReceiver();
    const { endpointId, secret: oldSecret } = await createEndpoint(tenant, own.url());
    const rotated = await call(service, 'POST', `/webhook-endpoints/${endpointId}/rotate-secret`, { token: tenant.token });
    expect(rotated.statusCode, rotated.body).toBe(200);
    const { secret: newSecret } = rotated.json<{ secret: string }>();
    expect(newSecret).not.toBe(oldSecret);

    await createStudy(service, tenant);
    await runDue(tenant);
    const during = own.received[0]!;
    expect(String(during.headers['webhook-signature']).split(' ')).toHaveLength(2);
    for (const secret of [oldSecret, newSecret]) expect(() => new Webhook(secret).verify(during.body, during.headers as Record<string, string>)).not.toThrow();

    moveClock(24 * 3600 + 1);
    await createStudy(service, tenant);
    await runDue(tenant);
    const after = own.received[1]!;
    expect(String(after.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(() => new Webhook(newSecret).verify(after.body, after.headers as Record<string, string>)).not.toThrow();
    expect(() => new Webhook(oldSecret).verify(after.body, after.headers as Record<string, string>)).toThrow();
  });

  it('refuses at send time a name that resolves to a private address since the endpoint was saved (DNS rebinding)', async () => {
    let lookups = 0;
    const guarded = await startTestService(
      { webhookAllowPrivateTargets: false, webhookAllowHttp: true },
      // Public when the endpoint is saved; loopback from then on.
      { webhookResolver: async () => (lookups++ === 0 ? [{ address: '93.184.216.34', family: 4 }] : [{ address: '127.0.0.1', family: 4 }]) },
    );
    cleanups.push(() => guarded.stop());
    const tenant = await createTenant(guarded);
    const own = await freshReceiver();
    const { endpointId } = await createEndpoint(tenant, own.url().replace('127.0.0.1', 'rebinding.example.test'), {}, guarded);
    await createStudy(guarded, tenant);
    expect(await runDue(tenant, guarded)).toEqual({ attempted: 1, succeeded: 0, failed: 1 });
    expect(own.received).toEqual([]);
    const recorded = await guarded.deps.db.selectFrom('webhook_attempts').select(['error', 'response_status']).where('endpoint_id', '=', endpointId).execute();
    expect(recorded).toEqual([{ error: expect.stringMatching(/rebinding\.example\.test resolves to 127\.0\.0\.1 is a loopback address/), response_status: null }]);
  });

  it('delivers when the dispatcher runs, woken by the commit, not by its poll', async () => {
    // The poll comes once at start and then not for 10 minutes: only the commit's notification can send it.
    const live = await startPrivateTestService({ webhookAllowPrivateTargets: true, webhookAllowHttp: true, webhookDelivery: true }, { webhookPollMs: 600_000 });
    cleanups.push(() => live.stop());
    const tenant = await createTenant(live);
    const own = await freshReceiver();
    await createEndpoint(tenant, own.url(), {}, live);
    const committedAt = Date.now();
    await createStudy(live, tenant);
    await own.waitFor(1, 10_000);
    expect(own.received[0]!.receivedAtMs - committedAt).toBeLessThan(10_000);
  });

  it("never holds one endpoint's deliveries behind a slow endpoint's backlog", async () => {
    const live = await startPrivateTestService({ webhookAllowPrivateTargets: true, webhookAllowHttp: true, webhookDelivery: true, webhookTimeoutMs: 5_000 });
    cleanups.push(() => live.stop());
    const tenant = await createTenant(live);
    const slow = await freshReceiver();
    slow.answer = () => ({ status: 200, delayMs: 3_000 });
    const fast = await freshReceiver();
    await createEndpoint(tenant, slow.url(), {}, live);
    await createEndpoint(tenant, fast.url(), {}, live);
    const count = 60;
    await inTransaction(live.deps.db, (transaction) =>
      recordEvents(
        transaction,
        tenant.workspaceId,
        Array.from({ length: count }, (_, index) => ({ type: 'person.deleted' as const, data: { personId: `per_${index}` } })),
        new Date().toISOString(),
      ),
    );
    // The slow endpoint answers in 3 s, 16 at a time: its 60 take four rounds, 12 s. Behind them, the
    // fast endpoint's would wait as long; beside them, all arrive before the slow one's second round ends.
    await fast.waitFor(count, 15_000);
    expect(slow.received.length).toBeLessThanOrEqual(32);
  });

  it.skipIf(storeKind === 'embedded')('makes each attempt once with two instances delivering from one database', async () => {
    const first = await startPrivateTestService({ webhookAllowPrivateTargets: true, webhookAllowHttp: true, webhookDelivery: true });
    cleanups.push(() => first.stop());
    const second = await startTestService({ webhookAllowPrivateTargets: true, webhookAllowHttp: true, webhookDelivery: true }, { database: first.database });
    cleanups.unshift(() => second.stop());
    const tenant = await createTenant(first);
    const own = await freshReceiver();
    own.answer = () => ({ status: 200, delayMs: 5 });
    await createEndpoint(tenant, own.url(), {}, first);
    const count = 300;
    await inTransaction(first.deps.db, (transaction) =>
      recordEvents(
        transaction,
        tenant.workspaceId,
        Array.from({ length: count }, (_, index) => ({ type: 'person.deleted' as const, data: { personId: `per_${index}` } })),
        new Date().toISOString(),
      ),
    );
    await own.waitFor(count, 20_000);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const ids = own.received.map((delivery) => String(delivery.headers['webhook-id']));
    expect(ids).toHaveLength(count);
    expect(new Set(ids).size).toBe(count);
    const bySender = await first.deps.db.selectFrom('webhook_attempts').select('message_id').where('workspace_id', '=', tenant.workspaceId).execute();
    expect(bySender).toHaveLength(count);
  });
});
