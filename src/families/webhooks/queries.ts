import { type Insertable, type Kysely, sql, type Updateable } from 'kysely';
import type { DB, WebhookAttemptTrigger, WebhookEndpointsTable, WebhookMessagesTable } from '../../db/schema.js';
import { notifyDispatchers } from './outbox.js';

type Executor = Kysely<DB>;

/** A delivery a dispatcher claimed, with what sending it needs. */
export interface ClaimedDelivery {
  workspace_id: string;
  endpoint_id: string;
  message_id: string;
  /** This attempt's number: 1 for the first. */
  attempt_count: number;
  trigger: 'SCHEDULED' | 'MANUAL';
  url: string;
  secret_ciphertext: string;
  previous_secret_ciphertext: string | null;
  previous_secret_expires_at: string | null;
  payload: unknown;
}

export interface EndpointCapacity {
  workspaceId: string;
  endpointId: string;
  /** Attempts this dispatcher may start for the endpoint now. */
  free: number;
}

export interface ClaimRequest {
  now: string;
  /** The claimed deliveries come due again at this time if no outcome is recorded by then. */
  leaseUntil: string;
  /** Attempts per endpoint for endpoints not in `capacity` (none in flight here). */
  perEndpoint: number;
  capacity: readonly EndpointCapacity[];
  /** Only this workspace's deliveries (tests drain their own). */
  workspaceId?: string | undefined;
}

/**
 * Claims due deliveries, per enabled endpoint its oldest due ones up to the attempts it may start,
 * so that one endpoint's backlog never fills every slot. The claim moves each delivery's
 * next_attempt_at to the lease's end and counts the attempt in the same statement: another
 * dispatcher (another instance) skips rows locked meanwhile and, after commit, finds them not due,
 * so each attempt is made once; if this process dies, they come due again when the lease ends.
 */
export async function claimDueDeliveries(db: Executor, request: ClaimRequest): Promise<ClaimedDelivery[]> {
  const workspaces = request.capacity.map((item) => item.workspaceId);
  const endpoints = request.capacity.map((item) => item.endpointId);
  const free = request.capacity.map((item) => item.free);
  const scope = request.workspaceId === undefined ? sql`true` : sql`e.workspace_id = ${request.workspaceId}`;
  const result = await sql<ClaimedDelivery>`
    with capacity as (
      select * from unnest(${workspaces}::text[], ${endpoints}::text[], ${free}::int[]) as c (workspace_id, endpoint_id, free)
    ),
    due as (
      select d.workspace_id, d.endpoint_id, d.message_id
      from webhook_endpoints e
      left join capacity c on c.workspace_id = e.workspace_id and c.endpoint_id = e.endpoint_id
      cross join lateral (
        select x.workspace_id, x.endpoint_id, x.message_id
        from webhook_deliveries x
        where x.workspace_id = e.workspace_id and x.endpoint_id = e.endpoint_id
          and x.state = 'PENDING' and x.next_attempt_at <= ${request.now}::timestamptz
        order by x.next_attempt_at
        limit coalesce(c.free, ${request.perEndpoint})
        for update skip locked
      ) d
      where e.enabled and ${scope}
    ),
    claimed as (
      update webhook_deliveries w
      set next_attempt_at = ${request.leaseUntil}::timestamptz, attempt_count = w.attempt_count + 1, last_attempt_at = ${request.now}::timestamptz
      from due
      where w.workspace_id = due.workspace_id and w.endpoint_id = due.endpoint_id and w.message_id = due.message_id
      returning w.workspace_id, w.endpoint_id, w.message_id, w.attempt_count, w.trigger
    )
    select c.workspace_id, c.endpoint_id, c.message_id, c.attempt_count, c.trigger,
      e.url, e.secret_ciphertext, e.previous_secret_ciphertext, e.previous_secret_expires_at, m.payload
    from claimed c
    join webhook_endpoints e on e.workspace_id = c.workspace_id and e.endpoint_id = c.endpoint_id
    join webhook_messages m on m.workspace_id = c.workspace_id and m.message_id = c.message_id
  `.execute(db);
  return result.rows;
}

/** What one attempt came to, with the delivery's next step. */
export interface AttemptOutcome {
  workspaceId: string;
  endpointId: string;
  messageId: string;
  attemptId: string;
  trigger: WebhookAttemptTrigger;
  attemptedAt: string;
  durationMs: number;
  succeeded: boolean;
  responseStatus: number | null;
  responseBody: string | null;
  error: string | null;
  /** For a scheduled or manual attempt: PENDING again at nextAttemptAt, SUCCEEDED or FAILED. Undefined for a test send. */
  delivery?: { state: 'PENDING' | 'SUCCEEDED' | 'FAILED'; nextAttemptAt: string | null };
}

/**
 * Records attempts in one transaction, set-based: the attempt rows, each delivery's next state,
 * and each endpoint's failing streak, which disables an endpoint that has failed for
 * `disableAfterSeconds` with a reason saying since when. A success ends the streak.
 */
