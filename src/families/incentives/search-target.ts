import { sql, type RawBuilder } from 'kysely';
import { ascendingId, everyGroup } from '../../search/compile.js';
import { joinIfRead, type SearchTarget } from '../../search/run.js';

/** The participant's most recent incentive, as `i` (empty when there is none). */
export const latestIncentiveOf = (participantId: RawBuilder<unknown>) => sql`left join lateral (
    select * from incentives as x
    where x.workspace_id = p.workspace_id and x.participant_id = ${participantId}
    order by x.sent_at desc, x.incentive_id desc limit 1
  ) as i on true`;

/** The person's most recent incentive, as `i`: signup submissions searched without a study. */
export const latestIncentiveOfPerson = sql`left join lateral (
    select * from incentives as x
    where x.workspace_id = p.workspace_id and x.person_id = p.person_id
    order by x.sent_at desc, x.incentive_id desc limit 1
  ) as i on true`;

export const byIncentiveId = ascendingId(sql`i.incentive_id`);

/**
 * E7: the incentives of the workspace (of one study when given). An incentive stays after its
 * recipient is deleted: the recipient's own fields then read as empty, and the counts derived
 * from their history as 0.
 */
export function incentivesTarget(workspaceId: string, studyId: string | undefined): SearchTarget {
  return {
    scope: `incentives-search:${workspaceId}:${studyId ?? ''}`,
    from: (groups) => sql`incentives as i
      left join people as p on p.workspace_id = i.workspace_id and p.person_id = i.person_id and p.deleted_at is null
      ${joinIfRead(groups, 'PARTICIPANT', sql`join participants as pt on pt.workspace_id = i.workspace_id and pt.participant_id = i.participant_id`)}`,
    where: studyId === undefined ? sql`i.workspace_id = ${workspaceId}` : sql`i.workspace_id = ${workspaceId} and i.study_id = ${studyId}`,
    id: sql`i.incentive_id`,
    columns: sql`i.*`,
    groups: everyGroup,
    optionalGroups: ['PERSON'],
  };
}
