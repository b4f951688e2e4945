import type { Kysely } from 'kysely';
import { type Clock, createClock } from '../clock.js';
import type { DB, IncentiveStatus } from '../db/schema.js';
import * as incentives from '../families/incentives/service.js';
import { expireIncentivesHandler, EXPIRY_QUEUE } from '../families/incentives/jobs.js';
import type { SendIncentiveBody } from '../families/incentives/schemas.js';
import { EXPIRY_APPLIES_FROM, EXPIRY_YEARS, incentiveStatuses } from '../families/incentives/states.js';
import type { IncentiveProviders } from '../providers/index.js';
import type { DemoParticipant } from './demo-participants.js';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** A year after `at`, by the calendar (as the expiry counts it). */
function yearAfter(at: Date): Date {
  const later = new Date(at.getTime());
  later.setUTCFullYear(later.getUTCFullYear() + EXPIRY_YEARS);
  return later;
}

/**
 * When the closed group interview's session took place and its incentives were sent: early
 * February 2026, the first month whose unclaimed incentives expire (the reference: sent after
 * 31 January 2026), or, once that is more than a year and a day ago, a year and a day ago, so
 * that an unclaimed one has expired by now. Until February 2027 no incentive the expiry may
 * touch is a year old yet, so the expiry is then run at the first moment it has expired (see
 * seedDemoIncentives).
 */
export function groupSessionTiming(now: Date): { sessionAt: Date; sentAt: Date } {
  const earliest = Date.parse('2026-02-03T15:00:00.000Z');
  const yearAndADayAgo = new Date(now.getTime() - DAY_MS);
  yearAndADayAgo.setUTCFullYear(yearAndADayAgo.getUTCFullYear() - EXPIRY_YEARS);
  const sentAt = new Date(Math.max(earliest, yearAndADayAgo.getTime()));
  if (sentAt.getTime() < Date.parse(EXPIRY_APPLIES_FROM)) throw new Error('The demo group session must fall after the expiry cut-off date');
  return { sessionAt: new Date(sentAt.getTime() - 2 * HOUR_MS), sentAt };
}

export type DemoIncentiveIds = Record<IncentiveStatus, string[]>;

const firstOf = (list: readonly DemoParticipant[], count: number, what: string) => {
  if (list.length < count) throw new Error(`The demo incentives need ${count} participants ${what}; there are ${list.length}`);
  return list.slice(0, count);
};

/**
 * Incentives in every state, each reached the way it is in service: sent through sendIncentive
 * (the sandbox provider takes the orders), claimed or failed by a provider report
 * (recordProviderReport, the webhooks' and test helpers' path), canceled through cancelIncentive
 * (which needs the incentive's study in DRAFT: those are sent to a draft study's participants),
 * and expired by the expiry job. Incentives of the history are sent at the time they would have
 * been (a clock set in the past), the day after the session.
 */
