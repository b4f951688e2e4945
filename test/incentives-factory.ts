import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { call, callTestHelper, type Tenant, type TestService } from './harness.js';
import { addParticipants } from './participants-factory.js';
import { createPerson } from './people-factory.js';

/** An Incentive as the API answers it. */
export interface IncentiveResponse {
  incentiveId: string;
  type: string | null;
  amountCents: number;
  sentAt: string;
  recipientEmail: string | null;
  personId: string;
  participantId: string;
  studyId: string;
  status: string;
  budgetId: string | null;
  customIncentiveId: string | null;
  customIncentiveValue: string | null;
}

export interface Participation {
  participantId: string;
  studyId: string;
  personId: string;
  email: string;
}

export async function createStudy(service: TestService, tenant: Tenant, body: object = {}): Promise<string> {
  const response = await call(service, 'POST', '/studies', {
    token: tenant.token,
    body: { studyType: 'INTERVIEWS', recruitmentStrategy: 'IN_SERVICE', studyPlan: { name: 'Incentive study' }, ...body },
  });
  expect(response.statusCode, response.body).toBe(201);
  return response.json<{ studyId: string }>().studyId;
}

/**
 * A participant: a study made through POST /studies (unless `studyId` is given), a person made
 * through POST /people (unless `personId` is given), added to the study through
 * POST /studies/{studyId}/participants.
 */
export async function createParticipant(service: TestService, tenant: Tenant, options: { studyId?: string; personId?: string; email?: string } = {}): Promise<Participation> {
  const studyId = options.studyId ?? (await createStudy(service, tenant));
  let personId = options.personId;
  let email = options.email ?? '';
  if (!personId) {
    const person = await createPerson(service, tenant, options.email ? { email: options.email } : {});
    personId = person.personId;
    email = person.email;
  }
  const [participant] = await addParticipants(service, tenant, studyId, [personId]);
  return { participantId: participant!.participantId, studyId, personId, email };
}

export interface SendOptions {
  token?: string;
  idempotencyKey?: string;
}

export function postIncentive(service: TestService, tenant: Tenant, body: object, options: SendOptions = {}): Promise<LightMyRequestResponse> {
  return call(service, 'POST', '/incentives', {
    token: options.token ?? tenant.token,
    body,
    headers: options.idempotencyKey === undefined ? {} : { 'idempotency-key': options.idempotencyKey },
  });
}

/** An incentive sent through POST /incentives (201 expected). */
export async function sendIncentive(
  service: TestService,
  tenant: Tenant,
  participantId: string,
  body: object = {},
  options: SendOptions = {},
): Promise<IncentiveResponse> {
  const response = await postIncentive(service, tenant, { participantId, type: 'MONEY_OR_GIFT_CARD', amountCents: 5000, ...body }, options);
  expect(response.statusCode, response.body).toBe(201);
  return response.json<IncentiveResponse>();
}

export async function getIncentive(service: TestService, tenant: Tenant, incentiveId: string, token = tenant.token) {
  return call(service, 'GET', `/incentives/${incentiveId}`, { token });
}

export async function incentiveStatus(service: TestService, tenant: Tenant, incentiveId: string): Promise<string> {
  const response = await getIncentive(service, tenant, incentiveId);
  expect(response.statusCode, response.body).toBe(200);
  return response.json<IncentiveResponse>().status;
}

/** The stored row, provider state included (not part of the API). */
export function incentiveRow(service: TestService, tenant: Tenant, incentiveId: string) {
  return service.deps.db
    .selectFrom('incentives')
    .selectAll()
    .where('workspace_id', '=', tenant.workspaceId)
    .where('incentive_id', '=', incentiveId)
    .executeTakeFirstOrThrow();
}

export async function setClock(service: TestService, at: Date | string) {
  const response = await callTestHelper(service, 'POST', '/clock', { body: { now: typeof at === 'string' ? at : at.toISOString() } });
  expect(response.statusCode, response.body).toBe(200);
}

/** A budget made through the API (POST /incentive-budgets); USD with room for 1,000,000 cents unless told. */
export async function createBudget(service: TestService, tenant: Tenant, body: { name?: string; currency?: string; limitCents?: number } = {}): Promise<{ budgetId: string; currency: string; limitCents: number; spentCents: number }> {
  const response = await call(service, 'POST', '/incentive-budgets', {
    token: tenant.token,
    body: { name: body.name ?? 'Budget', currency: body.currency ?? 'USD', limitCents: body.limitCents ?? 1_000_000 },
  });
  if (response.statusCode !== 201) throw new Error(`budget: ${response.statusCode} ${response.body}`);
  return response.json();
}
