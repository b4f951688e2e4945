import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { DEFAULT_PROVIDER, providerApiUrlVariables, providerNames } from './providers/index.js';

/**
 * The embedded store's default budget of time for writing one import batch's people (ms), at
 * most 500 rows a batch: another workspace's request waits for at most one such transaction. The
 * default keeps batches of 500 rows (about 100–130 ms each), since every batch's commit costs the
 * embedded store a fixed write to disk: 3 ms kept another workspace's p99 within 3.2× of alone
 * during an upload but made the import 7× slower (docs/benchmarks/fairness.md). An operator who
 * would rather keep other workspaces quick lowers it.
 */
export const EMBEDDED_IMPORT_BATCH_MS_DEFAULT = 250;

const ConfigSchema = Type.Object({
  host: Type.String({ minLength: 1 }),
  port: Type.Integer({ minimum: 0, maximum: 65535 }),
  databaseUrl: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  dataDir: Type.String({ minLength: 1 }),
  redisUrl: Type.Optional(Type.String({ pattern: '^rediss?://' })),
  rateLimitMax: Type.Integer({ minimum: 1 }),
  rateLimitWindowSeconds: Type.Integer({ minimum: 1 }),
  /** Submissions of public signup forms per client address per rate-limit window. */
  signupRateLimitMax: Type.Integer({ minimum: 1 }),
  /** Requests for GET /v1/openapi.json per client address per rate-limit window. */
  openapiRateLimitMax: Type.Integer({ minimum: 1 }),
  participantRateLimitMax: Type.Integer({ minimum: 1 }),
  participantLinkRateLimitMax: Type.Integer({ minimum: 1 }),
  /** Sign-in attempts (password, emailed link) per client address and per account per rate-limit window. */
  signInRateLimitMax: Type.Integer({ minimum: 1 }),
  /** Rows of search pages a workspace may have in flight at once (a search weighs its page size, at least 50). */
  searchWeightPerWorkspace: Type.Integer({ minimum: 1000 }),
  /** Searches of a workspace that may wait for that weight; past it, or after searchWaitMs, a 429. */
  searchQueuePerWorkspace: Type.Integer({ minimum: 0 }),
  searchWaitMs: Type.Integer({ minimum: 0 }),
  /** Milliseconds of searching a workspace earns each second (0: no budget of time, only the weight). */
  searchBudgetMsPerSecond: Type.Integer({ minimum: 0, maximum: 1_000_000 }),
  /** The most of that budget a workspace may save up for a burst. */
  searchBudgetBurstMs: Type.Integer({ minimum: 1 }),
  /** The largest CSV file POST /imports takes (bytes). */
  importMaxBytes: Type.Integer({ minimum: 1024, maximum: 2 * 1024 ** 3 }),
  /** CSV uploads received at once per workspace, and per process; past either, a 429. */
  importUploadsPerWorkspace: Type.Integer({ minimum: 1 }),
  importUploadsPerProcess: Type.Integer({ minimum: 1 }),
  /**
   * The embedded store only: the time one import batch may hold the store's single connection
   * (ms). Smaller keeps other requests quicker during an import and makes the import slower.
   */
  embeddedImportBatchMs: Type.Integer({ minimum: 1, maximum: 10_000 }),
  testHelpers: Type.Boolean(),
  /**
   * The operator's token for the test helpers that act beyond one workspace (the service's clock,
   * and running every workspace's due work): no workspace token reaches those. Unset: nobody does.
   */
  testHelpersToken: Type.Optional(Type.String({ minLength: 32, maxLength: 256, pattern: '^[!-~]+$' })),
  logLevel: Type.Union(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((level) => Type.Literal(level))),
  authCacheSeconds: Type.Integer({ minimum: 0 }),
  publicUrl: Type.Optional(Type.String()),
  trustProxy: Type.Union([Type.Boolean(), Type.String({ minLength: 1 })]),
  jobs: Type.Boolean(),
  jobPollSeconds: Type.Number({ exclusiveMinimum: 0 }),
  /** How often an instance with jobs on takes stale planner statistics afresh (src/db/planner-statistics.ts). */
  statisticsSeconds: Type.Number({ exclusiveMinimum: 0 }),
  searchCounts: Type.Boolean(),
  /** Requests run as the tenant role under row-level security (src/db/tenancy.ts); off only to measure its cost. */
  rowLevelSecurity: Type.Boolean(),
  searchCountsMaxPeople: Type.Integer({ minimum: 0 }),
  incentiveProvider: Type.Union(providerNames.map((name) => Type.Literal(name))),
  /** The bearer token GET /metrics asks for; without one, /metrics is not served (404). */
  metricsToken: Type.Optional(Type.String({ minLength: 16, maxLength: 256, pattern: '^[!-~]+$' })),
  /** This instance sends webhook deliveries (woken by each commit that queues one, and polling each second). */
  webhookDelivery: Type.Boolean(),
  /** Endpoints may point at loopback, private and link-local addresses: intranets and tests only. */
  webhookAllowPrivateTargets: Type.Boolean(),
  /** Endpoints may be plain http URLs: intranets and tests only. */
  webhookAllowHttp: Type.Boolean(),
  /** Single sign-on: identity providers may be plain http URLs (development and tests only). */
  oidcAllowHttp: Type.Boolean(),
  /** Single sign-on: identity providers may be at loopback, private and link-local addresses (an identity provider on the intranet). */
  oidcAllowPrivateIssuers: Type.Boolean(),
  /** How long one delivery attempt may take. */
  webhookTimeoutMs: Type.Integer({ minimum: 100, maximum: 60_000 }),
  /** The key that encrypts webhook signing secrets at rest: 32 bytes in base64. Without one, a key kept in the database. */
  secretsKey: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9+/]{43}=$' })),
  /** The SECRETS_KEY before a rotation: provider credentials it sealed still open (src/providers/credentials.ts). */
  secretsKeyPrevious: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9+/]{43}=$' })),
  /**
   * Base URLs of the real providers' APIs, set by the operator only (a workspace chooses SANDBOX or
   * PRODUCTION, never a URL): TREMENDOUS_API_URL, TANGO_API_URL. Unset, each provider's published
   * sandbox or production URL, as the workspace's environment says.
   */
  providerApiUrls: Type.Record(Type.String(), Type.String({ pattern: '^https?://' })),
  /** The SMTP server messages are sent through; without one, messages are recorded NOT_SENT (README, Messages). */
  smtpHost: Type.Optional(Type.String({ minLength: 1 })),
  smtpPort: Type.Integer({ minimum: 1, maximum: 65535 }),
  /** `starttls`: plain connection upgraded, and TLS required; `tls`: TLS from the first byte (port 465); `none`: no TLS (loopback relays and tests only). */
  smtpSecurity: Type.Union([Type.Literal('starttls'), Type.Literal('tls'), Type.Literal('none')]),
  smtpUser: Type.Optional(Type.String({ minLength: 1 })),
  smtpPassword: Type.Optional(Type.String({ minLength: 1 })),
  /** The From address of every message (`Name <address>` or an address). */
  mailFrom: Type.Optional(Type.String({ minLength: 3 })),
  /** SMTP connections kept open per instance. */
  smtpPoolSize: Type.Integer({ minimum: 1, maximum: 100 }),
  /** How long one SMTP connection, greeting or command may take. */
  smtpTimeoutMs: Type.Integer({ minimum: 100, maximum: 600_000 }),
  /** Messages a workspace may have attempted per minute (all instances together). */
  mailRatePerMinute: Type.Integer({ minimum: 1 }),
  /** How long one field of a message template may take to render (on the render worker) before it is stopped. */
  templateRenderBudgetMs: Type.Integer({ minimum: 10, maximum: 10_000 }),
  /** This instance sends queued messages (woken by each commit that queues one, and polling each second). */
  mailDelivery: Type.Boolean(),
});

