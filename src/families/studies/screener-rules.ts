import type { ErrorItem } from '../../http/errors.js';
import type { NumberRange, ScreenerChoice, ScreenerNumberRules, ScreenerRule, ScreenerShowWhen } from '../../db/schema.js';

/**
 * A screener's rules as plain functions, with no database and no clock: what a definition may say
 * (checked when it is PUT), which questions a set of answers shows, whether those answers are
 * valid, and the outcome they give. The PUT route and the submission flow (issue 33) both call
 * these, so a definition that was accepted is always one these functions can evaluate.
 *
 * They live beside the studies family rather than in a family of their own because the screener
 * is written through the study's route (`PUT /studies/{studyId}/screener`) and has no id space of
 * its own in the API; the submission flow can import this file without importing any SQL.
 */

export type { NumberRange, ScreenerChoice, ScreenerNumberRules, ScreenerRule, ScreenerShowWhen };

/** Questions answered by picking choices; YES_NO is one whose two choices are `yes` and `no`. */
export const choiceQuestionTypes = ['SINGLE_SELECT', 'MULTI_SELECT', 'YES_NO'] as const;
/** Questions answered by a number; SCALE is a NUMBER of whole numbers between a required minimum and maximum. */
export const numberQuestionTypes = ['NUMBER', 'SCALE'] as const;

export const isChoiceType = (type: string): boolean => (choiceQuestionTypes as readonly string[]).includes(type);
export const isNumberType = (type: string): boolean => (numberQuestionTypes as readonly string[]).includes(type);

/** The choices a YES_NO question has when it names none; when it names them, their ids are these two. */
export const yesNoChoices: readonly ScreenerChoice[] = [
  { id: 'yes', label: 'Yes', rule: 'NEUTRAL' },
  { id: 'no', label: 'No', rule: 'NEUTRAL' },
];

/** The longest answer each free-text type takes. */
export const answerMaxLength: Record<string, number> = { SHORT_FORM: 500, LONG_FORM: 5000, EMAIL: 254, PHONE_NUMBER: 32 };

/**
 * The property type a question may write its answer to (`mappedToPropertyId`). The select types
 * also need every choice's label to be an option of the property (compared case-insensitively,
 * as option names are unique case-insensitively).
 */
export const compatiblePropertyType: Record<string, string> = {
  SHORT_FORM: 'STRING',
  LONG_FORM: 'STRING',
  EMAIL: 'STRING',
  PHONE_NUMBER: 'STRING',
  NUMBER: 'NUMBER',
  SCALE: 'NUMBER',
  DATE: 'DATETIME',
  YES_NO: 'BOOLEAN',
  SINGLE_SELECT: 'SINGLE_SELECT',
  MULTI_SELECT: 'MULTI_SELECT',
};

/** A question of a definition, as stored and as the rules read it. */
export interface ScreenerQuestionRules {
  /** The question version's id: answers are keyed by it. */
  id: string;
  /** The question's identity across versions; skip logic names earlier questions by it. */
  key: string;
  type: string;
  isRequired: boolean;
  choices?: readonly ScreenerChoice[] | null;
  numberRules?: ScreenerNumberRules | null;
  showWhen?: ScreenerShowWhen | null;
}

export interface ScreenerDefinition {
  /** When no answer's rule qualified or disqualified: true qualifies the person, false leaves them for the team to review. */
  qualifyByDefault: boolean;
  questions: readonly ScreenerQuestionRules[];
}

// ---------------------------------------------------------------------------------------------
// The definition

/** A question as the PUT body gives it once TypeBox has checked each field on its own. */
export interface QuestionDefinitionInput {
  key: string;
  type: string;
  choices?: readonly { id: string; label: string; rule?: ScreenerRule }[];
  minimum?: number;
  maximum?: number;
  integer?: boolean;
  ranges?: readonly { min?: number; max?: number; rule: ScreenerRule }[];
  showWhen?: { questionKey: string; choiceIds?: readonly string[]; range?: NumberRange };
}

const within = (value: number, range: NumberRange) => (range.min === undefined || value >= range.min) && (range.max === undefined || value <= range.max);

/** Whether two inclusive ranges (open where a bound is missing) share a number. */
const overlap = (a: NumberRange, b: NumberRange) =>
  (a.max === undefined || b.min === undefined || b.min <= a.max) && (b.max === undefined || a.min === undefined || a.min <= b.max);

const describeRange = (range: NumberRange) =>
  range.min !== undefined && range.max !== undefined ? `${range.min} to ${range.max}` : range.min !== undefined ? `${range.min} or more` : `${range.max} or less`;

