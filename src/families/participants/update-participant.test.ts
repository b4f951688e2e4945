import { setTimeout as sleep } from 'node:timers/promises';
import type { KyselyPlugin } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { call, createTenant, startTestService, storeKind, type Tenant, type TestService } from '../../../test/harness.js';
import { createPerson } from '../../../test/people-factory.js';
import {
  addParticipants,
  createStudy,
  getParticipant,
  participantRow,
  patchParticipant,
  patchParticipantResponse,
  type StudyOptions,
  statusEventsOf,
} from '../../../test/participants-factory.js';
import { describeSecurity } from '../../../test/security.js';
import { lockParticipant } from './queries.js';

let service: TestService;
beforeAll(async () => {
  service = await startTestService();
});
afterAll(async () => service.stop());
afterEach(() => service.deps.clock.reset());

const START = '2026-12-01T10:00:00.000Z';
const setClock = (iso: string) => service.deps.clock.set(new Date(iso));

interface Fixture {
  tenant: Tenant;
  studyId: string;
  personId: string;
  participantId: string;
  patch(body: object, token?: string): ReturnType<typeof patchParticipantResponse>;
  ok(body: object): ReturnType<typeof patchParticipant>;
}

/** A tenant, a study of the options given, and one participant in it. */
async function fixture(options: StudyOptions, tenant?: Tenant): Promise<Fixture> {
  const owner = tenant ?? (await createTenant(service));
  const studyId = await createStudy(service, owner, options);
  const person = await createPerson(service, owner, { phone: '+44 1' });
  const [participant] = await addParticipants(service, owner, studyId, [person.personId]);
  const participantId = participant!.participantId;
  return {
    tenant: owner,
    studyId,
    personId: person.personId,
    participantId,
    patch: (body, token = owner.token) => patchParticipantResponse(service, owner, studyId, participantId, body, token),
    ok: (body) => patchParticipant(service, owner, studyId, participantId, body),
  };
}

async function expectConflict(response: Awaited<ReturnType<typeof patchParticipantResponse>>, message: string, path: string[]) {
  expect(response.statusCode, response.body).toBe(409);
  expect(response.json()).toEqual({ errors: [{ message, path }] });
}

const lastContactOf = async (tenant: Tenant, personId: string) =>
  (await service.deps.db.selectFrom('people').where('workspace_id', '=', tenant.workspaceId).where('person_id', '=', personId).select('last_contact_at').executeTakeFirstOrThrow())
    .last_contact_at;

const interview: StudyOptions = { studyType: 'INTERVIEWS', screener: true, launch: true };

