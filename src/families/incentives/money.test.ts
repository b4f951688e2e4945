import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type Tenant, testDatabaseUrl, type TestService } from '../../../test/harness.js';
import { type Database, openDatabase } from '../../db/database.js';
import { createBudget, createParticipant, createStudy, postIncentive, sendIncentive, setClock } from '../../../test/incentives-factory.js';
import { describeSecurity } from '../../../test/security.js';
import { IncentiveProviders } from '../../providers/index.js';
import { currencyExponent, maximumAmount } from './currencies.js';

/**
 * Issue 35, items 3 to 5: currencies (minor units, per-currency maximums), budgets (never
 * overspent, given back once), approvals (a second person, never the sender; one approval, one
 * order under a race) and the append-only ledger (kept, without personal values, after a purge).
 */
let service: TestService;
beforeAll(async () => {
  service = await startTestService({}, { providers: new IncentiveProviders('sandbox', { timeoutMs: 300 }) });
  await setClock(service, new Date('2026-12-01T00:00:00.000Z'));
});
afterAll(async () => service.stop());

const sandbox = () => service.deps.providers.sandbox;
const ordersOf = (tenant: Tenant) => [...sandbox().orders.values()].filter((order) => order.workspaceId === tenant.workspaceId);
const budget = async (tenant: Tenant, budgetId: string) => (await call(service, 'GET', `/incentive-budgets/${budgetId}`, { token: tenant.token })).json();
const ledger = async (tenant: Tenant, incentiveId: string) => (await call(service, 'GET', `/incentives/${incentiveId}/ledger`, { token: tenant.token })).json().results;
const setThresholds = async (tenant: Tenant, thresholds: { currency: string; amountCents: number }[]) => {
  const response = await call(service, 'PUT', '/incentive-approval-settings', { token: tenant.token, body: { thresholds } });
  expect(response.statusCode, response.body).toBe(200);
};

describe('currencies', () => {
  it('reads ISO 4217 exponents: JPY 0, BHD 3, USD/EUR/GBP/CAD/AUD 2; maximums in the minor unit', () => {
    expect(['USD', 'EUR', 'GBP', 'CAD', 'AUD', 'JPY', 'BHD'].map(currencyExponent)).toEqual([2, 2, 2, 2, 2, 0, 3]);
    expect(maximumAmount('USD')).toBe(1_000_000);
    expect(maximumAmount('JPY')).toBe(1_500_000);
    expect(maximumAmount('BHD')).toBe(3_500_000);
  });

  it('sends in EUR, JPY and BHD at their largest amounts, passing the currency to the provider; one more is a 400 with the range', async () => {
    const tenant = await createTenant(service);
    const { participantId } = await createParticipant(service, tenant);
    for (const currency of ['EUR', 'JPY', 'BHD']) {
      const largest = maximumAmount(currency);
      const sent = await postIncentive(service, tenant, { participantId, type: 'MONEY_OR_GIFT_CARD', amountCents: largest, currency });
      expect(sent.statusCode, sent.body).toBe(201);
      expect(sent.json()).toMatchObject({ currency, amountCents: largest, status: 'UNCLAIMED' });
      const over = await postIncentive(service, tenant, { participantId, type: 'MONEY_OR_GIFT_CARD', amountCents: largest + 1, currency });
      expect(over.statusCode).toBe(400);
      expect(over.json().errors[0]).toMatchObject({ path: ['amountCents'], message: expect.stringContaining(`between 1 and ${largest} for ${currency}`) });
    }
    expect(ordersOf(tenant).map((order) => [order.order?.currency, order.order?.amountCents])).toEqual([
      ['EUR', 1_000_000],
      ['JPY', 1_500_000],
      ['BHD', 3_500_000],
    ]);
  });

  it('searches AMOUNT within a currency (CURRENCY), and sums of money sent add USD only', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(service, tenant);
    const { participantId } = await createParticipant(service, tenant, { studyId });
    await sendIncentive(service, tenant, participantId, { type: 'MONEY_OR_GIFT_CARD', amountCents: 5000, currency: 'JPY' });
    await sendIncentive(service, tenant, participantId, { type: 'MONEY_OR_GIFT_CARD', amountCents: 2500 });
    const search = (filters: object[]) =>
      call(service, 'POST', '/incentives/search', { token: tenant.token, body: { studyId, filter: { filters } } });
    const amount = { property: { propertyGroup: 'INCENTIVE', propertyName: 'AMOUNT' }, comparison: 'BETWEEN', value: [3001, 1_000_000] };
    const currency = (code: string) => ({ property: { propertyGroup: 'INCENTIVE', propertyName: 'CURRENCY' }, comparison: 'IS_ANY_OF', value: [code] });
    const jpy = await search([amount, currency('JPY')]);
    expect(jpy.statusCode, jpy.body).toBe(200);
    expect(jpy.json().results.map((row: { currency: string }) => row.currency)).toEqual(['JPY']);
    const usd = await search([amount, currency('USD')]);
    expect(usd.json().total).toBe(0);
    const paid = await call(service, 'POST', `/studies/${studyId}/participants/search`, {
      token: tenant.token,
      body: { filter: { filters: [{ property: { propertyGroup: 'PARTICIPANT', propertyName: 'INCENTIVE_PAID' }, comparison: 'EQUALS', value: 2500 }] } },
    });
    expect(paid.statusCode, paid.body).toBe(200);
    expect(paid.json().total).toBe(1);
  });
});

