import { type RawBuilder, sql } from 'kysely';
import type { GroupAvailability, SortKey } from './compile.js';
import type { PropertyGroup } from './names.js';
import type { SearchTarget } from './run.js';

/**
 * The four searches, each as the rows it reads under the catalogue's aliases: `p` the person,
 * `pt` the participant, `i` the incentive. Joins that no name of the query needs are left out, so
 * a filter on the participant's own fields never touches incentives.
 */

const all: GroupAvailability = { PERSON: true, PARTICIPANT: true, INCENTIVE: true };
const needsStudy = 'PARTICIPANT and INCENTIVE names need a study: search its participants with POST /studies/{studyId}/participants/search';
const empty = sql``;

const ascending = (key: RawBuilder<unknown>): SortKey => ({ key, sqlType: 'text', direction: 'ASC', notNull: true });

/** The participant's most recent incentive, as `i` (empty when there is none). */
const latestIncentiveOf = (participantId: RawBuilder<unknown>) => sql`left join lateral (
    select * from incentives as x
    where x.workspace_id = p.workspace_id and x.participant_id = ${participantId}
    order by x.sent_at desc, x.incentive_id desc limit 1
  ) as i on true`;

/** The person's most recent incentive, as `i`: signup submissions searched without a study. */
const latestIncentiveOfPerson = sql`left join lateral (
    select * from incentives as x
    where x.workspace_id = p.workspace_id and x.person_id = p.person_id
    order by x.sent_at desc, x.incentive_id desc limit 1
  ) as i on true`;

const when = (groups: ReadonlySet<PropertyGroup>, group: PropertyGroup, join: RawBuilder<unknown>) => (groups.has(group) ? join : empty);

export const peopleSearchGroups: GroupAvailability = { PERSON: true, PARTICIPANT: needsStudy, INCENTIVE: needsStudy };
export const byPersonId = ascending(sql`p.person_id`);

/** POST /people/search: the live people of the workspace. */
export function peopleTarget(workspaceId: string): SearchTarget {
  return {
    scope: `people-search:${workspaceId}`,
    from: () => sql`people as p`,
    where: sql`p.workspace_id = ${workspaceId} and p.deleted_at is null`,
    id: sql`p.person_id`,
    columns: sql`p.*`,
    groups: peopleSearchGroups,
    countedOver: {},
  };
}

export const byParticipantId = ascending(sql`pt.participant_id`);

/** E1: the participants of a study whose person is not deleted. */
export function participantsTarget(workspaceId: string, studyId: string): SearchTarget {
  return {
    scope: `participants-search:${workspaceId}:${studyId}`,
    from: (groups) => sql`participants as pt
      join people as p on p.workspace_id = pt.workspace_id and p.person_id = pt.person_id
      ${when(groups, 'INCENTIVE', latestIncentiveOf(sql`pt.participant_id`))}`,
    where: sql`pt.workspace_id = ${workspaceId} and pt.study_id = ${studyId} and p.deleted_at is null`,
    id: sql`pt.participant_id`,
    columns: sql`pt.*`,
    groups: all,
    optionalGroups: ['INCENTIVE'],
    countedOver: { studyId },
  };
}

export const byIncentiveId = ascending(sql`i.incentive_id`);

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
      ${when(groups, 'PARTICIPANT', sql`join participants as pt on pt.workspace_id = i.workspace_id and pt.participant_id = i.participant_id`)}`,
    where: studyId === undefined ? sql`i.workspace_id = ${workspaceId}` : sql`i.workspace_id = ${workspaceId} and i.study_id = ${studyId}`,
    id: sql`i.incentive_id`,
    columns: sql`i.*`,
    groups: all,
    optionalGroups: ['PERSON'],
  };
}

export const bySubmissionId = ascending(sql`ss.submission_id`);

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
        ${withParticipant ? participantJoin : empty}
        ${when(groups, 'INCENTIVE', studyId === undefined ? latestIncentiveOfPerson : latestIncentiveOf(sql`pt.participant_id`))}`;
    },
    where: sql`ss.workspace_id = ${workspaceId} and ss.signup_form_id = ${signupFormId} and p.deleted_at is null`,
    id: sql`ss.submission_id`,
    columns: sql`ss.*`,
    groups: { PERSON: true, PARTICIPANT: studyId === undefined ? 'PARTICIPANT names need studyId: give the study whose participants they describe' : true, INCENTIVE: true },
    optionalGroups: ['PARTICIPANT', 'INCENTIVE'],
  };
}
