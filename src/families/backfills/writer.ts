import { type Kysely, sql } from 'kysely';
import type { DB, ParticipantStatus, StudyType } from '../../db/schema.js';
import { idPrefixes, newId } from '../../ids.js';
import { studyKindOf } from '../participants/states.js';
import type { BackfillColumn, BackfillRow } from './columns.js';

/**
 * Writes one batch of a backfill's checked rows, set-based, in the caller's transaction: a
 * handful of statements whatever the batch's size (people and studies looked up with `= any`,
 * rows inserted from `unnest` of one array per column). It writes the same rows the service's
 * own moves write, so every derived name and search count reads the history as if it had
 * happened here: the participants row (status, invited_at, interview_start_time, completed_at,
 * no_show_count), a status event per move at its past date (the invitation a contact, as a move
 * to INVITED is), the person's last_contact_at, and an incentive paid outside the service (CUSTOM,
 * SENT) with its ledger entry. Webhooks are not sent for history.
 */

export interface CheckedRow {
  rowNumber: number;
  row: BackfillRow;
}

export interface RowFailure {
  rowNumber: number;
  column: BackfillColumn | null;
  message: string;
}

export interface BatchContext {
  workspaceId: string;
  backfillId: string;
  userId: string;
  now: string;
}

export interface BatchOutcome {
  written: number;
  skipped: number;
  studiesCreated: number;
  incentivesWritten: number;
  failures: RowFailure[];
}

const text = (values: readonly (string | null)[]) => sql`${values}::text[]`;
const instants = (values: readonly (string | null)[]) => sql`${values}::timestamptz[]`;
const integers = (values: readonly number[]) => sql`${values}::int4[]`;

interface EventDraft {
  participantId: string;
  studyId: string;
  personId: string;
  from: ParticipantStatus;
  to: ParticipantStatus;
  at: string;
  contact: boolean;
}

/** The status moves that took a participation from NOT_STARTED to where the row says it ended, each at its date. */
function movesOf(row: BackfillRow): { to: ParticipantStatus; at: string; contact: boolean }[] {
  const moves: { to: ParticipantStatus; at: string; contact: boolean }[] = [];
  if (row.invitedAt !== null) moves.push({ to: 'INVITED', at: row.invitedAt, contact: true });
  // A booked session: the booking's own time is not known, so it is dated at the session's start.
  if (row.interviewStartTime !== null && (row.status === 'SCHEDULED' || row.status === 'NO_SHOW' || row.status === 'COMPLETED' || row.status === 'CANCELED')) {
    if (row.status !== 'CANCELED' || row.canceledAt === null || row.interviewStartTime <= row.canceledAt) moves.push({ to: 'SCHEDULED', at: row.interviewStartTime, contact: false });
  }
  if (row.status === 'COMPLETED') moves.push({ to: 'COMPLETED', at: row.completedAt!, contact: false });
  if (row.status === 'NO_SHOW') moves.push({ to: 'NO_SHOW', at: row.interviewStartTime!, contact: false });
  if (row.status === 'CANCELED') moves.push({ to: 'CANCELED', at: row.canceledAt!, contact: false });
  return moves;
}

const earliest = (row: BackfillRow) =>
  [row.invitedAt, row.interviewStartTime, row.completedAt, row.canceledAt, row.incentive?.paidAt ?? null].filter((at): at is string => at !== null).sort()[0] ?? null;

