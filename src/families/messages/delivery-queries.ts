import { type Kysely, sql } from 'kysely';
import type { DB, MessageEventType, MessageOrigin, MessageStatus } from '../../db/schema.js';
import { idPrefixes, newId } from '../../ids.js';
import { markUnreachable, type PersonAt, recordContacts } from '../people/writer.js';
import { recordServiceChanges } from '../audit/recorder.js';

type Executor = Kysely<DB>;

/** A message a dispatcher claimed, with everything rendering and sending it needs. */
export interface ClaimedMessage {
  workspace_id: string;
  message_id: string;
  person_id: string;
  study_id: string | null;
  /** Null for a message about no participant (links to a participant's pages then render empty). */
  participant_id: string | null;
  /** A REMINDER is written by its composer (MailDispatcherOptions.composers), not from a template. */
  origin: MessageOrigin;
  counts_as_contact: boolean;
  /** This attempt's number: 1 for the first. */
  attempt_count: number;
  email: string | null;
  first_name: string | null;
  last_name: string | null;
  is_deleted: boolean;
  is_opted_out: boolean;
  /** The person stopped this study's messages on their own page. */
  study_messages_stopped: boolean;
  contact_status: string;
  /** Null when the template was deleted meanwhile. */
  template_key: string | null;
  template_subject: string | null;
  template_text: string | null;
  template_html: string | null;
  study_external_name: string | null;
  study_external_description: string | null;
  workspace_name: string;
}

export interface ClaimRequest {
  now: string;
  /** The claimed messages come due again at this time if no outcome is recorded by then. */
  leaseUntil: string;
  /** At most this many messages in one claim. */
  batch: number;
  /** Per workspace, at most this many attempts started within the last 60 seconds (every instance's). */
  ratePerMinute: number;
  /** Only this workspace's messages (tests drain their own). */
  workspaceId?: string | undefined;
}

/**
 * Claims due messages in one statement: per workspace with due messages, its oldest due ones, as
 * many as its sending rate leaves for this minute. The claim moves each message's next_attempt_at
 * to the lease's end and counts the attempt in the same statement: another dispatcher skips rows
 * locked meanwhile and, after commit, finds them not due, so each attempt is made once; if this
 * process dies, they come due again when the lease ends. Two instances claiming at the same
 * instant each see the other's claims only once committed, so the rate may be passed by up to one
 * batch per instance.
 */
export async function claimDueMessages(db: Executor, request: ClaimRequest): Promise<ClaimedMessage[]> {
  const scope = request.workspaceId === undefined ? sql`true` : sql`m.workspace_id = ${request.workspaceId}`;
  const result = await sql<ClaimedMessage>`
    with due_workspaces as (
      select distinct m.workspace_id from messages m
      where m.status = 'QUEUED' and m.next_attempt_at <= ${request.now}::timestamptz and ${scope}
    ),
    budget as (
      select d.workspace_id, greatest(0, ${request.ratePerMinute}::int - (
        select count(*) from messages r
        where r.workspace_id = d.workspace_id and r.last_attempt_at > ${request.now}::timestamptz - interval '60 seconds' and r.last_attempt_at <= ${request.now}::timestamptz
      ))::int as free
      from due_workspaces d
    ),
    due as (
      select x.workspace_id, x.message_id
      from budget b
      cross join lateral (
        select m.workspace_id, m.message_id from messages m
        where m.workspace_id = b.workspace_id and m.status = 'QUEUED' and m.next_attempt_at <= ${request.now}::timestamptz
        order by m.next_attempt_at, m.message_id
        limit least(b.free, ${request.batch}::int)
        for update skip locked
      ) x
    ),
    claimed as (
      update messages m
      set next_attempt_at = ${request.leaseUntil}::timestamptz, attempt_count = m.attempt_count + 1, last_attempt_at = ${request.now}::timestamptz
      from due
      where m.workspace_id = due.workspace_id and m.message_id = due.message_id
      returning m.workspace_id, m.message_id, m.person_id, m.study_id, m.participant_id, m.template_id, m.origin, m.counts_as_contact, m.attempt_count
    )
    select c.workspace_id, c.message_id, c.person_id, c.study_id, c.participant_id, c.origin, c.counts_as_contact, c.attempt_count,
      p.email, p.first_name, p.last_name, p.deleted_at is not null as is_deleted, p.is_opted_out, p.contact_status,
      coalesce(pt.messages_stopped_at is not null, false) as study_messages_stopped,
      t.template_id || ':' || cast(extract(epoch from t.updated_at) * 1000000 as bigint) as template_key,
      t.subject as template_subject, t.text_body as template_text, t.html_body as template_html,
      s.plan->>'externalName' as study_external_name, s.plan->>'externalDescription' as study_external_description,
      w.name as workspace_name
    from claimed c
    join people p on p.workspace_id = c.workspace_id and p.person_id = c.person_id
    join workspaces w on w.workspace_id = c.workspace_id
    left join participants pt on pt.workspace_id = c.workspace_id and pt.participant_id = c.participant_id
    left join message_templates t on t.workspace_id = c.workspace_id and t.template_id = c.template_id
    left join studies s on s.workspace_id = c.workspace_id and s.study_id = c.study_id
    order by c.workspace_id, c.message_id
  `.execute(db);
  return result.rows;
}

