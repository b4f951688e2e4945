import type { ParticipantApprovalStatus, ParticipantScreenerState, ParticipantStatus, StudyKind, StudyStatus, StudyType } from '../../db/schema.js';

/**
 * The participant's three state fields, their full value sets and the moves between them: the
 * service's own definition (the reference shows only some values). One table per field, each
 * value with the sentence the OpenAPI description shows, so the document cannot drift from what
 * is enforced.
 */

export const participantStatuses = ['NOT_STARTED', 'INVITED', 'SCHEDULED', 'COMPLETED', 'NO_SHOW', 'CANCELED', 'HIDDEN'] as const satisfies readonly ParticipantStatus[];
export const approvalStatuses = ['PENDING_REVIEW', 'APPROVED', 'REJECTED'] as const satisfies readonly ParticipantApprovalStatus[];
export const screenerStates = ['NOT_SENT', 'SCREENER_SENT', 'SUBMITTED', 'QUALIFIED', 'DISQUALIFIED'] as const satisfies readonly ParticipantScreenerState[];

export const statusMeaning: Record<ParticipantStatus, string> = {
  NOT_STARTED: 'added to the study; not contacted yet (the status of a new participant)',
  INVITED: 'invited to take part (sets invitedToStudyAt the first time; counts as a contact)',
  SCHEDULED: 'a session is booked at interviewStartTime (interview studies only)',
  COMPLETED: 'took part (sets the completion time once: testCompletedAt, else interviewStartTime for interviews, else now)',
  NO_SHOW: 'missed the booked session (interview studies only; counted by TOTAL_NUMBER_OF_NO_SHOW_INTERVIEWS and SHOW_RATE)',
  CANCELED: 'will not take part, as things stand (either side canceled)',
  HIDDEN: "removed from the study's working view; unhiding returns the participant to the status they had",
};

export const approvalMeaning: Record<ParticipantApprovalStatus, string> = {
  PENDING_REVIEW: 'not reviewed yet (the approval status of a new participant)',
  APPROVED: 'approved to take part (sets approvedAt)',
  REJECTED: 'not to take part: a rejected participant cannot be invited or scheduled',
};

export const screenerMeaning: Record<ParticipantScreenerState, string> = {
  NOT_SENT: 'no screener sent yet (the screener state of a new participant)',
  SCREENER_SENT: "the study's screener was sent (the study must have one; sets screenerSentAt; counts as a contact)",
  SUBMITTED: 'the participant answered the screener (sets screenerResponseDate)',
  QUALIFIED: 'the answers qualify the participant',
  DISQUALIFIED: 'the answers do not qualify the participant',
};

/** Status moves allowed from each status (HIDDEN returns only to the status it hid). */
export const statusMoves: Record<Exclude<ParticipantStatus, 'HIDDEN'>, readonly ParticipantStatus[]> = {
  NOT_STARTED: ['INVITED', 'SCHEDULED', 'CANCELED', 'HIDDEN'],
  INVITED: ['SCHEDULED', 'COMPLETED', 'CANCELED', 'HIDDEN'],
  SCHEDULED: ['COMPLETED', 'NO_SHOW', 'CANCELED', 'HIDDEN'],
  NO_SHOW: ['SCHEDULED', 'CANCELED', 'HIDDEN'],
  COMPLETED: ['HIDDEN'],
  CANCELED: ['INVITED', 'HIDDEN'],
};

export const screenerMoves: Record<ParticipantScreenerState, readonly ParticipantScreenerState[]> = {
  NOT_SENT: ['SCREENER_SENT'],
  SCREENER_SENT: ['SUBMITTED'],
  SUBMITTED: ['QUALIFIED', 'DISQUALIFIED'],
  QUALIFIED: ['DISQUALIFIED'],
  DISQUALIFIED: ['QUALIFIED'],
};

/** Any approval status may move to any other: a review can be changed. */
export const approvalMoves: Record<ParticipantApprovalStatus, readonly ParticipantApprovalStatus[]> = {
  PENDING_REVIEW: ['APPROVED', 'REJECTED'],
  APPROVED: ['PENDING_REVIEW', 'REJECTED'],
  REJECTED: ['PENDING_REVIEW', 'APPROVED'],
};