/**
 * What TypeBox cannot say about a definition: which fields fit which question type, unique keys,
 * choice ids and labels, ranges that are ordered and do not overlap, and skip logic that names an
 * earlier question in a way its type can answer. Every problem is reported, each with its path.
 */
export function checkDefinition(questions: readonly QuestionDefinitionInput[]): ErrorItem[] {
  const errors: ErrorItem[] = [];
  const fail = (message: string, ...path: (string | number)[]) => errors.push({ message, path: ['questions', ...path.map(String)] });
  const earlier = new Map<string, { index: number; question: QuestionDefinitionInput }>();

  questions.forEach((question, index) => {
    const previous = earlier.get(question.key);
    if (previous) fail(`key ${question.key} is already the key of questions/${previous.index}; keys are unique within a screener`, index, 'key');

    if (isChoiceType(question.type)) checkChoices(question, index, fail);
    else if (question.choices !== undefined) fail(`choices are allowed only for ${choiceQuestionTypes.join(', ')} questions`, index, 'choices');

    if (isNumberType(question.type)) checkNumbers(question, index, fail);
    else {
      for (const field of ['minimum', 'maximum', 'integer', 'ranges'] as const) {
        if (question[field] !== undefined) fail(`${field} is allowed only for ${numberQuestionTypes.join(', ')} questions`, index, field);
      }
    }

    if (question.showWhen) checkShowWhen(question.showWhen, index, earlier, fail);
    if (!previous) earlier.set(question.key, { index, question });
  });
  return errors;
}

type Fail = (message: string, ...path: (string | number)[]) => void;

function checkChoices(question: QuestionDefinitionInput, index: number, fail: Fail) {
  const choices = question.choices;
  if (question.type === 'YES_NO') {
    if (choices === undefined) return;
    const ids = choices.map((choice) => choice.id).sort();
    if (ids.length !== 2 || ids[0] !== 'no' || ids[1] !== 'yes') fail('a YES_NO question has exactly two choices, with the ids yes and no', index, 'choices');
    return;
  }
  if (choices === undefined || choices.length === 0) {
    fail(`a ${question.type} question needs at least one choice`, index, 'choices');
    return;
  }
  const ids = new Map<string, number>();
  const labels = new Map<string, number>();
  choices.forEach((choice, position) => {
    const sameId = ids.get(choice.id);
    if (sameId !== undefined) fail(`id ${choice.id} is already the id of choices/${sameId}; choice ids are unique within a question`, index, 'choices', position, 'id');
    else ids.set(choice.id, position);
    const folded = choice.label.trim().toLowerCase();
    const sameLabel = labels.get(folded);
    if (sameLabel !== undefined) fail(`this label is already the label of choices/${sameLabel}; labels are unique within a question (ignoring case)`, index, 'choices', position, 'label');
    else labels.set(folded, position);
  });
}

function checkNumbers(question: QuestionDefinitionInput, index: number, fail: Fail) {
  const { minimum, maximum } = question;
  const integer = question.type === 'SCALE' || question.integer === true;
  if (question.type === 'SCALE') {
    if (question.integer === false) fail('a SCALE question takes whole numbers; integer must be true or left out', index, 'integer');
    if (minimum === undefined) fail('a SCALE question needs a minimum', index, 'minimum');
    if (maximum === undefined) fail('a SCALE question needs a maximum', index, 'maximum');
  }
  if (minimum !== undefined && maximum !== undefined && minimum > maximum) fail(`maximum must be at least minimum (${minimum})`, index, 'maximum');
  if (integer) {
    if (minimum !== undefined && !Number.isInteger(minimum)) fail('minimum must be a whole number when answers are whole numbers', index, 'minimum');
    if (maximum !== undefined && !Number.isInteger(maximum)) fail('maximum must be a whole number when answers are whole numbers', index, 'maximum');
  }
  const ranges = question.ranges ?? [];
  ranges.forEach((range, position) => {
    if (range.min === undefined && range.max === undefined) {
      fail('a range needs min, max or both', index, 'ranges', position);
      return;
    }
    if (range.min !== undefined && range.max !== undefined && range.min > range.max) {
      fail(`max must be at least min (${range.min})`, index, 'ranges', position, 'max');
      return;
    }
    const answerable: NumberRange = { min: minimum, max: maximum };
    if (!overlap(range, answerable)) fail(`the range ${describeRange(range)} holds no answer between minimum and maximum`, index, 'ranges', position);
    const clash = ranges.slice(0, position).findIndex((other) => (other.min !== undefined || other.max !== undefined) && overlap(other, range));
    if (clash !== -1) fail(`the range ${describeRange(range)} overlaps ranges/${clash}; ranges must not overlap, so one rule decides each number`, index, 'ranges', position);
  });
}

