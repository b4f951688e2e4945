import { type Kysely, sql } from 'kysely';
import type { DB } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { lockParticipantToSubmit, recordScreenerSubmission } from '../participants/service.js';
import { matchQuotaGroups, takeFirstPlace, takePlace } from '../quota-groups/service.js';
import { writeAnsweredValues } from '../people/writer.js';
import { type AnswerError, type AnswerValue, evaluateScreener, type ScreenerOutcome } from '../studies/screener-rules.js';
import { type AnswerableQuestion, findAnswerableScreener } from '../studies/service.js';
import * as queries from './queries.js';
import type { CallContext as SharedCallContext } from '../../context.js';
import { forbidden, notFound } from '../../http/errors.js';
import { MASKED_EMAIL, MASKED_TEXT } from '../../http/masking.js';
import type { KeysetRows } from '../../http/pagination.js';
import { studyExists } from '../studies/queries.js';
import { yesNoChoices } from '../studies/screener-rules.js';
import { csvNumber, csvRecord, csvText } from './csv.js';

export interface ScreenerSubmission {
  workspaceId: string;
  studyId: string;
  participantId: string;
  linkId: string;
  /** The posted answers by question (version) id: a form's text, or several texts for a multiple choice. */
  answers: Record<string, unknown>;
  /** When the page was served (vouched for by the form's token), for the time to complete. */
  startedAt: string | null;
  /** The hidden field robots fill was filled: recorded, and left for the team to review. */
  suspectedBot: boolean;
  at: string;
}

/** What a submission records: the rules' outcome, or OVER_QUOTA when they qualified the person and no quota group they meet had a place. */
export type SubmissionOutcome = ScreenerOutcome | 'OVER_QUOTA';

export type SubmissionResult =
  | { kind: 'RECORDED'; outcome: SubmissionOutcome; quotaGroup?: string }
  | { kind: 'INVALID'; errors: AnswerError[]; questions: AnswerableQuestion[] }
  | { kind: 'ALREADY_SUBMITTED' }
  | { kind: 'NO_SCREENER' };

/** A mapped answer as the property holds it: a choice by its label, yes/no as a boolean, a date as midnight UTC. */
function propertyValueOf(question: AnswerableQuestion, answer: AnswerValue): unknown {
  const labelOf = (id: string) => question.choices?.find((choice) => choice.id === id)?.label ?? id;
  if (question.type === 'YES_NO') return answer === 'yes';
  if (question.type === 'SINGLE_SELECT') return labelOf(String(answer));
  if (question.type === 'MULTI_SELECT') return (answer as string[]).map(labelOf);
  if (question.type === 'DATE') return `${String(answer)}T00:00:00.000Z`;
  return answer;
}

/**
 * A person's answers to their study's screener, in one transaction: checked against the current
 * definition (nothing is written when one is refused), then the participant's screenerState moves
 * (SUBMITTED, then QUALIFIED or DISQUALIFIED as the rules decide; a suspected robot stays for
 * review), the answers and the submission are kept, and the answers to mapped questions are
 * written to the person's properties through the people family's writer. A qualified person
 * takes a place in the study's first open quota group they meet (their quotaGroup its name); when
 * the study has groups and none they meet has a place, the submission is OVER_QUOTA and the
 * participant DISQUALIFIED. A second submission, or
 * one racing the first, changes nothing and answers ALREADY_SUBMITTED.
 */
