import type { Kysely } from 'kysely';
import type { CallContext as SharedCallContext } from '../../context.js';
import type { DB, QuotaAnswerCondition } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { ApiError, type ErrorItem, notFound } from '../../http/errors.js';
import { idPrefixes, newId } from '../../ids.js';
import { loadCustomProperties, type PropertyDefinition } from '../../search/catalogue.js';
import { compileRootFilter, namedPropertyIds } from '../../search/compile.js';
import { checkMemberships } from '../../search/run.js';
import type { RootFilter } from '../../search/schemas.js';
import { byPersonId } from '../people/search-target.js';
import { catalogue } from '../search-catalogue.js';
import { segmentGroups, segmentMembershipPath } from '../segments/search-membership.js';
import { maskPersonalValues } from '../segments/service.js';
import { lockStudy, studyExists } from '../studies/queries.js';
import { type AnswerValue, isChoiceType, isNumberType, yesNoChoices } from '../studies/screener-rules.js';
import { findAnswerableScreener } from '../studies/service.js';
import * as queries from './queries.js';
import type { PutQuotaGroupsBody } from './schemas.js';

export type CallContext = Pick<SharedCallContext, 'db' | 'clock' | 'workspaceId' | 'canReadPersonalData' | 'canReadScreeners'>;

export interface QuotaGroup {
  quotaGroupId: string;
  studyId: string;
  name: string;
  position: number;
  cap: number;
  filled: number;
  isFull: boolean;
  answers: QuotaAnswerCondition[] | null;
  filter: RootFilter | null;
  createdAt: string;
  updatedAt: string;
}

const iso = (value: string) => new Date(value).toISOString();

/**
 * The groups as responses. Values a filter compares with personal data read "***" for a token
 * without the personal-data right (as a segment's do); the answer conditions, which name the
 * screener's questions and choices, are null for a token that cannot read screeners.
 */
async function present(context: CallContext, rows: readonly queries.QuotaGroupRow[]): Promise<QuotaGroup[]> {
  const masking = rows.filter((row) => row.uses_personal_data && row.filter !== null && !context.canReadPersonalData);
  const customProperties =
    masking.length === 0 ? new Map<string, PropertyDefinition>() : await loadCustomProperties(context.db, context.workspaceId, [...new Set(masking.flatMap((row) => namedPropertyIds(row.filter as RootFilter, catalogue)))]);
  return rows.map((row) => {
    const filter = row.filter as RootFilter | null;
    return {
      quotaGroupId: row.quota_group_id,
      studyId: row.study_id,
      name: row.name,
      position: row.position,
      cap: row.cap,
      filled: row.filled,
      isFull: row.filled >= row.cap,
      answers: context.canReadScreeners ? row.answers : null,
      filter: filter !== null && row.uses_personal_data && !context.canReadPersonalData ? maskPersonalValues(filter, customProperties) : filter,
      createdAt: iso(row.created_at),
      updatedAt: iso(row.updated_at),
    };
  });
}

export async function listQuotaGroups(context: CallContext, studyId: string): Promise<{ quotaGroups: QuotaGroup[] }> {
  if (!(await studyExists(context.db, context.workspaceId, studyId))) throw notFound('Study', ['studyId']);
  return { quotaGroups: await present(context, await queries.listGroups(context.db, context.workspaceId, studyId)) };
}

type Question = { key: string; type: string; choices?: readonly { id: string }[] | null };