describe('PATCH /studies/{studyId}/participants/{participantId}: rules', () => {
  it('keeps SCHEDULED and NO_SHOW to interview studies', async () => {
    for (const studyType of ['UNMODERATED_TEST', 'SURVEY'] as const) {
      const { patch } = await fixture({ studyType, launch: true });
      await expectConflict(await patch({ status: 'SCHEDULED', interviewStartTime: START }), `SCHEDULED applies to interview studies only; this study is ${studyType}`, ['status']);
    }
    const group = await fixture({ studyType: 'GROUP_INTERVIEW', launch: true });
    expect((await group.ok({ status: 'SCHEDULED', interviewStartTime: START })).status).toBe('SCHEDULED');
    expect((await group.ok({ status: 'NO_SHOW' })).status).toBe('NO_SHOW');
  });

  it('completes an interview from SCHEDULED only', async () => {
    const { patch, ok } = await fixture(interview);
    await ok({ status: 'INVITED' });
    await expectConflict(await patch({ status: 'COMPLETED' }), 'An interview is completed from SCHEDULED: schedule the session first', ['status']);
  });

  it('needs an interviewStartTime to schedule, and keeps it while scheduled', async () => {
    const { patch, ok } = await fixture(interview);
    await expectConflict(await patch({ status: 'SCHEDULED' }), 'SCHEDULED needs an interviewStartTime', ['interviewStartTime']);
    await expectConflict(await patch({ status: 'SCHEDULED', interviewStartTime: null }), 'SCHEDULED needs an interviewStartTime', ['interviewStartTime']);
    expect(await ok({ status: 'SCHEDULED', interviewStartTime: START })).toMatchObject({ status: 'SCHEDULED', interviewStartTime: START });
    await expectConflict(await patch({ interviewStartTime: null }), 'A SCHEDULED participant keeps an interviewStartTime: it cannot be cleared', ['interviewStartTime']);
    expect((await ok({ interviewStartTime: '2026-12-03T09:00:00+01:00' })).interviewStartTime).toBe('2026-12-03T08:00:00.000Z');
    await ok({ status: 'HIDDEN' });
    await expectConflict(await patch({ interviewStartTime: null }), 'A SCHEDULED participant keeps an interviewStartTime: it cannot be cleared', ['interviewStartTime']);
    await ok({ status: 'SCHEDULED' });
    expect(await ok({ status: 'CANCELED', interviewStartTime: null })).toMatchObject({ status: 'CANCELED', interviewStartTime: null });
  });

  it('schedules with a time stored earlier', async () => {
    const { ok } = await fixture(interview);
    await ok({ interviewStartTime: START });
    expect(await ok({ status: 'SCHEDULED' })).toMatchObject({ status: 'SCHEDULED', interviewStartTime: START });
  });

  it('reaches out (INVITED, SCHEDULED, SCREENER_SENT) only while the study is ACTIVE', async () => {
    const tenant = await createTenant(service);
    const draft = await fixture({ studyType: 'INTERVIEWS', screener: true }, tenant);
    for (const [body, path] of [
      [{ status: 'INVITED' }, 'status'],
      [{ status: 'SCHEDULED', interviewStartTime: START }, 'status'],
    ] as const) {
      const to = body.status.toLowerCase();
      await expectConflict(await draft.patch(body), `Participants can be ${to} only while the study is ACTIVE; it is DRAFT`, [path]);
    }
    await expectConflict(await draft.patch({ screenerState: 'SCREENER_SENT' }), 'A screener can be sent only while the study is ACTIVE; it is DRAFT', ['screenerState']);

    const paused = await fixture(interview, tenant);
    expect((await call(service, 'POST', `/studies/${paused.studyId}/status`, { token: tenant.token, body: { status: 'PAUSED' } })).statusCode).toBe(200);
    await expectConflict(await paused.patch({ status: 'INVITED' }), 'Participants can be invited only while the study is ACTIVE; it is PAUSED', ['status']);

    // Moves that reach nobody go on in a closed study: the sessions that took place are recorded.
    const closed = await fixture(interview, tenant);
    await closed.ok({ status: 'SCHEDULED', interviewStartTime: START });
    expect((await call(service, 'POST', `/studies/${closed.studyId}/status`, { token: tenant.token, body: { status: 'CLOSED' } })).statusCode).toBe(200);
    expect((await closed.ok({ status: 'COMPLETED', approvalStatus: 'APPROVED' })).status).toBe('COMPLETED');
    const other = await fixture(interview, tenant);
    expect((await call(service, 'POST', `/studies/${other.studyId}/status`, { token: tenant.token, body: { status: 'CLOSED' } })).statusCode).toBe(200);
    await expectConflict(await other.patch({ status: 'INVITED' }), 'Participants can be invited only while the study is ACTIVE; it is CLOSED', ['status']);
  });

  it('contacts nobody who opted out after being added', async () => {
    const { tenant, personId, patch, ok } = await fixture(interview);
    expect((await call(service, 'PUT', `/people/${personId}/opted-out`, { token: tenant.token, body: { isOptedOut: true } })).statusCode).toBe(200);
    await expectConflict(await patch({ status: 'INVITED' }), 'The person has opted out and cannot be contacted', ['status']);
    await expectConflict(await patch({ status: 'SCHEDULED', interviewStartTime: START }), 'The person has opted out and cannot be contacted', ['status']);
    await expectConflict(await patch({ screenerState: 'SCREENER_SENT' }), 'The person has opted out: no screener can be sent', ['screenerState']);
    expect((await ok({ status: 'CANCELED' })).status).toBe('CANCELED');
  });

  it('invites or schedules no REJECTED participant, counting an approval given in the same request', async () => {
    const { patch, ok, participantId, tenant } = await fixture(interview);
    await ok({ approvalStatus: 'REJECTED' });
    await expectConflict(await patch({ status: 'INVITED' }), 'A REJECTED participant cannot be invited', ['status']);
    await expectConflict(await patch({ status: 'SCHEDULED', interviewStartTime: START }), 'A REJECTED participant cannot be scheduled', ['status']);
    expect(await ok({ approvalStatus: 'APPROVED', status: 'INVITED' })).toMatchObject({ approvalStatus: 'APPROVED', status: 'INVITED' });
    await expectConflict(await patch({ approvalStatus: 'REJECTED', status: 'SCHEDULED', interviewStartTime: START }), 'A REJECTED participant cannot be scheduled', ['status']);
    expect((await getParticipant(service, tenant, (await participantRow(service, tenant, participantId)).study_id, participantId)).json().approvalStatus).toBe('APPROVED');
  });

  it('sends a screener only when the study has one', async () => {
    const { patch } = await fixture({ studyType: 'INTERVIEWS', launch: true });
    await expectConflict(await patch({ screenerState: 'SCREENER_SENT' }), 'The study has no screener to send', ['screenerState']);
    const survey = await fixture({ studyType: 'SURVEY', launch: true, studyPlan: { includeScreener: true } });
    expect((await survey.ok({ screenerState: 'SCREENER_SENT' })).screenerState).toBe('SCREENER_SENT');
  });

  it('applies nothing of a request with a refused move', async () => {
    const { tenant, studyId, participantId, patch } = await fixture({ ...interview, studyPlan: { consentFormId: 'cf_1' } });
    const before = (await getParticipant(service, tenant, studyId, participantId)).json();
    const rowBefore = await participantRow(service, tenant, participantId);
    const response = await patch({ note: 'x', rating: 3, quotaGroup: 'A', consentFormSubmitted: true, approvalStatus: 'APPROVED', status: 'COMPLETED' });
    expect(response.statusCode).toBe(409);
    expect((await getParticipant(service, tenant, studyId, participantId)).json()).toEqual(before);
    expect(await participantRow(service, tenant, participantId)).toEqual(rowBefore);
    expect(await statusEventsOf(service, tenant, participantId)).toEqual([]);
    const consents = await service.deps.db.selectFrom('consent_submissions').where('workspace_id', '=', tenant.workspaceId).selectAll().execute();
    expect(consents).toEqual([]);
  });
});

