import { type Kysely, sql } from 'kysely';
import type { CallContext as SharedCallContext } from '../../context.js';
import type { DB, MessageOrigin, MessageStatus } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import type { CursorCodec } from '../../http/cursor.js';
import { badRequest, notFound } from '../../http/errors.js';
import { MASKED_TEXT, maskEmail } from '../../http/masking.js';
import { compileSearch } from '../../search/run.js';
import type { RootFilter } from '../../search/schemas.js';
import { byParticipantId, participantsTarget } from '../participants/search-target.js';
import { catalogue } from '../search-catalogue.js';
import { optOutWithin } from '../people/service.js';
import * as queries from './queries.js';
import { notSentReasons, type NotSentReason, type QueueResult, queueMessages, type Recipient } from './outbox.js';
import { parseTemplate } from './template-language.js';
import { findAnswerableScreener } from '../studies/service.js';
import { findServableConsentForm } from '../consent-forms/service.js';
import { studyExists } from '../studies/queries.js';
import { studyHasHosts } from '../scheduling/service.js';
import { publicDetail } from './delivery-errors.js';

const notSentReasonCodes = Object.keys(notSentReasons);
import { parseUnsubscribeToken, verifyUnsubscribeMac } from './unsubscribe.js';

export type CallContext = Pick<SharedCallContext, 'db' | 'clock' | 'workspaceId' | 'userId' | 'canReadPersonalData' | 'smtpConfigured'>;

/** Participants named by id in one send. */
export const MAX_PARTICIPANT_IDS = 1_000;
/**
 * Recipients one send by filter may reach. The messages are written by one statement in the
 * request's transaction and rendered as they are sent, so a send is cheap; the cap keeps one
 * request's transaction short. A filter matching more is refused (400): split it (by a property,
 * or by ADDED_TO_STUDY_AT) into several sends.
 */
export const MAX_RECIPIENTS_PER_SEND = 50_000;

/** The links a template may carry that name one participant's page, and what the study must have for each. */
const participantPageLinks = ['links.screener', 'links.consent', 'links.scheduling'] as const;

/**
 * The template of a send about `studyId`, or 404 naming `path`. A template whose participant
 * link would open a page with nothing to do is refused: `links.screener` for a study without a
 * screener question, `links.consent` for a study whose plan names no consent form of the
 * workspace, `links.scheduling` for a study with no host to book with.
 */
async function sendableTemplate(db: Kysely<DB>, workspaceId: string, templateId: string, studyId: string, path: string[]) {
  const template = await queries.findTemplate(db, workspaceId, templateId);
  if (!template) throw notFound('Message template', path);
  const sources = { subject: template.subject, textBody: template.text_body, htmlBody: template.html_body } as const;
  const used = new Set<string>();
  for (const [field, source] of Object.entries(sources)) {
    if (source === null) continue;
    const { variables } = await parseTemplate(field as 'subject', source);
    for (const link of participantPageLinks) if (variables.has(link)) used.add(link);
  }
  // An unknown study is left to the caller's 404 naming studyId.
  if (used.has('links.screener') && (await studyExists(db, workspaceId, studyId)) && !(await findAnswerableScreener(db, workspaceId, studyId))?.questions.length) {
    throw badRequest('The template uses links.screener, but the study has no screener question to answer: define its screener (PUT /studies/{studyId}/screener) first', path);
  }
  if (used.has('links.consent')) {
    const study = await db.selectFrom('studies').where('workspace_id', '=', workspaceId).where('study_id', '=', studyId).select(sql<string | null>`plan->>'consentFormId'`.as('consent_form_id')).executeTakeFirst();
    if (study && !(await findServableConsentForm(db, workspaceId, study.consent_form_id))) {
      throw badRequest("The template uses links.consent, but the study's plan names no consent form of this workspace (studyPlan.consentFormId)", path);
    }
  }
  if (used.has('links.scheduling') && (await studyExists(db, workspaceId, studyId)) && !(await studyHasHosts(db, workspaceId, studyId))) {
    throw badRequest('The template uses links.scheduling, but the study has no host to book a session with: set its hosts and hours (PUT /studies/{studyId}/schedule) first', path);
  }
  return template;
}

const recipientColumns = sql`pt.participant_id, pt.person_id, p.deleted_at is not null as is_deleted, p.is_opted_out, p.contact_status, p.email is not null as has_email, pt.messages_stopped_at is not null as study_messages_stopped`;

export interface SendBody {
  templateId: string;
  participantIds?: string[];
  filter?: RootFilter;
}

export interface SendResult extends Omit<QueueResult, 'messageIds'> {
  recipients: number;
  notSentReason: string | null;
}

/**
 * POST /studies/{studyId}/messages: one message per chosen participant of the study who may be
 * sent to, queued in one transaction (or recorded NOT_SENT without SMTP); the others are counted
 * by why they are skipped.
 */