export async function submitScreener(db: Kysely<DB>, submission: ScreenerSubmission): Promise<SubmissionResult> {
  const { workspaceId, studyId, participantId, at } = submission;
  return inTransaction(db, async (transaction) => {
    const screener = await findAnswerableScreener(transaction, workspaceId, studyId);
    if (!screener || screener.questions.length === 0) return { kind: 'NO_SCREENER' };
    const evaluation = evaluateScreener(screener, submission.answers);
    if (evaluation.errors.length > 0 || !evaluation.result) return { kind: 'INVALID', errors: evaluation.errors, questions: screener.questions };
    const ruled: ScreenerOutcome = submission.suspectedBot ? 'NEEDS_REVIEW' : evaluation.result.outcome;
    // The participant's lock first, then (through the people writer and the quota) the rest: every
    // submission takes its locks in this order, so none waits on another in a circle.
    const open = await lockParticipantToSubmit(transaction, workspaceId, studyId, participantId);
    if (!open) return { kind: 'ALREADY_SUBMITTED' };
    // Mapped answers are written before the quota is chosen, so a group's filter over the person's properties reads them.
    const mapped: Record<string, unknown> = {};
    for (const question of screener.questions) {
      const answer = evaluation.accepted.get(question.id);
      if (question.mappedToPropertyId !== null && answer !== undefined) mapped[question.mappedToPropertyId] = propertyValueOf(question, answer);
    }
    await writeAnsweredValues(transaction, workspaceId, open.personId, mapped, at);

    const qualifiedBy = evaluation.result.decidedBy;
    const ruledBy: unknown = submission.suspectedBot ? { kind: 'SUSPECTED_BOT' } : qualifiedBy;
    /** The submission's rows for an outcome: the participant moved (its event, its webhook), the response, the answers. */
    const write = async (outcome: SubmissionOutcome, decidedBy: unknown, quotaGroup: string | undefined): Promise<SubmissionResult> => {
      // Over quota, the participant is DISQUALIFIED: the study has no place for them (the response says why).
      const recorded = await recordScreenerSubmission(transaction, workspaceId, studyId, participantId, outcome === 'OVER_QUOTA' ? 'DISQUALIFIED' : outcome, at, quotaGroup);
      if (!recorded) throw new Error('The participant locked to submit could not record the submission');
      await queries.insertResponse(transaction, {
        workspace_id: workspaceId,
        participant_id: participantId,
        study_id: studyId,
        person_id: recorded.personId,
        revision: screener.revision,
        outcome,
        decided_by: JSON.stringify(decidedBy),
        suspected_bot: submission.suspectedBot,
        started_at: submission.startedAt,
        submitted_at: at,
        seconds_to_complete: submission.startedAt === null ? null : Math.max(0, Math.round((Date.parse(at) - Date.parse(submission.startedAt)) / 1000)),
        link_id: submission.linkId,
      });
      await queries.insertAnswers(transaction, workspaceId, participantId, evaluation.accepted, at);
      return { kind: 'RECORDED', outcome, ...(quotaGroup !== undefined ? { quotaGroup } : {}) };
    };
    if (ruled !== 'QUALIFIED') return write(ruled, ruledBy, undefined);

    const answersByKey = new Map(screener.questions.flatMap((question) => {
      const answer = evaluation.accepted.get(question.id);
      return answer === undefined ? [] : [[question.key, answer] as const];
    }));
    const match = await matchQuotaGroups(transaction, { workspaceId, studyId, personId: open.personId, answersByKey, at });
    if (match.kind === 'NO_QUOTAS') return write('QUALIFIED', ruledBy, undefined);
    // A group's place is a row every qualified submission of the study updates, locked from that
    // update to the commit: taken first, it was held while the rest was written, and submissions
    // queued on it (21 ms a place, 64 at once in the screener bench). So the rows are written first
    // for the group that had a place when read, and its place is taken last; should it have filled
    // meanwhile, everything since the savepoint is undone and the places are taken first, in order.
    const likely = match.groups.find((group) => group.filled < group.cap);
    if (likely) {
      await sql`savepoint quota_place`.execute(transaction);
      const result = await write('QUALIFIED', ruledBy, likely.name);
      if ((await takePlace(transaction, workspaceId, likely.quota_group_id, at)) === likely.name) return result;
      await sql`rollback to savepoint quota_place`.execute(transaction);
    }
    const placement = await takeFirstPlace(transaction, workspaceId, match.groups, at);
    if (placement.kind === 'PLACED') return write('QUALIFIED', ruledBy, placement.name);
    return write('OVER_QUOTA', { kind: 'OVER_QUOTA', matchedQuotaGroupIds: match.groups.map((group) => group.quota_group_id), qualifiedBy }, undefined);
  });
}
export { eraseResponsesOfPeople, recordScreenerStarted } from './queries.js';

// ---------------------------------------------------------------------------------------------
// Answers for the team (issue 33, item 4)

export type CallContext = Pick<SharedCallContext, 'db' | 'workspaceId' | 'canReadPersonalData' | 'canReadScreeners'>;

/** The right the answers need beside participants:read: a token made with --no-screeners sees no screener, so neither its questions nor their answers. */
export const SCREENERS_RIGHT = 'screeners';

export interface PresentedAnswer {
  questionId: string;
  questionKey: string;
  revision: number;
  text: string;
  type: string;
  choices: { id: string; label: string }[] | null;
  value: unknown;
  choiceLabels: string[] | null;
  masked: boolean;
}

export interface PresentedResponse {
  participantId: string;
  studyId: string;
  personId: string;
  revision: number;
  outcome: queries.ResponseRow['outcome'];
  decidedBy: queries.ResponseRow['decided_by'];
  suspectedBot: boolean;
  startedAt: string | null;
  submittedAt: string;
  secondsToComplete: number | null;
  answers: PresentedAnswer[];
}