export async function seedDemoIncentives(
  db: Kysely<DB>,
  clock: Clock,
  providers: IncentiveProviders,
  base: { workspaceId: string; userId: string },
  demoParticipants: readonly DemoParticipant[],
): Promise<DemoIncentiveIds> {
  const now = clock.now();
  const ids = Object.fromEntries(incentiveStatuses.map((status) => [status, [] as string[]])) as DemoIncentiveIds;
  const past = createClock();
  const context = (at: Clock): incentives.CallContext => ({ db, clock: at, workspaceId: base.workspaceId, userId: base.userId, canReadPersonalData: true });
  const sendAt = async (at: Date | undefined, body: SendIncentiveBody) => {
    if (at) past.set(at);
    const { incentive } = await incentives.sendIncentive(context(at ? past : clock), providers, body);
    return incentive;
  };
  const report = async (at: Date, incentiveId: string, kind: 'claimed' | 'failed', reason?: string) => {
    past.set(at);
    const row = await incentives.recordProviderReport(db, past, { workspaceId: base.workspaceId, incentiveId, kind, ...(reason ? { reason } : {}) });
    ids[row.status].push(incentiveId);
  };
  const completedIn = (studyType: DemoParticipant['studyType'], studyStatus: DemoParticipant['studyStatus']) =>
    demoParticipants.filter((participant) => participant.studyType === studyType && participant.studyStatus === studyStatus && participant.outcome === 'completed');
  const earlier = (a: Date, b: Date) => (a.getTime() < b.getTime() ? a : b);

  // The interview history: paid the day after each session, claimed within two days (never later than now).
  for (const participant of firstOf(completedIn('INTERVIEWS', 'CLOSED'), 10, 'who completed the closed interviews')) {
    const sentAt = earlier(new Date(Date.parse(participant.completedAt!) + DAY_MS), now);
    const incentive = await sendAt(sentAt, { participantId: participant.participantId, type: 'MONEY_OR_GIFT_CARD', amountCents: 7500 });
    await report(earlier(new Date(sentAt.getTime() + 2 * DAY_MS), now), incentive.incentiveId, 'claimed');
  }

  // The group session of February 2026: all paid the same day; all but one claimed; that one expires.
  const group = groupSessionTiming(now);
  const groupCompleted = firstOf(completedIn('GROUP_INTERVIEW', 'CLOSED'), 4, 'who completed the closed group interview');
  let unclaimed: string | undefined;
  for (const [index, participant] of groupCompleted.entries()) {
    const incentive = await sendAt(group.sentAt, { participantId: participant.participantId, type: 'PROVIDER_ONE_MONEY', amountCents: 5000 });
    if (index === 0) unclaimed = incentive.incentiveId;
    else await report(new Date(group.sentAt.getTime() + index * DAY_MS), incentive.incentiveId, 'claimed');
  }
  // The expiry job, as the hourly schedule runs it: by the real clock once the unclaimed incentive is a year old,
  // else (before February 2027) at the first moment it is. A job of the demo workspace, so it expires
  // that workspace's incentives alone: a clock a year ahead must not expire anyone else's early.
  const expiryClock = createClock();
  expiryClock.set(new Date(Math.max(now.getTime(), yearAfter(group.sentAt).getTime())));
  await expireIncentivesHandler(db, expiryClock, providers).run({
    jobId: 'seed-demo',
    queue: EXPIRY_QUEUE,
    workspaceId: base.workspaceId,
    payload: {},
    singletonKey: null,
    attempt: 1,
    maxAttempts: 1,
    signal: new AbortController().signal,
  });
  const expired = await incentives.getIncentive(context(clock), unclaimed!);
  if (expired.status !== 'EXPIRED') throw new Error(`The demo incentive ${expired.incentiveId} did not expire: it is ${expired.status}`);
  ids.EXPIRED.push(expired.incentiveId);

  // Unmoderated tests: one gift card the provider could not deliver, two recruitment fees.
  const [failing, ...feePaid] = firstOf(completedIn('UNMODERATED_TEST', 'CLOSED'), 3, 'who completed the closed unmoderated test');
  const failed = await sendAt(earlier(new Date(Date.parse(failing!.completedAt!) + DAY_MS), now), { participantId: failing!.participantId, type: 'MONEY_OR_GIFT_CARD', amountCents: 2500 });
  await report(earlier(new Date(Date.parse(failing!.completedAt!) + 2 * DAY_MS), now), failed.incentiveId, 'failed', "The recipient's email address bounced");
  for (const participant of feePaid) {
    const incentive = await sendAt(earlier(new Date(Date.parse(participant.completedAt!) + DAY_MS), now), { participantId: participant.participantId, type: 'RECRUITMENT_FEE', amountCents: 1500 });
    ids[incentive.status].push(incentive.incentiveId);
  }

  // Surveys: the workspace's own reward, handed over outside the service.
  for (const participant of firstOf(completedIn('SURVEY', 'CLOSED'), 6, 'who completed the closed survey')) {
    const incentive = await sendAt(earlier(new Date(Date.parse(participant.completedAt!) + DAY_MS), now), {
      participantId: participant.participantId,
      type: 'CUSTOM',
      amountCents: 1000,
      customIncentiveId: 'coffee-voucher',
      customIncentiveValue: 'Coffee voucher',
    });
    ids[incentive.status].push(incentive.incentiveId);
  }

  // This week's interviews: sent now, not claimed yet.
  for (const [index, participant] of firstOf(completedIn('INTERVIEWS', 'ACTIVE'), 4, 'who completed the active interviews').entries()) {
    const incentive = await sendAt(undefined, { participantId: participant.participantId, type: index === 0 ? 'PROVIDER_ONE_MONEY' : 'MONEY_OR_GIFT_CARD', amountCents: 7500 });
    ids[incentive.status].push(incentive.incentiveId);
  }

  // Sent by mistake to participants of a draft study, then canceled: a gift card (voided at the provider) and a custom reward.
  const draftParticipants = firstOf(
    demoParticipants.filter((participant) => participant.studyType === 'INTERVIEWS' && participant.studyStatus === 'DRAFT'),
    2,
    'of the draft interview study',
  );
  for (const [index, participant] of draftParticipants.entries()) {
    const body: SendIncentiveBody =
      index === 0
        ? { participantId: participant.participantId, type: 'MONEY_OR_GIFT_CARD', amountCents: 7500 }
        : { participantId: participant.participantId, type: 'CUSTOM', amountCents: 2000, customIncentiveId: 'tote-bag', customIncentiveValue: 'Branded tote bag' };
    const incentive = await sendAt(undefined, body);
    await incentives.cancelIncentive(context(clock), providers, incentive.incentiveId);
    ids.CANCELED.push(incentive.incentiveId);
  }
  return ids;
}
