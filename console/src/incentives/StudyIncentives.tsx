import { type Schema, unwrap } from '@recruit-ops/sdk/browser';
import { useState } from 'preact/hooks';
import { describeProblem, type Problem } from '../api.js';
import { type ColumnDef, DataTable } from '../components/DataTable.js';
import { ErrorNotice } from '../components/ErrorNotice.js';
import { Moment } from '../components/Moment.js';
import { Pager } from '../components/Pager.js';
import { PersonLabel } from '../components/PersonLabel.js';
import { humanize, StatusBadge } from '../components/StatusBadge.js';
import { formatCents } from '../format.js';
import { useCursorPages, useLoad } from '../hooks.js';
import { loadPeopleByIds, type Person } from '../people.js';
import { useMay } from '../rights.js';
import { useSession } from '../session.js';
import { recipientWords } from './SendIncentiveForm.js';
import { mayCancel, mayResend } from './states.js';

type Study = Schema<'Study'>;
type Incentive = Schema<'Incentive'>;
/** An incentive with its recipient (undefined once deleted), loaded together so the row names them from its first paint. */
interface IncentiveRow {
  incentive: Incentive;
  person: Person | undefined;
}

/**
 * The study's incentives (POST /incentives/search with its studyId, keyset pages) with their
 * status, and resend / cancel where the incentive's state and the study's status allow, for roles
 * that may. `version` changes when the page sent one, to load again.
 */
export function StudyIncentives({ study, version }: { study: Study; version: number }) {
  const { api } = useSession().session;
  const mayCancelRole = useMay('post /incentives/{incentiveId}/cancel');
  const mayResendRole = useMay('post /incentives/{incentiveId}/resend');
  const mayApproveRole = useMay('post /incentives/{incentiveId}/approve');
  const pages = useCursorPages([study.studyId]);
  const incentives = useLoad(async () => {
    const page = unwrap(
      await api.POST('/incentives/search', {
        body: { studyId: study.studyId, pageInfo: { size: 25, ...(pages.cursor ? { startCursor: pages.cursor } : {}) } },
      }),
    );
    const people = await loadPeopleByIds(api, page.results.map((incentive) => incentive.personId));
    return { ...page, rows: page.results.map((incentive): IncentiveRow => ({ incentive, person: people.get(incentive.personId) })) };
  }, [api, study.studyId, pages.cursor, version]);

  const columns: ColumnDef<IncentiveRow>[] = [
    { id: 'recipient', header: 'Recipient', cell: ({ row }) => <PersonLabel name={row.original.person?.name} email={row.original.incentive.recipientEmail} personId={row.original.person?.personId} /> },
    { id: 'type', header: 'Type', cell: ({ row }) => (row.original.incentive.type ? humanize(row.original.incentive.type) : '—') },
    {
      id: 'amount',
      header: 'Amount',
      cell: ({ row }) => {
        const { type, customIncentiveValue, amountCents, currency } = row.original.incentive;
        return type === 'CUSTOM' && customIncentiveValue ? `${customIncentiveValue}${amountCents > 0 ? ` (${formatCents(amountCents, currency)})` : ''}` : formatCents(amountCents, currency);
      },
    },
    {
      id: 'status',
      header: 'Status',
      // Waiting for approval reads UNCLAIMED in the API (the reference's states): said as it is here.
      cell: ({ row }) => {
        const { status, approval } = row.original.incentive;
        return approval?.state === 'PENDING' ? <StatusBadge status="WAITING_FOR_APPROVAL" /> : approval?.state === 'REFUSED' ? <StatusBadge status="REFUSED" /> : <StatusBadge status={status} />;
      },
    },
    { id: 'sentAt', header: 'Sent', cell: ({ row }) => <Moment at={row.original.incentive.sentAt} /> },
  ];
  // Cancel and resend exist only while the study is a draft; approval whatever its status.
  const waiting = incentives.data?.rows.some((row) => row.incentive.approval?.state === 'PENDING') ?? false;
  if (((mayCancelRole || mayResendRole) && study.status === 'DRAFT') || (mayApproveRole && waiting)) {
    columns.push({
      id: 'actions',
      header: 'Actions',
      cell: ({ row }) => (
        <IncentiveActions
          incentive={row.original.incentive}
          person={row.original.person}
          studyStatus={study.status}
          mayCancel={mayCancelRole}
          mayResend={mayResendRole}
          mayApprove={mayApproveRole}
          onChanged={incentives.reload}
        />
      ),
    });
  }

  return (
    <section aria-labelledby="incentives-heading" class="compact-table">
      <h2 id="incentives-heading">Incentives</h2>
      {(mayCancelRole || mayResendRole) && study.status !== 'DRAFT' && (
        <p class="muted">Incentives can be canceled or resent only while their study is a draft.</p>
      )}
      <ErrorNotice problem={incentives.problem} />
      {incentives.data && (
        <>
          <DataTable caption="Incentives" columns={columns} rows={incentives.data.rows} rowId={(row) => row.incentive.incentiveId} empty="No incentive sent yet." />
          <Pager
            label="Pages of incentives"
            pageNumber={pages.pageNumber}
            total={incentives.data.total}
            shown={incentives.data.results.length}
            hasNextPage={incentives.data.pageInfo.hasNextPage}
            onPrevious={pages.previous}
            onNext={() => incentives.data && pages.next(incentives.data.pageInfo.endCursor)}
          />
        </>
      )}
    </section>
  );
}