function refuseWithoutScreeners(context: CallContext): void {
  if (!context.canReadScreeners) throw forbidden(SCREENERS_RIGHT);
}

export async function checkStudy(context: CallContext, studyId: string): Promise<void> {
  if (!(await studyExists(context.db, context.workspaceId, studyId))) throw notFound('Study', ['studyId']);
}

const choicesOf = (answer: queries.AnswerRow) => (answer.type === 'YES_NO' ? (answer.choices ?? yesNoChoices) : answer.choices);

/**
 * What masking the answers need for this token: without the personal-data right, the answers to
 * questions mapped to a property flagged isPII or isPHI (or to a property since deleted), and
 * every answer to an EMAIL or PHONE_NUMBER question (an address or a number is personal data
 * wherever it is kept, as a person's email and phone are).
 */
async function maskingOf(context: CallContext, answers: readonly queries.AnswerRow[]): Promise<(answer: queries.AnswerRow) => string | undefined> {
  if (context.canReadPersonalData) return () => undefined;
  const mapped = [...new Set(answers.flatMap((answer) => (answer.mapped_to_property_id === null ? [] : [answer.mapped_to_property_id])))];
  const personal = await queries.findPersonalProperties(context.db, context.workspaceId, mapped);
  return (answer) => {
    if (answer.type === 'EMAIL') return MASKED_EMAIL;
    if (answer.type === 'PHONE_NUMBER' || (answer.mapped_to_property_id !== null && personal.has(answer.mapped_to_property_id))) return MASKED_TEXT;
    return undefined;
  };
}

function presentAnswer(answer: queries.AnswerRow, mask: string | undefined): PresentedAnswer {
  const choices = choicesOf(answer)?.map((choice) => ({ id: choice.id, label: choice.label })) ?? null;
  const picked = mask === undefined && choices !== null ? (Array.isArray(answer.value) ? answer.value : [answer.value]).map(String) : null;
  return {
    questionId: answer.question_id,
    questionKey: answer.question_key,
    revision: answer.revision,
    text: answer.name,
    type: answer.type,
    choices,
    value: mask ?? answer.value,
    choiceLabels: picked === null ? null : picked.map((id) => choices!.find((choice) => choice.id === id)?.label ?? id),
    masked: mask !== undefined,
  };
}

/** Responses with their answers (one query for all of them) and masking, in the order given. */
async function presentResponses(context: CallContext, rows: readonly queries.ResponseRow[]): Promise<PresentedResponse[]> {
  const answers = await queries.findAnswersOf(
    context.db,
    context.workspaceId,
    rows.map((row) => row.participant_id),
  );
  const mask = await maskingOf(context, answers);
  const byParticipant = new Map<string, PresentedAnswer[]>();
  for (const answer of answers) {
    const list = byParticipant.get(answer.participant_id) ?? [];
    list.push(presentAnswer(answer, mask(answer)));
    byParticipant.set(answer.participant_id, list);
  }
  return rows.map((row) => ({
    participantId: row.participant_id,
    studyId: row.study_id,
    personId: row.person_id,
    revision: row.revision,
    outcome: row.outcome,
    decidedBy: row.decided_by,
    suspectedBot: row.suspected_bot,
    startedAt: row.started_at,
    submittedAt: row.submitted_at,
    secondsToComplete: row.seconds_to_complete,
    answers: byParticipant.get(row.participant_id) ?? [],
  }));
}

/** GET /studies/{studyId}/participants/{participantId}/screener-response. */
export async function getResponse(context: CallContext, studyId: string, participantId: string): Promise<PresentedResponse> {
  refuseWithoutScreeners(context);
  const row = await queries.findResponse(context.db, context.workspaceId, studyId, participantId);
  if (!row) {
    await checkStudy(context, studyId);
    if (!(await queries.participantOfStudyExists(context.db, context.workspaceId, studyId, participantId))) throw notFound('Participant', ['participantId']);
    throw notFound('Screener response', ['participantId']);
  }
  return (await presentResponses(context, [row]))[0]!;
}

/** GET /studies/{studyId}/screener-responses: a page after a participant id (the study is checked first). */
export async function listResponses(context: CallContext, studyId: string, outcome: string | undefined, afterParticipantId: string | undefined, size: number): Promise<KeysetRows<PresentedResponse>> {
  refuseWithoutScreeners(context);
  await checkStudy(context, studyId);
  const { rows, total } = await queries.listResponses(context.db, context.workspaceId, studyId, outcome, afterParticipantId, size);
  return { rows: await presentResponses(context, rows.slice(0, size)), hasNextPage: rows.length > size, total };
}

