import type { ServiceDeps } from '../context.js';
import { pruneIdempotencyKeysHandler, pruneIdempotencyKeysSchedule } from '../http/idempotency/prune.js';
import { pruneSearchChangesHandler, pruneSearchChangesSchedule } from '../search/counts/prune.js';
import { sweepPropertyStatisticsHandler, sweepPropertyStatisticsSchedule } from '../search/property-statistics.js';
import { pruneJobsHandler, pruneJobsSchedule } from './prune.js';
import type { JobRunner } from './runner.js';

/**
 * The service's own recurring housekeeping: finished jobs, old Idempotency-Keys, the search
 * change log, property statistics. The families' work is registered beside this from app.ts
 * (src/families/jobs.ts): this module, like the runner, knows no family.
 */
export function registerHousekeepingJobs(runner: JobRunner, deps: Pick<ServiceDeps, 'db'>): void {
  runner.register(pruneJobsHandler(deps.db));
  runner.schedule(pruneJobsSchedule);
  runner.register(pruneIdempotencyKeysHandler(deps.db));
  runner.schedule(pruneIdempotencyKeysSchedule);
  runner.register(pruneSearchChangesHandler(deps.db));
  runner.schedule(pruneSearchChangesSchedule);
  runner.register(sweepPropertyStatisticsHandler(deps.db));
  runner.schedule(sweepPropertyStatisticsSchedule);
}
