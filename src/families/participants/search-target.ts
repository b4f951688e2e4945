import { sql } from 'kysely';
import { ascendingId, everyGroup } from '../../search/compile.js';
import { joinIfRead, type SearchTarget } from '../../search/run.js';
import { latestIncentiveOf } from '../incentives/search-target.js';

/** participants_of_study (workspace_id, study_id, participant_id) serves it. */
export const byParticipantId = ascendingId(sql`pt.participant_id`, 'row');

/**
 * E1: the participants of a study whose person is not deleted. The latest incentive is joined only
 * for INCENTIVE names, so a filter on the participant's own fields never touches incentives.
 */
export function participantsTarget(workspaceId: string, studyId: string): SearchTarget {
  return {
    scope: `participants-search:${workspaceId}:${studyId}`,
    from: (groups) => sql`participants as pt
      join people as p on p.workspace_id = pt.workspace_id and p.person_id = pt.person_id
      ${joinIfRead(groups, 'INCENTIVE', latestIncentiveOf(sql`pt.participant_id`))}`,
    where: sql`pt.workspace_id = ${workspaceId} and pt.study_id = ${studyId} and p.deleted_at is null`,
    id: sql`pt.participant_id`,
    columns: sql`pt.*`,
    groups: everyGroup,
    optionalGroups: ['INCENTIVE'],
    countedOver: {
      studyId,
      personNo: sql`p.person_no`,
      rowPersonNo: sql`pt.person_no`,
      // participants_of_study and the session indexes hold person_no (20261202000000_walks_hold_person_no);
      // the person's being live is the count's to know: its matches are live people's participants.
      walkAlone: { walks: 'row', from: sql`participants as pt`, where: sql`pt.workspace_id = ${workspaceId} and pt.study_id = ${studyId}` },
    },
  };
}
