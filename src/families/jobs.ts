import type { ServiceDeps } from '../context.js';
import type { JobRunner } from '../jobs/runner.js';
import { importJobHandler } from './imports/job.js';
import { expireIncentivesHandler, expireIncentivesSchedule, providerWorkHandler, providerWorkSchedule, reconcileOrdersHandler, reconcileOrdersSchedule } from './incentives/jobs.js';
import { purgePeopleHandler, purgePeopleSchedule } from './people/purge.js';
import { pruneWebhookHistoryHandler, pruneWebhookHistorySchedule } from './webhooks/jobs.js';
import { sweepRemindersHandler, sweepRemindersSchedule } from './scheduling/reminders.js';

/**
 * Every family's background work (imports, deletion purges, incentive expiry and provider
 * retries, the webhook history's retention, sessions' reminders), registered on the runner the service hands in: src/jobs/ imports no family, and every
 * instance can run every kind of job. A family with new work adds its handlers here.
 */
export function registerFamilyJobs(runner: JobRunner, deps: ServiceDeps): void {
  // On the embedded store every statement runs on the event loop: batches of 500 rows (not 5,000)
  // keep each transaction's share of the loop short, so other workspaces' requests interleave (issue 32).
  runner.register(importJobHandler(deps.db, deps.clock, { concurrentBatches: deps.storeKind === 'postgres' ? 2 : 1, ...(deps.storeKind === 'postgres' ? {} : { batchSize: 500 }), onRowsCommitted: (rows) => deps.metrics.countImportRows(rows) }));
  runner.register(purgePeopleHandler(deps.db, deps.clock));
  runner.schedule(purgePeopleSchedule);
  runner.register(expireIncentivesHandler(deps.db, deps.clock, deps.providers));
  runner.schedule(expireIncentivesSchedule);
  runner.register(providerWorkHandler(deps.db, deps.clock, deps.providers));
  runner.schedule(providerWorkSchedule);
  runner.register(reconcileOrdersHandler(deps.db, deps.clock, deps.providers));
  runner.schedule(reconcileOrdersSchedule);
  runner.register(pruneWebhookHistoryHandler(deps.db, deps.clock));
  runner.schedule(pruneWebhookHistorySchedule);
  // Without SMTP_HOST the reminders are recorded NOT_SENT, as every message is (context.ts's smtpConfigured).
  runner.register(sweepRemindersHandler(deps.db, deps.clock, deps.config.smtpHost !== undefined));
  runner.schedule(sweepRemindersSchedule);
}
