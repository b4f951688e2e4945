import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { call, callTestHelper, createTenant, startTestService, type Tenant, type TestService } from '../../../test/harness.js';
import {
  createParticipant,
  getIncentive,
  type IncentiveResponse,
  incentiveRow,
  type Participation,
  sendIncentive,
  setClock,
} from '../../../test/incentives-factory.js';
import { describeSecurity } from '../../../test/security.js';
import { MASKED_EMAIL } from '../../http/masking.js';
import { buildService } from '../../app.js';
import { IncentiveProviders } from '../../providers/index.js';

/**
 * This file's incentives are sent in the year 7000, a time of their own (see send-incentive.test.ts:
 * on PostgreSQL the files share a database, and other files' sweeps must not reach them). It runs
 * no background work: EXPIRED incentives are made by setting the status (expiry itself is
 * tested in expiry.test.ts).
 */
const ERA = '7000-01-01T00:00:00.000Z';

let service: TestService;
beforeAll(async () => {
  service = await startTestService({}, { providers: new IncentiveProviders('sandbox', { timeoutMs: 300 }) });
  await setClock(service, ERA);
});
afterAll(async () => service.stop());
afterEach(() => service.deps.providers.sandbox.clearFaults());

const sandbox = () => service.deps.providers.sandbox;

const claim = (incentiveId: string) => callTestHelper(service, 'POST', `/incentives/${incentiveId}/claim`);
const fail = (incentiveId: string) => callTestHelper(service, 'POST', `/incentives/${incentiveId}/fail`);
const cancel = (tenant: Tenant, incentiveId: string, token = tenant.token) => call(service, 'POST', `/incentives/${incentiveId}/cancel`, { token });
const resend = (tenant: Tenant, incentiveId: string, token = tenant.token) => call(service, 'POST', `/incentives/${incentiveId}/resend`, { token });

interface Subject {
  tenant: Tenant;
  participant: Participation;
  incentive: IncentiveResponse;
}

async function expectOk(response: { statusCode: number; body: string }) {
  expect(response.statusCode, response.body).toBe(200);
}

/** How to bring a new incentive into each starting state the table walks. */
const starts: Record<string, (tenant: Tenant, participant: Participation) => Promise<IncentiveResponse>> = {
  UNCLAIMED: (tenant, participant) => sendIncentive(service, tenant, participant.participantId),
  CLAIMED: async (tenant, participant) => {
    const incentive = await sendIncentive(service, tenant, participant.participantId);
    await expectOk(await claim(incentive.incentiveId));
    return incentive;
  },
  'ERROR (reported by the provider)': async (tenant, participant) => {
    const incentive = await sendIncentive(service, tenant, participant.participantId);
    await expectOk(await fail(incentive.incentiveId));
    return incentive;
  },
  'ERROR (order refused)': async (tenant, participant) => {
    sandbox().injectFault('order', 'refuse');
    return sendIncentive(service, tenant, participant.participantId);
  },
  'CANCELED (provider-backed)': async (tenant, participant) => {
    const incentive = await sendIncentive(service, tenant, participant.participantId);
    await expectOk(await cancel(tenant, incentive.incentiveId));
    return incentive;
  },
  'CANCELED (CUSTOM)': async (tenant, participant) => {
    const incentive = await sendIncentive(service, tenant, participant.participantId, { type: 'CUSTOM' });
    await expectOk(await cancel(tenant, incentive.incentiveId));
    return incentive;
  },
  'SENT (CUSTOM)': (tenant, participant) => sendIncentive(service, tenant, participant.participantId, { type: 'CUSTOM' }),
  'SENT (RECRUITMENT_FEE)': (tenant, participant) => sendIncentive(service, tenant, participant.participantId, { type: 'RECRUITMENT_FEE' }),
  EXPIRED: async (tenant, participant) => {
    const incentive = await sendIncentive(service, tenant, participant.participantId);
    await service.deps.db
      .updateTable('incentives')
      // As the expiry leaves it: the provider confirmed the void (expiry.test.ts).
      .set({ status: 'EXPIRED', expired_at: ERA, provider_state: 'VOIDED', void_purpose: 'EXPIRE' })
      .where('workspace_id', '=', tenant.workspaceId)
      .where('incentive_id', '=', incentive.incentiveId)
      .execute();
    return incentive;
  },
  'UNCLAIMED, order not confirmed yet': async (tenant, participant) => {
    sandbox().injectFault('order', 'lose-request');
    return sendIncentive(service, tenant, participant.participantId);
  },
  'UNCLAIMED, expiring (void not confirmed yet)': async (tenant, participant) => {
    const incentive = await sendIncentive(service, tenant, participant.participantId);
    // What the expiry sweep leaves when the provider did not confirm its void (expiry.test.ts).
    await service.deps.db
      .updateTable('incentives')
      .set({ provider_state: 'VOIDING', void_purpose: 'EXPIRE', provider_attempts: 1, provider_next_attempt_at: '7000-01-01T00:00:30.000Z' })
      .where('workspace_id', '=', tenant.workspaceId)
      .where('incentive_id', '=', incentive.incentiveId)
      .execute();
    return incentive;
  },
  'UNCLAIMED, void not confirmed yet': async (tenant, participant) => {
    const incentive = await sendIncentive(service, tenant, participant.participantId);
    sandbox().injectFault('void', 'lose-request');
    expect((await cancel(tenant, incentive.incentiveId)).statusCode).toBe(502);
    return incentive;
  },
};

