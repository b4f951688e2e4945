import { expect } from 'vitest';
import type { ParticipantApprovalStatus, ParticipantScreenerState, ParticipantStatus, StudyKind, StudyType } from '../../db/schema.js';
import { idPrefixes, newId } from '../../ids.js';
import { call, type Tenant, type TestService } from '../../../test/harness.js';
import { studyKindOf } from './states.js';

/**
 * Participation history straight into the tables, for the search tests: the derived names read
 * what is stored, however it got there, and these tests need states (months-old completions,
 * repeated no-shows) that the routes would take many steps and a moving clock to reach.
 */

export interface Participation {
  status?: ParticipantStatus;
  approvalStatus?: ParticipantApprovalStatus;
  screenerState?: ParticipantScreenerState;
  invitedAt?: string | null;
  completedAt?: string | null;
  noShowCount?: number;
  rating?: number | null;
  screenerSentAt?: string | null;
  screenerSubmittedAt?: string | null;
  interviewStartTime?: string | null;
  testCompletedAt?: string | null;
  note?: string | null;
  quotaGroup?: string | null;
  consentSubmittedAt?: string | null;
  addedAt?: string;
}

export async function createStudy(service: TestService, tenant: Tenant, studyType: StudyType, name = `${studyType} study`, populationId?: string): Promise<string> {
  const response = await call(service, 'POST', '/studies', {
    token: tenant.token,
    body: { studyType, recruitmentStrategy: 'IN_SERVICE', studyPlan: { name }, ...(populationId ? { populationId } : {}) },
  });
  expect(response.statusCode, response.body).toBe(201);
  return response.json<{ studyId: string }>().studyId;
}

/** Inserts one participant row per entry; returns their ids in order. */
export async function insertParticipants(
  service: TestService,
  workspaceId: string,
  entries: { studyId: string; studyType: StudyType; personId: string; participation: Participation }[],
): Promise<string[]> {
  if (entries.length === 0) return [];
  const ids = entries.map(() => newId(idPrefixes.participant));
  const now = new Date().toISOString();
  await service.deps.db
    .insertInto('participants')
    .values(
      entries.map(({ studyId, studyType, personId, participation: p }, index) => {
        const status = p.status ?? 'NOT_STARTED';
        const kind: StudyKind = studyKindOf(studyType);
        return {
          workspace_id: workspaceId,
          participant_id: ids[index]!,
          study_id: studyId,
          person_id: personId,
          study_kind: kind,
          status,
          status_before_hidden: status === 'HIDDEN' ? 'NOT_STARTED' : null,
          approval_status: p.approvalStatus ?? 'PENDING_REVIEW',
          screener_state: p.screenerState ?? 'NOT_SENT',
          invited_at: p.invitedAt ?? null,
          approved_at: null,
          screener_sent_at: p.screenerSentAt ?? null,
          screener_submitted_at: p.screenerSubmittedAt ?? null,
          interview_start_time: p.interviewStartTime ?? null,
          test_completed_at: p.testCompletedAt ?? null,
          completed_at: p.completedAt ?? null,
          no_show_count: p.noShowCount ?? 0,
          rating: p.rating ?? null,
          note: p.note ?? null,
          note_created_by_user_id: null,
          quota_group: p.quotaGroup ?? null,
          consent_submitted_at: p.consentSubmittedAt ?? null,
          added_by_user_id: null,
          added_at: p.addedAt ?? now,
          updated_at: now,
        };
      }),
    )
    .execute();
  return ids;
}

/** Contact events (invitations, screeners sent) of a person, at the times given. */
export async function insertContacts(service: TestService, workspaceId: string, contacts: { personId: string; participantId: string; studyId: string; at: string }[]) {
  if (contacts.length === 0) return;
  await service.deps.db
    .insertInto('participant_status_events')
    .values(
      contacts.map((contact) => ({
        workspace_id: workspaceId,
        study_id: contact.studyId,
        participant_id: contact.participantId,
        person_id: contact.personId,
        field: 'status' as const,
        from_value: 'NOT_STARTED',
        to_value: 'INVITED',
        is_contact: true,
        user_id: null,
        occurred_at: contact.at,
      })),
    )
    .execute();
}

/** Consents given for a study (a consent names a study or a signup form). */
export async function insertConsents(service: TestService, workspaceId: string, consents: { personId: string; studyId: string; at: string }[]) {
  if (consents.length === 0) return;
  await service.deps.db
    .insertInto('consent_submissions')
    .values(
      consents.map((consent) => ({
        workspace_id: workspaceId,
        consent_submission_id: newId(idPrefixes.consentSubmission),
        person_id: consent.personId,
        consent_form_id: null,
        study_id: consent.studyId,
        source: 'API' as const,
        submitted_at: consent.at,
        created_at: consent.at,
      })),
    )
    .execute();
}

