import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, storeKind, type Tenant, type TestService } from '../../../test/harness.js';
import { createPerson } from '../../../test/people-factory.js';

/**
 * Searches answered by the counts while people are written at the same time: searches that wait
 * for the workspace's lock together share one catch-up and one transaction (index.ts, `locked`).
 * Each answer's total and its rows come from one snapshot, so with every match on the page the
 * total is the number of rows, whatever the writes in between; and none fails.
 */
describe('search counts under concurrent writes', () => {
  let service: TestService;
  let tenant: Tenant;
  beforeAll(async () => {
    service = await startTestService();
    tenant = await createTenant(service, 'Concurrent counts');
    for (let index = 0; index < 20; index++) await createPerson(service, tenant);
  });
  afterAll(async () => service.stop());

  const search = async () => {
    const response = await call(service, 'POST', '/people/search', { token: tenant.token, body: { pageInfo: { size: 100 } } });
    expect(response.statusCode, response.body).toBe(200);
    const page = response.json<{ total: number; results: unknown[] }>();
    return { total: page.total, rows: page.results.length, countedBy: String(response.headers['server-timing'] ?? '') };
  };

  it('answers each search with a total and rows of one snapshot, shared catch-ups included', async () => {
    const counts = service.deps.counts!;
    // Until the counts answer (the first search prepares them in the background).
    for (let round = 0; round < 20 && !(await search()).countedBy.includes('counts'); round++) await counts.settled();
    const before = { ...counts.paths };
    const people = [];
    const answers = await Promise.all(
      Array.from({ length: 60 }, async (_, index) => {
        if (index % 2 === 0) {
          people.push(await createPerson(service, tenant));
          return undefined;
        }
        return search();
      }),
    );
    const searched = answers.filter((answer) => answer !== undefined);
    expect(searched).toHaveLength(30);
    for (const answer of searched) expect(answer.total).toBe(answer.rows);
    expect(searched.filter((answer) => answer.countedBy.includes('counts')).length).toBeGreaterThan(0);
    expect(counts.paths.locked + counts.paths.lockFree).toBeGreaterThan(before.locked + before.lockFree);
    expect((await search()).total).toBe(20 + people.length);
    // On PostgreSQL searches run side by side, and those waiting for a catch-up join it (the embedded store runs one transaction at a time).
    if (storeKind === 'postgres') expect(counts.paths.joined).toBeGreaterThan(before.joined);
  });
});