type Move = 'claim' | 'fail' | 'cancel' | 'resend';
/** [HTTP status, the incentive's status afterwards, for a 409 a pattern of its message]. */
type Expected = [number, string, RegExp?];

const ALREADY_CLAIMED = /^Incentive was already claimed$/;
const ALREADY_CANCELED = /^Incentive is already canceled$/;
const IS_CANCELED = /^Incentive is canceled$/;
const EXPIRED = /^Incentive has expired$/;
const FAILED = /^Incentive failed at the provider$/;
const NOT_PROVIDER = /^Only provider-backed incentives/;
const NO_PROVIDER_REPORT = /incentives have no provider to report on them$/;
const CANNOT_BECOME = /^Incentive is \w+: it cannot become \w+$/;
const BEING_ORDERED = /^Incentive is still being ordered at the provider/;
const EXPIRING = /^Incentive is expiring: its order is being voided at the provider$/;

/**
 * The reference's state table and every refused move, by starting state: claim and fail are what
 * the provider reports (test helpers); cancel is E17, resend E16.
 */
const table: Record<keyof typeof starts, Record<Move, Expected>> = {
  UNCLAIMED: { claim: [200, 'CLAIMED'], fail: [200, 'ERROR'], cancel: [200, 'CANCELED'], resend: [200, 'UNCLAIMED'] },
  CLAIMED: { claim: [200, 'CLAIMED'], fail: [409, 'CLAIMED', CANNOT_BECOME], cancel: [409, 'CLAIMED', ALREADY_CLAIMED], resend: [200, 'CLAIMED'] },
  'ERROR (reported by the provider)': {
    claim: [409, 'ERROR', CANNOT_BECOME],
    fail: [200, 'ERROR'],
    cancel: [409, 'ERROR', FAILED],
    resend: [200, 'ERROR'],
  },
  'ERROR (order refused)': {
    claim: [409, 'ERROR', CANNOT_BECOME],
    fail: [200, 'ERROR'],
    cancel: [409, 'ERROR', FAILED],
    resend: [409, 'ERROR', /^The provider refused the order: there is nothing to resend$/],
  },
  'CANCELED (provider-backed)': {
    claim: [409, 'CANCELED', CANNOT_BECOME],
    fail: [409, 'CANCELED', CANNOT_BECOME],
    cancel: [409, 'CANCELED', ALREADY_CANCELED],
    resend: [409, 'CANCELED', IS_CANCELED],
  },
  'CANCELED (CUSTOM)': {
    claim: [409, 'CANCELED', NO_PROVIDER_REPORT],
    fail: [409, 'CANCELED', NO_PROVIDER_REPORT],
    cancel: [409, 'CANCELED', ALREADY_CANCELED],
    resend: [409, 'CANCELED', NOT_PROVIDER],
  },
  'SENT (CUSTOM)': {
    claim: [409, 'SENT', NO_PROVIDER_REPORT],
    fail: [409, 'SENT', NO_PROVIDER_REPORT],
    cancel: [200, 'CANCELED'],
    resend: [409, 'SENT', NOT_PROVIDER],
  },
  'SENT (RECRUITMENT_FEE)': {
    claim: [409, 'SENT', NO_PROVIDER_REPORT],
    fail: [409, 'SENT', NO_PROVIDER_REPORT],
    cancel: [200, 'CANCELED'],
    resend: [409, 'SENT', NOT_PROVIDER],
  },
  EXPIRED: { claim: [409, 'EXPIRED', CANNOT_BECOME], fail: [409, 'EXPIRED', CANNOT_BECOME], cancel: [409, 'EXPIRED', EXPIRED], resend: [409, 'EXPIRED', EXPIRED] },
  // The void for expiry is pending: a claim the provider reports meanwhile is what happened.
  'UNCLAIMED, expiring (void not confirmed yet)': {
    claim: [200, 'CLAIMED'],
    fail: [200, 'ERROR'],
    cancel: [409, 'UNCLAIMED', EXPIRING],
    resend: [409, 'UNCLAIMED', EXPIRING],
  },
  'UNCLAIMED, order not confirmed yet': {
    claim: [200, 'CLAIMED'],
    fail: [200, 'ERROR'],
    cancel: [409, 'UNCLAIMED', BEING_ORDERED],
    resend: [409, 'UNCLAIMED', BEING_ORDERED],
  },
  'UNCLAIMED, void not confirmed yet': {
    claim: [200, 'CLAIMED'],
    fail: [200, 'ERROR'],
    cancel: [200, 'CANCELED'],
    resend: [409, 'UNCLAIMED', /^Incentive is being canceled$/],
  },
};

