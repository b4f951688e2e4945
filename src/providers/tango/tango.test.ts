import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TangoFake } from '../../../test/fakes/tango-fake.js';
import { idPrefixes, newId } from '../../ids.js';
import { IncentiveProviders } from '../index.js';
import { type ProviderOrder, ProviderRefusal, type ProviderTarget, ProviderWebhookRejected } from '../provider.js';
import { supportedCurrencies } from '../../families/incentives/currencies.js';
import {
  TANGO_ITEM_CURRENCIES,
  TangoConfigurationError,
  TangoProvider,
  TangoUnavailable,
  createTangoProvider,
  incentiveIdFromTangoRef,
  tangoAmount,
  tangoExternalRefId,
} from './tango.js';
import { TANGO_WEBHOOK_TOLERANCE_MS } from './webhook.js';

const workspaceId = 'wsp_tango';
let fake: TangoFake;
let tango: TangoProvider;

const options = () => ({ signal: AbortSignal.timeout(5_000) });

function anOrder(overrides: Partial<ProviderOrder> = {}): ProviderOrder {
  return {
    workspaceId,
    incentiveId: newId(idPrefixes.incentive),
    type: 'MONEY_OR_GIFT_CARD',
    amountCents: 2500,
    currency: 'USD',
    recipientEmail: 'ada@example.org',
    recipientName: 'Ada King Lovelace',
    ...overrides,
  };
}

const targetOf = (order: ProviderOrder, reference: string | null): ProviderTarget => ({ workspaceId, incentiveId: order.incentiveId, reference });

function provider(extra: Record<string, string> = {}): TangoProvider {
  return createTangoProvider({ credentials: fake.credentials(extra), apiBaseUrl: fake.url }) as TangoProvider;
}

beforeEach(async () => {
  fake = await TangoFake.start();
  tango = provider();
});

afterEach(async () => {
  await fake.close();
});

describe('Tango adapter: configuration', () => {
  it('names the missing credentials', () => {
    expect(() => createTangoProvider({ credentials: { platformName: 'p' }, apiBaseUrl: fake.url })).toThrow(
      new TangoConfigurationError('Tango needs the credentials platformKey, customerIdentifier, accountIdentifier'),
    );
  });

  it('needs a catalog item to order', () => {
    const { utid: _utid, utidEUR: _e, utidGBP: _g, utidCAD: _c, utidAUD: _a, utidJPY: _j, ...rest } = fake.credentials();
    expect(() => createTangoProvider({ credentials: rest, apiBaseUrl: fake.url })).toThrow(/utid/);
  });

  it('turns an incentive id into an alphanumeric externalRefID and back', () => {
    const incentiveId = newId(idPrefixes.incentive);
    const ref = tangoExternalRefId(incentiveId);
    expect(ref).toMatch(/^[A-Za-z0-9]{1,100}$/);
    expect(incentiveIdFromTangoRef(ref)).toBe(incentiveId);
    expect(incentiveIdFromTangoRef('someoneElses123')).toBeNull();
  });
});

