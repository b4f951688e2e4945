import { type Schema, unwrap } from '@recruit-ops/sdk/browser';
import { useState } from 'preact/hooks';
import { Link } from 'wouter-preact';
import { describeProblem, type Problem } from '../api.js';
import { type ColumnDef, DataTable } from '../components/DataTable.js';
import { ErrorNotice } from '../components/ErrorNotice.js';
import { Moment } from '../components/Moment.js';
import { Pager } from '../components/Pager.js';
import { PersonLabel } from '../components/PersonLabel.js';
import { humanize, StatusBadge } from '../components/StatusBadge.js';
import { viewerTimeZone } from '../format.js';
import { useCursorPages, useLoad } from '../hooks.js';
import { SendIncentiveForm } from '../incentives/SendIncentiveForm.js';
import { StudyIncentives } from '../incentives/StudyIncentives.js';
import { loadPeopleByIds, type Person } from '../people.js';
import { useMay } from '../rights.js';
import { useSession } from '../session.js';
import { type ApprovalStatus, approvalLabels, approvalMoves, moveLabels, offeredStatusMoves, type ParticipantStatus } from './moves.js';

type Study = Schema<'Study'>;
type Participant = Schema<'Participant'>;

/**
 * A participant in the words of a control's label ("Move … to"): their email, which is unique
 * (masked for tokens without the personal-data right), or their name once the email is erased.
 */
export const participantName = (participant: Pick<Participant, 'email'>, person?: Pick<Person, 'name'>) => participant.email ?? (person?.name || 'this participant');

/** A participant with the person behind it (undefined once that person is deleted): the row shows their name and email. */
export interface ParticipantRow {
  participant: Participant;
  person: Person | undefined;
}

/**
 * A study's participants with their moves (only those the state tables allow from each row's
 * status, for roles that may update participants), approval, sending an incentive, and the study's
 * incentives beneath; a link to the study's status event feed.
 */