/** Statuses that book or hold a session: only interview studies have sessions. */
export const sessionStatuses: readonly ParticipantStatus[] = ['SCHEDULED', 'NO_SHOW'];
/** Moves that reach out to the person: refused for an opted-out person, a rejected participant, or a study that is not ACTIVE. */
export const outreachStatuses: readonly ParticipantStatus[] = ['INVITED', 'SCHEDULED'];

export function studyKindOf(studyType: StudyType): StudyKind {
  if (studyType === 'INTERVIEWS' || studyType === 'GROUP_INTERVIEW') return 'INTERVIEW';
  return studyType === 'UNMODERATED_TEST' ? 'UNMODERATED_TEST' : 'SURVEY';
}

/** Remarks on single status moves, shown beside the move in the OpenAPI description. */
const statusMoveNotes: Partial<Record<`${ParticipantStatus}→${ParticipantStatus}`, string>> = {
  'INVITED→COMPLETED': 'unmoderated tests and surveys only: an interview is completed from SCHEDULED',
};

/** Remarks on a status's moves as a whole. */
const statusFromNotes: Partial<Record<ParticipantStatus, string>> = {
  SCHEDULED: 'reschedule by changing interviewStartTime',
};

const movesLine = <T extends string>(from: T, moves: readonly T[], noteOf: (to: T) => string | undefined = () => undefined, fromNote?: string) =>
  `${from} → ${moves.map((to) => (noteOf(to) ? `${to} (${noteOf(to)})` : to)).join(', ')}${fromNote ? ` (${fromNote})` : ''}`;

/**
 * Plain-language rules of the status field, for the OpenAPI description: the moves are written
 * out from statusMoves itself (so a change of the table changes the document), then the rules
 * refusedMove enforces beyond the table.
 */
export const statusRules: readonly string[] = [
  ...(Object.keys(statusMoves) as (keyof typeof statusMoves)[]).map((from) =>
    movesLine<ParticipantStatus>(from, statusMoves[from], (to) => statusMoveNotes[`${from}→${to}`], statusFromNotes[from]),
  ),
  'HIDDEN → the status it had before hiding, only (unhiding repeats no side effect: no new invitation time, contact or no-show)',
  'SCHEDULED needs an interviewStartTime (given in the same request or already set), and a SCHEDULED participant keeps one: clearing it is refused; SCHEDULED and NO_SHOW exist in interview studies (INTERVIEWS, GROUP_INTERVIEW) only',
  `${outreachStatuses.join(' and ')} reach out to the person: refused (409) while the study is not ACTIVE, the person has opted out, or the participant is REJECTED (counting an approvalStatus given in the same request)`,
];

export const approvalRules: readonly string[] = (Object.keys(approvalMoves) as ParticipantApprovalStatus[]).map((from) => movesLine(from, approvalMoves[from]));

export const screenerRules: readonly string[] = [
  ...(Object.keys(screenerMoves) as ParticipantScreenerState[]).map((from) => movesLine(from, screenerMoves[from])),
  "SCREENER_SENT reaches out to the person: refused (409) when the study has no screener, the person has opted out, or the study is not ACTIVE",
];

/** A field's description: each value with its meaning, then the rules of its moves. */
export function describeStateField(meanings: Record<string, string>, rules: readonly string[]): string {
  const values = Object.entries(meanings).map(([value, meaning]) => `- \`${value}\`: ${meaning}`);
  return `Values:\n${values.join('\n')}\n\nAllowed changes:\n${rules.map((rule) => `- ${rule}`).join('\n')}`;
}

export interface StudyFacts {
  studyType: StudyType;
  studyStatus: StudyStatus;
  hasScreener: boolean;
}

export interface ParticipantFacts {
  status: ParticipantStatus;
  statusBeforeHidden: Exclude<ParticipantStatus, 'HIDDEN'> | null;
  approvalStatus: ParticipantApprovalStatus;
  screenerState: ParticipantScreenerState;
  interviewStartTime: string | null;
  isOptedOut: boolean;
}

/** Why a move is refused: a sentence for the 409's message, and the body field it concerns. */
export interface RefusedMove {
  message: string;
  path: string[];
}

/**
 * Checks one requested change of the three state fields against the tables and rules above.
 * Returns the first refusal, or undefined when every requested move is allowed. Requesting the
 * value a field already has is no move (and records no event).
 */