describe('Tango adapter: order', () => {
  it('places an order as Tango documents it and answers its referenceOrderID', async () => {
    const order = anOrder();
    const { reference } = await tango.order(order, options());
    const placed = fake.orderOf(tangoExternalRefId(order.incentiveId));
    expect(reference).toBe(placed.referenceOrderID);
    expect(placed).toMatchObject({
      accountIdentifier: fake.accountIdentifier,
      customerIdentifier: fake.customerIdentifier,
      utid: 'U000USD',
      amount: 25,
      currencyCode: 'USD',
      sendEmail: true,
      recipient: { email: 'ada@example.org', firstName: 'Ada', lastName: 'King Lovelace' },
    });
    expect(fake.payments).toBe(1);
    expect(fake.requests.map((request) => request.status)).toEqual([201]);
  });

  it('sends a first name Tango requires even when the person has none on file', async () => {
    const order = anOrder({ recipientName: null });
    await tango.order(order, options());
    expect(fake.orderOf(tangoExternalRefId(order.incentiveId)).recipient).toEqual({ email: 'ada@example.org', firstName: 'Participant' });
  });

  it('ordering the same incentive again returns the first order (Tango answers 200), one payment', async () => {
    const order = anOrder();
    const first = await tango.order(order, options());
    const again = await tango.order(order, options());
    // Tango returns the original order even if the repeat asks for something else.
    const changed = await tango.order({ ...order, amountCents: 9900 }, options());
    expect(again.reference).toBe(first.reference);
    expect(changed.reference).toBe(first.reference);
    expect(fake.payments).toBe(1);
    expect(fake.orderOf(tangoExternalRefId(order.incentiveId)).amount).toBe(25);
    expect(fake.requests.map((request) => request.status)).toEqual([201, 200, 200]);
  });

  it('a timeout after Tango placed the order is an unknown outcome; the retry gets that order, one payment', async () => {
    const order = anOrder();
    fake.injectFault('order', 'hang-after-work');
    const attempt = tango.order(order, { signal: AbortSignal.timeout(300) });
    await expect(attempt).rejects.toThrow();
    await expect(attempt).rejects.not.toBeInstanceOf(ProviderRefusal);
    expect(fake.payments).toBe(1);
    const retry = await tango.order(order, options());
    expect(retry.reference).toBe(fake.orderOf(tangoExternalRefId(order.incentiveId)).referenceOrderID);
    expect(fake.payments).toBe(1);
  });

  it('a 5xx after the work and a 5xx before it are unknown outcomes; retries pay once', async () => {
    const after = anOrder();
    fake.injectFault('order', 'error-after-work');
    await expect(tango.order(after, options())).rejects.toBeInstanceOf(TangoUnavailable);
    expect(fake.payments).toBe(1);
    await tango.order(after, options());
    expect(fake.payments).toBe(1);

    const before = anOrder();
    fake.injectFault('order', 'error-before-work');
    await expect(tango.order(before, options())).rejects.toBeInstanceOf(TangoUnavailable);
    expect(fake.payments).toBe(1);
    await tango.order(before, options());
    expect(fake.payments).toBe(2);
  });

  it('429 (Tango allows 1 request a second) is unknown, not a refusal: the retry places the order', async () => {
    const order = anOrder();
    fake.injectFault('order', 'rate-limit');
    const error = await tango.order(order, options()).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(TangoUnavailable);
    expect((error as Error).message).toMatch(/429 Too Many Requests/);
    await tango.order(order, options());
    expect(fake.payments).toBe(1);
  });

  it("a 400 is a definite refusal that carries Tango's errors[] and i18nKey; nothing is paid", async () => {
    fake.injectFault('order', 'refuse');
    const error = await tango.order(anOrder(), options()).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(ProviderRefusal);
    expect((error as Error).message).toMatch(/^order: Tango answered 400 Bad Request: utid: Refused \(injected\) \(i18nKey 422\.024\) \[requestId [0-9a-f-]+\]$/);
    expect(fake.payments).toBe(0);
  });

  it('a UTID missing from the catalog and wrong credentials are refusals', async () => {
    await expect(provider({ utid: 'U999NOPE' }).order(anOrder(), options())).rejects.toThrow(/utid: utid U999NOPE is not in the platform catalog/);
    await expect(provider({ platformKey: 'wrong' }).order(anOrder(), options())).rejects.toThrow(
      expect.objectContaining({ name: 'ProviderRefusal', message: expect.stringMatching(/401 Unauthorized/) as unknown }),
    );
    expect(fake.payments).toBe(0);
  });

  it('an account without the funds is a refusal (402); nothing is paid', async () => {
    fake.balance = 10;
    await expect(tango.order(anOrder(), options())).rejects.toThrow(
      expect.objectContaining({ name: 'ProviderRefusal', message: expect.stringMatching(/402 Payment Required: amount: Insufficient funds/) as unknown }),
    );
    expect(fake.payments).toBe(0);
  });

  it('Tango out of reach is an unknown outcome', async () => {
    const url = fake.url;
    await fake.close();
    const unreachable = createTangoProvider({ credentials: fake.credentials(), apiBaseUrl: url });
    await expect(unreachable.order(anOrder(), options())).rejects.not.toBeInstanceOf(ProviderRefusal);
    fake = await TangoFake.start();
  });

  it("the service's call classifies the outcomes: done, refused, unknown (a hang ends at the service's timeout)", async () => {
    const providers = new IncentiveProviders('sandbox', { timeoutMs: 300 });
    const order = anOrder();
    fake.injectFault('order', 'refuse');
    expect(await providers.call((call) => tango.order(order, call))).toMatchObject({ kind: 'refused' });
    fake.injectFault('order', 'hang');
    expect(await providers.call((call) => tango.order(order, call))).toEqual({ kind: 'unknown', reason: 'The provider did not answer within 300 ms' });
    expect(fake.payments).toBe(0);
    expect(await providers.call((call) => tango.order(order, call))).toMatchObject({ kind: 'done', value: { reference: expect.any(String) as unknown } });
    expect(fake.payments).toBe(1);
  });
});

