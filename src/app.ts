import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyLoggerOptions } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { type Clock, createClock } from './clock.js';
import type { Config } from './config.js';
import type { ServiceDeps } from './context.js';
import { type Database, openDatabase } from './db/database.js';
import { migrateToLatest } from './db/migrate.js';
import { installAuthentication, PrincipalCache } from './http/auth.js';
import { UploadSlots } from './http/upload-slots.js';
import { CursorCodec, loadCursorSecret } from './http/cursor.js';
import { consolePrefix, consoleRoutes } from './http/console.js';
import { answerFrameworkError, ApiError, installErrorHandling, sendError } from './http/errors.js';
import { apiPrefix, enrichRouteSchema, registerOpenApi } from './http/openapi.js';
import { installMetricsRoute, ServiceMetrics } from './http/metrics.js';
import { createRateLimiter } from './http/rate-limit.js';
import { installOpenApiDocument } from './http/openapi-document.js';
import { installHeavyWorkLimits, WorkspaceWorkLimiter } from './http/heavy-work.js';
import { setRenderBudgetMilliseconds } from './families/messages/template-language.js';
import { lazySerializers } from './http/serialization.js';
import { installBodyRules, installValidation } from './http/validation.js';
import { installIdempotency } from './http/idempotency/plugin.js';
import { IncentiveProviders } from './providers/index.js';
import { ProviderAccounts } from './providers/accounts.js';
import { CredentialBox } from './providers/credentials.js';
import { serviceSecret } from './db/service-secrets.js';
import { incentiveProviderRoutes } from './families/incentive-providers/routes.js';
import { providerWebhookRoutes } from './families/provider-webhooks/routes.js';
import { incentivesRoutes } from './families/incentives/routes.js';
import { incentivesSearchRoutes } from './families/incentives/search-routes.js';
import { incentiveSchemas } from './families/incentives/schemas.js';
import { incentiveBudgetsRoutes } from './families/incentive-budgets/routes.js';
import { incentiveBudgetSchemas } from './families/incentive-budgets/schemas.js';
import { incentiveProviderSchemas } from './families/incentive-providers/schemas.js';
import { studiesRoutes } from './families/studies/routes.js';
import { studySchemas } from './families/studies/schemas.js';
import { propertiesRoutes } from './families/properties/routes.js';
import { propertySchemas } from './families/properties/schemas.js';
import { populationsRoutes } from './families/populations/routes.js';
import { populationSchemas } from './families/populations/schemas.js';
import { findTokenOwner } from './families/users/queries.js';
import { KeyUsage } from './families/users/key-usage.js';
import { broadcastInvalidations } from './http/principal-broadcast.js';
import { usersRoutes } from './families/users/routes.js';
import { importsRoutes } from './families/imports/routes.js';
import { importSchemas } from './families/imports/schemas.js';
import { backfillsRoutes } from './families/backfills/routes.js';
import { backfillSchemas } from './families/backfills/schemas.js';
import { peopleRoutes } from './families/people/routes.js';
import { personSchemas } from './families/people/schemas.js';
import { personRoutes } from './families/person/routes.js';
import { peopleSearchRoutes } from './families/people/search-routes.js';
import { participantsSearchRoutes } from './families/participants/search-routes.js';
import { participantsRoutes } from './families/participants/routes.js';
import { participantSchemas } from './families/participants/schemas.js';
import { searchSchemas } from './families/search-catalogue.js';
import { segmentsRoutes } from './families/segments/routes.js';
import { segmentSchemas } from './families/segments/schemas.js';
import { quotaGroupsRoutes } from './families/quota-groups/routes.js';
import { quotaGroupSchemas } from './families/quota-groups/schemas.js';
import { schedulingRoutes } from './families/scheduling/routes.js';
import { schedulingSchemas } from './families/scheduling/schemas.js';
import { userSchemas } from './families/users/schemas.js';
import { submissionsSearchRoutes } from './families/signups/search-routes.js';
import { signupsRoutes } from './families/signups/routes.js';
import { signupSchemas } from './families/signups/schemas.js';
import { eventsRoutes } from './families/events/routes.js';
import { eventSchemas } from './families/events/schemas.js';
import { testHelperRoutes } from './families/test-helpers/routes.js';
import { webhooksRoutes } from './families/webhooks/routes.js';
import { messagesRoutes } from './families/messages/routes.js';
import { messageSchemas } from './families/messages/schemas.js';
import { messageSendingRoutes } from './families/messages/send-routes.js';
import { sendingSchemas } from './families/messages/send-schemas.js';
import { Mail } from './families/messages/runtime.js';
import { composeReminder } from './families/scheduling/reminders.js';
import { consentSchemas } from './families/consent/schemas.js';
import { consentRoutes } from './families/consent/routes.js';
import { participantLinksRoutes } from './families/participant-links/routes.js';
import { participantLinkSchemas } from './families/participant-links/schemas.js';
import { SecretBox } from './families/webhooks/secrets.js';
import { participantFormKeyPurpose, participantPages } from './participant/routes.js';
import { consentFormSchemas } from './families/consent-forms/schemas.js';
import { screenerResponseSchemas } from './families/screener-responses/schemas.js';
import { screenerResponsesRoutes } from './families/screener-responses/routes.js';
import { consentFormsRoutes } from './families/consent-forms/routes.js';
import { brandingSchemas } from './families/branding/schemas.js';
import { brandingRoutes } from './families/branding/routes.js';
import { Webhooks } from './families/webhooks/runtime.js';
import { webhookDocumentation, webhookSchemas } from './families/webhooks/schemas.js';
import type { Resolver } from './families/webhooks/targets.js';
import { registerFamilyJobs } from './families/jobs.js';
import { consentCopyHandler } from './families/consent/copy-job.js';
import { bookingNotifyHandler } from './families/scheduling/notify-job.js';
import { calendarFeedPublicRoutes, calendarFeedsRoutes } from './families/calendar-feeds/routes.js';
import { calendarFeedSchemas } from './families/calendar-feeds/schemas.js';
import { signInHandler } from './families/person-access/sign-in-job.js';
import { signInRoutes } from './families/sign-in/routes.js';
import { ssoRoutes } from './families/sign-in/sso-routes.js';
import { SingleSignOn, ssoSecretsPurpose } from './families/sign-in/sso.js';
import { signInSchemas } from './families/sign-in/schemas.js';
import { findSessionPrincipal } from './families/sign-in/service.js';
import { userMailHandler } from './families/sign-in/mail-job.js';
import { registerHousekeepingJobs } from './jobs/registry.js';
import { JobRunner } from './jobs/runner.js';
import { keepPlannerStatistics, type PlannerStatisticsKeeper } from './db/planner-statistics.js';
import { SearchCounts } from './search/counts/index.js';
import { auditSchemas } from './families/audit/schemas.js';
import { auditRoutes } from './families/audit/routes.js';
import { AuditRecorder, installAuditTrail } from './families/audit/recorder.js';

