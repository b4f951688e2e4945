/**
 * `@recruit-ops/sdk/browser`: the client without webhook verification, for code that runs in a
 * browser (the console). Verifying a webhook is a server's job and needs its secret; this entry
 * leaves that code, and its dependency, out of a browser bundle whatever the bundler's
 * tree-shaking does.
 */
import type { components } from './generated/openapi.js';

export { createClient, type RecruitClient, type RecruitClientOptions } from './client.js';
export { type CallResult, type ErrorItem, RecruitApiError, unwrap } from './errors.js';
export type { components, operations, paths } from './generated/openapi.js';
export { operationRoles } from './generated/operations.js';
export { filterLimits, type SearchName, searchComparisons, searchNames, type SearchValueType } from './generated/search.js';
export type { ItemOf, ListPath, PagedInit, PagedPath, PageOf, SearchPath } from './paging.js';
export { mayRetry, type RetryEvent, retryAfterMs, type RetryOptions } from './retry.js';

/** A schema of the document by name: `Schema<'Study'>`, `Schema<'Person'>`. */
export type Schema<Name extends keyof components['schemas']> = components['schemas'][Name];