describe('Tango adapter: currencies and amounts', () => {
  it('orders each currency through its own catalog item, in its decimals', async () => {
    const cases: [string, number, string, number][] = [
      ['EUR', 1999, 'U000EUR', 19.99],
      ['GBP', 1, 'U000GBP', 0.01],
      ['CAD', 100, 'U000CAD', 1],
      ['AUD', 123456, 'U000AUD', 1234.56],
      ['JPY', 5000, 'U000JPY', 5000],
    ];
    for (const [currency, amountCents, utid, amount] of cases) {
      const order = anOrder({ currency, amountCents });
      await tango.order(order, options());
      expect(fake.orderOf(tangoExternalRefId(order.incentiveId))).toMatchObject({ utid, amount, currencyCode: currency });
    }
  });

  it('a currency with no catalog item configured is refused by name before any request (BHD)', async () => {
    await expect(tango.order(anOrder({ currency: 'BHD', amountCents: 12345 }), options())).rejects.toThrow(
      new ProviderRefusal('Tango pays BHD only through a catalog item (UTID) in BHD; none is configured for this workspace (set utidBHD)'),
    );
    expect(fake.requests).toEqual([]);
  });

  it('a three-decimal currency goes to Tango in fils when its catalog has one (BHD)', async () => {
    fake.catalog.set('U000BHD', { currencyCode: 'BHD', minValue: 0.001, maxValue: 750, rewardName: 'Reward Link BHD', choiceProduct: true });
    const order = anOrder({ currency: 'BHD', amountCents: 12345 });
    await provider({ utidBHD: 'U000BHD' }).order(order, options());
    expect(fake.orderOf(tangoExternalRefId(order.incentiveId))).toMatchObject({ amount: 12.345, currencyCode: 'BHD' });
    expect(tangoAmount(1, 'BHD')).toBe(0.001);
    expect(tangoAmount(7, 'JPY')).toBe(7);
  });

  it("takes the catalog item's largest amount and refuses one minor unit more (USD 2,000.00, JPY 200,000)", async () => {
    await tango.order(anOrder({ amountCents: 200_000 }), options());
    await tango.order(anOrder({ currency: 'JPY', amountCents: 200_000 }), options());
    expect(fake.payments).toBe(2);
    await expect(tango.order(anOrder({ amountCents: 200_001 }), options())).rejects.toThrow(
      expect.objectContaining({ name: 'ProviderRefusal', message: expect.stringMatching(/amount: amount must be between 0.01 and 2000 USD/) as unknown }),
    );
    await expect(tango.order(anOrder({ currency: 'JPY', amountCents: 200_001 }), options())).rejects.toBeInstanceOf(ProviderRefusal);
    expect(fake.payments).toBe(2);
  });

  it('refuses amounts that are not a positive safe whole number of the minor unit', async () => {
    for (const amountCents of [0, -5, 1.5, 2 ** 53]) {
      await expect(tango.order(anOrder({ amountCents }), options())).rejects.toBeInstanceOf(ProviderRefusal);
    }
    expect(fake.requests).toEqual([]);
  });
});