/** An answer condition checked against the study's current screener: a question of it, and a choice or range its type answers. */
function checkAnswerCondition(condition: QuotaAnswerCondition, questions: ReadonlyMap<string, Question>, path: string[]): ErrorItem[] {
  const question = questions.get(condition.questionKey);
  if (!question) {
    const keys = [...questions.keys()];
    return [{ message: `questionKey must be the key of a question of the study's screener; ${condition.questionKey} is not (keys: ${keys.join(', ') || 'the study has no screener questions'})`, path: [...path, 'questionKey'] }];
  }
  const hasChoices = 'choiceIds' in condition && condition.choiceIds !== undefined;
  const hasRange = 'range' in condition && condition.range !== undefined;
  if (hasChoices === hasRange) return [{ message: 'a condition takes exactly one of choiceIds (for a select or YES_NO question) and range (for a NUMBER or SCALE question)', path }];
  if (hasChoices) {
    if (!isChoiceType(question.type)) return [{ message: `${condition.questionKey} is a ${question.type} question; choiceIds apply to SINGLE_SELECT, MULTI_SELECT and YES_NO questions`, path: [...path, 'choiceIds'] }];
    const known = new Set((question.type === 'YES_NO' ? (question.choices ?? yesNoChoices) : (question.choices ?? [])).map((choice) => choice.id));
    return (condition as { choiceIds: string[] }).choiceIds.flatMap((choiceId, index) =>
      known.has(choiceId) ? [] : [{ message: `${choiceId} is not a choice id of ${condition.questionKey} (${[...known].join(', ')})`, path: [...path, 'choiceIds', String(index)] }],
    );
  }
  if (!isNumberType(question.type)) return [{ message: `${condition.questionKey} is a ${question.type} question; range applies to NUMBER and SCALE questions`, path: [...path, 'range'] }];
  const range = (condition as { range: { min?: number; max?: number } }).range;
  if (range.min === undefined && range.max === undefined) return [{ message: 'a range needs min, max or both', path: [...path, 'range'] }];
  if (range.min !== undefined && range.max !== undefined && range.min > range.max) return [{ message: `max must be at least min (${range.min})`, path: [...path, 'range', 'max'] }];
  return [];
}

/** ApiError's items with `prefix` before their paths (the filter's errors start at "filter"). */
function prefixed(error: unknown, prefix: string[]): never {
  if (error instanceof ApiError && error.items.length > 0) {
    throw new ApiError(error.code, error.items.map((item) => ({ ...item, path: [...prefix, ...item.path] })), undefined, error.missingRight);
  }
  throw error;
}

/**
 * A group's filter, checked as a segment's is, with the caller's rights: PERSON names and custom
 * properties, no sort, no SEGMENT_MEMBERSHIP, ids of populations and studies that exist.
 */
async function checkFilter(context: CallContext, db: Kysely<DB>, filter: RootFilter, path: string[]): Promise<{ usesPersonalData: boolean }> {
  if (filter.sort) throw new ApiError('VALIDATION', [{ message: 'A quota group chooses people, without order: leave sort out', path: [...path, 'filter', 'sort'] }]);
  const nested = segmentMembershipPath(filter);
  if (nested) throw new ApiError('VALIDATION', [{ message: 'A quota group cannot refer to segments: give their conditions', path: [...path, ...nested] }]);
  try {
    const customProperties = await loadCustomProperties(db, context.workspaceId, namedPropertyIds(filter, catalogue));
    const compiled = compileRootFilter(filter, {
      catalogue,
      context: { workspaceId: context.workspaceId, now: context.clock.now() },
      canReadPersonalData: context.canReadPersonalData,
      customProperties,
      groups: segmentGroups,
      defaultSort: byPersonId,
    });
    await checkMemberships({ db, workspaceId: context.workspaceId }, compiled);
    return { usesPersonalData: compiled.readsPersonalData };
  } catch (error) {
    return prefixed(error, path);
  }
}

/**
 * Replaces the study's groups with the list given, in its order: a group named by its id is kept
 * with its places filled and changed as given, the others are new, and the groups left out are
 * deleted (their participants keep their quotaGroup). A group with places filled keeps its name,
 * so its participants' quotaGroup still names it (409). A cap may be lowered below the places
 * filled: the group takes nobody more, and those placed stay placed.
 */
