import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { ServiceDeps } from '../../context.js';
import { principalOf } from '../../http/auth.js';
import { notFound } from '../../http/errors.js';
import { ErrorBody } from '../../http/schemas.js';
import type { JobRunner } from '../../jobs/runner.js';
import { reportAsProvider } from '../incentives/service.js';
import { incentiveStatuses } from '../incentives/states.js';
import type { Mail } from '../messages/runtime.js';
import type { Webhooks } from '../webhooks/runtime.js';

const JobRunSchema = Type.Object({
  jobId: Type.String(),
  queue: Type.String(),
  workspaceId: Type.String(),
  attempt: Type.Integer(),
  outcome: Type.Union(['completed', 'retrying', 'failed', 'lease-lost', 'released'].map((outcome) => Type.Literal(outcome))),
  error: Type.Optional(Type.String()),
});

const DrainReportSchema = Type.Object({
  ran: Type.Integer({ description: 'handler runs' }),
  completed: Type.Integer(),
  retrying: Type.Integer({ description: 'runs that failed and will be retried after their backoff' }),
  failed: Type.Integer({ description: 'jobs failed for good (no attempts left)' }),
  jobs: Type.Array(JobRunSchema),
});

/**
 * Routes that exist only with TEST_HELPERS=1 (section 4 of the contract): they move the
 * service's clock, run due background work, and report what an incentive provider would.
 *
 * Two kinds of caller (issue 32, item 6):
 * - the operator, with TEST_HELPERS_TOKEN (env only; no workspace token is it): the clock, which
 *   is one for the whole service and so no workspace's to move, and every helper for every
 *   workspace;
 * - a workspace's SUPER_ADMIN (401 without a token, 403 for any other role): the helpers that can
 *   be held to one workspace, held to the caller's: its due work, its deliveries and messages,
 *   its incentives. Another workspace's id or incentive is a 404, as everywhere.
 */
