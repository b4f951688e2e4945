import { recordServiceChanges } from '../audit/recorder.js';
import { type Kysely, sql } from 'kysely';
import type { Clock } from '../../clock.js';
import type { DB } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { type JobHandler, type Schedule, sweepScope } from '../../jobs/queue.js';
import { eraseConsentsOfPeople } from '../consent/writer.js';
import * as backfillQueries from '../backfills/queries.js';
import * as importQueries from '../imports/queries.js';
import { eraseMessagesOf } from '../messages/queries.js';

export const PURGE_QUEUE = 'people.purge';
/**
 * Days between a person's deletion and the purge. Deletion erases their personal data at once
 * (erasure.ts, issue 32); the purge, within the hour, marks them purged, erases what a deletion
 * made before that erasure left, and vacuums the old row versions (which still held the values)
 * away from the tables and their indexes. A mistaken bulk delete is undone from a backup.
 */
export const PURGE_GRACE_DAYS = 0;
/** An upload that never finished (its request died) is dropped after this long. */
const ABANDONED_UPLOAD_HOURS = 24;
const BATCH_SIZE = 500;
const DAY_MS = 24 * 60 * 60 * 1000;

export interface PurgeResult {
  peoplePurged: number;
  importsClosed: number;
  /** Backfills closed for the same reasons as imports: their stored files hold emails. */
  backfillsClosed: number;
  /** Whether the purged people's tables were vacuumed (only after something was erased). */
  vacuumed: boolean;
}

/**
 * The tables whose old row versions still held what a purge erased: an UPDATE leaves the old
 * version (and its index entries, the email index's lower(email) among them) until VACUUM
 * removes it. PostgreSQL's autovacuum would come eventually; the embedded store runs none.
 */
const ERASED_TABLES = ['people', 'population_members', 'person_unique_values', 'import_chunks', 'import_errors', 'backfill_chunks', 'messages', 'message_events', 'participants', 'consent_submissions', 'idempotency_keys'];

/**
 * Erases, for good, the personal data of people deleted more than PURGE_GRACE_DAYS ago by the
 * service's clock: the row keeps its id (history that refers to it stays whole) but loses every
 * value that identifies the person; memberships, unique-value claims and consent submissions go.
 * Each batch is one transaction and only touches rows not purged yet, so a rerun does nothing twice.
 *
 * It also closes imports that can no longer finish (their job failed for good, or the upload
 * died), deleting their stored files, which hold personal data. Those ages are measured in real
 * time, as job retention is: a test clock moved ahead must not close another instance's upload
 * in flight.
 *
 * A system job does this for every workspace; a job of one workspace for that one alone (see
 * sweepScope).
 */
export function purgePeopleHandler(db: Kysely<DB>, clock: Clock, realNow: () => Date = () => new Date()): JobHandler {
  return {
    queue: PURGE_QUEUE,
    async run(job): Promise<PurgeResult> {
      const now = clock.now();
      const cutoff = new Date(now.getTime() - PURGE_GRACE_DAYS * DAY_MS).toISOString();
      const workspaceId = sweepScope(job);
      const result: PurgeResult = { peoplePurged: 0, importsClosed: 0, backfillsClosed: 0, vacuumed: false };
      for (;;) {
        job.signal.throwIfAborted();
        const purged = await purgeBatch(db, cutoff, now.toISOString(), workspaceId);
        result.peoplePurged += purged;
        if (purged < BATCH_SIZE) break;
      }
      result.importsClosed = await closeAbandonedImports(db, { realNow, signal: job.signal, workspaceId });
      result.backfillsClosed = await closeAbandonedBackfills(db, { realNow, signal: job.signal, workspaceId });
      if (result.peoplePurged > 0 || result.importsClosed > 0 || result.backfillsClosed > 0) {
        // Outside any transaction (VACUUM cannot run in one): the dead versions go from tables and indexes.
        await sql`vacuum (analyze) ${sql.join(ERASED_TABLES.map((table) => sql.table(table)))}`.execute(db);
        result.vacuumed = true;
      }
      return result;
    },
  };
}

export interface CloseImportsOptions {
  realNow?: () => Date;
  signal?: AbortSignal;
  /** Only this workspace's imports; every workspace's without it. */
  workspaceId?: string;
}

