import type { Static } from '@sinclair/typebox';
import type { Insertable, Kysely, Updateable } from 'kysely';
import type { CallContext as SharedCallContext } from '../../context.js';
import type {
  DB,
  ParticipantRow,
  ParticipantStatusEventsTable,
  ParticipantsTable,
} from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { badRequest, conflict, type ErrorItem, notFound } from '../../http/errors.js';
import { maskEmail, maskText } from '../../http/masking.js';
import { idPrefixes, newId } from '../../ids.js';
import { studyExists } from '../studies/queries.js';
import * as queries from './queries.js';
import type { UpdateParticipantBody } from './requests.js';
import type { Participant as ParticipantSchema } from './schemas.js';
import { type ParticipantFacts, type RefusedMove, refusedMove, type StudyFacts, statusMoves, studyKindOf } from './states.js';
import { checkMoveTemplate, type MoveMessage, queueMoveMessage } from '../messages/sending.js';
import type { OutboxEvent } from '../webhooks/events.js';
import { recordEvents } from '../webhooks/outbox.js';
import { recordConsent } from '../consent/writer.js';

/** The webhook event of each participant field's change. */
const webhookEventOfField = {
  status: 'participant.status_changed',
  approvalStatus: 'participant.approval_changed',
  screenerState: 'participant.screener_changed',
} as const;

export type CallContext = Pick<SharedCallContext, 'db' | 'clock' | 'workspaceId' | 'userId' | 'role' | 'rights' | 'canReadPersonalData' | 'smtpConfigured'>;

/** The Participant response, as its schema describes it. */
export type Participant = Static<typeof ParticipantSchema>;

/** The participant columns a Participant is presented from: select these (or all) for presentParticipants. */
export const presentedColumns = [
  'participant_id',
  'person_id',
  'study_id',
  'status',
  'status_before_hidden',
  'invited_at',
  'approved_at',
  'screener_sent_at',
  'test_completed_at',
  'interview_start_time',
  'screener_submitted_at',
  'added_at',
  'approval_status',
  'screener_state',
  'note',
  'note_created_by_user_id',
  'rating',
  'quota_group',
  'consent_submitted_at',
] as const satisfies readonly (keyof ParticipantRow)[];

export type PresentableParticipant = Pick<ParticipantRow, (typeof presentedColumns)[number]>;

/**
 * Participants rows as Participant responses, in the order given: the contact details of all
 * their people in one query, masked for a token without the personal-data right. A person whose
 * data was erased has null email and phone.
 */
export async function presentParticipants(
  db: Kysely<DB>,
  workspaceId: string,
  rows: readonly PresentableParticipant[],
  canReadPersonalData: boolean,
): Promise<Participant[]> {
  if (rows.length === 0) return [];
  const contacts = await queries.findContacts(
    db,
    workspaceId,
    rows.map((row) => row.person_id),
  );
  return rows.map((row) => presentParticipant(row, contacts.get(row.person_id), canReadPersonalData));
}

/** One participant row with its person's contact details (read with it, or looked up). */
export function presentParticipant(row: PresentableParticipant, contact: queries.PersonContact | undefined, canReadPersonalData: boolean): Participant {
  return {
    participantId: row.participant_id,
    personId: row.person_id,
    studyId: row.study_id,
    email: maskEmail(contact?.email ?? null, canReadPersonalData),
    phone: maskText(contact?.phone ?? null, canReadPersonalData),
    additionalEmails: (contact?.additional_emails ?? []).map((email) => maskEmail(email, canReadPersonalData)),
    additionalPhones: (contact?.additional_phones ?? []).map((phone) => maskText(phone, canReadPersonalData)),
    status: row.status,
    statusBeforeHidden: row.status_before_hidden,
    invitedToStudyAt: row.invited_at,
    approvedAt: row.approved_at,
    screenerSentAt: row.screener_sent_at,
    testCompletedAt: row.test_completed_at,
    interviewStartTime: row.interview_start_time,
    screenerResponseDate: row.screener_submitted_at,
    addedToStudyAt: row.added_at,
    approvalStatus: row.approval_status,
    screenerState: row.screener_state,
    note: row.note === null ? null : { note: row.note, createdByUserId: row.note_created_by_user_id },
    rating: row.rating,
    quotaGroup: row.quota_group,
    consentFormSubmittedAt: row.consent_submitted_at,
  };
}