export interface BuildOptions {
  config: Config;
  /** An already open database (tests share one); otherwise one is opened from the config. */
  database?: Database;
  /**
   * A database being opened, which the service owns as one it opened: server.ts starts opening
   * (and migrating, with `migrate: false` here) before the service's code loads, so that the two
   * overlap (PGlite compiles its WASM and reads its files meanwhile; pg connects).
   */
  openingDatabase?: Promise<Database>;
  /**
   * Whether the background work (job polling, the planner statistics' first pass, webhook and
   * mail dispatch) starts with the service (the default) or when Service.startBackground() is
   * called: server.ts starts it once the server listens, so that on the embedded store's single
   * connection the first requests do not queue behind the statistics' catalogue query and the
   * dispatchers' first claims.
   */
  deferBackground?: boolean;
  clock?: Clock;
  /** Run pending migrations before serving (the default). */
  migrate?: boolean;
  logger?: boolean;
  /** Where log lines go instead of standard output (tests read them). */
  logStream?: FastifyLoggerOptions['stream'];
  /** Rate-limit counters' key prefix: instances that share it share budgets (tests isolate runs). */
  rateLimitKeyPrefix?: string;
  /** Routes added before the app is sealed, for tests that need a route to fail on purpose. */
  extraRoutes?: (app: FastifyInstance) => void;
  /** Incentive providers (tests shorten the timeout); otherwise config.incentiveProvider's. */
  providers?: IncentiveProviders;
  /** How long an Idempotency-Key reservation holds between renewals (tests shorten it); otherwise 60 s. */
  idempotencyLeaseSeconds?: number;
  /** Host name resolution for webhook address checks (tests simulate DNS with it); otherwise the system's. */
  webhookResolver?: Resolver;
  /** The webhook dispatcher's poll (tests lengthen it); otherwise 1 s. */
  webhookPollMs?: number;
  /** The mail dispatcher's poll (tests lengthen it); otherwise 1 s. */
  mailPollMs?: number;
  /** The console's build to serve at /console (tests give a missing one); otherwise console/dist. */
  consoleRoot?: string;
}

