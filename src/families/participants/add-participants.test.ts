import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, type Tenant, type TestService, uniqueEmail } from '../../../test/harness.js';
import { createPerson } from '../../../test/people-factory.js';
import { addParticipants, createStudy, participantRow, type ParticipantResponse } from '../../../test/participants-factory.js';
import { describeSecurity } from '../../../test/security.js';
import { idPrefixes, newId } from '../../ids.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service.stop());

const add = (tenant: Tenant, studyId: string, body: unknown, token = tenant.token) => call(service, 'POST', `/studies/${studyId}/participants`, { token, body });

type AddResponse = { results: ParticipantResponse[]; errors: { message: string; path: string[] }[] };

async function participantCount(tenant: Tenant, studyId: string) {
  const row = await service.deps.db
    .selectFrom('participants')
    .where('workspace_id', '=', tenant.workspaceId)
    .where('study_id', '=', studyId)
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

describe('POST /studies/{studyId}/participants', () => {
  it('adds people as NOT_STARTED, PENDING_REVIEW, NOT_SENT, in the order given, with their contact details', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(service, tenant, { studyType: 'GROUP_INTERVIEW' });
    const first = await createPerson(service, tenant, { phone: '+44 1', additionalEmails: ['second@example.org'], additionalPhones: ['+44 2'] });
    const second = await createPerson(service, tenant);
    service.deps.clock.set(new Date('2026-11-22T10:00:00.000Z'));
    try {
      const response = await add(tenant, studyId, { personIds: [second.personId, first.personId] });
      expect(response.statusCode, response.body).toBe(200);
      const body = response.json<AddResponse>();
      expect(body.errors).toEqual([]);
      expect(body.results.map((participant) => participant.personId)).toEqual([second.personId, first.personId]);
      expect(body.results[1]).toEqual({
        participantId: expect.stringMatching(/^ptc_/),
        personId: first.personId,
        studyId,
        email: first.email,
        phone: '+44 1',
        additionalEmails: ['second@example.org'],
        additionalPhones: ['+44 2'],
        status: 'NOT_STARTED',
        statusBeforeHidden: null,
        invitedToStudyAt: null,
        approvedAt: null,
        screenerSentAt: null,
        testCompletedAt: null,
        interviewStartTime: null,
        screenerResponseDate: null,
        addedToStudyAt: '2026-11-22T10:00:00.000Z',
        approvalStatus: 'PENDING_REVIEW',
        screenerState: 'NOT_SENT',
        note: null,
        rating: null,
        quotaGroup: null,
        consentFormSubmittedAt: null,
      });
      const row = await participantRow(service, tenant, body.results[0]!.participantId);
      expect(row).toMatchObject({ study_kind: 'INTERVIEW', added_by_user_id: tenant.userId, no_show_count: 0, completed_at: null, updated_at: '2026-11-22T10:00:00.000Z' });
    } finally {
      service.deps.clock.reset();
    }
  });

  it('records the study kind of every study type', async () => {
    const tenant = await createTenant(service);
    const person = await createPerson(service, tenant);
    const kinds: Record<string, string> = { INTERVIEWS: 'INTERVIEW', GROUP_INTERVIEW: 'INTERVIEW', UNMODERATED_TEST: 'UNMODERATED_TEST', SURVEY: 'SURVEY' };
    for (const [studyType, kind] of Object.entries(kinds)) {
      const studyId = await createStudy(service, tenant, { studyType: studyType as 'SURVEY' });
      const [participant] = await addParticipants(service, tenant, studyId, [person.personId]);
      expect((await participantRow(service, tenant, participant!.participantId)).study_kind, studyType).toBe(kind);
    }
  });

  it('adds to DRAFT, ACTIVE and PAUSED studies', async () => {
    const tenant = await createTenant(service);
    const person = await createPerson(service, tenant);
    const draft = await createStudy(service, tenant, { studyType: 'SURVEY' });
    const active = await createStudy(service, tenant, { studyType: 'SURVEY', launch: true });
    const paused = await createStudy(service, tenant, { studyType: 'SURVEY', launch: true });
    expect((await call(service, 'POST', `/studies/${paused}/status`, { token: tenant.token, body: { status: 'PAUSED' } })).statusCode).toBe(200);
    for (const studyId of [draft, active, paused]) expect(await addParticipants(service, tenant, studyId, [person.personId])).toHaveLength(1);
  });

  it('reports each person it cannot add as an error item naming the index, and adds the others', async () => {
    const tenant = await createTenant(service);
    const stranger = await createTenant(service, 'Other workspace');
    const studyId = await createStudy(service, tenant, { studyType: 'INTERVIEWS' });
    const fine = await createPerson(service, tenant);
    const alsoFine = await createPerson(service, tenant);
    const optedOut = await createPerson(service, tenant);
    expect((await call(service, 'PUT', `/people/${optedOut.personId}/opted-out`, { token: tenant.token, body: { isOptedOut: true } })).statusCode).toBe(200);
    const deleted = await createPerson(service, tenant);
    expect((await call(service, 'DELETE', `/people/${deleted.personId}`, { token: tenant.token })).statusCode).toBe(200);
    const elsewhere = await createPerson(service, stranger);
    const already = await createPerson(service, tenant);
    await addParticipants(service, tenant, studyId, [already.personId]);

    const response = await add(tenant, studyId, {
      personIds: [fine.personId, optedOut.personId, deleted.personId, 'per_unknown', elsewhere.personId, already.personId, fine.personId, alsoFine.personId, 'per_unknown'],
    });
    expect(response.statusCode, response.body).toBe(200);
    const body = response.json<AddResponse>();
    expect(body.results.map((participant) => participant.personId)).toEqual([fine.personId, alsoFine.personId]);
    expect(body.errors).toEqual([
      { message: 'The person has opted out and cannot be added to a study', path: ['personIds', '1'] },
      { message: 'Person not found', path: ['personIds', '2'] },
      { message: 'Person not found', path: ['personIds', '3'] },
      { message: 'Person not found', path: ['personIds', '4'] },
      { message: 'The person already takes part in this study', path: ['personIds', '5'] },
      { message: 'The person is already listed at personIds/0', path: ['personIds', '6'] },
      { message: 'The person is already listed at personIds/3', path: ['personIds', '8'] },
    ]);
    expect(await participantCount(tenant, studyId)).toBe(3);
  });

  it('answers 200 with only error items when nobody can be added', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(service, tenant, { studyType: 'SURVEY' });
    const response = await add(tenant, studyId, { personIds: ['per_unknown'] });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ results: [], errors: [{ message: 'Person not found', path: ['personIds', '0'] }] });
  });

  it('adds 1000 people in one request and refuses 1001 or none (400)', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(service, tenant, { studyType: 'SURVEY' });
    // 1000 people inserted in one statement: making them one request at a time would test nothing more.
    const at = new Date().toISOString();
    const personIds = Array.from({ length: 1000 }, () => newId(idPrefixes.person));
    await service.deps.db
      .insertInto('people')
      .values(personIds.map((personId) => ({ workspace_id: tenant.workspaceId, person_id: personId, email: uniqueEmail('bulk'), created_at: at, updated_at: at })))
      .execute();
    const response = await add(tenant, studyId, { personIds });
    expect(response.statusCode, response.body).toBe(200);
    const body = response.json<AddResponse>();
    expect(body.errors).toEqual([]);
    expect(body.results.map((participant) => participant.personId)).toEqual(personIds);
    expect(await participantCount(tenant, studyId)).toBe(1000);

    const tooMany = await add(tenant, studyId, { personIds: [...personIds, 'per_one_more'] });
    expect(tooMany.statusCode).toBe(400);
    expect(tooMany.json().errors[0].path).toEqual(['personIds']);
    const none = await add(tenant, studyId, { personIds: [] });
    expect(none.statusCode).toBe(400);
    expect(none.json().errors[0].path).toEqual(['personIds']);
  });

  it('refuses a body that is not {personIds: [string…]} (400 with the path)', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(service, tenant, { studyType: 'SURVEY' });
    const cases: [unknown, string[]][] = [
      [{}, ['personIds']],
      [{ personIds: ['per_1'], extra: true }, ['extra']],
      [{ personIds: [42] }, ['personIds', '0']],
      [{ personIds: [''] }, ['personIds', '0']],
      [{ personIds: 'per_1' }, ['personIds']],
    ];
    for (const [body, path] of cases) {
      const response = await add(tenant, studyId, body);
      expect(response.statusCode, JSON.stringify(body)).toBe(400);
      expect(response.json().errors[0].path, JSON.stringify(body)).toEqual(path);
    }
  });

  it('refuses a CLOSED study (409) and adds nobody', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(service, tenant, { studyType: 'SURVEY' });
    expect((await call(service, 'POST', `/studies/${studyId}/status`, { token: tenant.token, body: { status: 'CLOSED' } })).statusCode).toBe(200);
    const person = await createPerson(service, tenant);
    const response = await add(tenant, studyId, { personIds: [person.personId] });
    expect(response.statusCode).toBe(409);
    expect(response.json()).toEqual({ errors: [{ message: 'A CLOSED study takes no new participants', path: ['studyId'] }] });
    expect(await participantCount(tenant, studyId)).toBe(0);
  });

  it("answers 404 for an unknown study and for another workspace's", async () => {
    const tenant = await createTenant(service);
    const stranger = await createTenant(service, 'Other workspace');
    const person = await createPerson(service, tenant);
    const foreignStudy = await createStudy(service, stranger, { studyType: 'SURVEY' });
    for (const studyId of ['stu_unknown', foreignStudy]) {
      const response = await add(tenant, studyId, { personIds: [person.personId] });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({ errors: [{ message: 'Study not found', path: ['studyId'] }] });
    }
    expect(await participantCount(stranger, foreignStudy)).toBe(0);
  });

  it('adds a person once when two requests add them at the same time', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(service, tenant, { studyType: 'INTERVIEWS' });
    const person = await createPerson(service, tenant);
    const others = await Promise.all([createPerson(service, tenant), createPerson(service, tenant)]);
    const responses = await Promise.all(others.map((other) => add(tenant, studyId, { personIds: [person.personId, other.personId] })));
    const bodies = responses.map((response) => {
      expect(response.statusCode, response.body).toBe(200);
      return response.json<AddResponse>();
    });
    expect(bodies.flatMap((body) => body.results).filter((participant) => participant.personId === person.personId)).toHaveLength(1);
    expect(bodies.flatMap((body) => body.errors)).toEqual([{ message: 'The person already takes part in this study', path: ['personIds', '0'] }]);
    expect(await participantCount(tenant, studyId)).toBe(3);
  });

  it('masks contact details for a token without the personal-data right', async () => {
    const tenant = await createTenant(service);
    const studyId = await createStudy(service, tenant, { studyType: 'SURVEY' });
    const person = await createPerson(service, tenant, { phone: '+44 1', additionalEmails: ['x@example.org'], additionalPhones: ['+44 2'] });
    const { token } = await tenant.tokenFor('RESEARCHER', { canReadPersonalData: false });
    const response = await add(tenant, studyId, { personIds: [person.personId] }, token);
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json<AddResponse>().results[0]).toMatchObject({ email: '***@***', phone: '***', additionalEmails: ['***@***'], additionalPhones: ['***'] });
    expect(response.body).not.toContain(person.email);
  });
});

describeSecurity('POST /studies/{studyId}/participants', () => service, {
  method: 'POST',
  right: 'participants:write',
  addressesResource: true,
  request: async (tenant, svc) => {
    const studyId = await createStudy(svc, tenant, { studyType: 'SURVEY' });
    const person = await createPerson(svc, tenant);
    return { url: `/studies/${studyId}/participants`, body: { personIds: [person.personId] } };
  },
});
