import type { ServiceDeps } from '../context.js';
import { importJobHandler } from '../families/imports/job.js';
import { expireIncentivesHandler, expireIncentivesSchedule, providerWorkHandler, providerWorkSchedule } from '../families/incentives/jobs.js';
import { purgePeopleHandler, purgePeopleSchedule } from '../families/people/purge.js';
import { pruneIdempotencyKeysHandler, pruneIdempotencyKeysSchedule } from '../http/idempotency.js';
import { pruneSearchChangesHandler, pruneSearchChangesSchedule } from '../search/counts/prune.js';
import { sweepPropertyStatisticsHandler, sweepPropertyStatisticsSchedule } from '../search/property-statistics.js';
import { pruneJobsHandler, pruneJobsSchedule } from './prune.js';
import type { JobRunner } from './runner.js';

/**
 * Every queue the service runs and every recurring schedule. Each family adds its handlers here
 * (deletion purges, imports, incentive expiry), so every instance can run every kind of job.
 */
export function registerJobs(runner: JobRunner, deps: ServiceDeps): void {
  runner.register(pruneJobsHandler(deps.db));
  runner.schedule(pruneJobsSchedule);
  runner.register(importJobHandler(deps.db, deps.clock, { onRowsCommitted: (rows) => deps.metrics.countImportRows(rows) }));
  runner.register(purgePeopleHandler(deps.db, deps.clock));
  runner.schedule(purgePeopleSchedule);
  runner.register(pruneIdempotencyKeysHandler(deps.db));
  runner.schedule(pruneIdempotencyKeysSchedule);
  runner.register(pruneSearchChangesHandler(deps.db));
  runner.schedule(pruneSearchChangesSchedule);
  runner.register(sweepPropertyStatisticsHandler(deps.db));
  runner.schedule(sweepPropertyStatisticsSchedule);
  runner.register(expireIncentivesHandler(deps.db, deps.clock, deps.providers));
  runner.schedule(expireIncentivesSchedule);
  runner.register(providerWorkHandler(deps.db, deps.clock, deps.providers));
  runner.schedule(providerWorkSchedule);
}
