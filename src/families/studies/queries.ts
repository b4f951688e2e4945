import { type Expression, type Insertable, type Kysely, sql } from 'kysely';
import { jsonArrayFrom, jsonObjectFrom } from 'kysely/helpers/postgres';
import { reusableStatement } from '../../db/reusable-statement.js';
import type { DB, NewStudy, ScreenerQuestionInput, StoredStudyPlan, StudyStatus, StudyTemplatesTable, StudyType, TemplateScreener } from '../../db/schema.js';

type Executor = Kysely<DB>;

function ownersOf(db: Executor, workspaceId: Expression<string>, studyId: Expression<string>) {
  return jsonArrayFrom(
    db
      .selectFrom('study_owners as o')
      .innerJoin('users as u', (join) => join.onRef('u.workspace_id', '=', 'o.workspace_id').onRef('u.user_id', '=', 'o.user_id'))
      .whereRef('o.workspace_id', '=', workspaceId)
      .whereRef('o.study_id', '=', studyId)
      .select(['u.user_id as userId', 'u.email_account_id as emailAccountId', 'u.fullname', 'u.email'])
      .orderBy('o.position'),
  );
}

function screenerOf(db: Executor, workspaceId: Expression<string>, studyId: Expression<string>) {
  return jsonObjectFrom(
    db
      .selectFrom('screeners as sc')
      .whereRef('sc.workspace_id', '=', workspaceId)
      .whereRef('sc.study_id', '=', studyId)
      .select((eb) => [
        'sc.screener_id as id',
        'sc.workspace_id as workspaceId',
        'sc.study_id as studyId',
        'sc.type',
        'sc.show_scheduler_to_qualified as showSchedulerToQualified',
        'sc.qualify_by_default as qualifyByDefault',
        'sc.current_revision as revision',
        'sc.created_at as createdAt',
        'sc.updated_at as updatedAt',
        'sc.external_survey_id as externalSurveyId',
        'sc.survey_platform_collector_id as surveyPlatformCollectorId',
        'sc.external_survey_setup_status as externalSurveySetupStatus',
        'sc.external_survey_setup_error_code as externalSurveySetupErrorCode',
        'sc.external_survey_setup_updated_at as externalSurveySetupUpdatedAt',
        'sc.custom_link_url as customLinkUrl',
        'sc.custom_link_tokens_json as customLinkTokensJson',
        jsonArrayFrom(
          eb
            .selectFrom('screener_questions as q')
            .whereRef('q.workspace_id', '=', 'sc.workspace_id')
            .whereRef('q.screener_id', '=', 'sc.screener_id')
            .whereRef('q.revision', '=', 'sc.current_revision')
            .select([
              'q.question_id as id',
              'q.question_key as key',
              'q.workspace_id as workspaceId',
              'q.category',
              'q.type',
              'q.name',
              'q.is_required as isRequired',
              'q.description',
              'q.mapped_to_property_id as mappedToPropertyId',
              'q.question_template_id as questionTemplateId',
              'q.choices',
              'q.number_rules as numberRules',
              'q.show_when as showWhen',
            ])
            .orderBy('q.position'),
        ).as('questions'),
      ]),
  );
}

const studyColumns = [
  's.study_id as studyId',
  's.study_type as studyType',
  's.recruitment_strategy as recruitmentStrategy',
  's.recruitment_panel_provider as recruitmentPanelProvider',
  's.status',
  's.plan',
  's.created_at as createdAt',
  's.created_from_template_id as createdFromTemplateId',
  's.team_id as teamId',
  's.population_id as populationId',
] as const;

function findStudyQuery(db: Executor, workspaceId: string, studyId: string, withScreener: boolean) {
  return db
    .selectFrom('studies as s')
    .where('s.workspace_id', '=', workspaceId)
    .where('s.study_id', '=', studyId)
    .select((eb) => [
      ...studyColumns,
      ownersOf(db, eb.ref('s.workspace_id'), eb.ref('s.study_id')).as('owners'),
      (withScreener ? screenerOf(db, eb.ref('s.workspace_id'), eb.ref('s.study_id')) : sql<null>`null`).as('screener'),
    ]);
}

/** Whether the study exists in the workspace: the one check every family makes of a studyId it is given. */
export async function studyExists(db: Executor, workspaceId: string, studyId: string): Promise<boolean> {
  const row = await db.selectFrom('studies').where('workspace_id', '=', workspaceId).where('study_id', '=', studyId).select('study_id').executeTakeFirst();
  return row !== undefined;
}

