import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { TremendousFake } from '../../../test/fakes/tremendous-fake.js';
import { type ProviderOrder, ProviderRefusal, ProviderWebhookRejected } from '../provider.js';
import { denominationOf, TremendousError, TremendousProvider } from './adapter.js';

let fake: TremendousFake;
let adapter: TremendousProvider;
beforeAll(async () => {
  fake = await TremendousFake.start();
  adapter = new TremendousProvider({ credentials: { apiKey: fake.apiKey, campaignId: 'CAMPAIGN1', webhookSecret: 'key' }, apiBaseUrl: fake.url });
});
afterAll(async () => fake?.close());
afterEach(() => fake.clearFaults());

let counter = 0;
const order = (overrides: Partial<ProviderOrder> = {}): ProviderOrder => ({
  workspaceId: 'wsp_t',
  incentiveId: `inc_adapter_${++counter}`,
  type: 'MONEY_OR_GIFT_CARD',
  amountCents: 2500,
  currency: 'USD',
  recipientEmail: 'ada@example.test',
  recipientName: 'Ada',
  ...overrides,
});
const signal = () => ({ signal: AbortSignal.timeout(2_000) });
const target = (incentiveId: string, reference: string | null = null) => ({ workspaceId: 'wsp_t', incentiveId, reference });

describe('TremendousProvider against the fake', () => {
  it('orders one reward with the incentive as external_id; ordering again answers the first', async () => {
    const placed = order();
    const first = await adapter.order(placed, signal());
    const second = await adapter.order(placed, signal());
    expect(second.reference).toBe(first.reference);
    expect(fake.createdPerExternalId.get(placed.incentiveId)).toBe(1);
    expect(fake.orderOf(placed.incentiveId)?.rewards[0]).toMatchObject({ id: first.reference, value: { denomination: 25, currency_code: 'USD' }, recipient: { email: 'ada@example.test', name: 'Ada' }, delivery: { method: 'EMAIL' } });
  });

  it('amounts in the currency\'s minor unit: JPY has none, BHD three', () => {
    expect(denominationOf(5000, 'JPY')).toBe(5000);
    expect(denominationOf(1234, 'BHD')).toBe(1.234);
    expect(denominationOf(1999, 'EUR')).toBe(19.99);
  });

  it('a 422 or a 401 is a refusal; a 429, a 5xx or no answer leaves the outcome unknown', async () => {
    fake.injectFault('order', 'refuse');
    await expect(adapter.order(order(), signal())).rejects.toBeInstanceOf(ProviderRefusal);
    const wrongKey = new TremendousProvider({ credentials: { apiKey: 'TEST_wrong', campaignId: 'C' }, apiBaseUrl: fake.url });
    await expect(wrongKey.order(order(), signal())).rejects.toBeInstanceOf(ProviderRefusal);
    for (const fault of ['throttle', 'fail-before', 'fail-after'] as const) {
      fake.injectFault('order', fault);
      const thrown = await adapter.order(order(), signal()).catch((error: unknown) => error);
      expect(thrown, fault).toBeInstanceOf(TremendousError);
    }
    fake.injectFault('order', 'hang');
    const hung = await adapter.order(order(), { signal: AbortSignal.timeout(200) }).catch((error: unknown) => error);
    expect(hung).not.toBeInstanceOf(ProviderRefusal);
  });

  it('reads an order\'s state by its external_id: open, claimed (delivered), failed, canceled, not found', async () => {
    expect(await adapter.status(target('inc_never_ordered'), signal())).toEqual({ state: 'not_found' });
    const placed = order();
    const { reference } = await adapter.order(placed, signal());
    expect(await adapter.status(target(placed.incentiveId), signal())).toEqual({ state: 'open' });
    await fake.deliver(placed.incentiveId, 'FAILED', { notify: false });
    expect(await adapter.status(target(placed.incentiveId, reference), signal())).toMatchObject({ state: 'failed' });
    await fake.deliver(placed.incentiveId, 'SUCCEEDED', { notify: false });
    expect(await adapter.status(target(placed.incentiveId, reference), signal())).toEqual({ state: 'claimed' });
    const other = order();
    await adapter.order(other, signal());
    await adapter.void(target(other.incentiveId), signal());
    expect(await adapter.status(target(other.incentiveId), signal())).toEqual({ state: 'canceled' });
  });

  it('resends by reward; cancels once and again (done), refuses to cancel a redeemed reward, and an order never placed counts as voided', async () => {
    const placed = order();
    const { reference } = await adapter.order(placed, signal());
    await adapter.resend(target(placed.incentiveId, reference), signal());
    expect(fake.resends.get(reference)).toBe(1);
    await adapter.void(target(placed.incentiveId, reference), signal());
    await adapter.void(target(placed.incentiveId, reference), signal());
    await expect(adapter.resend(target(placed.incentiveId, reference), signal())).rejects.toBeInstanceOf(ProviderRefusal);
    const redeemed = order();
    const kept = await adapter.order(redeemed, signal());
    fake.redeemed.add(kept.reference);
    await expect(adapter.void(target(redeemed.incentiveId, kept.reference), signal())).rejects.toBeInstanceOf(ProviderRefusal);
    await adapter.void(target('inc_never_placed'), signal());
  });
});

describe('TremendousProvider.readWebhook', () => {
  const now = new Date();
  const read = (body: string, signature: string | undefined, secret = 'key') =>
    adapter.readWebhook({ headers: signature === undefined ? {} : { 'tremendous-webhook-signature': signature }, rawBody: Buffer.from(body), secret, now });

  it('verifies the HMAC-SHA256 of the exact body and reads delivery events', () => {
    const body = fake.webhookBody('REWARDS.DELIVERY.SUCCEEDED', 'REWARD1', 'evt-1');
    expect(read(body, TremendousFake.sign(body, 'key'))).toEqual({ eventId: 'evt-1', report: { kind: 'claimed', reference: 'REWARD1' } });
    const failed = fake.webhookBody('REWARDS.DELIVERY.FAILED', 'REWARD1', 'evt-2');
    expect(read(failed, TremendousFake.sign(failed, 'key')).report).toMatchObject({ kind: 'failed', reference: 'REWARD1' });
    const other = fake.webhookBody('ORDERS.CREATED', 'ORDER1', 'evt-3');
    expect(read(other, TremendousFake.sign(other, 'key'))).toEqual({ eventId: 'evt-3', report: null });
  });

  it('refuses a missing, wrong or differently-keyed signature, and a body changed after signing', () => {
    const body = fake.webhookBody('REWARDS.DELIVERY.SUCCEEDED', 'REWARD1');
    expect(() => read(body, undefined)).toThrow(ProviderWebhookRejected);
    expect(() => read(body, 'sha256=00')).toThrow(ProviderWebhookRejected);
    expect(() => read(body, TremendousFake.sign(body, 'another key'))).toThrow(ProviderWebhookRejected);
    expect(() => read(body.replace('REWARD1', 'REWARD2'), TremendousFake.sign(body, 'key'))).toThrow(ProviderWebhookRejected);
  });
});
