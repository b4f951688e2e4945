import { type Schema, unwrap } from '@recruit-ops/sdk/browser';
import { Link } from 'wouter-preact';
import { ErrorNotice } from '../components/ErrorNotice.js';
import { humanize, StatusBadge } from '../components/StatusBadge.js';
import type { PropertyGroup } from '../filters/model.js';
import { type SearchColumn, SearchPanel } from '../filters/SearchPanel.js';
import { useFilterSearch } from '../filters/search.js';
import { useLoad } from '../hooks.js';
import { useSession } from '../session.js';

type Participant = Schema<'Participant'>;

const participantGroups: readonly PropertyGroup[] = ['PERSON', 'PARTICIPANT', 'INCENTIVE'];

const columns: SearchColumn<Participant>[] = [
  { id: 'email', header: 'Email', cell: (row) => row.email, sortBy: { propertyGroup: 'PERSON', propertyName: 'EMAIL' } },
  { id: 'status', header: 'Status', cell: (row) => <StatusBadge status={row.status} />, sortBy: { propertyGroup: 'PARTICIPANT', propertyName: 'STATUS' } },
  { id: 'approvalStatus', header: 'Approval', cell: (row) => humanize(row.approvalStatus), sortBy: { propertyGroup: 'PARTICIPANT', propertyName: 'APPROVAL_STATUS' } },
  { id: 'screenerState', header: 'Screener', cell: (row) => (row.screenerState ? humanize(row.screenerState) : '—'), sortBy: { propertyGroup: 'PARTICIPANT', propertyName: 'SCREENER_STATUS' } },
  { id: 'addedToStudyAt', header: 'Added', cell: (row) => new Date(row.addedToStudyAt).toLocaleDateString() },
];

/** A study's participants searched with the filter builder (E1, POST /studies/{studyId}/participants/search): PERSON, PARTICIPANT and INCENTIVE names. */
export function StudySearchPage({ studyId }: { studyId: string }) {
  const { api } = useSession().session;
  const study = useLoad(async () => unwrap(await api.GET('/studies/{studyId}', { params: { path: { studyId } } })), [api, studyId]);
  const search = useFilterSearch<Participant>(
    participantGroups,
    async (body) => unwrap(await api.POST('/studies/{studyId}/participants/search', { params: { path: { studyId } }, body })),
    [studyId],
  );
  const name = study.data?.studyPlan.name ?? studyId;
  return (
    <>
      <header class="page-header">
        <h1>Find participants of {name}</h1>
        <Link href={`/studies/${encodeURIComponent(studyId)}`}>Back to the study</Link>
      </header>
      <ErrorNotice problem={study.problem} />
      <SearchPanel search={search} noun={{ one: 'participant', many: 'participants' }} columns={columns} rowId={(row) => row.participantId} rowLabel={(row) => row.email ?? row.participantId} />
    </>
  );
}
