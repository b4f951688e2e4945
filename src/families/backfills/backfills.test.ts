import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, callTestHelper, createTenant, startTestService, type Tenant, type TestService } from '../../../test/harness.js';
import { describeSecurity } from '../../../test/security.js';
import { createPerson } from '../../../test/people-factory.js';
import { addParticipants, createStudy, patchParticipant } from '../../../test/participants-factory.js';
import { csvOf, runJobs } from '../imports/test-support.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => {
  await callTestHelper(service, 'DELETE', '/clock');
  await service.stop();
});

interface BackfillResponse {
  backfillId: string;
  status: string;
  rowsTotal: number;
  rowsWritten: number;
  rowsSkipped: number;
  rowsFailed: number;
  studiesCreated: number;
  incentivesWritten: number;
}

const header = ['email', 'studyKey', 'studyName', 'studyType', 'status', 'invitedAt', 'interviewStartTime', 'completedAt', 'canceledAt', 'incentiveAmount', 'incentiveCurrency'];

const postCsv = (tenant: Tenant, csv: string, token = tenant.token) => call(service, 'POST', '/backfills', { token, body: csv, headers: { 'content-type': 'text/csv' } });

async function backfill(tenant: Tenant, csv: string): Promise<BackfillResponse> {
  const response = await postCsv(tenant, csv);
  expect(response.statusCode, response.body).toBe(202);
  const { backfillId } = response.json<{ backfillId: string }>();
  await runJobs(service, tenant);
  const read = await call(service, 'GET', `/backfills/${backfillId}`, { token: tenant.token });
  expect(read.statusCode, read.body).toBe(200);
  return read.json<BackfillResponse>();
}

async function errorsOf(tenant: Tenant, backfillId: string) {
  const response = await call(service, 'GET', `/backfills/${backfillId}/errors`, { token: tenant.token, query: { size: '100' } });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<{ results: { row: number; column?: string; message: string }[] }>().results;
}