/** Why a person cannot be added (checked in this order), or undefined when they can. */
function refusedAddition(
  personId: string,
  listedEarlierAt: number | undefined,
  person: { is_opted_out: boolean; deleted_at: string | null } | undefined,
  participating: ReadonlySet<string>,
): string | undefined {
  if (listedEarlierAt !== undefined) return `The person is already listed at personIds/${listedEarlierAt}`;
  if (!person || person.deleted_at !== null) return 'Person not found';
  if (person.is_opted_out) return 'The person has opted out and cannot be added to a study';
  if (participating.has(personId)) return 'The person already takes part in this study';
  return undefined;
}

const presentOne = async (context: CallContext, db: Kysely<DB>, row: PresentableParticipant) =>
  (await presentParticipants(db, context.workspaceId, [row], context.canReadPersonalData))[0]!;

const now = (context: CallContext) => context.clock.now().toISOString();

/**
 * POST /studies/{studyId}/participants: each person not already taking part joins the study as
 * NOT_STARTED, PENDING_REVIEW, NOT_SENT. An unknown, deleted or opted-out person, one already
 * taking part, or one listed twice (the later listing) is an error item naming its index.
 */
export async function addParticipants(context: CallContext, studyId: string, personIds: readonly string[]): Promise<{ results: Participant[]; errors: ErrorItem[] }> {
  const { workspaceId } = context;
  return inTransaction(context.db, async (db) => {
    const study = await queries.lockStudyForAdding(db, workspaceId, studyId);
    if (!study) throw notFound('Study', ['studyId']);
    if (study.status === 'CLOSED') throw conflict('A CLOSED study takes no new participants', ['studyId']);

    const distinct = [...new Set(personIds)];
    const people = new Map((await queries.findPeopleForAdding(db, workspaceId, distinct)).map((person) => [person.person_id, person]));
    const participating = await queries.findParticipatingPersonIds(db, workspaceId, studyId, distinct);

    const errors: { index: number; message: string }[] = [];
    const firstIndex = new Map<string, number>();
    const toAdd: string[] = [];
    for (const [index, personId] of personIds.entries()) {
      const listedEarlierAt = firstIndex.get(personId);
      if (listedEarlierAt === undefined) firstIndex.set(personId, index);
      const refusal = refusedAddition(personId, listedEarlierAt, people.get(personId), participating);
      if (refusal) errors.push({ index, message: refusal });
      else toAdd.push(personId);
    }

    const at = now(context);
    const studyKind = studyKindOf(study.study_type);
    const inserted = await queries.insertParticipants(
      db,
      toAdd.map((personId) => ({
        workspace_id: workspaceId,
        participant_id: newId(idPrefixes.participant),
        study_id: studyId,
        person_id: personId,
        study_kind: studyKind,
        status: 'NOT_STARTED',
        approval_status: 'PENDING_REVIEW',
        screener_state: 'NOT_SENT',
        added_by_user_id: context.userId,
        added_at: at,
        updated_at: at,
      })),
    );
    // The unique index is the last wall: a row it skipped is an error item like any other.
    const insertedPeople = new Set(inserted.map((row) => row.person_id));
    for (const personId of toAdd) {
      if (!insertedPeople.has(personId)) errors.push({ index: firstIndex.get(personId)!, message: 'The person already takes part in this study' });
    }
    const byPerson = new Map(inserted.map((row) => [row.person_id, row]));
    const rows = toAdd.flatMap((personId) => byPerson.get(personId) ?? []);
    return {
      results: await presentParticipants(db, workspaceId, rows, context.canReadPersonalData),
      errors: errors.sort((a, b) => a.index - b.index).map(({ index, message }) => ({ message, path: ['personIds', String(index)] })),
    };
  });
}

