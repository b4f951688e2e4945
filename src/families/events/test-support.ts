import { setTimeout as sleep } from 'node:timers/promises';
import type { Kysely } from 'kysely';
import { expect } from 'vitest';
import type { DB, ParticipantEventField } from '../../db/schema.js';
import { idPrefixes, newId } from '../../ids.js';
import { call, type Tenant, type TestService } from '../../../test/harness.js';
import { createPerson } from '../../../test/people-factory.js';

export interface EventResponse {
  eventId: string;
  occurredAt: string;
  studyId: string;
  participantId?: string;
  personId?: string;
  field: string;
  from: string | null;
  to: string;
}

export interface EventPage {
  results: EventResponse[];
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string; endCursor: string };
}

export type Stream = '/participant-status-events' | '/study-status-events';

/** A study made through POST /studies (which records its first status event, to DRAFT). */
export async function createStudy(service: TestService, tenant: Tenant, name = 'Checkout interviews'): Promise<string> {
  const response = await call(service, 'POST', '/studies', {
    token: tenant.token,
    body: { studyType: 'INTERVIEWS', recruitmentStrategy: 'IN_SERVICE', studyPlan: { name } },
  });
  expect(response.statusCode, response.body).toBe(201);
  return response.json<{ studyId: string }>().studyId;
}

/** Moves a study through the real routes: `launch`, or a status for POST /studies/{id}/status. */
export async function moveStudy(service: TestService, tenant: Tenant, studyId: string, to: 'ACTIVE' | 'PAUSED' | 'CLOSED') {
  const response =
    to === 'ACTIVE'
      ? await call(service, 'POST', `/studies/${studyId}/launch`, { token: tenant.token })
      : await call(service, 'POST', `/studies/${studyId}/status`, { token: tenant.token, body: { status: to } });
  expect(response.statusCode, response.body).toBe(200);
}

export interface ParticipantRef {
  studyId: string;
  participantId: string;
  personId: string;
}

/**
 * A participant of `studyId`, inserted directly with Kysely: the participants routes are being
 * built in parallel, and these tests need only rows for the events to refer to.
 */
export async function insertParticipant(service: TestService, tenant: Tenant, studyId: string, personId?: string): Promise<ParticipantRef> {
  const person = personId ?? (await createPerson(service, tenant)).personId;
  const participantId = newId(idPrefixes.participant);
  const at = new Date().toISOString();
  await service.deps.db
    .insertInto('participants')
    .values({
      workspace_id: tenant.workspaceId,
      participant_id: participantId,
      study_id: studyId,
      person_id: person,
      study_kind: 'INTERVIEW',
      status_before_hidden: null,
      invited_at: null,
      approved_at: null,
      screener_sent_at: null,
      screener_submitted_at: null,
      interview_start_time: null,
      test_completed_at: null,
      completed_at: null,
      rating: null,
      note: null,
      note_created_by_user_id: null,
      quota_group: null,
      consent_submitted_at: null,
      added_by_user_id: tenant.userId,
      added_at: at,
      updated_at: at,
    })
    .execute();
  return { studyId, participantId, personId: person };
}

/**
 * Participant status events inserted directly (the participants routes that will write them are
 * built in parallel), on `db`: the service's database, or an open transaction of a test. Returns
 * their ids as the API shows them.
 */
export async function insertParticipantEvents(
  db: Kysely<DB>,
  workspaceId: string,
  participant: ParticipantRef,
  changes: { field: ParticipantEventField; from: string | null; to: string }[],
): Promise<string[]> {
  const rows = await db
    .insertInto('participant_status_events')
    .values(
      changes.map((change) => ({
        workspace_id: workspaceId,
        study_id: participant.studyId,
        participant_id: participant.participantId,
        person_id: participant.personId,
        field: change.field,
        from_value: change.from,
        to_value: change.to,
        user_id: null,
        occurred_at: new Date().toISOString(),
      })),
    )
    .returning('event_id')
    .execute();
  return rows.map((row) => String(row.event_id));
}

export async function poll(service: TestService, token: string, stream: Stream, query: Record<string, string> = {}): Promise<EventPage> {
  const response = await call(service, 'GET', stream, { token, query });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<EventPage>();
}

/**
 * How long a test waits for events to settle. On PostgreSQL an event shows once every writing
 * transaction older than it, on the whole server, has ended: other test files, and other users of
 * a shared test server (a bulk import, say), hold events back for as long as theirs run.
 */
export const SETTLE_TIMEOUT_MS = 60_000;
/** The test timeout of the event test files: room for one wait of SETTLE_TIMEOUT_MS and the rest. */
export const EVENT_TEST_TIMEOUT_MS = SETTLE_TIMEOUT_MS + 30_000;

/**
 * Polls the stream from `startCursor` (the beginning when absent), page after page, until at
 * least `count` events have arrived, and answers them with the last endCursor. An empty page
 * means "not yet" (see SETTLE_TIMEOUT_MS), so this keeps polling, as a client would; it fails
 * when `count` events have not arrived within the time.
 */
export async function pollUntil(
  service: TestService,
  token: string,
  stream: Stream,
  options: { count: number; startCursor?: string; query?: Record<string, string>; size?: number; timeoutMs?: number; betweenPages?: (page: number) => Promise<void> },
) {
  const events: EventResponse[] = [];
  let cursor = options.startCursor;
  let pages = 0;
  const timeoutMs = options.timeoutMs ?? SETTLE_TIMEOUT_MS;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const page = await poll(service, token, stream, {
      ...options.query,
      ...(options.size ? { size: String(options.size) } : {}),
      ...(cursor ? { startCursor: cursor } : {}),
    });
    pages++;
    events.push(...page.results);
    expect(page.pageInfo.endCursor).not.toBe('');
    cursor = page.pageInfo.endCursor;
    await options.betweenPages?.(pages);
    if (page.pageInfo.hasNextPage) continue;
    if (events.length >= options.count) return { events, endCursor: cursor, pages };
    expect(Date.now(), `${options.count} events within ${timeoutMs} ms (got ${events.length})`).toBeLessThan(deadline);
    await sleep(50);
  }
}
