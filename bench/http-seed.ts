import { type Insertable, type Kysely, sql } from 'kysely';
import { createClock } from '../src/clock.js';
import { openDatabase } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import type { DB, ScreenerQuestionsTable, ScreenersTable, StudiesTable, StudyOwnersTable, StudyStatus, StudyType } from '../src/db/schema.js';
import { createStudy, putScreener } from '../src/families/studies/service.js';
import { createUser, createWorkspace } from '../src/families/workspaces/service.js';
import { idPrefixes, newId } from '../src/ids.js';
import type { BenchStore } from './lib/store.js';

export interface SeededData {
  workspaceId: string;
  /** A SUPER_ADMIN token of the target workspace (it may read screeners). */
  token: string;
  /** The study the bench requests: several owners, a screener with questions. */
  studyId: string;
  studies: number;
  workspaces: number;
}

/** A small deterministic generator, so every run seeds the same shapes. */
function random(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const studyTypes: StudyType[] = ['INTERVIEWS', 'INTERVIEWS', 'SURVEY', 'UNMODERATED_TEST', 'GROUP_INTERVIEW'];
const statuses: StudyStatus[] = ['DRAFT', 'ACTIVE', 'ACTIVE', 'PAUSED', 'CLOSED', 'CLOSED'];
const topics = ['checkout', 'onboarding', 'search', 'billing', 'mobile app', 'notifications', 'reporting', 'pricing page'];

async function insertInBatches<T extends keyof DB>(db: Kysely<DB>, table: T, rows: Insertable<DB[T]>[], batch = 500) {
  for (let start = 0; start < rows.length; start += batch) {
    // Kysely's insert types cannot follow a generic table name; the rows are typed above.
    await db
      .insertInto(table)
      .values(rows.slice(start, start + batch) as never)
      .execute();
  }
}

/**
 * A realistic workspace around the target: other workspaces sharing the tables (so lookups go
 * through the workspace-leading indexes among their rows), studies of every type and status,
 * one to four owners each, and a screener with questions on a share of them. The target study
 * is made through the studies service, as an API client would; the bulk goes in by batched
 * inserts.
 */
export async function seedHttpBench(store: BenchStore, totalStudies: number): Promise<SeededData> {
  const database = await openDatabase(store.kind === 'postgres' ? { databaseUrl: store.databaseUrl } : { dataDir: store.dataDir });
  const { db } = database;
  try {
    await migrateToLatest(db);
    const next = random(20261122);
    const base = Date.UTC(2025, 0, 1);
    const workspaces: { workspaceId: string; userIds: string[] }[] = [];
    const workspaceCount = 5;
    let target: { workspaceId: string; userId: string; token: string } | undefined;
    for (let index = 0; index < workspaceCount; index++) {
      const created = await createWorkspace(db, { name: `Bench workspace ${index}`, email: `admin${index}@bench.example`, fullName: `Admin ${index}` });
      const userIds = [created.userId];
      for (let user = 0; user < 12; user++) {
        const { userId } = await createUser(db, {
          workspaceId: created.workspaceId,
          email: `researcher${user}@ws${index}.bench.example`,
          fullName: `Researcher ${user} of workspace ${index}`,
          role: user % 3 === 0 ? 'OPS_MANAGER' : 'RESEARCHER',
        });
        userIds.push(userId);
      }
      workspaces.push({ workspaceId: created.workspaceId, userIds });
      if (index === 0) target = created;
    }
    if (!target) throw new Error('no workspace seeded');

    const context = { db, clock: createClock(), workspaceId: target.workspaceId, userId: target.userId, canReadScreeners: true, canReadPersonalData: true };
    const { studyId } = await createStudy(context, {
      studyType: 'INTERVIEWS',
      recruitmentStrategy: 'IN_SERVICE',
      studyPlan: {
        name: 'Checkout interviews, wave 3',
        externalName: 'Tell us how you pay online',
        description: 'Forty-five minute remote interviews with recent buyers about the checkout flow, saved cards and failed payments.',
        externalDescription: 'A 45-minute video call about how you pay online. You will be paid for your time.',
        startDate: '2026-12-01',
        endDate: '2026-12-19',
        researchPlanUrl: 'https://wiki.example.org/research/checkout-wave-3',
        participationLimit: 12,
        incentive: { amount: 75 },
        language: 'en',
        scheduler: { interviewDurationMinutes: 45 },
      },
      owners: { userIds: workspaces[0]!.userIds.slice(0, 3) },
    });
    await putScreener(context, studyId, {
      qualifyByDefault: false,
      showSchedulerToQualified: true,
      questions: [
        { name: 'How often do you buy something online?', type: 'SINGLE_SELECT', category: 'simple', isRequired: true, choices: [{ id: 'weekly', label: 'Every week' }, { id: 'monthly', label: 'Every month' }, { id: 'rarely', label: 'Rarely' }] },
        { name: 'Which devices do you shop on?', type: 'MULTI_SELECT', category: 'simple', isRequired: true, description: 'Choose every one that applies.', choices: [{ id: 'phone', label: 'Phone' }, { id: 'tablet', label: 'Tablet' }, { id: 'computer', label: 'Computer' }] },
        { name: 'When did you last abandon a purchase at checkout?', type: 'DATE', category: 'simple', isRequired: false },
        { name: 'Tell us about the last time a payment failed.', type: 'LONG_FORM', category: 'simple', isRequired: false },
        { name: 'How many cards do you keep saved with shops?', type: 'NUMBER', category: 'simple', isRequired: false },
        { name: 'Your email address', type: 'EMAIL', category: 'contact', isRequired: true },
        { name: 'Your phone number, for scheduling', type: 'PHONE_NUMBER', category: 'contact', isRequired: false },
        { name: 'I agree to be recorded', type: 'SINGLE_SELECT', category: 'consent', isRequired: true, questionTemplateId: 'qtp_recording_consent', choices: [{ id: 'yes', label: 'Yes' }, { id: 'no', label: 'No' }] },
      ],
    });

    const studies: Insertable<StudiesTable>[] = [];
    const owners: Insertable<StudyOwnersTable>[] = [];
    const screeners: Insertable<ScreenersTable>[] = [];
    const questions: Insertable<ScreenerQuestionsTable>[] = [];
    // Half the studies in the target workspace, the rest spread over the others.
    for (let index = 1; index < totalStudies; index++) {
      const workspace = index % 2 === 0 ? workspaces[0]! : workspaces[1 + (index % (workspaceCount - 1))]!;
      const createdMs = base + Math.floor(next() * 600 * 86_400_000);
      const at = new Date(createdMs).toISOString();
      const studyType = studyTypes[Math.floor(next() * studyTypes.length)]!;
      const external = next() < 0.2;
      const topic = topics[Math.floor(next() * topics.length)]!;
      const hasScreener = studyType !== 'SURVEY' && next() < 0.3;
      const studyId = newId(idPrefixes.study, createdMs);
      studies.push({
        workspace_id: workspace.workspaceId,
        study_id: studyId,
        study_type: studyType,
        recruitment_strategy: external ? 'EXTERNAL' : 'IN_SERVICE',
        recruitment_panel_provider: external ? 'PROVIDER_TWO' : null,
        status: statuses[Math.floor(next() * statuses.length)]!,
        plan: JSON.stringify({
          name: `${topic} study ${index}`,
          externalName: `Help us improve ${topic}`,
          description: `Research into ${topic}: ${'what people expect, where they get stuck, and what they do instead. '.repeat(1 + Math.floor(next() * 3))}`,
          participationLimit: 5 + Math.floor(next() * 40),
          incentive: { amount: 25 + 25 * Math.floor(next() * 4) },
          includeScreener: hasScreener,
          language: 'en',
        }),
        created_from_template_id: null,
        team_id: null,
        population_id: null,
        created_by_user_id: workspace.userIds[0]!,
        created_at: at,
        updated_at: at,
      });
      const ownerCount = 1 + Math.floor(next() * 4);
      const first = Math.floor(next() * workspace.userIds.length);
      for (let position = 0; position < ownerCount; position++) {
        owners.push({
          workspace_id: workspace.workspaceId,
          study_id: studyId,
          user_id: workspace.userIds[(first + position) % workspace.userIds.length]!,
          position,
        });
      }
      if (hasScreener) {
        const screenerId = newId(idPrefixes.screener, createdMs);
        screeners.push({
          workspace_id: workspace.workspaceId,
          screener_id: screenerId,
          study_id: studyId,
          type: 'SERVICE',
          show_scheduler_to_qualified: next() < 0.5,
          qualify_by_default: false,
          external_survey_id: null,
          survey_platform_collector_id: null,
          external_survey_setup_status: null,
          external_survey_setup_error_code: null,
          external_survey_setup_updated_at: null,
          custom_link_url: null,
          custom_link_tokens_json: null,
          created_at: at,
          updated_at: at,
        });
        const questionCount = 2 + Math.floor(next() * 6);
        for (let position = 0; position < questionCount; position++) {
          questions.push({
            workspace_id: workspace.workspaceId,
            question_id: newId(idPrefixes.question, createdMs),
            screener_id: screenerId,
            position,
            category: 'simple',
            type: 'SHORT_FORM',
            name: `Question ${position + 1} about ${topic}`,
            is_required: position === 0,
            description: null,
            mapped_to_property_id: null,
            question_template_id: null,
            revision: 1,
            question_key: `q${position + 1}`,
            choices: null,
            number_rules: null,
            show_when: null,
          });
        }
      }
    }
    await insertInBatches(db, 'studies', studies);
    await insertInBatches(db, 'study_owners', owners);
    await insertInBatches(db, 'screeners', screeners);
    await insertInBatches(db, 'screener_questions', questions);
    // Bulk loads leave the planner without statistics (and PGlite has no autovacuum).
    await sql`vacuum analyze`.execute(db);
    return { workspaceId: target.workspaceId, token: target.token, studyId, studies: totalStudies, workspaces: workspaceCount };
  } finally {
    await database.close();
  }
}