export async function getParticipant(context: CallContext, studyId: string, participantId: string): Promise<Participant> {
  const row = await queries.findParticipant(context.db, context.workspaceId, studyId, participantId);
  if (!row) {
    if (!(await studyExists(context.db, context.workspaceId, studyId))) throw notFound('Study', ['studyId']);
    throw notFound('Participant', ['participantId']);
  }
  return presentOne(context, context.db, row);
}

/** Two date-times name the same instant (the stored text and a client's may differ in form). */
const sameInstant = (a: string | null, b: string | null) => (a === null || b === null ? a === b : Date.parse(a) === Date.parse(b));

type EventDraft = Pick<Insertable<ParticipantStatusEventsTable>, 'field' | 'from_value' | 'to_value' | 'is_contact'>;

/**
 * PATCH /studies/{studyId}/participants/{participantId}: only the fields given change. Moves of
 * status, approvalStatus and screenerState follow the tables of states.ts (a refused one is a
 * 409 naming the field); each real change of one of them appends a status event, and a contact
 * (an invitation, a screener sent) moves the person's last contact, all in one transaction.
 */
export async function updateParticipant(context: CallContext, studyId: string, participantId: string, body: UpdateParticipantBody): Promise<Participant & { message?: MoveMessage }> {
  const { workspaceId } = context;
  if (body.sendMessage !== undefined && body.status !== 'INVITED' && body.screenerState !== 'SCREENER_SENT') {
    throw badRequest('sendMessage goes with a move that reaches out: status INVITED or screenerState SCREENER_SENT', ['sendMessage']);
  }
  const template = body.sendMessage === undefined ? undefined : await checkMoveTemplate(context, body.sendMessage.templateId, studyId);
  return inTransaction(context.db, async (db) => {
    const study = await queries.findStudyFacts(db, workspaceId, studyId, { lock: true });
    if (!study) throw notFound('Study', ['studyId']);
    const participant = await queries.lockParticipant(db, workspaceId, studyId, participantId);
    if (!participant) throw notFound('Participant', ['participantId']);

    const refusal = refusedMove(
      { studyType: study.study_type, studyStatus: study.status, hasScreener: study.has_screener },
      {
        status: participant.status,
        statusBeforeHidden: participant.status_before_hidden,
        approvalStatus: participant.approval_status,
        screenerState: participant.screener_state,
        interviewStartTime: participant.interview_start_time,
        isOptedOut: participant.is_opted_out,
      },
      body,
    );
    if (refusal) throw conflict(refusal.message, refusal.path);
    // A booked session's time and cancellation go through its booking, which holds the place and sends the invitations.
    const touchesSession =
      (body.interviewStartTime !== undefined && !sameInstant(body.interviewStartTime, participant.interview_start_time)) || (body.status === 'CANCELED' && participant.status === 'SCHEDULED');
    const bookingId = touchesSession ? await queries.findLiveBookingId(db, workspaceId, participantId) : undefined;
    if (bookingId !== undefined) {
      const field = body.status === 'CANCELED' && participant.status === 'SCHEDULED' ? 'status' : 'interviewStartTime';
      const way = field === 'status' ? 'cancel it with POST /studies/{studyId}/bookings/{bookingId}/cancel' : 'move it with POST /studies/{studyId}/bookings/{bookingId}/move';
      throw conflict(`The participant holds booking ${bookingId}: ${way}`, [field]);
    }

    const at = now(context);
    const changes: Updateable<ParticipantsTable> = {};
    const events: EventDraft[] = [];

    if (body.approvalStatus !== undefined && body.approvalStatus !== participant.approval_status) {
      changes.approval_status = body.approvalStatus;
      if (body.approvalStatus === 'APPROVED') changes.approved_at = at;
      events.push({ field: 'approvalStatus', from_value: participant.approval_status, to_value: body.approvalStatus, is_contact: false });
    }

    if (body.screenerState !== undefined && body.screenerState !== participant.screener_state) {
      changes.screener_state = body.screenerState;
      if (body.screenerState === 'SCREENER_SENT') changes.screener_sent_at = at;
      if (body.screenerState === 'SUBMITTED') changes.screener_submitted_at = at;
      events.push({ field: 'screenerState', from_value: participant.screener_state, to_value: body.screenerState, is_contact: body.screenerState === 'SCREENER_SENT' });
    }

    if (body.interviewStartTime !== undefined && !sameInstant(body.interviewStartTime, participant.interview_start_time)) {
      changes.interview_start_time = body.interviewStartTime;
    }
    if (body.testCompletedAt !== undefined && !sameInstant(body.testCompletedAt, participant.test_completed_at)) {
      changes.test_completed_at = body.testCompletedAt;
    }

    if (body.status !== undefined && body.status !== participant.status) {
      const from = participant.status;
      const to = body.status;
      changes.status = to;
      // Unhiding returns to a status already held: its side effects (an invitation time, a
      // contact, a no-show, a completion) happened when the participant first reached it.
      const unhiding = from === 'HIDDEN';
      if (unhiding) changes.status_before_hidden = null;
      else {
        if (to === 'HIDDEN') changes.status_before_hidden = from;
        if (to === 'INVITED' && participant.invited_at === null) changes.invited_at = at;
        if (to === 'NO_SHOW') changes.no_show_count = participant.no_show_count + 1;
        if (to === 'COMPLETED') Object.assign(changes, completionOf(participant, body, at));
      }
      events.push({ field: 'status', from_value: from, to_value: to, is_contact: to === 'INVITED' && !unhiding });
    }

    if (body.note !== undefined && body.note !== participant.note) {
      changes.note = body.note;
      changes.note_created_by_user_id = body.note === null ? null : context.userId;
    }
    if (body.rating !== undefined && body.rating !== participant.rating) changes.rating = body.rating;
    if (body.quotaGroup !== undefined && body.quotaGroup !== participant.quota_group) changes.quota_group = body.quotaGroup;

    if (body.consentFormSubmitted === true && participant.consent_submitted_at === null) {
      changes.consent_submitted_at = at;
      // The consent family records the consent (and its event), as POST /consent-submissions does.
      await recordConsent(
        db,
        workspaceId,
        {
          personId: participant.person_id,
          studyId,
          signupFormId: null,
          consentFormId: study.consent_form_id,
          formVersion: null,
          textSha256: null,
          source: 'API',
          // The same rule as POST /consent-submissions: consent:write (403 otherwise), and a study with a consent form (400).
          recordedBy: { userId: context.userId, rights: context.rights },
          formPath: ['consentFormSubmitted'],
          submittedAt: at,
        },
        at,
      );
    }

    const noMove: MoveMessage = { messageId: null, status: 'SKIPPED', reason: 'NO_MOVE' };
    if (Object.keys(changes).length === 0) return { ...(await presentOne(context, db, participant)), ...(template ? { message: noMove } : {}) };
    changes.updated_at = at;
    const updated = await queries.updateParticipant(db, workspaceId, participantId, changes);
    await queries.insertStatusEvents(
      db,
      events.map((event) => ({
        ...event,
        workspace_id: workspaceId,
        study_id: studyId,
        participant_id: participantId,
        person_id: participant.person_id,
        user_id: context.userId,
        occurred_at: at,
      })),
    );
    const contact = events.find((event) => event.is_contact);
    if (contact) await queries.recordContact(db, workspaceId, participant.person_id, at);
    let message: MoveMessage | undefined;
    if (template) {
      message = contact
        ? await queueMoveMessage(context, db, { studyId, participantId, personId: participant.person_id, origin: contact.field === 'status' ? 'INVITED' : 'SCREENER_SENT', template })
        : noMove;
    }
    await recordEvents(
      db,
      workspaceId,
      events.map(
        (event): OutboxEvent =>
          // The three participant events share one data shape; TypeScript cannot pair a union of types with it.
          ({ type: webhookEventOfField[event.field], data: { studyId, participantId, personId: participant.person_id, from: event.from_value ?? null, to: event.to_value } }) as OutboxEvent,
      ),
      at,
    );
    return { ...(await presentOne(context, db, updated)), ...(message ? { message } : {}) };
  });
}

