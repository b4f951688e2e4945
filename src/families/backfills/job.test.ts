import { auditEntriesOf } from '../../../test/audit-entries.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type Tenant, type TestService } from '../../../test/harness.js';
import { createPerson } from '../../../test/people-factory.js';
import { JobRunner } from '../../jobs/runner.js';
import { csvOf } from '../imports/test-support.js';
import { backfillJobHandler, type BackfillJobOptions } from './job.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service.stop());

/** A runner of the backfill queue alone, drained for the test's own workspace (as another instance would run it). */
function backfillRunner(options: BackfillJobOptions) {
  const runner = new JobRunner({ db: service.deps.db, clock: service.deps.clock });
  runner.register(backfillJobHandler(service.deps.db, service.deps.clock, options));
  return runner;
}

async function upload(tenant: Tenant, csv: string): Promise<string> {
  const response = await call(service, 'POST', '/backfills', { token: tenant.token, body: csv, headers: { 'content-type': 'text/csv' } });
  expect(response.statusCode, response.body).toBe(202);
  return response.json<{ backfillId: string }>().backfillId;
}

const read = async (tenant: Tenant, backfillId: string) => (await call(service, 'GET', `/backfills/${backfillId}`, { token: tenant.token })).json<Record<string, unknown>>();

const participantsOf = async (tenant: Tenant) =>
  (await service.deps.db.selectFrom('participants').where('workspace_id', '=', tenant.workspaceId).select('person_id').execute()).length;

describe('the backfill job', () => {
  it('resumes after a crash between batches: every row once, none lost', async () => {
    const tenant = await createTenant(service);
    const people = await Promise.all(Array.from({ length: 7 }, () => createPerson(service, tenant)));
    const csv = csvOf([['email', 'studyKey', 'status', 'invitedAt'], ...people.map((person, index) => [person.email!, `K${index % 2}`, 'INVITED', '2025-02-01'])]);
    const backfillId = await upload(tenant, csv);
    let crashes = 0;
    const crashing = backfillRunner({
      batchSize: 2,
      afterBatch: (_, batch) => {
        if (batch === 2 && crashes++ === 0) throw new Error('crash after the second batch');
      },
    });
    await crashing.runDue({ workspaceId: tenant.workspaceId });
    expect(await read(tenant, backfillId)).toMatchObject({ status: 'RUNNING', rowsTotal: 4, rowsWritten: 4 });
    expect(await participantsOf(tenant)).toBe(4);
    // The retry (its backoff over) resumes after the fourth row.
    await service.deps.db.updateTable('jobs').set({ run_after: new Date(0).toISOString() }).where('workspace_id', '=', tenant.workspaceId).execute();
    await crashing.runDue({ workspaceId: tenant.workspaceId });
    expect(await read(tenant, backfillId)).toMatchObject({ status: 'COMPLETED', rowsTotal: 7, rowsWritten: 7, rowsSkipped: 0, studiesCreated: 2 });
    expect(await participantsOf(tenant)).toBe(7);
    // The trail: the service completed it, once, after the crash and the retry.
    expect(await auditEntriesOf(service.deps.db, tenant.workspaceId, 'completeBackfill')).toEqual([{ actor_kind: 'SERVICE', actor_service: 'backfills.run', resource_type: 'backfill', resource_id: backfillId, after_state: 'COMPLETED' }]);
  });

  it('stops FAILED where the file stops being valid CSV; the rows before it stay written', async () => {
    const tenant = await createTenant(service);
    const [ada, bob] = await Promise.all([createPerson(service, tenant), createPerson(service, tenant)]);
    const csv = `email,studyKey,status,invitedAt\n${ada!.email},K,INVITED,2025-02-01\n${bob!.email},"K,INVITED,2025-02-01\n`;
    const backfillId = await upload(tenant, csv);
    await backfillRunner({}).runDue({ workspaceId: tenant.workspaceId });
    const view = await read(tenant, backfillId);
    expect(view).toMatchObject({ status: 'FAILED', rowsWritten: 1, rowsFailed: 1 });
    expect(view.failureReason).toMatch(/stops being valid CSV at row 3/);
    const errors = (await call(service, 'GET', `/backfills/${backfillId}/errors`, { token: tenant.token })).json<{ results: { row: number; message: string }[] }>().results;
    expect(errors).toEqual([{ row: 3, message: expect.stringContaining('opens a quote that is never closed') }]);
  });
});