async function start(name: keyof typeof starts): Promise<Subject> {
  const tenant = await createTenant(service);
  const participant = await createParticipant(service, tenant);
  const incentive = await starts[name]!(tenant, participant);
  return { tenant, participant, incentive };
}

function perform(move: Move, subject: Subject) {
  const { tenant, incentive } = subject;
  if (move === 'claim') return claim(incentive.incentiveId);
  if (move === 'fail') return fail(incentive.incentiveId);
  if (move === 'cancel') return cancel(tenant, incentive.incentiveId);
  return resend(tenant, incentive.incentiveId);
}

describe('the incentive state table', () => {
  for (const [name, moves] of Object.entries(table)) {
    for (const [move, [httpStatus, after, message]] of Object.entries(moves) as [Move, Expected][]) {
      it(`${name}: ${move} → ${httpStatus === 200 ? after : `${httpStatus}, stays ${after}`}`, async () => {
        const subject = await start(name);
        const before = await incentiveRow(service, subject.tenant, subject.incentive.incentiveId);
        const response = await perform(move, subject);
        expect(response.statusCode, response.body).toBe(httpStatus);
        if (httpStatus === 200) {
          if (move === 'cancel' || move === 'resend') expect(response.json()).toEqual({ success: true, incentiveId: subject.incentive.incentiveId });
          else expect(response.json()).toEqual({ incentiveId: subject.incentive.incentiveId, status: after });
        } else {
          expect(response.json()).toEqual({ errors: [{ message: expect.stringMatching(message!), path: ['incentiveId'] }] });
        }
        const read = await getIncentive(service, subject.tenant, subject.incentive.incentiveId);
        expect(read.json().status).toBe(after);
        const row = await incentiveRow(service, subject.tenant, subject.incentive.incentiveId);
        if (httpStatus !== 200) expect(row.updated_at, 'a refused move changes nothing').toBe(before.updated_at);
        if (after === 'CLAIMED' && before.status !== 'CLAIMED') expect(row.claimed_at).toBe(ERA);
        if (after === 'ERROR' && before.status !== 'ERROR') expect(row).toMatchObject({ failed_at: ERA, failure_reason: expect.any(String) });
        if (after === 'CANCELED' && before.status !== 'CANCELED') expect(row.canceled_at).toBe(ERA);
        const order = sandbox().orderOf(subject.tenant.workspaceId, subject.incentive.incentiveId);
        if (move === 'cancel' && httpStatus === 200 && row.provider !== null) {
          expect(row.provider_state).toBe('VOIDED');
          expect(order?.voided).toBe(true);
        }
        if (move === 'resend') {
          expect(row.resend_count).toBe(httpStatus === 200 ? before.resend_count + 1 : before.resend_count);
          if (httpStatus === 200) expect(order?.resends).toBe(1);
        }
        // A report settles an order whose outcome was not known: the provider holds it.
        if ((move === 'claim' || move === 'fail') && before.status === 'UNCLAIMED') expect(row.provider_state).toBe('ORDERED');
      });
    }
  }
});