describe('Tango adapter: resend', () => {
  it('resends by reference, and by incentive when the reference was never known', async () => {
    const order = anOrder();
    const { reference } = await tango.order(order, options());
    await tango.resend(targetOf(order, reference), options());
    await tango.resend(targetOf(order, null), options());
    expect(fake.orderOf(tangoExternalRefId(order.incentiveId)).resends.map((resend) => resend.email)).toEqual(['ada@example.org', 'ada@example.org']);
  });

  it('an incentive Tango never ordered cannot be resent (a refusal); a 5xx is unknown', async () => {
    await expect(tango.resend(targetOf(anOrder(), null), options())).rejects.toThrow(/Tango has no order for incentive/);
    await expect(tango.resend({ workspaceId, incentiveId: newId(idPrefixes.incentive), reference: 'RA-NOPE' }, options())).rejects.toBeInstanceOf(ProviderRefusal);
    const order = anOrder();
    const { reference } = await tango.order(order, options());
    fake.injectFault('resend', 'error-before-work');
    await expect(tango.resend(targetOf(order, reference), options())).rejects.toBeInstanceOf(TangoUnavailable);
  });
});

describe('Tango adapter: void (cancel the line items)', () => {
  it('cancels the line item with a reason code; voiding again, or an order never placed, succeeds', async () => {
    const order = anOrder();
    const { reference } = await tango.order(order, options());
    await tango.void(targetOf(order, reference), options());
    const placed = fake.orderOf(tangoExternalRefId(order.incentiveId));
    expect(placed.lineItems[0]).toMatchObject({ status: 'CANCELLED', cancelReason: { reasonCode: 'OTHER', otherReason: 'Incentive canceled by the research team' } });
    expect(placed.status).toBe('CANCELLED');
    const cancels = () => fake.requests.filter((request) => request.path.endsWith('/cancel')).length;
    expect(cancels()).toBe(1);
    await tango.void(targetOf(order, reference), options());
    await tango.void(targetOf(order, null), options());
    expect(cancels()).toBe(1);
    await tango.void(targetOf(anOrder(), null), options());
  });

  it('finds the order by incentive when the reference was never known', async () => {
    const order = anOrder();
    await tango.order(order, options());
    await tango.void(targetOf(order, null), options());
    expect(fake.orderOf(tangoExternalRefId(order.incentiveId)).status).toBe('CANCELLED');
  });

  it('refuses what Tango will not cancel: a redeemed reward, one past five days, a gift card that is not a Choice Product', async () => {
    const redeemed = anOrder();
    await tango.order(redeemed, options());
    fake.setLineItem(tangoExternalRefId(redeemed.incentiveId), { rewardStatus: 'FULL_REDEMPTION' });
    await expect(tango.void(targetOf(redeemed, null), options())).rejects.toThrow(/only a fully unredeemed Choice Product within five days/);

    const old = anOrder();
    await tango.order(old, options());
    fake.setLineItem(tangoExternalRefId(old.incentiveId), { canCancel: false });
    await expect(tango.void(targetOf(old, null), options())).rejects.toBeInstanceOf(ProviderRefusal);

    const giftCard = anOrder();
    await provider({ utid: 'U000GIFTCARD' }).order(giftCard, options());
    await expect(tango.void(targetOf(giftCard, null), options())).rejects.toBeInstanceOf(ProviderRefusal);
    expect(fake.requests.filter((request) => request.path.endsWith('/cancel'))).toEqual([]);
  });

  it('a 5xx on the cancel is unknown; the retry cancels', async () => {
    const order = anOrder();
    const { reference } = await tango.order(order, options());
    fake.injectFault('cancel', 'error-after-work');
    await expect(tango.void(targetOf(order, reference), options())).rejects.toBeInstanceOf(TangoUnavailable);
    await tango.void(targetOf(order, reference), options());
    expect(fake.orderOf(tangoExternalRefId(order.incentiveId)).status).toBe('CANCELLED');
  });
});

