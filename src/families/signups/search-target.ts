import { sql } from 'kysely';
import { ascendingId } from '../../search/compile.js';
import { joinIfRead, type SearchTarget } from '../../search/run.js';
import { latestIncentiveOf, latestIncentiveOfPerson } from '../incentives/search-target.js';

export const bySubmissionId = ascendingId(sql`ss.submission_id`);

/**
 * E6: the submissions of a signup form whose person is not deleted. With a study, PARTICIPANT
 * names read the person's participant of that study (empty when they are none) and INCENTIVE
 * names its latest incentive; without one, INCENTIVE names read the person's latest incentive.
 */
export function submissionsTarget(workspaceId: string, signupFormId: string, studyId: string | undefined): SearchTarget {
  const participantJoin = sql`left join participants as pt on pt.workspace_id = ss.workspace_id and pt.study_id = ${studyId ?? null} and pt.person_id = ss.person_id`;
  return {
    scope: `submissions-search:${workspaceId}:${signupFormId}:${studyId ?? ''}`,
    from: (groups) => {
      const withParticipant = studyId !== undefined && (groups.has('PARTICIPANT') || groups.has('INCENTIVE'));
      return sql`signup_submissions as ss
        join people as p on p.workspace_id = ss.workspace_id and p.person_id = ss.person_id
        ${withParticipant ? participantJoin : sql``}
        ${joinIfRead(groups, 'INCENTIVE', studyId === undefined ? latestIncentiveOfPerson : latestIncentiveOf(sql`pt.participant_id`))}`;
    },
    where: sql`ss.workspace_id = ${workspaceId} and ss.signup_form_id = ${signupFormId} and p.deleted_at is null`,
    id: sql`ss.submission_id`,
    columns: sql`ss.*`,
    groups: { PERSON: true, PARTICIPANT: studyId === undefined ? 'PARTICIPANT names need studyId: give the study whose participants they describe' : true, INCENTIVE: true },
    optionalGroups: ['PARTICIPANT', 'INCENTIVE'],
  };
}