export async function setLastContact(service: TestService, workspaceId: string, personId: string, at: string | null) {
  await service.deps.db.updateTable('people').set({ last_contact_at: at }).where('workspace_id', '=', workspaceId).where('person_id', '=', personId).execute();
}

export type Comparable = string | number | boolean | null;

/** The order a search must give: nulls last, ties by id in the sort's direction; text by code point. */
export function expectedOrder(entries: { id: string; value: Comparable }[], direction: 'ASC' | 'DESC'): string[] {
  const sign = direction === 'ASC' ? 1 : -1;
  return [...entries]
    .sort((a, b) => {
      if (a.value === null || b.value === null) return a.value === b.value ? sign * (a.id < b.id ? -1 : 1) : a.value === null ? 1 : -1;
      if (a.value !== b.value) return sign * (a.value < b.value ? -1 : 1);
      return sign * (a.id < b.id ? -1 : 1);
    })
    .map((entry) => entry.id);
}

/** Signup submissions of a form, straight into the table. */
export async function insertSubmissions(
  service: TestService,
  workspaceId: string,
  submissions: { signupFormId: string; personId: string; at: string; referralCode?: string | null; approvalStatus?: 'PENDING_REVIEW' | 'APPROVED' | 'REJECTED' }[],
): Promise<string[]> {
  if (submissions.length === 0) return [];
  const ids = submissions.map(() => newId(idPrefixes.signupSubmission));
  await service.deps.db
    .insertInto('signup_submissions')
    .values(
      submissions.map((submission, index) => {
        const approval = submission.approvalStatus ?? 'PENDING_REVIEW';
        return {
          workspace_id: workspaceId,
          submission_id: ids[index]!,
          signup_form_id: submission.signupFormId,
          person_id: submission.personId,
          approval_status: approval,
          referral_code: submission.referralCode ?? null,
          consent_submission_id: null,
          submitted_at: submission.at,
          reviewed_at: approval === 'PENDING_REVIEW' ? null : submission.at,
          reviewed_by_user_id: null,
        };
      }),
    )
    .execute();
  return ids;
}

export interface IncentiveSeed {
  participantId: string;
  studyId: string;
  personId: string;
  sentAt: string;
  amountCents: number;
  currency?: string;
  status?: 'UNCLAIMED' | 'CLAIMED' | 'CANCELED' | 'ERROR' | 'SENT' | 'EXPIRED';
  type?: 'MONEY_OR_GIFT_CARD' | 'CUSTOM' | 'RECRUITMENT_FEE' | 'PROVIDER_ONE_MONEY';
  budgetId?: string | null;
  customIncentiveId?: string | null;
  customIncentiveValue?: string | null;
  sentByUserId: string;
}

/** Incentives straight into the table (no provider involved): the search reads what is stored. */
export async function insertIncentives(service: TestService, workspaceId: string, seeds: IncentiveSeed[]): Promise<string[]> {
  if (seeds.length === 0) return [];
  const ids = seeds.map(() => newId(idPrefixes.incentive));
  await service.deps.db
    .insertInto('incentives')
    .values(
      seeds.map((seed, index) => {
        // SENT is the status of custom incentives only (no provider).
        const type = seed.type ?? (seed.status === 'SENT' ? 'CUSTOM' : 'MONEY_OR_GIFT_CARD');
        const providerBacked = type === 'MONEY_OR_GIFT_CARD' || type === 'PROVIDER_ONE_MONEY';
        return {
          workspace_id: workspaceId,
          incentive_id: ids[index]!,
          study_id: seed.studyId,
          participant_id: seed.participantId,
          person_id: seed.personId,
          type,
          amount_cents: seed.amountCents,
          currency: seed.currency ?? 'USD',
          status: seed.status ?? (providerBacked ? 'UNCLAIMED' : 'SENT'),
          budget_id: seed.budgetId ?? null,
          custom_incentive_id: seed.customIncentiveId ?? null,
          custom_incentive_value: seed.customIncentiveValue ?? null,
          provider: providerBacked ? 'sandbox' : null,
          provider_state: providerBacked ? ('ORDERED' as const) : null,
          provider_reference: providerBacked ? `sandbox-${ids[index]}` : null,
          provider_next_attempt_at: null,
          idempotency_key: null,
          idempotency_fingerprint: null,
          sent_by_user_id: seed.sentByUserId,
          sent_at: seed.sentAt,
          claimed_at: null,
          canceled_at: null,
          failed_at: null,
          expired_at: null,
          failure_reason: null,
          last_resent_at: null,
          created_at: seed.sentAt,
          updated_at: seed.sentAt,
        };
      }),
    )
    .execute();
  return ids;
}