export type Config = Static<typeof ConfigSchema>;

export class ConfigError extends Error {}

function integer(value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  return /^-?\d+$/.test(value) ? Number(value) : Number.NaN;
}

function decimal(value: string | undefined, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  return /^\d+(\.\d+)?$/.test(value) ? Number(value) : Number.NaN;
}

function onOff(name: string, value: string | undefined, fallback: boolean): boolean {
  if (value === undefined || value === '') return fallback;
  if (value === 'on' || value === 'off') return value === 'on';
  throw new ConfigError(`Invalid configuration ${name}: expected on or off`);
}

function oneOf<T extends string>(name: string, value: string | undefined, allowed: readonly T[], fallback: T): T {
  if (value === undefined || value === '') return fallback;
  if ((allowed as readonly string[]).includes(value)) return value as T;
  throw new ConfigError(`Invalid configuration ${name}: expected one of ${allowed.join(', ')}`);
}

function blankToUndefined(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

function trustProxySetting(value: string | undefined): boolean | string {
  if (value === undefined || value === '' || value === '0' || value === 'false') return false;
  if (value === '1' || value === 'true') return true;
  return value;
}

/** Reads the environment once at start; a bad value stops the process with a message naming it. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const candidate: Config = {
    host: env.HOST ?? '127.0.0.1',
    port: integer(env.PORT, 8080),
    databaseUrl: blankToUndefined(env.DATABASE_URL),
    dataDir: blankToUndefined(env.DATA_DIR) ?? './data',
    redisUrl: blankToUndefined(env.REDIS_URL),
    rateLimitMax: integer(env.RATE_LIMIT_MAX, 600),
    rateLimitWindowSeconds: integer(env.RATE_LIMIT_WINDOW_SECONDS, 60),
    signupRateLimitMax: integer(env.SIGNUP_RATE_LIMIT_MAX, 30),
    openapiRateLimitMax: integer(env.OPENAPI_RATE_LIMIT_MAX, 60),
    participantRateLimitMax: integer(env.PARTICIPANT_RATE_LIMIT_MAX, 120),
    participantLinkRateLimitMax: integer(env.PARTICIPANT_LINK_RATE_LIMIT_MAX, 60),
    signInRateLimitMax: integer(env.SIGN_IN_RATE_LIMIT_MAX, 10),
    searchWeightPerWorkspace: integer(env.SEARCH_WEIGHT_PER_WORKSPACE, 2_000),
    searchQueuePerWorkspace: integer(env.SEARCH_QUEUE_PER_WORKSPACE, 32),
    searchWaitMs: integer(env.SEARCH_WAIT_MS, 10_000),
    searchBudgetMsPerSecond: integer(env.SEARCH_BUDGET_MS_PER_SECOND, 250),
    searchBudgetBurstMs: integer(env.SEARCH_BUDGET_BURST_MS, 1_000),
    importMaxBytes: integer(env.IMPORT_MAX_BYTES, 256 * 1024 ** 2),
    importUploadsPerWorkspace: integer(env.IMPORT_UPLOADS_PER_WORKSPACE, 1),
    importUploadsPerProcess: integer(env.IMPORT_UPLOADS_PER_PROCESS, 2),
    embeddedImportBatchMs: integer(env.EMBEDDED_IMPORT_BATCH_MS, EMBEDDED_IMPORT_BATCH_MS_DEFAULT),
    testHelpers: env.TEST_HELPERS === '1',
    testHelpersToken: blankToUndefined(env.TEST_HELPERS_TOKEN),
    logLevel: (env.LOG_LEVEL ?? 'info') as Config['logLevel'],
    authCacheSeconds: integer(env.AUTH_CACHE_SECONDS, 5),
    publicUrl: blankToUndefined(env.PUBLIC_URL),
    // "1"/"true": trust every proxy hop; otherwise a list of addresses or CIDR ranges of trusted proxies.
    trustProxy: trustProxySetting(env.TRUST_PROXY),
    jobs: onOff('JOBS', env.JOBS, true),
    jobPollSeconds: decimal(env.JOB_POLL_SECONDS, 5),
    statisticsSeconds: decimal(env.STATISTICS_SECONDS, 10),
    // Exact search totals from columns held in process (src/search/counts/); off: every total is counted by SQL.
    searchCounts: onOff('SEARCH_COUNTS', env.SEARCH_COUNTS, true),
    rowLevelSecurity: onOff('ROW_LEVEL_SECURITY', env.ROW_LEVEL_SECURITY, true),
    searchCountsMaxPeople: integer(env.SEARCH_COUNTS_MAX_PEOPLE, 5_000_000),
    // Where new provider-backed incentives are ordered; `sandbox` pays no one and reaches nothing outside.
    incentiveProvider: oneOf('INCENTIVE_PROVIDER', env.INCENTIVE_PROVIDER, providerNames, DEFAULT_PROVIDER),
    // A secret of the operator's own (16 to 256 printable ASCII characters, no spaces) that the scraper sends.
    metricsToken: blankToUndefined(env.METRICS_TOKEN),
    webhookDelivery: onOff('WEBHOOK_DELIVERY', env.WEBHOOK_DELIVERY, true),
    webhookAllowPrivateTargets: onOff('WEBHOOK_ALLOW_PRIVATE_TARGETS', env.WEBHOOK_ALLOW_PRIVATE_TARGETS, false),
    webhookAllowHttp: onOff('WEBHOOK_ALLOW_HTTP', env.WEBHOOK_ALLOW_HTTP, false),
    webhookTimeoutMs: integer(env.WEBHOOK_TIMEOUT_MS, 10_000),
    oidcAllowHttp: onOff('OIDC_ALLOW_HTTP', env.OIDC_ALLOW_HTTP, false),
    oidcAllowPrivateIssuers: onOff('OIDC_ALLOW_PRIVATE_ISSUERS', env.OIDC_ALLOW_PRIVATE_ISSUERS, false),
    secretsKey: blankToUndefined(env.SECRETS_KEY),
    secretsKeyPrevious: blankToUndefined(env.SECRETS_KEY_PREVIOUS),
    providerApiUrls: Object.fromEntries(
      Object.entries(providerApiUrlVariables)
        .map(([provider, variable]) => [provider, blankToUndefined(env[variable])] as const)
        .filter((entry): entry is readonly [string, string] => entry[1] !== undefined),
    ),
    smtpHost: blankToUndefined(env.SMTP_HOST),
    smtpPort: integer(env.SMTP_PORT, env.SMTP_SECURITY === 'tls' ? 465 : 587),
    smtpSecurity: oneOf('SMTP_SECURITY', env.SMTP_SECURITY, ['starttls', 'tls', 'none'] as const, 'starttls'),
    smtpUser: blankToUndefined(env.SMTP_USER),
    smtpPassword: blankToUndefined(env.SMTP_PASSWORD),
    mailFrom: blankToUndefined(env.MAIL_FROM),
    smtpPoolSize: integer(env.SMTP_POOL_SIZE, 5),
    smtpTimeoutMs: integer(env.SMTP_TIMEOUT_MS, 30_000),
    mailRatePerMinute: integer(env.MAIL_RATE_PER_MINUTE, 600),
    mailDelivery: onOff('MAIL_DELIVERY', env.MAIL_DELIVERY, true),
    templateRenderBudgetMs: integer(env.TEMPLATE_RENDER_BUDGET_MS, 100),
    ...overrides,
  };
  for (const key of Object.keys(candidate) as (keyof Config)[]) {
    if (candidate[key] === undefined) delete candidate[key];
  }
  const firstError = Value.Errors(ConfigSchema, candidate).First();
  if (firstError) {
    throw new ConfigError(`Invalid configuration ${firstError.path.slice(1)}: ${firstError.message}`);
  }
  if (candidate.smtpHost !== undefined) {
    // Every message carries its From address and an absolute unsubscribe link: without them nothing could be sent honestly.
    if (candidate.mailFrom === undefined) throw new ConfigError('Invalid configuration MAIL_FROM: required with SMTP_HOST');
    if (candidate.publicUrl === undefined) throw new ConfigError('Invalid configuration PUBLIC_URL: required with SMTP_HOST (every message carries an absolute unsubscribe link)');
  }
  if ((candidate.smtpUser === undefined) !== (candidate.smtpPassword === undefined)) throw new ConfigError('Invalid configuration SMTP_USER: SMTP_USER and SMTP_PASSWORD go together');
  return candidate;
}
