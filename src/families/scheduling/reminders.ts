import { recordServiceChanges } from '../audit/recorder.js';
import type { Kysely } from 'kysely';
import type { Clock } from '../../clock.js';
import type { DB } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { idPrefixes, newId } from '../../ids.js';
import { type JobHandler, type Schedule, sweepScope } from '../../jobs/queue.js';
import { chooseLocale, type Locale, translator } from '../../participant/i18n.js';
import type { Composed, ComposeContext, MessageComposer } from '../messages/dispatcher.js';
import type { ClaimedMessage } from '../messages/delivery-queries.js';
import { queueServiceMessages, skipReasonOf } from '../messages/outbox.js';
import { deleteLinksOfMessage, issueLink } from '../participant-links/service.js';
import * as queries from './reminders-queries.js';

export const REMINDER_QUEUE = 'scheduling.reminders';
/** The name a reminder's message carries where a template's name would be (GET /messages). */
export const REMINDER_MESSAGE_NAME = 'Session reminder';
/** How often the sweep runs. */
export const REMINDER_SWEEP_SECONDS = 60;
/**
 * How late a reminder may still go: five sweeps. A sweep that runs late (a busy instance, a
 * restart) still sends what came due meanwhile; a reminder later than this (the service was down
 * longer) is not sent at all, rather than "your session is in 1 hour" forty minutes before it.
 */
export const REMINDER_LATENESS_SECONDS_MAX = 5 * REMINDER_SWEEP_SECONDS;
/** Reminders decided on per statement; a sweep takes batches until none is due. */
const SWEEP_BATCH = 1_000;

export interface SweepOptions {
  /** Only this workspace's reminders; undefined for every workspace. */
  workspaceId?: string | undefined;
  /** Without SMTP the messages are recorded NOT_SENT (SMTP_NOT_CONFIGURED), as every message is. */
  smtpConfigured: boolean;
  batch?: number;
}

export interface SweepResult {
  /** Messages queued (or recorded NOT_SENT without SMTP). */
  queued: number;
  /** Reminders decided on without a message: the person may not be sent to, or booked after the reminder's time. */
  skipped: number;
  /** Due reminders another sweep decided on first. */
  takenByOthers: number;
}

/**
 * Decides every due reminder once, set-based: one statement finds them (of one workspace or all),
 * one records each decision under its key (workspace, booking, sequence, offset) with `on conflict
 * do nothing`, and one queues the messages of the keys this sweep wrote, all in one transaction.
 * Two sweeps at once (two instances, or a slot's job beside a test's) may find the same
 * reminders; the second one's insert waits on the first's keys and writes none of them, so each
 * reminder is queued once. Whether the booking still stands is read again when the message is
 * sent (composeReminder).
 */
export async function sweepReminders(db: Kysely<DB>, clock: Clock, options: SweepOptions): Promise<SweepResult> {
  const result: SweepResult = { queued: 0, skipped: 0, takenByOthers: 0 };
  const batch = options.batch ?? SWEEP_BATCH;
  for (;;) {
    const now = clock.now();
    const at = now.toISOString();
    const found = await inTransaction(db, async (transaction) => {
      const due = await queries.findDueReminders(transaction, { now: at, latenessSecondsMax: REMINDER_LATENESS_SECONDS_MAX, workspaceId: options.workspaceId, limit: batch });
      const decisions = due.map((reminder): queries.ReminderDecision => {
        const skipReason = reminder.booked_after_due ? 'BOOKED_AFTER_DUE' : skipReasonOf({ ...reminder, participant_id: reminder.participant_id });
        return {
          workspaceId: reminder.workspace_id,
          bookingId: reminder.booking_id,
          sequence: reminder.sequence,
          offsetMinutes: reminder.offset_minutes,
          dueAt: reminder.due_at,
          messageId: skipReason ? null : newId(idPrefixes.message),
          skipReason: skipReason ?? null,
        };
      });
      const written = new Set((await queries.recordReminderDecisions(transaction, decisions, at)).map((key) => `${key.workspace_id}\u0000${key.booking_id}\u0000${key.sequence}\u0000${key.offset_minutes}`));
      const ours = decisions.filter((d) => written.has(`${d.workspaceId}\u0000${d.bookingId}\u0000${d.sequence}\u0000${d.offsetMinutes}`));
      const reminderOf = new Map(due.map((reminder) => [`${reminder.workspace_id}\u0000${reminder.booking_id}`, reminder]));
      const messages = ours
        .filter((d) => d.messageId !== null)
        .map((d) => {
          const reminder = reminderOf.get(`${d.workspaceId}\u0000${d.bookingId}`)!;
          return { workspaceId: d.workspaceId, messageId: d.messageId!, personId: reminder.person_id, studyId: reminder.study_id, participantId: reminder.participant_id };
        });
      await queueServiceMessages(transaction, { origin: 'REMINDER', name: REMINDER_MESSAGE_NAME, at, smtpConfigured: options.smtpConfigured }, messages);
      // The trail: each reminder message the service queued, by the sweep (its delivery is recorded as every message's).
      await recordServiceChanges(
        transaction,
        messages.map((message) => ({ workspaceId: message.workspaceId, at, service: REMINDER_QUEUE, operationId: 'queueReminder', resourceType: 'message', resourceId: message.messageId })),
      );
      result.queued += messages.length;
      result.skipped += ours.length - messages.length;
      result.takenByOthers += decisions.length - ours.length;
      return due.length;
    });
    if (found < batch) return result;
  }
}