export async function recordOutcomes(db: Executor, outcomes: readonly AttemptOutcome[], disableAfterSeconds: number): Promise<void> {
  if (outcomes.length === 0) return;
  await db.transaction().execute(async (transaction) => {
    await transaction
      .insertInto('webhook_attempts')
      .values(
        outcomes.map((outcome) => ({
          workspace_id: outcome.workspaceId,
          attempt_id: outcome.attemptId,
          endpoint_id: outcome.endpointId,
          message_id: outcome.messageId,
          trigger: outcome.trigger,
          attempted_at: outcome.attemptedAt,
          duration_ms: outcome.durationMs,
          succeeded: outcome.succeeded,
          response_status: outcome.responseStatus,
          response_body: outcome.responseBody,
          error: outcome.error,
        })),
      )
      .execute();
    const moves = outcomes.filter((outcome) => outcome.delivery !== undefined);
    if (moves.length > 0) {
      // Only a delivery still leased by this claim moves: one re-sent by hand meanwhile keeps its new schedule.
      await sql`
        update webhook_deliveries d
        set state = o.state, next_attempt_at = o.next_attempt_at
        from unnest(
          ${moves.map((o) => o.workspaceId)}::text[], ${moves.map((o) => o.endpointId)}::text[], ${moves.map((o) => o.messageId)}::text[],
          ${moves.map((o) => o.delivery!.state)}::text[], ${moves.map((o) => o.delivery!.nextAttemptAt)}::timestamptz[],
          ${moves.map((o) => o.attemptedAt)}::timestamptz[]
        ) as o (workspace_id, endpoint_id, message_id, state, next_attempt_at, attempted_at)
        where d.workspace_id = o.workspace_id and d.endpoint_id = o.endpoint_id and d.message_id = o.message_id
          and d.state = 'PENDING' and d.last_attempt_at = o.attempted_at
      `.execute(transaction);
    }
    // Per endpoint: did any attempt succeed, and when did the first failure happen.
    const streaks = new Map<string, { workspaceId: string; endpointId: string; succeeded: boolean; firstFailureAt: string | null; lastError: string | null }>();
    for (const outcome of outcomes) {
      const key = `${outcome.workspaceId}\u0000${outcome.endpointId}`;
      const streak = streaks.get(key) ?? { workspaceId: outcome.workspaceId, endpointId: outcome.endpointId, succeeded: false, firstFailureAt: null, lastError: null };
      if (outcome.succeeded) streak.succeeded = true;
      else {
        if (streak.firstFailureAt === null || outcome.attemptedAt < streak.firstFailureAt) streak.firstFailureAt = outcome.attemptedAt;
        streak.lastError = outcome.error;
      }
      streaks.set(key, streak);
    }
    const list = [...streaks.values()];
    await sql`
      update webhook_endpoints e
      set failing_since = case when s.succeeded then null else coalesce(e.failing_since, s.first_failure_at) end,
        enabled = case when not s.succeeded and coalesce(e.failing_since, s.first_failure_at) <= now_at - make_interval(secs => ${disableAfterSeconds}) then false else e.enabled end,
        disabled_reason = case when not s.succeeded and e.enabled and coalesce(e.failing_since, s.first_failure_at) <= now_at - make_interval(secs => ${disableAfterSeconds})
          then 'Disabled at ' || to_char(now_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') || ': every attempt failed since '
            || to_char(coalesce(e.failing_since, s.first_failure_at) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') || ' (last: ' || coalesce(s.last_error, 'unknown error') || ')'
          else e.disabled_reason end
      from (
        select *, ${outcomes.reduce((latest, o) => (o.attemptedAt > latest ? o.attemptedAt : latest), outcomes[0]!.attemptedAt)}::timestamptz as now_at
        from unnest(${list.map((s) => s.workspaceId)}::text[], ${list.map((s) => s.endpointId)}::text[], ${list.map((s) => s.succeeded)}::boolean[],
          ${list.map((s) => s.firstFailureAt)}::timestamptz[], ${list.map((s) => s.lastError)}::text[])
          as u (workspace_id, endpoint_id, succeeded, first_failure_at, last_error)
      ) s
      where e.workspace_id = s.workspace_id and e.endpoint_id = s.endpoint_id
    `.execute(transaction);
  });
}

// Endpoints, messages and attempts as the routes read and write them; every query names its workspace.

export type EndpointRow = Awaited<ReturnType<typeof findEndpoint>> & object;

export async function findEndpoint(db: Executor, workspaceId: string, endpointId: string) {
  return db.selectFrom('webhook_endpoints').selectAll().where('workspace_id', '=', workspaceId).where('endpoint_id', '=', endpointId).executeTakeFirst();
}

