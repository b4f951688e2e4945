import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, callTestHelper, createTenant, storeKind, type Tenant, type TestService, startTestService } from '../../../test/harness.js';
import { createPerson } from '../../../test/people-factory.js';
import { addParticipants, createStudy } from '../../../test/participants-factory.js';
import { describeSecurity } from '../../../test/security.js';
import { idPrefixes, newId } from '../../ids.js';
import type { AuditEvent } from './schemas.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service.stop());

interface EventPage {
  results: AuditEvent[];
  pageInfo: { hasNextPage: boolean; endCursor: string };
}
const read = async (tenant: Tenant, query: Record<string, string> = {}, token = tenant.token) => {
  const response = await call(service, 'GET', '/audit-events', { token, query });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<EventPage>();
};
/** Every entry of the workspace, oldest first, straight from the table (after the recorder's flush). */
const rowsOf = async (tenant: Tenant) => {
  await service.audit.flush();
  return service.deps.db.selectFrom('audit_events').selectAll().where('workspace_id', '=', tenant.workspaceId).orderBy('occurred_at').orderBy('audit_event_id').execute();
};

describe('recording', () => {
  it('records one entry per successful write: its actor (user and key), operation, resource, request id, and a status before and after', async () => {
    const tenant = await createTenant(service);
    const researcher = await tenant.tokenFor('RESEARCHER');
    const person = await createPerson(service, tenant, { email: 'audit.one@example.test' });
    const studyId = await createStudy(service, tenant, { studyType: 'INTERVIEWS', launch: true });
    const [participant] = await addParticipants(service, tenant, studyId, [person.personId]);
    const patched = await call(service, 'PATCH', `/studies/${studyId}/participants/${participant!.participantId}`, { token: researcher.token, body: { status: 'INVITED' }, headers: { 'x-request-id': 'audit-test-request-1' } });
    expect(patched.statusCode, patched.body).toBe(200);

    const rows = await rowsOf(tenant);
    expect(rows.map((row) => [row.operation_id, row.resource_type, row.resource_id])).toEqual([
      ['createPerson', 'person', person.personId],
      ['createStudy', 'study', studyId],
      ['launchStudy', 'study', studyId],
      ['addParticipants', 'study', studyId],
      ['updateParticipant', 'participant', participant!.participantId],
    ]);
    const tokenId = (await service.deps.db.selectFrom('api_tokens').select('token_id').where('user_id', '=', researcher.userId).executeTakeFirstOrThrow()).token_id;
    expect(rows[4]).toMatchObject({
      actor_kind: 'USER',
      actor_user_id: researcher.userId,
      actor_credential_id: tokenId,
      method: 'PATCH',
      request_id: 'audit-test-request-1',
      status_code: 200,
      before_state: 'NOT_STARTED',
      after_state: 'INVITED',
    });
    // POST /studies answers only the new id: no state to read (GET /study-status-events has its DRAFT).
    expect(rows[1]).toMatchObject({ actor_user_id: tenant.userId, before_state: null, after_state: null });
    expect(rows[2]).toMatchObject({ before_state: 'DRAFT', after_state: 'ACTIVE' });
  });

  it('records nothing for a failed write, a search (a POST that reads) or a read', async () => {
    const tenant = await createTenant(service);
    expect((await call(service, 'POST', '/studies', { token: tenant.token, body: { studyType: 'NOPE' } })).statusCode).toBe(400);
    expect((await call(service, 'PATCH', `/studies/${newId('stu')}`, { token: tenant.token, body: { studyPlan: { name: 'x' } } })).statusCode).toBe(404);
    expect((await call(service, 'POST', '/people/search', { token: tenant.token, body: {} })).statusCode).toBe(200);
    expect((await call(service, 'GET', '/studies', { token: tenant.token })).statusCode).toBe(200);
    expect(await rowsOf(tenant)).toEqual([]);
  });

  it('records a replayed Idempotency-Key request once', async () => {
    const tenant = await createTenant(service);
    const send = () => call(service, 'POST', '/segments', { token: tenant.token, body: { name: 'Once', filter: { filters: [] } }, headers: { 'idempotency-key': 'audit-once' } });
    expect((await send()).statusCode).toBe(201);
    const again = await send();
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect((await rowsOf(tenant)).map((row) => row.operation_id)).toEqual(['createSegment']);
  });

  it("names a person on a public form as PARTICIPANT, in the form's workspace", async () => {
    const tenant = await createTenant(service);
    const { populationId } = (await call(service, 'POST', '/populations', { token: tenant.token, body: { name: 'Panel' } })).json<{ populationId: string }>();
    const form = (await call(service, 'POST', '/signups', { token: tenant.token, body: { name: 'Join', populationId } })).json<{ signupFormId: string }>();
    const sent = await service.app.inject({ method: 'POST', url: `/v1/public/signups/${form.signupFormId}/submissions`, payload: { email: 'audit.public@example.test', firstName: 'Pat' } });
    expect(sent.statusCode, sent.body).toBe(201);
    const last = (await rowsOf(tenant)).at(-1)!;
    expect(last).toMatchObject({ actor_kind: 'PARTICIPANT', actor_user_id: null, operation_id: 'submitSignupForm', resource_type: 'signupSubmission', resource_id: sent.json<{ submissionId: string }>().submissionId });
  });

  it("names the person on a participant's page as PARTICIPANT, with their participation", async () => {
    const tenant = await createTenant(service);
    const person = await createPerson(service, tenant, { email: 'audit.page@example.test' });
    const studyId = await createStudy(service, tenant, { studyType: 'INTERVIEWS', screener: true, launch: true });
    const [participant] = await addParticipants(service, tenant, studyId, [person.personId]);
    const link = await call(service, 'POST', `/studies/${studyId}/participants/${participant!.participantId}/links`, { token: tenant.token, body: { purpose: 'SCREENER' } });
    expect(link.statusCode, link.body).toBe(201);
    const path = new URL(link.json<{ url: string }>().url).pathname;
    const html = (await service.app.inject({ method: 'GET', url: path })).body;
    const field = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)![1]!;
    const question = /name="(q_[^"]+)"/.exec(html)![1]!;
    const sent = await service.app.inject({
      method: 'POST',
      url: path,
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' },
      payload: new URLSearchParams({ formToken: field('formToken'), startedAt: field('startedAt'), [question]: 'Weekly' }).toString(),
    });
    expect(sent.statusCode, sent.body).toBeLessThan(400);
    const last = (await rowsOf(tenant)).at(-1)!;
    expect(last).toMatchObject({ actor_kind: 'PARTICIPANT', actor_person_id: person.personId, actor_user_id: null, operation_id: 'POST /p/:token', resource_type: 'participant', resource_id: participant!.participantId });
    // The screener state's move is the person's in the status events too.
    const events = await service.deps.db.selectFrom('participant_status_events').select(['field', 'actor_kind']).where('workspace_id', '=', tenant.workspaceId).where('field', '=', 'screenerState').where('to_value', '=', 'SUBMITTED').execute();
    expect(events).toEqual([{ field: 'screenerState', actor_kind: 'PARTICIPANT' }]);
  });

  it('holds no personal data: after a person is written and deleted, none of their values is in the trail', async () => {
    const tenant = await createTenant(service);
    const email = `erin.${Date.now().toString(36)}@example.test`;
    const person = await createPerson(service, tenant, { email, firstName: 'Erinna', lastName: 'Quillfeather', phone: '+442079460123' });
    expect((await call(service, 'PATCH', `/people/${person.personId}`, { token: tenant.token, body: { lastName: 'Marchbanks' } })).statusCode).toBe(200);
    expect((await call(service, 'PUT', `/people/${encodeURIComponent(email)}/opted-out`, { token: tenant.token, body: { isOptedOut: true } })).statusCode).toBe(200);
    expect((await call(service, 'POST', '/people/delete', { token: tenant.token, body: { emails: [email] } })).statusCode).toBe(200);
    const rows = await rowsOf(tenant);
    expect(rows.length).toBe(4);
    const text = JSON.stringify(rows).toLowerCase();
    for (const value of [email, 'erinna', 'quillfeather', 'marchbanks', '2079460123']) expect(text).not.toContain(value.toLowerCase());
    // The opt-out named its person by email in the path: the entry keeps the id the answer gave, never the address.
    expect(rows[2]).toMatchObject({ operation_id: 'setPersonOptedOut', resource_type: 'person', resource_id: person.personId });
  });
});