/**
 * For the consent family: a consent recorded for a study marks the person's participant of it
 * (PARTICIPANT.CONSENT_FORM_SUBMITTED, the Participant's consentFormSubmittedAt), in the caller's
 * transaction. Answers the participant's id, or undefined when the person takes no part in it.
 */
export async function markConsentSubmitted(transaction: Kysely<DB>, workspaceId: string, studyId: string, personId: string, submittedAt: string, at: string): Promise<string | undefined> {
  if (!transaction.isTransaction) throw new Error('A participant is marked in the transaction of the consent: pass a transaction');
  return queries.markConsentSubmitted(transaction, workspaceId, studyId, personId, submittedAt, at);
}

/**
 * A first completion's times: completed_at is the test completion time (given now or stored),
 * else the session's start in an interview study, else now; an unmoderated test or survey
 * without a stored or given test completion time gets now as that time too.
 */
function completionOf(participant: ParticipantRow, body: UpdateParticipantBody, at: string): Updateable<ParticipantsTable> {
  if (participant.completed_at !== null) return {};
  const testCompletedAt = body.testCompletedAt !== undefined ? body.testCompletedAt : participant.test_completed_at;
  const interviewStartTime = body.interviewStartTime !== undefined ? body.interviewStartTime : participant.interview_start_time;
  const isInterview = participant.study_kind === 'INTERVIEW';
  const completedAt = testCompletedAt ?? (isInterview ? interviewStartTime : null) ?? at;
  return isInterview || testCompletedAt !== null ? { completed_at: completedAt } : { completed_at: completedAt, test_completed_at: at };
}

