/**
 * @recruit-ops/sdk: a typed client for the recruit-ops public API v1, generated from the
 * service's committed OpenAPI document (src/generated/, by `npm run openapi` at the repository root).
 */
import type { components } from './generated/openapi.js';

export { createClient, type RecruitClient, type RecruitClientOptions } from './client.js';
export { type CallResult, type ErrorItem, RecruitApiError, unwrap } from './errors.js';
export type { components, operations, paths, webhooks } from './generated/openapi.js';
export { operationRoles } from './generated/operations.js';
export { filterLimits, type SearchName, searchComparisons, searchNames, type SearchValueType } from './generated/search.js';
export type { ItemOf, ListPath, PagedInit, PagedPath, PageOf, SearchPath } from './paging.js';
export { mayRetry, type RetryEvent, retryAfterMs, type RetryOptions } from './retry.js';
export {
  createWebhookVerifier,
  type RawBody,
  verifyWebhook,
  type WebhookEvent,
  type WebhookFailure,
  type WebhookHeaders,
  WebhookVerificationError,
  type WebhookVerifier,
} from './webhooks.js';

/** A schema of the document by name: `Schema<'Study'>`, `Schema<'Person'>`. */
export type Schema<Name extends keyof components['schemas']> = components['schemas'][Name];