describe('budgets', () => {
  it('creates, lists (keyset), reads, renames, moves the limit of and archives a budget', async () => {
    const tenant = await createTenant(service);
    const created = await call(service, 'POST', '/incentive-budgets', { token: tenant.token, body: { name: 'Research', currency: 'EUR', limitCents: 10_000 } });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json()).toMatchObject({ name: 'Research', currency: 'EUR', limitCents: 10_000, spentCents: 0, remainingCents: 10_000, archived: false });
    const second = await createBudget(service, tenant, { name: 'Second' });
    const first = await call(service, 'GET', '/incentive-budgets', { token: tenant.token, query: { size: '1' } });
    expect(first.json()).toMatchObject({ total: 2, results: [{ budgetId: created.json().budgetId }], pageInfo: { hasNextPage: true } });
    const next = await call(service, 'GET', '/incentive-budgets', { token: tenant.token, query: { size: '1', startCursor: first.json().pageInfo.endCursor } });
    expect(next.json().results.map((row: { budgetId: string }) => row.budgetId)).toEqual([second.budgetId]);
    const patched = await call(service, 'PATCH', `/incentive-budgets/${second.budgetId}`, { token: tenant.token, body: { name: 'Renamed', limitCents: 50 } });
    expect(patched.json()).toMatchObject({ name: 'Renamed', limitCents: 50, currency: 'USD' });
    const archived = await call(service, 'POST', `/incentive-budgets/${second.budgetId}/archive`, { token: tenant.token });
    expect(archived.json()).toMatchObject({ archived: true });
    expect((await call(service, 'GET', '/incentive-budgets', { token: tenant.token })).json().total).toBe(1);
    expect((await call(service, 'GET', '/incentive-budgets', { token: tenant.token, query: { includeArchived: 'true' } })).json().total).toBe(2);
  });

  it('lets only who may approve make and change budgets: a RESEARCHER spends from one, and cannot raise its limit', async () => {
    const tenant = await createTenant(service);
    const pot = await createBudget(service, tenant, { name: 'Pot', limitCents: 1_000 });
    const { token: researcher } = await tenant.tokenFor('RESEARCHER');
    for (const [method, url, body] of [
      ['POST', '/incentive-budgets', { name: 'Mine', currency: 'USD', limitCents: 1_000_000 }],
      ['PATCH', `/incentive-budgets/${pot.budgetId}`, { limitCents: 1_000_000 }],
      ['POST', `/incentive-budgets/${pot.budgetId}/archive`, undefined],
    ] as const) {
      const refused = await call(service, method, url, { token: researcher, ...(body ? { body } : {}) });
      expect(refused.statusCode, `${method} ${url}`).toBe(403);
    }
    expect((await call(service, 'GET', `/incentive-budgets/${pot.budgetId}`, { token: researcher })).json()).toMatchObject({ limitCents: 1_000, archived: false });
    const { token: ops } = await tenant.tokenFor('OPS_MANAGER');
    expect((await call(service, 'PATCH', `/incentive-budgets/${pot.budgetId}`, { token: ops, body: { limitCents: 2_000 } })).statusCode).toBe(200);
  });

  it('refuses bad input naming the field: unsupported currency, limit below spent, empty patch, unknown budget', async () => {
    const tenant = await createTenant(service);
    const bad = await call(service, 'POST', '/incentive-budgets', { token: tenant.token, body: { name: 'X', currency: 'XTS', limitCents: 1 } });
    expect([bad.statusCode, bad.json().errors[0].path]).toEqual([400, ['currency']]);
    const negative = await call(service, 'POST', '/incentive-budgets', { token: tenant.token, body: { name: 'X', currency: 'USD', limitCents: -1 } });
    expect([negative.statusCode, negative.json().errors[0].path]).toEqual([400, ['limitCents']]);
    const { budgetId } = await createBudget(service, tenant, { limitCents: 1000 });
    const { participantId } = await createParticipant(service, tenant);
    await sendIncentive(service, tenant, participantId, { type: 'RECRUITMENT_FEE', amountCents: 600, budgetId });
    const below = await call(service, 'PATCH', `/incentive-budgets/${budgetId}`, { token: tenant.token, body: { limitCents: 599 } });
    expect([below.statusCode, below.json().errors[0].path]).toEqual([409, ['limitCents']]);
    const empty = await call(service, 'PATCH', `/incentive-budgets/${budgetId}`, { token: tenant.token, body: {} });
    expect(empty.statusCode).toBe(400);
    for (const [method, url] of [['GET', '/incentive-budgets/bgt_nope'], ['PATCH', '/incentive-budgets/bgt_nope'], ['POST', '/incentive-budgets/bgt_nope/archive']] as const) {
      const response = await call(service, method, url, { token: tenant.token, ...(method === 'PATCH' ? { body: { name: 'x' } } : {}) });
      expect(response.statusCode, url).toBe(404);
    }
  });

  it("checks an incentive against its budget: currency (given or the budget's), room left, archived, unknown", async () => {
    const tenant = await createTenant(service);
    const { participantId } = await createParticipant(service, tenant);
    const { budgetId } = await createBudget(service, tenant, { currency: 'GBP', limitCents: 1000 });
    const inherits = await sendIncentive(service, tenant, participantId, { type: 'MONEY_OR_GIFT_CARD', amountCents: 400, budgetId });
    expect(inherits).toMatchObject({ currency: 'GBP', budgetId });
    const mismatch = await postIncentive(service, tenant, { participantId, type: 'MONEY_OR_GIFT_CARD', amountCents: 100, budgetId, currency: 'USD' });
    expect([mismatch.statusCode, mismatch.json().errors[0].path]).toEqual([400, ['currency']]);
    const tooMuch = await postIncentive(service, tenant, { participantId, type: 'MONEY_OR_GIFT_CARD', amountCents: 601, budgetId });
    expect([tooMuch.statusCode, tooMuch.json().errors[0].path]).toEqual([409, ['budgetId']]);
    expect(tooMuch.json().errors[0].message).toContain('600 left');
    const unknown = await postIncentive(service, tenant, { participantId, type: 'MONEY_OR_GIFT_CARD', amountCents: 1, budgetId: 'bgt_unknown' });
    expect([unknown.statusCode, unknown.json().errors[0].path]).toEqual([404, ['budgetId']]);
    await call(service, 'POST', `/incentive-budgets/${budgetId}/archive`, { token: tenant.token });
    const archived = await postIncentive(service, tenant, { participantId, type: 'MONEY_OR_GIFT_CARD', amountCents: 1, budgetId });
    expect([archived.statusCode, archived.json().errors[0].path]).toEqual([409, ['budgetId']]);
    expect(await budget(tenant, budgetId)).toMatchObject({ spentCents: 400, remainingCents: 600 });
  });

  it('gives back exactly once: a canceled, a failed and an expired-like end each return their amount once', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(service, tenant);
    const { participantId } = await createParticipant(service, tenant, { studyId });
    const { budgetId } = await createBudget(service, tenant, { limitCents: 1000 });
    const fee = await sendIncentive(service, tenant, participantId, { type: 'RECRUITMENT_FEE', amountCents: 300, budgetId });
    const money = await sendIncentive(service, tenant, participantId, { type: 'MONEY_OR_GIFT_CARD', amountCents: 200, budgetId });
    expect(await budget(tenant, budgetId)).toMatchObject({ spentCents: 500 });
    expect((await call(service, 'POST', `/incentives/${fee.incentiveId}/cancel`, { token: tenant.token })).statusCode).toBe(200);
    expect((await call(service, 'POST', `/incentives/${fee.incentiveId}/cancel`, { token: tenant.token })).statusCode).toBe(409);
    expect(await budget(tenant, budgetId)).toMatchObject({ spentCents: 200 });
    const { recordProviderReport } = await import('./service.js');
    await recordProviderReport(service.deps.db, service.deps.clock, { workspaceId: tenant.workspaceId, incentiveId: money.incentiveId, kind: 'failed', reason: 'bounced' });
    await recordProviderReport(service.deps.db, service.deps.clock, { workspaceId: tenant.workspaceId, incentiveId: money.incentiveId, kind: 'failed', reason: 'bounced' });
    expect(await budget(tenant, budgetId)).toMatchObject({ spentCents: 0, remainingCents: 1000 });
    const kinds = (await ledger(tenant, money.incentiveId)).map((entry: { kind: string; actor: { kind: string } }) => [entry.kind, entry.actor.kind]);
    expect(kinds).toEqual([['SENT', 'USER'], ['ORDER_CONFIRMED', 'USER'], ['PROVIDER_REPORT', 'PROVIDER'], ['PROVIDER_REPORT', 'PROVIDER']]);
  });

  it('is never overspent by simultaneous incentives: spent equals the sum of those that hold it', async () => {
    const tenant = await createTenant(service);
    const { participantId } = await createParticipant(service, tenant);
    const { budgetId } = await createBudget(service, tenant, { limitCents: 1000 });
    const answers = await Promise.all(
      Array.from({ length: 16 }, () => postIncentive(service, tenant, { participantId, type: 'RECRUITMENT_FEE', amountCents: 150, budgetId })),
    );
    const statuses = answers.map((answer) => answer.statusCode).sort();
    expect(statuses.filter((status) => status === 201)).toHaveLength(6);
    expect(statuses.filter((status) => status === 409)).toHaveLength(10);
    const held = await service.deps.db
      .selectFrom('incentives')
      .select((eb) => eb.fn.sum<number>('amount_cents').as('sum'))
      .where('workspace_id', '=', tenant.workspaceId)
      .where('budget_held', '=', true)
      .executeTakeFirstOrThrow();
    expect(Number(held.sum)).toBe(900);
    expect(await budget(tenant, budgetId)).toMatchObject({ spentCents: 900 });
  });
});

