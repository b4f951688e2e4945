/**
 * The participant state tables, as the console offers them. A copy of the server's tables in
 * src/families/participants/states.ts (the console imports no server code: it is built by Vite
 * against the public SDK alone); test/console/moves.test.ts compares the two, so a change on
 * either side that the other lacks fails the tests. Keep this file free of imports.
 */

export type ParticipantStatus = 'NOT_STARTED' | 'INVITED' | 'SCHEDULED' | 'COMPLETED' | 'NO_SHOW' | 'CANCELED' | 'HIDDEN';
export type ApprovalStatus = 'PENDING_REVIEW' | 'APPROVED' | 'REJECTED';
export type StudyType = 'INTERVIEWS' | 'GROUP_INTERVIEW' | 'UNMODERATED_TEST' | 'SURVEY';

/** Status moves allowed from each status (HIDDEN returns only to the status it hid). */
export const statusMoves: Record<Exclude<ParticipantStatus, 'HIDDEN'>, readonly ParticipantStatus[]> = {
  NOT_STARTED: ['INVITED', 'SCHEDULED', 'CANCELED', 'HIDDEN'],
  INVITED: ['SCHEDULED', 'COMPLETED', 'CANCELED', 'HIDDEN'],
  SCHEDULED: ['COMPLETED', 'NO_SHOW', 'CANCELED', 'HIDDEN'],
  NO_SHOW: ['SCHEDULED', 'CANCELED', 'HIDDEN'],
  COMPLETED: ['HIDDEN'],
  CANCELED: ['INVITED', 'HIDDEN'],
};

/** Any approval status may move to any other: a review can be changed. */
export const approvalMoves: Record<ApprovalStatus, readonly ApprovalStatus[]> = {
  PENDING_REVIEW: ['APPROVED', 'REJECTED'],
  APPROVED: ['PENDING_REVIEW', 'REJECTED'],
  REJECTED: ['PENDING_REVIEW', 'APPROVED'],
};

/** Statuses that book or hold a session: only interview studies have sessions. */
export const sessionStatuses: readonly ParticipantStatus[] = ['SCHEDULED', 'NO_SHOW'];
/** Moves that reach out to the person: refused while the study is not ACTIVE, or for a REJECTED participant. */
export const outreachStatuses: readonly ParticipantStatus[] = ['INVITED', 'SCHEDULED'];

export const isInterviewStudy = (studyType: string) => studyType === 'INTERVIEWS' || studyType === 'GROUP_INTERVIEW';

/**
 * The status moves to offer a participant: the table's moves from its status, less those the
 * server's other rules refuse for what the console knows (sessions in interview studies only, an
 * interview completed from SCHEDULED, no outreach while the study is not ACTIVE or the participant
 * is REJECTED). An opted-out person is not known here: the API's refusal says so beside the row.
 * A HIDDEN participant returns to the status it had (the record's statusBeforeHidden): the panel
 * offers that move as "Unhide".
 */
export function offeredStatusMoves(
  participant: { status: ParticipantStatus; approvalStatus: ApprovalStatus },
  study: { studyType: string; status: string },
): ParticipantStatus[] {
  if (participant.status === 'HIDDEN') return [];
  const interview = isInterviewStudy(study.studyType);
  return statusMoves[participant.status].filter((to) => {
    if (sessionStatuses.includes(to) && !interview) return false;
    if (participant.status === 'INVITED' && to === 'COMPLETED' && interview) return false;
    if (outreachStatuses.includes(to) && (study.status !== 'ACTIVE' || participant.approvalStatus === 'REJECTED')) return false;
    return true;
  });
}

/** What a move's button says. */
export const moveLabels: Record<ParticipantStatus, string> = {
  NOT_STARTED: 'Not started',
  INVITED: 'Invite',
  SCHEDULED: 'Schedule',
  COMPLETED: 'Mark completed',
  NO_SHOW: 'Mark no-show',
  CANCELED: 'Mark canceled',
  HIDDEN: 'Hide',
};

export const approvalLabels: Record<ApprovalStatus, string> = {
  PENDING_REVIEW: 'Back to review',
  APPROVED: 'Approve',
  REJECTED: 'Reject',
};
