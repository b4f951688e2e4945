import { type Insertable, type Kysely, type RawBuilder, type Selectable, sql, type Updateable } from 'kysely';
import type { DB, MessageStatus, MessageTemplatesTable } from '../../db/schema.js';
import { idPrefixes, newId } from '../../ids.js';
import { deliveryErrors, storedDetailTexts, unsubscribedDetail } from './delivery-errors.js';

type Executor = Kysely<DB>;

export type MessageTemplateRow = Selectable<MessageTemplatesTable>;

const templateColumns = ['template_id', 'name', 'subject', 'text_body', 'html_body', 'created_at', 'updated_at'] as const;

export async function insertTemplate(db: Executor, template: Insertable<MessageTemplatesTable>) {
  return db.insertInto('message_templates').values(template).returning(templateColumns).executeTakeFirstOrThrow();
}

export async function findTemplate(db: Executor, workspaceId: string, templateId: string) {
  return db
    .selectFrom('message_templates')
    .where('workspace_id', '=', workspaceId)
    .where('template_id', '=', templateId)
    .select(templateColumns)
    .executeTakeFirst();
}

export async function updateTemplate(db: Executor, workspaceId: string, templateId: string, changes: Updateable<MessageTemplatesTable>) {
  return db
    .updateTable('message_templates')
    .set(changes)
    .where('workspace_id', '=', workspaceId)
    .where('template_id', '=', templateId)
    .returning(templateColumns)
    .executeTakeFirst();
}

