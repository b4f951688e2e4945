import type { Kysely } from 'kysely';
import type { DB, ScreenerType, StoredStudyPlan, StudyStatus, StudyType, TemplateScreener } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { ApiError, badRequest, conflict, draftStatusError, notFound } from '../../http/errors.js';
import { maskEmail, maskText } from '../../http/masking.js';
import { idPrefixes, newId } from '../../ids.js';
import { findUsers } from '../users/queries.js';
import * as queries from './queries.js';
import type { CreateStudyBody, PutScreenerBody, QuestionInput, StudyPlanInput } from './schemas.js';
import { findProperties } from '../properties/queries.js';
import { checkDefinition, checkMapping, isNumberType, type ScreenerDefinition, type ScreenerQuestionRules, yesNoChoices } from './screener-rules.js';
import type { ErrorItem } from '../../http/errors.js';
import type { ScreenerQuestionInput } from '../../db/schema.js';
import type { CallContext as SharedCallContext } from '../../context.js';
import { recordEvents } from '../webhooks/outbox.js';

export type CallContext = Pick<SharedCallContext, 'db' | 'clock' | 'workspaceId' | 'userId' | 'canReadScreeners' | 'canReadPersonalData'>;

const now = (context: CallContext) => context.clock.now().toISOString();

/** JSON aggregation renders timestamps with an offset; responses use ISO 8601 in UTC. */
const iso = (value: string) => new Date(value).toISOString();
const isoOrNull = (value: string | null) => (value === null ? null : iso(value));

type RawScreener = NonNullable<queries.StudyRecord['screener']>;

type RawQuestion = RawScreener['questions'][number];

/** A stored question version as the API shows it: the number rules flattened onto the question, absent fields left out. */
function presentQuestion(question: RawQuestion) {
  const { choices, numberRules, showWhen, ...rest } = question;
  return {
    ...rest,
    ...(choices !== null ? { choices } : {}),
    ...(numberRules !== null
      ? {
          ...(numberRules.minimum !== undefined ? { minimum: numberRules.minimum } : {}),
          ...(numberRules.maximum !== undefined ? { maximum: numberRules.maximum } : {}),
          integer: numberRules.integer,
          ranges: numberRules.ranges,
        }
      : {}),
    ...(showWhen !== null ? { showWhen } : {}),
  };
}

/** Exported for the http bench's floor, which must present the same row as the service does. */
export function presentScreener(screener: RawScreener) {
  return {
    ...screener,
    createdAt: iso(screener.createdAt),
    updatedAt: iso(screener.updatedAt),
    externalSurveySetupUpdatedAt: isoOrNull(screener.externalSurveySetupUpdatedAt),
    questions: screener.questions.map(presentQuestion),
  };
}

/** The stored plan as the reference shows it: incentiveType and currency derived, includeScreener always present. */
export function presentPlan(plan: StoredStudyPlan) {
  const { incentive, ...rest } = plan;
  const presented = { ...rest, includeScreener: plan.includeScreener ?? false };
  if (!incentive) return presented;
  return {
    ...presented,
    incentive: {
      ...incentive,
      incentiveType: incentive.customIncentiveId !== undefined ? ('CUSTOM' as const) : ('MONEY_OR_GIFT_CARD' as const),
      currency: 'USD' as const,
    },
  };
}

function presentSummary(record: Omit<queries.StudyRecord, 'screener'>, canReadPersonalData: boolean) {
  const { plan, owners, ...rest } = record;
  return {
    ...rest,
    createdAt: iso(record.createdAt),
    studyPlan: presentPlan(plan),
    owners: owners.map((owner) => ({ ...owner, fullname: maskText(owner.fullname, canReadPersonalData), email: maskEmail(owner.email, canReadPersonalData) })),
  };
}

function presentStudy(record: queries.StudyRecord, canReadPersonalData: boolean) {
  const { screener, ...summary } = record;
  return { ...presentSummary(summary, canReadPersonalData), screener: screener ? presentScreener(screener) : null };
}

