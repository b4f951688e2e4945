import type { Kysely, KyselyPlugin } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type Tenant, type TestService } from '../../../test/harness.js';
import {
  createBudget,
  createParticipant,
  createStudy,
  getIncentive,
  incentiveRow,
  postIncentive,
  sendIncentive,
  setClock,
} from '../../../test/incentives-factory.js';
import { describeSecurity } from '../../../test/security.js';
import type { DB } from '../../db/schema.js';
import { JobRunner } from '../../jobs/runner.js';
import { IncentiveProviders } from '../../providers/index.js';
import { type ProviderWorkResult, providerWorkHandler, providerWorkSchedule, PROVIDER_QUEUE } from './jobs.js';
import { ORDER_ATTEMPTS_MAX, PROVIDER_RETRY_SECONDS } from './service.js';

/**
 * The provider work runs on a runner of the provider queue alone, as another instance would run
 * it, drained for the test's own workspace: on PostgreSQL every test file's service shares one
 * database, and a run of every workspace's work would retry other files' orders (and they this
 * file's). The clock moves forward from ERA as the tests go.
 */
const ERA = Date.parse('2026-12-01T00:00:00.000Z');
let clockMs = ERA;
const PROVIDER_TIMEOUT_MS = 300;

let service: TestService;
beforeAll(async () => {
  service = await startTestService({}, { providers: new IncentiveProviders('sandbox', { timeoutMs: PROVIDER_TIMEOUT_MS }) });
  await setClock(service, new Date(ERA));
});
afterAll(async () => service.stop());
afterEach(() => service.deps.providers.sandbox.clearFaults());

const sandbox = () => service.deps.providers.sandbox;

/** Moves the clock forward (each provider run needs a schedule slot of its own: a minute). */
async function advance(seconds: number) {
  clockMs += seconds * 1000;
  await setClock(service, new Date(clockMs));
}

/**
 * Runs the tenant's provider work (one run: each call needs a slot of its own, see advance); its
 * handler reaches the database through `db` (a test may record its statements).
 */
async function runProviderWork(tenant: Tenant, db: Kysely<DB> = service.deps.db): Promise<ProviderWorkResult> {
  const runner = new JobRunner({ db: service.deps.db, clock: service.deps.clock });
  runner.register(providerWorkHandler(db, service.deps.clock, service.deps.providers));
  runner.schedule(providerWorkSchedule);
  const report = await runner.runDue({ workspaceId: tenant.workspaceId });
  expect(report.jobs.map((run) => [run.queue, run.workspaceId, run.outcome])).toEqual([[PROVIDER_QUEUE, tenant.workspaceId, 'completed']]);
  const job = await service.deps.db.selectFrom('jobs').select('result').where('job_id', '=', report.jobs[0]!.jobId).executeTakeFirstOrThrow();
  return job.result as ProviderWorkResult;
}

async function setStudyIncentive(tenant: Tenant, studyId: string, incentive: object) {
  const response = await call(service, 'PATCH', `/studies/${studyId}`, { token: tenant.token, body: { studyPlan: { incentive } } });
  expect(response.statusCode, response.body).toBe(200);
}

const countIncentives = async (tenant: Tenant) =>
  (await service.deps.db.selectFrom('incentives').select('incentive_id').where('workspace_id', '=', tenant.workspaceId).execute()).length;

const ordersOf = (tenant: Tenant) => [...sandbox().orders.values()].filter((order) => order.workspaceId === tenant.workspaceId);

