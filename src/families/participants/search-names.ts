import { sql } from 'kysely';
import { approvalStatuses, participantStatuses, screenerStates } from './states.js';
import type { PropertyDefinition } from '../../search/catalogue.js';
import { enumOptions, named } from '../../search/sql.js';
import { paidIncentive } from '../incentives/search-names.js';

/**
 * The PARTICIPANT names: a participant's own fields and what derives from them, as SQL over
 * `participants as pt` (the participant of the study searched). Defined once, described once.
 */

const participant = named('PARTICIPANT');

const column = (name: string) => () => sql.ref(`pt.${name}`);
/** A value of the participant's own row, held per participant by the search counts. */
const ownRow = { countedFrom: 'participant' } as const;

/** The referral code of the person's first or last submission to a signup form of the study's population. */
const studySignupReferralCode = (order: 'asc' | 'desc') => () =>
  sql`(select ss.referral_code
    from signup_submissions as ss
      join signup_forms as f on f.workspace_id = ss.workspace_id and f.signup_form_id = ss.signup_form_id
      join studies as st on st.workspace_id = f.workspace_id and st.population_id = f.population_id
    where ss.workspace_id = pt.workspace_id and ss.person_id = pt.person_id and st.study_id = pt.study_id and ss.referral_code is not null
    order by ss.submitted_at ${sql.raw(order)}, ss.submission_id ${sql.raw(order)} limit 1)`;

export const participantNames: Record<string, PropertyDefinition> = {
  PARTICIPANT_ID: participant('PARTICIPANT_ID', 'text', "the participant's id", column('participant_id'), { ...ownRow, notNull: true }),
  STATUS: participant('STATUS', 'enum', 'the participant status', column('status'), { ...ownRow, options: enumOptions(participantStatuses), notNull: true }),
  STATE: participant(
    'STATE',
    'enum',
    'the stage the status puts the participant in: IN_PROGRESS (NOT_STARTED, INVITED, SCHEDULED, NO_SHOW), COMPLETED, CANCELED or HIDDEN',
    () => sql`(case when pt.status in ('NOT_STARTED', 'INVITED', 'SCHEDULED', 'NO_SHOW') then 'IN_PROGRESS' else pt.status end)`,
    { ...ownRow, options: enumOptions(['IN_PROGRESS', 'COMPLETED', 'CANCELED', 'HIDDEN']), notNull: true },
  ),
  APPROVAL_STATUS: participant('APPROVAL_STATUS', 'enum', 'the approval status', column('approval_status'), { ...ownRow, options: enumOptions(approvalStatuses), notNull: true }),
  SCREENER_STATUS: participant('SCREENER_STATUS', 'enum', 'the screener state', column('screener_state'), { ...ownRow, options: enumOptions(screenerStates), notNull: true }),
  SCREENER_SENT_AT: participant('SCREENER_SENT_AT', 'datetime', 'when the screener was sent', column('screener_sent_at'), ownRow),
  SCREENER_SUBMITTED_AT: participant('SCREENER_SUBMITTED_AT', 'datetime', 'when the participant answered the screener (screenerResponseDate)', column('screener_submitted_at'), ownRow),
  TEST_COMPLETED_AT: participant('TEST_COMPLETED_AT', 'datetime', 'when the participant completed the test or survey (testCompletedAt)', column('test_completed_at'), ownRow),
  INTERVIEW_START_TIME: participant('INTERVIEW_START_TIME', 'datetime', 'when the booked session starts (interviewStartTime)', column('interview_start_time'), {
    ...ownRow,
    storedSortKeys: { ASC: column('interview_start_key_asc'), DESC: column('interview_start_key_desc') },
    // participants_by_session_asc / _desc (20261130100000_participant_sort_keys)
    indexedOrder: true,
  }),
  INTERVIEW_START_DATE: participant('INTERVIEW_START_DATE', 'datetime', 'the UTC day of interviewStartTime (its midnight); sorts by day, ties by participant id', () =>
    sql`date_trunc('day', pt.interview_start_time, 'UTC')`,
  ownRow),
  INCENTIVE_PAID: participant('INCENTIVE_PAID', 'number', 'incentives sent to the participant for this study, in USD cents (statuses UNCLAIMED, CLAIMED, SENT; other currencies are not added); 0 when none', () =>
    sql`(select coalesce(sum(x.amount_cents), 0) from incentives as x where x.workspace_id = pt.workspace_id and x.participant_id = pt.participant_id and ${paidIncentive})`,
  { notNull: true }),
  CONSENT_FORM_SUBMITTED: participant('CONSENT_FORM_SUBMITTED', 'boolean', "whether the participant submitted the study's consent form", () => sql`(pt.consent_submitted_at is not null)`, { ...ownRow, notNull: true }),
  RECRUITMENT_CRITERIA_MATCH: participant(
    'RECRUITMENT_CRITERIA_MATCH',
    'boolean',
    'whether the screener qualified the participant: true when QUALIFIED, false when DISQUALIFIED, empty before a decision',
    () => sql`(case pt.screener_state when 'QUALIFIED' then true when 'DISQUALIFIED' then false end)`,
    ownRow,
  ),
  STUDY_FIRST_SIGNUP_REFERRAL_CODE: participant(
    'STUDY_FIRST_SIGNUP_REFERRAL_CODE',
    'text',
    "the referral code of the person's earliest submission (that had one) to a signup form of the study's population",
    studySignupReferralCode('asc'),
  ),
  STUDY_LAST_SIGNUP_REFERRAL_CODE: participant(
    'STUDY_LAST_SIGNUP_REFERRAL_CODE',
    'text',
    "the referral code of the person's latest submission (that had one) to a signup form of the study's population",
    studySignupReferralCode('desc'),
  ),
  STUDY_QUOTA_GROUP: participant('STUDY_QUOTA_GROUP', 'text', 'the quota group the participant was put in (quotaGroup)', column('quota_group'), ownRow),
  STUDY_SHORTLIST_STATUS: participant(
    'STUDY_SHORTLIST_STATUS',
    'enum',
    "the participant's place on the study's shortlist: SHORTLISTED once approved, REMOVED when rejected, PENDING before review",
    () => sql`(case pt.approval_status when 'APPROVED' then 'SHORTLISTED' when 'REJECTED' then 'REMOVED' else 'PENDING' end)`,
    { ...ownRow, options: enumOptions(['PENDING', 'SHORTLISTED', 'REMOVED']), notNull: true },
  ),
  STUDY_NOTE: participant('STUDY_NOTE', 'text', "the participant's note", column('note'), ownRow),
};
