import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { ServiceDeps } from '../../context.js';
import type { JobRunner } from '../../jobs/runner.js';

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
 * service's clock and run due background work. Claims and failures arrive with the families
 * that need them.
 */
export const testHelperRoutes: FastifyPluginAsyncTypebox<{ deps: ServiceDeps; jobs: JobRunner }> = async (app, { deps, jobs }) => {
  const common = { tags: ['Test helpers'], hide: true } as const;
  app.post(
    '/clock',
    {
      config: { public: true },
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
      config: { public: true },
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
      config: { public: true },
      schema: {
        ...common,
        operationId: 'runDueJobs',
        summary: 'Run all due background work now',
        description:
          "Enqueues the current run of every recurring schedule, then runs every job due by the service's clock until none is left, and answers what ran.",
        response: { 200: DrainReportSchema },
      },
    },
    async () => jobs.runDue(),
  );
};