export async function insertEndpoint(db: Executor, row: Insertable<WebhookEndpointsTable>) {
  return db.insertInto('webhook_endpoints').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function updateEndpoint(db: Executor, workspaceId: string, endpointId: string, changes: Updateable<WebhookEndpointsTable>) {
  return db
    .updateTable('webhook_endpoints')
    .set(changes)
    .where('workspace_id', '=', workspaceId)
    .where('endpoint_id', '=', endpointId)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteEndpoint(db: Executor, workspaceId: string, endpointId: string): Promise<boolean> {
  const result = await db.deleteFrom('webhook_endpoints').where('workspace_id', '=', workspaceId).where('endpoint_id', '=', endpointId).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

export async function listEndpoints(db: Executor, workspaceId: string, afterEndpointId: string | undefined, size: number) {
  const [rows, total] = await Promise.all([
    db
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where('workspace_id', '=', workspaceId)
      .$if(afterEndpointId !== undefined, (query) => query.where('endpoint_id', '>', afterEndpointId!))
      .orderBy('endpoint_id')
      .limit(size + 1)
      .execute(),
    db.selectFrom('webhook_endpoints').where('workspace_id', '=', workspaceId).select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(total.total) };
}

/** Attempts to the endpoint, newest first. */
export async function listAttempts(db: Executor, workspaceId: string, endpointId: string, messageId: string | undefined, beforeAttemptId: string | undefined, size: number) {
  const base = db
    .selectFrom('webhook_attempts')
    .where('workspace_id', '=', workspaceId)
    .where('endpoint_id', '=', endpointId)
    .$if(messageId !== undefined, (query) => query.where('message_id', '=', messageId!));
  const [rows, total] = await Promise.all([
    base
      .selectAll()
      .$if(beforeAttemptId !== undefined, (query) => query.where('attempt_id', '<', beforeAttemptId!))
      .orderBy('attempt_id', 'desc')
      .limit(size + 1)
      .execute(),
    base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(total.total) };
}

/** Messages in the order they were made (their ids are time-ordered). */
export async function listMessages(db: Executor, workspaceId: string, filter: { eventType?: string | undefined; since?: string | undefined }, afterMessageId: string | undefined, size: number) {
  const base = db
    .selectFrom('webhook_messages')
    .where('workspace_id', '=', workspaceId)
    .$if(filter.eventType !== undefined, (query) => query.where('event_type', '=', filter.eventType!))
    .$if(filter.since !== undefined, (query) => query.where('occurred_at', '>=', filter.since!));
  const [rows, total] = await Promise.all([
    base
      .selectAll()
      .$if(afterMessageId !== undefined, (query) => query.where('message_id', '>', afterMessageId!))
      .orderBy('message_id')
      .limit(size + 1)
      .execute(),
    base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(total.total) };
}

export async function findMessage(db: Executor, workspaceId: string, messageId: string) {
  return db.selectFrom('webhook_messages').selectAll().where('workspace_id', '=', workspaceId).where('message_id', '=', messageId).executeTakeFirst();
}

export async function insertMessage(db: Executor, row: Insertable<WebhookMessagesTable>) {
  await db.insertInto('webhook_messages').values(row).execute();
}

/**
 * Queues messages for the endpoint by hand (a re-send, a replay): a new delivery each, or the
 * existing one started over, due now with a fresh schedule. An attempt of the old schedule still
 * in flight finds its delivery changed (last_attempt_at) and leaves it alone (recordOutcomes).
 */
export async function queueByHand(
  db: Executor,
  workspaceId: string,
  endpointId: string,
  messages: { messageIds?: readonly string[]; since?: string; until?: string; eventTypes?: readonly string[] },
  at: string,
): Promise<number> {
  const byIds = messages.messageIds === undefined ? sql`true` : sql`m.message_id = any (${[...messages.messageIds]}::text[])`;
  const since = messages.since === undefined ? sql`true` : sql`m.occurred_at >= ${messages.since}::timestamptz`;
  const until = messages.until === undefined ? sql`true` : sql`m.occurred_at < ${messages.until}::timestamptz`;
  // A re-send names its message, whatever its type (a test message too); a replay of every type leaves test messages out.
  const types =
    messages.messageIds !== undefined
      ? sql`true`
      : messages.eventTypes === undefined || messages.eventTypes.length === 0
        ? sql`m.event_type <> 'webhook.test'`
        : sql`m.event_type = any (${[...messages.eventTypes]}::text[])`;
  const result = await sql`
    insert into webhook_deliveries (workspace_id, endpoint_id, message_id, state, attempt_count, trigger, next_attempt_at, created_at)
    select m.workspace_id, ${endpointId}, m.message_id, 'PENDING', 0, 'MANUAL', ${at}::timestamptz, ${at}::timestamptz
    from webhook_messages m
    where m.workspace_id = ${workspaceId} and ${byIds} and ${since} and ${until} and ${types}
    on conflict (workspace_id, endpoint_id, message_id) do update
      set state = 'PENDING', attempt_count = 0, trigger = 'MANUAL', next_attempt_at = excluded.next_attempt_at, last_attempt_at = null
  `.execute(db);
  const queued = Number(result.numAffectedRows ?? 0n);
  if (queued > 0) await notifyDispatchers(db);
  return queued;
}


/** Messages and attempts older than the retention; their deliveries go with them. */
export async function pruneHistory(db: Executor, olderThan: string, scope: { workspaceId?: string | undefined }): Promise<number> {
  const result = await db
    .deleteFrom('webhook_messages')
    .where('occurred_at', '<', olderThan)
    .$if(scope.workspaceId !== undefined, (query) => query.where('workspace_id', '=', scope.workspaceId!))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
