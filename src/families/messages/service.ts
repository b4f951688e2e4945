import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import type { CallContext as SharedCallContext } from '../../context.js';
import { notFound, personalDataRequired } from '../../http/errors.js';
import { maskEmail, maskText } from '../../http/masking.js';
import { idPrefixes, newId } from '../../ids.js';
import { findPersonById } from '../people/queries.js';
import { findStudy } from '../studies/queries.js';
import * as queries from './queries.js';
import type { MessageTemplateRow } from './queries.js';
import { type CreateMessageTemplateBody, type MessageTemplate, PLACEHOLDER_LINK_BASE, type PreviewBody, type UpdateMessageTemplateBody } from './schemas.js';
import { checkTemplate, parseTemplate, renderTemplate, type TemplateField, type TemplateValues, type VariableName } from './template-language.js';

export type CallContext = Pick<SharedCallContext, 'db' | 'clock' | 'workspaceId' | 'userId' | 'canReadPersonalData'>;

function present(row: Pick<MessageTemplateRow, 'template_id' | 'name' | 'subject' | 'text_body' | 'html_body' | 'created_at' | 'updated_at'>): MessageTemplate {
  return {
    templateId: row.template_id,
    name: row.name,
    subject: row.subject,
    textBody: row.text_body,
    htmlBody: row.html_body,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/**
 * Parses every field given (subject, text body, HTML body, in that order) and renders it with the
 * catalogue's examples within the render budget: the first fault is the 400. A key without the
 * personal-data right may not write a field that reads the person's values (`person.*`): a
 * template is a program over them, and could carry them where the key can see them (a link or an
 * image address of its own server: `<img src="https://…/?e={{ person.email }}">`, or an error or
 * status that depends on them). Fields that read no personal value it may write.
 */
async function checkSources(context: Pick<CallContext, 'canReadPersonalData' | 'workspaceId'>, sources: Partial<Record<TemplateField, string | null>>): Promise<void> {
  for (const field of ['subject', 'textBody', 'htmlBody'] as const) {
    const source = sources[field];
    if (typeof source !== 'string') continue;
    const { variables } = await parseTemplate(field, source);
    if (!context.canReadPersonalData && [...variables].some(readsPersonalData)) throw personalDataRequired(`A template whose ${field} reads the person's values`);
    await checkTemplate(field, source, context.workspaceId);
  }
}

/** The catalogue's variables that hold personal data: the person's names and email. */
export const readsPersonalData = (variable: VariableName) => variable.startsWith('person.');

export async function createTemplate(context: CallContext, body: CreateMessageTemplateBody): Promise<MessageTemplate> {
  await checkSources(context, body);
  const at = context.clock.now().toISOString();
  const row = await queries.insertTemplate(context.db, {
    workspace_id: context.workspaceId,
    template_id: newId(idPrefixes.messageTemplate),
    name: body.name,
    subject: body.subject,
    text_body: body.textBody,
    html_body: body.htmlBody ?? null,
    created_by_user_id: context.userId,
    created_at: at,
    updated_at: at,
  });
  return present(row);
}

async function templateOrNotFound(context: CallContext, templateId: string): Promise<MessageTemplateRow> {
  const row = await queries.findTemplate(context.db, context.workspaceId, templateId);
  if (!row) throw notFound('Message template', ['templateId']);
  return row as MessageTemplateRow;
}

export async function getTemplate(context: CallContext, templateId: string): Promise<MessageTemplate> {
  return present(await templateOrNotFound(context, templateId));
}

export async function listTemplates(context: CallContext, afterTemplateId: string | undefined, size: number) {
  const { rows, total } = await queries.listTemplates(context.db, context.workspaceId, afterTemplateId, size);
  return { rows: rows.slice(0, size).map(present), hasNextPage: rows.length > size, total };
}

/** PATCH: only the fields given change; `htmlBody: null` removes the HTML body. */
export async function updateTemplate(context: CallContext, templateId: string, body: UpdateMessageTemplateBody): Promise<MessageTemplate> {
  await checkSources(context, body);
  const row = await queries.updateTemplate(context.db, context.workspaceId, templateId, {
    ...(body.name !== undefined ? { name: body.name } : {}),
    ...(body.subject !== undefined ? { subject: body.subject } : {}),
    ...(body.textBody !== undefined ? { text_body: body.textBody } : {}),
    ...(body.htmlBody !== undefined ? { html_body: body.htmlBody } : {}),
    updated_at: context.clock.now().toISOString(),
  });
  if (!row) throw notFound('Message template', ['templateId']);
  return present(row);
}

export async function deleteTemplate(context: CallContext, templateId: string): Promise<void> {
  if (!(await queries.deleteTemplate(context.db, context.workspaceId, templateId))) throw notFound('Message template', ['templateId']);
}

const placeholderLinks: TemplateValues['links'] = {
  screener: `${PLACEHOLDER_LINK_BASE}/screener`,
  consent: `${PLACEHOLDER_LINK_BASE}/consent`,
  scheduling: `${PLACEHOLDER_LINK_BASE}/scheduling`,
  unsubscribe: `${PLACEHOLDER_LINK_BASE}/unsubscribe`,
};

/**
 * The template rendered for one live person of the workspace (and one study, when given), as it
 * would be sent but for the links, which are placeholders until sending makes the signed ones.
 * A token without the personal-data right sees the person's values masked, as in `GET /people`.
 */
export async function previewTemplate(context: CallContext, templateId: string, body: PreviewBody) {
  const template = await templateOrNotFound(context, templateId);
  const [person, study, workspaceName] = await Promise.all([
    findPersonById(context.db, context.workspaceId, body.personId),
    body.studyId === undefined ? undefined : findStudy(context.db, context.workspaceId, body.studyId, false),
    queries.findWorkspaceName(context.db, context.workspaceId),
  ]);
  if (!person) throw notFound('Person', ['personId']);
  if (body.studyId !== undefined && !study) throw notFound('Study', ['studyId']);
  const canRead = context.canReadPersonalData;
  // An unknown value stays empty when masked, so that a template's `default` shows as it would.
  const text = (value: string | null) => (value ? maskText(value, canRead) : '');
  const values: TemplateValues = {
    person: {
      firstName: text(person.first_name),
      lastName: text(person.last_name),
      fullName: text([person.first_name, person.last_name].filter((part) => part).join(' ')),
      email: person.email ? maskEmail(person.email, canRead) : '',
    },
    study: { externalName: study?.plan.externalName ?? '', externalDescription: study?.plan.externalDescription ?? '' },
    workspace: { name: workspaceName },
    links: placeholderLinks,
  };
  const used = new Set<VariableName>();
  const render = async (field: TemplateField, source: string) => {
    const { variables } = await parseTemplate(field, source);
    for (const variable of variables) used.add(variable);
    return renderTemplate(field, source, values, context.workspaceId);
  };
  const subject = await render('subject', template.subject);
  const textBody = await render('textBody', template.text_body);
  const htmlBody = template.html_body === null ? null : await render('htmlBody', template.html_body);
  return {
    templateId: template.template_id,
    personId: person.person_id,
    studyId: body.studyId ?? null,
    subject,
    textBody,
    htmlBody,
    placeholders: (['links.screener', 'links.consent', 'links.scheduling', 'links.unsubscribe'] as const).filter((variable) => used.has(variable)),
  };
}


/** What was sent to the person (their own page's data download). */
export const messagesOfPerson = (db: Kysely<DB>, workspaceId: string, personId: string) => queries.findMessagesOfPerson(db, workspaceId, personId);