// E12's hot path: building this statement cost more CPU than running it (see bench/http.ts).
const findStudyStatements = {
  withScreener: reusableStatement((db: Executor, workspaceId: string, studyId: string) => findStudyQuery(db, workspaceId, studyId, true)),
  withoutScreener: reusableStatement((db: Executor, workspaceId: string, studyId: string) => findStudyQuery(db, workspaceId, studyId, false)),
};

/** One study with its owners and (optionally) its screener, in a single statement. */
export async function findStudy(db: Executor, workspaceId: string, studyId: string, withScreener: boolean) {
  const statement = withScreener ? findStudyStatements.withScreener : findStudyStatements.withoutScreener;
  const { rows } = await db.executeQuery(statement(db, workspaceId, studyId));
  return rows[0];
}

export type StudyRecord = NonNullable<Awaited<ReturnType<typeof findStudy>>>;

export interface StudyListFilter {
  status?: StudyStatus;
  studyType?: StudyType;
}

/** A page of studies, newest first, after the keyset `afterStudyId`; plus the exact total. */
export async function listStudies(db: Executor, workspaceId: string, filter: StudyListFilter, afterStudyId: string | undefined, size: number) {
  const base = db
    .selectFrom('studies as s')
    .where('s.workspace_id', '=', workspaceId)
    .$if(filter.status !== undefined, (query) => query.where('s.status', '=', filter.status!))
    .$if(filter.studyType !== undefined, (query) => query.where('s.study_type', '=', filter.studyType!));
  const [rows, count] = await Promise.all([
    base
      .$if(afterStudyId !== undefined, (query) => query.where('s.study_id', '<', afterStudyId!))
      .select((eb) => [...studyColumns, ownersOf(db, eb.ref('s.workspace_id'), eb.ref('s.study_id')).as('owners')])
      .orderBy('s.study_id', 'desc')
      .limit(size + 1)
      .execute(),
    base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.total) };
}

/** The study row locked for a change of status or screener within a transaction. */
export async function lockStudy(db: Executor, workspaceId: string, studyId: string) {
  return db
    .selectFrom('studies')
    .where('workspace_id', '=', workspaceId)
    .where('study_id', '=', studyId)
    .select(['study_id', 'status', 'study_type', 'recruitment_strategy', 'recruitment_panel_provider', 'plan', 'team_id', 'population_id'])
    .forUpdate()
    .executeTakeFirst();
}

export async function insertStudy(db: Executor, study: NewStudy) {
  await db.insertInto('studies').values(study).execute();
}

export async function updateStudyPlan(db: Executor, workspaceId: string, studyId: string, plan: StoredStudyPlan, updatedAt: string) {
  await db
    .updateTable('studies')
    .set({ plan: JSON.stringify(plan), updated_at: updatedAt })
    .where('workspace_id', '=', workspaceId)
    .where('study_id', '=', studyId)
    .execute();
}

export async function updateStudyStatus(db: Executor, workspaceId: string, studyId: string, status: StudyStatus, updatedAt: string) {
  await db
    .updateTable('studies')
    .set({ status, updated_at: updatedAt })
    .where('workspace_id', '=', workspaceId)
    .where('study_id', '=', studyId)
    .execute();
}

export async function insertStatusEvent(
  db: Executor,
  event: { workspaceId: string; studyId: string; from: StudyStatus | null; to: StudyStatus; userId: string; occurredAt: string },
) {
  await db
    .insertInto('study_status_events')
    .values({
      workspace_id: event.workspaceId,
      study_id: event.studyId,
      from_status: event.from,
      to_status: event.to,
      user_id: event.userId,
      actor_kind: 'USER',
      occurred_at: event.occurredAt,
    })
    .execute();
}

export async function insertOwners(db: Executor, workspaceId: string, studyId: string, userIds: string[]) {
  if (userIds.length === 0) return;
  await db
    .insertInto('study_owners')
    .values(userIds.map((userId, position) => ({ workspace_id: workspaceId, study_id: studyId, user_id: userId, position })))
    .execute();
}

export async function findOwnerIds(db: Executor, workspaceId: string, studyId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('study_owners')
    .where('workspace_id', '=', workspaceId)
    .where('study_id', '=', studyId)
    .select('user_id')
    .orderBy('position')
    .execute();
  return rows.map((row) => row.user_id);
}

export async function exists(db: Executor, table: 'teams' | 'populations' | 'study_templates', workspaceId: string, idColumn: string, id: string) {
  const row = await db
    .selectFrom(table)
    .where('workspace_id', '=', workspaceId)
    .where(sql.ref(idColumn), '=', id)
    .select(sql<number>`1`.as('found'))
    .executeTakeFirst();
  return row !== undefined;
}