export async function putQuotaGroups(context: CallContext, studyId: string, body: PutQuotaGroupsBody): Promise<{ quotaGroups: QuotaGroup[] }> {
  return inTransaction(context.db, async (db) => {
    const { workspaceId } = context;
    if (!(await lockStudy(db, workspaceId, studyId))) throw notFound('Study', ['studyId']);
    const existing = new Map((await queries.listGroups(db, workspaceId, studyId, { forUpdate: true })).map((row) => [row.quota_group_id, row]));

    const errors: ErrorItem[] = [];
    const missing: ErrorItem[] = [];
    const conflicts: ErrorItem[] = [];
    const ids = new Map<string, number>();
    const names = new Map<string, number>();
    body.quotaGroups.forEach((group, index) => {
      const path = ['quotaGroups', String(index)];
      if (group.quotaGroupId !== undefined) {
        const first = ids.get(group.quotaGroupId);
        if (first !== undefined) errors.push({ message: `quotaGroups/${first} already names this group; each group appears once`, path: [...path, 'quotaGroupId'] });
        else ids.set(group.quotaGroupId, index);
        const row = existing.get(group.quotaGroupId);
        if (!row) missing.push({ message: 'Quota group not found (a group of this study)', path: [...path, 'quotaGroupId'] });
        else if (row.filled > 0 && row.name !== group.name) {
          conflicts.push({ message: `This group has ${row.filled} places filled: it keeps its name (${row.name}), which its participants' quotaGroup holds`, path: [...path, 'name'] });
        }
      }
      const folded = group.name.trim().toLowerCase();
      const sameName = names.get(folded);
      if (sameName !== undefined) errors.push({ message: `quotaGroups/${sameName} already has this name; names are unique within a study, ignoring case`, path: [...path, 'name'] });
      else names.set(folded, index);
    });

    const withAnswers = body.quotaGroups.some((group) => (group.answers ?? []).length > 0);
    const screener = withAnswers ? await findAnswerableScreener(db, workspaceId, studyId) : undefined;
    const questions = new Map<string, Question>((screener?.questions ?? []).map((question) => [question.key, question]));
    body.quotaGroups.forEach((group, index) => {
      (group.answers ?? []).forEach((condition, position) => errors.push(...checkAnswerCondition(condition as QuotaAnswerCondition, questions, ['quotaGroups', String(index), 'answers', String(position)])));
    });
    if (errors.length > 0) throw new ApiError('VALIDATION', errors);
    if (missing.length > 0) throw new ApiError('NOT_FOUND', missing);
    if (conflicts.length > 0) throw new ApiError('CONFLICT', conflicts);

    const personal: boolean[] = [];
    for (const [index, group] of body.quotaGroups.entries()) {
      personal.push(group.filter ? (await checkFilter(context, db, group.filter, ['quotaGroups', String(index)])).usesPersonalData : false);
    }

    const at = context.clock.now().toISOString();
    const kept = new Set(body.quotaGroups.flatMap((group) => (group.quotaGroupId !== undefined ? [group.quotaGroupId] : [])));
    await queries.deleteGroups(db, workspaceId, [...existing.keys()].filter((id) => !kept.has(id)));
    // Names move between kept groups in two steps, so no step holds one name twice (the unique index checks each row).
    for (const group of body.quotaGroups) {
      const row = group.quotaGroupId !== undefined ? existing.get(group.quotaGroupId) : undefined;
      if (row && row.name !== group.name) {
        await queries.updateGroup(db, workspaceId, row.quota_group_id, { ...fieldsOf(row), name: `\u0001${row.quota_group_id}`, updated_at: at });
      }
    }
    const fresh: Parameters<typeof queries.insertGroups>[1] = [];
    for (const [index, group] of body.quotaGroups.entries()) {
      const fields = {
        name: group.name,
        position: index,
        cap: group.cap,
        answers: JSON.stringify(group.answers ?? []),
        filter: group.filter ? JSON.stringify(group.filter) : null,
        uses_personal_data: personal[index]!,
        updated_at: at,
      };
      if (group.quotaGroupId !== undefined) await queries.updateGroup(db, workspaceId, group.quotaGroupId, fields);
      else fresh.push({ ...fields, workspace_id: workspaceId, quota_group_id: newId(idPrefixes.quotaGroup), study_id: studyId, created_at: at });
    }
    await queries.insertGroups(db, fresh);
    return { quotaGroups: await present({ ...context, db }, await queries.listGroups(db, workspaceId, studyId)) };
  });
}

const fieldsOf = (row: queries.QuotaGroupRow) => ({
  name: row.name,
  position: row.position,
  cap: row.cap,
  answers: JSON.stringify(row.answers),
  filter: row.filter === null ? null : JSON.stringify(row.filter),
  uses_personal_data: row.uses_personal_data,
});

// ---------------------------------------------------------------------------------------------
// Placement

/** Whether an accepted answer (by its question's key) meets a condition. An unanswered question meets none. */
function answerMeets(condition: QuotaAnswerCondition, answer: AnswerValue | undefined): boolean {
  if (answer === undefined) return false;
  if ('choiceIds' in condition) {
    const picked = Array.isArray(answer) ? answer : typeof answer === 'string' ? [answer] : [];
    return picked.some((id) => condition.choiceIds.includes(id));
  }
  const { min, max } = condition.range;
  return typeof answer === 'number' && (min === undefined || answer >= min) && (max === undefined || answer <= max);
}

