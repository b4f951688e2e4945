import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import type { Participant } from '../src/families/participants/service.js';
import { call, type Tenant, type TestService } from './harness.js';

/** A Participant as the API answers it. */
export type ParticipantResponse = Participant;

export interface StudyOptions {
  studyType: 'SURVEY' | 'INTERVIEWS' | 'UNMODERATED_TEST' | 'GROUP_INTERVIEW';
  /** Launch it (DRAFT → ACTIVE) after the screener, if any, is in place. */
  launch?: boolean;
  /** Give it a SERVICE screener with one question (not for SURVEY studies) through PUT /studies/{id}/screener. */
  screener?: boolean;
  /** Extra studyPlan fields (name defaults to "Study"). */
  studyPlan?: Record<string, unknown>;
}

/** A study made through POST /studies (and, as asked, PUT …/screener and POST …/launch); returns its id. */
export async function createStudy(service: TestService, tenant: Tenant, options: StudyOptions): Promise<string> {
  const created = await call(service, 'POST', '/studies', {
    token: tenant.token,
    body: { studyType: options.studyType, recruitmentStrategy: 'IN_SERVICE', studyPlan: { name: 'Study', ...options.studyPlan } },
  });
  expect(created.statusCode, created.body).toBe(201);
  const studyId = created.json<{ studyId: string }>().studyId;
  if (options.screener) {
    const screener = await call(service, 'PUT', `/studies/${studyId}/screener`, {
      token: tenant.token,
      body: { questions: [{ name: 'How often do you shop online?', type: 'SHORT_FORM', isRequired: true }] },
    });
    expect(screener.statusCode, screener.body).toBe(200);
  }
  if (options.launch) {
    const launched = await call(service, 'POST', `/studies/${studyId}/launch`, { token: tenant.token });
    expect(launched.statusCode, launched.body).toBe(200);
  }
  return studyId;
}

/** POST /studies/{studyId}/participants; expects a 200 without error items and returns the participants. */
export async function addParticipants(service: TestService, tenant: Tenant, studyId: string, personIds: string[]): Promise<ParticipantResponse[]> {
  const response = await call(service, 'POST', `/studies/${studyId}/participants`, { token: tenant.token, body: { personIds } });
  expect(response.statusCode, response.body).toBe(200);
  const body = response.json<{ results: ParticipantResponse[]; errors: unknown[] }>();
  expect(body.errors).toEqual([]);
  return body.results;
}

/** PATCH /studies/{studyId}/participants/{participantId}, answered as it comes (the caller checks the status). */
export function patchParticipantResponse(
  service: TestService,
  tenant: Tenant,
  studyId: string,
  participantId: string,
  body: object,
  token = tenant.token,
): Promise<LightMyRequestResponse> {
  return call(service, 'PATCH', `/studies/${studyId}/participants/${participantId}`, { token, body });
}

/** PATCH that must succeed (200); returns the participant. */
export async function patchParticipant(service: TestService, tenant: Tenant, studyId: string, participantId: string, body: object): Promise<ParticipantResponse> {
  const response = await patchParticipantResponse(service, tenant, studyId, participantId, body);
  expect(response.statusCode, response.body).toBe(200);
  return response.json<ParticipantResponse>();
}

export function getParticipant(service: TestService, tenant: Tenant, studyId: string, participantId: string, token = tenant.token) {
  return call(service, 'GET', `/studies/${studyId}/participants/${participantId}`, { token });
}

/** The participant status events of one participant as stored, oldest first. */
export async function statusEventsOf(service: TestService, tenant: Tenant, participantId: string) {
  return service.deps.db
    .selectFrom('participant_status_events')
    .where('workspace_id', '=', tenant.workspaceId)
    .where('participant_id', '=', participantId)
    .select(['field', 'from_value', 'to_value', 'is_contact', 'user_id', 'occurred_at', 'study_id', 'person_id'])
    .orderBy('event_id')
    .execute();
}

/** The stored participants row (with the bookkeeping columns the response does not show). */
export async function participantRow(service: TestService, tenant: Tenant, participantId: string) {
  return service.deps.db
    .selectFrom('participants')
    .where('workspace_id', '=', tenant.workspaceId)
    .where('participant_id', '=', participantId)
    .selectAll()
    .executeTakeFirstOrThrow();
}