describe('Tango adapter: status', () => {
  it('answers open, claimed, failed, canceled and not_found', async () => {
    const order = anOrder();
    const { reference } = await tango.order(order, options());
    const ref = tangoExternalRefId(order.incentiveId);
    expect(await tango.status(targetOf(order, reference), options())).toEqual({ state: 'open' });
    expect(await tango.status(targetOf(order, null), options())).toEqual({ state: 'open' });

    fake.setLineItem(ref, { emailStatus: 'BOUNCE' });
    expect(await tango.status(targetOf(order, reference), options())).toEqual({ state: 'failed', reason: 'Tango could not deliver the reward email (BOUNCE)' });
    fake.setLineItem(ref, { emailStatus: 'DELIVERED', status: 'FAILED' });
    expect(await tango.status(targetOf(order, reference), options())).toMatchObject({ state: 'failed' });
    fake.setLineItem(ref, { status: 'COMPLETE', rewardStatus: 'PARTIAL_REDEMPTION' });
    expect(await tango.status(targetOf(order, reference), options())).toEqual({ state: 'claimed' });
    fake.orderOf(ref).status = 'FAILED';
    expect(await tango.status(targetOf(order, reference), options())).toEqual({ state: 'failed', reason: `Tango order ${reference} FAILED` });

    const voided = anOrder();
    const placed = await tango.order(voided, options());
    await tango.void(targetOf(voided, placed.reference), options());
    expect(await tango.status(targetOf(voided, placed.reference), options())).toEqual({ state: 'canceled' });

    expect(await tango.status(targetOf(anOrder(), null), options())).toEqual({ state: 'not_found' });
    expect(await tango.status({ workspaceId, incentiveId: newId(idPrefixes.incentive), reference: 'RA-NOPE' }, options())).toEqual({ state: 'not_found' });
  });

  it('a lookup that fails is unknown, never not_found (which would order again)', async () => {
    fake.injectFault('lookup', 'error-before-work');
    await expect(tango.status(targetOf(anOrder(), null), options())).rejects.toBeInstanceOf(TangoUnavailable);
    fake.injectFault('lookup', 'rate-limit');
    await expect(tango.status(targetOf(anOrder(), 'RA000001'), options())).rejects.toBeInstanceOf(TangoUnavailable);
  });
});