/**
 * Closes (FAILED) the imports that can no longer finish, deleting their stored files: those whose
 * job failed for good, and uploads that died more than ABANDONED_UPLOAD_HOURS ago. Returns how many.
 */
export async function closeAbandonedImports(db: Kysely<DB>, options: CloseImportsOptions = {}): Promise<number> {
  const realNow = options.realNow ?? (() => new Date());
  const receivingBefore = new Date(realNow().getTime() - ABANDONED_UPLOAD_HOURS * 60 * 60 * 1000).toISOString();
  let closed = 0;
  for (;;) {
    options.signal?.throwIfAborted();
    const abandoned = await importQueries.findAbandonedImports(db, receivingBefore, BATCH_SIZE, options.workspaceId);
    for (const found of abandoned) {
      const reason = found.status === 'RECEIVING' ? 'The upload was never finished' : 'Its background work failed for good';
      if (await importQueries.finishImport(db, found.workspace_id, found.import_id, 'FAILED', realNow().toISOString(), { reason, service: PURGE_QUEUE })) closed++;
    }
    if (abandoned.length < BATCH_SIZE) return closed;
  }
}

/** The same for backfills (their stored files hold the emails rows match people by). Returns how many. */
export async function closeAbandonedBackfills(db: Kysely<DB>, options: CloseImportsOptions = {}): Promise<number> {
  const realNow = options.realNow ?? (() => new Date());
  const receivingBefore = new Date(realNow().getTime() - ABANDONED_UPLOAD_HOURS * 60 * 60 * 1000).toISOString();
  let closed = 0;
  for (;;) {
    options.signal?.throwIfAborted();
    const abandoned = await backfillQueries.findAbandonedBackfills(db, receivingBefore, BATCH_SIZE, options.workspaceId);
    for (const found of abandoned) {
      const reason = found.status === 'RECEIVING' ? 'The upload was never finished' : 'Its background work failed for good';
      if (await backfillQueries.finishBackfill(db, found.workspace_id, found.backfill_id, 'FAILED', realNow().toISOString(), { reason, service: PURGE_QUEUE })) closed++;
    }
    if (abandoned.length < BATCH_SIZE) return closed;
  }
}

async function purgeBatch(db: Kysely<DB>, cutoff: string, now: string, workspaceId: string | undefined): Promise<number> {
  return inTransaction(db, async (transaction) => {
    const due = await transaction
      .selectFrom('people')
      .$if(workspaceId !== undefined, (query) => query.where('workspace_id', '=', workspaceId!))
      .where('deleted_at', 'is not', null)
      .where('purged_at', 'is', null)
      .where('deleted_at', '<=', cutoff)
      .select(['workspace_id', 'person_id'])
      .limit(BATCH_SIZE)
      .forUpdate()
      .skipLocked()
      .execute();
    if (due.length === 0) return 0;
    const keys = JSON.stringify(due);
    const batch = sql`(select x.workspace_id, x.person_id from jsonb_to_recordset(${keys}::jsonb) as x(workspace_id text, person_id text))`;
    // Their consents go too (the consent family erases them; signup submissions that named one keep their row).
    await eraseConsentsOfPeople(transaction, due);
    await sql`delete from population_members where (workspace_id, person_id) in ${batch}`.execute(transaction);
    await sql`delete from person_unique_values where (workspace_id, person_id) in ${batch}`.execute(transaction);
    await eraseMessagesOf(transaction, batch);
    await sql`
      update people set email = null, first_name = null, last_name = null, phone = null,
        additional_emails = '{}', additional_phones = '{}', properties = '{}', import_source = null,
        purged_at = ${now}, updated_at = ${now}
      where (workspace_id, person_id) in ${batch} and purged_at is null
    `.execute(transaction);
    // The trail names whom the service purged, by id only (the ids stay; the values are gone).
    await recordServiceChanges(
      transaction,
      due.map((person) => ({ workspaceId: person.workspace_id, at: now, service: PURGE_QUEUE, operationId: 'purgePerson', resourceType: 'person', resourceId: person.person_id })),
    );
    return due.length;
  });
}

export const purgePeopleSchedule: Schedule = { name: 'people.purge', queue: PURGE_QUEUE, everySeconds: 60 * 60 };