describe('POST /incentives', () => {
  it('sends a MONEY_OR_GIFT_CARD incentive: UNCLAIMED, ordered at the provider, read back the same', async () => {
    const tenant = await createTenant(service);
    const participant = await createParticipant(service, tenant);
    const { budgetId } = await createBudget(service, tenant);
    const response = await postIncentive(service, tenant, { participantId: participant.participantId, type: 'MONEY_OR_GIFT_CARD', amountCents: 7500, budgetId });
    expect(response.statusCode, response.body).toBe(201);
    expect(response.headers['idempotent-replayed']).toBeUndefined();
    const incentive = response.json();
    expect(incentive).toEqual({
      incentiveId: expect.stringMatching(/^inc_/),
      type: 'MONEY_OR_GIFT_CARD',
      amountCents: 7500,
      sentAt: new Date(clockMs).toISOString(),
      recipientEmail: participant.email,
      personId: participant.personId,
      participantId: participant.participantId,
      studyId: participant.studyId,
      status: 'UNCLAIMED',
      budgetId,
      customIncentiveId: null,
      customIncentiveValue: null,
      currency: 'USD',
      approval: null,
    });
    expect((await getIncentive(service, tenant, incentive.incentiveId)).json()).toEqual(incentive);
    const row = await incentiveRow(service, tenant, incentive.incentiveId);
    expect(row).toMatchObject({ provider: 'sandbox', provider_state: 'ORDERED', provider_reference: expect.stringMatching(/^sbx_/), currency: 'USD', sent_by_user_id: tenant.userId });
    expect(ordersOf(tenant)).toEqual([
      expect.objectContaining({
        incentiveId: incentive.incentiveId,
        reference: row.provider_reference,
        order: expect.objectContaining({ amountCents: 7500, currency: 'USD', recipientEmail: participant.email, type: 'MONEY_OR_GIFT_CARD' }),
      }),
    ]);
  });

  it('orders PROVIDER_ONE_MONEY at the provider too', async () => {
    const tenant = await createTenant(service);
    const { participantId } = await createParticipant(service, tenant);
    const incentive = await sendIncentive(service, tenant, participantId, { type: 'PROVIDER_ONE_MONEY', amountCents: 100 });
    expect(incentive).toMatchObject({ type: 'PROVIDER_ONE_MONEY', status: 'UNCLAIMED', amountCents: 100 });
    expect(ordersOf(tenant).map((seen) => seen.order?.type)).toEqual(['PROVIDER_ONE_MONEY']);
  });

  it("records CUSTOM and RECRUITMENT_FEE as SENT without the provider, with the study plan's defaults", async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(service, tenant);
    const { budgetId: planBudget } = await createBudget(service, tenant);
    const { budgetId: ownBudget } = await createBudget(service, tenant);
    await setStudyIncentive(tenant, studyId, { incentiveBudgetId: planBudget, customIncentiveId: 'tshirt', defaultCustomIncentiveValue: 'Size M' });
    const { participantId } = await createParticipant(service, tenant, { studyId });
    const ordersBefore = sandbox().calls.order;

    const custom = await sendIncentive(service, tenant, participantId, { type: 'CUSTOM', amountCents: 1500 });
    expect(custom).toMatchObject({ type: 'CUSTOM', status: 'SENT', budgetId: planBudget, customIncentiveId: 'tshirt', customIncentiveValue: 'Size M' });
    const given = await sendIncentive(service, tenant, participantId, { type: 'CUSTOM', amountCents: 1500, budgetId: ownBudget, customIncentiveId: 'mug', customIncentiveValue: 'Blue' });
    expect(given).toMatchObject({ status: 'SENT', budgetId: ownBudget, customIncentiveId: 'mug', customIncentiveValue: 'Blue' });
    const fee = await sendIncentive(service, tenant, participantId, { type: 'RECRUITMENT_FEE', amountCents: 2000 });
    expect(fee).toMatchObject({ type: 'RECRUITMENT_FEE', status: 'SENT', budgetId: planBudget, customIncentiveId: null, customIncentiveValue: null });

    expect(sandbox().calls.order).toBe(ordersBefore);
    expect(await incentiveRow(service, tenant, fee.incentiveId)).toMatchObject({ provider: null, provider_state: null });
  });

  describe('a CUSTOM incentive without amountCents (a thing, not money)', () => {
    it('is recorded SENT with amountCents 0, never reaching the provider, and read back the same', async () => {
      const tenant = await createTenant(service);
      const participant = await createParticipant(service, tenant);
      const ordersBefore = sandbox().calls.order;
      const response = await postIncentive(service, tenant, { participantId: participant.participantId, type: 'CUSTOM', customIncentiveId: 'voucher', customIncentiveValue: 'Voucher ABC-123' });
      expect(response.statusCode, response.body).toBe(201);
      const incentive = response.json();
      expect(incentive).toMatchObject({
        type: 'CUSTOM',
        amountCents: 0,
        status: 'SENT',
        customIncentiveId: 'voucher',
        customIncentiveValue: 'Voucher ABC-123',
        participantId: participant.participantId,
      });
      expect((await getIncentive(service, tenant, incentive.incentiveId)).json()).toEqual(incentive);
      expect(sandbox().calls.order).toBe(ordersBefore);
      expect(await incentiveRow(service, tenant, incentive.incentiveId)).toMatchObject({ amount_cents: 0, provider: null, provider_state: null });
      // Cancel marks it CANCELED, as any CUSTOM incentive.
      const cancel = await call(service, 'POST', `/incentives/${incentive.incentiveId}/cancel`, { token: tenant.token });
      expect(cancel.statusCode, cancel.body).toBe(200);
    });

    it("takes its value from the study plan's defaultCustomIncentiveValue", async () => {
      const tenant = await createTenant(service);
      const studyId = await createStudy(service, tenant);
      await setStudyIncentive(tenant, studyId, { customIncentiveId: 'tote', defaultCustomIncentiveValue: 'Branded tote bag' });
      const { participantId } = await createParticipant(service, tenant, { studyId });
      const incentive = await sendIncentive(service, tenant, participantId, { type: 'CUSTOM', amountCents: undefined });
      expect(incentive).toMatchObject({ amountCents: 0, customIncentiveId: 'tote', customIncentiveValue: 'Branded tote bag', status: 'SENT' });
    });

    it('is refused (400 naming customIncentiveValue) when nothing says what was given, and creates nothing', async () => {
      const tenant = await createTenant(service);
      const { participantId } = await createParticipant(service, tenant);
      for (const body of [{ participantId, type: 'CUSTOM' }, { participantId, type: 'CUSTOM', customIncentiveId: 'voucher' }]) {
        const response = await postIncentive(service, tenant, body);
        expect(response.statusCode, JSON.stringify(body)).toBe(400);
        expect(response.json(), JSON.stringify(body)).toEqual({ errors: [{ message: expect.stringContaining('customIncentiveValue'), path: ['customIncentiveValue'] }] });
      }
      expect(await countIncentives(tenant)).toBe(0);
    });

    it('adds nothing to the sums of money sent (TOTAL_SENT_*, INCENTIVE_PAID) and is found by AMOUNT 0', async () => {
      const tenant = await createTenant(service);
      const participant = await createParticipant(service, tenant);
      const money = await sendIncentive(service, tenant, participant.participantId, { type: 'MONEY_OR_GIFT_CARD', amountCents: 7500 });
      const gift = await sendIncentive(service, tenant, participant.participantId, { type: 'CUSTOM', amountCents: undefined, customIncentiveValue: 'Mug' });
      const person = (name: string) => ({ property: { propertyGroup: 'PERSON', propertyName: name }, comparison: 'EQUALS', value: 7500 });
      for (const name of ['TOTAL_SENT_ALL_TIME', 'TOTAL_SENT_LAST_YEAR']) {
        const found = await call(service, 'POST', '/people/search', { token: tenant.token, body: { filter: { filters: [person(name)] } } });
        expect(found.statusCode, found.body).toBe(200);
        expect(found.json().results.map((row: { personId: string }) => row.personId), name).toEqual([participant.personId]);
      }
      const paid = await call(service, 'POST', `/studies/${participant.studyId}/participants/search`, {
        token: tenant.token,
        body: { filter: { filters: [{ property: { propertyGroup: 'PARTICIPANT', propertyName: 'INCENTIVE_PAID' }, comparison: 'EQUALS', value: 7500 }] } },
      });
      expect(paid.statusCode, paid.body).toBe(200);
      expect(paid.json().results.map((row: { participantId: string }) => row.participantId)).toEqual([participant.participantId]);
      const byAmount = await call(service, 'POST', '/incentives/search', {
        token: tenant.token,
        body: { filter: { filters: [{ property: { propertyGroup: 'INCENTIVE', propertyName: 'AMOUNT' }, comparison: 'EQUALS', value: 0 }] } },
      });
      expect(byAmount.statusCode, byAmount.body).toBe(200);
      expect(byAmount.json().results.map((row: { incentiveId: string }) => row.incentiveId)).toEqual([gift.incentiveId]);
      expect(money.amountCents).toBe(7500);
    });
  });

  it('refuses invalid bodies with the path of the offending field, and creates nothing', async () => {
    const tenant = await createTenant(service);
    const { participantId } = await createParticipant(service, tenant);
    const cases: [object, string[]][] = [
      [{ participantId, type: 'MONEY_OR_GIFT_CARD', amountCents: 0 }, ['amountCents']],
      [{ participantId, type: 'MONEY_OR_GIFT_CARD', amountCents: -5 }, ['amountCents']],
      [{ participantId, type: 'MONEY_OR_GIFT_CARD', amountCents: 1.5 }, ['amountCents']],
      [{ participantId, type: 'MONEY_OR_GIFT_CARD', amountCents: '100' }, ['amountCents']],
      [{ participantId, type: 'CASH', amountCents: 100 }, ['type']],
      [{ participantId, amountCents: 100 }, ['type']],
      [{ type: 'CUSTOM', amountCents: 100 }, ['participantId']],
      [{ participantId, type: 'CUSTOM', amountCents: 100, currency: 'XTS' }, ['currency']],
      [{ participantId, type: 'CUSTOM', amountCents: 100, currency: 'eur' }, ['currency']],
      [{ participantId, type: 'MONEY_OR_GIFT_CARD', amountCents: 1_000_001, currency: 'EUR' }, ['amountCents']],
      [{ participantId, type: 'MONEY_OR_GIFT_CARD', amountCents: 1_500_001, currency: 'JPY' }, ['amountCents']],
      [{ participantId, type: 'MONEY_OR_GIFT_CARD', amountCents: 100, customIncentiveId: 'x' }, ['customIncentiveId']],
      [{ participantId, type: 'RECRUITMENT_FEE', amountCents: 100, customIncentiveValue: 'x' }, ['customIncentiveValue']],
      [{ participantId, type: 'CUSTOM', amountCents: 100, customIncentiveValue: '' }, ['customIncentiveValue']],
      [{ participantId, type: 'CUSTOM', amountCents: 0, customIncentiveValue: 'Mug' }, ['amountCents']],
      // Every type but CUSTOM is money: its amount is required.
      [{ participantId, type: 'MONEY_OR_GIFT_CARD' }, ['amountCents']],
      [{ participantId, type: 'PROVIDER_ONE_MONEY' }, ['amountCents']],
      [{ participantId, type: 'RECRUITMENT_FEE' }, ['amountCents']],
    ];
    for (const [body, path] of cases) {
      const response = await postIncentive(service, tenant, body);
      expect(response.statusCode, JSON.stringify(body)).toBe(400);
      expect(response.json().errors[0].path, JSON.stringify(body)).toEqual(path);
    }
    const missing = await postIncentive(service, tenant, { participantId, type: 'MONEY_OR_GIFT_CARD' });
    expect(missing.json()).toEqual({ errors: [{ message: 'amountCents is required', path: ['amountCents'] }] });
    expect(await countIncentives(tenant)).toBe(0);
  });

  it("answers 404 naming participantId for an unknown participant or another workspace's", async () => {
    const tenant = await createTenant(service);
    const other = await createTenant(service, 'Other');
    const theirs = await createParticipant(service, other);
    for (const participantId of ['ptc_unknown', theirs.participantId]) {
      const response = await postIncentive(service, tenant, { participantId, type: 'CUSTOM', amountCents: 100 });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({ errors: [{ message: 'Participant not found', path: ['participantId'] }] });
    }
    expect(await countIncentives(tenant)).toBe(0);
  });

  it('answers 404 for a participant whose person was deleted (not found, as everywhere), and orders nothing', async () => {
    const tenant = await createTenant(service);
    const participant = await createParticipant(service, tenant);
    expect((await call(service, 'DELETE', `/people/${participant.personId}`, { token: tenant.token })).statusCode).toBe(200);
    const calls = sandbox().calls.order;
    const response = await postIncentive(service, tenant, { participantId: participant.participantId, type: 'MONEY_OR_GIFT_CARD', amountCents: 100 });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ errors: [{ message: 'Participant not found', path: ['participantId'] }] });
    // As GET says of the same participant.
    const read = await call(service, 'GET', `/studies/${participant.studyId}/participants/${participant.participantId}`, { token: tenant.token });
    expect(read.statusCode).toBe(404);
    expect(await countIncentives(tenant)).toBe(0);
    expect(sandbox().calls.order).toBe(calls);
  });
});