describe('approvals', () => {
  async function pending(tenant: Tenant, budgetId?: string) {
    await setThresholds(tenant, [{ currency: 'USD', amountCents: 10_000 }]);
    const { participantId } = await createParticipant(service, tenant);
    const sent = await postIncentive(service, tenant, { participantId, type: 'MONEY_OR_GIFT_CARD', amountCents: 10_001, ...(budgetId ? { budgetId } : {}) });
    expect(sent.statusCode, sent.body).toBe(201);
    return sent.json();
  }

  it('holds an incentive above the threshold unordered (UNCLAIMED, approval PENDING), listed; at the threshold it is ordered', async () => {
    const tenant = await createTenant(service);
    const { budgetId } = await createBudget(service, tenant);
    const incentive = await pending(tenant, budgetId);
    expect(incentive).toMatchObject({ status: 'UNCLAIMED', approval: { state: 'PENDING', decidedByUserId: null } });
    expect(ordersOf(tenant)).toEqual([]);
    expect(await budget(tenant, budgetId)).toMatchObject({ spentCents: 10_001 });
    const list = await call(service, 'GET', '/incentive-approvals', { token: tenant.token });
    expect(list.json()).toMatchObject({ total: 1, results: [{ incentiveId: incentive.incentiveId }] });
    const resend = await call(service, 'POST', `/incentives/${incentive.incentiveId}/resend`, { token: tenant.token });
    expect(resend.statusCode).toBe(409);
    const { participantId } = await createParticipant(service, tenant);
    expect(await sendIncentive(service, tenant, participantId, { type: 'MONEY_OR_GIFT_CARD', amountCents: 10_000 })).toMatchObject({ approval: null });
    expect(ordersOf(tenant)).toHaveLength(1);
  });

  it('is approved by a second person with the right, then ordered; never by its sender; not by a role without the right', async () => {
    const tenant = await createTenant(service);
    const incentive = await pending(tenant);
    const own = await call(service, 'POST', `/incentives/${incentive.incentiveId}/approve`, { token: tenant.token });
    expect([own.statusCode, own.json().errors[0].path]).toEqual([409, ['incentiveId']]);
    expect(own.json().errors[0].message).toContain('sender');
    const researcher = await tenant.tokenFor('RESEARCHER');
    expect((await call(service, 'POST', `/incentives/${incentive.incentiveId}/approve`, { token: researcher.token })).statusCode).toBe(403);
    const ops = await tenant.tokenFor('OPS_MANAGER');
    const approved = await call(service, 'POST', `/incentives/${incentive.incentiveId}/approve`, { token: ops.token });
    expect(approved.statusCode, approved.body).toBe(200);
    expect(approved.json()).toMatchObject({ status: 'UNCLAIMED', approval: { state: 'APPROVED', decidedByUserId: ops.userId } });
    expect(ordersOf(tenant)).toHaveLength(1);
    const again = await call(service, 'POST', `/incentives/${incentive.incentiveId}/approve`, { token: ops.token });
    expect([again.statusCode, again.json().errors[0].message]).toEqual([409, 'Incentive was already approved']);
    const entries = await ledger(tenant, incentive.incentiveId);
    expect(entries.map((entry: { kind: string }) => entry.kind)).toEqual(['APPROVAL_REQUESTED', 'APPROVED', 'ORDER_CONFIRMED']);
    expect(entries[1].actor).toMatchObject({ kind: 'USER', id: ops.userId, tokenId: expect.any(String) });
    const events = await service.deps.db.selectFrom('webhook_messages').select(['event_type', 'payload']).where('workspace_id', '=', tenant.workspaceId).where('event_type', '=', 'incentive.approval_changed').execute();
    expect(events.map((event) => (typeof event.payload === 'string' ? JSON.parse(event.payload) : event.payload).data.to)).toEqual(['PENDING', 'APPROVED']);
  });

  it('is refused: CANCELED, never ordered, its budget given back; cancel before a decision withdraws it', async () => {
    const tenant = await createTenant(service);
    const { budgetId } = await createBudget(service, tenant);
    const incentive = await pending(tenant, budgetId);
    const ops = await tenant.tokenFor('OPS_MANAGER');
    const refused = await call(service, 'POST', `/incentives/${incentive.incentiveId}/refuse`, { token: ops.token, body: { reason: 'Too much' } });
    expect(refused.statusCode, refused.body).toBe(200);
    expect(refused.json()).toMatchObject({ status: 'CANCELED', approval: { state: 'REFUSED', reason: 'Too much', decidedByUserId: ops.userId } });
    expect(await budget(tenant, budgetId)).toMatchObject({ spentCents: 0 });
    const withdrawn = await pending(tenant, budgetId);
    expect((await call(service, 'POST', `/incentives/${withdrawn.incentiveId}/cancel`, { token: tenant.token })).statusCode).toBe(200);
    expect((await call(service, 'GET', `/incentives/${withdrawn.incentiveId}`, { token: tenant.token })).json()).toMatchObject({ status: 'CANCELED', approval: { state: 'WITHDRAWN' } });
    expect(await budget(tenant, budgetId)).toMatchObject({ spentCents: 0 });
    expect(ordersOf(tenant)).toEqual([]);
    const notWaiting = await call(service, 'POST', `/incentives/${withdrawn.incentiveId}/refuse`, { token: ops.token, body: {} });
    expect(notWaiting.statusCode).toBe(409);
  });

  it('gives one approval and one order when two approvers act at once', async () => {
    const tenant = await createTenant(service);
    const incentive = await pending(tenant);
    const [first, second] = await Promise.all([tenant.tokenFor('OPS_MANAGER'), tenant.tokenFor('SUPER_ADMIN')]);
    const answers = await Promise.all([first, second].map((approver) => call(service, 'POST', `/incentives/${incentive.incentiveId}/approve`, { token: approver.token })));
    expect(answers.map((answer) => answer.statusCode).sort()).toEqual([200, 409]);
    expect(ordersOf(tenant)).toHaveLength(1);
    const kinds = (await ledger(tenant, incentive.incentiveId)).map((entry: { kind: string }) => entry.kind);
    expect(kinds.filter((kind: string) => kind === 'APPROVED')).toHaveLength(1);
  });

  it('refuses thresholds naming an unsupported currency or one twice (400 with the path)', async () => {
    const tenant = await createTenant(service);
    const bad = await call(service, 'PUT', '/incentive-approval-settings', { token: tenant.token, body: { thresholds: [{ currency: 'USD', amountCents: 1 }, { currency: 'USD', amountCents: 2 }] } });
    expect([bad.statusCode, bad.json().errors[0].path]).toEqual([400, ['thresholds', '1', 'currency']]);
    const researcher = await tenant.tokenFor('RESEARCHER');
    expect((await call(service, 'PUT', '/incentive-approval-settings', { token: researcher.token, body: { thresholds: [] } })).statusCode).toBe(403);
    expect((await call(service, 'GET', '/incentive-approval-settings', { token: tenant.token })).json()).toEqual({ thresholds: [] });
  });
});