export type Placement =
  /** The study has no quota groups: quotas do not apply. */
  | { kind: 'NO_QUOTAS' }
  | { kind: 'PLACED'; quotaGroupId: string; name: string }
  /** Groups exist, and none the person matches had a place (or they match none): the ids of those they match, in order. */
  | { kind: 'OVER_QUOTA'; matchedQuotaGroupIds: string[] };

/** The groups a qualified person meets, in order, as read (no lock): their counters say where a place was. */
export type QuotaMatch = { kind: 'NO_QUOTAS' } | { kind: 'MATCHED'; groups: queries.QuotaGroupRow[] };

/**
 * A qualified person's place, taken in the transaction of their submission (so a submission
 * rolled back gives it back): the first group, in order, whose conditions they meet and that has
 * a place. The caller holds the participant's lock, taken before any group's row (always in that
 * order, so two submissions never wait on each other in a circle). The answers are by question
 * key; the person's properties are read in this transaction, mapped answers already written.
 */
export async function placeInQuotaGroup(
  transaction: Kysely<DB>,
  placing: { workspaceId: string; studyId: string; personId: string; answersByKey: ReadonlyMap<string, AnswerValue>; at: string },
): Promise<Placement> {
  const match = await matchQuotaGroups(transaction, placing);
  return match.kind === 'NO_QUOTAS' ? match : takeFirstPlace(transaction, placing.workspaceId, match.groups, placing.at);
}

/**
 * The groups whose conditions the person meets, in order, read without taking any lock: what a
 * submission can write its outcome against before it takes the place (src/families/screener-responses).
 */
export async function matchQuotaGroups(
  transaction: Kysely<DB>,
  placing: { workspaceId: string; studyId: string; personId: string; answersByKey: ReadonlyMap<string, AnswerValue>; at: string },
): Promise<QuotaMatch> {
  if (!transaction.isTransaction) throw new Error('A quota place is taken in the transaction of its submission: pass a transaction');
  const { workspaceId, studyId, personId, at } = placing;
  const groups = await queries.listGroups(transaction, workspaceId, studyId);
  if (groups.length === 0) return { kind: 'NO_QUOTAS' };
  const byAnswers = groups.filter((group) => group.answers.every((condition) => answerMeets(condition, placing.answersByKey.get(condition.questionKey))));
  const filtered = byAnswers.filter((group) => group.filter !== null);
  const customProperties = await loadCustomProperties(transaction, workspaceId, [...new Set(filtered.flatMap((group) => namedPropertyIds(group.filter as RootFilter, catalogue)))]);
  const conditions = filtered.map((group) => {
    try {
      const compiled = compileRootFilter(group.filter as RootFilter, {
        catalogue,
        context: { workspaceId, now: new Date(at) },
        // Who may write a filter on personal data was settled when it was written.
        canReadPersonalData: true,
        customProperties,
        groups: segmentGroups,
        defaultSort: byPersonId,
      });
      return compiled.where;
    } catch (error) {
      // A filter that no longer compiles (a property it names was deleted since) matches nobody.
      if (error instanceof ApiError) return null;
      throw error;
    }
  });
  const compilable = conditions.flatMap((condition) => (condition === null || condition === undefined ? [] : [condition]));
  const answers = await queries.personMatches(transaction, workspaceId, personId, compilable);
  const personMatch = new Map<string, boolean>();
  let next = 0;
  filtered.forEach((group, index) => {
    const condition = conditions[index];
    personMatch.set(group.quota_group_id, condition === null ? false : condition === undefined ? true : answers[next++]!);
  });
  return { kind: 'MATCHED', groups: byAnswers.filter((group) => group.filter === null || personMatch.get(group.quota_group_id) === true) };
}

/** A place in one group if it has one now (the group's name), its row locked until commit. */
export const takePlace = queries.takePlace;

/** The first of `groups`, in order, with a place now: its counter taken by one conditional update each (the row locked until commit). */
export async function takeFirstPlace(transaction: Kysely<DB>, workspaceId: string, groups: readonly queries.QuotaGroupRow[], at: string): Promise<Placement> {
  for (const group of groups) {
    const name = await queries.takePlace(transaction, workspaceId, group.quota_group_id, at);
    if (name !== undefined) return { kind: 'PLACED', quotaGroupId: group.quota_group_id, name };
  }
  return { kind: 'OVER_QUOTA', matchedQuotaGroupIds: groups.map((group) => group.quota_group_id) };
}