describe('POST /incentives with an Idempotency-Key', () => {
  it('answers a retry with the first response (Idempotent-Replayed) and pays once', async () => {
    const tenant = await createTenant(service);
    const { participantId } = await createParticipant(service, tenant);
    const body = { participantId, type: 'MONEY_OR_GIFT_CARD', amountCents: 2500 };
    const calls = sandbox().calls.order;
    const first = await postIncentive(service, tenant, body, { idempotencyKey: 'pay-1' });
    expect(first.statusCode).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    // The same request with its fields in another order is the same request.
    const retry = await postIncentive(service, tenant, { amountCents: 2500, type: 'MONEY_OR_GIFT_CARD', participantId }, { idempotencyKey: 'pay-1' });
    expect(retry.statusCode).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(retry.headers['content-type']).toBe(first.headers['content-type']);
    expect(retry.body).toBe(first.body);
    expect(await countIncentives(tenant)).toBe(1);
    expect(sandbox().calls.order).toBe(calls + 1);
  });

  it('refuses the same key with a different request (400 naming Idempotency-Key), and pays nothing more', async () => {
    const tenant = await createTenant(service);
    const { participantId } = await createParticipant(service, tenant);
    await sendIncentive(service, tenant, participantId, { amountCents: 2500 }, { idempotencyKey: 'pay-2' });
    const response = await postIncentive(service, tenant, { participantId, type: 'MONEY_OR_GIFT_CARD', amountCents: 2600 }, { idempotencyKey: 'pay-2' });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ errors: [{ message: 'This Idempotency-Key was already used with a different request', path: ['Idempotency-Key'] }] });
    expect(await countIncentives(tenant)).toBe(1);
  });

  it('lets two simultaneous requests with one key send one incentive and place one order', async () => {
    const tenant = await createTenant(service);
    const { participantId } = await createParticipant(service, tenant);
    const body = { participantId, type: 'MONEY_OR_GIFT_CARD', amountCents: 4200 };
    const calls = sandbox().calls.order;
    // The provider takes its time, so the other requests arrive while the first one is running.
    sandbox().latencyMs = 250;
    const responses = await Promise.all([1, 2, 3].map(() => postIncentive(service, tenant, body, { idempotencyKey: 'pay-race' })));
    expect(responses.map((response) => response.statusCode).sort()).toEqual([201, 409, 409]);
    for (const response of responses.filter((candidate) => candidate.statusCode === 409)) {
      expect(response.json()).toEqual({ errors: [{ message: 'A request with this Idempotency-Key is still in progress; retry later', path: ['Idempotency-Key'] }] });
    }
    const created = responses.find((response) => response.statusCode === 201)!;
    expect(created.headers['idempotent-replayed']).toBeUndefined();
    const replay = await postIncentive(service, tenant, body, { idempotencyKey: 'pay-race' });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toBe(created.body);
    expect(await countIncentives(tenant)).toBe(1);
    expect(ordersOf(tenant)).toHaveLength(1);
    expect(sandbox().calls.order).toBe(calls + 1);
  });

  it('finds the incentive already sent when the reservation was lost, instead of paying again', async () => {
    const tenant = await createTenant(service);
    const { participantId } = await createParticipant(service, tenant);
    const body = { participantId, type: 'MONEY_OR_GIFT_CARD', amountCents: 900 };
    const first = await sendIncentive(service, tenant, participantId, body, { idempotencyKey: 'pay-lost' });
    const calls = sandbox().calls.order;
    // As if the reservation had been pruned, or lost with a crashed instance.
    await service.deps.db.deleteFrom('idempotency_keys').where('workspace_id', '=', tenant.workspaceId).execute();
    const again = await postIncentive(service, tenant, body, { idempotencyKey: 'pay-lost' });
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first);
    expect(sandbox().calls.order).toBe(calls);
    await service.deps.db.deleteFrom('idempotency_keys').where('workspace_id', '=', tenant.workspaceId).execute();
    const different = await postIncentive(service, tenant, { ...body, amountCents: 901 }, { idempotencyKey: 'pay-lost' });
    expect(different.statusCode).toBe(400);
    expect(different.json().errors[0].path).toEqual(['Idempotency-Key']);
    expect(await countIncentives(tenant)).toBe(1);
  });

  it('scopes keys to the workspace, and without a key every request pays', async () => {
    const tenant = await createTenant(service);
    const other = await createTenant(service, 'Other');
    const mine = await createParticipant(service, tenant);
    const theirs = await createParticipant(service, other);
    const a = await sendIncentive(service, tenant, mine.participantId, {}, { idempotencyKey: 'shared-key' });
    const b = await sendIncentive(service, other, theirs.participantId, {}, { idempotencyKey: 'shared-key' });
    expect(a.incentiveId).not.toBe(b.incentiveId);
    await sendIncentive(service, tenant, mine.participantId);
    await sendIncentive(service, tenant, mine.participantId);
    expect(await countIncentives(tenant)).toBe(3);
  });
});