export async function sendToParticipants(context: CallContext, cursors: CursorCodec, studyId: string, body: SendBody): Promise<SendResult> {
  const { workspaceId } = context;
  if (body.participantIds !== undefined && body.filter !== undefined) throw badRequest('Give participantIds or filter, not both', ['filter']);
  if (body.participantIds === undefined && body.filter === undefined) throw badRequest('Give participantIds (the participants to send to) or filter (a RootFilter over the study\'s participants)', ['participantIds']);
  const template = await sendableTemplate(context.db, workspaceId, body.templateId, studyId, ['templateId']);
  return inTransaction(context.db, async (db) => {
    const study = await db.selectFrom('studies').where('workspace_id', '=', workspaceId).where('study_id', '=', studyId).select('study_id').forShare().executeTakeFirst();
    if (!study) throw notFound('Study', ['studyId']);
    let recipients: Recipient[];
    if (body.participantIds !== undefined) {
      const distinct = [...new Set(body.participantIds)];
      const { rows } = await sql<Recipient>`
        select ${recipientColumns}
        from participants pt join people p on p.workspace_id = pt.workspace_id and p.person_id = pt.person_id
        where pt.workspace_id = ${workspaceId} and pt.study_id = ${studyId} and pt.participant_id = any(${distinct}::text[])
      `.execute(db);
      const found = new Set(rows.map((row) => row.participant_id));
      const missing = body.participantIds.findIndex((id) => !found.has(id));
      if (missing >= 0) throw notFound('Participant', ['participantIds', String(missing)]);
      recipients = rows;
    } else {
      // The participants search itself (its names, validation and the study's live participants) chooses the recipients.
      const statements = await compileSearch(
        { db, cursors, workspaceId, now: context.clock.now(), canReadPersonalData: context.canReadPersonalData, catalogue },
        { ...participantsTarget(workspaceId, studyId), columns: recipientColumns },
        body.filter,
        { size: MAX_RECIPIENTS_PER_SEND },
        byParticipantId,
      );
      const { rows } = await (statements.page as ReturnType<typeof sql<Recipient>>).execute(db);
      if (rows.length > MAX_RECIPIENTS_PER_SEND) throw badRequest(`More than ${MAX_RECIPIENTS_PER_SEND} participants match the filter: narrow it, and send in several requests`, ['filter']);
      recipients = rows;
    }
    const result = await queueMessages(
      db,
      { workspaceId, studyId, template, origin: 'SEND', userId: context.userId, at: context.clock.now().toISOString(), smtpConfigured: context.smtpConfigured === true },
      recipients,
    );
    const { messageIds: _ids, ...counts } = result;
    return { ...counts, recipients: recipients.length, notSentReason: result.notSent > 0 ? notSentReasons.SMTP_NOT_CONFIGURED : null };
  });
}

/** The message a participant's move sent, or why none was. */
export interface MoveMessage {
  messageId: string | null;
  status: 'QUEUED' | 'NOT_SENT' | 'SKIPPED';
  reason: string | null;
}

/** Checks a move's `sendMessage` before its transaction: the template exists and can be sent. */
export async function checkMoveTemplate(context: Pick<CallContext, 'db' | 'workspaceId'>, templateId: string, studyId: string) {
  return sendableTemplate(context.db, context.workspaceId, templateId, studyId, ['sendMessage', 'templateId']);
}

/**
 * The message of a participant's move to INVITED or SCREENER_SENT, queued in the move's
 * transaction. It is not a contact of its own: the move is (its status event).
 */
export async function queueMoveMessage(
  context: Pick<CallContext, 'clock' | 'workspaceId' | 'userId' | 'smtpConfigured'>,
  transaction: Kysely<DB>,
  move: { studyId: string; participantId: string; personId: string; origin: Exclude<MessageOrigin, 'SEND'>; template: { template_id: string; name: string } },
): Promise<MoveMessage> {
  const { rows } = await sql<Recipient>`
    select ${move.participantId}::text as participant_id, p.person_id, p.deleted_at is not null as is_deleted, p.is_opted_out, p.contact_status, p.email is not null as has_email,
      coalesce((select pt.messages_stopped_at is not null from participants pt where pt.workspace_id = p.workspace_id and pt.participant_id = ${move.participantId}), false) as study_messages_stopped
    from people p where p.workspace_id = ${context.workspaceId} and p.person_id = ${move.personId}
  `.execute(transaction);
  const result = await queueMessages(
    transaction,
    { workspaceId: context.workspaceId, studyId: move.studyId, template: move.template, origin: move.origin, userId: context.userId, at: context.clock.now().toISOString(), smtpConfigured: context.smtpConfigured === true },
    rows,
  );
  const skipped = Object.entries(result.skipped).find(([, count]) => count > 0)?.[0];
  if (skipped) return { messageId: null, status: 'SKIPPED', reason: skipped };
  return { messageId: result.messageIds[0]!, status: result.queued > 0 ? 'QUEUED' : 'NOT_SENT', reason: result.notSent > 0 ? notSentReasons.SMTP_NOT_CONFIGURED : null };
}