describe('GET /audit-events', () => {
  it('pages newest first with a cursor, filters by actor, kind, resource, operation and time, and shows no other workspace', async () => {
    const tenant = await createTenant(service);
    const other = await createTenant(service, 'Other');
    const ops = await tenant.tokenFor('OPS_MANAGER');
    const first = await createStudy(service, tenant, { studyType: 'SURVEY' });
    const second = await createStudy(service, tenant, { studyType: 'SURVEY' });
    expect((await call(service, 'POST', `/studies/${second}/launch`, { token: ops.token })).statusCode).toBe(200);
    await createStudy(service, other, { studyType: 'SURVEY' });

    const all = await read(tenant, {}, ops.token);
    expect(all.results.map((event) => [event.operationId, event.resourceId])).toEqual([
      ['launchStudy', second],
      ['createStudy', second],
      ['createStudy', first],
    ]);
    expect(all.results[0]).toMatchObject({ actor: { kind: 'USER', userId: ops.userId, credentialId: expect.stringMatching(/^tok_/), personId: null, service: null }, before: 'DRAFT', after: 'ACTIVE', method: 'POST', statusCode: 200 });

    const pageOne = await read(tenant, { size: '2' });
    expect(pageOne.pageInfo.hasNextPage).toBe(true);
    const pageTwo = await read(tenant, { size: '2', startCursor: pageOne.pageInfo.endCursor });
    expect([...pageOne.results, ...pageTwo.results].map((event) => event.auditEventId)).toEqual(all.results.map((event) => event.auditEventId));
    expect(pageTwo.pageInfo.hasNextPage).toBe(false);

    expect((await read(tenant, { actorUserId: ops.userId })).results.map((event) => event.operationId)).toEqual(['launchStudy']);
    expect((await read(tenant, { actorKind: 'PARTICIPANT' })).results).toEqual([]);
    expect((await read(tenant, { resourceType: 'study', resourceId: first })).results.map((event) => event.resourceId)).toEqual([first]);
    expect((await read(tenant, { operationId: 'createStudy' })).results).toHaveLength(2);
    const launchedAt = all.results[0]!.occurredAt;
    expect((await read(tenant, { from: launchedAt })).results.map((event) => event.operationId)).toEqual(['launchStudy']);
    expect((await read(tenant, { to: launchedAt })).results).toHaveLength(2);
    expect((await read(other)).results.map((event) => event.operationId)).toEqual(['createStudy']);
  });

  it('refuses a bad filter or cursor, naming the parameter', async () => {
    const tenant = await createTenant(service);
    const other = await createTenant(service, 'Other');
    await createStudy(service, tenant, { studyType: 'SURVEY' });
    await createStudy(service, tenant, { studyType: 'SURVEY' });
    const cursor = (await read(tenant, { size: '1' })).pageInfo.endCursor;
    const refused = async (query: Record<string, string>, path: string, token = tenant.token) => {
      const response = await call(service, 'GET', '/audit-events', { token, query });
      expect(response.statusCode, JSON.stringify(query)).toBe(400);
      expect(response.json<{ errors: { path: string[] }[] }>().errors[0]!.path).toEqual([path]);
    };
    await refused({ actorKind: 'ROBOT' }, 'actorKind');
    await refused({ size: '0' }, 'size');
    await refused({ from: 'yesterday' }, 'from');
    await refused({ from: '2026-02-01T00:00:00.000Z', to: '2026-01-01T00:00:00.000Z' }, 'from');
    await refused({ startCursor: cursor, operationId: 'createStudy' }, 'startCursor');
    await refused({ startCursor: cursor }, 'startCursor', other.token);
  });

  it.runIf(storeKind === 'postgres')('reads by actor, by resource and by time through their indexes (EXPLAIN)', async () => {
    // The plans are read against statistics of a trail like a workspace's: 6,000 entries over 30
    // days by 120 actors on 300 resources, analyzed in a transaction that is rolled back. On the
    // run's own few rows the planner's costs tie, and it may take any of the indexes.
    const workspace = 'wsp_00000000000000000000000000';
    const plan = async (query: ReturnType<typeof sql>) => {
      let text = '';
      await service.deps.db
        .transaction()
        .execute(async (trx) => {
          await sql`
            insert into audit_events (workspace_id, audit_event_id, occurred_at, actor_kind, actor_user_id, operation_id, resource_type, resource_id)
            select ${workspace}, 'aud_plan_' || n, now() - (n % 43200) * interval '1 minute', 'USER', 'usr_' || (n % 120), 'updateStudy', 'study', 'stu_' || (n % 300)
            from generate_series(1, 6000) as n`.execute(trx);
          await sql`analyze audit_events`.execute(trx);
          await sql`set local enable_seqscan = off`.execute(trx);
          const { rows } = await sql<{ 'QUERY PLAN': string }>`explain ${query}`.execute(trx);
          text = rows.map((row) => row['QUERY PLAN']).join('\n');
          throw new RolledBack();
        })
        .catch((error: unknown) => {
          if (!(error instanceof RolledBack)) throw error;
        });
      return text;
    };
    expect(await plan(sql`select * from audit_events where workspace_id = ${workspace} and actor_user_id = 'usr_7' order by occurred_at desc, audit_event_id desc limit 26`)).toMatch(/Index Scan (using|on) audit_events_by_actor\b/);
    expect(await plan(sql`select * from audit_events where workspace_id = ${workspace} and resource_type = 'study' and resource_id = 'stu_7' order by occurred_at desc, audit_event_id desc limit 26`)).toMatch(/Index Scan (using|on) audit_events_by_resource\b/);
    expect(await plan(sql`select * from audit_events where workspace_id = ${workspace} and occurred_at >= now() - interval '1 day' order by occurred_at desc, audit_event_id desc limit 26`)).toMatch(/Index Scan (using|on) audit_events_by_time\b/);
  });
});

