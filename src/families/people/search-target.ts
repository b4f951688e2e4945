import { type SqlBool, sql } from 'kysely';
import { ascendingId, type GroupAvailability } from '../../search/compile.js';
import type { SearchTarget } from '../../search/run.js';

const needsStudy = 'PARTICIPANT and INCENTIVE names need a study: search its participants with POST /studies/{studyId}/participants/search';

export const peopleSearchGroups: GroupAvailability = { PERSON: true, PARTICIPANT: needsStudy, INCENTIVE: needsStudy };
/** people_live (workspace_id, person_id) serves it. */
export const byPersonId = ascendingId(sql`p.person_id`, 'person');

/** POST /people/search: the live people of the workspace. */
export function peopleTarget(workspaceId: string): SearchTarget {
  const people = sql`people as p`;
  const where = sql<SqlBool>`p.workspace_id = ${workspaceId} and p.deleted_at is null`;
  const personNo = sql`p.person_no`;
  return {
    scope: `people-search:${workspaceId}`,
    from: () => people,
    where,
    id: sql`p.person_id`,
    columns: sql`p.*`,
    groups: peopleSearchGroups,
    countedOver: {
      personNo,
      rowPersonNo: personNo,
      // The target's rows are people alone, walked in people_live and the sort indexes, which hold
      // person_no (20261202000000_walks_hold_person_no).
      walkAlone: { walks: 'person', from: people, where },
    },
  };
}