export async function findScreenerRow(db: Executor, workspaceId: string, studyId: string) {
  return db
    .selectFrom('screeners')
    .where('workspace_id', '=', workspaceId)
    .where('study_id', '=', studyId)
    .select(['screener_id', 'type', 'show_scheduler_to_qualified', 'qualify_by_default', 'current_revision'])
    .executeTakeFirst();
}

export async function findScreenerForCopy(db: Executor, workspaceId: string, studyId: string): Promise<TemplateScreener | null> {
  const screener = await findScreenerRow(db, workspaceId, studyId);
  if (!screener) return null;
  const questions = await db
    .selectFrom('screener_questions')
    .where('workspace_id', '=', workspaceId)
    .where('screener_id', '=', screener.screener_id)
    .where('revision', '=', screener.current_revision)
    .select(['question_key', 'name', 'type', 'category', 'is_required', 'description', 'mapped_to_property_id', 'question_template_id', 'choices', 'number_rules', 'show_when'])
    .orderBy('position')
    .execute();
  return {
    type: screener.type,
    showSchedulerToQualified: screener.show_scheduler_to_qualified,
    qualifyByDefault: screener.qualify_by_default,
    questions: questions.map((question) => ({
      key: question.question_key,
      name: question.name,
      type: question.type,
      category: question.category,
      isRequired: question.is_required,
      ...(question.description !== null ? { description: question.description } : {}),
      ...(question.mapped_to_property_id !== null ? { mappedToPropertyId: question.mapped_to_property_id } : {}),
      ...(question.question_template_id !== null ? { questionTemplateId: question.question_template_id } : {}),
      ...(question.choices !== null ? { choices: question.choices } : {}),
      ...(question.number_rules !== null ? { numberRules: question.number_rules } : {}),
      ...(question.show_when !== null ? { showWhen: question.show_when } : {}),
    })),
  };
}

export async function deleteScreener(db: Executor, workspaceId: string, studyId: string) {
  await db.deleteFrom('screeners').where('workspace_id', '=', workspaceId).where('study_id', '=', studyId).execute();
}

export async function insertScreener(
  db: Executor,
  screener: { workspaceId: string; screenerId: string; studyId: string; type: TemplateScreener['type']; showSchedulerToQualified: boolean; qualifyByDefault: boolean; at: string },
) {
  const external = screener.type === 'EXTERNAL_SURVEY';
  await db
    .insertInto('screeners')
    .values({
      workspace_id: screener.workspaceId,
      screener_id: screener.screenerId,
      study_id: screener.studyId,
      type: screener.type,
      show_scheduler_to_qualified: screener.showSchedulerToQualified,
      qualify_by_default: screener.qualifyByDefault,
      external_survey_id: null,
      survey_platform_collector_id: null,
      // A survey platform screener is set up on the platform; until it reports back, it is in progress.
      external_survey_setup_status: external ? 'IN_PROGRESS' : null,
      external_survey_setup_error_code: null,
      external_survey_setup_updated_at: external ? screener.at : null,
      custom_link_url: null,
      custom_link_tokens_json: null,
      created_at: screener.at,
      updated_at: screener.at,
    })
    .execute();
}

/** A question version to write: a template's or a body's question with its new id and its key settled. */
export type NewQuestion = ScreenerQuestionInput & { questionId: string; key: string };

/** Writes one revision's questions. Question rows are never updated: an edit is a new revision. */
export async function insertQuestionRevision(db: Executor, workspaceId: string, screenerId: string, revision: number, questions: NewQuestion[]) {
  if (questions.length === 0) return;
  await db
    .insertInto('screener_questions')
    .values(
      questions.map((question, position) => ({
        workspace_id: workspaceId,
        question_id: question.questionId,
        screener_id: screenerId,
        revision,
        question_key: question.key,
        position,
        category: question.category,
        type: question.type,
        name: question.name,
        is_required: question.isRequired,
        description: question.description ?? null,
        mapped_to_property_id: question.mappedToPropertyId ?? null,
        question_template_id: question.questionTemplateId ?? null,
        choices: question.choices ? JSON.stringify(question.choices) : null,
        number_rules: question.numberRules ? JSON.stringify(question.numberRules) : null,
        show_when: question.showWhen ? JSON.stringify(question.showWhen) : null,
      })),
    )
    .execute();
}