describe('POST /incentives when the provider fails', () => {
  it('records a refused order as ERROR (201), with nothing at the provider', async () => {
    const tenant = await createTenant(service);
    const { participantId } = await createParticipant(service, tenant);
    sandbox().injectFault('order', 'refuse');
    const incentive = await sendIncentive(service, tenant, participantId);
    expect(incentive.status).toBe('ERROR');
    expect(await incentiveRow(service, tenant, incentive.incentiveId)).toMatchObject({
      provider_state: 'FAILED',
      failure_reason: expect.stringMatching(/^The provider refused the order/),
      failed_at: new Date(clockMs).toISOString(),
      provider_next_attempt_at: null,
    });
    expect(ordersOf(tenant)).toEqual([]);
  });

  for (const fault of ['lose-request', 'lose-response', 'hang'] as const) {
    it(`keeps an order of unknown outcome (${fault}) PENDING, and the background work orders it once`, async () => {
      await advance(3600);
      const tenant = await createTenant(service);
      const { participantId } = await createParticipant(service, tenant);
      const calls = sandbox().calls.order;
      sandbox().injectFault('order', fault);
      const started = Date.now();
      const incentive = await sendIncentive(service, tenant, participantId);
      if (fault === 'hang') expect(Date.now() - started).toBeGreaterThanOrEqual(PROVIDER_TIMEOUT_MS - 50);
      expect(incentive.status).toBe('UNCLAIMED');
      expect(await incentiveRow(service, tenant, incentive.incentiveId)).toMatchObject({ provider_state: 'PENDING', provider_reference: null, provider_attempts: 1 });
      expect(ordersOf(tenant)).toHaveLength(fault === 'lose-response' ? 1 : 0);

      // Not before its backoff.
      await advance(PROVIDER_RETRY_SECONDS - 10);
      expect(await runProviderWork(tenant)).toEqual({ ordered: 0, refused: 0, voided: 0, gaveUp: 0, unknown: 0 });
      expect((await incentiveRow(service, tenant, incentive.incentiveId)).provider_state).toBe('PENDING');

      await advance(60);
      expect(await runProviderWork(tenant)).toEqual({ ordered: 1, refused: 0, voided: 0, gaveUp: 0, unknown: 0 });
      const row = await incentiveRow(service, tenant, incentive.incentiveId);
      expect(row).toMatchObject({ provider_state: 'ORDERED', provider_reference: expect.stringMatching(/^sbx_/), provider_next_attempt_at: null, status: 'UNCLAIMED' });
      expect(ordersOf(tenant)).toEqual([expect.objectContaining({ incentiveId: incentive.incentiveId, reference: row.provider_reference })]);
      expect(sandbox().calls.order).toBe(calls + 2);

      // Settled: later runs leave it alone.
      await advance(3600);
      expect((await runProviderWork(tenant)).ordered).toBe(0);
      expect(sandbox().calls.order).toBe(calls + 2);
    });
  }

  it('marks ERROR an order the provider refuses on a retry', async () => {
    await advance(3600);
    const tenant = await createTenant(service);
    const { participantId } = await createParticipant(service, tenant);
    sandbox().injectFault('order', 'lose-request');
    const incentive = await sendIncentive(service, tenant, participantId);
    await advance(60);
    sandbox().injectFault('order', 'refuse');
    expect(await runProviderWork(tenant)).toMatchObject({ ordered: 0, refused: 1 });
    expect((await getIncentive(service, tenant, incentive.incentiveId)).json().status).toBe('ERROR');
    expect((await incentiveRow(service, tenant, incentive.incentiveId)).provider_state).toBe('FAILED');
  });

  it('re-orders several due incentives with their recipients read in the statement that takes them, not one lookup each', async () => {
    await advance(3600);
    const tenant = await createTenant(service);
    const participants = [];
    for (let count = 0; count < 3; count++) participants.push(await createParticipant(service, tenant));
    sandbox().injectFault('order', 'lose-request', participants.length);
    for (const participant of participants) await sendIncentive(service, tenant, participant.participantId);
    expect(ordersOf(tenant)).toEqual([]);

    await advance(PROVIDER_RETRY_SECONDS + 1);
    const db = service.deps.db;
    const statements: string[] = [];
    const recorder: KyselyPlugin = {
      transformQuery: (args) => {
        statements.push(db.getExecutor().compileQuery(args.node, args.queryId).sql);
        return args.node;
      },
      transformResult: async (args) => args.result,
    };
    expect((await runProviderWork(tenant, db.withPlugin(recorder))).ordered).toBe(participants.length);
    expect(statements.filter((text) => /\bfrom "?people"?/.test(text))).toEqual([]);
    expect(statements.filter((text) => /left join people pe/.test(text))).toHaveLength(1);
    expect(ordersOf(tenant).map((seen) => seen.order?.recipientEmail).sort()).toEqual(participants.map((participant) => participant.email).sort());
  });

  it(`gives up after ${ORDER_ATTEMPTS_MAX} unconfirmed attempts: voids the order, then marks it ERROR`, async () => {
    await advance(3600);
    const tenant = await createTenant(service);
    const { participantId } = await createParticipant(service, tenant);
    const calls = { ...sandbox().calls };
    sandbox().injectFault('order', 'lose-response', ORDER_ATTEMPTS_MAX);
    const incentive = await sendIncentive(service, tenant, participantId);
    let status = 'UNCLAIMED';
    for (let run = 0; run < 20 && status === 'UNCLAIMED'; run++) {
      await advance(2 * 3600);
      await runProviderWork(tenant);
      status = (await getIncentive(service, tenant, incentive.incentiveId)).json().status;
    }
    expect(status).toBe('ERROR');
    expect(sandbox().calls.order - calls.order).toBe(ORDER_ATTEMPTS_MAX);
    expect(sandbox().calls.void - calls.void).toBe(1);
    expect(ordersOf(tenant)).toEqual([expect.objectContaining({ incentiveId: incentive.incentiveId, voided: true })]);
    expect(await incentiveRow(service, tenant, incentive.incentiveId)).toMatchObject({
      provider_state: 'FAILED',
      failure_reason: `The provider did not confirm the order after ${ORDER_ATTEMPTS_MAX} attempts; it was voided`,
    });
  });

  it('voids and marks ERROR a pending order whose recipient was deleted meanwhile', async () => {
    await advance(3600);
    const tenant = await createTenant(service);
    const participant = await createParticipant(service, tenant);
    sandbox().injectFault('order', 'lose-response');
    const incentive = await sendIncentive(service, tenant, participant.participantId);
    expect((await call(service, 'DELETE', `/people/${participant.personId}`, { token: tenant.token })).statusCode).toBe(200);
    await advance(60);
    expect(await runProviderWork(tenant)).toMatchObject({ ordered: 0, gaveUp: 1 });
    expect(await incentiveRow(service, tenant, incentive.incentiveId)).toMatchObject({ status: 'ERROR', provider_state: 'FAILED' });
    expect(ordersOf(tenant)).toEqual([expect.objectContaining({ voided: true })]);
  });
});

describeSecurity('POST /incentives', () => service, {
  method: 'POST',
  right: 'incentives:write',
  addressesResource: true,
  async request(tenant) {
    const { participantId } = await createParticipant(service, tenant);
    return { url: '/incentives', body: { participantId, type: 'CUSTOM', amountCents: 100 } };
  },
});