/** Merges a plan patch: only supplied fields change; the incentive merges field by field. */
export function mergePlan(base: StoredStudyPlan, patch: StudyPlanInput): StoredStudyPlan {
  const merged: StoredStudyPlan = { ...base, ...patch };
  if (patch.incentive) merged.incentive = { ...base.incentive, ...patch.incentive };
  if (patch.scheduler) merged.scheduler = { ...base.scheduler, ...patch.scheduler };
  return merged;
}

function checkDates(plan: StoredStudyPlan) {
  if (plan.startDate && plan.endDate && plan.endDate < plan.startDate) {
    throw badRequest('endDate must be on or after startDate', ['studyPlan', 'endDate']);
  }
}

/** The study as the caller may see it. `db` is the transaction that changed it, when there was one, so
 * the response shows that change and not a later request's. */
export async function getStudy(context: CallContext, studyId: string, db: Kysely<DB> = context.db) {
  const record = await queries.findStudy(db, context.workspaceId, studyId, context.canReadScreeners);
  if (!record) throw notFound('Study', ['studyId']);
  return presentStudy(record, context.canReadPersonalData);
}

async function getSummary(context: CallContext, studyId: string, db: Kysely<DB>) {
  const record = await queries.findStudy(db, context.workspaceId, studyId, false);
  if (!record) throw notFound('Study', ['studyId']);
  const { screener: _screener, ...summary } = record;
  return presentSummary(summary, context.canReadPersonalData);
}

export async function listStudies(context: CallContext, filter: queries.StudyListFilter, afterStudyId: string | undefined, size: number) {
  const { rows, total } = await queries.listStudies(context.db, context.workspaceId, filter, afterStudyId, size);
  return { rows: rows.slice(0, size).map((row) => presentSummary(row, context.canReadPersonalData)), hasNextPage: rows.length > size, total };
}

interface StudySource {
  studyType: StudyType;
  recruitmentStrategy: 'IN_SERVICE' | 'EXTERNAL';
  recruitmentPanelProvider: 'PROVIDER_ONE' | 'PROVIDER_TWO' | null;
  plan: StoredStudyPlan;
  screener: TemplateScreener | null;
  ownerIds?: string[];
  teamId?: string | null;
  populationId?: string | null;
  templateId: string | null;
}

async function loadSource(db: Kysely<DB>, workspaceId: string, body: CreateStudyBody): Promise<StudySource | undefined> {
  if (body.idOfStudyToDuplicate !== undefined) {
    const original = await queries.lockStudy(db, workspaceId, body.idOfStudyToDuplicate);
    if (!original) throw notFound('Study', ['idOfStudyToDuplicate']);
    return {
      studyType: original.study_type,
      recruitmentStrategy: original.recruitment_strategy,
      recruitmentPanelProvider: original.recruitment_panel_provider,
      plan: original.plan,
      screener: await queries.findScreenerForCopy(db, workspaceId, original.study_id),
      ownerIds: await queries.findOwnerIds(db, workspaceId, original.study_id),
      teamId: original.team_id,
      populationId: original.population_id,
      templateId: null,
    };
  }
  if (body.studyTemplateId !== undefined) {
    const template = await queries.findTemplate(db, workspaceId, body.studyTemplateId);
    if (!template) throw notFound('Study template', ['studyTemplateId']);
    return {
      studyType: template.studyType,
      recruitmentStrategy: template.recruitmentStrategy,
      recruitmentPanelProvider: template.recruitmentPanelProvider,
      plan: template.plan,
      screener: template.screener,
      templateId: template.studyTemplateId,
    };
  }
  return undefined;
}

async function checkOwners(db: Kysely<DB>, workspaceId: string, userIds: string[]) {
  const found = await findUsers(db, workspaceId, userIds);
  const active = new Set(found.filter((user) => user.status !== 'DEACTIVATED').map((user) => user.userId));
  const missing = userIds.findIndex((userId) => !active.has(userId));
  if (missing !== -1) throw notFound('User', ['owners', 'userIds', String(missing)]);
}

/**
 * Whether a copied screener (of a duplicated study or a template) may follow a study of this
 * type: an EXTERNAL_SURVEY screener lives on a survey platform, so only a SURVEY study keeps one;
 * a SERVICE screener fits any study.
 */
