import { type Schema, unwrap } from '@recruit-ops/sdk/browser';
import { Link, useLocation, useSearch } from 'wouter-preact';
import { type ColumnDef, DataTable } from '../components/DataTable.js';
import { ErrorNotice } from '../components/ErrorNotice.js';
import { Moment } from '../components/Moment.js';
import { Pager } from '../components/Pager.js';
import { humanize, StatusBadge } from '../components/StatusBadge.js';
import { useCursorPages, useLoad } from '../hooks.js';
import { useMay } from '../rights.js';
import { useSession } from '../session.js';

type StudySummary = Schema<'StudySummary'>;
export type StudyStatus = StudySummary['status'];
export const studyStatuses: readonly StudyStatus[] = ['DRAFT', 'ACTIVE', 'PAUSED', 'CLOSED'];

const pageSize = 25;

const columns: ColumnDef<StudySummary>[] = [
  {
    id: 'name',
    header: 'Name',
    cell: ({ row }) => <Link href={`/studies/${encodeURIComponent(row.original.studyId)}`}>{row.original.studyPlan.name || 'Untitled study'}</Link>,
  },
  { id: 'status', header: 'Status', cell: ({ row }) => <StatusBadge status={row.original.status} /> },
  { id: 'studyType', header: 'Type', cell: ({ row }) => humanize(row.original.studyType) },
  { id: 'owners', header: 'Owners', cell: ({ row }) => row.original.owners.map((owner) => owner.fullname || owner.email).join(', ') },
  { id: 'createdAt', header: 'Created', cell: ({ row }) => <Moment at={row.original.createdAt} as="day" /> },
];

/** The studies of the workspace, newest first, filtered by status (kept in the address: `?status=ACTIVE`). */
export function StudiesPage() {
  const { api } = useSession().session;
  const mayCreate = useMay('post /studies');
  const search = new URLSearchParams(useSearch());
  const [, navigate] = useLocation();
  const given = search.get('status');
  const status = studyStatuses.find((value) => value === given);
  const pages = useCursorPages([status]);
  const studies = useLoad(
    async () => unwrap(await api.GET('/studies', { params: { query: { size: pageSize, ...(status ? { status } : {}), ...(pages.cursor ? { startCursor: pages.cursor } : {}) } } })),
    [api, status, pages.cursor],
  );

  return (
    <>
      <header class="page-header">
        <h1>Studies</h1>
        {mayCreate && (
          <Link href="/studies/new" role="button">
            Create study
          </Link>
        )}
      </header>
      <form class="filters" onSubmit={(event) => event.preventDefault()}>
        <label for="status-filter">Status</label>
        <select
          id="status-filter"
          value={status ?? ''}
          onChange={(event) => navigate(event.currentTarget.value ? `/studies?status=${event.currentTarget.value}` : '/studies')}
        >
          <option value="">Every status</option>
          {studyStatuses.map((value) => (
            <option key={value} value={value}>
              {humanize(value)}
            </option>
          ))}
        </select>
      </form>
      <ErrorNotice problem={studies.problem} />
      <div aria-busy={studies.loading}>
        {studies.data && (
          <>
            <DataTable caption="Studies" columns={columns} rows={studies.data.results} rowId={(study) => study.studyId} empty="No study matches." />
            <Pager
              label="Pages of studies"
              pageNumber={pages.pageNumber}
              total={studies.data.total}
              shown={studies.data.results.length}
              hasNextPage={studies.data.pageInfo.hasNextPage}
              onPrevious={pages.previous}
              onNext={() => studies.data && pages.next(studies.data.pageInfo.endCursor)}
            />
          </>
        )}
      </div>
    </>
  );
}