/** Responses written to the CSV a batch at a time: each batch one query of responses and one of their answers. */
const EXPORT_BATCH = 500;

const fixedColumns = ['participantId', 'personId', 'submittedAt', 'startedAt', 'secondsToComplete', 'outcome', 'decidedBy', 'suspectedBot', 'revision'];

/** An answer as one CSV cell: choices by their labels (several joined by "; "), numbers as numbers, texts neutralised. */
function answerCell(answer: PresentedAnswer): string {
  if (answer.masked) return csvText(String(answer.value));
  if (answer.choiceLabels !== null) return csvText(answer.choiceLabels.join('; '));
  if (typeof answer.value === 'number') return csvNumber(answer.value);
  return csvText(Array.isArray(answer.value) ? answer.value.join('; ') : String(answer.value));
}

/**
 * The study's responses as CSV records, streamed: a header, then one record per response in
 * participant id order. Columns: the response's own fields, then one per question (by its key,
 * across revisions): the current revision's in their order, then older questions no longer asked,
 * newest first. Each question column is headed by its latest text (its key added when two share
 * a text). Checks come first (403, 404), so an error is an answer, not a broken download.
 */
export async function exportResponses(context: CallContext, studyId: string, outcome: string | undefined): Promise<AsyncIterable<string>> {
  refuseWithoutScreeners(context);
  await checkStudy(context, studyId);
  const questions = await queries.findQuestionColumns(context.db, context.workspaceId, studyId);
  const keys: string[] = [];
  const texts = new Map<string, string>();
  for (const question of questions) {
    if (texts.has(question.question_key)) continue;
    keys.push(question.question_key);
    texts.set(question.question_key, question.name);
  }
  const shared = new Set([...texts.values()].filter((text, index, all) => all.indexOf(text) !== index));
  const headers = [...fixedColumns, ...keys.map((key) => (shared.has(texts.get(key)!) ? `${texts.get(key)!} (${key})` : texts.get(key)!))];
  return (async function* () {
    yield csvRecord(headers.map(csvText));
    let after: string | undefined;
    for (;;) {
      const { rows } = await queries.listResponses(context.db, context.workspaceId, studyId, outcome, after, EXPORT_BATCH, { count: false });
      const batch = rows.slice(0, EXPORT_BATCH);
      if (batch.length === 0) return;
      const presented = await presentResponses(context, batch);
      let text = '';
      for (const response of presented) {
        const byKey = new Map(response.answers.map((answer) => [answer.questionKey, answer]));
        const cells = [
          csvText(response.participantId),
          csvText(response.personId),
          csvText(response.submittedAt),
          csvText(response.startedAt ?? ''),
          response.secondsToComplete === null ? '' : csvNumber(response.secondsToComplete),
          csvText(response.outcome),
          csvText(JSON.stringify(response.decidedBy)),
          response.suspectedBot ? 'true' : 'false',
          csvNumber(response.revision),
          ...keys.map((key) => {
            const answer = byKey.get(key);
            return answer === undefined ? '' : answerCell(answer);
          }),
        ];
        text += csvRecord(cells);
      }
      yield text;
      if (rows.length <= EXPORT_BATCH) return;
      after = batch.at(-1)!.participant_id;
    }
  })();
}

export interface ScreenerFunnel {
  studyId: string;
  participants: number;
  sent: number;
  opened: number;
  started: number;
  submitted: number;
  qualified: number;
  disqualified: number;
  needsReview: number;
  overQuota: number;
  quotaGroups: { name: string; participants: number }[];
}

/** GET /studies/{studyId}/screener-funnel: counts only, so the screeners right is not needed. */
export async function getFunnel(context: CallContext, studyId: string): Promise<ScreenerFunnel> {
  await checkStudy(context, studyId);
  const [counts, quotaGroups] = await Promise.all([queries.countFunnel(context.db, context.workspaceId, studyId), queries.countQuotaGroups(context.db, context.workspaceId, studyId)]);
  return {
    studyId,
    participants: counts.participants,
    sent: counts.sent,
    opened: counts.opened,
    started: counts.started,
    submitted: counts.submitted,
    qualified: counts.qualified,
    disqualified: counts.disqualified,
    needsReview: counts.needs_review,
    overQuota: counts.over_quota,
    quotaGroups,
  };
}

/** The answers of the person's participations (their own page's data download): question, its name, the value. */
export async function answersOfParticipants(db: Kysely<DB>, workspaceId: string, participantIds: readonly string[]) {
  const rows = await queries.findAnswersOf(db, workspaceId, participantIds);
  return rows.map((row) => ({ participantId: row.participant_id, question: row.name, type: row.type, value: row.value }));
}
