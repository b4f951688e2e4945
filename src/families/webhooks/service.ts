import type { CallContext as SharedCallContext } from '../../context.js';
import { plusSeconds } from '../../clock.js';
import { inTransaction } from '../../db/transaction.js';
import { badRequest, notFound } from '../../http/errors.js';
import { idPrefixes, newId } from '../../ids.js';
import { eventBody, eventCatalogue, type EventType } from './events.js';
import { notifyDispatchers } from './outbox.js';
import * as queries from './queries.js';
import type { EndpointRow } from './queries.js';
import type { Webhooks } from './runtime.js';
import type { CreateWebhookEndpointBody, ReplayBody, UpdateWebhookEndpointBody, WebhookEndpoint } from './schemas.js';
import { failingDaysBeforeDisabling } from './schedule.js';
import { newSigningSecret, previousStillSigns, signingSecrets } from './secrets.js';
import { checkTargetUrl } from './targets.js';

export type CallContext = Pick<SharedCallContext, 'db' | 'clock' | 'workspaceId'>;

/** How long a rotated-out secret keeps signing beside the new one. */
const PREVIOUS_SECRET_SECONDS = 24 * 3600;
/** Messages are kept this long: the replay window. */
export const MESSAGE_RETENTION_DAYS = 30;

function present(row: EndpointRow, at: string): WebhookEndpoint {
  return {
    endpointId: row.endpoint_id,
    url: row.url,
    description: row.description,
    eventTypes: row.event_types as WebhookEndpoint['eventTypes'],
    enabled: row.enabled,
    disabledReason: row.disabled_reason,
    previousSecretExpiresAt: previousStillSigns(row, at) ? row.previous_secret_expires_at : null,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

async function checkUrl(webhooks: Webhooks, url: string): Promise<void> {
  const problem = await checkTargetUrl(url, webhooks.policy);
  if (problem !== undefined) throw badRequest(`url ${problem}`, ['url']);
}

async function endpointOrNotFound(context: CallContext, endpointId: string): Promise<EndpointRow> {
  const row = await queries.findEndpoint(context.db, context.workspaceId, endpointId);
  if (!row) throw notFound('Webhook endpoint', ['endpointId']);
  return row;
}

export async function createEndpoint(context: CallContext, webhooks: Webhooks, body: CreateWebhookEndpointBody) {
  await checkUrl(webhooks, body.url);
  const at = context.clock.now().toISOString();
  const secret = newSigningSecret();
  const row = await queries.insertEndpoint(context.db, {
    workspace_id: context.workspaceId,
    endpoint_id: newId(idPrefixes.webhookEndpoint),
    url: body.url,
    description: body.description ?? '',
    event_types: body.eventTypes ?? [],
    enabled: body.enabled ?? true,
    disabled_reason: null,
    secret_ciphertext: webhooks.secrets.seal(secret),
    created_at: at,
    updated_at: at,
  });
  return { ...present(row, at), secret };
}

export async function getEndpoint(context: CallContext, endpointId: string) {
  return present(await endpointOrNotFound(context, endpointId), context.clock.now().toISOString());
}

export async function listEndpoints(context: CallContext, after: string | undefined, size: number) {
  const { rows, total } = await queries.listEndpoints(context.db, context.workspaceId, after, size);
  const at = context.clock.now().toISOString();
  return { rows: rows.slice(0, size).map((row) => present(row, at)), hasNextPage: rows.length > size, total };
}

export async function updateEndpoint(context: CallContext, webhooks: Webhooks, endpointId: string, body: UpdateWebhookEndpointBody) {
  if (body.url !== undefined) await checkUrl(webhooks, body.url);
  const at = context.clock.now().toISOString();
  const row = await queries.updateEndpoint(context.db, context.workspaceId, endpointId, {
    ...(body.url !== undefined ? { url: body.url } : {}),
    ...(body.description !== undefined ? { description: body.description } : {}),
    ...(body.eventTypes !== undefined ? { event_types: body.eventTypes } : {}),
    // Enabling starts afresh: the failing streak and the reason are cleared; disabling by hand gives no reason.
    ...(body.enabled !== undefined ? { enabled: body.enabled, disabled_reason: null, failing_since: null } : {}),
    updated_at: at,
  });
  if (!row) throw notFound('Webhook endpoint', ['endpointId']);
  if (body.enabled === true) await notifyDispatchers(context.db);
  return present(row, at);
}

export async function deleteEndpoint(context: CallContext, endpointId: string): Promise<void> {
  if (!(await queries.deleteEndpoint(context.db, context.workspaceId, endpointId))) throw notFound('Webhook endpoint', ['endpointId']);
}

/** A new secret; the one it replaces keeps signing, beside it, for 24 hours. */
export async function rotateSecret(context: CallContext, webhooks: Webhooks, endpointId: string) {
  return inTransaction(context.db, async (db) => {
    const row = await queries.findEndpoint(db, context.workspaceId, endpointId);
    if (!row) throw notFound('Webhook endpoint', ['endpointId']);
    const at = context.clock.now();
    const secret = newSigningSecret();
    const previousSecretExpiresAt = plusSeconds(at, PREVIOUS_SECRET_SECONDS);
    await queries.updateEndpoint(db, context.workspaceId, endpointId, {
      secret_ciphertext: webhooks.secrets.seal(secret),
      previous_secret_ciphertext: row.secret_ciphertext,
      previous_secret_expires_at: previousSecretExpiresAt,
      updated_at: at.toISOString(),
    });
    return { secret, previousSecretExpiresAt };
  });
}

/**
 * Sends a `webhook.test` message to the endpoint now, once, whether or not it is enabled, and
 * answers the attempt (recorded like any other, trigger TEST). It is not retried.
 */
export async function testEndpoint(context: CallContext, webhooks: Webhooks, endpointId: string) {
  const row = await endpointOrNotFound(context, endpointId);
  const at = context.clock.now().toISOString();
  const messageId = newId(idPrefixes.webhookMessage);
  const body = eventBody({ type: 'webhook.test', data: { endpointId, message: 'A test event: your endpoint received it.' } }, at);
  await queries.insertMessage(context.db, { workspace_id: context.workspaceId, message_id: messageId, event_type: 'webhook.test', occurred_at: at, payload: JSON.stringify(body) });
  const result = await webhooks.sender.send(row.url, signingSecrets(webhooks.secrets, row, at), { messageId, body: JSON.stringify(body) });
  const attemptId = newId(idPrefixes.webhookAttempt);
  await queries.recordOutcomes(context.db, [{ workspaceId: context.workspaceId, endpointId, messageId, attemptId, trigger: 'TEST', attemptedAt: at, ...result }], failingDaysBeforeDisabling * 86_400);
  return { attemptId, endpointId, messageId, trigger: 'TEST' as const, attemptedAt: at, ...result };
}

export async function listAttempts(context: CallContext, endpointId: string, messageId: string | undefined, before: string | undefined, size: number) {
  await endpointOrNotFound(context, endpointId);
  const { rows, total } = await queries.listAttempts(context.db, context.workspaceId, endpointId, messageId, before, size);
  return {
    rows: rows.slice(0, size).map((row) => ({
      attemptId: row.attempt_id,
      endpointId: row.endpoint_id,
      messageId: row.message_id,
      trigger: row.trigger,
      attemptedAt: row.attempted_at,
      durationMs: row.duration_ms,
      succeeded: row.succeeded,
      responseStatus: row.response_status,
      responseBody: row.response_body,
      error: row.error,
    })),
    hasNextPage: rows.length > size,
    total,
  };
}

type MessageRow = NonNullable<Awaited<ReturnType<typeof queries.findMessage>>>;
const presentMessage = (row: MessageRow) => ({
  messageId: row.message_id,
  eventType: row.event_type,
  occurredAt: row.occurred_at,
  payload: row.payload as { type: string; timestamp: string; data: Record<string, unknown> },
});

export async function listMessages(context: CallContext, filter: { eventType?: string | undefined; since?: string | undefined }, after: string | undefined, size: number) {
  const { rows, total } = await queries.listMessages(context.db, context.workspaceId, filter, after, size);
  return { rows: rows.slice(0, size).map(presentMessage), hasNextPage: rows.length > size, total };
}

export async function getMessage(context: CallContext, messageId: string) {
  const row = await queries.findMessage(context.db, context.workspaceId, messageId);
  if (!row) throw notFound('Webhook message', ['messageId']);
  return presentMessage(row);
}

/** Queues one message for the endpoint again, due now, with a fresh retry schedule. */
export async function resendMessage(context: CallContext, endpointId: string, messageId: string) {
  await endpointOrNotFound(context, endpointId);
  if (!(await queries.findMessage(context.db, context.workspaceId, messageId))) throw notFound('Webhook message', ['messageId']);
  await queries.queueByHand(context.db, context.workspaceId, endpointId, { messageIds: [messageId] }, context.clock.now().toISOString());
  return { endpointId, messageId, state: 'PENDING' as const };
}

/** Queues every message of the window (of the endpoint's types, or those given) for the endpoint. */
export async function replay(context: CallContext, endpointId: string, body: ReplayBody) {
  const row = await endpointOrNotFound(context, endpointId);
  const now = context.clock.now();
  const since = Date.parse(body.since);
  if (since < now.getTime() - MESSAGE_RETENTION_DAYS * 86_400_000) throw badRequest(`since must be within the last ${MESSAGE_RETENTION_DAYS} days (messages are kept that long)`, ['since']);
  if (body.until !== undefined && Date.parse(body.until) <= since) throw badRequest('until must be after since', ['until']);
  const queued = await queries.queueByHand(
    context.db,
    context.workspaceId,
    endpointId,
    { since: body.since, until: body.until, eventTypes: body.eventTypes ?? row.event_types },
    now.toISOString(),
  );
  return { queued };
}

export function describeEventTypes() {
  return (Object.keys(eventCatalogue) as EventType[])
    .filter((type) => type !== 'webhook.test')
    .map((type) => ({ type, description: eventCatalogue[type].description ?? '', dataSchema: eventCatalogue[type] as unknown as Record<string, unknown> }));
}
