import { type Insertable, type Kysely, sql, type Updateable } from 'kysely';
import type { DB, ParticipantRow, ParticipantStatusEventsTable, ParticipantsTable } from '../../db/schema.js';

type Executor = Kysely<DB>;

/**
 * Participants whose person is live: a deleted person's participations are not found and not
 * counted anywhere, though their rows stay as the panel's history until the person is purged.
 */
export function liveParticipants(db: Executor, workspaceId: string) {
  return db
    .selectFrom('participants as p')
    .innerJoin('people as pe', (join) =>
      join.onRef('pe.workspace_id', '=', 'p.workspace_id').onRef('pe.person_id', '=', 'p.person_id').on('pe.deleted_at', 'is', null),
    )
    .where('p.workspace_id', '=', workspaceId);
}

/**
 * The study row, locked against other additions to it and changes of its status until the
 * transaction ends (FOR NO KEY UPDATE: inserts elsewhere that merely reference the study pass):
 * two requests adding the same person to one study take turns, and the second sees the first
 * one's participant.
 */
export async function lockStudyForAdding(db: Executor, workspaceId: string, studyId: string) {
  return db
    .selectFrom('studies')
    .where('workspace_id', '=', workspaceId)
    .where('study_id', '=', studyId)
    .select(['study_id', 'status', 'study_type'])
    .forNoKeyUpdate()
    .executeTakeFirst();
}

/**
 * What the rules of a participant change need to know about the study. The row is share-locked:
 * its status cannot change (a study closed or paused under a running invitation) until the
 * transaction ends, while changes to other participants of the study go on side by side.
 */
export async function findStudyFacts(db: Executor, workspaceId: string, studyId: string, options: { lock: boolean }) {
  return db
    .selectFrom('studies as s')
    .where('s.workspace_id', '=', workspaceId)
    .where('s.study_id', '=', studyId)
    .select((eb) => [
      's.status',
      's.study_type',
      sql<string | null>`s.plan->>'consentFormId'`.as('consent_form_id'),
      eb
        .exists(eb.selectFrom('screeners as sc').whereRef('sc.workspace_id', '=', 's.workspace_id').whereRef('sc.study_id', '=', 's.study_id').select(sql`1`.as('one')))
        .$castTo<boolean>()
        .as('has_screener'),
    ])
    .$if(options.lock, (query) => query.forShare())
    .executeTakeFirst();
}

/** Kept here for the search modules that import it from this family; it lives in the studies family. */
export { studyExists } from '../studies/queries.js';

/**
 * The people named for an addition, live or deleted. They are not locked: a person deleted or
 * opted out while the addition commits becomes a participant nobody sees (deleted) or nobody can
 * contact (each contact checks the flag under a lock), and locking up to 1000 people rows would
 * risk deadlocks with bulk writers of people (imports) that lock them in another order.
 */
export async function findPeopleForAdding(db: Executor, workspaceId: string, personIds: readonly string[]) {
  if (personIds.length === 0) return [];
  return db.selectFrom('people').where('workspace_id', '=', workspaceId).where('person_id', 'in', personIds).select(['person_id', 'is_opted_out', 'deleted_at']).execute();
}

/** Which of these people already take part in the study. */
export async function findParticipatingPersonIds(db: Executor, workspaceId: string, studyId: string, personIds: readonly string[]): Promise<Set<string>> {
  if (personIds.length === 0) return new Set();
  const rows = await db
    .selectFrom('participants')
    .where('workspace_id', '=', workspaceId)
    .where('study_id', '=', studyId)
    .where('person_id', 'in', personIds)
    .select('person_id')
    .execute();
  return new Set(rows.map((row) => row.person_id));
}

/**
 * Inserts participants in one statement. A row whose person already takes part (a race the
 * study lock should make impossible) is skipped by the unique index participants_once_per_study
 * instead of failing the whole request: the rows returned are those inserted.
 */
export async function insertParticipants(db: Executor, rows: readonly Insertable<ParticipantsTable>[]): Promise<ParticipantRow[]> {
  if (rows.length === 0) return [];
  return db
    .insertInto('participants')
    .values([...rows])
    .onConflict((conflict) => conflict.columns(['workspace_id', 'study_id', 'person_id']).doNothing())
    .returningAll()
    .execute();
}

/** One participant of the study whose person is live, or undefined. */
export async function findParticipant(db: Executor, workspaceId: string, studyId: string, participantId: string): Promise<ParticipantRow | undefined> {
  return liveParticipants(db, workspaceId).where('p.study_id', '=', studyId).where('p.participant_id', '=', participantId).selectAll('p').executeTakeFirst();
}

/**
 * The participant locked for a change, with the person's opted-out flag. The person row is
 * locked too, so an invitation never races past an opt-out, and the person's last contact can be
 * updated after. Both take FOR NO KEY UPDATE, not FOR UPDATE: no key of either ever changes, and
 * the weaker lock lets the foreign-key checks of rows that reference them (an incentive sent to
 * the participant meanwhile, a participant added for the person) pass instead of waiting, while
 * other changes of the same rows (a second PATCH, an opt-out) still wait their turn.
 */