/** Removes the question versions of earlier revisions that no answer names; answered ones stay with their answers. */
export async function pruneUnansweredRevisions(db: Executor, workspaceId: string, screenerId: string, currentRevision: number) {
  await db
    .deleteFrom('screener_questions as q')
    .where('q.workspace_id', '=', workspaceId)
    .where('q.screener_id', '=', screenerId)
    .where('q.revision', '<>', currentRevision)
    .where(({ not, exists, selectFrom }) =>
      not(exists(selectFrom('screener_answers as a').whereRef('a.workspace_id', '=', 'q.workspace_id').whereRef('a.question_id', '=', 'q.question_id').select(sql<number>`1`.as('one')))),
    )
    .execute();
}

/** Whether any question version of the screener, of any revision, has an answer. */
export async function screenerHasAnswers(db: Executor, workspaceId: string, screenerId: string): Promise<boolean> {
  const row = await db
    .selectFrom('screener_answers as a')
    .innerJoin('screener_questions as q', (join) => join.onRef('q.workspace_id', '=', 'a.workspace_id').onRef('q.question_id', '=', 'a.question_id'))
    .where('a.workspace_id', '=', workspaceId)
    .where('q.screener_id', '=', screenerId)
    .select(sql<number>`1`.as('one'))
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

export async function updateScreenerSettings(
  db: Executor,
  workspaceId: string,
  screenerId: string,
  settings: { showSchedulerToQualified: boolean; qualifyByDefault: boolean; revision: number; at: string },
) {
  await db
    .updateTable('screeners')
    .set({
      show_scheduler_to_qualified: settings.showSchedulerToQualified,
      qualify_by_default: settings.qualifyByDefault,
      current_revision: settings.revision,
      updated_at: settings.at,
    })
    .where('workspace_id', '=', workspaceId)
    .where('screener_id', '=', screenerId)
    .execute();
}

const templateColumns = [
  'study_template_id as studyTemplateId',
  'name',
  'study_type as studyType',
  'recruitment_strategy as recruitmentStrategy',
  'recruitment_panel_provider as recruitmentPanelProvider',
  'plan',
  'screener',
  'created_from_study_id as createdFromStudyId',
  'created_at as createdAt',
] as const;

export async function findTemplate(db: Executor, workspaceId: string, templateId: string) {
  return db
    .selectFrom('study_templates')
    .where('workspace_id', '=', workspaceId)
    .where('study_template_id', '=', templateId)
    .select(templateColumns)
    .executeTakeFirst();
}

export async function insertTemplate(db: Executor, template: Insertable<StudyTemplatesTable>) {
  await db.insertInto('study_templates').values(template).execute();
}

export async function listTemplates(db: Executor, workspaceId: string, afterTemplateId: string | undefined, size: number) {
  const base = db.selectFrom('study_templates').where('workspace_id', '=', workspaceId);
  const [rows, count] = await Promise.all([
    base
      .$if(afterTemplateId !== undefined, (query) => query.where('study_template_id', '<', afterTemplateId!))
      .select(templateColumns)
      .orderBy('study_template_id', 'desc')
      .limit(size + 1)
      .execute(),
    base.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(count.total) };
}

/**
 * The screener as a person answers it: its current revision's questions in order, with their
 * rules, texts and mappings. Undefined when the study has none.
 */
export async function findAnswerableScreener(db: Executor, workspaceId: string, studyId: string) {
  // One statement (each page view and each submission reads it): the screener row beside its current revision's questions.
  const rows = await db
    .selectFrom('screeners as s')
    .leftJoin('screener_questions as q', (join) =>
      join.onRef('q.workspace_id', '=', 's.workspace_id').onRef('q.screener_id', '=', 's.screener_id').onRef('q.revision', '=', 's.current_revision'),
    )
    .where('s.workspace_id', '=', workspaceId)
    .where('s.study_id', '=', studyId)
    .select([
      's.screener_id',
      's.current_revision',
      's.qualify_by_default',
      's.show_scheduler_to_qualified',
      'q.question_id',
      'q.question_key',
      'q.type',
      'q.name',
      'q.description',
      'q.is_required',
      'q.choices',
      'q.number_rules',
      'q.show_when',
      'q.mapped_to_property_id',
    ])
    .orderBy('q.position')
    .execute();
  const screener = rows[0];
  if (!screener) return undefined;
  const questions = rows
    .filter((row) => row.question_id !== null)
    .map((row) => ({
      question_id: row.question_id!,
      question_key: row.question_key!,
      type: row.type!,
      name: row.name!,
      description: row.description,
      is_required: row.is_required!,
      choices: row.choices,
      number_rules: row.number_rules,
      show_when: row.show_when,
      mapped_to_property_id: row.mapped_to_property_id,
    }));
  return { screenerId: screener.screener_id, revision: screener.current_revision, qualifyByDefault: screener.qualify_by_default, showSchedulerToQualified: screener.show_scheduler_to_qualified, questions };
}