describe('Tango adapter: webhooks', () => {
  const read = (delivery: { headers: Record<string, string>; rawBody: Buffer }, now = new Date(), secret = fake.webhookSecret) =>
    tango.readWebhook({ headers: delivery.headers, rawBody: delivery.rawBody, secret, now });

  it('reads a signed redemption as a claim of the incentive, with its reference', async () => {
    const order = anOrder();
    const { reference } = await tango.order(order, options());
    for (const kind of ['redeemed', 'partially-redeemed', 'activated'] as const) {
      const delivery = fake.webhook(kind, tangoExternalRefId(order.incentiveId));
      expect(read(delivery)).toEqual({ eventId: delivery.eventId, report: { incentiveId: order.incentiveId, kind: 'claimed', reference } });
    }
  });

  it('reads a failed async order as a failure; other events are acknowledged with no report', async () => {
    const order = anOrder();
    await tango.order(order, options());
    const ref = tangoExternalRefId(order.incentiveId);
    expect(read(fake.webhook('async-order-failed', ref)).report).toMatchObject({ incentiveId: order.incentiveId, kind: 'failed', reason: 'Tango reports the order FAILED: the reward was not delivered' });
    for (const kind of ['frozen', 'cancelled', 'async-order-successful', 'item-availability'] as const) {
      const delivery = fake.webhook(kind, ref);
      expect(read(delivery)).toEqual({ eventId: delivery.eventId, report: null });
    }
    // An externalRefID that is not one of this service's incentives reports nothing.
    expect(read(fake.webhook('redeemed', 'someoneElsesOrder1')).report).toBeNull();
  });

  it('refuses a forged signature, a tampered body, a missing signature and a workspace with no secret', () => {
    const ref = tangoExternalRefId(newId(idPrefixes.incentive));
    expect(() => read(fake.webhook('redeemed', ref, { forge: true }))).toThrow(new ProviderWebhookRejected('The Tango webhook signature does not match'));
    const genuine = fake.webhook('redeemed', ref);
    const tampered = { headers: genuine.headers, rawBody: Buffer.from(genuine.rawBody.toString().replace('FULL_REDEMPTION', 'PARTIAL_REDEMPTION')) };
    expect(() => read(tampered)).toThrow(ProviderWebhookRejected);
    const { 'x-signed-payload': _signature, ...unsigned } = genuine.headers;
    expect(() => read({ headers: unsigned, rawBody: genuine.rawBody })).toThrow(/no x-signed-payload header/);
    expect(() => read({ headers: { ...genuine.headers, 'x-signed-payload': 'not base64 at all!' }, rawBody: genuine.rawBody })).toThrow(ProviderWebhookRejected);
    expect(() => read(genuine, new Date(), '')).toThrow(/No Tango webhook secret/);
    expect(() => read(genuine)).not.toThrow();
  });

  it('a replayed delivery keeps its eventId (the service de-duplicates it); a stale or future one is refused', () => {
    const ref = tangoExternalRefId(newId(idPrefixes.incentive));
    const first = fake.webhook('redeemed', ref);
    const replay = fake.webhook('redeemed', ref, { replayOf: first.eventId });
    expect(read(replay).eventId).toBe(read(first).eventId);
    expect(fake.webhook('redeemed', ref).eventId).not.toBe(first.eventId);

    const now = new Date();
    const stale = fake.webhook('redeemed', ref, { occurredAt: new Date(now.getTime() - TANGO_WEBHOOK_TOLERANCE_MS - 1000) });
    expect(() => read(stale, now)).toThrow(/is stale/);
    const justInside = fake.webhook('redeemed', ref, { occurredAt: new Date(now.getTime() - TANGO_WEBHOOK_TOLERANCE_MS + 60_000) });
    expect(read(justInside, now).eventId).toBe(justInside.eventId);
    const future = fake.webhook('redeemed', ref, { occurredAt: new Date(now.getTime() + 60 * 60_000) });
    expect(() => read(future, now)).toThrow(/in the future/);
    // A replay of a stale delivery is as stale as the original.
    expect(() => read(fake.webhook('redeemed', ref, { replayOf: stale.eventId }), now)).toThrow(/is stale/);
  });

  it('the fake delivers the exact signed bytes to a URL', async () => {
    const received: { headers: http.IncomingHttpHeaders; body: Buffer }[] = [];
    const receiver = http.createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        received.push({ headers: request.headers, body: Buffer.concat(chunks) });
        response.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      const order = anOrder();
      await tango.order(order, options());
      const delivery = fake.webhook('redeemed', tangoExternalRefId(order.incentiveId));
      expect(await fake.deliver(`http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhooks/tango`, delivery)).toBe(200);
      const [got] = received;
      expect(got!.body.equals(delivery.rawBody)).toBe(true);
      expect(tango.readWebhook({ headers: got!.headers, rawBody: got!.body, secret: fake.webhookSecret, now: new Date() }).report).toMatchObject({ kind: 'claimed', incentiveId: order.incentiveId });
    } finally {
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
    }
  });
});

describe('Tango catalog items per currency', () => {
  it('may be named for exactly the currencies the service pays in', () => {
    expect([...TANGO_ITEM_CURRENCIES].sort()).toEqual([...supportedCurrencies].sort());
  });
});
