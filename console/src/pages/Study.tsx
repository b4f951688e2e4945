import { type Schema, unwrap } from '@recruit-ops/sdk/browser';
import { useState } from 'preact/hooks';
import { Link } from 'wouter-preact';
import { describeProblem, type Problem } from '../api.js';
import { ErrorNotice } from '../components/ErrorNotice.js';
import { humanize, StatusBadge } from '../components/StatusBadge.js';
import { formatAmount, formatCalendarDay, formatMoment } from '../format.js';
import { ParticipantsPanel } from '../participants/ParticipantsPanel.js';
import { useLoad } from '../hooks.js';
import { type Operation, useMay } from '../rights.js';
import { useSession } from '../session.js';
import type { StudyStatus } from './Studies.js';

type Study = Schema<'Study'>;

export type StudyMove = 'launch' | 'pause' | 'close';

/**
 * The status moves the console offers from each status (the API's rule: launch from DRAFT or
 * PAUSED; CLOSED is final). Pausing a draft is allowed by the API but means nothing to a team.
 */
export const studyMoves: Record<StudyStatus, readonly StudyMove[]> = {
  DRAFT: ['launch', 'close'],
  ACTIVE: ['pause', 'close'],
  PAUSED: ['launch', 'close'],
  CLOSED: [],
};

const moveOperations: Record<StudyMove, Operation> = { launch: 'post /studies/{studyId}/launch', pause: 'post /studies/{studyId}/status', close: 'post /studies/{studyId}/status' };

function moveLabel(move: StudyMove, status: StudyStatus): string {
  if (move === 'launch') return status === 'PAUSED' ? 'Resume' : 'Launch';
  return move === 'pause' ? 'Pause' : 'Close';
}

/** One study: its plan, screener, status moves and participants. */
export function StudyPage({ studyId }: { studyId: string }) {
  const { api } = useSession().session;
  const study = useLoad(async () => unwrap(await api.GET('/studies/{studyId}', { params: { path: { studyId } } })), [api, studyId]);

  if (!study.data) {
    return (
      <div aria-busy={study.loading}>
        {study.problem ? (
          <>
            <h1>Study</h1>
            <ErrorNotice problem={study.problem} />
            <Link href="/studies">Back to the studies</Link>
          </>
        ) : (
          <h1>Loading the study…</h1>
        )}
      </div>
    );
  }
  const current = study.data;
  return (
    <>
      <header class="page-header">
        <h1>{current.studyPlan.name || 'Untitled study'}</h1>
        <StatusBadge status={current.status} />
      </header>
      <StatusMoves study={current} onMoved={study.reload} />
      <StudyPlan study={current} />
      <Screener study={current} />
      <ParticipantsPanel study={current} />
    </>
  );
}

function StatusMoves({ study, onMoved }: { study: Study; onMoved(): void }) {
  const { api } = useSession().session;
  const mayLaunch = useMay(moveOperations.launch);
  const mayChange = useMay(moveOperations.pause);
  const [problem, setProblem] = useState<Problem | undefined>();
  const [busy, setBusy] = useState<StudyMove | undefined>();
  const offered = studyMoves[study.status].filter((move) => (move === 'launch' ? mayLaunch : mayChange));
  if (offered.length === 0) return null;

  async function move(chosen: StudyMove) {
    if (chosen === 'close' && !window.confirm('Close this study? A closed study cannot be reopened.')) return;
    setBusy(chosen);
    setProblem(undefined);
    const path = { params: { path: { studyId: study.studyId } } };
    try {
      if (chosen === 'launch') unwrap(await api.POST('/studies/{studyId}/launch', path));
      else unwrap(await api.POST('/studies/{studyId}/status', { ...path, body: { status: chosen === 'pause' ? 'PAUSED' : 'CLOSED' } }));
      onMoved();
    } catch (error) {
      setProblem(describeProblem(error));
    } finally {
      setBusy(undefined);
    }
  }

  return (
    <section aria-labelledby="moves-heading">
      <h2 id="moves-heading" class="visually-hidden">
        Status
      </h2>
      <div class="actions">
        {offered.map((chosen) => (
          <button key={chosen} type="button" class={chosen === 'close' ? 'secondary' : undefined} aria-busy={busy === chosen} disabled={busy !== undefined} onClick={() => void move(chosen)}>
            {moveLabel(chosen, study.status)}
          </button>
        ))}
      </div>
      <ErrorNotice problem={problem} />
    </section>
  );
}

function StudyPlan({ study }: { study: Study }) {
  const plan = study.studyPlan;
  const rows: [string, string | undefined][] = [
    ['Type', humanize(study.studyType)],
    ['Recruitment', humanize(study.recruitmentStrategy)],
    ['External name', plan.externalName],
    ['Description', plan.description],
    ['Participation limit', plan.participationLimit?.toString()],
    ['Dates', plan.startDate || plan.endDate ? `${plan.startDate ? formatCalendarDay(plan.startDate) : '…'} to ${plan.endDate ? formatCalendarDay(plan.endDate) : '…'}` : undefined],
    ['Incentive', plan.incentive?.amount !== undefined ? formatAmount(plan.incentive.amount, plan.incentive.currency ?? 'USD') : undefined],
    ['Language', plan.language],
    ['Interview length', plan.scheduler?.interviewDurationMinutes ? `${plan.scheduler.interviewDurationMinutes} min` : undefined],
    ['Owners', study.owners.map((owner) => owner.fullname || owner.email).join(', ')],
    ['Created', formatMoment(study.createdAt)],
  ];
  return (
    <section aria-labelledby="plan-heading">
      <h2 id="plan-heading">Plan</h2>
      <dl class="facts">
        {rows
          .filter((row): row is [string, string] => row[1] !== undefined && row[1] !== '')
          .map(([term, value]) => (
            <div key={term}>
              <dt>{term}</dt>
              <dd>{value}</dd>
            </div>
          ))}
      </dl>
    </section>
  );
}

function Screener({ study }: { study: Study }) {
  const { screener } = study;
  let body;
  if (!study.studyPlan.includeScreener) body = <p>This study has no screener.</p>;
  else if (!screener) body = <p>This study has a screener; your token may not read screeners.</p>;
  else if (screener.questions.length === 0) body = <p>The screener has no questions yet.</p>;
  else
    body = (
      <ol>
        {screener.questions.map((question, index) => (
          <li key={index}>
            {question.name} <span class="muted">({humanize(question.type)}{question.isRequired ? ', required' : ''})</span>
          </li>
        ))}
      </ol>
    );
  return (
    <section aria-labelledby="screener-heading">
      <h2 id="screener-heading">Screener</h2>
      {body}
    </section>
  );
}