export function ParticipantsPanel({ study }: { study: Study }) {
  const { api } = useSession().session;
  const { studyId } = study;
  const mayMove = useMay('patch /studies/{studyId}/participants/{participantId}');
  const maySend = useMay('post /incentives');
  const pages = useCursorPages([studyId]);
  const [sendingTo, setSendingTo] = useState<ParticipantRow | undefined>();
  const [incentivesVersion, setIncentivesVersion] = useState(0);
  // The people behind the page's participants load with it: a row never shows an id, then a name.
  const participants = useLoad(async () => {
    const page = unwrap(
      await api.POST('/studies/{studyId}/participants/search', {
        params: { path: { studyId } },
        body: { pageInfo: { size: 25, ...(pages.cursor ? { startCursor: pages.cursor } : {}) } },
      }),
    );
    const people = await loadPeopleByIds(api, page.results.map((participant) => participant.personId));
    return { ...page, rows: page.results.map((participant): ParticipantRow => ({ participant, person: people.get(participant.personId) })) };
  }, [api, studyId, pages.cursor]);

  const columns: ColumnDef<ParticipantRow>[] = [
    // The person page (console/src/pages/Person.tsx) holds the rest of who they are.
    {
      id: 'person',
      header: 'Participant',
      cell: ({ row }) => <PersonLabel name={row.original.person?.name} email={row.original.participant.email} personId={row.original.participant.personId} />,
    },
    { id: 'status', header: 'Status', cell: ({ row }) => <StatusBadge status={row.original.participant.status} /> },
    { id: 'approvalStatus', header: 'Approval', cell: ({ row }) => humanize(row.original.participant.approvalStatus) },
    { id: 'screenerState', header: 'Screener', cell: ({ row }) => (row.original.participant.screenerState ? humanize(row.original.participant.screenerState) : '—') },
    {
      id: 'session',
      header: 'Session',
      cell: ({ row }) => (row.original.participant.interviewStartTime ? <Moment at={row.original.participant.interviewStartTime} as="zoned" /> : '—'),
    },
    { id: 'addedToStudyAt', header: 'Added', cell: ({ row }) => <Moment at={row.original.participant.addedToStudyAt} as="day" /> },
  ];
  if (mayMove || maySend) {
    columns.push({
      id: 'actions',
      header: 'Actions',
      cell: ({ row }) => (
        <ParticipantActions
          participant={row.original.participant}
          person={row.original.person}
          study={study}
          mayMove={mayMove}
          maySend={maySend}
          onChanged={participants.reload}
          onSendIncentive={() => setSendingTo(row.original)}
        />
      ),
    });
  }

  return (
    <>
      <section aria-labelledby="participants-heading" class="compact-table">
        <div class="page-header">
          <h2 id="participants-heading">Participants</h2>
          <Link href={`/studies/${encodeURIComponent(studyId)}/events`}>Status events of this study</Link>
        </div>
        <p>
          <Link href={`/studies/${encodeURIComponent(studyId)}/search`}>Find participants</Link> with a filter.
        </p>
        <ErrorNotice problem={participants.problem} />
        {participants.data && (
          <>
            <DataTable caption="Participants" columns={columns} rows={participants.data.rows} rowId={(row) => row.participant.participantId} empty="No participant yet." />
            <Pager
              label="Pages of participants"
              pageNumber={pages.pageNumber}
              total={participants.data.total}
              shown={participants.data.results.length}
              hasNextPage={participants.data.pageInfo.hasNextPage}
              onPrevious={pages.previous}
              onNext={() => participants.data && pages.next(participants.data.pageInfo.endCursor)}
            />
          </>
        )}
      </section>
      {sendingTo && maySend && (
        <SendIncentiveForm
          key={sendingTo.participant.participantId}
          participant={sendingTo.participant}
          person={sendingTo.person}
          study={study}
          onClose={() => setSendingTo(undefined)}
          onSent={() => {
            setSendingTo(undefined);
            setIncentivesVersion((version) => version + 1);
          }}
        />
      )}
      <StudyIncentives study={study} version={incentivesVersion} />
    </>
  );
}

/**
 * One row's moves and approval (a list of those allowed, then Apply), "Send incentive", and the
 * API's refusal in words beneath them.
 */