describe('the ledger', () => {
  it('lists the workspace ledger keyset-paged and by time; keeps entries after the person is deleted, without their values; refuses changes', async () => {
    const tenant = await createTenant(service);
    const { participantId, personId, email } = await createParticipant(service, tenant);
    const incentive = await sendIncentive(service, tenant, participantId, { type: 'MONEY_OR_GIFT_CARD', amountCents: 700, currency: 'CAD' });
    await call(service, 'POST', `/incentives/${incentive.incentiveId}/resend`, { token: tenant.token });
    const page = await call(service, 'GET', '/incentive-ledger', { token: tenant.token, query: { size: '2' } });
    expect(page.statusCode, page.body).toBe(200);
    expect(page.json()).toMatchObject({ total: 3, pageInfo: { hasNextPage: true } });
    expect(page.json().results[0]).toMatchObject({ kind: 'SENT', amountCents: 700, currency: 'CAD', recipientEmail: email, personId });
    const rest = await call(service, 'GET', '/incentive-ledger', { token: tenant.token, query: { size: '2', startCursor: page.json().pageInfo.endCursor } });
    expect(rest.json().results.map((entry: { kind: string }) => entry.kind)).toEqual(['RESENT']);
    const later = await call(service, 'GET', '/incentive-ledger', { token: tenant.token, query: { since: '2030-01-01T00:00:00.000Z' } });
    expect(later.json().total).toBe(0);

    expect((await call(service, 'DELETE', `/people/${personId}`, { token: tenant.token })).statusCode).toBeLessThan(300);
    const after = await call(service, 'GET', `/incentives/${incentive.incentiveId}/ledger`, { token: tenant.token });
    expect(after.json().results.map((entry: { kind: string; recipientEmail: string | null; personId: string }) => [entry.kind, entry.recipientEmail, entry.personId])).toEqual([
      ['SENT', null, personId],
      ['ORDER_CONFIRMED', null, personId],
      ['RESENT', null, personId],
    ]);
    await expect(service.deps.db.updateTable('incentive_ledger').set({ amount_minor: 1 }).where('workspace_id', '=', tenant.workspaceId).execute()).rejects.toThrow(/append-only/);
    await expect(service.deps.db.deleteFrom('incentive_ledger').where('workspace_id', '=', tenant.workspaceId).execute()).rejects.toThrow(/append-only/);
    expect((await call(service, 'GET', '/incentives/inc_nope/ledger', { token: tenant.token })).statusCode).toBe(404);
  });
});

