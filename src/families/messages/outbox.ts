import { type Kysely, sql } from 'kysely';
import type { DB, MessageOrigin } from '../../db/schema.js';
import { idPrefixes, newId } from '../../ids.js';

/** The channel a commit that queued messages notifies; the mail dispatchers listen on it (runtime.ts). */
export const mailOutboxChannel = 'mail_outbox';

/** Why a chosen recipient gets no message: they are never sent to. */
export const skipReasons = ['OPTED_OUT', 'DELETED', 'UNREACHABLE', 'NO_EMAIL'] as const;
export type SkipReason = (typeof skipReasons)[number];

/** Why a message was recorded but never handed to SMTP. */
export const notSentReasons = {
  SMTP_NOT_CONFIGURED: 'SMTP is not configured (SMTP_HOST): the message was recorded, not sent',
  OPTED_OUT: 'The person opted out before the message was sent',
  DELETED: 'The person was deleted before the message was sent',
  UNREACHABLE: 'The person became unreachable before the message was sent',
  NO_EMAIL: 'The person has no email address',
  TEMPLATE_DELETED: 'The template was deleted before the message was sent',
  BOOKING_CANCELED: 'The booking was canceled before the reminder was sent',
  BOOKING_MOVED: 'The booking moved to another time before the reminder was sent: the new time has reminders of its own',
  SESSION_BEGUN: 'The session had begun before the reminder could be sent',
} as const;
export type NotSentReason = keyof typeof notSentReasons;

/** A chosen recipient with what decides whether they may be sent to. */
export interface Recipient {
  participant_id: string | null;
  person_id: string;
  is_deleted: boolean;
  is_opted_out: boolean;
  contact_status: string;
  has_email: boolean;
  /** The person stopped this study's messages on their own page (participants.messages_stopped_at): an opt-out of one study. */
  study_messages_stopped?: boolean;
}

export function skipReasonOf(recipient: Recipient): SkipReason | undefined {
  if (recipient.is_deleted) return 'DELETED';
  if (recipient.is_opted_out || recipient.contact_status === 'OPTED_OUT' || recipient.study_messages_stopped === true) return 'OPTED_OUT';
  if (recipient.contact_status === 'UNREACHABLE') return 'UNREACHABLE';
  if (!recipient.has_email) return 'NO_EMAIL';
  return undefined;
}

export interface QueueRequest {
  workspaceId: string;
  studyId: string | null;
  template: { template_id: string; name: string };
  origin: MessageOrigin;
  userId: string;
  at: string;
  /** Without SMTP the messages are recorded NOT_SENT, saying so, and nothing pretends to send them. */
  smtpConfigured: boolean;
}

export interface QueueResult {
  queued: number;
  notSent: number;
  skipped: Record<SkipReason, number>;
  messageIds: string[];
}

/**
 * Records one message per recipient who may be sent to, in the caller's transaction, in one
 * statement whatever their number; the others are counted by why they are skipped. Queued
 * messages wake the dispatchers when the transaction commits (NOTIFY is held until then, and
 * dropped with a rollback). A message sent as part of a move (origin INVITED or SCREENER_SENT) is
 * not a contact of its own: the move is.
 */
export async function queueMessages(transaction: Kysely<DB>, request: QueueRequest, recipients: readonly Recipient[]): Promise<QueueResult> {
  if (!transaction.isTransaction) throw new Error('Messages are queued in the transaction of the request: pass a transaction');
  const skipped = Object.fromEntries(skipReasons.map((reason) => [reason, 0])) as Record<SkipReason, number>;
  const sendable: Recipient[] = [];
  for (const recipient of recipients) {
    const reason = skipReasonOf(recipient);
    if (reason) skipped[reason]++;
    else sendable.push(recipient);
  }
  const messageIds = sendable.map(() => newId(idPrefixes.message));
  if (sendable.length > 0) {
    const status = request.smtpConfigured ? 'QUEUED' : 'NOT_SENT';
    await sql`
      insert into messages (workspace_id, message_id, person_id, study_id, participant_id, template_id, template_name, origin, counts_as_contact,
        status, not_sent_reason, next_attempt_at, queued_at, created_by_user_id)
      select ${request.workspaceId}, r.message_id, r.person_id, ${request.studyId}, r.participant_id, ${request.template.template_id}, ${request.template.name},
        ${request.origin}, ${request.origin === 'SEND'}, ${status}, ${request.smtpConfigured ? null : 'SMTP_NOT_CONFIGURED'},
        ${request.smtpConfigured ? request.at : null}::timestamptz, ${request.at}::timestamptz, ${request.userId}
      from unnest(${messageIds}::text[], ${sendable.map((r) => r.person_id)}::text[], ${sendable.map((r) => r.participant_id)}::text[]) as r (message_id, person_id, participant_id)
    `.execute(transaction);
    if (request.smtpConfigured) await sql`select pg_notify(${mailOutboxChannel}, '')`.execute(transaction);
  }
  return {
    queued: request.smtpConfigured ? sendable.length : 0,
    notSent: request.smtpConfigured ? 0 : sendable.length,
    skipped,
    messageIds,
  };
}

/** A message the service writes from its own catalogue (no template, no user asked for it), for one person. */
export interface ServiceMessage {
  workspaceId: string;
  /** Made by the caller, which records it beside its own key of the message in the same transaction. */
  messageId: string;
  personId: string;
  studyId: string | null;
  participantId: string | null;
}

/**
 * Records the service's own messages (a session's reminders), of any number of workspaces, in
 * one statement, in the caller's transaction. The caller has already left out who may not be sent
 * to (skipReasonOf); the dispatcher reads the person again as each goes, and renders it with the
 * composer of its origin (MailDispatcherOptions.composers). Such a message is not a contact: what
 * it is about (the booking) is.
 */
export async function queueServiceMessages(
  transaction: Kysely<DB>,
  request: { origin: Extract<MessageOrigin, 'REMINDER'>; name: string; at: string; smtpConfigured: boolean },
  messages: readonly ServiceMessage[],
): Promise<void> {
  if (!transaction.isTransaction) throw new Error('Messages are queued in the transaction of their cause: pass a transaction');
  if (messages.length === 0) return;
  const column = <T>(pick: (message: ServiceMessage) => T) => messages.map(pick);
  await sql`
    insert into messages (workspace_id, message_id, person_id, study_id, participant_id, template_id, template_name, origin, counts_as_contact,
      status, not_sent_reason, next_attempt_at, queued_at, created_by_user_id)
    select m.workspace_id, m.message_id, m.person_id, m.study_id, m.participant_id, null, ${request.name}, ${request.origin}, false,
      ${request.smtpConfigured ? 'QUEUED' : 'NOT_SENT'}, ${request.smtpConfigured ? null : 'SMTP_NOT_CONFIGURED'},
      ${request.smtpConfigured ? request.at : null}::timestamptz, ${request.at}::timestamptz, null
    from unnest(${column((m) => m.workspaceId)}::text[], ${column((m) => m.messageId)}::text[], ${column((m) => m.personId)}::text[],
      ${column((m) => m.studyId)}::text[], ${column((m) => m.participantId)}::text[]) as m (workspace_id, message_id, person_id, study_id, participant_id)
  `.execute(transaction);
  if (request.smtpConfigured) await sql`select pg_notify(${mailOutboxChannel}, '')`.execute(transaction);
}
