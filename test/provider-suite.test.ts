import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { call } from './harness.js';
import { type OrderFault, providerSuite, type SuiteSubject } from './provider-suite.js';
import { TremendousFake, type TremendousFault } from './fakes/tremendous-fake.js';
import { TangoFake, type TangoFakeFault } from './fakes/tango-fake.js';
import { tangoExternalRefId } from '../src/providers/tango/refs.js';

/**
 * The provider suite (test/provider-suite.ts) against every adapter: the sandbox (in process) and
 * Tremendous and Tango Card through their fakes (test/fakes/). Another provider is one entry here.
 */
const sandbox: SuiteSubject = {
  name: 'sandbox',
  async start() {
    const faults: Record<OrderFault, 'hang' | 'lose-response' | 'lose-request' | 'refuse'> = { hang: 'hang', 'fail-after': 'lose-response', 'fail-before': 'lose-request', refuse: 'refuse' };
    return {
      config: {},
      configure: async () => {},
      ordersOf: (service, tenant, incentiveId) => (service.deps.providers.sandbox.orderOf(tenant.workspaceId, incentiveId)?.order ? 1 : 0),
      resendsOf: (service, tenant, incentiveId) => service.deps.providers.sandbox.orderOf(tenant.workspaceId, incentiveId)?.resends ?? 0,
      canceled: (service, tenant, incentiveId) => service.deps.providers.sandbox.orderOf(tenant.workspaceId, incentiveId)?.voided ?? false,
      injectOrderFault: (service, fault) => service.deps.providers.sandbox.injectFault('order', faults[fault]),
      clearFaults: (service) => service.deps.providers.sandbox.clearFaults(),
      close: async () => {},
    };
  },
};

const tremendous: SuiteSubject = {
  name: 'tremendous (fake)',
  async start() {
    const fake = await TremendousFake.start();
    const faults: Record<OrderFault, TremendousFault> = { hang: 'hang', 'fail-after': 'fail-after', 'fail-before': 'fail-before', refuse: 'refuse' };
    const webhookKeys = new Map<string, string>();
    const rewardOf = (incentiveId: string) => fake.orderOf(incentiveId)!.rewards[0]!.id;
    return {
      config: { providerApiUrls: { tremendous: fake.url } },
      async configure(service, tenant, webhookUrl) {
        const privateKey = randomBytes(24).toString('hex');
        webhookKeys.set(tenant.workspaceId, privateKey);
        const put = await call(service, 'PUT', '/incentive-provider', {
          token: tenant.token,
          body: { provider: 'tremendous', environment: 'SANDBOX', credentials: { apiKey: fake.apiKey, campaignId: 'CAMPAIGN1', webhookSecret: privateKey } },
        });
        expect(put.statusCode, put.body).toBe(200);
        // Tremendous keeps one webhook per organization: the fake sends to the workspace last configured.
        fake.webhook = { url: webhookUrl('tremendous'), privateKey };
      },
      ordersOf: (_service, _tenant, incentiveId) => fake.createdPerExternalId.get(incentiveId) ?? 0,
      resendsOf: (_service, _tenant, incentiveId) => fake.resends.get(rewardOf(incentiveId)) ?? 0,
      canceled: (_service, _tenant, incentiveId) => fake.orderOf(incentiveId)?.status === 'CANCELED',
      injectOrderFault: (_service, fault) => fake.injectFault('order', faults[fault]),
      clearFaults: () => fake.clearFaults(),
      webhooks: {
        deliver: (incentiveId, outcome, options) => fake.deliver(incentiveId, outcome, options),
        forge: async (incentiveId) => (await fake.sendWebhook(fake.webhookBody('REWARDS.DELIVERY.SUCCEEDED', rewardOf(incentiveId)), { signature: TremendousFake.sign('{}', 'not-the-key') })).status,
        replay: async (delivered) => (await fake.sendWebhook(delivered.body)).status,
      },
      close: () => fake.close(),
    };
  },
};

const tango: SuiteSubject = {
  name: 'tango (fake)',
  async start() {
    const fake = await TangoFake.start();
    const faults: Record<OrderFault, TangoFakeFault> = { hang: 'hang', 'fail-after': 'error-after-work', 'fail-before': 'error-before-work', refuse: 'refuse' };
    let webhookTarget = '';
    // Tango's events carry the time they occurred, which the adapter checks against the service's clock (the suite sets it).
    let serviceNow = () => new Date();
    const refOf = (incentiveId: string) => tangoExternalRefId(incentiveId);
    return {
      config: { providerApiUrls: { tango: fake.url } },
      async configure(service, tenant, webhookUrl) {
        const put = await call(service, 'PUT', '/incentive-provider', { token: tenant.token, body: { provider: 'tango', environment: 'SANDBOX', credentials: fake.credentials() } });
        expect(put.statusCode, put.body).toBe(200);
        webhookTarget = webhookUrl('tango');
        serviceNow = () => service.deps.clock.now();
      },
      ordersOf: (_service, _tenant, incentiveId) => fake.createdPerExternalRefId.get(refOf(incentiveId)) ?? 0,
      resendsOf: (_service, _tenant, incentiveId) => fake.orders.get(refOf(incentiveId))?.resends.length ?? 0,
      canceled: (_service, _tenant, incentiveId) => fake.orders.get(refOf(incentiveId))?.lineItems[0]?.status === 'CANCELLED',
      injectOrderFault: (_service, fault) => fake.injectFault('order', faults[fault]),
      clearFaults: () => fake.clearFaults(),
      webhooks: {
        async deliver(incentiveId, outcome, options) {
          const ref = refOf(incentiveId);
          // What Tango holds afterwards, which its order lookup (the reconciliation) reads.
          fake.setLineItem(ref, outcome === 'SUCCEEDED' ? { rewardStatus: 'FULL_REDEMPTION' } : { status: 'FAILED' });
          if (outcome === 'FAILED') fake.orderOf(ref).status = 'FAILED';
          if (options?.notify === false) return undefined;
          const delivery = fake.webhook(outcome === 'SUCCEEDED' ? 'redeemed' : 'async-order-failed', ref, { occurredAt: serviceNow() });
          return { status: await fake.deliver(webhookTarget, delivery), body: delivery.eventId };
        },
        forge: async (incentiveId) => fake.deliver(webhookTarget, fake.webhook('redeemed', refOf(incentiveId), { forge: true, occurredAt: serviceNow() })),
        replay: async (delivered) => fake.deliver(webhookTarget, fake.webhook('redeemed', '', { replayOf: delivered.body })),
      },
      close: () => fake.close(),
    };
  },
};

providerSuite([sandbox, tremendous, tango]);