const withIncentive = async (tenant: Tenant) => {
  const { participantId } = await createParticipant(service, tenant);
  return sendIncentive(service, tenant, participantId, { type: 'CUSTOM', amountCents: 100 });
};
const waiting = async (tenant: Tenant) => {
  await setThresholds(tenant, [{ currency: 'USD', amountCents: 1 }]);
  const { participantId } = await createParticipant(service, tenant);
  return sendIncentive(service, tenant, participantId, { type: 'MONEY_OR_GIFT_CARD', amountCents: 500 });
};
describeSecurity('POST /incentive-budgets', () => service, { method: 'POST', right: 'incentives:approve', addressesResource: false, request: async () => ({ url: '/incentive-budgets', body: { name: 'B', currency: 'USD', limitCents: 1 } }) });
describeSecurity('GET /incentive-budgets', () => service, { method: 'GET', right: 'incentives:read', addressesResource: false, request: async () => ({ url: '/incentive-budgets' }) });
describeSecurity('GET /incentive-budgets/{budgetId}', () => service, { method: 'GET', right: 'incentives:read', addressesResource: true, request: async (tenant) => ({ url: `/incentive-budgets/${(await createBudget(service, tenant)).budgetId}` }) });
describeSecurity('PATCH /incentive-budgets/{budgetId}', () => service, { method: 'PATCH', right: 'incentives:approve', addressesResource: true, request: async (tenant) => ({ url: `/incentive-budgets/${(await createBudget(service, tenant)).budgetId}`, body: { name: 'N' } }) });
describeSecurity('POST /incentive-budgets/{budgetId}/archive', () => service, { method: 'POST', right: 'incentives:approve', addressesResource: true, request: async (tenant) => ({ url: `/incentive-budgets/${(await createBudget(service, tenant)).budgetId}/archive` }) });
describeSecurity('GET /incentive-approval-settings', () => service, { method: 'GET', right: 'incentives:read', addressesResource: false, request: async () => ({ url: '/incentive-approval-settings' }) });
describeSecurity('PUT /incentive-approval-settings', () => service, { method: 'PUT', right: 'incentives:approve', addressesResource: false, request: async () => ({ url: '/incentive-approval-settings', body: { thresholds: [] } }) });
describeSecurity('GET /incentive-approvals', () => service, { method: 'GET', right: 'incentives:read', addressesResource: false, request: async () => ({ url: '/incentive-approvals' }) });
describeSecurity('POST /incentives/{incentiveId}/approve', () => service, { method: 'POST', right: 'incentives:approve', addressesResource: true, request: async (tenant) => ({ url: `/incentives/${(await waiting(tenant)).incentiveId}/approve` }) });
describeSecurity('POST /incentives/{incentiveId}/refuse', () => service, { method: 'POST', right: 'incentives:approve', addressesResource: true, request: async (tenant) => ({ url: `/incentives/${(await waiting(tenant)).incentiveId}/refuse`, body: {} }) });
describeSecurity('GET /incentives/{incentiveId}/ledger', () => service, { method: 'GET', right: 'incentives:read', addressesResource: true, request: async (tenant) => ({ url: `/incentives/${(await withIncentive(tenant)).incentiveId}/ledger` }) });
describeSecurity('GET /incentive-ledger', () => service, { method: 'GET', right: 'incentives:read', addressesResource: false, request: async () => ({ url: '/incentive-ledger' }) });

