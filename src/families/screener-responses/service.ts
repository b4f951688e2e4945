import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { recordScreenerSubmission } from '../participants/service.js';
import { writeAnsweredValues } from '../people/writer.js';
import { type AnswerError, type AnswerValue, evaluateScreener, type ScreenerOutcome } from '../studies/screener-rules.js';
import { type AnswerableQuestion, findAnswerableScreener } from '../studies/service.js';
import * as queries from './queries.js';

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

export type SubmissionResult =
  | { kind: 'RECORDED'; outcome: ScreenerOutcome }
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
 * written to the person's properties through the people family's writer. A second submission, or
 * one racing the first, changes nothing and answers ALREADY_SUBMITTED.
 */
export async function submitScreener(db: Kysely<DB>, submission: ScreenerSubmission): Promise<SubmissionResult> {
  const { workspaceId, studyId, participantId, at } = submission;
  return inTransaction(db, async (transaction) => {
    const screener = await findAnswerableScreener(transaction, workspaceId, studyId);
    if (!screener || screener.questions.length === 0) return { kind: 'NO_SCREENER' };
    const evaluation = evaluateScreener(screener, submission.answers);
    if (evaluation.errors.length > 0 || !evaluation.result) return { kind: 'INVALID', errors: evaluation.errors, questions: screener.questions };
    const outcome: ScreenerOutcome = submission.suspectedBot ? 'NEEDS_REVIEW' : evaluation.result.outcome;
    const recorded = await recordScreenerSubmission(transaction, workspaceId, studyId, participantId, outcome, at);
    if (!recorded) return { kind: 'ALREADY_SUBMITTED' };
    await queries.insertResponse(transaction, {
      workspace_id: workspaceId,
      participant_id: participantId,
      study_id: studyId,
      person_id: recorded.personId,
      revision: screener.revision,
      outcome,
      decided_by: JSON.stringify(submission.suspectedBot ? { kind: 'SUSPECTED_BOT' } : evaluation.result.decidedBy),
      suspected_bot: submission.suspectedBot,
      started_at: submission.startedAt,
      submitted_at: at,
      seconds_to_complete: submission.startedAt === null ? null : Math.max(0, Math.round((Date.parse(at) - Date.parse(submission.startedAt)) / 1000)),
      link_id: submission.linkId,
    });
    await queries.insertAnswers(transaction, workspaceId, participantId, evaluation.accepted, at);
    const mapped: Record<string, unknown> = {};
    for (const question of screener.questions) {
      const answer = evaluation.accepted.get(question.id);
      if (question.mappedToPropertyId !== null && answer !== undefined) mapped[question.mappedToPropertyId] = propertyValueOf(question, answer);
    }
    await writeAnsweredValues(transaction, workspaceId, recorded.personId, mapped, at);
    return { kind: 'RECORDED', outcome };
  });
}
export { eraseResponsesOfPeople } from './queries.js';