function IncentiveActions(props: { incentive: Incentive; person: Person | undefined; studyStatus: string; mayCancel: boolean; mayResend: boolean; mayApprove: boolean; onChanged(): void }) {
  const { incentive } = props;
  const { api } = useSession().session;
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | undefined>();
  const [done, setDone] = useState<string | undefined>();
  const offerCancel = props.mayCancel && mayCancel(incentive, props.studyStatus);
  const offerResend = props.mayResend && mayResend(incentive, props.studyStatus);
  // The API refuses the sender's own decision (409, said below): a second person decides.
  const offerDecision = props.mayApprove && incentive.approval?.state === 'PENDING';
  if (!offerCancel && !offerResend && !offerDecision && !problem) return null;
  const who = incentive.recipientEmail ?? recipientWords(props.person, null);

  const money = `${formatCents(incentive.amountCents, incentive.currency)} (${incentive.currency})`;

  async function act(action: 'cancel' | 'resend' | 'approve' | 'refuse') {
    if (action === 'cancel' && !window.confirm(`Cancel the incentive sent to ${who}?`)) return;
    if (action === 'approve' && !window.confirm(`Approve ${money} to ${who}? It is ordered at the incentive provider at once.`)) return;
    if (action === 'refuse' && !window.confirm(`Refuse ${money} to ${who}? It is never paid, and its budget gets the amount back.`)) return;
    setBusy(true);
    setProblem(undefined);
    setDone(undefined);
    const path = { params: { path: { incentiveId: incentive.incentiveId } } };
    try {
      if (action === 'cancel') unwrap(await api.POST('/incentives/{incentiveId}/cancel', path));
      else if (action === 'approve') unwrap(await api.POST('/incentives/{incentiveId}/approve', path));
      else if (action === 'refuse') unwrap(await api.POST('/incentives/{incentiveId}/refuse', { ...path, body: {} }));
      else unwrap(await api.POST('/incentives/{incentiveId}/resend', path));
      setDone({ cancel: 'Canceled.', approve: 'Approved: ordered.', refuse: 'Refused.', resend: 'The claim email was sent again.' }[action]);
      props.onChanged();
    } catch (error) {
      setProblem(describeProblem(error));
    } finally {
      setBusy(false);
    }
  }

  return (
    <div class="row-actions">
      <div class="actions" role="group" aria-label={`Incentive actions for ${who}`}>
        {offerResend && (
          <button type="button" class="secondary outline" disabled={busy} aria-label={`Resend incentive: ${who}`} onClick={() => void act('resend')}>
            Resend
          </button>
        )}
        {offerDecision && (
          <>
            <button type="button" class="outline" disabled={busy} aria-label={`Approve incentive: ${who}`} onClick={() => void act('approve')}>
              Approve
            </button>
            <button type="button" class="secondary outline" disabled={busy} aria-label={`Refuse incentive: ${who}`} onClick={() => void act('refuse')}>
              Refuse
            </button>
          </>
        )}
        {offerCancel && (
          <button type="button" class="secondary outline" disabled={busy} aria-label={`Cancel incentive: ${who}`} onClick={() => void act('cancel')}>
            Cancel incentive
          </button>
        )}
      </div>
      {done && <small role="status">{done}</small>}
      {problem && (
        <small class="field-error" role="alert">
          {problem.summary}
        </small>
      )}
    </div>
  );
}