/** The sweep as a job: every workspace's reminders for a system job, one workspace's for its job (sweepScope). */
export function sweepRemindersHandler(db: Kysely<DB>, clock: Clock, smtpConfigured: boolean): JobHandler {
  return {
    queue: REMINDER_QUEUE,
    run: (job) => sweepReminders(db, clock, { workspaceId: sweepScope(job), smtpConfigured }),
  };
}

export const sweepRemindersSchedule: Schedule = { name: REMINDER_QUEUE, queue: REMINDER_QUEUE, everySeconds: REMINDER_SWEEP_SECONDS };

function isTimeZone(zone: string | null): zone is string {
  if (!zone) return false;
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** A session's start as the person reads it: weekday, date and time in their zone, with the zone's offset ("GMT+5:45"). */
export function sessionTime(locale: Locale, at: string, timeZone: string): string {
  return new Intl.DateTimeFormat(locale, { weekday: 'long', year: 'numeric', month: 'long', day: 'numeric', hour: 'numeric', minute: '2-digit', timeZone, timeZoneName: 'short' }).format(new Date(at));
}

/**
 * A reminder as it is sent (the dispatcher's composer for origin REMINDER). It reads the booking
 * again: canceled, moved to another time (its sequence raised) or its session begun, the message
 * is NOT_SENT saying so. Otherwise it is written in the study's language (studyPlan.language, else
 * English) with the time in the person's zone (the booking's person_time_zone, else the host's),
 * and carries a fresh SCHEDULING link to move or cancel (a retried attempt replaces the link of the
 * attempt before, as the dispatcher does for templates' links).
 */
export const composeReminder: MessageComposer = async (message: ClaimedMessage, context: ComposeContext): Promise<Composed> => {
  const facts = await queries.findReminderFacts(context.db, message.workspace_id, message.message_id);
  // Its booking was deleted with the participant: nothing is booked any more.
  if (!facts || facts.booking_status !== 'BOOKED') return { notSent: 'BOOKING_CANCELED' };
  if (facts.booking_sequence !== facts.sequence) return { notSent: 'BOOKING_MOVED' };
  if (Date.parse(facts.starts_at) <= Date.parse(context.at)) return { notSent: 'SESSION_BEGUN' };
  if (message.participant_id === null || message.study_id === null) throw new Error('A reminder names its participant and study');
  if (message.attempt_count > 1) await deleteLinksOfMessage(context.db, message.workspace_id, message.message_id);
  const link = await issueLink(context.db, {
    workspaceId: message.workspace_id,
    participantId: message.participant_id,
    studyId: message.study_id,
    personId: message.person_id,
    purpose: 'SCHEDULING',
    publicUrl: context.publicUrl,
    at: context.at,
    messageId: message.message_id,
  });
  const i18n = translator(chooseLocale(facts.study_language, undefined));
  const timeZone = [facts.person_time_zone, facts.host_time_zone].find(isTimeZone) ?? 'UTC';
  const values = {
    study: facts.study_name ?? message.study_external_name ?? '',
    when: sessionTime(i18n.locale, facts.starts_at, timeZone),
    timeZone,
    link: link.url,
    workspace: message.workspace_name,
  };
  const text = `${i18n.t('reminder.email.body', values)}\n\n--\n${i18n.t('reminder.email.unsubscribe', { link: context.unsubscribeUrl })}\n`;
  return { subject: i18n.t('reminder.email.subject', values), text, html: null };
};
