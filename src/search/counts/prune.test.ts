import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type Tenant, type TestService, uniqueEmail } from '../../../test/harness.js';
import type { Job } from '../../jobs/queue.js';
import { pruneSearchChangesHandler, SEARCH_CHANGES_PRUNE_QUEUE } from './prune.js';

/** The change log is pruned after its retention; counts older than what was pruned rebuild instead of catching up. */
describe('pruning the search change log', () => {
  let service: TestService;
  let tenant: Tenant;

  beforeAll(async () => {
    service = await startTestService();
    tenant = await createTenant(service);
  });
  afterAll(async () => service?.stop());

  const job = (workspaceId: string): Job => ({
    jobId: 'job_prune_test',
    queue: SEARCH_CHANGES_PRUNE_QUEUE,
    workspaceId,
    payload: {},
    singletonKey: null,
    attempt: 1,
    maxAttempts: 1,
    signal: new AbortController().signal,
  });

  const createPerson = async () => {
    const response = await call(service, 'POST', '/people', { token: tenant.token, body: { email: uniqueEmail('pruned') } });
    expect(response.statusCode, response.body).toBe(201);
  };

  /** The search's total, and how its Server-Timing header says it was counted. */
  const counted = async () => {
    const response = await call(service, 'POST', '/people/search', { token: tenant.token, body: {} });
    expect(response.statusCode, response.body).toBe(200);
    return { total: response.json<{ total: number }>().total, by: /desc="(\w+)"/.exec(String(response.headers['server-timing']))?.[1] };
  };
  const total = async () => (await counted()).total;

  const changesOf = async (workspaceId: string) =>
    Number((await sql<{ count: string }>`select count(*) as count from search_changes where workspace_id = ${workspaceId}`.execute(service.deps.db)).rows[0]!.count);

  it('deletes changes past the retention only, and records how far it went', async () => {
    for (let index = 0; index < 3; index++) await createPerson();
    expect(await changesOf(tenant.workspaceId)).toBe(3);
    const handler = pruneSearchChangesHandler(service.deps.db);
    expect(await handler.run(job(tenant.workspaceId))).toEqual({ deleted: 0 });
    await sql`update search_changes set logged_at = now() - interval '2 hours' where workspace_id = ${tenant.workspaceId}`.execute(service.deps.db);
    await createPerson();
    expect(await handler.run(job(tenant.workspaceId))).toEqual({ deleted: 3 });
    expect(await changesOf(tenant.workspaceId)).toBe(1);
    const horizon = await sql<{ pruned_through: string }>`select cast(pruned_through as text) as pruned_through from search_change_horizons where workspace_id = ${tenant.workspaceId}`.execute(service.deps.db);
    expect(horizon.rows).toHaveLength(1);
  });

  it('makes counts that missed pruned changes rebuild, and the totals stay exact throughout', async () => {
    const counts = service.deps.counts!;
    const first = await counted();
    const before = first.total;
    expect(first.by).toBe('preparing');
    await counts.settled();
    expect(await counted()).toEqual({ total: before, by: 'counts' });
    const answeredByCounts = counts.answered.counts;
    expect(answeredByCounts).toBeGreaterThan(0);

    // Two people come in and their changes are pruned before this instance searches again.
    await createPerson();
    await createPerson();
    await sql`update search_changes set logged_at = now() - interval '2 hours' where workspace_id = ${tenant.workspaceId}`.execute(service.deps.db);
    await pruneSearchChangesHandler(service.deps.db).run(job(tenant.workspaceId));

    // The counts cannot catch up: SQL answers, exactly, while they rebuild; then they answer again.
    expect(await counted()).toEqual({ total: before + 2, by: 'preparing' });
    expect(counts.answered.counts).toBe(answeredByCounts);
    await counts.settled();
    expect(await total()).toBe(before + 2);
    expect(counts.answered.counts).toBe(answeredByCounts + 1);
  });
});