export const testHelperRoutes: FastifyPluginAsyncTypebox<{ deps: ServiceDeps; jobs: JobRunner; webhooks: Webhooks; mail: Mail }> = async (app, { deps, jobs, webhooks, mail }) => {
  const common = { tags: ['Test helpers'], hide: true } as const;
  // A retry is meant to act again, so no Idempotency-Key replay. The helpers stand in for the
  // clock, the job runner and the provider: they act through the owner's handle (deps.db), held
  // to the caller's workspace by scopeOf (and reportAsProvider's workspace) for a workspace token.
  const helperAccess = { right: 'test-helpers:run', operator: 'also', idempotency: false } as const;
  const operatorOnly = { operator: 'only', idempotency: false } as const;
  /**
   * The workspace a helper acts on: the operator's choice (undefined: every workspace); for a
   * workspace token, its own, and a workspaceId naming another is a 404 (as for an unknown one).
   */
  const scopeOf = async (request: FastifyRequest, workspaceId: string | undefined): Promise<string | undefined> => {
    if (!request.operator) {
      const own = principalOf(request).workspaceId;
      if (workspaceId !== undefined && workspaceId !== own) throw notFound('Workspace', ['workspaceId']);
      return own;
    }
    if (workspaceId === undefined) return undefined;
    const workspace = await deps.db.selectFrom('workspaces').select('workspace_id').where('workspace_id', '=', workspaceId).executeTakeFirst();
    if (!workspace) throw notFound('Workspace', ['workspaceId']);
    return workspaceId;
  };
  app.post(
    '/clock',
    {
      config: operatorOnly,
      schema: {
        ...common,
        operationId: 'setClock',
        summary: "Set the service's clock",
        body: Type.Object({ now: Type.String({ format: 'date-time' }) }, { additionalProperties: false }),
        response: { 200: Type.Object({ now: Type.String() }) },
      },
    },
    async (request) => {
      deps.clock.set(new Date(request.body.now));
      return { now: deps.clock.now().toISOString() };
    },
  );
  app.delete(
    '/clock',
    {
      config: operatorOnly,
      schema: { ...common, operationId: 'resetClock', summary: 'Restore real time', response: { 200: Type.Object({ now: Type.String() }) } },
    },
    async () => {
      deps.clock.reset();
      return { now: deps.clock.now().toISOString() };
    },
  );
  app.post(
    '/jobs/run',
    {
      config: helperAccess,
      schema: {
        ...common,
        operationId: 'runDueJobs',
        summary: 'Run due background work now',
        description:
          "Enqueues the current run of every recurring schedule, then runs every job due by the service's clock until none is left, and answers what ran. " +
          "With `workspaceId`, only that workspace's work: the schedules' runs are enqueued as jobs of that workspace, whose sweeps (the deletion purge, " +
          'incentive expiry and provider retries, job pruning, closing abandoned imports) touch only its rows, and only its jobs run. ' +
          "A workspace's SUPER_ADMIN runs its own workspace's work alone (workspaceId, if given, must be its own: 404 otherwise); only the operator token (TEST_HELPERS_TOKEN) " +
          "runs every workspace's due work, as the service's own poller runs it, when it gives no workspaceId.",
        querystring: Type.Object(
          {
            workspaceId: Type.Optional(
              Type.String({ minLength: 1, maxLength: 100, description: "Run this workspace's due work alone (404 when there is no such workspace)." }),
            ),
          },
          { additionalProperties: false },
        ),
        response: { 200: DrainReportSchema, 400: Type.Ref(ErrorBody), 404: Type.Ref(ErrorBody) },
      },
    },
    async (request) => {
      const workspaceId = await scopeOf(request, request.query.workspaceId);
      return workspaceId === undefined ? jobs.runDue() : jobs.runDue({ workspaceId });
    },
  );

  app.post(
    '/webhooks/run',
    {
      config: helperAccess,
      schema: {
        ...common,
        operationId: 'runDueWebhookDeliveries',
        summary: 'Send due webhook deliveries now',
        description:
          "Sends every webhook delivery due by the service's clock (move the clock to make retries due) and answers how many attempts were made, " +
          "once each attempt's outcome is recorded. Held to the caller's workspace for a workspace token; the operator token gives `workspaceId` or none (every workspace).",
        querystring: Type.Object({ workspaceId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })) }, { additionalProperties: false }),
        response: { 200: Type.Object({ attempted: Type.Integer(), succeeded: Type.Integer(), failed: Type.Integer() }), 400: Type.Ref(ErrorBody), 404: Type.Ref(ErrorBody) },
      },
    },
    async (request) => webhooks.dispatcher.runDue(await scopeOf(request, request.query.workspaceId)),
  );

  app.post(
    '/mail/run',
    {
      config: helperAccess,
      schema: {
        ...common,
        operationId: 'runDueMail',
        summary: 'Send due messages now',
        description:
          "Sends every queued message due by the service's clock (move the clock to make retries due), within each workspace's sending rate, and answers what the attempts came to " +
          "once each outcome is recorded. Held to the caller's workspace for a workspace token; the operator token gives `workspaceId` or none (every workspace). Without SMTP configured there is nothing to send: all zeros.",
        querystring: Type.Object({ workspaceId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })) }, { additionalProperties: false }),
        response: {
          200: Type.Object({ attempted: Type.Integer(), sent: Type.Integer(), retrying: Type.Integer(), failed: Type.Integer(), notSent: Type.Integer() }),
          400: Type.Ref(ErrorBody),
          404: Type.Ref(ErrorBody),
        },
      },
    },
    async (request) => {
      const workspaceId = await scopeOf(request, request.query.workspaceId);
      return (await mail.dispatcher?.runDue(workspaceId)) ?? { attempted: 0, sent: 0, retrying: 0, failed: 0, notSent: 0 };
    },
  );

  // What the incentive provider would report (its webhook would take the same code path).
  for (const [action, kind] of [['claim', 'claimed'], ['fail', 'failed']] as const) {
    app.post(
      `/incentives/:incentiveId/${action}`,
      {
        config: helperAccess,
        schema: {
          ...common,
          operationId: `${action}IncentiveAsProvider`,
          summary: `Report an incentive ${kind}, as the provider would`,
          params: Type.Object({ incentiveId: Type.String({ minLength: 1, maxLength: 100 }) }),
          response: {
            200: Type.Object({ incentiveId: Type.String(), status: Type.Union(incentiveStatuses.map((status) => Type.Literal(status))) }),
            404: Type.Ref(ErrorBody),
            409: Type.Ref(ErrorBody),
          },
        },
      },
      // A workspace's SUPER_ADMIN reaches its own incentives alone: another workspace's is a 404.
      async (request) => reportAsProvider(deps.db, deps.clock, request.params.incentiveId, kind, request.operator ? undefined : principalOf(request).workspaceId),
    );
  }
};
