import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { inTransaction } from '../../db/transaction.js';
import { lockParticipantToSubmit, recordScreenerSubmission } from '../participants/service.js';
import { placeInQuotaGroup } from '../quota-groups/service.js';
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

    let outcome: SubmissionOutcome = ruled;
    let decidedBy: unknown = submission.suspectedBot ? { kind: 'SUSPECTED_BOT' } : evaluation.result.decidedBy;
    let quotaGroup: string | undefined;
    if (ruled === 'QUALIFIED') {
      const answersByKey = new Map(screener.questions.flatMap((question) => {
        const answer = evaluation.accepted.get(question.id);
        return answer === undefined ? [] : [[question.key, answer] as const];
      }));
      const placement = await placeInQuotaGroup(transaction, { workspaceId, studyId, personId: open.personId, answersByKey, at });
      if (placement.kind === 'PLACED') quotaGroup = placement.name;
      if (placement.kind === 'OVER_QUOTA') {
        outcome = 'OVER_QUOTA';
        decidedBy = { kind: 'OVER_QUOTA', matchedQuotaGroupIds: placement.matchedQuotaGroupIds, qualifiedBy: evaluation.result.decidedBy };
      }
    }
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
  });
}
export { eraseResponsesOfPeople } from './queries.js';