function ParticipantActions(props: {
  participant: Participant;
  person: Person | undefined;
  study: Study;
  mayMove: boolean;
  maySend: boolean;
  onChanged(): void;
  onSendIncentive(): void;
}) {
  const { participant, study } = props;
  const { api } = useSession().session;
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | undefined>();
  const [scheduling, setScheduling] = useState(false);
  const [chosen, setChosen] = useState('');
  const [startTime, setStartTime] = useState(() => defaultSessionStart(participant.interviewStartTime));
  const name = participantName(participant, props.person);
  const moves = props.mayMove ? offeredStatusMoves(participant, study) : [];
  // A HIDDEN participant returns to the status it had (statusBeforeHidden).
  const unhide = props.mayMove && participant.status === 'HIDDEN';
  const approvals = props.mayMove ? approvalMoves[participant.approvalStatus].filter((to) => to !== 'PENDING_REVIEW') : [];
  const problemId = `problem-${participant.participantId}`;

  async function patch(body: { status?: ParticipantStatus; approvalStatus?: ApprovalStatus; interviewStartTime?: string }) {
    setBusy(true);
    setProblem(undefined);
    try {
      unwrap(
        await api.PATCH('/studies/{studyId}/participants/{participantId}', {
          params: { path: { studyId: study.studyId, participantId: participant.participantId } },
          body,
        }),
      );
      setScheduling(false);
      setChosen('');
      props.onChanged();
    } catch (error) {
      setProblem(describeProblem(error));
    } finally {
      setBusy(false);
    }
  }

  function apply(event: Event) {
    event.preventDefault();
    if (!chosen) {
      setProblem({ status: 0, summary: 'Choose a move first.', fields: [] });
      return;
    }
    const [field, to] = chosen.split(':') as ['status' | 'approvalStatus', string];
    if (field === 'approvalStatus') void patch({ approvalStatus: to as ApprovalStatus });
    else if (to === 'UNHIDE') void restore();
    // A session needs a time: SCHEDULED asks for it first.
    else if (to === 'SCHEDULED') setScheduling(true);
    else void patch({ status: to as ParticipantStatus });
  }

  async function restore() {
    const before = participant.statusBeforeHidden;
    if (!before) {
      setProblem({ status: 0, summary: 'The API does not say which status this participant had before hiding.', fields: [] });
      return;
    }
    await patch({ status: before });
  }

  function book(event: Event) {
    event.preventDefault();
    const at = new Date(startTime);
    if (Number.isNaN(at.getTime())) {
      setProblem({ status: 0, summary: 'Give the session’s date and time.', fields: [] });
      return;
    }
    void patch({ status: 'SCHEDULED', interviewStartTime: at.toISOString() });
  }

  const selectId = `move-${participant.participantId}`;
  return (
    <div class="row-actions">
      {(moves.length > 0 || unhide || approvals.length > 0) && !scheduling && (
        <form class="inline-form" onSubmit={apply} aria-label={`Move ${name}`}>
          <label for={selectId} class="visually-hidden">
            Move {name} to
          </label>
          <select
            id={selectId}
            value={chosen}
            onChange={(event) => setChosen(event.currentTarget.value)}
            {...(problem ? { 'aria-describedby': problemId, 'aria-invalid': 'true' as const } : {})}
          >
            <option value="">Move to…</option>
            {(moves.length > 0 || unhide) && (
              <optgroup label="Status">
                {moves.map((to) => (
                  <option key={to} value={`status:${to}`}>
                    {moveLabels[to]}
                  </option>
                ))}
                {unhide && <option value="status:UNHIDE">Unhide</option>}
              </optgroup>
            )}
            {approvals.length > 0 && (
              <optgroup label="Approval">
                {approvals.map((to) => (
                  <option key={to} value={`approvalStatus:${to}`}>
                    {approvalLabels[to]}
                  </option>
                ))}
              </optgroup>
            )}
          </select>
          <button type="submit" class="secondary" disabled={busy} aria-busy={busy} aria-label={`Apply the move: ${name}`}>
            Apply
          </button>
        </form>
      )}
      {scheduling && (
        <form class="inline-form" onSubmit={book} aria-label={`Book a session for ${name}`}>
          <label for={`start-${participant.participantId}`}>
            Session start <span class="muted">({viewerTimeZone} time)</span>
          </label>
          <input
            id={`start-${participant.participantId}`}
            type="datetime-local"
            required
            value={startTime}
            onInput={(event) => setStartTime(event.currentTarget.value)}
            {...(problem ? { 'aria-describedby': problemId } : {})}
          />
          <button type="submit" disabled={busy} aria-busy={busy}>
            Book session
          </button>
          <button type="button" class="secondary" onClick={() => setScheduling(false)}>
            Back
          </button>
        </form>
      )}
      {props.maySend && (
        <button type="button" class="outline send-incentive" disabled={busy} aria-label={`Send incentive: ${name}`} onClick={props.onSendIncentive}>
          Send incentive
        </button>
      )}
      {problem && (
        <small id={problemId} class="field-error" role="alert">
          {problem.summary}
        </small>
      )}
    </div>
  );
}

/** The booked session as a datetime-local value, or tomorrow at 10:00 local time. */
function defaultSessionStart(booked: string | null): string {
  const at = booked ? new Date(booked) : new Date(Date.now() + 24 * 3600 * 1000);
  if (!booked) at.setHours(10, 0, 0, 0);
  const pad = (value: number) => String(value).padStart(2, '0');
  return `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())}T${pad(at.getHours())}:${pad(at.getMinutes())}`;
}
