import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, callTestHelper, createTenant, type Tenant, type TestService } from '../../test/harness.js';
import { createParticipant, incentiveRow, sendIncentive, setClock } from '../../test/incentives-factory.js';
import { createPerson } from '../../test/people-factory.js';
import { startPrivateTestService } from '../../test/private-database.js';
import { bookSession, createBookablePerson, createSchedulingStudy } from '../../test/reminder-rows-factory.js';
import { SYSTEM_WORKSPACE_ID } from './queue.js';
import type { DrainReport } from './runner.js';

/**
 * A job's workspace scopes the sweeping handlers: a run of workspace A's due work (jobs/run with
 * ?workspaceId=) sweeps A's rows alone and leaves workspace B's due rows as they were; a run of
 * every workspace's work (system jobs, as production's poller runs them) sweeps both. That last
 * run touches every workspace, so this file has a database of its own.
 */
let service: TestService;
beforeAll(async () => {
  service = await startPrivateTestService();
});
afterAll(async () => service.stop());

const HOUR_MS = 60 * 60 * 1000;

interface DueWork {
  tenant: Tenant;
  /** UNCLAIMED and ORDERED, sent more than a year before the run: the expiry's. */
  expiring: string;
  /** An order of unknown outcome (PENDING), its retry due: the provider work's. */
  pending: string;
  /** Deleted more than the grace period before the run: the purge's. */
  deletedPersonId: string;
  /** An upload that died more than a day ago (real time): the purge closes it. */
  abandonedImportId: string;
  /** A job completed more than a week ago (real time): the job prune's. */
  oldJobId: string;
  /** A finished idempotency key older than its retention (real time): the key prune's. */
  oldKey: string;
  /** A booking whose session starts 24 hours after the run: the reminders' sweep's. */
  bookingId: string;
}

/** A workspace with a due row of every sweep. */
async function dueWork(name: string): Promise<DueWork> {
  const tenant = await createTenant(service, name);
  const db = service.deps.db;
  const realHoursAgo = (hours: number) => new Date(Date.now() - hours * HOUR_MS).toISOString();

  await setClock(service, '2026-02-01T00:00:00.000Z');
  const expiring = (await sendIncentive(service, tenant, (await createParticipant(service, tenant)).participantId)).incentiveId;

  await setClock(service, '2026-12-01T00:00:00.000Z');
  service.deps.providers.sandbox.injectFault('order', 'lose-request');
  const pending = (await sendIncentive(service, tenant, (await createParticipant(service, tenant)).participantId)).incentiveId;
  const deleted = await createPerson(service, tenant, { firstName: 'Gone' });
  expect((await call(service, 'DELETE', `/people/${deleted.personId}`, { token: tenant.token })).statusCode).toBe(200);

  const abandonedImportId = `imp_abandoned_${tenant.workspaceId}`;
  await db
    .insertInto('imports')
    .values({ workspace_id: tenant.workspaceId, import_id: abandonedImportId, status: 'RECEIVING', created_by_user_id: tenant.userId, created_at: realHoursAgo(25), updated_at: realHoursAgo(25) })
    .execute();
  await db.insertInto('import_chunks').values({ workspace_id: tenant.workspaceId, import_id: abandonedImportId, chunk_index: 0, data: Buffer.from('email\nx@example.test\n') }).execute();

  const oldJobId = `job_old_${tenant.workspaceId}`;
  await db
    .insertInto('jobs')
    .values({
      workspace_id: tenant.workspaceId,
      job_id: oldJobId,
      queue: 'test.finished',
      payload: '{}',
      state: 'completed',
      run_after: realHoursAgo(9 * 24),
      max_attempts: 1,
      backoff_seconds: 0,
      finished_at: realHoursAgo(8 * 24),
      created_at: realHoursAgo(9 * 24),
      updated_at: realHoursAgo(8 * 24),
    })
    .execute();

  const oldKey = 'old-key';
  await db
    .insertInto('idempotency_keys')
    .values({
      workspace_id: tenant.workspaceId,
      idempotency_key: oldKey,
      fingerprint: 'f',
      response_status: 201,
      response_content_type: 'application/json',
      response_body: '{}',
      created_at: realHoursAgo(25),
      completed_at: realHoursAgo(25),
    })
    .execute();
  const study = await createSchedulingStudy(service, tenant);
  const booker = await createBookablePerson(service, tenant, study.studyId, { email: `booker.${tenant.workspaceId.toLowerCase()}@example.test` });
  const { bookingId } = await bookSession(service, tenant, study, booker, { startsAt: '2027-02-03T00:00:00.000Z', at: '2026-12-01T00:00:00.000Z' });
  return { tenant, expiring, pending, deletedPersonId: deleted.personId, abandonedImportId, oldJobId, oldKey, bookingId };
}