/** What one attempt came to. */
export interface MessageOutcome {
  workspaceId: string;
  messageId: string;
  personId: string;
  attemptedAt: string;
  /** QUEUED again at nextAttemptAt (a temporary failure), or final. */
  status: MessageStatus;
  nextAttemptAt: string | null;
  event: MessageEventType;
  smtpCode: number | null;
  error: string | null;
  notSentReason: string | null;
  /** A delivered message that counts as a contact (not part of a move). */
  contact: boolean;
  /** The address refused for good: the person becomes UNREACHABLE. */
  hardBounce: boolean;
  /** What was sent (kept on a SENT message only). */
  sent?: { recipientEmail: string; subject: string; textBody: string; htmlBody: string | null; smtpMessageId: string | null };
}

/**
 * Records a batch of outcomes in one transaction, set-based: each message's next state (only a
 * message still leased by this claim moves), an event per attempt, the contacts that delivered
 * messages made, and the people whose address was refused for good, through the people family's
 * writer (so the search counts follow in the same transaction).
 */
export async function recordMessageOutcomes(db: Executor, outcomes: readonly MessageOutcome[]): Promise<void> {
  if (outcomes.length === 0) return;
  await db.transaction().execute(async (transaction) => {
    const column = <T>(pick: (outcome: MessageOutcome) => T) => outcomes.map(pick);
    const moved = await sql<{ workspace_id: string; message_id: string }>`
      update messages m
      set status = o.status, next_attempt_at = o.next_attempt_at, last_error = o.error, last_smtp_code = o.smtp_code,
        not_sent_reason = o.not_sent_reason,
        sent_at = case when o.status = 'SENT' then o.attempted_at else m.sent_at end,
        failed_at = case when o.status = 'FAILED' then o.attempted_at else m.failed_at end,
        recipient_email = coalesce(o.recipient_email, m.recipient_email), subject = coalesce(o.subject, m.subject),
        text_body = coalesce(o.text_body, m.text_body), html_body = coalesce(o.html_body, m.html_body),
        smtp_message_id = coalesce(o.smtp_message_id, m.smtp_message_id)
      from unnest(
        ${column((o) => o.workspaceId)}::text[], ${column((o) => o.messageId)}::text[], ${column((o) => o.status)}::text[],
        ${column((o) => o.nextAttemptAt)}::timestamptz[], ${column((o) => o.attemptedAt)}::timestamptz[], ${column((o) => o.error)}::text[],
        ${column((o) => o.smtpCode)}::int[], ${column((o) => o.notSentReason)}::text[],
        ${column((o) => o.sent?.recipientEmail ?? null)}::text[], ${column((o) => o.sent?.subject ?? null)}::text[],
        ${column((o) => o.sent?.textBody ?? null)}::text[], ${column((o) => o.sent?.htmlBody ?? null)}::text[],
        ${column((o) => o.sent?.smtpMessageId ?? null)}::text[]
      ) as o (workspace_id, message_id, status, next_attempt_at, attempted_at, error, smtp_code, not_sent_reason,
        recipient_email, subject, text_body, html_body, smtp_message_id)
      where m.workspace_id = o.workspace_id and m.message_id = o.message_id and m.status = 'QUEUED' and m.last_attempt_at = o.attempted_at
      returning m.workspace_id, m.message_id
    `.execute(transaction);
    const ours = new Set(moved.rows.map((row) => `${row.workspace_id}\u0000${row.message_id}`));
    const recorded = outcomes.filter((o) => ours.has(`${o.workspaceId}\u0000${o.messageId}`));
    if (recorded.length === 0) return;
    await transaction
      .insertInto('message_events')
      .values(
        recorded.map((o) => ({
          workspace_id: o.workspaceId,
          event_id: newId(idPrefixes.messageEvent),
          message_id: o.messageId,
          occurred_at: o.attemptedAt,
          type: o.event,
          smtp_code: o.smtpCode,
          detail: o.error ?? o.notSentReason,
        })),
      )
      .execute();
    const personAt = (o: MessageOutcome): PersonAt => ({ workspaceId: o.workspaceId, personId: o.personId, at: o.attemptedAt });
    await recordContacts(transaction, recorded.filter((o) => o.status === 'SENT' && o.contact).map(personAt));
    await markUnreachable(transaction, recorded.filter((o) => o.hardBounce).map(personAt));
    // The audit trail: a message's final state, the service's change (a retry leaves it QUEUED: no entry).
    await recordServiceChanges(
      transaction,
      recorded
        .filter((o) => o.status !== 'QUEUED')
        .map((o) => ({ workspaceId: o.workspaceId, at: o.attemptedAt, service: 'messages.deliver', operationId: 'deliverMessage', resourceType: 'message', resourceId: o.messageId, before: 'QUEUED', after: o.status })),
    );
  });
}