export interface Service {
  app: FastifyInstance;
  deps: ServiceDeps;
  /** Background jobs: polls when config.jobs is on; runDue() drains on demand (tests, the jobs/run helper). */
  jobs: JobRunner;
  /** Webhook delivery: sends when config.webhookDelivery is on; webhooks.dispatcher.runDue() on demand (tests). */
  webhooks: Webhooks;
  /** Mail: sends when SMTP is configured and config.mailDelivery is on; mail.dispatcher.runDue() on demand (tests). */
  mail: Mail;
  /** Heavy work (searches) in flight per workspace, by weight (src/http/heavy-work.ts). */
  heavyWork: WorkspaceWorkLimiter;
  /** API keys' lastUsedAt, noted per request and written in batches (keyUsage.flush() on demand: tests). */
  keyUsage: KeyUsage;
  /** The audit trail's writer: flush() writes the entries waiting (tests read the trail after it). */
  audit: AuditRecorder;
  /** Starts the background work, when deferBackground held it back; once, and never after close(). */
  startBackground(): Promise<void>;
  /** Stops accepting requests, lets in-flight ones finish, then closes connections. */
  close(): Promise<void>;
}

const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

export async function buildService(options: BuildOptions): Promise<Service> {
  const { config } = options;
  const database = options.database ?? (await (options.openingDatabase ?? openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir })));
  const ownsDatabase = !options.database;
  if (options.migrate ?? true) await migrateToLatest(database.db);

  const clock = options.clock ?? createClock();
  setRenderBudgetMilliseconds(config.templateRenderBudgetMs);
  const metrics = new ServiceMetrics({
    db: database.db,
    clock,
    connections: database.connections,
    queues: () => jobs.queues,
    onCollectError: (error) => app.log.warn({ err: error }, 'metrics: the job figures could not be read; this scrape goes without them'),
  });
  const limiter = createRateLimiter({
    max: config.rateLimitMax,
    windowSeconds: config.rateLimitWindowSeconds,
    redisUrl: config.redisUrl,
    keyPrefix: options.rateLimitKeyPrefix,
    onRefused: (reason) => metrics.countRateLimitRefusal(reason),
  });
  const sharedLimits = await limiter.ready();
  const deps: ServiceDeps = {
    config,
    db: database.db,
    tenantDb: config.rowLevelSecurity ? database.forTenant : () => database.db,
    backgroundDb: (workspaceId) => database.background(config.rowLevelSecurity ? workspaceId : null),
    anyScopeDb: database.anyScope,
    storeKind: database.kind,
    clock,
    cursors: new CursorCodec(await loadCursorSecret(database.db, config.secretsKey)),
    principals: new PrincipalCache(config.authCacheSeconds),
    uploads: new UploadSlots({ perWorkspace: config.importUploadsPerWorkspace, perProcess: config.importUploadsPerProcess }),
    limiter,
    providers: options.providers ?? new IncentiveProviders(config.incentiveProvider),
    counts: config.searchCounts
      ? new SearchCounts(config.rowLevelSecurity ? database.forTenant : () => database.db, {
          maxPeople: config.searchCountsMaxPeople,
          maxStudies: 16,
          onError: (error, workspaceId) => app.log.error({ err: error, workspaceId }, 'search counts could not be prepared; SQL counts meanwhile'),
        })
      : undefined,
    metrics,
  };

  const app = Fastify({
    logger: options.logger === false ? false : { level: config.logLevel, ...(options.logStream ? { stream: options.logStream } : {}) },
    // A caller's X-Request-Id is kept when it is sane, so logs join up across services.
    genReqId: (request) => {
      const given = request.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID_PATTERN.test(given) ? given : randomUUID();
    },
    bodyLimit: 1024 * 1024,
    // Behind a reverse proxy, the client address (for per-address rate limits) is in X-Forwarded-For.
    trustProxy: config.trustProxy,
    // Long enough that route schemas (not the router) judge a path parameter's length.
    routerOptions: { maxParamLength: 1000 },
    frameworkErrors: answerFrameworkError,
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    schemaController: { compilersFactory: { buildSerializer: lazySerializers } },
  }).withTypeProvider<TypeBoxTypeProvider>();

  // On close Fastify ends idle keep-alive connections, but one busy with a request at that
  // moment would stay open after its response until the keep-alive timeout, holding up the
  // shutdown: the response tells the client, and Node, to close it. A new request arriving on
  // such a connection meanwhile gets the catalogue's plain 503.
  let draining = false;
  app.addHook('preClose', async () => {
    draining = true;
  });
  app.addHook('onRequest', async (request, reply) => {
    reply.header('X-Request-Id', request.id);
    if (draining) return sendError(reply, new ApiError('UNAVAILABLE'));
  });
  app.addHook('onSend', async (_request, reply, payload) => {
    if (draining) reply.header('Connection', 'close');
    return payload;
  });
  app.addHook('onResponse', async (request, reply) => {
    metrics.observeRequest(request, reply);
  });
  app.addHook('onRoute', enrichRouteSchema);
  installValidation(app);
  installBodyRules(app);
  installErrorHandling(app);
  for (const schema of [...userSchemas, ...studySchemas, ...propertySchemas, ...populationSchemas, ...importSchemas, ...backfillSchemas, ...personSchemas, ...searchSchemas, ...segmentSchemas, ...participantSchemas, ...signupSchemas, ...eventSchemas, ...incentiveSchemas, ...incentiveBudgetSchemas, ...webhookSchemas, ...messageSchemas, ...sendingSchemas, ...consentSchemas, ...participantLinkSchemas, ...consentFormSchemas, ...screenerResponseSchemas, ...quotaGroupSchemas, ...brandingSchemas, ...schedulingSchemas, ...calendarFeedSchemas, ...incentiveProviderSchemas, ...signInSchemas, ...auditSchemas]) app.addSchema(schema);
  await registerOpenApi(app, { publicUrl: config.publicUrl, webhooks: webhookDocumentation() });
  const keyUsage = new KeyUsage(deps.db, clock, (error) => app.log.warn({ err: error }, "API keys' lastUsedAt could not be written; the next uses will be"));
  keyUsage.start();
  // Deactivations, role changes and revocations reach every instance's cache at once through Redis.
  const invalidations = config.redisUrl
    ? broadcastInvalidations(deps.principals, {
        redisUrl: config.redisUrl,
        channel: `${options.rateLimitKeyPrefix ?? 'rl'}:principal-invalidations`,
        onLost: (error) => app.log.warn({ err: error }, 'an invalidation could not be broadcast: other instances see it within AUTH_CACHE_SECONDS'),
      })
    : undefined;
  // The console's session cookie: its lookup checks the session's ends and its user's status (src/families/sign-in/).
  const findSessionOwner = (digest: Buffer) => findSessionPrincipal(deps.db, deps.clock, digest);
  installAuthentication(app, {
    findTokenOwner: (workspaceId, digest) => findTokenOwner(deps.db, workspaceId, digest),
    findSessionOwner,
    cache: deps.principals,
    limiter,
    operatorToken: config.testHelpers ? config.testHelpersToken : undefined,
    now: () => clock.now().getTime(),
    // A key's lastUsedAt; a console session keeps its own last-seen time.
    onAuthenticated: (principal) => {
      if (principal.via === 'API_KEY') keyUsage.note(principal.workspaceId, principal.tokenId);
    },
  });
  const heavyWork = new WorkspaceWorkLimiter({
    capacity: config.searchWeightPerWorkspace,
    queueMax: config.searchQueuePerWorkspace,
    waitMs: config.searchWaitMs,
    budgetMsPerSecond: config.searchBudgetMsPerSecond === 0 ? undefined : config.searchBudgetMsPerSecond,
    burstMs: config.searchBudgetBurstMs,
  });
  installHeavyWorkLimits(app, heavyWork, (request) => request.principal?.workspaceId);
  // On the embedded store's one connection, a workspace running searches waits behind the others.
  if (database.connections.kind === 'queue') database.connections.queue.setBackground((scope) => scope !== null && heavyWork.busy(scope));
  installIdempotency(app, { dbFor: deps.tenantDb, leaseSeconds: options.idempotencyLeaseSeconds });
  // The audit trail: every successful write, one entry (after the idempotency replay, which records none).
  const audit = new AuditRecorder(deps.backgroundDb(null), app.log);
  installAuditTrail(app, deps, audit);
  app.addHook('onClose', async () => audit.close());

  app.get('/healthz', { schema: { hide: true }, config: { public: true } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { hide: true }, config: { public: true } }, async (_request, reply) => {
    try {
      await deps.db.selectFrom('workspaces').select('workspace_id').limit(1).execute();
      return { status: 'ready' };
    } catch {
      return reply.code(503).send({ status: 'database unreachable' });
    }
  });
  // Only with a token configured: an operator who set none gets 404, as for any unknown path.
  if (config.metricsToken) installMetricsRoute(app, metrics, config.metricsToken);
  installOpenApiDocument(app, { limiter, max: config.openapiRateLimitMax });
  // The research team's web console (console/, built to console/dist), under its own security headers.
  await app.register(consoleRoutes, { prefix: consolePrefix, ...(options.consoleRoot ? { root: options.consoleRoot } : {}) });
  // The participant's pages (src/participant/): what the people being recruited see, under /p/.
  const secrets = await SecretBox.open(deps.db, config.secretsKey);
  // Workspaces' provider accounts: credentials sealed under a key derived from the same root as the webhook secrets'.
  const credentialRoot = config.secretsKey !== undefined ? Buffer.from(config.secretsKey, 'base64') : await serviceSecret(deps.db, 'webhook-secrets-key');
  deps.providers.accounts ??= new ProviderAccounts(
    CredentialBox.fromRoot(credentialRoot, config.secretsKeyPrevious !== undefined ? Buffer.from(config.secretsKeyPrevious, 'base64') : undefined),
    config.providerApiUrls,
  );
  // Single sign-on: workspaces' client secrets sealed under a key of their own, derived from the same root.
  const sso = new SingleSignOn(
    CredentialBox.fromRoot(credentialRoot, config.secretsKeyPrevious !== undefined ? Buffer.from(config.secretsKeyPrevious, 'base64') : undefined, ssoSecretsPurpose),
    { allowHttp: config.oidcAllowHttp, allowPrivate: config.oidcAllowPrivateIssuers, ...(options.webhookResolver ? { resolve: options.webhookResolver } : {}) },
  );
  await app.register(participantPages, { deps, formKey: secrets.derive(participantFormKeyPurpose) });
  // A host's calendar feeds, for calendar applications: GET /calendar/<token>.ics, the URL its credential.
  await app.register(calendarFeedPublicRoutes, { deps });

  const jobs = new JobRunner({ db: deps.db, clock: deps.clock, log: app.log });
  const webhooks = await Webhooks.open({ db: deps.db, clock: deps.clock, config, log: app.log, listen: database.listen, resolve: options.webhookResolver, pollMs: options.webhookPollMs });
  webhooks.dispatcher.onRecorded((report) => metrics.countWebhookAttempts(report));
  // A session's reminder is the service's own message: the scheduling family writes it as it goes.
  const mail = await Mail.open({ db: deps.db, clock: deps.clock, config, log: app.log, listen: database.listen, pollMs: options.mailPollMs, composers: { REMINDER: composeReminder } });
  mail.dispatcher?.onRecorded((report) => metrics.countMailAttempts({ sent: report.sent, retrying: report.retrying, failed: report.failed, not_sent: report.notSent }));
  registerHousekeepingJobs(jobs, deps);
  registerFamilyJobs(jobs, deps);
  // A signed consent's copy goes through the instance's SMTP mailer (the consent family's job).
  jobs.register(consentCopyHandler({ db: deps.db, clock: deps.clock, mailer: mail.mailer, publicUrl: config.publicUrl }));
  // A booking's calendar invitations (booked, moved, canceled), to the person and the host (the scheduling family's job).
  jobs.register(bookingNotifyHandler({ db: deps.db, clock: deps.clock, mailer: mail.mailer, publicUrl: config.publicUrl }));
  // A sign-in link to the person's own page (src/participant/hub/) goes the same way.
  jobs.register(signInHandler({ db: deps.db, clock: deps.clock, mailer: mail.mailer, publicUrl: config.publicUrl }));
  // A workspace user's invitation and sign-in links (the sign-in family's job).
  jobs.register(userMailHandler({ db: deps.db, clock: deps.clock, mailer: mail.mailer, publicUrl: config.publicUrl }));

  await app.register(
    async (v1) => {
      await v1.register(usersRoutes, { deps });
      await v1.register(signInRoutes, { deps, findSessionOwner });
      await v1.register(ssoRoutes, { deps, sso });
      await v1.register(studiesRoutes, { deps });
      await v1.register(quotaGroupsRoutes, { deps });
      await v1.register(schedulingRoutes, { deps });
      await v1.register(propertiesRoutes, { deps });
      await v1.register(populationsRoutes, { deps });
      await v1.register(importsRoutes, { deps });
      await v1.register(backfillsRoutes, { deps });
      await v1.register(peopleRoutes, { deps });
      await v1.register(peopleSearchRoutes, { deps });
      await v1.register(personRoutes, { deps });
      await v1.register(segmentsRoutes, { deps });
      await v1.register(participantsRoutes, { deps });
      await v1.register(participantsSearchRoutes, { deps });
      await v1.register(signupsRoutes, { deps });
      await v1.register(submissionsSearchRoutes, { deps });
      await v1.register(eventsRoutes, { deps });
      await v1.register(incentivesRoutes, { deps });
      await v1.register(incentiveBudgetsRoutes, { deps });
      await v1.register(incentivesSearchRoutes, { deps });
      await v1.register(incentiveProviderRoutes, { deps });
      await v1.register(providerWebhookRoutes, { deps });
      await v1.register(webhooksRoutes, { deps, webhooks });
      await v1.register(messagesRoutes, { deps });
      await v1.register(messageSendingRoutes, { deps, mail });
      if (config.testHelpers) await v1.register(testHelperRoutes, { deps, jobs, webhooks, mail, prefix: '/test-helpers' });
      await v1.register(consentRoutes, { deps });
      await v1.register(participantLinksRoutes, { deps });
      await v1.register(consentFormsRoutes, { deps });
      await v1.register(screenerResponsesRoutes, { deps });
      await v1.register(brandingRoutes, { deps });
      await v1.register(calendarFeedsRoutes, { deps });
      await v1.register(auditRoutes, { deps, recorder: audit });
    },
    { prefix: apiPrefix },
  );
  options.extraRoutes?.(app);

  await app.ready();
  let statistics: PlannerStatisticsKeeper | undefined;
  let closing: Promise<void> | undefined;
  let background: Promise<void> | undefined;
  const startBackground = () => {
    background ??= (async () => {
      if (closing) return;
      if (config.jobs) jobs.start(config.jobPollSeconds);
      // Not awaited: the first pass runs while the service already answers.
      if (config.jobs) statistics = keepPlannerStatistics({ db: deps.db, storeKind: deps.storeKind, everyMs: config.statisticsSeconds * 1000, log: app.log });
      if (config.webhookDelivery) await webhooks.start();
      if (config.mailDelivery) await mail.start();
    })();
    return background;
  };
  if (!options.deferBackground) await startBackground();
  if (!sharedLimits) app.log.warn('Redis is not reachable yet: rate limits are counted in process until it is');
  if (invalidations && !(await invalidations.ready())) app.log.warn('Redis is not reachable yet: other instances see deactivations and revocations within AUTH_CACHE_SECONDS until it is');

  const close = () => {
    closing ??= (async () => {
      // A start under way finishes first, so that what it started is stopped below.
      await background?.catch(() => {});
      // Background work stops first: its handlers still need the database closed below.
      try {
        await jobs.stop();
        await statistics?.stop();
        await webhooks.stop();
        await mail.stop();
        await app.close();
        await keyUsage.stop();
        await invalidations?.close();
        await deps.counts?.close();
        await limiter.close();
      } finally {
        metrics.close();
        if (ownsDatabase) await database.close();
      }
    })();
    return closing;
  };
  return { app, deps, jobs, webhooks, mail, heavyWork, keyUsage, audit, startBackground, close };
}