describe.skipIf(!testDatabaseUrl)('across two instances (PostgreSQL)', () => {
  let poolA: Database;
  let poolB: Database;
  let a: TestService;
  let b: TestService;
  beforeAll(async () => {
    poolA = await openDatabase({ databaseUrl: testDatabaseUrl!, poolSize: 8, applicationName: 'money-instance-a' });
    poolB = await openDatabase({ databaseUrl: testDatabaseUrl!, poolSize: 8, applicationName: 'money-instance-b' });
    a = await startTestService({}, { database: poolA, providers: new IncentiveProviders('sandbox', { timeoutMs: 300 }) });
    b = await startTestService({}, { database: poolB, providers: new IncentiveProviders('sandbox', { timeoutMs: 300 }) });
  });
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await poolA?.close();
    await poolB?.close();
  });

  it('never overspends a budget with 30 incentives alternating between the instances', async () => {
    const tenant = await createTenant(a);
    const { participantId } = await createParticipant(a, tenant);
    const { budgetId } = await createBudget(a, tenant, { limitCents: 1000 });
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, index) =>
        postIncentive(index % 2 === 0 ? a : b, tenant, { participantId, type: 'MONEY_OR_GIFT_CARD', amountCents: 70, budgetId }),
      ),
    );
    expect(answers.filter((answer) => answer.statusCode === 201)).toHaveLength(14);
    expect(answers.every((answer) => answer.statusCode === 201 || answer.statusCode === 409)).toBe(true);
    const held = await a.deps.db
      .selectFrom('incentives')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('workspace_id', '=', tenant.workspaceId)
      .where('budget_held', '=', true)
      .executeTakeFirstOrThrow();
    expect(Number(held.count) * 70).toBe(980);
    const read = (await call(b, 'GET', `/incentive-budgets/${budgetId}`, { token: tenant.token })).json();
    expect(read).toMatchObject({ spentCents: 980, remainingCents: 20 });
  });

  it('gives one approval and one order when two approvers act on two instances at once', async () => {
    const tenant = await createTenant(a);
    await call(a, 'PUT', '/incentive-approval-settings', { token: tenant.token, body: { thresholds: [{ currency: 'USD', amountCents: 100 }] } });
    const { participantId } = await createParticipant(a, tenant);
    const incentive = await sendIncentive(a, tenant, participantId, { type: 'MONEY_OR_GIFT_CARD', amountCents: 500 });
    const [first, second] = await Promise.all([tenant.tokenFor('OPS_MANAGER'), tenant.tokenFor('SUPER_ADMIN')]);
    const answers = await Promise.all([
      call(a, 'POST', `/incentives/${incentive.incentiveId}/approve`, { token: first.token }),
      call(b, 'POST', `/incentives/${incentive.incentiveId}/approve`, { token: second.token }),
    ]);
    expect(answers.map((answer) => answer.statusCode).sort()).toEqual([200, 409]);
    const orders = [a, b].flatMap((instance) => [...instance.deps.providers.sandbox.orders.values()].filter((order) => order.workspaceId === tenant.workspaceId));
    expect(orders).toHaveLength(1);
  });
});
