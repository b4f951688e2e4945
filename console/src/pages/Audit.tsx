import { type Schema, unwrap } from '@recruit-ops/sdk/browser';
import { useEffect, useState } from 'preact/hooks';
import { Link } from 'wouter-preact';
import { describeProblem, fieldMessage, type Problem } from '../api.js';
import { type ColumnDef, DataTable } from '../components/DataTable.js';
import { ErrorNotice } from '../components/ErrorNotice.js';
import { Moment } from '../components/Moment.js';
import { humanize, StatusBadge } from '../components/StatusBadge.js';
import { useMay } from '../rights.js';
import { useSession } from '../session.js';

type AuditEvent = Schema<'AuditEvent'>;
type ActorKind = AuditEvent['actor']['kind'];
const actorKinds: readonly ActorKind[] = ['USER', 'PARTICIPANT', 'SERVICE', 'OPERATOR'];
const pageSize = 50;

/** The filters as the form holds them: empty strings are "any". Times are the browser's local `datetime-local` values. */
interface Filters {
  actorKind: string;
  actorUserId: string;
  resourceType: string;
  resourceId: string;
  from: string;
  to: string;
}
const noFilters: Filters = { actorKind: '', actorUserId: '', resourceType: '', resourceId: '', from: '', to: '' };

/** The API's query for the filters: local times become UTC instants. */
function queryOf(filters: Filters) {
  const instant = (local: string) => (local === '' ? undefined : new Date(local).toISOString());
  return {
    ...(filters.actorKind ? { actorKind: filters.actorKind as ActorKind } : {}),
    ...(filters.actorUserId.trim() ? { actorUserId: filters.actorUserId.trim() } : {}),
    ...(filters.resourceType.trim() ? { resourceType: filters.resourceType.trim() } : {}),
    ...(filters.resourceId.trim() ? { resourceId: filters.resourceId.trim() } : {}),
    ...(filters.from ? { from: instant(filters.from) } : {}),
    ...(filters.to ? { to: instant(filters.to) } : {}),
  };
}

/** Who made the change, in words: the signed-in user is "You". */
function Actor({ event, userId }: { event: AuditEvent; userId: string }) {
  const { actor } = event;
  if (actor.kind === 'USER') return actor.userId === userId ? <>You</> : <>User <code>{actor.userId}</code></>;
  if (actor.kind === 'PARTICIPANT') return actor.personId ? <Link href={`/people/${encodeURIComponent(actor.personId)}`}>A participant</Link> : <>A visitor (public form)</>;
  if (actor.kind === 'SERVICE') return <>The service ({actor.service})</>;
  return <>The operator</>;
}

/** The resource, linked where the console has a page for it. */
function Resource({ event }: { event: AuditEvent }) {
  const type = event.resourceType ? humanize(event.resourceType.replace(/([a-z])([A-Z])/g, '$1_$2')) : '—';
  if (!event.resourceId) return <>{type}</>;
  if (event.resourceType === 'study') return <Link href={`/studies/${encodeURIComponent(event.resourceId)}`}>{type}</Link>;
  if (event.resourceType === 'person') return <Link href={`/people/${encodeURIComponent(event.resourceId)}`}>{type}</Link>;
  return (
    <>
      {type} <code>{event.resourceId}</code>
    </>
  );
}

/**
 * The workspace's audit trail (GET /audit-events): every write, newest first, filtered by who,
 * what and when; "Show older entries" reads the next keyset page.
 */