/** What the sweeps change of a workspace's due rows. */
async function stateOf(work: DueWork) {
  const db = service.deps.db;
  const { workspaceId } = work.tenant;
  const expiring = await incentiveRow(service, work.tenant, work.expiring);
  const pending = await incentiveRow(service, work.tenant, work.pending);
  const person = await db.selectFrom('people').select(['email', 'first_name', 'purged_at']).where('workspace_id', '=', workspaceId).where('person_id', '=', work.deletedPersonId).executeTakeFirstOrThrow();
  const upload = await db.selectFrom('imports').select('status').where('workspace_id', '=', workspaceId).where('import_id', '=', work.abandonedImportId).executeTakeFirstOrThrow();
  const chunks = await db.selectFrom('import_chunks').select('chunk_index').where('workspace_id', '=', workspaceId).where('import_id', '=', work.abandonedImportId).execute();
  const oldJob = await db.selectFrom('jobs').select('job_id').where('workspace_id', '=', workspaceId).where('job_id', '=', work.oldJobId).executeTakeFirst();
  const oldKey = await db.selectFrom('idempotency_keys').select('idempotency_key').where('workspace_id', '=', workspaceId).where('idempotency_key', '=', work.oldKey).executeTakeFirst();
  // Without SMTP the reminder is recorded NOT_SENT, as every message is.
  const reminders = await db
    .selectFrom('session_reminders as r')
    .innerJoin('messages as m', (join) => join.onRef('m.workspace_id', '=', 'r.workspace_id').onRef('m.message_id', '=', 'r.message_id'))
    .select(['r.offset_minutes', 'm.status', 'm.not_sent_reason'])
    .where('r.workspace_id', '=', workspaceId)
    .where('r.booking_id', '=', work.bookingId)
    .execute();
  return {
    expiring: { status: expiring.status, providerState: expiring.provider_state },
    pending: { status: pending.status, providerState: pending.provider_state },
    person: { purged: person.purged_at !== null, firstName: person.first_name },
    upload: { status: upload.status, chunks: chunks.length },
    oldJobKept: oldJob !== undefined,
    oldKeyKept: oldKey !== undefined,
    reminders: reminders.map((reminder) => [reminder.offset_minutes, reminder.status, reminder.not_sent_reason]),
  };
}

const untouched = {
  expiring: { status: 'UNCLAIMED', providerState: 'ORDERED' },
  pending: { status: 'UNCLAIMED', providerState: 'PENDING' },
  // Erased by the deletion itself; the purge marks the row and vacuums the old versions.
  person: { purged: false, firstName: null },
  upload: { status: 'RECEIVING', chunks: 1 },
  oldJobKept: true,
  oldKeyKept: true,
  reminders: [],
};
const swept = {
  expiring: { status: 'EXPIRED', providerState: 'VOIDED' },
  pending: { status: 'UNCLAIMED', providerState: 'ORDERED' },
  person: { purged: true, firstName: null },
  upload: { status: 'FAILED', chunks: 0 },
  oldJobKept: false,
  oldKeyKept: false,
  reminders: [[1440, 'NOT_SENT', 'SMTP_NOT_CONFIGURED']],
};

async function runJobs(query: Record<string, string> = {}): Promise<DrainReport> {
  const response = await callTestHelper(service, 'POST', '/jobs/run', { query });
  expect(response.statusCode, response.body).toBe(200);
  const report = response.json<DrainReport>();
  expect(report.jobs.filter((run) => run.outcome !== 'completed')).toEqual([]);
  return report;
}

describe('background sweeps scoped by the workspace of their job', () => {
  it("sweep one workspace's due rows alone when run for it; a run of every workspace (system jobs) sweeps the others", async () => {
    const mine = await dueWork('Mine');
    const theirs = await dueWork('Theirs');
    expect(await stateOf(mine)).toEqual(untouched);
    expect(await stateOf(theirs)).toEqual(untouched);

    // A year and a day after the first incentive; two months after the deletion.
    await setClock(service, '2027-02-02T00:00:00.000Z');
    const scoped = await runJobs({ workspaceId: mine.tenant.workspaceId });
    expect(new Set(scoped.jobs.map((run) => run.workspaceId))).toEqual(new Set([mine.tenant.workspaceId]));
    expect(await stateOf(mine)).toEqual(swept);
    expect(await stateOf(theirs)).toEqual(untouched);

    const everyone = await runJobs();
    expect(new Set(everyone.jobs.map((run) => run.workspaceId))).toEqual(new Set([SYSTEM_WORKSPACE_ID]));
    expect(await stateOf(theirs)).toEqual(swept);
    expect(await stateOf(mine)).toEqual(swept);
  });
});