export async function lockParticipant(db: Executor, workspaceId: string, studyId: string, participantId: string) {
  return liveParticipants(db, workspaceId)
    .where('p.study_id', '=', studyId)
    .where('p.participant_id', '=', participantId)
    .selectAll('p')
    .select('pe.is_opted_out')
    .forNoKeyUpdate(['p', 'pe'])
    .executeTakeFirst();
}

export async function updateParticipant(db: Executor, workspaceId: string, participantId: string, changes: Updateable<ParticipantsTable>): Promise<ParticipantRow> {
  return db
    .updateTable('participants')
    .set(changes)
    .where('workspace_id', '=', workspaceId)
    .where('participant_id', '=', participantId)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Inserts status events; one with a user_id is the user's (actor_kind USER) unless the caller names its actor. */
export async function insertStatusEvents(db: Executor, events: readonly Insertable<ParticipantStatusEventsTable>[]) {
  if (events.length === 0) return;
  await db
    .insertInto('participant_status_events')
    .values(events.map((event) => ({ ...event, actor_kind: event.actor_kind ?? (event.user_id ? 'USER' : null) })))
    .execute();
}

/** Moves the person's last contact to `at` unless a later contact is already recorded. */
export async function recordContact(db: Executor, workspaceId: string, personId: string, at: string) {
  await db
    .updateTable('people')
    .set({ last_contact_at: sql<string>`greatest(last_contact_at, ${at}::timestamptz)` })
    .where('workspace_id', '=', workspaceId)
    .where('person_id', '=', personId)
    .execute();
}

/**
 * Marks the person's participant of the study as having submitted its consent form, at the
 * earliest consent recorded (a consent given earlier on paper and recorded later moves it back).
 * Answers the participant's id, or undefined when the person takes no part in the study.
 */
export async function markConsentSubmitted(db: Executor, workspaceId: string, studyId: string, personId: string, submittedAt: string, at: string): Promise<string | undefined> {
  const row = await db
    .updateTable('participants')
    .set({
      consent_submitted_at: sql<string>`least(coalesce(consent_submitted_at, ${submittedAt}::timestamptz), ${submittedAt}::timestamptz)`,
      updated_at: at,
    })
    .where('workspace_id', '=', workspaceId)
    .where('study_id', '=', studyId)
    .where('person_id', '=', personId)
    .returning('participant_id')
    .executeTakeFirst();
  return row?.participant_id;
}

export interface PersonContact {
  person_id: string;
  email: string | null;
  phone: string | null;
  additional_emails: string[];
  additional_phones: string[];
}

/** The contact details of many people in one query, by person id. */
export async function findContacts(db: Executor, workspaceId: string, personIds: readonly string[]): Promise<Map<string, PersonContact>> {
  if (personIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('people')
    .where('workspace_id', '=', workspaceId)
    .where('person_id', 'in', [...new Set(personIds)])
    .select(['person_id', 'email', 'phone', 'additional_emails', 'additional_phones'])
    .execute();
  return new Map(rows.map((row) => [row.person_id, row]));
}

/** The participant's live booking's id (the scheduling family's bookings), if any. */
export async function findLiveBookingId(db: Executor, workspaceId: string, participantId: string): Promise<string | undefined> {
  const row = await db.selectFrom('bookings').select('booking_id').where('workspace_id', '=', workspaceId).where('participant_id', '=', participantId).where('status', '=', 'BOOKED').executeTakeFirst();
  return row?.booking_id;
}

/** Every participation of the person, with its study's public name, newest first: the person's own page. */
export async function findParticipationsOfPerson(db: Executor, workspaceId: string, personId: string) {
  return db
    .selectFrom('participants as p')
    .innerJoin('studies as s', (join) => join.onRef('s.workspace_id', '=', 'p.workspace_id').onRef('s.study_id', '=', 'p.study_id'))
    .where('p.workspace_id', '=', workspaceId)
    .where('p.person_id', '=', personId)
    .select([
      'p.participant_id',
      'p.study_id',
      'p.status',
      'p.screener_state',
      'p.invited_at',
      'p.screener_submitted_at',
      'p.interview_start_time',
      'p.completed_at',
      'p.consent_submitted_at',
      'p.messages_stopped_at',
      'p.added_at',
      's.status as study_status',
      sql<string | null>`coalesce(s.plan->>'externalName', s.plan->>'name', '')`.as('study_name'),
    ])
    .orderBy('p.participant_id', 'desc')
    .execute();
}

/** The participant status events of the person's participations (the person's data download). */
export async function findStatusEventsOfPerson(db: Executor, workspaceId: string, personId: string) {
  return db
    .selectFrom('participant_status_events')
    .where('workspace_id', '=', workspaceId)
    .where('person_id', '=', personId)
    .select(['study_id', 'participant_id', 'field', 'from_value', 'to_value', 'occurred_at'])
    .orderBy('event_id')
    .execute();
}

/** Stops the participant's messages, when it is the person's and not stopped yet; answers the participant's study when it changed. */
export async function stopMessages(db: Executor, workspaceId: string, personId: string, participantId: string, at: string) {
  return db
    .updateTable('participants')
    .set({ messages_stopped_at: at, updated_at: at })
    .where('workspace_id', '=', workspaceId)
    .where('person_id', '=', personId)
    .where('participant_id', '=', participantId)
    .where('messages_stopped_at', 'is', null)
    .returning(['study_id'])
    .executeTakeFirst();
}