function checkShowWhen(
  showWhen: NonNullable<QuestionDefinitionInput['showWhen']>,
  index: number,
  earlier: Map<string, { index: number; question: QuestionDefinitionInput }>,
  fail: Fail,
) {
  const target = earlier.get(showWhen.questionKey);
  if (!target) {
    fail(`questionKey must be the key of an earlier question; ${showWhen.questionKey} is not`, index, 'showWhen', 'questionKey');
    return;
  }
  const hasChoices = showWhen.choiceIds !== undefined;
  const hasRange = showWhen.range !== undefined;
  if (hasChoices === hasRange) {
    fail('showWhen takes exactly one of choiceIds (for a select or YES_NO question) and range (for a NUMBER or SCALE question)', index, 'showWhen');
    return;
  }
  const targetType = target.question.type;
  if (hasChoices) {
    if (!isChoiceType(targetType)) {
      fail(`questions/${target.index} is a ${targetType} question; choiceIds apply to ${choiceQuestionTypes.join(', ')} questions`, index, 'showWhen', 'choiceIds');
      return;
    }
    const known = new Set((targetType === 'YES_NO' ? (target.question.choices ?? yesNoChoices) : (target.question.choices ?? [])).map((choice) => choice.id));
    showWhen.choiceIds!.forEach((choiceId, position) => {
      if (!known.has(choiceId)) fail(`${choiceId} is not a choice id of questions/${target.index} (${[...known].join(', ')})`, index, 'showWhen', 'choiceIds', position);
    });
    return;
  }
  if (!isNumberType(targetType)) {
    fail(`questions/${target.index} is a ${targetType} question; range applies to ${numberQuestionTypes.join(', ')} questions`, index, 'showWhen', 'range');
    return;
  }
  const range = showWhen.range!;
  if (range.min === undefined && range.max === undefined) fail('a range needs min, max or both', index, 'showWhen', 'range');
  else if (range.min !== undefined && range.max !== undefined && range.min > range.max) fail(`max must be at least min (${range.min})`, index, 'showWhen', 'range', 'max');
}

/** A property a question may be mapped to, as the check needs it. */
export interface MappableProperty {
  propertyType: string;
  optionNames: readonly string[];
}

/**
 * Whether a question's answer can be written to the property: a compatible type, and for select
 * questions every choice's label an option of the property. `path` leads to the question.
 */
export function checkMapping(question: Pick<QuestionDefinitionInput, 'type' | 'choices'>, property: MappableProperty, path: string[]): ErrorItem[] {
  const wanted = compatiblePropertyType[question.type];
  if (wanted === undefined) return [{ message: `a ${question.type} question cannot be mapped to a property`, path: [...path, 'mappedToPropertyId'] }];
  if (property.propertyType !== wanted) {
    return [{ message: `a ${question.type} question maps only to a ${wanted} property; this property is ${property.propertyType}`, path: [...path, 'mappedToPropertyId'] }];
  }
  if (question.type !== 'SINGLE_SELECT' && question.type !== 'MULTI_SELECT') return [];
  const options = new Set(property.optionNames.map((name) => name.trim().toLowerCase()));
  const shown = property.optionNames.slice(0, 20).join(', ') + (property.optionNames.length > 20 ? ', …' : '');
  return (question.choices ?? []).flatMap((choice, position) =>
    options.has(choice.label.trim().toLowerCase())
      ? []
      : [{ message: `the mapped property has no option named like this label; its options are: ${shown || '(none)'}`, path: [...path, 'choices', String(position), 'label'] }],
  );
}

// ---------------------------------------------------------------------------------------------
// Answers

/** An accepted answer, normalised: a choice id, a list of choice ids, a number, a date (YYYY-MM-DD) or a text. */
export type AnswerValue = string | number | string[];

export interface AnswerError {
  questionId: string;
  questionKey: string;
  message: string;
}

export interface AnswerCheck {
  /** The ids of the questions the answers show, in order. */
  shown: string[];
  /** The accepted answers of shown questions, by question id. Answers to hidden questions are left out. */
  accepted: Map<string, AnswerValue>;
  /** The ids of questions that were answered but not shown: their answers were dropped. */
  dropped: string[];
  errors: AnswerError[];
}