describe('POST /backfills', () => {
  it('writes past studies, participations with their dates and incentives, marked backfilled; the same file twice changes nothing', async () => {
    const tenant = await createTenant(service);
    const ada = await createPerson(service, tenant);
    const bob = await createPerson(service, tenant);
    const csv = csvOf([
      header,
      [ada.email!, 'OLD-1', 'Checkout interviews', 'INTERVIEWS', 'COMPLETED', '2025-03-01T09:00:00Z', '2025-03-08T15:00:00Z', '', '', '75.00', 'USD'],
      [bob.email!.toUpperCase(), 'OLD-1', '', '', 'NO_SHOW', '2025-03-02', '2025-03-09T15:00:00Z', '', '', '', ''],
      [ada.email!, 'OLD-2', 'Survey', 'SURVEY', 'CANCELED', '2025-04-01', '', '', '2025-04-02', '', ''],
    ]);
    const first = await backfill(tenant, csv);
    expect(first).toMatchObject({ status: 'COMPLETED', rowsTotal: 3, rowsWritten: 3, rowsSkipped: 0, rowsFailed: 0, studiesCreated: 2, incentivesWritten: 1 });

    const db = service.deps.db;
    const studies = await db.selectFrom('studies').where('workspace_id', '=', tenant.workspaceId).select(['backfill_key', 'backfill_id', 'status', 'study_type', 'plan']).orderBy('backfill_key').execute();
    expect(studies).toMatchObject([
      { backfill_key: 'OLD-1', backfill_id: first.backfillId, status: 'CLOSED', study_type: 'INTERVIEWS', plan: { name: 'Checkout interviews' } },
      { backfill_key: 'OLD-2', backfill_id: first.backfillId, status: 'CLOSED', study_type: 'SURVEY', plan: { name: 'Survey' } },
    ]);
    const participants = await db
      .selectFrom('participants')
      .where('workspace_id', '=', tenant.workspaceId)
      .select(['person_id', 'status', 'no_show_count', 'completed_at', 'backfill_id'])
      .orderBy('added_at')
      .execute();
    expect(participants.map((p) => ({ ...p, completed_at: p.completed_at === null ? null : new Date(p.completed_at).toISOString() }))).toEqual([
      { person_id: ada.personId, status: 'COMPLETED', no_show_count: 0, completed_at: '2025-03-08T15:00:00.000Z', backfill_id: first.backfillId },
      { person_id: bob.personId, status: 'NO_SHOW', no_show_count: 1, completed_at: null, backfill_id: first.backfillId },
      { person_id: ada.personId, status: 'CANCELED', no_show_count: 0, completed_at: null, backfill_id: first.backfillId },
    ]);
    const incentives = await db.selectFrom('incentives').where('workspace_id', '=', tenant.workspaceId).select(['type', 'status', 'amount_cents', 'currency', 'backfill_id']).execute();
    expect(incentives).toEqual([{ type: 'CUSTOM', status: 'SENT', amount_cents: 7500, currency: 'USD', backfill_id: first.backfillId }]);
    const ledger = await db.selectFrom('incentive_ledger').where('workspace_id', '=', tenant.workspaceId).select(['kind', 'amount_minor', 'backfill_id']).execute();
    expect(ledger).toEqual([{ kind: 'SENT', amount_minor: 7500, backfill_id: first.backfillId }]);

    const twice = await backfill(tenant, csv);
    expect(twice).toMatchObject({ status: 'COMPLETED', rowsTotal: 3, rowsWritten: 0, rowsSkipped: 3, rowsFailed: 0, studiesCreated: 0, incentivesWritten: 0 });
    const count = async (table: 'participants' | 'participant_status_events' | 'incentives' | 'studies' | 'incentive_ledger') =>
      Number((await db.selectFrom(table).where('workspace_id', '=', tenant.workspaceId).select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()).n);
    expect({ participants: await count('participants'), events: await count('participant_status_events'), incentives: await count('incentives'), studies: await count('studies'), ledger: await count('incentive_ledger') }).toEqual({
      participants: 3,
      events: 8,
      incentives: 1,
      studies: 2,
      ledger: 1,
    });

    const list = await call(service, 'GET', '/backfills', { token: tenant.token, query: { size: '1' } });
    expect(list.statusCode, list.body).toBe(200);
    const page = list.json<{ results: BackfillResponse[]; total: number; pageInfo: { hasNextPage: boolean; endCursor: string } }>();
    expect(page.total).toBe(2);
    expect(page.results.map((b) => b.backfillId)).toEqual([twice.backfillId]);
    expect(page.pageInfo.hasNextPage).toBe(true);
    const next = await call(service, 'GET', '/backfills', { token: tenant.token, query: { size: '1', startCursor: page.pageInfo.endCursor } });
    expect(next.json<{ results: BackfillResponse[] }>().results.map((b) => b.backfillId)).toEqual([first.backfillId]);
  });

  it('reports each bad row by its number and column, and writes the good ones', async () => {
    const tenant = await createTenant(service);
    const ada = await createPerson(service, tenant);
    const rows: string[][] = [
      [ada.email!, 'K', '', 'INTERVIEWS', 'COMPLETED', '2025-01-01', '2025-01-02T10:00:00Z', '', '', '', ''],
      ['nobody@example.test', 'K', '', '', 'INVITED', '2025-01-01', '', '', '', '', ''],
      ['not an email', 'K', '', '', 'INVITED', '2025-01-01', '', '', '', '', ''],
      [ada.email!, '', '', '', 'INVITED', '2025-01-01', '', '', '', '', ''],
      [ada.email!, 'K2', '', 'WORKSHOP', 'INVITED', '2025-01-01', '', '', '', '', ''],
      [ada.email!, 'K2', '', '', 'DONE', '2025-01-01', '', '', '', '', ''],
      [ada.email!, 'K2', '', '', 'INVITED', '', '', '', '', '', ''],
      [ada.email!, 'K2', '', '', 'INVITED', 'yesterday', '', '', '', '', ''],
      [ada.email!, 'K2', '', '', 'INVITED', '2999-01-01', '', '', '', '', ''],
      [ada.email!, 'K3', '', 'SURVEY', 'NO_SHOW', '2025-01-01', '', '', '', '', ''],
      [ada.email!, 'K2', '', '', 'SCHEDULED', '2025-01-01', '', '', '', '', ''],
      [ada.email!, 'K3', '', 'SURVEY', 'COMPLETED', '2025-01-01', '', '', '', '', ''],
      [ada.email!, 'K2', '', '', 'CANCELED', '2025-01-01', '', '', '', '', ''],
      [ada.email!, 'K2', '', '', 'INVITED', '2025-01-05', '', '', '', '12.345', 'USD'],
      [ada.email!, 'K2', '', '', 'INVITED', '2025-01-05', '', '', '', '12', 'XYZ'],
      [ada.email!, 'K2', '', '', 'INVITED', '2025-01-05', '', '', '', '10', ''],
      [ada.email!, 'K2', '', '', 'COMPLETED', '2025-01-05', '2025-01-04T10:00:00Z', '', '', '', ''],
      [ada.email!, 'K', '', 'SURVEY', 'COMPLETED', '2025-01-01', '', '2025-01-02', '', '', ''],
    ];
    const result = await backfill(tenant, csvOf([header, ...rows]));
    expect(result).toMatchObject({ status: 'COMPLETED', rowsTotal: rows.length, rowsWritten: 1, rowsFailed: rows.length - 1 });
    const errors = await errorsOf(tenant, result.backfillId);
    expect(errors.map(({ row, column }) => [row, column])).toEqual([
      [3, 'email'],
      [4, 'email'],
      [5, 'studyKey'],
      [6, 'studyType'],
      [7, 'status'],
      [8, 'invitedAt'],
      [9, 'invitedAt'],
      [10, 'invitedAt'],
      [11, 'status'],
      [12, 'interviewStartTime'],
      [13, 'completedAt'],
      [14, 'canceledAt'],
      [15, 'incentiveAmount'],
      [16, 'incentiveCurrency'],
      [17, 'incentivePaidAt'],
      [18, 'interviewStartTime'],
      [19, 'studyType'],
    ]);
    expect(errors[4]!.message).toBe('status must be one of INVITED, SCHEDULED, COMPLETED, NO_SHOW, CANCELED');
    expect(errors[7]!.message).toBe('invitedAt must not be in the future: a backfill records history');
    // Messages never repeat a cell's value.
    for (const error of errors) expect(error.message).not.toContain('not an email');
  });

  it('refuses a header with unknown, repeated or missing columns, naming each; a refused file leaves nothing', async () => {
    const tenant = await createTenant(service);
    const response = await postCsv(tenant, 'Email,studykey,colour,email\nx@example.test,K,red,x@example.test\n');
    expect(response.statusCode).toBe(400);
    const messages = response.json<{ errors: { message: string; path: string[] }[] }>().errors;
    expect(messages.map((error) => error.path)).toEqual([
      ['header', 'colour'],
      ['header', 'email'],
      ['header', 'status'],
    ]);
    expect(messages[0]!.message).toContain('the columns allowed are email, personId, studyKey');
    const left = await service.deps.db.selectFrom('backfills').where('workspace_id', '=', tenant.workspaceId).selectAll().execute();
    expect(left).toEqual([]);
    const wrongType = await call(service, 'POST', '/backfills', { token: tenant.token, body: { a: 1 } });
    expect(wrongType.statusCode).toBe(415);
  });

  it('is for SUPER_ADMIN alone; another workspace neither sees a backfill nor has its people or studies matched', async () => {
    const tenant = await createTenant(service);
    const other = await createTenant(service);
    const csv = csvOf([header, ['someone@example.test', 'K', '', '', 'INVITED', '2025-01-01', '', '', '', '', '']]);
    expect((await call(service, 'POST', '/backfills', { body: csv, headers: { 'content-type': 'text/csv' } })).statusCode).toBe(401);
    for (const role of ['OPS_MANAGER', 'RESEARCHER', 'DEVELOPER'] as const) {
      const { token } = await tenant.tokenFor(role);
      expect((await postCsv(tenant, csv, token)).statusCode).toBe(403);
      expect((await call(service, 'GET', '/backfills', { token })).statusCode).toBe(403);
    }
    const masked = await tenant.tokenFor('SUPER_ADMIN', { canReadPersonalData: false });
    expect((await postCsv(tenant, csv, masked.token)).statusCode).toBe(403);

    // The other workspace's person and backfilled study: neither is matched from this workspace.
    const theirs = await createPerson(service, other);
    const theirRun = await backfill(other, csvOf([header, [theirs.email!, 'SHARED', '', '', 'INVITED', '2025-01-01', '', '', '', '', '']]));
    expect(theirRun.rowsWritten).toBe(1);
    const mine = await backfill(tenant, csvOf([['personId', 'studyKey', 'status', 'invitedAt'], [theirs.personId, 'SHARED', 'INVITED', '2025-01-01']]));
    expect(mine).toMatchObject({ rowsWritten: 0, rowsFailed: 1, studiesCreated: 0 });
    expect((await errorsOf(tenant, mine.backfillId))[0]).toMatchObject({ row: 2, column: 'personId' });
    expect((await call(service, 'GET', `/backfills/${theirRun.backfillId}`, { token: tenant.token })).statusCode).toBe(404);
    expect((await call(service, 'GET', `/backfills/${theirRun.backfillId}/errors`, { token: tenant.token })).statusCode).toBe(404);
  });
});