/**
 * For the screener's submission (the participant's own page): the participant, locked, moves
 * screenerState to SUBMITTED, then to QUALIFIED or DISQUALIFIED when the answers decided it (a
 * screener left for review stays SUBMITTED), with screenerSubmittedAt, a status event per move
 * (no user: the person did it) and their webhook events, in the caller's transaction. Answers
 * `undefined`, changing nothing, when the participant is gone or has already submitted: one
 * submission per participant.
 */
/**
 * Locks a participant who may still submit their screener (the lock recordScreenerSubmission
 * takes, taken first so that what the submission does next, a quota place, waits behind it):
 * their person's id, or undefined when they already submitted or are gone.
 */
export async function lockParticipantToSubmit(transaction: Kysely<DB>, workspaceId: string, studyId: string, participantId: string): Promise<{ personId: string } | undefined> {
  if (!transaction.isTransaction) throw new Error('A screener submission is recorded in one transaction: pass a transaction');
  const participant = await queries.lockParticipant(transaction, workspaceId, studyId, participantId);
  if (!participant || participant.screener_submitted_at !== null || ['SUBMITTED', 'QUALIFIED', 'DISQUALIFIED'].includes(participant.screener_state)) return undefined;
  return { personId: participant.person_id };
}

export async function recordScreenerSubmission(
  transaction: Kysely<DB>,
  workspaceId: string,
  studyId: string,
  participantId: string,
  outcome: 'QUALIFIED' | 'DISQUALIFIED' | 'NEEDS_REVIEW',
  at: string,
  /** The quota group the submission took a place in: the participant's quotaGroup becomes its name. */
  quotaGroup?: string,
): Promise<{ personId: string; screenerState: string } | undefined> {
  if (!transaction.isTransaction) throw new Error('A screener submission is recorded in the transaction of its answers: pass a transaction');
  const participant = await queries.lockParticipant(transaction, workspaceId, studyId, participantId);
  if (!participant || participant.screener_submitted_at !== null || ['SUBMITTED', 'QUALIFIED', 'DISQUALIFIED'].includes(participant.screener_state)) return undefined;
  const moves: { from: string; to: 'SUBMITTED' | 'QUALIFIED' | 'DISQUALIFIED' }[] = [{ from: participant.screener_state, to: 'SUBMITTED' }];
  if (outcome !== 'NEEDS_REVIEW') moves.push({ from: 'SUBMITTED', to: outcome });
  const final = moves[moves.length - 1]!.to;
  await queries.updateParticipant(transaction, workspaceId, participantId, {
    screener_state: final,
    screener_submitted_at: at,
    updated_at: at,
    ...(quotaGroup !== undefined ? { quota_group: quotaGroup } : {}),
  });
  await queries.insertStatusEvents(
    transaction,
    moves.map((move) => ({
      field: 'screenerState' as const,
      from_value: move.from,
      to_value: move.to,
      is_contact: false,
      workspace_id: workspaceId,
      study_id: studyId,
      participant_id: participantId,
      person_id: participant.person_id,
      user_id: null,
      // Submitted on the participant's page.
      actor_kind: 'PARTICIPANT' as const,
      occurred_at: at,
    })),
  );
  await recordEvents(
    transaction,
    workspaceId,
    moves.map((move): OutboxEvent => ({ type: webhookEventOfField.screenerState, data: { studyId, participantId, personId: participant.person_id, from: move.from, to: move.to } }) as OutboxEvent),
    at,
  );
  return { personId: participant.person_id, screenerState: final };
}

