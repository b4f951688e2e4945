import type { Kysely } from 'kysely';
import type { Clock } from './clock.js';
import type { Config } from './config.js';
import type { DB } from './db/schema.js';
import type { StoreKind } from './db/database.js';
import type { PrincipalCache } from './http/auth.js';
import type { CursorCodec } from './http/cursor.js';
import type { RateLimiter } from './http/rate-limit.js';

/** The process-wide pieces every family's routes and services are built from. */
export interface ServiceDeps {
  config: Config;
  db: Kysely<DB>;
  storeKind: StoreKind;
  clock: Clock;
  cursors: CursorCodec;
  principals: PrincipalCache;
  limiter: RateLimiter;
}