// Reading messages.

export type MessageRow = Awaited<ReturnType<typeof queries.findMessage>> & object;

export function presentMessage(row: MessageRow, canReadPersonalData: boolean) {
  return {
    messageId: row.message_id,
    personId: row.person_id,
    studyId: row.study_id,
    participantId: row.participant_id,
    templateId: row.template_id,
    templateName: row.template_name,
    origin: row.origin,
    status: row.status,
    notSentReason: row.not_sent_reason === null ? null : (notSentReasons[row.not_sent_reason as NotSentReason] ?? row.not_sent_reason),
    attempts: row.attempt_count,
    nextAttemptAt: row.status === 'QUEUED' ? row.next_attempt_at : null,
    lastError: publicDetail(row.last_error, notSentReasonCodes),
    lastSmtpCode: row.last_smtp_code,
    queuedAt: row.queued_at,
    sentAt: row.sent_at,
    failedAt: row.failed_at,
    unsubscribedAt: row.unsubscribed_at,
    countsAsContact: row.counts_as_contact,
    recipientEmail: maskEmail(row.recipient_email, canReadPersonalData),
  };
}

export async function getMessage(context: Pick<CallContext, 'db' | 'workspaceId' | 'canReadPersonalData'>, messageId: string) {
  const row = await queries.findMessage(context.db, context.workspaceId, messageId);
  if (!row) throw notFound('Message', ['messageId']);
  const events = await queries.listMessageEvents(context.db, context.workspaceId, messageId);
  // The rendered subject and bodies hold the person's name and more: masked whole for a token without the personal-data right.
  const personal = (value: string | null) => (value === null || context.canReadPersonalData ? value : MASKED_TEXT);
  return {
    ...presentMessage(row, context.canReadPersonalData),
    subject: personal(row.subject),
    textBody: personal(row.text_body),
    htmlBody: personal(row.html_body),
    events: events.map((event) => ({ type: event.type, occurredAt: event.occurred_at, smtpCode: event.smtp_code, detail: publicDetail(event.detail, notSentReasonCodes) })),
  };
}

export interface MessageFilter {
  studyId?: string | undefined;
  personId?: string | undefined;
  status?: MessageStatus | undefined;
}

export async function listMessages(context: Pick<CallContext, 'db' | 'workspaceId' | 'canReadPersonalData'>, filter: MessageFilter, afterMessageId: string | undefined, size: number) {
  const { rows, total } = await queries.listMessages(context.db, context.workspaceId, filter, afterMessageId, size);
  return { rows: rows.slice(0, size).map((row) => presentMessage(row, context.canReadPersonalData)), hasNextPage: rows.length > size, total };
}

// Unsubscribing.

const linkNotFound = () => notFound('Unsubscribe link', ['token']);

/** The message and person a well-formed, genuine link names; a malformed, forged or altered one is a 404. */
async function genuineLink(db: Kysely<DB>, key: Buffer, token: string) {
  const claim = parseUnsubscribeToken(token);
  if (!claim) throw linkNotFound();
  const message = await queries.findMessageForUnsubscribe(db, claim.workspaceId, claim.messageId);
  if (!message || !verifyUnsubscribeMac(key, claim, message.person_id)) throw linkNotFound();
  return { claim, message };
}

/** GET of the link: whether it is genuine and the person is already opted out; changes nothing (mail scanners follow links). */
export async function inspectUnsubscribe(db: Kysely<DB>, key: Buffer, token: string) {
  const { message } = await genuineLink(db, key, token);
  return { workspaceName: message.workspace_name, unsubscribed: message.unsubscribed_at !== null || message.is_opted_out };
}

/**
 * The one-click unsubscribe (RFC 8058): opts the person out through the people family, as PUT
 * /people/{id}/opted-out does (contact status OPTED_OUT, the `person.opted_out` event), and
 * records an UNSUBSCRIBED event on the message, once: following the link again changes nothing.
 */
export async function unsubscribe(context: Pick<SharedCallContext, 'db' | 'clock'>, key: Buffer, token: string) {
  return inTransaction(context.db, async (db) => {
    const { claim, message } = await genuineLink(db, key, token);
    const at = context.clock.now().toISOString();
    await optOutWithin({ clock: context.clock, workspaceId: claim.workspaceId, canReadPersonalData: false }, db, message.person_id);
    if (message.unsubscribed_at === null) await queries.markUnsubscribed(db, claim.workspaceId, claim.messageId, at);
    return { workspaceName: message.workspace_name, workspaceId: claim.workspaceId, personId: message.person_id, messageId: claim.messageId };
  });
}
