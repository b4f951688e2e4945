import { createHash } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { CallContext as SharedCallContext } from '../../context.js';
import type { DB, StoredConsentStatement } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { badRequest, conflict, notFound } from '../../http/errors.js';
import { idPrefixes, newId } from '../../ids.js';
import { renderMarkdown } from './markdown.js';
import * as queries from './queries.js';
import type { ConsentFormVersionRow, VersionSummaryRow } from './queries.js';
import { type ConsentForm, type ConsentFormListItem, type ConsentFormVersion, type CreateConsentFormBody, type PublishVersionBody, versionsMax } from './schemas.js';

export type CallContext = Pick<SharedCallContext, 'db' | 'clock' | 'workspaceId' | 'userId'>;

/** What a version says: the fields its hash covers. */
export interface ConsentContent {
  title: string;
  body: string;
  language: string;
  requiredStatements: StoredConsentStatement[];
  optionalChoices: StoredConsentStatement[];
}

/**
 * The canonical text of a version's content: JSON with the keys in alphabetical order at every
 * level (the RFC 8785 form, which for strings and arrays alone is JSON.stringify's output with
 * sorted keys). Written out key by key rather than by sorting, so that what is hashed cannot
 * change with a field added to the type.
 */
export function canonicalContent(content: ConsentContent): string {
  const statements = (list: StoredConsentStatement[]) => list.map(({ id, text }) => ({ id, text }));
  return JSON.stringify({
    body: content.body,
    language: content.language,
    optionalChoices: statements(content.optionalChoices),
    requiredStatements: statements(content.requiredStatements),
    title: content.title,
  });
}

export const contentSha256 = (content: ConsentContent) => createHash('sha256').update(canonicalContent(content), 'utf8').digest('hex');

/** A statement's or choice's id names one tick box of the page and of the consent it records: unique across both lists. */
function checkStatementIds(content: ConsentContent): void {
  const seen = new Map<string, string[]>();
  for (const field of ['requiredStatements', 'optionalChoices'] as const) {
    content[field].forEach((statement, index) => {
      const first = seen.get(statement.id);
      if (first) throw badRequest(`id "${statement.id}" is already used by ${first.join('.')}: every statement and choice of a version needs its own id`, [field, String(index), 'id']);
      seen.set(statement.id, [field, String(index)]);
    });
  }
}

async function presentVersion(row: Omit<ConsentFormVersionRow, 'workspace_id'>): Promise<ConsentFormVersion> {
  return {
    consentFormId: row.consent_form_id,
    version: row.version,
    title: row.title,
    body: row.body,
    language: row.language,
    requiredStatements: row.required_statements,
    optionalChoices: row.optional_choices,
    bodyHtml: await renderMarkdown(row.body),
    contentSha256: row.content_sha256,
    createdAt: row.created_at,
    createdByUserId: row.created_by_user_id,
  };
}

const presentSummary = (row: VersionSummaryRow) => ({
  version: row.version,
  title: row.title,
  language: row.language,
  contentSha256: row.content_sha256,
  createdAt: row.created_at,
  createdByUserId: row.created_by_user_id,
});

function versionRow(context: CallContext, consentFormId: string, version: number, content: ConsentContent, at: string) {
  return {
    workspace_id: context.workspaceId,
    consent_form_id: consentFormId,
    version,
    title: content.title,
    body: content.body,
    language: content.language,
    required_statements: JSON.stringify(content.requiredStatements.map(({ id, text }) => ({ id, text }))),
    optional_choices: JSON.stringify(content.optionalChoices.map(({ id, text }) => ({ id, text }))),
    content_sha256: contentSha256(content),
    created_by_user_id: context.userId,
    created_at: at,
  };
}

const contentOf = (body: PublishVersionBody): ConsentContent => ({
  title: body.title,
  body: body.body,
  language: body.language,
  requiredStatements: body.requiredStatements,
  optionalChoices: body.optionalChoices,
});