const choicesOf = (question: ScreenerQuestionRules): readonly ScreenerChoice[] =>
  question.type === 'YES_NO' ? (question.choices ?? yesNoChoices) : (question.choices ?? []);

const isBlank = (value: unknown) =>
  value === undefined || value === null || (typeof value === 'string' && value.trim() === '') || (Array.isArray(value) && value.length === 0);

const emailPattern = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const phonePattern = /^\+?[0-9 ().-]+$/;
const datePattern = /^(\d{4})-(\d{2})-(\d{2})$/;

function isCalendarDate(text: string): boolean {
  const match = datePattern.exec(text);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/** A number as a form posts it (text) or as JSON gives it; anything else is undefined. */
function toNumber(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value !== 'string' || !/^\s*-?(\d+(\.\d*)?|\.\d+)\s*$/.test(value)) return undefined;
  return Number(value);
}

/** One answer checked against its question: the normalised value, or why it is refused. */
export function checkAnswer(question: ScreenerQuestionRules, value: unknown): { value: AnswerValue } | { error: string } {
  if (isChoiceType(question.type)) {
    const choices = choicesOf(question);
    const known = new Set(choices.map((choice) => choice.id));
    const allowed = choices.map((choice) => choice.id).join(', ');
    if (question.type === 'MULTI_SELECT') {
      // A form with one box ticked posts a single value.
      const picked = typeof value === 'string' ? [value] : value;
      if (!Array.isArray(picked) || !picked.every((item): item is string => typeof item === 'string')) return { error: 'Choose one or more of the choices' };
      const unknown = picked.find((item) => !known.has(item));
      if (unknown !== undefined) return { error: `${unknown} is not one of the choices (${allowed})` };
      // Stored in the definition's order, once each, so equal answers compare equal.
      return { value: choices.map((choice) => choice.id).filter((id) => picked.includes(id)) };
    }
    if (typeof value !== 'string') return { error: 'Choose one of the choices' };
    if (!known.has(value)) return { error: `${value} is not one of the choices (${allowed})` };
    return { value };
  }
  if (isNumberType(question.type)) {
    const number = toNumber(value);
    if (number === undefined) return { error: 'Enter a number' };
    const rules = question.numberRules;
    const integer = question.type === 'SCALE' || rules?.integer === true;
    if (integer && !Number.isInteger(number)) return { error: 'Enter a whole number' };
    if (rules?.minimum !== undefined && number < rules.minimum) return { error: `Enter a number of ${rules.minimum} or more` };
    if (rules?.maximum !== undefined && number > rules.maximum) return { error: `Enter a number of ${rules.maximum} or less` };
    return { value: number };
  }
  if (typeof value !== 'string') return { error: 'Enter a text' };
  const text = value.trim();
  if (question.type === 'DATE') return isCalendarDate(text) ? { value: text } : { error: 'Enter a real date as YYYY-MM-DD' };
  const maxLength = answerMaxLength[question.type] ?? answerMaxLength.LONG_FORM!;
  if (text.length > maxLength) return { error: `Enter at most ${maxLength} characters` };
  if (question.type === 'EMAIL' && !emailPattern.test(text)) return { error: 'Enter an email address like name@example.com' };
  if (question.type === 'PHONE_NUMBER' && (!phonePattern.test(text) || text.replace(/\D/g, '').length < 4)) return { error: 'Enter a phone number of digits, spaces and + ( ) . -' };
  return { value: text };
}

/** Whether an accepted answer to `target` satisfies a showWhen. */
function matches(showWhen: ScreenerShowWhen, answer: AnswerValue | undefined): boolean {
  if (answer === undefined) return false;
  if ('choiceIds' in showWhen) {
    const picked = Array.isArray(answer) ? answer : [String(answer)];
    return picked.some((id) => showWhen.choiceIds.includes(id));
  }
  return typeof answer === 'number' && within(answer, showWhen.range);
}

/**
 * The answers checked in question order: a question with showWhen is shown only when its earlier
 * question is shown and its accepted answer matches, so hiding cascades, and an answer refused
 * shows nothing that depends on it. A shown required question must be answered; answers to hidden
 * questions are dropped (a page without JavaScript may post them); an id that is no question of the
 * definition is an error.
 */
