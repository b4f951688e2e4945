import { type Insertable, type Kysely, sql, type Updateable } from 'kysely';
import type { DB, IncentiveRow, IncentivesTable } from '../../db/schema.js';
import { liveParticipants } from '../participants/queries.js';

type Executor = Kysely<DB>;

/** The columns an Incentive response is made from (presentIncentives); searches select these. */
export const incentiveColumns = [
  'incentive_id',
  'type',
  'amount_cents',
  'sent_at',
  'person_id',
  'participant_id',
  'study_id',
  'status',
  'budget_id',
  'custom_incentive_id',
  'custom_incentive_value',
  'currency',
  'approval_state',
  'approval_decided_by_user_id',
  'approval_decided_at',
  'approval_reason',
] as const satisfies readonly (keyof IncentivesTable)[];

export type PresentableIncentiveRow = Pick<IncentiveRow, (typeof incentiveColumns)[number]>;

/**
 * A participant as sending an incentive needs it: its study's plan and its person's contact
 * details. Only a live participant (its person not deleted) is found, as everywhere else.
 */
export async function findParticipantToPay(db: Executor, workspaceId: string, participantId: string) {
  return liveParticipants(db, workspaceId)
    .innerJoin('studies as st', (join) => join.onRef('st.workspace_id', '=', 'p.workspace_id').onRef('st.study_id', '=', 'p.study_id'))
    .where('p.participant_id', '=', participantId)
    .select(['p.participant_id', 'p.study_id', 'p.person_id', 'pe.email', 'pe.first_name', 'pe.last_name', 'st.plan'])
    .executeTakeFirst();
}

export async function insertIncentive(db: Executor, incentive: Insertable<IncentivesTable>): Promise<IncentiveRow> {
  return db.insertInto('incentives').values(incentive).returningAll().executeTakeFirstOrThrow();
}

export async function findIncentive(db: Executor, workspaceId: string, incentiveId: string, options: { forUpdate?: boolean } = {}) {
  return db
    .selectFrom('incentives')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('incentive_id', '=', incentiveId)
    .$if(options.forUpdate === true, (query) => query.forUpdate())
    .executeTakeFirst();
}