describe('derived names read a backfill as the same history made through the API', () => {
  it('participants, status events, contacts and incentives match, and the search counts agree', async () => {
    const made = await createTenant(service, 'Made here');
    const brought = await createTenant(service, 'Brought');
    const invited = '2025-05-01T09:00:00.000Z';
    const session = '2025-05-08T15:00:00.000Z';
    const missed = '2025-05-09T15:00:00.000Z';
    // Through the API, at the history's dates.
    const setClock = async (at: string) => expect((await callTestHelper(service, 'POST', '/clock', { body: { now: at } })).statusCode).toBe(200);
    await setClock('2025-04-30T00:00:00.000Z');
    const a1 = await createPerson(service, made, { email: 'ada@example.test' });
    const b1 = await createPerson(service, made, { email: 'bob@example.test' });
    const studyId = await createStudy(service, made, { studyType: 'INTERVIEWS', launch: true });
    const [pa, pb] = await addParticipants(service, made, studyId, [a1.personId, b1.personId]);
    await setClock(invited);
    for (const p of [pa!, pb!]) await patchParticipant(service, made, studyId, p.participantId, { status: 'INVITED' });
    await setClock(session);
    await patchParticipant(service, made, studyId, pa!.participantId, { status: 'SCHEDULED', interviewStartTime: session });
    await patchParticipant(service, made, studyId, pa!.participantId, { status: 'COMPLETED' });
    await setClock(missed);
    await patchParticipant(service, made, studyId, pb!.participantId, { status: 'SCHEDULED', interviewStartTime: missed });
    await patchParticipant(service, made, studyId, pb!.participantId, { status: 'NO_SHOW' });
    await setClock(session);
    const paid = await call(service, 'POST', '/incentives', { token: made.token, body: { participantId: pa!.participantId, type: 'CUSTOM', amountCents: 7500 } });
    expect(paid.statusCode, paid.body).toBe(201);
    await callTestHelper(service, 'DELETE', '/clock');

    // The same history by a backfill.
    const a2 = await createPerson(service, brought, { email: 'ada@example.test' });
    const b2 = await createPerson(service, brought, { email: 'bob@example.test' });
    const result = await backfill(
      brought,
      csvOf([
        ['email', 'studyKey', 'studyType', 'status', 'invitedAt', 'interviewStartTime', 'incentiveAmount', 'incentivePaidAt'],
        ['ada@example.test', 'S', 'INTERVIEWS', 'COMPLETED', invited, session, '75', session],
        ['bob@example.test', 'S', 'INTERVIEWS', 'NO_SHOW', invited, missed, '', ''],
      ]),
    );
    expect(result).toMatchObject({ rowsWritten: 2, rowsFailed: 0 });

    const db = service.deps.db;
    const iso = (value: string | null) => (value === null ? null : new Date(value).toISOString());
    const history = async (tenant: Tenant) => {
      const participants = await db
        .selectFrom('participants as pt')
        .innerJoin('people as p', (join) => join.onRef('p.workspace_id', '=', 'pt.workspace_id').onRef('p.person_id', '=', 'pt.person_id'))
        .where('pt.workspace_id', '=', tenant.workspaceId)
        .select(['p.email', 'pt.study_kind', 'pt.status', 'pt.invited_at', 'pt.interview_start_time', 'pt.completed_at', 'pt.no_show_count', 'p.last_contact_at'])
        .orderBy('p.email')
        .execute();
      const events = await db
        .selectFrom('participant_status_events as e')
        .innerJoin('people as p', (join) => join.onRef('p.workspace_id', '=', 'e.workspace_id').onRef('p.person_id', '=', 'e.person_id'))
        .where('e.workspace_id', '=', tenant.workspaceId)
        .select(['p.email', 'e.field', 'e.from_value', 'e.to_value', 'e.is_contact', 'e.occurred_at'])
        .orderBy('p.email')
        .orderBy('e.event_id')
        .execute();
      const incentives = await db
        .selectFrom('incentives as x')
        .innerJoin('people as p', (join) => join.onRef('p.workspace_id', '=', 'x.workspace_id').onRef('p.person_id', '=', 'x.person_id'))
        .where('x.workspace_id', '=', tenant.workspaceId)
        .select(['p.email', 'x.type', 'x.status', 'x.amount_cents', 'x.currency', 'x.sent_at'])
        .execute();
      return {
        participants: participants.map((row) => ({ ...row, invited_at: iso(row.invited_at), interview_start_time: iso(row.interview_start_time), completed_at: iso(row.completed_at), last_contact_at: iso(row.last_contact_at) })),
        events: events.map((row) => ({ ...row, occurred_at: iso(row.occurred_at) })),
        incentives: incentives.map((row) => ({ ...row, sent_at: iso(row.sent_at) })),
      };
    };
    expect(await history(brought)).toEqual(await history(made));

    // Search by derived names, through the counts: the same people match in both workspaces.
    const filters: [string, string, unknown][] = [
      ['TOTAL_NUMBER_OF_INTERVIEWS_COMPLETED', 'EQUALS', 1],
      ['SHOW_RATE', 'EQUALS', 0],
      ['LAST_INTERVIEW_DATE', 'AFTER', '2025-05-01T00:00:00Z'],
      ['TOTAL_NUMBER_OF_CONTACT', 'EQUALS', 1],
      ['TOTAL_NUMBER_OF_NO_SHOW_INTERVIEWS', 'GREATER_THAN', 0],
      ['TOTAL_SENT_ALL_TIME', 'EQUALS', 7500],
    ];
    for (const [propertyName, comparison, value] of filters) {
      const emails = async (tenant: Tenant) => {
        const response = await call(service, 'POST', '/people/search', {
          token: tenant.token,
          body: { filter: { filters: [{ property: { propertyGroup: 'PERSON', propertyName }, comparison, value }] } },
        });
        expect(response.statusCode, response.body).toBe(200);
        return response
          .json<{ results: { email: string }[] }>()
          .results.map((person) => person.email)
          .sort();
      };
      const expected = await emails(made);
      expect(expected.length, propertyName).toBeGreaterThan(0);
      expect(await emails(brought), propertyName).toEqual(expected);
    }
    expect([a2.personId, b2.personId]).toHaveLength(2);
  });
});

/** A backfill of the tenant's, made and run (an empty file but for its header: nothing to write). */
async function madeBackfill(tenant: Tenant): Promise<string> {
  return (await backfill(tenant, 'email,studyKey,status\n')).backfillId;
}

describeSecurity('POST /backfills', () => service, {
  method: 'POST',
  right: 'backfills:write',
  addressesResource: false,
  request: async () => ({ url: '/backfills', body: 'email,studyKey,status\n', headers: { 'content-type': 'text/csv' } }),
});

describeSecurity('GET /backfills', () => service, {
  method: 'GET',
  right: 'backfills:write',
  addressesResource: false,
  request: async () => ({ url: '/backfills' }),
});

describeSecurity('GET /backfills/{backfillId}', () => service, {
  method: 'GET',
  right: 'backfills:write',
  addressesResource: true,
  request: async (tenant) => ({ url: `/backfills/${await madeBackfill(tenant)}` }),
});

describeSecurity('GET /backfills/{backfillId}/errors', () => service, {
  method: 'GET',
  right: 'backfills:write',
  addressesResource: true,
  request: async (tenant) => ({ url: `/backfills/${await madeBackfill(tenant)}/errors` }),
});