const screenerFits = (screenerType: ScreenerType, studyType: StudyType) => screenerType === 'SERVICE' || studyType === 'SURVEY';

/** The empty screener includeScreener true gives a study without one: type SERVICE, whatever the study type (contract §3). */
const emptyScreener = (): TemplateScreener => ({ type: 'SERVICE', showSchedulerToQualified: false, qualifyByDefault: false, questions: [] });

/** A question about to be written: its new version id, and a key (templates made before keys existed have none). */
const newQuestion = (question: ScreenerQuestionInput): queries.NewQuestion => ({
  ...question,
  key: question.key ?? newId(idPrefixes.questionKey),
  questionId: newId(idPrefixes.question),
});

async function addScreener(db: Kysely<DB>, workspaceId: string, studyId: string, screener: TemplateScreener, at: string) {
  const screenerId = newId(idPrefixes.screener);
  await queries.insertScreener(db, { workspaceId, screenerId, studyId, type: screener.type, showSchedulerToQualified: screener.showSchedulerToQualified, qualifyByDefault: screener.qualifyByDefault, at });
  await queries.insertQuestionRevision(db, workspaceId, screenerId, 1, screener.questions.map(newQuestion));
}

export async function createStudy(context: CallContext, body: CreateStudyBody): Promise<{ studyId: string }> {
  if (body.idOfStudyToDuplicate !== undefined && body.studyTemplateId !== undefined) {
    throw badRequest('idOfStudyToDuplicate and studyTemplateId cannot be combined', ['studyTemplateId']);
  }
  return inTransaction(context.db, async (db) => {
    const { workspaceId } = context;
    const source = await loadSource(db, workspaceId, body);
    const studyType = body.studyType ?? source?.studyType;
    if (!studyType) throw badRequest('studyType is required unless a study is duplicated or a template is used', ['studyType']);
    const recruitmentStrategy = body.recruitmentStrategy ?? source?.recruitmentStrategy;
    if (!recruitmentStrategy) {
      throw badRequest('recruitmentStrategy is required unless a study is duplicated or a template is used', ['recruitmentStrategy']);
    }
    if (body.recruitmentPanelProvider !== undefined && recruitmentStrategy !== 'EXTERNAL') {
      throw badRequest('recruitmentPanelProvider applies only to EXTERNAL recruitment', ['recruitmentPanelProvider']);
    }
    const recruitmentPanelProvider =
      recruitmentStrategy === 'EXTERNAL' ? (body.recruitmentPanelProvider ?? source?.recruitmentPanelProvider ?? 'PROVIDER_TWO') : null;
    const plan = mergePlan(source?.plan ?? {}, body.studyPlan);
    if (!plan.name) throw badRequest('name is required', ['studyPlan', 'name']);
    checkDates(plan);

    const teamId = body.teamId ?? source?.teamId ?? null;
    if (body.teamId !== undefined && !(await queries.exists(db, 'teams', workspaceId, 'team_id', body.teamId))) throw notFound('Team', ['teamId']);
    const populationId = body.populationId ?? source?.populationId ?? null;
    if (body.populationId !== undefined && !(await queries.exists(db, 'populations', workspaceId, 'population_id', body.populationId))) {
      throw notFound('Population', ['populationId']);
    }
    const ownerIds = body.owners?.userIds ?? source?.ownerIds ?? [context.userId];
    if (body.owners) await checkOwners(db, workspaceId, ownerIds);

    let screener = source?.screener && screenerFits(source.screener.type, studyType) ? source.screener : null;
    if (plan.includeScreener && !screener) screener = emptyScreener();
    plan.includeScreener = screener !== null && plan.includeScreener !== false;

    const at = now(context);
    const studyId = newId(idPrefixes.study);
    await queries.insertStudy(db, {
      workspace_id: workspaceId,
      study_id: studyId,
      study_type: studyType,
      recruitment_strategy: recruitmentStrategy,
      recruitment_panel_provider: recruitmentPanelProvider,
      status: 'DRAFT',
      plan: JSON.stringify(plan),
      created_from_template_id: source?.templateId ?? null,
      team_id: teamId,
      population_id: populationId,
      created_by_user_id: context.userId,
      created_at: at,
      updated_at: at,
    });
    await queries.insertOwners(db, workspaceId, studyId, ownerIds);
    if (screener) await addScreener(db, workspaceId, studyId, screener, at);
    await queries.insertStatusEvent(db, { workspaceId, studyId, from: null, to: 'DRAFT', userId: context.userId, occurredAt: at });
    await recordEvents(db, workspaceId, [{ type: 'study.status_changed', data: { studyId, from: null, to: 'DRAFT' } }], at);
    return { studyId };
  });
}

