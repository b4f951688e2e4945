import type { Kysely } from 'kysely';
import type { Clock } from './clock.js';
import type { Config } from './config.js';
import type { DB, UserRole } from './db/schema.js';
import type { StoreKind } from './db/database.js';
import type { FastifyRequest } from 'fastify';
import { type Principal, type PrincipalCache, principalOf } from './http/auth.js';
import type { CursorCodec } from './http/cursor.js';
import type { Right } from './http/rights.js';
import type { ServiceMetrics } from './http/metrics.js';
import type { RateLimiter } from './http/rate-limit.js';
import type { UploadSlots } from './http/upload-slots.js';
import type { IncentiveProviders } from './providers/index.js';
import type { SearchCounts } from './search/counts/index.js';

/** The process-wide pieces every family's routes and services are built from. */
export interface ServiceDeps {
  config: Config;
  /** The owner's handle: work that is no tenant's (jobs, token lookup, public forms, test helpers). */
  db: Kysely<DB>;
  /**
   * A workspace's handle, which an authenticated request's work goes through: under row-level
   * security (ROW_LEVEL_SECURITY=on) its connections see that workspace alone; off, it is `db`.
   */
  tenantDb(workspaceId: string): Kysely<DB>;
  /**
   * The handle for background work, the owner's (null) or a workspace's (as tenantDb): on the
   * embedded store its statements take the one connection after everyone else's (Database.background).
   */
  backgroundDb(workspaceId: string | null): Kysely<DB>;
  /**
   * The handle that switches no connection's scope (Database.anyScope): only for the SECURITY
   * DEFINER lookups made before a workspace is known (a participant link by its digest).
   */
  anyScopeDb: Kysely<DB>;
  storeKind: StoreKind;
  clock: Clock;
  cursors: CursorCodec;
  principals: PrincipalCache;
  /** Uploads received at once, shared by people imports and backfills (src/http/upload-slots.ts). */
  uploads: UploadSlots;
  limiter: RateLimiter;
  /** Incentive provider adapters (src/providers/): INCENTIVE_PROVIDER for new incentives. */
  providers: IncentiveProviders;
  /** Exact search totals held in process (undefined when SEARCH_COUNTS=off): src/search/counts/. */
  counts: SearchCounts | undefined;
  /** This instance's metrics (GET /metrics): what families count goes here. */
  metrics: ServiceMetrics;
}

/**
 * What a family's service needs to know about one call: whose workspace, who, what the token
 * may see, and when. Routes build it once with callContext; each service takes the part it needs.
 */
export interface CallContext {
  db: Kysely<DB>;
  clock: Clock;
  workspaceId: string;
  userId: string;
  /** The token the call came with (the money ledger records it with the user). */
  tokenId?: string;
  /** The caller's role (recorded where the service notes who did something). */
  role: UserRole;
  /** The caller's effective rights (Principal.rights): what a rule that depends on a right reads (the consent writer). */
  rights: ReadonlySet<Right>;
  canReadPersonalData: boolean;
  canReadScreeners: boolean;
  counts?: SearchCounts | undefined;
  /** SMTP_HOST is set: messages are queued for sending; otherwise recorded NOT_SENT. */
  smtpConfigured?: boolean;
}

export function callContext(deps: ServiceDeps, principal: Principal): CallContext {
  return {
    db: deps.tenantDb(principal.workspaceId),
    clock: deps.clock,
    workspaceId: principal.workspaceId,
    userId: principal.userId,
    tokenId: principal.tokenId,
    role: principal.role,
    rights: principal.rights,
    canReadPersonalData: principal.canReadPersonalData,
    canReadScreeners: principal.canReadScreeners,
    counts: deps.counts,
    smtpConfigured: deps.config.smtpHost !== undefined,
  };
}

/** The call context of an authenticated request. */
export function requestContext(deps: ServiceDeps, request: FastifyRequest): CallContext {
  return callContext(deps, principalOf(request));
}