describe('PATCH /studies/{studyId}/participants/{participantId}: events and bookkeeping', () => {
  it('records one event per changed field, in the same transaction, at the clock time, by the caller', async () => {
    const { tenant, studyId, personId, participantId, patch } = await fixture(interview);
    const { token, userId } = await tenant.tokenFor('COLLABORATOR');
    setClock('2026-11-23T09:00:00.000Z');
    const response = await patch({ approvalStatus: 'APPROVED', screenerState: 'SCREENER_SENT', status: 'INVITED' }, token);
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({
      approvalStatus: 'APPROVED',
      approvedAt: '2026-11-23T09:00:00.000Z',
      screenerState: 'SCREENER_SENT',
      screenerSentAt: '2026-11-23T09:00:00.000Z',
      status: 'INVITED',
      invitedToStudyAt: '2026-11-23T09:00:00.000Z',
    });
    const common = { user_id: userId, occurred_at: '2026-11-23T09:00:00.000Z', study_id: studyId, person_id: personId };
    expect(await statusEventsOf(service, tenant, participantId)).toEqual([
      { ...common, field: 'approvalStatus', from_value: 'PENDING_REVIEW', to_value: 'APPROVED', is_contact: false },
      { ...common, field: 'screenerState', from_value: 'NOT_SENT', to_value: 'SCREENER_SENT', is_contact: true },
      { ...common, field: 'status', from_value: 'NOT_STARTED', to_value: 'INVITED', is_contact: true },
    ]);
    expect((await participantRow(service, tenant, participantId)).updated_at).toBe('2026-11-23T09:00:00.000Z');
  });

  it('records one invitation when two requests invite the participant at the same time', async () => {
    const { tenant, participantId, patch } = await fixture(interview);
    const responses = await Promise.all([patch({ status: 'INVITED' }), patch({ status: 'INVITED' })]);
    expect(responses.map((response) => response.statusCode)).toEqual([200, 200]);
    const events = await statusEventsOf(service, tenant, participantId);
    expect(events.map((event) => `${event.from_value}→${event.to_value}`)).toEqual(['NOT_STARTED→INVITED']);
  });

  it('records nothing and keeps updated_at for a request that changes nothing', async () => {
    const { tenant, participantId, ok } = await fixture(interview);
    await ok({ note: 'Keep', rating: 2, quotaGroup: 'A', interviewStartTime: START });
    const row = await participantRow(service, tenant, participantId);
    setClock('2030-01-01T00:00:00.000Z');
    await ok({});
    await ok({
      status: 'NOT_STARTED',
      approvalStatus: 'PENDING_REVIEW',
      screenerState: 'NOT_SENT',
      note: 'Keep',
      rating: 2,
      quotaGroup: 'A',
      interviewStartTime: '2026-12-01T11:00:00+01:00',
      testCompletedAt: null,
    });
    expect(await participantRow(service, tenant, participantId)).toEqual(row);
    expect(await statusEventsOf(service, tenant, participantId)).toEqual([]);
  });

  it('moves updated_at on any change, also without events', async () => {
    const { tenant, participantId, ok } = await fixture(interview);
    setClock('2026-11-24T08:00:00.000Z');
    await ok({ rating: 4 });
    expect((await participantRow(service, tenant, participantId)).updated_at).toBe('2026-11-24T08:00:00.000Z');
    expect(await statusEventsOf(service, tenant, participantId)).toEqual([]);
  });

  it('sets invitedToStudyAt the first time; every invitation is a contact that moves last_contact_at', async () => {
    const { tenant, personId, participantId, ok } = await fixture(interview);
    expect(await lastContactOf(tenant, personId)).toBeNull();
    setClock('2026-11-23T09:00:00.000Z');
    await ok({ status: 'INVITED' });
    setClock('2026-11-24T09:00:00.000Z');
    await ok({ status: 'CANCELED' });
    setClock('2026-11-25T09:00:00.000Z');
    const participant = await ok({ status: 'INVITED' });
    expect(participant.invitedToStudyAt).toBe('2026-11-23T09:00:00.000Z');
    expect(await lastContactOf(tenant, personId)).toBe('2026-11-25T09:00:00.000Z');
    const contacts = (await statusEventsOf(service, tenant, participantId)).filter((event) => event.is_contact).map((event) => event.occurred_at);
    expect(contacts).toEqual(['2026-11-23T09:00:00.000Z', '2026-11-25T09:00:00.000Z']);
    // Hiding and unhiding an invited participant is no new invitation.
    setClock('2026-11-26T09:00:00.000Z');
    await ok({ status: 'HIDDEN' });
    await ok({ status: 'INVITED' });
    expect(await lastContactOf(tenant, personId)).toBe('2026-11-25T09:00:00.000Z');
  });

  it('keeps the latest contact across studies (an earlier clock does not move it back)', async () => {
    const first = await fixture(interview);
    const secondStudy = await createStudy(service, first.tenant, interview);
    const [second] = await addParticipants(service, first.tenant, secondStudy, [first.personId]);
    setClock('2026-11-25T09:00:00.000Z');
    await first.ok({ screenerState: 'SCREENER_SENT' });
    expect(await lastContactOf(first.tenant, first.personId)).toBe('2026-11-25T09:00:00.000Z');
    setClock('2026-11-20T09:00:00.000Z');
    await patchParticipant(service, first.tenant, secondStudy, second!.participantId, { status: 'INVITED' });
    expect(await lastContactOf(first.tenant, first.personId)).toBe('2026-11-25T09:00:00.000Z');
    setClock('2026-11-27T09:00:00.000Z');
    await patchParticipant(service, first.tenant, secondStudy, second!.participantId, { screenerState: 'SCREENER_SENT' });
    expect(await lastContactOf(first.tenant, first.personId)).toBe('2026-11-27T09:00:00.000Z');
  });

  it('sets screenerSentAt, screenerResponseDate and approvedAt at the clock time', async () => {
    const { ok } = await fixture(interview);
    setClock('2026-11-23T09:00:00.000Z');
    await ok({ screenerState: 'SCREENER_SENT' });
    setClock('2026-11-23T10:00:00.000Z');
    await ok({ screenerState: 'SUBMITTED' });
    setClock('2026-11-23T11:00:00.000Z');
    expect(await ok({ screenerState: 'QUALIFIED', approvalStatus: 'APPROVED' })).toMatchObject({
      screenerSentAt: '2026-11-23T09:00:00.000Z',
      screenerResponseDate: '2026-11-23T10:00:00.000Z',
      approvedAt: '2026-11-23T11:00:00.000Z',
    });
  });

  it('completes an interview at its start time, once; hiding and unhiding changes nothing', async () => {
    const { tenant, participantId, ok } = await fixture(interview);
    await ok({ status: 'SCHEDULED', interviewStartTime: START });
    setClock('2026-12-05T00:00:00.000Z');
    const completed = await ok({ status: 'COMPLETED' });
    expect(completed.testCompletedAt).toBeNull();
    expect((await participantRow(service, tenant, participantId)).completed_at).toBe(START);
    setClock('2026-12-06T00:00:00.000Z');
    await ok({ status: 'HIDDEN' });
    await ok({ status: 'COMPLETED' });
    expect(await participantRow(service, tenant, participantId)).toMatchObject({ completed_at: START, test_completed_at: null, status: 'COMPLETED' });
  });

  it('completes at a testCompletedAt given in the same request', async () => {
    const { tenant, participantId, ok } = await fixture(interview);
    await ok({ status: 'SCHEDULED', interviewStartTime: START });
    const completed = await ok({ status: 'COMPLETED', testCompletedAt: '2026-12-01T11:00:00.000Z' });
    expect(completed.testCompletedAt).toBe('2026-12-01T11:00:00.000Z');
    expect((await participantRow(service, tenant, participantId)).completed_at).toBe('2026-12-01T11:00:00.000Z');
  });

  it('completes an unmoderated test now, setting testCompletedAt, or at the testCompletedAt stored', async () => {
    const now = await fixture({ studyType: 'UNMODERATED_TEST', launch: true });
    await now.ok({ status: 'INVITED' });
    setClock('2026-12-02T12:00:00.000Z');
    expect((await now.ok({ status: 'COMPLETED' })).testCompletedAt).toBe('2026-12-02T12:00:00.000Z');
    expect((await participantRow(service, now.tenant, now.participantId)).completed_at).toBe('2026-12-02T12:00:00.000Z');

    const stored = await fixture({ studyType: 'SURVEY', launch: true });
    await stored.ok({ status: 'INVITED', testCompletedAt: '2026-12-01T08:00:00.000Z' });
    expect((await stored.ok({ status: 'COMPLETED' })).testCompletedAt).toBe('2026-12-01T08:00:00.000Z');
    expect((await participantRow(service, stored.tenant, stored.participantId)).completed_at).toBe('2026-12-01T08:00:00.000Z');
  });

  it('counts every no-show; unhiding one is not another', async () => {
    const { tenant, participantId, ok } = await fixture(interview);
    await ok({ status: 'SCHEDULED', interviewStartTime: START });
    await ok({ status: 'NO_SHOW' });
    await ok({ status: 'SCHEDULED', interviewStartTime: '2026-12-08T10:00:00.000Z' });
    await ok({ status: 'NO_SHOW' });
    await ok({ status: 'HIDDEN' });
    await ok({ status: 'NO_SHOW' });
    expect(await participantRow(service, tenant, participantId)).toMatchObject({ no_show_count: 2, status_before_hidden: null, completed_at: null });
  });

  it("records the note's author; null removes the note, rating and quota group", async () => {
    const { tenant, participantId, patch, ok } = await fixture(interview);
    const { token, userId } = await tenant.tokenFor('RESEARCHER');
    const response = await patch({ note: 'Prefers afternoons', rating: 5, quotaGroup: 'Frequent shoppers' }, token);
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({ note: { note: 'Prefers afternoons', createdByUserId: userId }, rating: 5, quotaGroup: 'Frequent shoppers' });
    expect(await ok({ note: null, rating: null, quotaGroup: null })).toMatchObject({ note: null, rating: null, quotaGroup: null });
    expect(await participantRow(service, tenant, participantId)).toMatchObject({ note: null, note_created_by_user_id: null });
  });

  it("records consent to the study's consent form once", async () => {
    const { tenant, studyId, personId, participantId, ok } = await fixture({ ...interview, studyPlan: { consentFormId: 'cf_1' } });
    setClock('2026-11-23T09:00:00.000Z');
    expect((await ok({ consentFormSubmitted: true })).consentFormSubmittedAt).toBe('2026-11-23T09:00:00.000Z');
    setClock('2026-11-24T09:00:00.000Z');
    expect((await ok({ consentFormSubmitted: true })).consentFormSubmittedAt).toBe('2026-11-23T09:00:00.000Z');
    expect((await participantRow(service, tenant, participantId)).updated_at).toBe('2026-11-23T09:00:00.000Z');
    const consents = await service.deps.db.selectFrom('consent_submissions').where('workspace_id', '=', tenant.workspaceId).selectAll().execute();
    expect(consents).toEqual([
      {
        workspace_id: tenant.workspaceId,
        consent_submission_id: expect.stringMatching(/^cns_/),
        person_id: personId,
        consent_form_id: 'cf_1',
        study_id: studyId,
        signup_form_id: null,
        form_version: null,
        text_sha256: null,
        source: 'API',
        recorded_by_user_id: tenant.userId,
        submitted_at: '2026-11-23T09:00:00.000Z',
        created_at: '2026-11-23T09:00:00.000Z',
        signed_name: null,
        choices: null,
        link_id: null,
        copy_sent_at: null,
        withdrawn_at: null,
      },
    ]);

    // A study without a consent form has nothing to consent to: a 400, and nothing recorded (issue 32, item 4).
    const withoutForm = await fixture(interview);
    const refused = await withoutForm.patch({ consentFormSubmitted: true });
    expect(refused.statusCode, refused.body).toBe(400);
    expect(refused.json<{ errors: { path: string[] }[] }>().errors[0]!.path).toEqual(['consentFormSubmitted']);
    expect(await service.deps.db.selectFrom('consent_submissions').where('workspace_id', '=', withoutForm.tenant.workspaceId).selectAll().execute()).toEqual([]);
  });
});

