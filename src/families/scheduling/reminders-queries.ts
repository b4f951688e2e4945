import { type Kysely, sql } from 'kysely';
import type { DB, SessionReminderSkipReason } from '../../db/schema.js';

type Executor = Kysely<DB>;

/** A reminder that came due and that no sweep has decided on yet. */
export interface DueReminder {
  workspace_id: string;
  booking_id: string;
  sequence: number;
  offset_minutes: number;
  due_at: string;
  person_id: string;
  participant_id: string;
  study_id: string;
  is_deleted: boolean;
  is_opted_out: boolean;
  contact_status: string;
  has_email: boolean;
  /** The booking was made (or last moved) after this reminder's time: it is not sent. */
  booked_after_due: boolean;
}

export interface DueRequest {
  now: string;
  /** How late a reminder may still go (the sweep runs every minute: a few minutes cover a slow or skipped run). */
  latenessSecondsMax: number;
  /** Only this workspace's (a scoped job, see sweepScope); undefined for every workspace. */
  workspaceId: string | undefined;
  limit: number;
}

/**
 * Every due reminder in one statement, of one workspace or of all (the sweep runs on the owner's
 * handle, which row-level security does not bind: the workspace condition is the only scope). A
 * reminder of offset o is due when now - lateness < starts_at - o <= now. The distinct offsets in
 * use are few (the default is 1440 and 60), so for each the statement reads the booked sessions
 * starting in (now + o - lateness, now + o] by the partial index sessions_by_start: a nested loop
 * of narrow index ranges, whatever the number of sessions booked further ahead. A reminder late by
 * more than that window is never seen again, so never sent.
 */
export function dueRemindersStatement(request: DueRequest) {
  const sessionScope = request.workspaceId === undefined ? sql`true` : sql`s.workspace_id = ${request.workspaceId}`;
  const scheduleScope = request.workspaceId === undefined ? sql`true` : sql`sc.workspace_id = ${request.workspaceId}`;
  // Both CTEs are materialized so that the plan starts from the offsets and the sessions' index
  // ranges whatever the statistics say (with few bookings the planner would rather read every
  // booking, which grows with the sessions booked ahead).
  return sql<DueReminder>`
    with offsets as materialized (
      select distinct o.offset_minutes
      from study_schedules sc cross join lateral unnest(sc.reminder_offsets_minutes) as o (offset_minutes)
      where ${scheduleScope} and o.offset_minutes > 0
    ),
    due_sessions as materialized (
      select s.workspace_id, s.session_id, s.study_id, s.starts_at, o.offset_minutes, s.starts_at - make_interval(mins => o.offset_minutes) as due_at
      from offsets o
      join lateral (
        select s.workspace_id, s.session_id, s.study_id, s.starts_at from sessions s
        where s.booked > 0
          and s.starts_at > ${request.now}::timestamptz + make_interval(mins => o.offset_minutes, secs => ${-request.latenessSecondsMax}::double precision)
          and s.starts_at <= ${request.now}::timestamptz + make_interval(mins => o.offset_minutes)
          and s.starts_at > ${request.now}::timestamptz and ${sessionScope}
      ) s on true
    )
    select b.workspace_id, b.booking_id, b.sequence, d.offset_minutes, d.due_at,
      b.person_id, b.participant_id, b.study_id,
      p.deleted_at is not null as is_deleted, p.is_opted_out, p.contact_status, p.email is not null as has_email,
      b.updated_at > d.due_at as booked_after_due
    from due_sessions d
    join study_schedules sc on sc.workspace_id = d.workspace_id and sc.study_id = d.study_id and d.offset_minutes = any (sc.reminder_offsets_minutes)
    join bookings b on b.workspace_id = d.workspace_id and b.session_id = d.session_id and b.status = 'BOOKED'
    join people p on p.workspace_id = b.workspace_id and p.person_id = b.person_id
    where not exists (
      select 1 from session_reminders r
      where r.workspace_id = b.workspace_id and r.booking_id = b.booking_id and r.sequence = b.sequence and r.offset_minutes = d.offset_minutes
    )
    order by d.due_at, b.workspace_id, b.booking_id, d.offset_minutes
    limit ${request.limit}
  `;
}

export async function findDueReminders(db: Executor, request: DueRequest): Promise<DueReminder[]> {
  return (await dueRemindersStatement(request).execute(db)).rows;
}

/** One reminder decided on: the message to queue, or why none is. */
export interface ReminderDecision {
  workspaceId: string;
  bookingId: string;
  sequence: number;
  offsetMinutes: number;
  dueAt: string;
  messageId: string | null;
  skipReason: SessionReminderSkipReason | null;
}

/**
 * Records the decisions, set-based, `on conflict do nothing`: a reminder another sweep decided on
 * first (it committed, or this insert waited on its uncommitted key and found it) is left out of
 * the answer, so its message is queued by that sweep alone. Answers the keys this call wrote.
 */
export async function recordReminderDecisions(transaction: Executor, decisions: readonly ReminderDecision[], at: string): Promise<{ workspace_id: string; booking_id: string; sequence: number; offset_minutes: number }[]> {
  if (decisions.length === 0) return [];
  const column = <T>(pick: (decision: ReminderDecision) => T) => decisions.map(pick);
  const { rows } = await sql<{ workspace_id: string; booking_id: string; sequence: number; offset_minutes: number }>`
    insert into session_reminders (workspace_id, booking_id, sequence, offset_minutes, due_at, message_id, skip_reason, created_at)
    select d.workspace_id, d.booking_id, d.sequence, d.offset_minutes, d.due_at, d.message_id, d.skip_reason, ${at}::timestamptz
    from unnest(
      ${column((d) => d.workspaceId)}::text[], ${column((d) => d.bookingId)}::text[], ${column((d) => d.sequence)}::int[],
      ${column((d) => d.offsetMinutes)}::int[], ${column((d) => d.dueAt)}::timestamptz[], ${column((d) => d.messageId)}::text[],
      ${column((d) => d.skipReason)}::text[]
    ) as d (workspace_id, booking_id, sequence, offset_minutes, due_at, message_id, skip_reason)
    on conflict do nothing
    returning workspace_id, booking_id, sequence, offset_minutes
  `.execute(transaction);
  return rows;
}

/** What a reminder's message says, read again as it is sent: the booking as it stands now. */
export interface ReminderFacts {
  sequence: number;
  offset_minutes: number;
  booking_status: string;
  booking_sequence: number;
  person_time_zone: string | null;
  starts_at: string;
  ends_at: string;
  host_time_zone: string | null;
  study_language: string | null;
  study_name: string | null;
}

export async function findReminderFacts(db: Executor, workspaceId: string, messageId: string): Promise<ReminderFacts | undefined> {
  const { rows } = await sql<ReminderFacts>`
    select r.sequence, r.offset_minutes, b.status as booking_status, b.sequence as booking_sequence, b.person_time_zone,
      s.starts_at, s.ends_at, h.time_zone as host_time_zone,
      st.plan->>'language' as study_language, coalesce(st.plan->>'externalName', st.plan->>'name') as study_name
    from session_reminders r
    join bookings b on b.workspace_id = r.workspace_id and b.booking_id = r.booking_id
    join sessions s on s.workspace_id = b.workspace_id and s.session_id = b.session_id
    join studies st on st.workspace_id = b.workspace_id and st.study_id = b.study_id
    left join study_hosts h on h.workspace_id = s.workspace_id and h.study_id = s.study_id and h.user_id = s.host_user_id
    where r.workspace_id = ${workspaceId} and r.message_id = ${messageId}
  `.execute(db);
  return rows[0];
}