export function checkAnswers(definition: ScreenerDefinition, answers: Readonly<Record<string, unknown>>): AnswerCheck {
  const byKey = new Map<string, ScreenerQuestionRules>();
  const accepted = new Map<string, AnswerValue>();
  const shown: string[] = [];
  const dropped: string[] = [];
  const errors: AnswerError[] = [];
  const ids = new Set(definition.questions.map((question) => question.id));

  for (const question of definition.questions) {
    byKey.set(question.key, question);
    const value = answers[question.id];
    const trigger = question.showWhen ? byKey.get(question.showWhen.questionKey) : undefined;
    const visible = !question.showWhen || (trigger !== undefined && matches(question.showWhen, accepted.get(trigger.id)));
    if (!visible) {
      if (!isBlank(value)) dropped.push(question.id);
      continue;
    }
    shown.push(question.id);
    if (isBlank(value)) {
      if (question.isRequired) errors.push({ questionId: question.id, questionKey: question.key, message: 'Answer this question' });
      continue;
    }
    const checked = checkAnswer(question, value);
    if ('error' in checked) errors.push({ questionId: question.id, questionKey: question.key, message: checked.error });
    else accepted.set(question.id, checked.value);
  }
  for (const id of Object.keys(answers)) {
    if (!ids.has(id)) errors.push({ questionId: id, questionKey: '', message: 'This is not a question of the screener' });
  }
  return { shown, accepted, dropped, errors };
}

// ---------------------------------------------------------------------------------------------
// The outcome

export type ScreenerOutcome = 'QUALIFIED' | 'DISQUALIFIED' | 'NEEDS_REVIEW';

/** What decided an outcome: a choice's rule, a number range's rule, or qualifyByDefault. */
export type DecidingRule =
  | { kind: 'CHOICE'; questionId: string; questionKey: string; choiceId: string; rule: 'QUALIFIES' | 'DISQUALIFIES' }
  | { kind: 'RANGE'; questionId: string; questionKey: string; rangeIndex: number; rule: 'QUALIFIES' | 'DISQUALIFIES' }
  | { kind: 'DEFAULT'; qualifyByDefault: boolean };

/** The rules an accepted answer triggers, in the definition's order of choices or ranges. */
function triggeredRules(question: ScreenerQuestionRules, answer: AnswerValue): DecidingRule[] {
  const hits: DecidingRule[] = [];
  if (isChoiceType(question.type)) {
    const picked = Array.isArray(answer) ? answer : [String(answer)];
    for (const choice of choicesOf(question)) {
      if (choice.rule !== 'NEUTRAL' && picked.includes(choice.id)) {
        hits.push({ kind: 'CHOICE', questionId: question.id, questionKey: question.key, choiceId: choice.id, rule: choice.rule });
      }
    }
  } else if (isNumberType(question.type) && typeof answer === 'number') {
    (question.numberRules?.ranges ?? []).forEach((range, rangeIndex) => {
      if (range.rule !== 'NEUTRAL' && within(answer, range)) {
        hits.push({ kind: 'RANGE', questionId: question.id, questionKey: question.key, rangeIndex, rule: range.rule });
      }
    });
  }
  return hits;
}

/**
 * The outcome of accepted answers (checkAnswers' `accepted`): the first DISQUALIFIES rule an
 * answer triggers, in question order, disqualifies, whatever else qualified; otherwise the first
 * QUALIFIES rule qualifies; when no rule fired, qualifyByDefault decides: true qualifies, false
 * leaves the person for the team to review (the participant stays SUBMITTED).
 */
export function decideOutcome(definition: ScreenerDefinition, accepted: ReadonlyMap<string, AnswerValue>): { outcome: ScreenerOutcome; decidedBy: DecidingRule } {
  const hits = definition.questions.flatMap((question) => {
    const answer = accepted.get(question.id);
    return answer === undefined ? [] : triggeredRules(question, answer);
  });
  const disqualifying = hits.find((hit) => hit.kind !== 'DEFAULT' && hit.rule === 'DISQUALIFIES');
  if (disqualifying) return { outcome: 'DISQUALIFIED', decidedBy: disqualifying };
  const qualifying = hits.find((hit) => hit.kind !== 'DEFAULT' && hit.rule === 'QUALIFIES');
  if (qualifying) return { outcome: 'QUALIFIED', decidedBy: qualifying };
  return { outcome: definition.qualifyByDefault ? 'QUALIFIED' : 'NEEDS_REVIEW', decidedBy: { kind: 'DEFAULT', qualifyByDefault: definition.qualifyByDefault } };
}

/** Answers checked and, when they are all valid, their outcome: what a submission needs in one call. */
export function evaluateScreener(definition: ScreenerDefinition, answers: Readonly<Record<string, unknown>>) {
  const check = checkAnswers(definition, answers);
  return { ...check, result: check.errors.length === 0 ? decideOutcome(definition, check.accepted) : null };
}