export async function updateStudy(context: CallContext, studyId: string, patch: { studyPlan?: StudyPlanInput }) {
  return inTransaction(context.db, async (db) => {
    const study = await queries.lockStudy(db, context.workspaceId, studyId);
    if (!study) throw notFound('Study', ['studyId']);
    if (!patch.studyPlan) return getStudy(context, studyId, db);
    const plan = mergePlan(study.plan, patch.studyPlan);
    checkDates(plan);
    const at = now(context);
    if (patch.studyPlan.includeScreener === true && !(await queries.findScreenerRow(db, context.workspaceId, studyId))) {
      await addScreener(db, context.workspaceId, studyId, emptyScreener(), at);
    }
    await queries.updateStudyPlan(db, context.workspaceId, studyId, plan, at);
    return getStudy(context, studyId, db);
  });
}

/** Which status changes E5 and launch allow; CLOSED is final. `path` names what the caller asked with. */
export function checkStatusChange(from: StudyStatus, to: StudyStatus, path: string[]): void {
  if (from === to) return;
  if (from === 'CLOSED') throw conflict('A closed study cannot change status', path);
  if (to === 'ACTIVE' && from !== 'DRAFT' && from !== 'PAUSED') throw conflict(`A ${from} study cannot be launched`, path);
}

async function changeStatus(context: CallContext, studyId: string, to: StudyStatus, path: string[]) {
  return inTransaction(context.db, async (db) => {
    const study = await queries.lockStudy(db, context.workspaceId, studyId);
    if (!study) throw notFound('Study', ['studyId']);
    checkStatusChange(study.status, to, path);
    if (study.status !== to) {
      const at = now(context);
      await queries.updateStudyStatus(db, context.workspaceId, studyId, to, at);
      await queries.insertStatusEvent(db, { workspaceId: context.workspaceId, studyId, from: study.status, to, userId: context.userId, occurredAt: at });
      await recordEvents(db, context.workspaceId, [{ type: 'study.status_changed', data: { studyId, from: study.status, to } }], at);
    }
    return getSummary(context, studyId, db);
  });
}

export function setStudyStatus(context: CallContext, studyId: string, to: 'PAUSED' | 'CLOSED') {
  return changeStatus(context, studyId, to, ['status']);
}

export function launchStudy(context: CallContext, studyId: string) {
  return changeStatus(context, studyId, 'ACTIVE', ['studyId']);
}

/** A body's question as stored: defaults settled, the number fields gathered into numberRules, YES_NO's choices kept only when given. */
function toStoredQuestion(question: QuestionInput & { key: string }): ScreenerQuestionInput {
  const { choices, minimum, maximum, integer, ranges, showWhen, category, isRequired, ...rest } = question;
  return {
    ...rest,
    category: category ?? 'simple',
    isRequired: isRequired ?? false,
    ...(choices !== undefined ? { choices: choices.map((choice) => ({ id: choice.id, label: choice.label, rule: choice.rule ?? 'NEUTRAL' })) } : {}),
    ...(isNumberType(question.type)
      ? {
          numberRules: {
            ...(minimum !== undefined ? { minimum } : {}),
            ...(maximum !== undefined ? { maximum } : {}),
            integer: question.type === 'SCALE' || integer === true,
            ranges: (ranges ?? []).map((range) => ({ ...range })),
          },
        }
      : {}),
    ...(showWhen !== undefined
      ? { showWhen: showWhen.choiceIds !== undefined ? { questionKey: showWhen.questionKey, choiceIds: [...showWhen.choiceIds] } : { questionKey: showWhen.questionKey, range: { ...showWhen.range } } }
      : {}),
  };
}