export function refusedMove(
  study: StudyFacts,
  participant: ParticipantFacts,
  requested: { status?: ParticipantStatus; approvalStatus?: ParticipantApprovalStatus; screenerState?: ParticipantScreenerState; interviewStartTime?: string | null },
): RefusedMove | undefined {
  const approval = requested.approvalStatus ?? participant.approvalStatus;

  if (requested.approvalStatus !== undefined && requested.approvalStatus !== participant.approvalStatus) {
    if (!approvalMoves[participant.approvalStatus].includes(requested.approvalStatus)) {
      return { message: `approvalStatus cannot move from ${participant.approvalStatus} to ${requested.approvalStatus}`, path: ['approvalStatus'] };
    }
  }

  if (requested.screenerState !== undefined && requested.screenerState !== participant.screenerState) {
    const to = requested.screenerState;
    if (!screenerMoves[participant.screenerState].includes(to)) {
      return { message: `screenerState cannot move from ${participant.screenerState} to ${to}; allowed: ${screenerMoves[participant.screenerState].join(', ')}`, path: ['screenerState'] };
    }
    if (to === 'SCREENER_SENT') {
      if (!study.hasScreener) return { message: 'The study has no screener to send', path: ['screenerState'] };
      if (participant.isOptedOut) return { message: 'The person has opted out: no screener can be sent', path: ['screenerState'] };
      if (study.studyStatus !== 'ACTIVE') return { message: `A screener can be sent only while the study is ACTIVE; it is ${study.studyStatus}`, path: ['screenerState'] };
    }
  }

  const statusRefusal = refusedStatusMove(study, participant, requested, approval);
  if (statusRefusal) return statusRefusal;

  // A booked session has a time: the participant is (or, hidden, returns to) SCHEDULED.
  const finalStatus = requested.status ?? participant.status;
  const holdsSession = finalStatus === 'SCHEDULED' || (finalStatus === 'HIDDEN' && participant.statusBeforeHidden === 'SCHEDULED');
  const finalStartTime = requested.interviewStartTime !== undefined ? requested.interviewStartTime : participant.interviewStartTime;
  if (holdsSession && finalStartTime === null) {
    const message = participant.status === finalStatus ? 'A SCHEDULED participant keeps an interviewStartTime: it cannot be cleared' : 'SCHEDULED needs an interviewStartTime';
    return { message, path: ['interviewStartTime'] };
  }
  return undefined;
}

function refusedStatusMove(
  study: StudyFacts,
  participant: ParticipantFacts,
  requested: { status?: ParticipantStatus },
  approval: ParticipantApprovalStatus,
): RefusedMove | undefined {
  if (requested.status === undefined || requested.status === participant.status) return undefined;
  const kind = studyKindOf(study.studyType);
  const from = participant.status;
  const to = requested.status;
  if (from === 'HIDDEN') {
    // Unhiding restores a status the participant already held: the move rules do not apply again.
    if (to === participant.statusBeforeHidden) return undefined;
    return { message: `A HIDDEN participant can only return to the status they had, ${participant.statusBeforeHidden}`, path: ['status'] };
  }
  if (!statusMoves[from].includes(to)) {
    return { message: `status cannot move from ${from} to ${to}; allowed: ${statusMoves[from].join(', ')}`, path: ['status'] };
  }
  if (sessionStatuses.includes(to) && kind !== 'INTERVIEW') {
    return { message: `${to} applies to interview studies only; this study is ${study.studyType}`, path: ['status'] };
  }
  if (from === 'INVITED' && to === 'COMPLETED' && kind === 'INTERVIEW') {
    return { message: 'An interview is completed from SCHEDULED: schedule the session first', path: ['status'] };
  }
  if (outreachStatuses.includes(to)) {
    if (study.studyStatus !== 'ACTIVE') return { message: `Participants can be ${to.toLowerCase()} only while the study is ACTIVE; it is ${study.studyStatus}`, path: ['status'] };
    if (participant.isOptedOut) return { message: 'The person has opted out and cannot be contacted', path: ['status'] };
    if (approval === 'REJECTED') return { message: `A REJECTED participant cannot be ${to.toLowerCase()}`, path: ['status'] };
  }
  return undefined;
}
