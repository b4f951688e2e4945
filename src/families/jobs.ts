import type { ServiceDeps } from '../context.js';
import type { JobRunner } from '../jobs/runner.js';
import { backfillJobHandler } from './backfills/job.js';
import { type CommittedRows, importJobHandler } from './imports/job.js';
import { expireIncentivesHandler, expireIncentivesSchedule, providerWorkHandler, providerWorkSchedule, reconcileOrdersHandler, reconcileOrdersSchedule } from './incentives/jobs.js';
import { purgePeopleHandler, purgePeopleSchedule } from './people/purge.js';
import { pruneWebhookHistoryHandler, pruneWebhookHistorySchedule } from './webhooks/jobs.js';
import { sweepRemindersHandler, sweepRemindersSchedule } from './scheduling/reminders.js';
import { pruneAuditEventsHandler, pruneAuditEventsSchedule } from './audit/jobs.js';

/** The most of a file the embedded store's import job parses in one turn of the event loop. */
export const EMBEDDED_IMPORT_PARSE_BYTES = 8 * 1024;

/**
 * Every family's background work (imports, deletion purges, incentive expiry and provider
 * retries, the webhook history's retention, sessions' reminders), registered on the runner the service hands in: src/jobs/ imports no family, and every
 * instance can run every kind of job. A family with new work adds its handlers here.
 */
export function registerFamilyJobs(runner: JobRunner, deps: ServiceDeps): void {
  // On the embedded store every statement runs on the event loop and holds the one connection (issue
  // 32): the job's statements wait behind interactive ones (the background handle), each batch is
  // sized to hold the connection about EMBEDDED_IMPORT_BATCH_MS (config), and the file is parsed a few KiB at a time.
  const onRowsCommitted = (rows: CommittedRows) => deps.metrics.countImportRows(rows);
  runner.register(
    deps.storeKind === 'postgres'
      ? importJobHandler(deps.db, deps.clock, { concurrentBatches: 2, onRowsCommitted })
      : importJobHandler(deps.backgroundDb(null), deps.clock, { batchSize: 500, batchBudgetMs: deps.config.embeddedImportBatchMs, parseSliceBytes: EMBEDDED_IMPORT_PARSE_BYTES, onRowsCommitted }),
  );
  // A backfill's batches are set-based statements; on the embedded store smaller ones hold its one connection less long.
  runner.register(deps.storeKind === 'postgres' ? backfillJobHandler(deps.db, deps.clock) : backfillJobHandler(deps.backgroundDb(null), deps.clock, { batchSize: 500 }));
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
  // The audit trail's retention: entries older than the workspace's retentionDays.
  runner.register(pruneAuditEventsHandler(deps.db, deps.clock));
  runner.schedule(pruneAuditEventsSchedule);
}