/**
 * For the consent family: the person withdrew their consent to the study (the withdrawal link of
 * the participant's page). The participant moves to CANCELED where the state table allows it
 * (from NOT_STARTED, INVITED, SCHEDULED and NO_SHOW), with a status event (no user: the person did
 * it) and its webhook, in the caller's transaction. A COMPLETED participant took part already and
 * stays COMPLETED (the table allows no move from it but hiding; the consent's withdrawal and its
 * `consent.withdrawn` event tell the team), a CANCELED one is there already, and a HIDDEN one
 * stays hidden. Answers the move made, if any.
 */
export async function recordWithdrawal(transaction: Kysely<DB>, workspaceId: string, studyId: string, participantId: string, at: string): Promise<{ from: string; to: 'CANCELED' } | undefined> {
  if (!transaction.isTransaction) throw new Error('A withdrawal is recorded in the transaction of the consent: pass a transaction');
  const participant = await queries.lockParticipant(transaction, workspaceId, studyId, participantId);
  if (!participant || participant.status === 'HIDDEN' || !statusMoves[participant.status].includes('CANCELED')) return undefined;
  const from = participant.status;
  await queries.updateParticipant(transaction, workspaceId, participantId, { status: 'CANCELED', updated_at: at });
  await queries.insertStatusEvents(transaction, [
    { field: 'status', from_value: from, to_value: 'CANCELED', is_contact: false, workspace_id: workspaceId, study_id: studyId, participant_id: participantId, person_id: participant.person_id, user_id: null, actor_kind: 'PARTICIPANT', occurred_at: at },
  ]);
  await recordEvents(transaction, workspaceId, [{ type: 'participant.status_changed', data: { studyId, participantId, personId: participant.person_id, from, to: 'CANCELED' } }], at);
  return { from, to: 'CANCELED' };
}

/** A participant locked for the scheduling family, with their person's opt-out. */
export type LockedParticipant = NonNullable<Awaited<ReturnType<typeof queries.lockParticipant>>>;

/** For the scheduling family: the participant, locked in the caller's transaction, or undefined. */
export async function lockParticipantForSession(transaction: Kysely<DB>, workspaceId: string, studyId: string, participantId: string): Promise<LockedParticipant | undefined> {
  if (!transaction.isTransaction) throw new Error('A session is booked in one transaction: pass a transaction');
  return queries.lockParticipant(transaction, workspaceId, studyId, participantId);
}

/**
 * For the scheduling family: why the participant cannot be SCHEDULED at `startTime` by the state
 * table (a study not ACTIVE, an opted-out person, a REJECTED or COMPLETED participant…), or
 * undefined. A participant SCHEDULED already (a time set by PATCH, or a booking being moved) may.
 */
