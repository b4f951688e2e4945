import { type RecruitClient, type Schema, unwrap } from '@recruit-ops/sdk/browser';
import { useState } from 'preact/hooks';
import { Link } from 'wouter-preact';
import { type ColumnDef, DataTable } from '../components/DataTable.js';
import { ErrorNotice } from '../components/ErrorNotice.js';
import { Moment } from '../components/Moment.js';
import { Pager } from '../components/Pager.js';
import { PersonLabel } from '../components/PersonLabel.js';
import { StatusBadge } from '../components/StatusBadge.js';
import { readFeed } from '../events/feed.js';
import { useLoad } from '../hooks.js';
import { loadPeopleByIds, type Person } from '../people.js';
import { useSession } from '../session.js';

type StudyStatusEvent = Schema<'StudyStatusEvent'>;
type ParticipantStatusEvent = Schema<'ParticipantStatusEvent'>;

/** One line of the feed: a study's or a participant's change. */
export type FeedEvent = (StudyStatusEvent & { kind: 'study' }) | (ParticipantStatusEvent & { kind: 'participant' });

const pageSize = 25;

interface Feed {
  /** Newest first. */
  events: FeedEvent[];
  /** Where each feed stopped: polling again from here brings only newer events. */
  studyCursor: string | undefined;
  participantCursor: string | undefined;
  /** The people the participant events are about, loaded with the events (a deleted person is absent). */
  people: ReadonlyMap<string, Person>;
}

async function readStudyFeed(api: RecruitClient, studyId: string, from: Feed | undefined): Promise<Feed> {
  const [study, participants] = await Promise.all([
    readFeed(async (query) => unwrap(await api.GET('/study-status-events', { params: { query } })), studyId, from?.studyCursor),
    readFeed(async (query) => unwrap(await api.GET('/participant-status-events', { params: { query } })), studyId, from?.participantCursor),
  ]);
  // Each feed is in commit order: reversed, the latest commit comes first among changes of the same
  // instant; across the two feeds, the time of the change decides (a stable sort keeps the rest).
  const newer: FeedEvent[] = [
    ...study.events.map((event) => ({ ...event, kind: 'study' as const })).reverse(),
    ...participants.events.map((event) => ({ ...event, kind: 'participant' as const })).reverse(),
  ];
  newer.sort((a, b) => (a.occurredAt < b.occurredAt ? 1 : a.occurredAt > b.occurredAt ? -1 : 0));
  const known = from?.people ?? new Map<string, Person>();
  const unknown = participants.events.map((event) => event.personId).filter((personId) => !known.has(personId));
  const found = unknown.length > 0 ? await loadPeopleByIds(api, unknown) : new Map<string, Person>();
  return { events: [...newer, ...(from?.events ?? [])], studyCursor: study.cursor, participantCursor: participants.cursor, people: new Map([...known, ...found]) };
}

const fieldWords: Record<string, string> = { status: 'Status', approvalStatus: 'Approval', screenerState: 'Screener' };

/** The status event feed of one study, newest first: who (the study, or the participant by email), what changed, when. */
export function StudyEventsPage({ studyId }: { studyId: string }) {
  const { api } = useSession().session;
  const study = useLoad(async () => unwrap(await api.GET('/studies/{studyId}', { params: { path: { studyId } } })), [api, studyId]);
  const [feed, setFeed] = useState<Feed | undefined>();
  const [pageNumber, setPageNumber] = useState(1);
  const [refresh, setRefresh] = useState(0);
  const load = useLoad(async () => {
    const next = await readStudyFeed(api, studyId, refresh === 0 ? undefined : feed);
    setFeed(next);
    return next.events.length - (refresh === 0 ? 0 : (feed?.events.length ?? 0));
  }, [api, studyId, refresh]);

  const events = feed?.events ?? [];
  const shown = events.slice((pageNumber - 1) * pageSize, pageNumber * pageSize);
  const studyName = study.data ? study.data.studyPlan.name || 'Untitled study' : undefined;

  const columns: ColumnDef<FeedEvent>[] = [
    { id: 'when', header: 'When', cell: ({ row }) => <Moment at={row.original.occurredAt} as="zoned" /> },
    {
      id: 'who',
      header: 'Who',
      cell: ({ row }) => {
        if (row.original.kind === 'study') return 'The study';
        const person = feed?.people.get(row.original.personId);
        return <PersonLabel name={person?.name} email={person?.email} personId={person?.personId} />;
      },
    },
    { id: 'what', header: 'What', cell: ({ row }) => fieldWords[row.original.field] ?? row.original.field },
    {
      id: 'change',
      header: 'Change',
      cell: ({ row }) =>
        row.original.from === null ? (
          <>
            created as <StatusBadge status={row.original.to} />
          </>
        ) : (
          <>
            <StatusBadge status={row.original.from} /> → <StatusBadge status={row.original.to} />
          </>
        ),
    },
  ];

  return (
    <>
      <header class="page-header">
        <h1 aria-busy={!studyName}>Status events{studyName ? `: ${studyName}` : ''}</h1>
        <Link href={`/studies/${encodeURIComponent(studyId)}`}>Back to the study</Link>
      </header>
      <p class="muted">
        Every change of the study's status and of its participants' status, approval and screener state, newest first.
      </p>
      <ErrorNotice problem={load.problem ?? study.problem} />
      <div class="actions">
        <button type="button" class="secondary" disabled={load.loading} aria-busy={load.loading} onClick={() => setRefresh((value) => value + 1)}>
          Check for newer events
        </button>
        {refresh > 0 && !load.loading && load.data !== undefined && (
          <span role="status">{load.data === 0 ? 'No newer event.' : `${load.data} newer ${load.data === 1 ? 'event' : 'events'}.`}</span>
        )}
      </div>
      {feed && (
        <>
          <DataTable caption={`Status events of ${studyName ?? 'the study'}, newest first`} columns={columns} rows={shown} rowId={(row) => `${row.kind}-${row.eventId}`} empty="No event yet." />
          <Pager
            label="Pages of events"
            pageNumber={pageNumber}
            total={events.length}
            shown={shown.length}
            hasNextPage={pageNumber * pageSize < events.length}
            onPrevious={() => setPageNumber((value) => Math.max(1, value - 1))}
            onNext={() => setPageNumber((value) => value + 1)}
          />
        </>
      )}
      {!feed && load.loading && <p aria-busy="true">Loading the events…</p>}
    </>
  );
}
