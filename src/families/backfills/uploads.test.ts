import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type TestService } from '../../../test/harness.js';
import { postCsv as postImportCsv } from '../imports/test-support.js';
import { closeAbandonedBackfills } from '../people/purge.js';

// Issue 32 bounded the uploads a workspace and a process receive at once; a backfill is an upload too.
let service: TestService;
beforeAll(async () => {
  service = await startTestService({ importUploadsPerWorkspace: 1, importUploadsPerProcess: 2 });
});
afterAll(async () => service.stop());

const header = 'email,studyKey,status,invitedAt\n';
const postBackfill = (token: string, csv: string) => call(service, 'POST', '/backfills', { token, body: csv, headers: { 'content-type': 'text/csv' } });

describe('POST /backfills: uploads at once', () => {
  it('shares the people import\'s slots: while a workspace sends an import, its backfill is a 429 with Retry-After, and the slot comes back', async () => {
    const tenant = await createTenant(service);
    const importBody = new PassThrough();
    importBody.write('email,firstName\n');
    const importing = postImportCsv(service, tenant.token, importBody);
    await new Promise((resolve) => setTimeout(resolve, 100));

    const refused = await postBackfill(tenant.token, header);
    expect(refused.statusCode).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(await service.database.db.selectFrom('backfills').select('backfill_id').where('workspace_id', '=', tenant.workspaceId).execute()).toEqual([]);

    importBody.end('a@example.org,A\n');
    expect((await importing).statusCode).toBe(202);
    const taken = await postBackfill(tenant.token, header);
    expect(taken.statusCode, taken.body).toBe(202);
  });

  it('closes a backfill whose upload died a day ago and drops its stored file (it holds emails); one still arriving is left alone', async () => {
    const tenant = await createTenant(service);
    const db = service.database.db;
    const now = new Date();
    const insert = async (backfillId: string, updatedAt: Date) => {
      await db
        .insertInto('backfills')
        .values({ workspace_id: tenant.workspaceId, backfill_id: backfillId, status: 'RECEIVING', created_by_user_id: tenant.userId, created_at: updatedAt.toISOString(), updated_at: updatedAt.toISOString() })
        .execute();
      await db.insertInto('backfill_chunks').values({ workspace_id: tenant.workspaceId, backfill_id: backfillId, chunk_index: 0, data: Buffer.from(header + 'someone@example.org,K,INVITED,2025-01-01\n') }).execute();
    };
    await insert('bkf_died', new Date(now.getTime() - 25 * 60 * 60 * 1000));
    await insert('bkf_arriving', new Date(now.getTime() - 60 * 1000));

    expect(await closeAbandonedBackfills(db, { workspaceId: tenant.workspaceId })).toBe(1);
    const rows = await db.selectFrom('backfills').select(['backfill_id', 'status', 'failure_reason']).where('workspace_id', '=', tenant.workspaceId).orderBy('backfill_id').execute();
    expect(rows).toEqual([
      { backfill_id: 'bkf_arriving', status: 'RECEIVING', failure_reason: null },
      { backfill_id: 'bkf_died', status: 'FAILED', failure_reason: 'The upload was never finished' },
    ]);
    const chunks = await db.selectFrom('backfill_chunks').select('backfill_id').where('workspace_id', '=', tenant.workspaceId).execute();
    expect(chunks).toEqual([{ backfill_id: 'bkf_arriving' }]);
    // A second sweep finds nothing more to do.
    expect(await closeAbandonedBackfills(db, { workspaceId: tenant.workspaceId })).toBe(0);
  });
});