export async function writeBackfillBatch(transaction: Kysely<DB>, context: BatchContext, rows: readonly CheckedRow[]): Promise<BatchOutcome> {
  const { workspaceId, backfillId, userId, now } = context;
  const failures: RowFailure[] = [];

  // The people, by id or by email, among the workspace's live people: one statement.
  const emailKeys = [...new Set(rows.flatMap(({ row }) => (row.emailKey === null ? [] : [row.emailKey])))];
  const personIds = [...new Set(rows.flatMap(({ row }) => (row.personId === null ? [] : [row.personId])))];
  const { rows: people } = await sql<{ person_id: string; email_key: string | null }>`
    select person_id, email_key from people
    where workspace_id = ${workspaceId} and deleted_at is null and (email_key = any(${text(emailKeys)}) or person_id = any(${text(personIds)}))
  `.execute(transaction);
  const byEmail = new Map<string, string>();
  const known = new Set<string>();
  for (const person of people) {
    known.add(person.person_id);
    if (person.email_key !== null) byEmail.set(person.email_key, person.person_id);
  }
  const located: { rowNumber: number; row: BackfillRow; personId: string }[] = [];
  for (const { rowNumber, row } of rows) {
    const personId = row.personId !== null ? (known.has(row.personId) ? row.personId : undefined) : byEmail.get(row.emailKey!);
    if (personId === undefined) {
      failures.push(
        row.personId !== null
          ? { rowNumber, column: 'personId', message: 'personId names no person of this workspace: the person must exist (import people first)' }
          : { rowNumber, column: 'email', message: 'email names no person of this workspace: the person must exist (import people first)' },
      );
    } else located.push({ rowNumber, row, personId });
  }

  // The studies, made once per key (the first row naming a key gives its name, type and dates), then all read back.
  const firstOfKey = new Map<string, BackfillRow>();
  for (const { row } of located) if (!firstOfKey.has(row.studyKey)) firstOfKey.set(row.studyKey, row);
  const keys = [...firstOfKey.keys()];
  let studiesCreated = 0;
  if (keys.length > 0) {
    const drafts = keys.map((key) => {
      const row = firstOfKey.get(key)!;
      const plan = { name: row.studyName ?? key, ...(row.studyStartDate ? { startDate: row.studyStartDate } : {}), ...(row.studyEndDate ? { endDate: row.studyEndDate } : {}) };
      return { key, studyId: newId(idPrefixes.study), type: row.studyType, plan: JSON.stringify(plan) };
    });
    const { rows: created } = await sql<{ study_id: string; backfill_key: string }>`
      insert into studies (workspace_id, study_id, study_type, recruitment_strategy, status, plan, created_by_user_id, created_at, updated_at, backfill_id, backfill_key)
      select ${workspaceId}, d.study_id, d.study_type, 'IN_SERVICE', 'CLOSED', cast(d.plan as jsonb), ${userId}, ${now}, ${now}, ${backfillId}, d.backfill_key
      from unnest(${text(drafts.map((d) => d.studyId))}, ${text(drafts.map((d) => d.type))}, ${text(drafts.map((d) => d.plan))}, ${text(drafts.map((d) => d.key))}) as d (study_id, study_type, plan, backfill_key)
      on conflict (workspace_id, backfill_key) where backfill_key is not null do nothing
      returning study_id, backfill_key
    `.execute(transaction);
    studiesCreated = created.length;
    if (created.length > 0) {
      // As a study made here: its status events name the move (to CLOSED, the end state of a study of the past).
      await sql`
        insert into study_status_events (workspace_id, study_id, from_status, to_status, user_id, occurred_at)
        select ${workspaceId}, s.study_id, null, 'CLOSED', ${userId}, ${now} from unnest(${text(created.map((study) => study.study_id))}) as s (study_id)
      `.execute(transaction);
    }
  }
  const { rows: studies } =
    keys.length === 0
      ? { rows: [] }
      : await sql<{ study_id: string; backfill_key: string; study_type: StudyType }>`
          select study_id, backfill_key, study_type from studies where workspace_id = ${workspaceId} and backfill_key = any(${text(keys)})
        `.execute(transaction);
  const studyByKey = new Map(studies.map((study) => [study.backfill_key, study]));

  // The participations: one insert; a (study, person) already there is skipped (the same file twice changes nothing).
  const drafts: { rowNumber: number; row: BackfillRow; personId: string; studyId: string; participantId: string }[] = [];
  for (const entry of located) {
    const study = studyByKey.get(entry.row.studyKey)!;
    if (study.study_type !== entry.row.studyType) {
      failures.push({ rowNumber: entry.rowNumber, column: 'studyType', message: `studyType differs from the type of the study already backfilled under this studyKey (${study.study_type})` });
      continue;
    }
    drafts.push({ ...entry, studyId: study.study_id, participantId: newId(idPrefixes.participant) });
  }
  let inserted = new Set<string>();
  if (drafts.length > 0) {
    const isInterview = (row: BackfillRow) => studyKindOf(row.studyType) === 'INTERVIEW';
    const { rows: returned } = await sql<{ participant_id: string }>`
      insert into participants (workspace_id, participant_id, study_id, person_id, study_kind, status, approval_status, screener_state,
        invited_at, interview_start_time, test_completed_at, completed_at, no_show_count, added_by_user_id, added_at, updated_at, backfill_id)
      select ${workspaceId}, r.participant_id, r.study_id, r.person_id, r.study_kind, r.status, 'PENDING_REVIEW', 'NOT_SENT',
        r.invited_at, r.interview_start_time, r.test_completed_at, r.completed_at, r.no_show_count, ${userId}, r.added_at, ${now}, ${backfillId}
      from unnest(
        ${text(drafts.map((d) => d.participantId))}, ${text(drafts.map((d) => d.studyId))}, ${text(drafts.map((d) => d.personId))},
        ${text(drafts.map((d) => studyKindOf(d.row.studyType)))}, ${text(drafts.map((d) => d.row.status))},
        ${instants(drafts.map((d) => d.row.invitedAt))}, ${instants(drafts.map((d) => d.row.interviewStartTime))},
        ${instants(drafts.map((d) => (isInterview(d.row) ? null : d.row.completedAt)))}, ${instants(drafts.map((d) => d.row.completedAt))},
        ${integers(drafts.map((d) => (d.row.status === 'NO_SHOW' ? 1 : 0)))}, ${instants(drafts.map((d) => earliest(d.row) ?? now))}
      ) as r (participant_id, study_id, person_id, study_kind, status, invited_at, interview_start_time, test_completed_at, completed_at, no_show_count, added_at)
      on conflict (workspace_id, study_id, person_id) do nothing
      returning participant_id
    `.execute(transaction);
    inserted = new Set(returned.map((row) => row.participant_id));
  }
  const written = drafts.filter((draft) => inserted.has(draft.participantId));
  const skipped = drafts.length - written.length;

  // Their status events, each move at its date, in order.
  const events: EventDraft[] = [];
  for (const draft of written) {
    let from: ParticipantStatus = 'NOT_STARTED';
    for (const move of movesOf(draft.row)) {
      events.push({ participantId: draft.participantId, studyId: draft.studyId, personId: draft.personId, from, to: move.to, at: move.at, contact: move.contact });
      from = move.to;
    }
  }
  if (events.length > 0) {
    await sql`
      insert into participant_status_events (workspace_id, study_id, participant_id, person_id, field, from_value, to_value, is_contact, user_id, occurred_at, backfill_id)
      select ${workspaceId}, e.study_id, e.participant_id, e.person_id, 'status', e.from_value, e.to_value, e.is_contact, ${userId}, e.occurred_at, ${backfillId}
      from unnest(${text(events.map((e) => e.studyId))}, ${text(events.map((e) => e.participantId))}, ${text(events.map((e) => e.personId))},
        ${text(events.map((e) => e.from))}, ${text(events.map((e) => e.to))}, ${sql`${events.map((e) => e.contact)}::bool[]`}, ${instants(events.map((e) => e.at))})
        with ordinality as e (study_id, participant_id, person_id, from_value, to_value, is_contact, occurred_at, n)
      order by e.n
    `.execute(transaction);
    // The person's latest contact, as a move to INVITED keeps it.
    const contacts = events.filter((event) => event.contact);
    if (contacts.length > 0) {
      await sql`
        update people as p set last_contact_at = greatest(p.last_contact_at, c.at)
        from (select person_id, max(at) as at from unnest(${text(contacts.map((e) => e.personId))}, ${instants(contacts.map((e) => e.at))}) as u (person_id, at) group by person_id) as c
        where p.workspace_id = ${workspaceId} and p.person_id = c.person_id and (p.last_contact_at is null or p.last_contact_at < c.at)
      `.execute(transaction);
    }
  }

  // Incentives paid in the other tool: CUSTOM, SENT (money sent outside the service), each with its ledger entry.
  const paid = written.filter((draft) => draft.row.incentive !== null).map((draft) => ({ ...draft, incentiveId: newId(idPrefixes.incentive), entryId: newId(idPrefixes.ledgerEntry) }));
  if (paid.length > 0) {
    await sql`
      insert into incentives (workspace_id, incentive_id, study_id, participant_id, person_id, type, amount_cents, currency, status, sent_by_user_id, sent_at, created_at, updated_at, backfill_id)
      select ${workspaceId}, x.incentive_id, x.study_id, x.participant_id, x.person_id, 'CUSTOM', x.amount, x.currency, 'SENT', ${userId}, x.sent_at, ${now}, ${now}, ${backfillId}
      from unnest(${text(paid.map((d) => d.incentiveId))}, ${text(paid.map((d) => d.studyId))}, ${text(paid.map((d) => d.participantId))}, ${text(paid.map((d) => d.personId))},
        ${integers(paid.map((d) => d.row.incentive!.amountMinor))}, ${text(paid.map((d) => d.row.incentive!.currency))}, ${instants(paid.map((d) => d.row.incentive!.paidAt))})
        as x (incentive_id, study_id, participant_id, person_id, amount, currency, sent_at)
    `.execute(transaction);
    await sql`
      insert into incentive_ledger (workspace_id, entry_id, incentive_id, kind, amount_minor, currency, study_id, participant_id, person_id, status, actor_kind, actor_id, note, at, backfill_id)
      select ${workspaceId}, x.entry_id, x.incentive_id, 'SENT', x.amount, x.currency, x.study_id, x.participant_id, x.person_id, 'SENT', 'USER', ${userId}, ${`Backfilled (${backfillId})`}, x.at, ${backfillId}
      from unnest(${text(paid.map((d) => d.entryId))}, ${text(paid.map((d) => d.incentiveId))}, ${text(paid.map((d) => d.studyId))}, ${text(paid.map((d) => d.participantId))},
        ${text(paid.map((d) => d.personId))}, ${integers(paid.map((d) => d.row.incentive!.amountMinor))}, ${text(paid.map((d) => d.row.incentive!.currency))}, ${instants(paid.map((d) => d.row.incentive!.paidAt))})
        as x (entry_id, incentive_id, study_id, participant_id, person_id, amount, currency, at)
    `.execute(transaction);
  }

  return { written: written.length, skipped, studiesCreated, incentivesWritten: paid.length, failures };
}