describe('POST /incentives/{incentiveId}/cancel and /resend', () => {
  it('work on another instance, whose provider never saw the order (as after a restart)', async () => {
    const { tenant, incentive } = await start('UNCLAIMED');
    const other = await buildService({
      config: service.deps.config,
      database: service.database,
      clock: service.deps.clock,
      migrate: false,
      logger: false,
      providers: new IncentiveProviders('sandbox', { timeoutMs: 300 }),
    });
    try {
      const onOther = (action: string) => other.app.inject({ method: 'POST', url: `/v1/incentives/${incentive.incentiveId}/${action}`, headers: { authorization: `Bearer ${tenant.token}` } });
      expect(other.deps.providers.sandbox.orderOf(tenant.workspaceId, incentive.incentiveId)).toBeUndefined();
      const resent = await onOther('resend');
      expect(resent.statusCode, resent.body).toBe(200);
      expect(other.deps.providers.sandbox.orderOf(tenant.workspaceId, incentive.incentiveId)).toMatchObject({ resends: 1 });
      const canceled = await onOther('cancel');
      expect(canceled.statusCode, canceled.body).toBe(200);
      expect(other.deps.providers.sandbox.orderOf(tenant.workspaceId, incentive.incentiveId)).toMatchObject({ voided: true });
      // The service's own record, not the provider's memory, refuses what may no longer happen.
      const again = await resend(tenant, incentive.incentiveId);
      expect(again.statusCode).toBe(409);
      expect(again.json()).toEqual({ errors: [{ message: 'Incentive is canceled', path: ['incentiveId'] }] });
    } finally {
      await other.close();
    }
    expect(await incentiveRow(service, tenant, incentive.incentiveId)).toMatchObject({ status: 'CANCELED', provider_state: 'VOIDED', resend_count: 1 });
  });

  it('refuses both with the draft-status error when the study is not in DRAFT, changing nothing', async () => {
    const { tenant, participant, incentive } = await start('UNCLAIMED');
    const custom = await sendIncentive(service, tenant, participant.participantId, { type: 'CUSTOM' });
    expect((await call(service, 'POST', `/studies/${participant.studyId}/launch`, { token: tenant.token })).statusCode).toBe(200);
    for (const response of [await cancel(tenant, incentive.incentiveId), await resend(tenant, incentive.incentiveId), await cancel(tenant, custom.incentiveId)]) {
      expect(response.statusCode).toBe(409);
      expect(response.body).toBe('{"errors":[{"message":"Study is not in draft status","path":["studyId"]}]}');
    }
    expect((await getIncentive(service, tenant, incentive.incentiveId)).json().status).toBe('UNCLAIMED');
    expect((await getIncentive(service, tenant, custom.incentiveId)).json().status).toBe('SENT');
    expect(sandbox().orderOf(tenant.workspaceId, incentive.incentiveId)).toMatchObject({ voided: false, resends: 0 });
  });

  it("answers 404 for an unknown incentive or another workspace's, and 400 for a body or a bad id", async () => {
    const { tenant, incentive } = await start('UNCLAIMED');
    const stranger = await createTenant(service, 'Other');
    for (const action of ['cancel', 'resend']) {
      for (const [token, id] of [
        [tenant.token, 'inc_unknown'],
        [stranger.token, incentive.incentiveId],
      ] as const) {
        const response = await call(service, 'POST', `/incentives/${id}/${action}`, { token });
        expect(response.statusCode).toBe(404);
        expect(response.json()).toEqual({ errors: [{ message: 'Incentive not found', path: ['incentiveId'] }] });
      }
      const withBody = await call(service, 'POST', `/incentives/${incentive.incentiveId}/${action}`, { token: tenant.token, body: { reason: 'x' } });
      expect(withBody.statusCode).toBe(400);
      expect(withBody.json().errors[0].path).toEqual(['reason']);
      const tooLong = await call(service, 'POST', `/incentives/${'x'.repeat(101)}/${action}`, { token: tenant.token });
      expect(tooLong.statusCode).toBe(400);
    }
    expect((await getIncentive(service, tenant, incentive.incentiveId)).json().status).toBe('UNCLAIMED');
  });

  it('keeps an incentive UNCLAIMED when the provider refuses the void (409), and cancels it on a later try', async () => {
    const { tenant, incentive } = await start('UNCLAIMED');
    sandbox().injectFault('void', 'refuse');
    const refused = await cancel(tenant, incentive.incentiveId);
    expect(refused.statusCode).toBe(409);
    expect(refused.json().errors[0]).toEqual({ message: expect.stringMatching(/^The provider refused to void the incentive: /), path: ['incentiveId'] });
    expect(await incentiveRow(service, tenant, incentive.incentiveId)).toMatchObject({ status: 'UNCLAIMED', provider_state: 'ORDERED', provider_next_attempt_at: null });
    await expectOk(await cancel(tenant, incentive.incentiveId));
    expect((await getIncentive(service, tenant, incentive.incentiveId)).json().status).toBe('CANCELED');
  });

  it('answers 502 when the provider does not confirm a void in time, and records the void as still to do', async () => {
    const { tenant, incentive } = await start('UNCLAIMED');
    sandbox().injectFault('void', 'hang');
    const response = await cancel(tenant, incentive.incentiveId);
    expect(response.statusCode).toBe(502);
    expect(response.json().errors[0].path).toEqual(['incentiveId']);
    expect(await incentiveRow(service, tenant, incentive.incentiveId)).toMatchObject({ status: 'UNCLAIMED', provider_state: 'VOIDING', provider_next_attempt_at: expect.any(String) });
  });

  it('counts a resend only when the provider confirms it: refusal 409, no answer 502', async () => {
    const { tenant, incentive } = await start('UNCLAIMED');
    sandbox().injectFault('resend', 'refuse');
    const refused = await resend(tenant, incentive.incentiveId);
    expect(refused.statusCode).toBe(409);
    expect(refused.json().errors[0].message).toMatch(/^The provider refused to resend the incentive: /);
    sandbox().injectFault('resend', 'lose-request');
    const lost = await resend(tenant, incentive.incentiveId);
    expect(lost.statusCode).toBe(502);
    expect((await incentiveRow(service, tenant, incentive.incentiveId)).resend_count).toBe(0);
    await expectOk(await resend(tenant, incentive.incentiveId));
    await expectOk(await resend(tenant, incentive.incentiveId));
    expect(await incentiveRow(service, tenant, incentive.incentiveId)).toMatchObject({ resend_count: 2, last_resent_at: ERA, status: 'UNCLAIMED' });
  });

  it('cancels once under concurrent cancels, claims and cancels racing leave one outcome', async () => {
    const { tenant, incentive } = await start('UNCLAIMED');
    const responses = await Promise.all([1, 2, 3].map(() => cancel(tenant, incentive.incentiveId)));
    for (const response of responses) {
      if (response.statusCode !== 200) {
        expect(response.statusCode, response.body).toBe(409);
        expect(response.json().errors[0].message).toBe('Incentive is already canceled');
      }
    }
    expect(responses.some((response) => response.statusCode === 200)).toBe(true);
    expect(await incentiveRow(service, tenant, incentive.incentiveId)).toMatchObject({ status: 'CANCELED', provider_state: 'VOIDED' });

    const raced = await start('UNCLAIMED');
    const [canceled, claimed] = await Promise.all([cancel(raced.tenant, raced.incentive.incentiveId), claim(raced.incentive.incentiveId)]);
    const final = (await getIncentive(service, raced.tenant, raced.incentive.incentiveId)).json().status;
    if (final === 'CANCELED') {
      expect(canceled.statusCode).toBe(200);
      expect(claimed.statusCode).toBe(409);
    } else {
      expect(final).toBe('CLAIMED');
      expect(claimed.statusCode).toBe(200);
      expect(canceled.statusCode).toBe(409);
    }
  });
});

