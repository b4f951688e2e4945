import type { StudyStatus, StudyType } from '../db/schema.js';
import * as participants from '../families/participants/service.js';
import type { UpdateParticipantBody } from '../families/participants/requests.js';
import { studyKindOf } from '../families/participants/states.js';

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

/** A seeded study as the participant seeding sees it: in its working status (DRAFT or ACTIVE) while participants are added. */
export interface DemoStudy {
  studyId: string;
  studyType: StudyType;
  /** The status the study is seeded in; it is DRAFT (draft) or ACTIVE (every other) while its participants are seeded. */
  status: StudyStatus;
}

/** A participant the seed made, with what the incentive seeding needs to know of it. */
export interface DemoParticipant {
  participantId: string;
  personId: string;
  studyId: string;
  studyType: StudyType;
  studyStatus: StudyStatus;
  outcome: Outcome;
  /** When the participant completed (the interview's start, or the test's completion); null unless COMPLETED. */
  completedAt: string | null;
}

type Outcome =
  | 'fresh'
  | 'approved'
  | 'rejected'
  | 'screenerSent'
  | 'screenerSubmitted'
  | 'disqualified'
  | 'invited'
  | 'scheduled'
  | 'completed'
  | 'noShow'
  | 'canceled'
  | 'hidden'
  | 'hiddenAfterCompleting';

/** One participant's planned life: the PATCH bodies that take it there, in order, and when it completed. */
interface Course {
  outcome: Outcome;
  steps: UpdateParticipantBody[];
  completedAt: string | null;
}

/** Who is added to a study and where each one ends: `[outcome, count]`, in the order people are taken. */
type Plan = [Outcome, number][];

const interviewActive: Plan = [
  ['fresh', 4],
  ['approved', 2],
  ['screenerSent', 2],
  ['screenerSubmitted', 2],
  ['disqualified', 2],
  ['invited', 4],
  ['scheduled', 3],
  ['completed', 4],
  ['noShow', 2],
  ['canceled', 2],
  ['hidden', 2],
];
const testActive: Plan = [
  ['fresh', 4],
  ['approved', 2],
  ['screenerSent', 2],
  ['screenerSubmitted', 2],
  ['disqualified', 2],
  ['invited', 6],
  ['completed', 6],
  ['canceled', 2],
  ['hidden', 1],
  ['hiddenAfterCompleting', 1],
];
const draft: Plan = [
  ['fresh', 6],
  ['approved', 3],
  ['rejected', 1],
  ['canceled', 1],
  ['hidden', 1],
];
const interviewPaused: Plan = [
  ['fresh', 2],
  ['invited', 4],
  ['scheduled', 3],
  ['completed', 3],
];
const testPaused: Plan = [
  ['fresh', 2],
  ['invited', 5],
  ['completed', 5],
];

/** The closed studies are the panel's history: mostly completions, spread over the last year. */
const plans: Record<StudyType, Record<StudyStatus, Plan>> = {
  INTERVIEWS: {
    DRAFT: draft,
    ACTIVE: interviewActive,
    PAUSED: interviewPaused,
    CLOSED: [
      ['completed', 24],
      ['noShow', 6],
      ['canceled', 2],
    ],
  },
  GROUP_INTERVIEW: {
    DRAFT: draft,
    ACTIVE: interviewActive,
    PAUSED: interviewPaused,
    CLOSED: [
      ['completed', 8],
      ['noShow', 2],
    ],
  },
  UNMODERATED_TEST: { DRAFT: draft, ACTIVE: testActive, PAUSED: testPaused, CLOSED: [['completed', 12]] },
  SURVEY: { DRAFT: draft, ACTIVE: testActive, PAUSED: testPaused, CLOSED: [['completed', 16]] },
};

/**
 * Where in the list of contactable people each study starts taking its participants. The closed
 * studies overlap (people who completed several studies, or completed one and missed another,
 * give the derived names such as TOTAL_NUMBER_OF_INTERVIEWS_COMPLETED and SHOW_RATE values to
 * show), and the active ones overlap the history.
 */
const firstPerson: Record<StudyType, Record<StudyStatus, number>> = {
  INTERVIEWS: { CLOSED: 0, ACTIVE: 20, PAUSED: 130, DRAFT: 200 },
  GROUP_INTERVIEW: { CLOSED: 20, ACTIVE: 60, PAUSED: 145, DRAFT: 215 },
  UNMODERATED_TEST: { CLOSED: 10, ACTIVE: 90, PAUSED: 160, DRAFT: 230 },
  SURVEY: { CLOSED: 0, ACTIVE: 100, PAUSED: 175, DRAFT: 245 },
};

/** At least this many contactable people are needed for the plans above. */
export const PEOPLE_NEEDED = 260;

interface Timing {
  now: Date;
  /** When the closed group interview's one session took place. */
  groupSessionAt: Date;
}

/** The time `days` days before (negative: after) now, on the hour. */
function daysAgo(now: Date, days: number): string {
  const at = new Date(now.getTime() - days * DAY_MS);
  at.setUTCMinutes(0, 0, 0);
  return at.toISOString();
}