/** Whether a template was deleted (false: none of that id in the workspace). */
export async function deleteTemplate(db: Executor, workspaceId: string, templateId: string): Promise<boolean> {
  const result = await db.deleteFrom('message_templates').where('workspace_id', '=', workspaceId).where('template_id', '=', templateId).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** A page of templates in the order they were made, after the keyset `afterTemplateId`; plus the exact total. */
export async function listTemplates(db: Executor, workspaceId: string, afterTemplateId: string | undefined, size: number) {
  const base = db.selectFrom('message_templates').where('workspace_id', '=', workspaceId);
  const [rows, count] = await Promise.all([
    base
      .$if(afterTemplateId !== undefined, (query) => query.where('template_id', '>', afterTemplateId!))
      .select(templateColumns)
      .orderBy('template_id')
      .limit(size + 1)
      .execute(),
    base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.total) };
}

/** The workspace's name, for `workspace.name`. */
export async function findWorkspaceName(db: Executor, workspaceId: string): Promise<string> {
  const row = await db.selectFrom('workspaces').where('workspace_id', '=', workspaceId).select('name').executeTakeFirst();
  return row?.name ?? '';
}

// Messages: the record of every message sent (and the mail outbox, see delivery-queries.ts).

const messageColumns = [
  'message_id',
  'person_id',
  'study_id',
  'participant_id',
  'template_id',
  'template_name',
  'origin',
  'status',
  'not_sent_reason',
  'attempt_count',
  'next_attempt_at',
  'last_error',
  'last_smtp_code',
  'queued_at',
  'sent_at',
  'failed_at',
  'unsubscribed_at',
  'counts_as_contact',
  'recipient_email',
  'subject',
  'text_body',
  'html_body',
] as const;

export async function findMessage(db: Executor, workspaceId: string, messageId: string) {
  return db.selectFrom('messages').where('workspace_id', '=', workspaceId).where('message_id', '=', messageId).select(messageColumns).executeTakeFirst();
}

/** A message's history, oldest first. */
export async function listMessageEvents(db: Executor, workspaceId: string, messageId: string) {
  return db
    .selectFrom('message_events')
    .where('workspace_id', '=', workspaceId)
    .where('message_id', '=', messageId)
    .select(['type', 'occurred_at', 'smtp_code', 'detail'])
    .orderBy('event_id')
    .execute();
}

/** A page of messages in the order they were queued (their ids are time-ordered), after the keyset `afterMessageId`; plus the exact total. */
export async function listMessages(
  db: Executor,
  workspaceId: string,
  filter: { studyId?: string | undefined; personId?: string | undefined; status?: MessageStatus | undefined },
  afterMessageId: string | undefined,
  size: number,
) {
  const base = db
    .selectFrom('messages')
    .where('workspace_id', '=', workspaceId)
    .$if(filter.studyId !== undefined, (query) => query.where('study_id', '=', filter.studyId!))
    .$if(filter.personId !== undefined, (query) => query.where('person_id', '=', filter.personId!))
    .$if(filter.status !== undefined, (query) => query.where('status', '=', filter.status!));
  const [rows, count] = await Promise.all([
    base
      .$if(afterMessageId !== undefined, (query) => query.where('message_id', '>', afterMessageId!))
      .select(messageColumns)
      .orderBy('message_id')
      .limit(size + 1)
      .execute(),
    base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.total) };
}

/** What following an unsubscribe link needs: the person the message went to (locked against a concurrent click), and whether it was followed before. */
export async function findMessageForUnsubscribe(db: Executor, workspaceId: string, messageId: string) {
  return db
    .selectFrom('messages as m')
    .innerJoin('people as p', (join) => join.onRef('p.workspace_id', '=', 'm.workspace_id').onRef('p.person_id', '=', 'm.person_id'))
    .innerJoin('workspaces as w', 'w.workspace_id', 'm.workspace_id')
    .where('m.workspace_id', '=', workspaceId)
    .where('m.message_id', '=', messageId)
    .select(['m.person_id', 'm.unsubscribed_at', 'p.is_opted_out', 'w.name as workspace_name'])
    .executeTakeFirst();
}

/** The message's unsubscribe, and its event. */
export async function markUnsubscribed(db: Executor, workspaceId: string, messageId: string, at: string) {
  await db.updateTable('messages').set({ unsubscribed_at: at }).where('workspace_id', '=', workspaceId).where('message_id', '=', messageId).execute();
  await db
    .insertInto('message_events')
    .values({ workspace_id: workspaceId, event_id: newId(idPrefixes.messageEvent), message_id: messageId, occurred_at: at, type: 'UNSUBSCRIBED', smtp_code: null, detail: unsubscribedDetail })
    .execute();
}

/**
 * Deleting people (src/families/people/erasure.ts) and the purge erase what their messages hold
 * of them: the address and what was sent (rendered with their values), and a failure's text
 * written before the fixed vocabulary (which could quote the address). The record that a message
 * was sent, when and how it went, stays.
 */
export async function eraseMessagesOf(transaction: Executor, people: RawBuilder<unknown>): Promise<void> {
  await sql`
    update messages set recipient_email = null, subject = null, text_body = null, html_body = null,
      last_error = case when last_error is null or ${keptDetail(sql.ref('last_error'))} then last_error else ${deliveryErrors.FAILED} end
    where (workspace_id, person_id) in ${people}
      and (recipient_email is not null or subject is not null or text_body is not null or html_body is not null or (last_error is not null and not ${keptDetail(sql.ref('last_error'))}))
  `.execute(transaction);
  await sql`
    update message_events e set detail = ${deliveryErrors.FAILED}
    from messages m
    where m.workspace_id = e.workspace_id and m.message_id = e.message_id and (m.workspace_id, m.person_id) in ${people}
      and e.detail is not null and not ${keptDetail(sql.ref('e.detail'))}
  `.execute(transaction);
}

/** Whether a stored failure text is one of the fixed vocabulary (delivery-errors.ts), which holds nothing of the person. */
function keptDetail(column: RawBuilder<unknown> | ReturnType<typeof sql.ref>) {
  return sql<boolean>`(regexp_replace(${column}, ' \\(no attempts left: [0-9]+ made\\)$', '') = any(${storedDetailTexts}::text[]))`;
}

/** What was sent to the person, oldest first (the person's data download): the message, its study, its state, and the text they were sent. */
export async function findMessagesOfPerson(db: Executor, workspaceId: string, personId: string) {
  return db
    .selectFrom('messages')
    .where('workspace_id', '=', workspaceId)
    .where('person_id', '=', personId)
    .select(['message_id', 'study_id', 'status', 'queued_at', 'sent_at', 'recipient_email', 'subject', 'text_body'])
    .orderBy('message_id')
    .execute();
}
