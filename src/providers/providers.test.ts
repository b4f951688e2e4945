import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../config.js';
import { IncentiveProviders, ProviderRefusal, type ProviderOrder, SandboxProvider } from './index.js';
import { sandboxReference } from './sandbox.js';

const order: ProviderOrder = {
  workspaceId: 'wsp_1',
  incentiveId: 'inc_1',
  type: 'MONEY_OR_GIFT_CARD',
  amountCents: 500,
  currency: 'USD',
  recipientEmail: 'grace@example.org',
  recipientName: 'Grace Hopper',
};
const signal = new AbortController().signal;

describe('the sandbox provider', () => {
  it('is idempotent by incentive and deterministic: the same order twice is one order, with the same reference everywhere', async () => {
    const sandbox = new SandboxProvider();
    const first = await sandbox.order(order, { signal });
    const second = await sandbox.order({ ...order, amountCents: 999 }, { signal });
    expect(second).toEqual(first);
    expect(first.reference).toBe(sandboxReference('wsp_1', 'inc_1'));
    expect(sandbox.orders.size).toBe(1);
    expect(sandbox.orderOf('wsp_1', 'inc_1')).toMatchObject({ order: { amountCents: 500 }, voided: false });
    expect(await new SandboxProvider().order(order, { signal })).toEqual(first);
    expect((await sandbox.order({ ...order, incentiveId: 'inc_2' }, { signal })).reference).not.toBe(first.reference);
  });

  it('keeps no state its answers depend on: an order another process placed can be resent and voided', async () => {
    // As after a restart, or on a second instance: this process never saw the order.
    const elsewhere = new SandboxProvider();
    const target = { workspaceId: 'wsp_1', incentiveId: 'inc_1', reference: sandboxReference('wsp_1', 'inc_1') };
    await elsewhere.resend(target, { signal });
    await elsewhere.resend(target, { signal });
    await elsewhere.void(target, { signal });
    await elsewhere.void(target, { signal });
    expect(elsewhere.orderOf('wsp_1', 'inc_1')).toEqual({ workspaceId: 'wsp_1', incentiveId: 'inc_1', reference: target.reference, voided: true, resends: 2 });
    // Ordering it again (a retry) is still the same order.
    expect(await elsewhere.order(order, { signal })).toEqual({ reference: target.reference });
  });

  it('fails as injected, in order, then works again', async () => {
    const sandbox = new SandboxProvider();
    sandbox.injectFault('order', 'refuse');
    sandbox.injectFault('order', 'lose-request');
    sandbox.injectFault('order', 'lose-response');
    await expect(sandbox.order(order, { signal })).rejects.toBeInstanceOf(ProviderRefusal);
    await expect(sandbox.order(order, { signal })).rejects.toThrow(/lost this order request/);
    expect(sandbox.orders.size).toBe(0);
    await expect(sandbox.order(order, { signal })).rejects.toThrow(/lost the answer/);
    expect(sandbox.orders.size).toBe(1);
    await sandbox.order(order, { signal });
    expect(sandbox.calls.order).toBe(4);
  });
});

describe('IncentiveProviders.call', () => {
  it('classifies outcomes: done, refused (ProviderRefusal), unknown (any other error, or no answer in time)', async () => {
    const providers = new IncentiveProviders('sandbox', { timeoutMs: 50 });
    const sandbox = providers.sandbox;
    expect(await providers.call((options) => sandbox.order(order, options))).toEqual({ kind: 'done', value: { reference: expect.stringMatching(/^sbx_/) } });
    sandbox.injectFault('resend', 'refuse');
    expect(await providers.call((options) => sandbox.resend({ ...order, reference: null }, options))).toMatchObject({ kind: 'refused' });
    sandbox.injectFault('void', 'hang');
    expect(await providers.call((options) => sandbox.void({ ...order, reference: null }, options))).toMatchObject({ kind: 'unknown' });
    // An adapter that ignores its signal is abandoned at the timeout all the same.
    const ignoring = await providers.call(() => new Promise<never>(() => {}));
    expect(ignoring).toEqual({ kind: 'unknown', reason: 'The provider did not answer within 50 ms' });
  });

  it('refuses a provider that is not built in', () => {
    expect(() => new IncentiveProviders().get('acme')).toThrow(/not built into this service/);
  });
});

describe('INCENTIVE_PROVIDER', () => {
  it('defaults to sandbox and accepts only built-in providers', () => {
    expect(loadConfig({}).incentiveProvider).toBe('sandbox');
    expect(loadConfig({ INCENTIVE_PROVIDER: 'sandbox' }).incentiveProvider).toBe('sandbox');
    expect(() => loadConfig({ INCENTIVE_PROVIDER: 'acme' })).toThrow(ConfigError);
    expect(() => loadConfig({ INCENTIVE_PROVIDER: 'acme' })).toThrow('Invalid configuration INCENTIVE_PROVIDER: expected one of sandbox');
  });
});