/**
 * The mapped properties checked against their questions: an id the workspace does not have (or
 * another workspace's) is a 404 naming the field, like every unknown id in a body; a property of
 * an incompatible type, or without an option for a choice's label, is a 400. Two questions may
 * not write the same property.
 */
async function checkMappedProperties(db: Kysely<DB>, workspaceId: string, questions: readonly QuestionInput[]) {
  const mapped = questions.flatMap((question, index) => (question.mappedToPropertyId !== undefined ? [{ question, index, propertyId: question.mappedToPropertyId }] : []));
  if (mapped.length === 0) return;
  const found = new Map((await findProperties(db, workspaceId, [...new Set(mapped.map((entry) => entry.propertyId))])).map((property) => [property.propertyId, property]));
  const missing = mapped.filter((entry) => !found.has(entry.propertyId));
  if (missing.length > 0) {
    throw new ApiError('NOT_FOUND', missing.map((entry) => ({ message: 'Property not found', path: ['questions', String(entry.index), 'mappedToPropertyId'] })));
  }
  const errors: ErrorItem[] = [];
  const firstIndex = new Map<string, number>();
  for (const { question, index, propertyId } of mapped) {
    const first = firstIndex.get(propertyId);
    if (first !== undefined) {
      errors.push({ message: `questions/${first} already maps to this property; a property takes the answer of one question`, path: ['questions', String(index), 'mappedToPropertyId'] });
      continue;
    }
    firstIndex.set(propertyId, index);
    const property = found.get(propertyId)!;
    errors.push(...checkMapping(question, { propertyType: property.propertyType, optionNames: property.options.map((option) => option.name) }, ['questions', String(index)]));
  }
  if (errors.length > 0) throw new ApiError('VALIDATION', errors);
}

/**
 * Writes the screener as a new revision: new question versions, the screener pointing at them,
 * and the earlier revisions' versions that no answer names removed. A live study's screener may
 * change too (answers keep the versions they answered); a closed study's may not.
 * The screener as written; null for a token that may write screeners but not read them.
 */
export async function putScreener(context: CallContext, studyId: string, body: PutScreenerBody) {
  const questions = body.questions.map((question) => ({ ...question, key: question.key ?? newId(idPrefixes.questionKey) }));
  const definitionErrors = checkDefinition(questions);
  return inTransaction(context.db, async (db) => {
    const { workspaceId } = context;
    const study = await queries.lockStudy(db, workspaceId, studyId);
    if (!study) throw notFound('Study', ['studyId']);
    if (study.study_type === 'SURVEY') throw badRequest("A survey study's screener is built on its survey platform", ['studyId']);
    if (study.status === 'CLOSED') throw conflict("A closed study's screener cannot change", ['studyId']);
    if (definitionErrors.length > 0) throw new ApiError('VALIDATION', definitionErrors);
    await checkMappedProperties(db, workspaceId, questions);
    const at = now(context);
    const existing = await queries.findScreenerRow(db, workspaceId, studyId);
    const settings = {
      showSchedulerToQualified: body.showSchedulerToQualified ?? existing?.show_scheduler_to_qualified ?? false,
      qualifyByDefault: body.qualifyByDefault ?? existing?.qualify_by_default ?? false,
    };
    const stored = questions.map(toStoredQuestion);
    if (existing) {
      const revision = existing.current_revision + 1;
      await queries.updateScreenerSettings(db, workspaceId, existing.screener_id, { ...settings, revision, at });
      await queries.insertQuestionRevision(db, workspaceId, existing.screener_id, revision, stored.map(newQuestion));
      await queries.pruneUnansweredRevisions(db, workspaceId, existing.screener_id, revision);
    } else {
      await addScreener(db, workspaceId, studyId, { type: 'SERVICE', ...settings, questions: stored }, at);
    }
    await queries.updateStudyPlan(db, workspaceId, studyId, { ...study.plan, includeScreener: true }, at);
    if (!context.canReadScreeners) return null;
    const written = await queries.findStudy(db, workspaceId, studyId, true);
    return presentScreener(written!.screener!);
  });
}