describe('PATCH /studies/{studyId}/participants/{participantId}: errors and masking', () => {
  it('refuses invalid input with 400 naming the field', async () => {
    const { patch } = await fixture(interview);
    const cases: [object, string[]][] = [
      [{ rating: 0 }, ['rating']],
      [{ rating: 6 }, ['rating']],
      [{ rating: 2.5 }, ['rating']],
      [{ rating: '3' }, ['rating']],
      [{ bogus: true }, ['bogus']],
      [{ interviewStartTime: 'tomorrow' }, ['interviewStartTime']],
      [{ interviewStartTime: '2026-12-01T10:00:00' }, ['interviewStartTime']],
      [{ testCompletedAt: '2026-13-01T10:00:00Z' }, ['testCompletedAt']],
      [{ status: 'DONE' }, ['status']],
      [{ approvalStatus: 'MAYBE' }, ['approvalStatus']],
      [{ screenerState: 'LOST' }, ['screenerState']],
      [{ consentFormSubmitted: false }, ['consentFormSubmitted']],
      [{ note: 42 }, ['note']],
      [{ quotaGroup: '' }, ['quotaGroup']],
    ];
    for (const [body, path] of cases) {
      const response = await patch(body);
      expect(response.statusCode, JSON.stringify(body)).toBe(400);
      expect(response.json().errors[0].path, JSON.stringify(body)).toEqual(path);
    }
  });

  it('answers 404 for an unknown study, an unknown participant, or a participant of another study', async () => {
    const { tenant, studyId, participantId } = await fixture(interview);
    const otherStudy = await createStudy(service, tenant, interview);
    const unknownStudy = await patchParticipantResponse(service, tenant, 'stu_unknown', participantId, { rating: 3 });
    expect(unknownStudy.statusCode).toBe(404);
    expect(unknownStudy.json()).toEqual({ errors: [{ message: 'Study not found', path: ['studyId'] }] });
    for (const [study, participant] of [
      [studyId, 'ptc_unknown'],
      [otherStudy, participantId],
    ]) {
      const response = await patchParticipantResponse(service, tenant, study!, participant!, { rating: 3 });
      expect(response.statusCode).toBe(404);
      expect(response.json()).toEqual({ errors: [{ message: 'Participant not found', path: ['participantId'] }] });
    }
  });

  it('answers 404 once the person is deleted', async () => {
    const { tenant, personId, patch } = await fixture(interview);
    expect((await call(service, 'DELETE', `/people/${personId}`, { token: tenant.token })).statusCode).toBe(200);
    const response = await patch({ rating: 3 });
    expect(response.statusCode).toBe(404);
    expect(response.json()).toEqual({ errors: [{ message: 'Participant not found', path: ['participantId'] }] });
  });

  it('masks contact details for a token without the personal-data right', async () => {
    const { tenant, patch } = await fixture(interview);
    const { token } = await tenant.tokenFor('RESEARCHER', { canReadPersonalData: false });
    const response = await patch({ rating: 3 }, token);
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json()).toMatchObject({ email: '***@***', phone: '***', rating: 3 });
  });
});