/** A live person's contact details, for ordering an incentive approved after it was recorded. */
export async function findRecipient(db: Executor, workspaceId: string, personId: string) {
  return db
    .selectFrom('people')
    .select(['email', 'first_name', 'last_name'])
    .where('workspace_id', '=', workspaceId)
    .where('person_id', '=', personId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}

/** One keyset page of the incentives waiting for approval, oldest first. */
export async function listAwaitingApproval(db: Executor, workspaceId: string, after: string | undefined, size: number) {
  const base = db.selectFrom('incentives').where('workspace_id', '=', workspaceId).where('approval_state', '=', 'PENDING');
  const [rows, count] = await Promise.all([
    base
      .selectAll()
      .$if(after !== undefined, (query) => query.where('incentive_id', '>', after!))
      .orderBy('incentive_id')
      .limit(size + 1)
      .execute(),
    base.select(sql<number>`count(*)::int`.as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: count.total };
}

export async function findIncentiveByIdempotencyKey(db: Executor, workspaceId: string, key: string) {
  return db.selectFrom('incentives').selectAll().where('workspace_id', '=', workspaceId).where('idempotency_key', '=', key).executeTakeFirst();
}

export async function updateIncentive(db: Executor, workspaceId: string, incentiveId: string, changes: Updateable<IncentivesTable>): Promise<IncentiveRow> {
  return db
    .updateTable('incentives')
    .set(changes)
    .where('workspace_id', '=', workspaceId)
    .where('incentive_id', '=', incentiveId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * The status of an incentive's study, share-locked so it cannot leave DRAFT while the
 * transaction that checked it runs (the study is locked after the incentive, never before).
 */
export async function findStudyStatusForShare(db: Executor, workspaceId: string, studyId: string) {
  const row = await db
    .selectFrom('studies')
    .select('status')
    .where('workspace_id', '=', workspaceId)
    .where('study_id', '=', studyId)
    .forShare()
    .executeTakeFirst();
  return row?.status;
}

/** The emails of the live people among `personIds` (deleted people have none to show). */
export async function findRecipientEmails(db: Executor, workspaceId: string, personIds: readonly string[]): Promise<Map<string, string | null>> {
  const emails = new Map<string, string | null>();
  if (personIds.length === 0) return emails;
  const rows = await db
    .selectFrom('people')
    .select(['person_id', 'email'])
    .where('workspace_id', '=', workspaceId)
    .where('person_id', 'in', [...new Set(personIds)])
    .where('deleted_at', 'is', null)
    .execute();
  for (const row of rows) emails.set(row.person_id, row.email);
  return emails;
}

/**
 * The workspace of an incentive, by its id alone. Only for the test helpers, which act as the
 * provider does without a token; a real provider's report carries the workspace (the order's
 * metadata), and every other query names it. Not indexed: test data only.
 */
export async function findIncentiveWorkspace(db: Executor, incentiveId: string): Promise<string | undefined> {
  const row = await db.selectFrom('incentives').select('workspace_id').where('incentive_id', '=', incentiveId).executeTakeFirst();
  return row?.workspace_id;
}

/** `and workspace_id = …` for a sweep of one workspace (a job of that workspace), else nothing. */
function inWorkspace(workspaceId: string | undefined) {
  return workspaceId === undefined ? sql`` : sql`and workspace_id = ${workspaceId}`;
}

export interface ExpiryPosition {
  sentAt: string;
  workspaceId: string;
  incentiveId: string;
}

/**
 * Starts the expiry of up to `limit` incentives UNCLAIMED since at least `cutoff`, sent from
 * `appliesFrom` on, whose order the provider holds (ORDERED): each is marked VOIDING for expiry,
 * its first attempt counted and the next one due after `retrySeconds` (the provider work retries
 * a void whose outcome is not known), and returned. They become EXPIRED when the provider confirms
 * the void. Rows another transaction holds are left for the next run; an order still PENDING
 * is settled first by the provider work (ordered, then expired at a later run, or ERROR). Every
 * workspace's, or one workspace's when `workspaceId` is given.
 */
export async function startExpiries(
  db: Executor,
  options: { appliesFrom: string; cutoff: string; now: string; retrySeconds: number; limit: number; after?: ExpiryPosition; workspaceId?: string },
): Promise<IncentiveRow[]> {
  // Batches walk forward in (sent_at, workspace, incentive) order: one the provider refused to
  // void goes back to ORDERED and is not taken again by the same run.
  const after = options.after ? sql`and (sent_at, workspace_id, incentive_id) > (${options.after.sentAt}::timestamptz, ${options.after.workspaceId}, ${options.after.incentiveId})` : sql``;
  const { rows } = await sql<IncentiveRow>`
    update incentives set
      provider_state = 'VOIDING',
      void_purpose = 'EXPIRE',
      provider_attempts = 1,
      provider_next_attempt_at = ${options.now}::timestamptz + ${options.retrySeconds} * interval '1 second',
      updated_at = ${options.now}
    where (workspace_id, incentive_id) in (
      select workspace_id, incentive_id from incentives
      where status = 'UNCLAIMED' and provider_state = 'ORDERED' and sent_at >= ${options.appliesFrom} and sent_at <= ${options.cutoff} ${after}
        ${inWorkspace(options.workspaceId)}
      order by sent_at, workspace_id, incentive_id
      limit ${options.limit}
      for update skip locked
    ) and status = 'UNCLAIMED' and provider_state = 'ORDERED'
    returning incentives.*
  `.execute(db);
  return rows;
}

/** A due incentive with what re-ordering it needs of its recipient (all null when the person row is gone). */
export interface DueProviderWork extends IncentiveRow {
  recipient_email: string | null;
  recipient_first_name: string | null;
  recipient_last_name: string | null;
  recipient_deleted_at: string | null;
}

/**
 * Takes up to `limit` incentives with a provider call due (an order or a void whose outcome is
 * not known), pushing each one's next attempt back by its backoff in the same statement, so that
 * another runner (or the next round of this one) does not take it again meanwhile. Each comes
 * with its recipient's contact details, read in the same statement (no lookup per incentive).
 * Every workspace's, or one workspace's when `workspaceId` is given.
 */
export async function takeDueProviderWork(
  db: Executor,
  options: { now: string; limit: number; backoffSeconds: number; backoffSecondsMax: number; workspaceId?: string },
): Promise<DueProviderWork[]> {
  const { rows } = await sql<DueProviderWork>`
    with taken as (
      update incentives set
        provider_attempts = incentives.provider_attempts + 1,
        provider_next_attempt_at = ${options.now}::timestamptz
          + least(${options.backoffSecondsMax}, ${options.backoffSeconds} * power(2, incentives.provider_attempts)) * interval '1 second',
        updated_at = ${options.now}
      where (workspace_id, incentive_id) in (
        select workspace_id, incentive_id from incentives
        where provider_state in ('PENDING', 'VOIDING') and provider_next_attempt_at <= ${options.now} ${inWorkspace(options.workspaceId)}
        order by provider_next_attempt_at
        limit ${options.limit}
        for update skip locked
      )
      returning incentives.*
    )
    select taken.*, pe.email as recipient_email, pe.first_name as recipient_first_name, pe.last_name as recipient_last_name,
      pe.deleted_at as recipient_deleted_at
    from taken
    left join people pe on pe.workspace_id = taken.workspace_id and pe.person_id = taken.person_id
    order by taken.provider_next_attempt_at, taken.workspace_id, taken.incentive_id
  `.execute(db);
  return rows;
}

/**
 * Takes up to `limit` open orders to ask their provider about: UNCLAIMED and ORDERED at one of
 * `providers`, sent at least `minAgeSeconds` ago (their report is late), and not asked about in
 * the last `recheckSeconds`. Marks each as asked in the same statement (skipping rows another
 * transaction holds), so runners on several instances never ask about the same order at once.
 */
export async function takeOpenOrdersToCheck(
  db: Executor,
  options: { now: string; minAgeSeconds: number; recheckSeconds: number; providers: readonly string[]; limit: number; workspaceId?: string },
): Promise<IncentiveRow[]> {
  if (options.providers.length === 0) return [];
  const { rows } = await sql<IncentiveRow>`
    update incentives set provider_checked_at = ${options.now}
    where (workspace_id, incentive_id) in (
      select workspace_id, incentive_id from incentives
      where status = 'UNCLAIMED' and provider_state = 'ORDERED'
        and provider in (${sql.join(options.providers.map((name) => sql`${name}`))})
        and sent_at <= ${options.now}::timestamptz - ${options.minAgeSeconds} * interval '1 second'
        and (provider_checked_at is null or provider_checked_at <= ${options.now}::timestamptz - ${options.recheckSeconds} * interval '1 second')
        ${inWorkspace(options.workspaceId)}
      order by sent_at
      limit ${options.limit}
      for update skip locked
    ) and status = 'UNCLAIMED' and provider_state = 'ORDERED'
    returning incentives.*
  `.execute(db);
  return rows;
}