export async function deleteScreener(context: CallContext, studyId: string) {
  await inTransaction(context.db, async (db) => {
    const { workspaceId } = context;
    const study = await queries.lockStudy(db, workspaceId, studyId);
    if (!study) throw notFound('Study', ['studyId']);
    if (study.study_type === 'SURVEY') throw badRequest('Screeners of survey studies cannot be deleted', ['studyId']);
    if (study.status !== 'DRAFT') throw draftStatusError();
    const screener = await queries.findScreenerRow(db, workspaceId, studyId);
    if (!screener) throw notFound('Screener', ['studyId']);
    if (screener.type !== 'SERVICE') throw badRequest('Only screeners of type SERVICE can be deleted', ['studyId']);
    if (await queries.screenerHasAnswers(db, workspaceId, screener.screener_id)) throw conflict('The screener has answers; they keep the questions they answered', ['studyId']);
    await queries.deleteScreener(db, workspaceId, studyId);
    await queries.updateStudyPlan(db, workspaceId, studyId, { ...study.plan, includeScreener: false }, now(context));
  });
  return { success: true, studyId };
}

function presentTemplate(template: NonNullable<Awaited<ReturnType<typeof queries.findTemplate>>>) {
  const { plan, screener, ...rest } = template;
  return { ...rest, createdAt: iso(template.createdAt), studyPlan: presentPlan(plan), hasScreener: screener !== null };
}

export async function createTemplate(context: CallContext, body: { studyId: string; name: string }) {
  const templateId = newId(idPrefixes.studyTemplate);
  return inTransaction(context.db, async (db) => {
    const study = await queries.lockStudy(db, context.workspaceId, body.studyId);
    if (!study) throw notFound('Study', ['studyId']);
    await queries.insertTemplate(db, {
      workspace_id: context.workspaceId,
      study_template_id: templateId,
      name: body.name,
      study_type: study.study_type,
      recruitment_strategy: study.recruitment_strategy,
      recruitment_panel_provider: study.recruitment_panel_provider,
      plan: JSON.stringify(study.plan),
      screener: JSON.stringify(await queries.findScreenerForCopy(db, context.workspaceId, body.studyId)),
      created_from_study_id: body.studyId,
      created_by_user_id: context.userId,
      created_at: now(context),
    });
    return getTemplate(context, templateId, db);
  });
}

export async function getTemplate(context: CallContext, templateId: string, db: Kysely<DB> = context.db) {
  const template = await queries.findTemplate(db, context.workspaceId, templateId);
  if (!template) throw notFound('Study template', ['studyTemplateId']);
  return presentTemplate(template);
}

export async function listTemplates(context: CallContext, afterTemplateId: string | undefined, size: number) {
  const { rows, total } = await queries.listTemplates(context.db, context.workspaceId, afterTemplateId, size);
  return { rows: rows.slice(0, size).map(presentTemplate), hasNextPage: rows.length > size, total };
}

export { ApiError };

/** A question of the screener a person answers: its rules (screener-rules.ts) and what the page shows. */
export interface AnswerableQuestion extends ScreenerQuestionRules {
  text: string;
  description: string | null;
  mappedToPropertyId: string | null;
}

/** The screener as a person answers it (its current revision), or undefined when the study has none. */
export async function findAnswerableScreener(
  db: Kysely<DB>,
  workspaceId: string,
  studyId: string,
): Promise<(ScreenerDefinition & { revision: number; showSchedulerToQualified: boolean; questions: AnswerableQuestion[] }) | undefined> {
  const screener = await queries.findAnswerableScreener(db, workspaceId, studyId);
  if (!screener) return undefined;
  return {
    revision: screener.revision,
    showSchedulerToQualified: screener.showSchedulerToQualified,
    qualifyByDefault: screener.qualifyByDefault,
    questions: screener.questions.map((question) => ({
      id: question.question_id,
      key: question.question_key,
      type: question.type,
      isRequired: question.is_required,
      choices: question.type === 'YES_NO' ? (question.choices ?? yesNoChoices) : question.choices,
      numberRules: question.number_rules,
      showWhen: question.show_when,
      text: question.name,
      description: question.description,
      mappedToPropertyId: question.mapped_to_property_id,
    })),
  };
}