export async function createForm(context: CallContext, body: CreateConsentFormBody): Promise<ConsentForm> {
  const content = contentOf(body);
  checkStatementIds(content);
  const at = context.clock.now().toISOString();
  const consentFormId = newId(idPrefixes.consentForm);
  await inTransaction(context.db, async (db) => {
    await queries.insertForm(db, { workspace_id: context.workspaceId, consent_form_id: consentFormId, name: body.name, current_version: 1, created_by_user_id: context.userId, created_at: at, updated_at: at });
    await queries.insertVersion(db, versionRow(context, consentFormId, 1, content, at));
  });
  return getForm(context, consentFormId);
}

/**
 * Publishes the form's next version, which becomes the current one. Versions before it are kept
 * as they were: consents recorded against them still name their exact text.
 */
export async function publishVersion(context: CallContext, consentFormId: string, body: PublishVersionBody): Promise<ConsentFormVersion> {
  const content = contentOf(body);
  checkStatementIds(content);
  const at = context.clock.now().toISOString();
  const row = await inTransaction(context.db, async (db) => {
    const form = await queries.advanceVersion(db, context.workspaceId, consentFormId, at);
    if (!form) throw notFound('Consent form', ['consentFormId']);
    if (form.current_version > versionsMax) throw conflict(`A consent form keeps at most ${versionsMax} versions: create a new form`, ['consentFormId']);
    return queries.insertVersion(db, versionRow(context, consentFormId, form.current_version, content, at));
  });
  return presentVersion(row);
}

export async function getForm(context: CallContext, consentFormId: string): Promise<ConsentForm> {
  const form = await queries.findForm(context.db, context.workspaceId, consentFormId);
  if (!form) throw notFound('Consent form', ['consentFormId']);
  const [current, versions] = await Promise.all([
    queries.findVersion(context.db, context.workspaceId, consentFormId, form.current_version),
    queries.listVersionSummaries(context.db, context.workspaceId, consentFormId),
  ]);
  return {
    consentFormId: form.consent_form_id,
    name: form.name,
    currentVersion: await presentVersion(current!),
    versions: versions.map(presentSummary),
    createdAt: form.created_at,
    updatedAt: form.updated_at,
    createdByUserId: form.created_by_user_id,
  };
}

export async function getVersion(context: CallContext, consentFormId: string, version: number): Promise<ConsentFormVersion> {
  const row = await queries.findVersion(context.db, context.workspaceId, consentFormId, version);
  if (row) return presentVersion(row);
  const form = await queries.findForm(context.db, context.workspaceId, consentFormId);
  throw form ? notFound('Consent form version', ['version']) : notFound('Consent form', ['consentFormId']);
}

export async function listForms(context: CallContext, afterId: string | undefined, size: number) {
  const { rows, total } = await queries.listForms(context.db, context.workspaceId, afterId, size);
  const results: ConsentFormListItem[] = rows.slice(0, size).map((row) => ({
    consentFormId: row.consent_form_id,
    name: row.name,
    currentVersion: {
      version: row.version,
      title: row.title,
      language: row.language,
      contentSha256: row.content_sha256,
      createdAt: row.version_created_at,
      createdByUserId: row.version_created_by_user_id,
    },
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  }));
  return { rows: results, hasNextPage: rows.length > size, total };
}

/**
 * What a study's or signup form's `consentFormId` serves, for the participant's consent page: the
 * current version of the workspace's consent form of that id, or undefined when the id names
 * none (a free name kept from before consent forms existed, or a form kept elsewhere: the page
 * then has nothing to show, and consent is recorded as before, by the team).
 */
export async function findServableConsentForm(db: Kysely<DB>, workspaceId: string, consentFormId: string | null | undefined): Promise<ConsentFormVersion | undefined> {
  if (!consentFormId) return undefined;
  const form = await queries.findForm(db, workspaceId, consentFormId);
  if (!form) return undefined;
  const row = await queries.findVersion(db, workspaceId, consentFormId, form.current_version);
  return row ? presentVersion(row) : undefined;
}

/** One version of the workspace's consent form, as findServableConsentForm answers it (a signed copy names the version signed). */
export async function findServableVersion(db: Kysely<DB>, workspaceId: string, consentFormId: string, version: number): Promise<ConsentFormVersion | undefined> {
  if (!Number.isInteger(version)) return undefined;
  const row = await queries.findVersion(db, workspaceId, consentFormId, version);
  return row ? presentVersion(row) : undefined;
}