/**
 * The course of the `index`-th participant of `outcome` in a study: the moves a researcher would
 * make, in the order the rules allow (a screener is sent, answered and judged one step at a
 * time; an interview is scheduled before it is completed or missed).
 */
function courseOf(outcome: Outcome, index: number, study: DemoStudy, timing: Timing): Course {
  const isInterview = studyKindOf(study.studyType) === 'INTERVIEW';
  const closed = study.status === 'CLOSED';
  const { now } = timing;
  // Closed studies spread their sessions over the last year (every window, L30 to L365, has some);
  // the others had theirs in the last fortnight.
  const pastSession = () => {
    if (study.studyType === 'GROUP_INTERVIEW' && closed) return timing.groupSessionAt.toISOString();
    return daysAgo(now, closed ? 2 + index * 13 : 1 + index * 3);
  };
  const course = (steps: UpdateParticipantBody[], completedAt: string | null = null): Course => ({ outcome, steps, completedAt });
  switch (outcome) {
    case 'fresh':
      return course([]);
    case 'approved':
      return course([{ approvalStatus: 'APPROVED' }]);
    case 'rejected':
      return course([{ approvalStatus: 'REJECTED', note: 'Works for a competitor' }]);
    case 'screenerSent':
      return course([{ screenerState: 'SCREENER_SENT' }]);
    case 'screenerSubmitted':
      return course([{ screenerState: 'SCREENER_SENT' }, { screenerState: 'SUBMITTED' }]);
    case 'disqualified':
      return course([{ screenerState: 'SCREENER_SENT' }, { screenerState: 'SUBMITTED' }, { screenerState: 'DISQUALIFIED', approvalStatus: 'REJECTED' }]);
    case 'invited':
      return course([{ approvalStatus: 'APPROVED', status: 'INVITED', quotaGroup: index % 2 === 0 ? 'New customers' : 'Returning customers' }]);
    case 'scheduled':
      return course([
        { screenerState: 'SCREENER_SENT' },
        { screenerState: 'SUBMITTED' },
        { screenerState: 'QUALIFIED', approvalStatus: 'APPROVED', status: 'SCHEDULED', interviewStartTime: new Date(Date.parse(daysAgo(now, -(2 + index))) + 14 * HOUR_MS).toISOString() },
      ]);
    case 'completed':
    case 'hiddenAfterCompleting': {
      const rating = { rating: 1 + ((index * 3 + 2) % 5) };
      const hide: UpdateParticipantBody[] = outcome === 'hiddenAfterCompleting' ? [{ status: 'HIDDEN' }] : [];
      if (isInterview) {
        const startedAt = pastSession();
        return course([{ approvalStatus: 'APPROVED', status: 'SCHEDULED', interviewStartTime: startedAt }, { status: 'COMPLETED', ...rating }, ...hide], startedAt);
      }
      const completedAt = pastSession();
      return course([{ approvalStatus: 'APPROVED', status: 'INVITED' }, { status: 'COMPLETED', testCompletedAt: completedAt, ...rating }, ...hide], completedAt);
    }
    case 'noShow':
      return course([
        { approvalStatus: 'APPROVED', status: 'SCHEDULED', interviewStartTime: pastSession() },
        { status: 'NO_SHOW', note: 'Did not join the call' },
      ]);
    case 'canceled':
      // A draft study reaches no one: its participant is canceled before being invited.
      return course(study.status === 'DRAFT' ? [{ status: 'CANCELED' }] : [{ approvalStatus: 'APPROVED', status: 'INVITED' }, { status: 'CANCELED', note: 'No longer available' }]);
    case 'hidden':
      return course([{ status: 'HIDDEN' }]);
  }
}

/**
 * Adds the study's participants (one bulk add) and moves each one through updateParticipant, the
 * service the API's PATCH uses, so every rule is checked on the way. The study must be in its
 * working status: DRAFT for a draft study, ACTIVE for every other (invitations and screeners
 * need an ACTIVE study); the caller pauses or closes it afterwards.
 */
export async function seedStudyParticipants(
  context: participants.CallContext,
  study: DemoStudy,
  contactablePersonIds: readonly string[],
  timing: Timing,
): Promise<DemoParticipant[]> {
  if (contactablePersonIds.length < PEOPLE_NEEDED) throw new Error(`The demo participants need ${PEOPLE_NEEDED} contactable people`);
  const courses = plans[study.studyType][study.status].flatMap(([outcome, count]) => Array.from({ length: count }, (_, index) => courseOf(outcome, index, study, timing)));
  const start = firstPerson[study.studyType][study.status];
  const personIds = contactablePersonIds.slice(start, start + courses.length);
  const added = await participants.addParticipants(context, study.studyId, personIds);
  if (added.errors.length > 0) throw new Error(`Demo participants not added: ${JSON.stringify(added.errors)}`);

  const seeded: DemoParticipant[] = [];
  for (const [index, participant] of added.results.entries()) {
    const course = courses[index]!;
    for (const step of course.steps) await participants.updateParticipant(context, study.studyId, participant.participantId, step);
    seeded.push({
      participantId: participant.participantId,
      personId: participant.personId,
      studyId: study.studyId,
      studyType: study.studyType,
      studyStatus: study.status,
      outcome: course.outcome,
      completedAt: course.completedAt,
    });
  }
  return seeded;
}
