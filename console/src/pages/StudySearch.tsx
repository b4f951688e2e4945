import { unwrap } from '@recruit-ops/sdk/browser';
import { Link } from 'wouter-preact';
import { ErrorNotice } from '../components/ErrorNotice.js';
import { Moment } from '../components/Moment.js';
import { PersonLabel } from '../components/PersonLabel.js';
import { humanize, StatusBadge } from '../components/StatusBadge.js';
import { participantCell } from '../filters/columns.js';
import type { PropertyGroup } from '../filters/model.js';
import { type SearchColumn, SearchPanel } from '../filters/SearchPanel.js';
import { useFilterSearch } from '../filters/search.js';
import { useLoad } from '../hooks.js';
import type { ParticipantRow } from '../participants/ParticipantsPanel.js';
import { loadPeopleByIds } from '../people.js';
import { useSession } from '../session.js';

const participantGroups: readonly PropertyGroup[] = ['PERSON', 'PARTICIPANT', 'INCENTIVE'];

const columns: SearchColumn<ParticipantRow>[] = [
  {
    id: 'person',
    header: 'Participant',
    cell: ({ participant, person }) => <PersonLabel name={person?.name} email={participant.email} personId={participant.personId} />,
    sortBy: { propertyGroup: 'PERSON', propertyName: 'EMAIL' },
    covers: ['PERSON:EMAIL', 'PERSON:NAME'],
  },
  {
    id: 'status',
    header: 'Status',
    cell: ({ participant }) => <StatusBadge status={participant.status} />,
    sortBy: { propertyGroup: 'PARTICIPANT', propertyName: 'STATUS' },
    covers: ['PARTICIPANT:STATUS'],
  },
  {
    id: 'approvalStatus',
    header: 'Approval',
    cell: ({ participant }) => humanize(participant.approvalStatus),
    sortBy: { propertyGroup: 'PARTICIPANT', propertyName: 'APPROVAL_STATUS' },
    covers: ['PARTICIPANT:APPROVAL_STATUS'],
  },
  {
    id: 'screenerState',
    header: 'Screener',
    cell: ({ participant }) => (participant.screenerState ? humanize(participant.screenerState) : '—'),
    sortBy: { propertyGroup: 'PARTICIPANT', propertyName: 'SCREENER_STATUS' },
    covers: ['PARTICIPANT:SCREENER_STATUS'],
  },
  { id: 'addedToStudyAt', header: 'Added', cell: ({ participant }) => <Moment at={participant.addedToStudyAt} as="day" /> },
];

/**
 * A study's participants searched with the filter builder (E1, POST /studies/{studyId}/participants/search):
 * PERSON, PARTICIPANT and INCENTIVE names. Each page of participants comes with their people (one
 * people search), so a row names the person and shows the person's values the filter names.
 */
export function StudySearchPage({ studyId }: { studyId: string }) {
  const { api } = useSession().session;
  const study = useLoad(async () => unwrap(await api.GET('/studies/{studyId}', { params: { path: { studyId } } })), [api, studyId]);
  const search = useFilterSearch<ParticipantRow>(
    participantGroups,
    async (body) => {
      const page = unwrap(await api.POST('/studies/{studyId}/participants/search', { params: { path: { studyId } }, body }));
      const people = await loadPeopleByIds(api, page.results.map((participant) => participant.personId));
      return { ...page, results: page.results.map((participant) => ({ participant, person: people.get(participant.personId) })) };
    },
    [studyId],
  );
  const name = study.data ? study.data.studyPlan.name || 'Untitled study' : undefined;
  return (
    <>
      <header class="page-header">
        <h1 aria-busy={!name}>Find participants{name ? ` of ${name}` : ''}</h1>
        <Link href={`/studies/${encodeURIComponent(studyId)}`}>Back to the study</Link>
      </header>
      <ErrorNotice problem={study.problem} />
      <SearchPanel
        search={search}
        noun={{ one: 'participant', many: 'participants' }}
        columns={columns}
        rowId={(row) => row.participant.participantId}
        rowLabel={(row) => row.participant.email ?? row.person?.name ?? 'this participant'}
        filterCell={participantCell}
      />
    </>
  );
}
