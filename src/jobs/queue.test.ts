import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from '../../test/harness.js';
import { createClock } from '../clock.js';
import { inTransaction } from '../db/transaction.js';
import { backoffDelaySeconds, enqueueJob, MAX_BACKOFF_SECONDS, SYSTEM_WORKSPACE_ID } from './queue.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service.stop());

const clock = createClock();
clock.set(new Date('2027-03-01T00:00:00.000Z'));
const uniqueQueue = (name: string) => `test.${name}.${randomUUID().slice(0, 8)}`;
const jobRow = (jobId: string) => service.deps.db.selectFrom('jobs').selectAll().where('job_id', '=', jobId).executeTakeFirst();

describe('enqueueJob', () => {
  it('stores a queued job, due now by the clock unless told otherwise', async () => {
    const queue = uniqueQueue('enqueue');
    const { jobId, created } = await enqueueJob(service.deps.db, clock, { queue, workspaceId: 'wsp_a', payload: { personId: 'per_1', n: 2 } });
    expect(created).toBe(true);
    expect(jobId).toMatch(/^job_[0-9A-Z]{26}$/);
    expect(await jobRow(jobId)).toMatchObject({
      workspace_id: 'wsp_a',
      queue,
      payload: { personId: 'per_1', n: 2 },
      state: 'queued',
      singleton_key: null,
      run_after: '2027-03-01T00:00:00.000Z',
      attempts: 0,
      max_attempts: 5,
      backoff_seconds: 30,
      lease_token: null,
      locked_until: null,
      result: null,
      last_error: null,
      created_at: '2027-03-01T00:00:00.000Z',
    });
    const later = await enqueueJob(service.deps.db, clock, { queue, workspaceId: 'wsp_a', runAfter: new Date('2027-03-02T10:00:00.000Z'), maxAttempts: 2, backoffSeconds: 0 });
    expect(await jobRow(later.jobId)).toMatchObject({ run_after: '2027-03-02T10:00:00.000Z', max_attempts: 2, backoff_seconds: 0, payload: {} });
  });

  it('enqueues a singleton key once per workspace and queue, answering the first job', async () => {
    const queue = uniqueQueue('singleton');
    const key = 'purge:per_1';
    const first = await enqueueJob(service.deps.db, clock, { queue, workspaceId: 'wsp_a', singletonKey: key, payload: { v: 1 } });
    const again = await enqueueJob(service.deps.db, clock, { queue, workspaceId: 'wsp_a', singletonKey: key, payload: { v: 2 } });
    expect(again).toEqual({ jobId: first.jobId, created: false });
    expect((await jobRow(first.jobId))?.payload).toEqual({ v: 1 });

    const otherWorkspace = await enqueueJob(service.deps.db, clock, { queue, workspaceId: 'wsp_b', singletonKey: key });
    const otherQueue = await enqueueJob(service.deps.db, clock, { queue: `${queue}.other`, workspaceId: 'wsp_a', singletonKey: key });
    const system = await enqueueJob(service.deps.db, clock, { queue, workspaceId: SYSTEM_WORKSPACE_ID, singletonKey: key });
    expect(new Set([first.jobId, otherWorkspace.jobId, otherQueue.jobId, system.jobId]).size).toBe(4);
    expect([otherWorkspace.created, otherQueue.created, system.created]).toEqual([true, true, true]);

    const count = await service.deps.db
      .selectFrom('jobs')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where('queue', '=', queue)
      .where('singleton_key', '=', key)
      .executeTakeFirstOrThrow();
    expect(Number(count.count)).toBe(3);
  });

  it('enqueues the same singleton key from concurrent callers once', async () => {
    const queue = uniqueQueue('singleton-race');
    const outcomes = await Promise.all(
      Array.from({ length: 8 }, () => enqueueJob(service.deps.db, clock, { queue, workspaceId: 'wsp_a', singletonKey: 'slot' })),
    );
    expect(outcomes.filter((outcome) => outcome.created)).toHaveLength(1);
    expect(new Set(outcomes.map((outcome) => outcome.jobId)).size).toBe(1);
  });

  it('belongs to the transaction it is enqueued in', async () => {
    const queue = uniqueQueue('transactional');
    let jobId = '';
    await expect(
      inTransaction(service.deps.db, async (transaction) => {
        jobId = (await enqueueJob(transaction, clock, { queue, workspaceId: 'wsp_a' })).jobId;
        throw new Error('the request failed after enqueuing');
      }),
    ).rejects.toThrow('the request failed');
    expect(jobId).not.toBe('');
    expect(await jobRow(jobId)).toBeUndefined();
  });

  it('refuses a payload with the NUL character and impossible attempt settings', async () => {
    const queue = uniqueQueue('refused');
    await expect(enqueueJob(service.deps.db, clock, { queue, workspaceId: 'wsp_a', payload: { name: 'a\u0000b' } })).rejects.toThrow(/NUL/);
    await expect(enqueueJob(service.deps.db, clock, { queue, workspaceId: 'wsp_a', maxAttempts: 0 })).rejects.toThrow(/maxAttempts/);
    await expect(enqueueJob(service.deps.db, clock, { queue, workspaceId: 'wsp_a', backoffSeconds: -1 })).rejects.toThrow(/backoffSeconds/);
    const count = await service.deps.db.selectFrom('jobs').select('job_id').where('queue', '=', queue).execute();
    expect(count).toEqual([]);
  });
});

describe('backoffDelaySeconds', () => {
  it('doubles from the base delay after each failed attempt, up to the cap', () => {
    expect([1, 2, 3, 4].map((attempt) => backoffDelaySeconds(30, attempt))).toEqual([30, 60, 120, 240]);
    expect(backoffDelaySeconds(0, 5)).toBe(0);
    expect(backoffDelaySeconds(30, 40)).toBe(MAX_BACKOFF_SECONDS);
  });
});