describe('the lock a participant change takes', () => {
  it('is FOR NO KEY UPDATE on the participant and the person: their keys never change', async () => {
    const { tenant, studyId, participantId } = await fixture({ studyType: 'INTERVIEWS' });
    const db = service.deps.db;
    const statements: string[] = [];
    const recorder: KyselyPlugin = {
      transformQuery: (args) => {
        statements.push(db.getExecutor().compileQuery(args.node, args.queryId).sql);
        return args.node;
      },
      transformResult: async (args) => args.result,
    };
    expect(await lockParticipant(db.withPlugin(recorder), tenant.workspaceId, studyId, participantId)).toMatchObject({ participant_id: participantId });
    expect(statements).toHaveLength(1);
    expect(statements[0]).toMatch(/ for no key update of "p", "pe"$/);
    expect(statements[0]).not.toMatch(/ for update/);
  });

  // The embedded store runs one transaction at a time, so only PostgreSQL shows two side by side.
  it.skipIf(storeKind === 'embedded')("lets POST /incentives for the participant pass while a change holds the participant's lock (PostgreSQL)", async () => {
    const { tenant, studyId, participantId } = await fixture({ studyType: 'INTERVIEWS' });
    await service.deps.db.transaction().execute(async (transaction) => {
      expect(await lockParticipant(transaction, tenant.workspaceId, studyId, participantId)).toBeDefined();
      // The incentive's foreign-key check takes FOR KEY SHARE on the participant: FOR UPDATE would make it wait for this transaction.
      const sent = call(service, 'POST', '/incentives', { token: tenant.token, body: { participantId, type: 'CUSTOM', amountCents: 100 } });
      const outcome = await Promise.race([sent, sleep(3000).then(() => 'still waiting for the lock' as const)]);
      expect(typeof outcome === 'string' ? outcome : outcome.statusCode).toBe(201);
    });
  });
});

describeSecurity('PATCH /studies/{studyId}/participants/{participantId}', () => service, {
  method: 'PATCH',
  right: 'participants:write',
  addressesResource: true,
  request: async (tenant, svc) => {
    const studyId = await createStudy(svc, tenant, { studyType: 'SURVEY' });
    const person = await createPerson(svc, tenant);
    const [participant] = await addParticipants(svc, tenant, studyId, [person.personId]);
    return { url: `/studies/${studyId}/participants/${participant!.participantId}`, body: { rating: 4 } };
  },
});
