import type { Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import type { DB, StudyStatus, StudyType, UserRole } from '../db/schema.js';
import { idPrefixes, newId } from '../ids.js';
import { allRoles } from '../http/rights.js';
import * as studies from '../families/studies/service.js';
import { createToken, createUser, createWorkspace } from '../families/workspaces/service.js';
import { studyStatuses, studyTypes } from '../families/studies/schemas.js';

const teamsByRole: Partial<Record<UserRole, string[]>> = {
  OPS_MANAGER: ['Research Ops'],
  RESEARCHER: ['Discovery', 'Checkout'],
  COLLABORATOR: ['Checkout'],
  DEVELOPER: ['Platform'],
};

const studyNames: Record<StudyType, string> = {
  SURVEY: 'Payment preferences survey',
  INTERVIEWS: 'Checkout interviews',
  UNMODERATED_TEST: 'New onboarding flow test',
  GROUP_INTERVIEW: 'Small-business owners focus group',
};

/** How a study reaches each status through the service's own moves. */
const pathTo: Record<StudyStatus, ('launch' | 'PAUSED' | 'CLOSED')[]> = {
  DRAFT: [],
  ACTIVE: ['launch'],
  PAUSED: ['launch', 'PAUSED'],
  CLOSED: ['launch', 'CLOSED'],
};

/**
 * A workspace full of realistic data to explore: a user of every role in teams, populations,
 * and studies of every type in every status (with screeners, owners and a template), all made
 * through the same services the API uses.
 */
export async function seedDemo(db: Kysely<DB>, clock: Clock) {
  const admin = await createWorkspace(db, { name: 'Demo Research', email: 'admin@demo.example', fullName: 'Dana Admin' }, clock.now());
  const { workspaceId } = admin;
  const users: Record<string, string> = { SUPER_ADMIN: admin.userId };
  const tokens: Record<string, string> = { SUPER_ADMIN: admin.token };
  for (const role of allRoles.filter((candidate) => candidate !== 'SUPER_ADMIN')) {
    const lower = role.toLowerCase().replace(/_/g, '-');
    const { userId } = await createUser(db, {
      workspaceId,
      email: `${lower}@demo.example`,
      role,
      fullName: `${role.charAt(0)}${role.slice(1).toLowerCase().replace(/_/g, ' ')} Demo`,
      seat: role === 'OBSERVER' ? 'LITE' : 'RESEARCHER_PAID',
      teams: teamsByRole[role] ?? [],
    });
    users[role] = userId;
    tokens[role] = (await createToken(db, workspaceId, userId)).token;
  }

  const populationIds: string[] = [];
  for (const [name, description] of [
    ['Customers', 'People who bought from us in the last two years'],
    ['Beta testers', 'Opted in to try features early'],
  ] as const) {
    const populationId = newId(idPrefixes.population);
    await db.insertInto('populations').values({ workspace_id: workspaceId, population_id: populationId, name, description, created_at: clock.now().toISOString() }).execute();
    populationIds.push(populationId);
  }

  const context: studies.CallContext = { db, clock, workspaceId, userId: users.RESEARCHER!, canReadScreeners: true };
  const studyIds: string[] = [];
  for (const studyType of studyTypes) {
    for (const status of studyStatuses) {
      const { studyId } = await studies.createStudy(context, {
        studyType,
        recruitmentStrategy: studyType === 'SURVEY' && status === 'ACTIVE' ? 'EXTERNAL' : 'IN_SERVICE',
        populationId: populationIds[0],
        owners: { userIds: [users.RESEARCHER!, users.OPS_MANAGER!] },
        studyPlan: {
          name: `${studyNames[studyType]} (${status.toLowerCase()})`,
          externalName: studyNames[studyType],
          description: `Demo study of type ${studyType}, seeded in ${status}.`,
          startDate: '2026-12-01',
          endDate: '2027-01-31',
          participationLimit: studyType === 'SURVEY' ? 500 : 12,
          language: 'en',
          includeScreener: true,
          incentive: { amount: studyType === 'SURVEY' ? 10 : 75 },
          ...(studyType === 'SURVEY' ? {} : { scheduler: { interviewDurationMinutes: 45 } }),
        },
      });
      if (studyType !== 'SURVEY') {
        await studies.putScreener(context, studyId, {
          qualifyByDefault: false,
          showSchedulerToQualified: true,
          questions: [
            { name: 'How often do you shop online?', type: 'SINGLE_SELECT', category: 'simple', isRequired: true },
            { name: 'Tell us about your last purchase', type: 'LONG_FORM', category: 'simple', isRequired: false },
          ],
        });
      }
      for (const move of pathTo[status]) {
        if (move === 'launch') await studies.launchStudy(context, studyId);
        else await studies.setStudyStatus(context, studyId, move);
      }
      studyIds.push(studyId);
    }
  }
  const template = await studies.createTemplate(context, { studyId: studyIds[studyTypes.indexOf('INTERVIEWS') * studyStatuses.length]!, name: '45-minute interview' });

  return { workspaceId, token: admin.token, tokens, users, populationIds, studyIds, studyTemplateId: template.studyTemplateId };
}