describe('test helpers: claim and fail', () => {
  it('answer 404 for an unknown incentive', async () => {
    for (const report of [claim, fail]) {
      const response = await report('inc_unknown');
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({ errors: [{ message: 'Incentive not found', path: ['incentiveId'] }] });
    }
  });
});

describe('GET /incentives/{incentiveId}', () => {
  it('answers the incentive, with the recipient\'s current email', async () => {
    const { tenant, participant, incentive } = await start('UNCLAIMED');
    const response = await getIncentive(service, tenant, incentive.incentiveId);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual(incentive);
    const newEmail = `changed.${participant.email}`;
    expect((await call(service, 'PATCH', `/people/${participant.personId}`, { token: tenant.token, body: { email: newEmail } })).statusCode).toBe(200);
    expect((await getIncentive(service, tenant, incentive.incentiveId)).json().recipientEmail).toBe(newEmail);
  });

  it('masks recipientEmail for a token without the personal-data right, and nothing else', async () => {
    const { tenant, incentive } = await start('UNCLAIMED');
    const { token } = await tenant.tokenFor('OBSERVER', { canReadPersonalData: false });
    const response = await getIncentive(service, tenant, incentive.incentiveId, token);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ ...incentive, recipientEmail: MASKED_EMAIL });
  });

  it('gives recipientEmail null once the recipient is deleted, masked or not', async () => {
    const { tenant, participant, incentive } = await start('UNCLAIMED');
    expect((await call(service, 'DELETE', `/people/${participant.personId}`, { token: tenant.token })).statusCode).toBe(200);
    const { token } = await tenant.tokenFor('OBSERVER', { canReadPersonalData: false });
    for (const reader of [tenant.token, token]) {
      const response = await getIncentive(service, tenant, incentive.incentiveId, reader);
      expect(response.json()).toEqual({ ...incentive, recipientEmail: null });
    }
  });

  it("answers 404 for an unknown incentive or another workspace's, 400 for a bad id", async () => {
    const { tenant, incentive } = await start('SENT (CUSTOM)');
    const stranger = await createTenant(service, 'Other');
    for (const [token, id] of [
      [tenant.token, 'inc_unknown'],
      [stranger.token, incentive.incentiveId],
    ] as const) {
      const response = await getIncentive(service, tenant, id, token);
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({ errors: [{ message: 'Incentive not found', path: ['incentiveId'] }] });
    }
    expect((await getIncentive(service, tenant, 'x'.repeat(101))).statusCode).toBe(400);
  });
});

async function incentiveOf(tenant: Tenant, type = 'MONEY_OR_GIFT_CARD') {
  const participant = await createParticipant(service, tenant);
  return (await sendIncentive(service, tenant, participant.participantId, { type })).incentiveId;
}

describeSecurity('GET /incentives/{incentiveId}', () => service, {
  method: 'GET',
  right: 'incentives:read',
  addressesResource: true,
  request: async (tenant) => ({ url: `/incentives/${await incentiveOf(tenant)}` }),
});

describeSecurity('POST /incentives/{incentiveId}/resend', () => service, {
  method: 'POST',
  right: 'incentives:write',
  addressesResource: true,
  request: async (tenant) => ({ url: `/incentives/${await incentiveOf(tenant)}/resend` }),
});

describeSecurity('POST /incentives/{incentiveId}/cancel', () => service, {
  method: 'POST',
  right: 'incentives:write',
  addressesResource: true,
  request: async (tenant) => ({ url: `/incentives/${await incentiveOf(tenant, 'CUSTOM')}/cancel` }),
});