export function AuditPage() {
  const { api, user } = useSession().session;
  const mayRead = useMay('get /audit-events');
  const [form, setForm] = useState<Filters>(noFilters);
  const [events, setEvents] = useState<AuditEvent[] | undefined>();
  const [cursor, setCursor] = useState<string | undefined>();
  const [hasMore, setHasMore] = useState(false);
  const [applied, setApplied] = useState<Filters>(noFilters);
  const [problem, setProblem] = useState<Problem | undefined>();
  const [loading, setLoading] = useState(false);

  const load = async (filters: Filters, after: string | undefined) => {
    setLoading(true);
    setProblem(undefined);
    try {
      const page = unwrap(await api.GET('/audit-events', { params: { query: { ...queryOf(filters), size: pageSize, ...(after ? { startCursor: after } : {}) } } }));
      setEvents((previous) => (after ? [...(previous ?? []), ...page.results] : page.results));
      setCursor(page.pageInfo.endCursor || undefined);
      setHasMore(page.pageInfo.hasNextPage);
      setApplied(filters);
    } catch (error) {
      setProblem(describeProblem(error));
    } finally {
      setLoading(false);
    }
  };
  // The first page, unfiltered, when the page opens.
  useEffect(() => {
    if (mayRead) void load(noFilters, undefined);
  }, []);

  if (!mayRead) {
    return (
      <>
        <h1>Audit trail</h1>
        <p>Your role may not read the audit trail: it is for super admins and ops managers.</p>
      </>
    );
  }

  const set = (name: keyof Filters) => (event: Event) => setForm((previous) => ({ ...previous, [name]: (event.currentTarget as HTMLInputElement | HTMLSelectElement).value }));
  const invalid = (path: string) => fieldMessage(problem, [path]);
  const columns: ColumnDef<AuditEvent>[] = [
    { id: 'when', header: 'When', cell: ({ row }) => <Moment at={row.original.occurredAt} as="zoned" /> },
    { id: 'who', header: 'Who', cell: ({ row }) => <Actor event={row.original} userId={user.userId} /> },
    { id: 'what', header: 'Operation', cell: ({ row }) => <code>{row.original.operationId}</code> },
    { id: 'resource', header: 'Resource', cell: ({ row }) => <Resource event={row.original} /> },
    {
      id: 'change',
      header: 'Change',
      cell: ({ row }) => {
        const { before, after } = row.original;
        if (after === null) return '';
        return before === null ? (
          <StatusBadge status={after} />
        ) : (
          <>
            <StatusBadge status={before} /> → <StatusBadge status={after} />
          </>
        );
      },
    },
  ];

  return (
    <>
      <h1>Audit trail</h1>
      <p class="muted">Every change made in this workspace, newest first: by whom, which operation, on what. It holds ids and states, never a person's details.</p>
      <form
        class="audit-filters"
        aria-label="Filter the audit trail"
        onSubmit={(event) => {
          event.preventDefault();
          void load(form, undefined);
        }}
      >
        <div class="grid">
          <label>
            Actor
            <select name="actorKind" value={form.actorKind} onChange={set('actorKind')} aria-invalid={invalid('actorKind') ? 'true' : undefined}>
              <option value="">Anyone</option>
              {actorKinds.map((kind) => (
                <option value={kind} key={kind}>
                  {humanize(kind)}
                </option>
              ))}
            </select>
          </label>
          <label>
            User id
            <input name="actorUserId" value={form.actorUserId} onInput={set('actorUserId')} placeholder="usr_…" aria-invalid={invalid('actorUserId') ? 'true' : undefined} />
          </label>
          <label>
            Resource type
            <input name="resourceType" value={form.resourceType} onInput={set('resourceType')} placeholder="study, participant, person…" aria-invalid={invalid('resourceType') ? 'true' : undefined} />
          </label>
          <label>
            Resource id
            <input name="resourceId" value={form.resourceId} onInput={set('resourceId')} aria-invalid={invalid('resourceId') ? 'true' : undefined} />
          </label>
        </div>
        <div class="grid">
          <label>
            From
            <input type="datetime-local" name="from" value={form.from} onInput={set('from')} aria-invalid={invalid('from') ? 'true' : undefined} />
          </label>
          <label>
            Until
            <input type="datetime-local" name="to" value={form.to} onInput={set('to')} aria-invalid={invalid('to') ? 'true' : undefined} />
          </label>
        </div>
        <div class="actions">
          <button type="submit" disabled={loading}>
            Filter
          </button>
          <button
            type="button"
            class="secondary"
            disabled={loading}
            onClick={() => {
              setForm(noFilters);
              void load(noFilters, undefined);
            }}
          >
            Clear filters
          </button>
        </div>
      </form>
      <ErrorNotice problem={problem} />
      {events && (
        <>
          <DataTable caption="Audit trail, newest first" columns={columns} rows={events} rowId={(row) => row.auditEventId} empty="No entry matches." />
          <div class="actions">
            {hasMore && (
              <button type="button" class="secondary" disabled={loading} aria-busy={loading} onClick={() => void load(applied, cursor)}>
                Show older entries
              </button>
            )}
            <span role="status">{`${events.length} ${events.length === 1 ? 'entry' : 'entries'} shown${hasMore ? '' : ', no older one'}.`}</span>
          </div>
        </>
      )}
      {!events && loading && <p aria-busy="true">Loading the audit trail…</p>}
    </>
  );
}
