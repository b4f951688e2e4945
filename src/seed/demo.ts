import type { Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import type { DB, StudyType, UserRole } from '../db/schema.js';
import { allRoles, type Right, rightSetByRole, rightsByRole } from '../http/rights.js';
import * as studies from '../families/studies/service.js';
import * as populations from '../families/populations/service.js';
import * as properties from '../families/properties/service.js';
import { createCustomRole, createToken, createUser, createWorkspace } from '../families/workspaces/service.js';
import { studyStatuses, studyTypes } from '../families/studies/schemas.js';
import * as segments from '../families/segments/service.js';
import * as signups from '../families/signups/service.js';
import { IncentiveProviders } from '../providers/index.js';
import { groupSessionTiming, seedDemoIncentives } from './demo-incentives.js';
import { type DemoParticipant, seedStudyParticipants } from './demo-participants.js';
import { seedDemoPeople } from './demo-people.js';

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

/**
 * A workspace full of realistic data to explore: a user of every role in teams, populations,
 * person properties of every type in two groups, studies of every type in every status (with
 * screeners, owners and a template), participants in every status, approval status and screener
 * state (the closed studies hold a year of completions and no-shows: the participation history
 * the derived search names read), incentives in every status, a signup form with reviewed
 * submissions, and two segments, all made through the same services the API uses.
 *
 * Incentives are ordered from `providers`: the sandbox unless a caller passes its own (the tests
 * pass the test service's sandbox), never the INCENTIVE_PROVIDER configured, so that a demo pays
 * no one. The sandbox keeps its orders in memory only.
 */
export async function seedDemo(db: Kysely<DB>, clock: Clock, providers: IncentiveProviders = new IncentiveProviders('sandbox')) {
  const admin = await createWorkspace(db, { name: 'Demo Research', email: 'admin@demo.example', fullName: 'Dana Admin' }, clock.now());
  const { workspaceId } = admin;
  const users: Record<string, string> = { SUPER_ADMIN: admin.userId };
  const tokens: Record<string, string> = { SUPER_ADMIN: admin.token };
  // The demo's CUSTOM user holds a custom role: a recruiter who reads the panel and runs participants.
  const recruiter = await createCustomRole(db, workspaceId, 'Recruiter', [...rightsByRole.OBSERVER, 'participants:write'], clock.now());
  for (const role of allRoles.filter((candidate) => candidate !== 'SUPER_ADMIN')) {
    const lower = role.toLowerCase().replace(/_/g, '-');
    const { userId } = await createUser(db, {
      ...(role === 'CUSTOM' ? { customRoleId: recruiter.customRoleId } : {}),
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
    populationIds.push((await populations.createPopulation({ db, clock, workspaceId }, { name, description })).populationId);
  }

  // Person properties of every type, in a group for everyone and one for the beta testers only.
  const panel: properties.CallContext = { db, clock, workspaceId, userId: users.OPS_MANAGER! };
  const profile = await properties.createGroup(panel, { name: 'Profile', scopeType: 'ALL' });
  const beta = await properties.createGroup(panel, { name: 'Beta programme', scopeType: 'SPECIFIC', populationIds: [populationIds[1]!] });
  const options = (...names: string[]) => names.map((name) => ({ name }));
  const profileProperties = (
    await properties.importProperties(panel, [
      { name: 'Customer number', propertyType: 'STRING', isUnique: true, isPII: true, description: 'From the CRM', propertyGroupId: profile.propertyGroupId },
      { name: 'Job title', propertyType: 'STRING', propertyGroupId: profile.propertyGroupId },
      { name: 'Household size', propertyType: 'NUMBER', propertyGroupId: profile.propertyGroupId },
      { name: 'Birthday', propertyType: 'DATETIME', isPII: true, propertyGroupId: profile.propertyGroupId },
      { name: 'Has children', propertyType: 'BOOLEAN', propertyGroupId: profile.propertyGroupId },
      { name: 'Home', propertyType: 'LOCATION', isPII: true, propertyGroupId: profile.propertyGroupId },
      {
        name: 'Shopping frequency',
        propertyType: 'SINGLE_SELECT',
        propertyOptions: [{ name: 'Weekly', color: 'GREEN' }, { name: 'Monthly', color: 'YELLOW' }, { name: 'Rarely', color: 'GREY' }],
        propertyGroupId: profile.propertyGroupId,
      },
      { name: 'Devices owned', propertyType: 'MULTI_SELECT', propertyOptions: options('Phone', 'Tablet', 'Laptop', 'Smart speaker'), propertyGroupId: profile.propertyGroupId },
    ])
  ).results;
  const betaProperties = (
    await properties.importProperties(panel, [
      { name: 'Beta cohort', propertyType: 'SINGLE_SELECT', propertyOptions: options('Alpha', 'Beta', 'Gamma'), propertyGroupId: beta.propertyGroupId },
      { name: 'Feedback channels', propertyType: 'MULTI_SELECT', propertyOptions: options('Email', 'In-app', 'Calls'), propertyGroupId: beta.propertyGroupId },
      { name: 'Accessibility needs', propertyType: 'MULTI_SELECT', isPHI: true, propertyOptions: options('Screen reader', 'Captions', 'Large text'), propertyGroupId: beta.propertyGroupId },
      { name: 'Enrolled at', propertyType: 'DATETIME', propertyGroupId: beta.propertyGroupId },
    ])
  ).results;
  const propertyIds = [...profileProperties, ...betaProperties].map((result) => result.personProperty.propertyId);
  const betaPropertyIds = new Set(betaProperties.map((result) => result.personProperty.propertyId));
  const { contactable } = await seedDemoPeople(db, clock, workspaceId, populationIds, betaPropertyIds);
  const contactablePersonIds = contactable.map((person) => person.personId);
  const timing = { now: clock.now(), groupSessionAt: groupSessionTiming(clock.now()).sessionAt };

  const context: studies.CallContext & { role: UserRole; rights: ReadonlySet<Right> } = {
    db,
    clock,
    workspaceId,
    userId: users.RESEARCHER!,
    role: 'RESEARCHER',
    rights: rightSetByRole.RESEARCHER,
    canReadScreeners: true,
    canReadPersonalData: true,
  };
  const studyIds: string[] = [];
  const demoParticipants: DemoParticipant[] = [];
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
            { name: 'How often do you shop online?', type: 'SINGLE_SELECT', category: 'simple', isRequired: true, choices: [{ id: 'weekly', label: 'Every week', rule: 'NEUTRAL' }, { id: 'rarely', label: 'Rarely', rule: 'NEUTRAL' }] },
            { name: 'Tell us about your last purchase', type: 'LONG_FORM', category: 'simple', isRequired: false },
          ],
        });
      }
      // Participants join while the study is DRAFT or ACTIVE (invitations and screeners need it
      // ACTIVE; a closed study takes no one): the study is paused or closed after.
      if (status !== 'DRAFT') await studies.launchStudy(context, studyId);
      demoParticipants.push(...(await seedStudyParticipants(context, { studyId, studyType, status }, contactablePersonIds, timing)));
      if (status === 'PAUSED' || status === 'CLOSED') await studies.setStudyStatus(context, studyId, status);
      studyIds.push(studyId);
    }
  }
  const template = await studies.createTemplate(context, { studyId: studyIds[studyTypes.indexOf('INTERVIEWS') * studyStatuses.length]!, name: '45-minute interview' });
  const incentiveIds = await seedDemoIncentives(db, clock, providers, { workspaceId, userId: users.RESEARCHER! }, demoParticipants);

  // A signup form for the beta programme, with submissions from new people and one from the panel.
  const opsContext = { db, clock, workspaceId, userId: users.OPS_MANAGER!, canReadPersonalData: true };
  const form = await signups.createForm(opsContext, { name: 'Join the beta programme', populationId: populationIds[1]! });
  const propertyNamed = (name: string) => [...profileProperties, ...betaProperties].find((result) => result.personProperty.name === name)!.personProperty.propertyId;
  const submissionIds: string[] = [];
  for (const body of [
    { email: 'olivia.newman@signup.demo.example', firstName: 'Olivia', lastName: 'Newman', referralCode: 'SPRING-NEWSLETTER', properties: { [propertyNamed('Shopping frequency')]: 'Weekly' } },
    { email: 'sam.lee@signup.demo.example', firstName: 'Sam', lastName: 'Lee', referralCode: 'SPRING-NEWSLETTER' },
    { email: 'priya.shah@signup.demo.example', firstName: 'Priya', referralCode: 'FRIEND-ADA', properties: { [propertyNamed('Beta cohort')]: 'Gamma' } },
    { email: 'noah.brown@signup.demo.example', firstName: 'Noah', lastName: 'Brown' },
    { email: contactable[0]!.email, referralCode: 'IN-APP-BANNER' },
  ]) {
    submissionIds.push((await signups.submitForm({ db, clock }, form.signupFormId, body)).submissionId);
  }
  await signups.reviewSubmission(opsContext, form.signupFormId, submissionIds[0]!, { approvalStatus: 'APPROVED' });
  await signups.reviewSubmission(opsContext, form.signupFormId, submissionIds[3]!, { approvalStatus: 'REJECTED' });

  const segmentIds: string[] = [];
  for (const body of [
    {
      name: 'Weekly shoppers',
      description: 'Shop with us every week',
      filter: { operator: 'AND' as const, filters: [{ property: { propertyId: propertyNamed('Shopping frequency') }, comparison: 'IS_ANY_OF' as const, value: ['Weekly'] }] },
    },
    {
      name: 'Engaged this quarter',
      description: 'Completed an interview in the last 90 days',
      filter: {
        operator: 'AND' as const,
        filters: [{ property: { propertyGroup: 'PERSON' as const, propertyName: 'TOTAL_NUMBER_OF_INTERVIEWS_COMPLETED_L90' }, comparison: 'GREATER_THAN_OR_EQUAL' as const, value: 1 }],
      },
    },
  ]) {
    segmentIds.push((await segments.createSegment(opsContext, body)).segmentId);
  }

  // The demo people and the new people of the signup form.
  const { peopleCount } = await db
    .selectFrom('people')
    .where('workspace_id', '=', workspaceId)
    .select((eb) => eb.fn.countAll<string>().as('peopleCount'))
    .executeTakeFirstOrThrow();

  return {
    workspaceId,
    token: admin.token,
    tokens,
    users,
    populationIds,
    propertyIds,
    peopleCount: Number(peopleCount),
    propertyGroupIds: [profile.propertyGroupId, beta.propertyGroupId],
    studyIds,
    studyTemplateId: template.studyTemplateId,
    participantCount: demoParticipants.length,
    incentiveIds,
    signupFormId: form.signupFormId,
    submissionIds,
    segmentIds,
  };
}