describe('retention', () => {
  it('GET answers the default, PUT sets it within its bounds', async () => {
    const tenant = await createTenant(service);
    expect((await call(service, 'GET', '/audit-settings', { token: tenant.token })).json()).toEqual({ retentionDays: 365, updatedAt: null });
    const set = await call(service, 'PUT', '/audit-settings', { token: tenant.token, body: { retentionDays: 30 } });
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json()).toEqual({ retentionDays: 30, updatedAt: expect.any(String) });
    for (const retentionDays of [6, 3651, 1.5]) {
      const refused = await call(service, 'PUT', '/audit-settings', { token: tenant.token, body: { retentionDays } });
      expect(refused.statusCode).toBe(400);
      expect(refused.json<{ errors: { path: string[]; message: string }[] }>().errors[0]).toMatchObject({ path: ['retentionDays'] });
    }
    expect((await call(service, 'GET', '/audit-settings', { token: tenant.token })).json()).toMatchObject({ retentionDays: 30 });
  });

  it("the audit.prune job deletes entries older than each workspace's retention, in batches", async () => {
    const tenant = await createTenant(service);
    const other = await createTenant(service, 'Other');
    expect((await call(service, 'PUT', '/audit-settings', { token: tenant.token, body: { retentionDays: 7 } })).statusCode).toBe(200);
    const now = service.deps.clock.now().getTime();
    const day = 24 * 60 * 60 * 1000;
    const old = (workspaceId: string, ageDays: number) => ({
      workspace_id: workspaceId,
      audit_event_id: newId(idPrefixes.auditEvent),
      occurred_at: new Date(now - ageDays * day).toISOString(),
      actor_kind: 'SERVICE' as const,
      actor_service: 'test',
      operation_id: 'test',
    });
    await service.deps.db
      .insertInto('audit_events')
      .values([...Array.from({ length: 1005 }, () => old(tenant.workspaceId, 8)), old(tenant.workspaceId, 6), old(other.workspaceId, 8), old(other.workspaceId, 400)])
      .execute();
    // The schedule's sweep, run scoped to one workspace as the test helper runs it.
    const runs = await callTestHelper(service, 'POST', '/jobs/run', { query: { workspaceId: tenant.workspaceId } });
    expect(runs.statusCode, runs.body).toBe(200);
    expect(runs.json<{ jobs: { queue: string; outcome: string }[] }>().jobs.filter((job) => job.queue === 'audit.prune').map((job) => job.outcome)).toEqual(['completed']);
    const remaining = async (workspaceId: string) =>
      (await service.deps.db.selectFrom('audit_events').select('occurred_at').where('workspace_id', '=', workspaceId).where('operation_id', '=', 'test').execute()).length;
    expect(await remaining(tenant.workspaceId)).toBe(1);
    await callTestHelper(service, 'POST', '/jobs/run', { query: { workspaceId: other.workspaceId } });
    expect(await remaining(other.workspaceId)).toBe(1);
  });
});

describeSecurity('GET /audit-events', () => service, {
  method: 'GET',
  right: 'audit:read',
  addressesResource: false,
  request: async () => ({ url: '/audit-events' }),
});
describeSecurity('GET /audit-settings', () => service, {
  method: 'GET',
  right: 'audit:read',
  addressesResource: false,
  request: async () => ({ url: '/audit-settings' }),
});
describeSecurity('PUT /audit-settings', () => service, {
  method: 'PUT',
  right: 'audit:manage',
  addressesResource: false,
  request: async () => ({ url: '/audit-settings', body: { retentionDays: 90 } }),
});

class RolledBack extends Error {}