export function refusedSession(study: StudyFacts, participant: LockedParticipant, startTime: string): RefusedMove | undefined {
  const facts: ParticipantFacts = {
    status: participant.status,
    statusBeforeHidden: participant.status_before_hidden,
    approvalStatus: participant.approval_status,
    screenerState: participant.screener_state,
    interviewStartTime: participant.interview_start_time,
    isOptedOut: participant.is_opted_out,
  };
  if (participant.status === 'SCHEDULED') {
    if (participant.is_opted_out) return { message: 'The person has opted out and cannot be contacted', path: ['participantId'] };
    if (study.studyStatus !== 'ACTIVE') return { message: `Sessions can be booked only while the study is ACTIVE; it is ${study.studyStatus}`, path: ['studyId'] };
    return undefined;
  }
  const refusal = refusedMove(study, facts, { status: 'SCHEDULED', interviewStartTime: startTime });
  return refusal ? { message: refusal.message, path: refusal.path[0] === 'status' ? ['participantId'] : refusal.path } : undefined;
}

/**
 * For the scheduling family, in the booking's transaction: the participant's session moved to
 * `change` (a booking: SCHEDULED at its start; a move: the new start; a cancellation: CANCELED),
 * with a status event and its webhook when the status moves, as a PATCH would record them.
 * `userId` null: the person did it on their page.
 */
export async function recordSessionChange(
  transaction: Kysely<DB>,
  workspaceId: string,
  studyId: string,
  participant: LockedParticipant,
  change: { status?: 'SCHEDULED' | 'CANCELED'; interviewStartTime?: string },
  userId: string | null,
  at: string,
): Promise<void> {
  const changes: Updateable<ParticipantsTable> = { updated_at: at };
  if (change.interviewStartTime !== undefined) changes.interview_start_time = change.interviewStartTime;
  const from = participant.status;
  const moves = change.status !== undefined && change.status !== from && (change.status === 'SCHEDULED' || statusMoves[from === 'HIDDEN' ? 'CANCELED' : from].includes('CANCELED'));
  if (moves) changes.status = change.status;
  await queries.updateParticipant(transaction, workspaceId, participant.participant_id, changes);
  if (!moves) return;
  await queries.insertStatusEvents(transaction, [
    { field: 'status', from_value: from, to_value: change.status!, is_contact: false, workspace_id: workspaceId, study_id: studyId, participant_id: participant.participant_id, person_id: participant.person_id, user_id: userId, actor_kind: userId === null ? 'PARTICIPANT' : 'USER', occurred_at: at },
  ]);
  await recordEvents(transaction, workspaceId, [{ type: 'participant.status_changed', data: { studyId, participantId: participant.participant_id, personId: participant.person_id, from, to: change.status! } }], at);
}

/** The person's participations as their own page shows them (their study's public name, never its internal one when it has an external). */
export const participationsOfPerson = (db: Kysely<DB>, workspaceId: string, personId: string) => queries.findParticipationsOfPerson(db, workspaceId, personId);
export const statusEventsOfPerson = (db: Kysely<DB>, workspaceId: string, personId: string) => queries.findStatusEventsOfPerson(db, workspaceId, personId);

export type StopMessagesOutcome = 'STOPPED' | 'ALREADY_STOPPED' | 'NOT_FOUND';

/**
 * The person asks for no more messages about one study (their own page): the participant's
 * messages_stopped_at, which the messages family reads as it reads an opt-out (skipped, and not
 * sent when already queued), with a `participant.messages_stopped` event. Only the person's own
 * participant of the workspace: any other id is NOT_FOUND.
 */
export async function stopStudyMessages(db: Kysely<DB>, workspaceId: string, personId: string, participantId: string, at: string): Promise<StopMessagesOutcome> {
  return inTransaction(db, async (transaction) => {
    const stopped = await queries.stopMessages(transaction, workspaceId, personId, participantId, at);
    if (stopped) {
      await recordEvents(transaction, workspaceId, [{ type: 'participant.messages_stopped', data: { studyId: stopped.study_id, participantId, personId, actor: 'PERSON' } }], at);
      return 'STOPPED';
    }
    const mine = (await queries.findParticipationsOfPerson(transaction, workspaceId, personId)).some((row) => row.participant_id === participantId);
    return mine ? 'ALREADY_STOPPED' : 'NOT_FOUND';
  });
}
