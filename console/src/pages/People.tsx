import { type Schema, unwrap } from '@recruit-ops/sdk/browser';
import { useState } from 'preact/hooks';
import { Link } from 'wouter-preact';
import { describeProblem, fieldMessage, type Problem } from '../api.js';
import { ErrorNotice } from '../components/ErrorNotice.js';
import { Field } from '../components/Field.js';
import { MaybeMasked } from '../components/Masked.js';
import { Moment } from '../components/Moment.js';
import { humanize } from '../components/StatusBadge.js';
import { personCell } from '../filters/columns.js';
import type { PropertyGroup } from '../filters/model.js';
import { type SearchColumn, SearchPanel } from '../filters/SearchPanel.js';
import { type FilterSearch, useFilterSearch } from '../filters/search.js';
import { useLoad } from '../hooks.js';
import { useMay } from '../rights.js';
import { useSession } from '../session.js';

type Person = Schema<'Person'>;

const personGroups: readonly PropertyGroup[] = ['PERSON'];

const columns: SearchColumn<Person>[] = [
  { id: 'name', header: 'Name', cell: (person) => <MaybeMasked value={person.name} />, sortBy: { propertyGroup: 'PERSON', propertyName: 'NAME' }, covers: ['PERSON:NAME'] },
  {
    id: 'email',
    header: 'Email',
    cell: (person) => (
      <Link href={`/people/${encodeURIComponent(person.personId)}`}>
        <MaybeMasked value={person.email} />
      </Link>
    ),
    sortBy: { propertyGroup: 'PERSON', propertyName: 'EMAIL' },
    covers: ['PERSON:EMAIL'],
  },
  { id: 'contactStatus', header: 'Contact status', cell: (person) => humanize(person.contactStatus), sortBy: { propertyGroup: 'PERSON', propertyName: 'CONTACT_STATUS' }, covers: ['PERSON:CONTACT_STATUS'] },
  { id: 'updatedAt', header: 'Last changed', cell: (person) => <Moment at={person.updatedAt} as="day" />, sortBy: { propertyGroup: 'PERSON', propertyName: 'LAST_CHANGED_AT' }, covers: ['PERSON:LAST_CHANGED_AT'] },
];

/** The whole panel, searched with the filter builder (POST /people/search); selected people can be added to a study. */
export function PeoplePage() {
  const { api } = useSession().session;
  const search = useFilterSearch<Person>(personGroups, async (body) => unwrap(await api.POST('/people/search', { body })));
  const [selected, setSelected] = useState<Set<string>>(new Set());
  // Who the selected ids are, from the pages they were chosen on: outcomes name people by email.
  const [known, setKnown] = useState<Map<string, string>>(new Map());
  const mayAdd = useMay('post /studies/{studyId}/participants');
  const maySave = useMay('post /segments');

  const onSelect = (next: Set<string>) => {
    const emails = new Map(known);
    for (const person of search.results.data?.results ?? []) if (next.has(person.personId)) emails.set(person.personId, person.email);
    setKnown(emails);
    setSelected(next);
  };

  return (
    <>
      <header class="page-header">
        <h1>People</h1>
      </header>
      <SearchPanel
        search={search}
        noun={{ one: 'person', many: 'people' }}
        columns={columns}
        rowId={(person) => person.personId}
        rowLabel={(person) => person.email}
        filterCell={personCell}
        {...(mayAdd ? { selection: { selected, onChange: onSelect } } : {})}
      >
        <div class="search-tools">
          {maySave && <SaveSegment search={search} />}
          {mayAdd && <AddToStudy selected={selected} emails={known} onDone={() => setSelected(new Set())} />}
        </div>
      </SearchPanel>
    </>
  );
}

/** Saves the filter as it is edited as a segment (POST /segments); the API's errors beside the name (a filter it refuses for a segment, too). */
function SaveSegment({ search }: { search: FilterSearch<Person> }) {
  const { api } = useSession().session;
  const [name, setName] = useState('');
  const [problem, setProblem] = useState<Problem | undefined>();
  const [saved, setSaved] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);

  async function save(event: Event) {
    event.preventDefault();
    setBusy(true);
    setProblem(undefined);
    setSaved(undefined);
    try {
      const segment = unwrap(await api.POST('/segments', { body: { name, filter: search.currentFilter() } }));
      setSaved(`Saved as the segment “${segment.name}”.`);
      setName('');
    } catch (error) {
      setProblem(describeProblem(error));
    } finally {
      setBusy(false);
    }
  }

  const nameError = fieldMessage(problem, ['name']);
  const filterError = fieldMessage(problem, ['filter']);
  return (
    <form class="search-tool" onSubmit={(event) => void save(event)} aria-labelledby="save-segment-heading">
      <h3 id="save-segment-heading">Save as segment</h3>
      <Field label="Segment name" error={nameError ?? filterError}>
        {(control) => <input {...control} value={name} onInput={(event) => setName(event.currentTarget.value)} maxLength={200} />}
      </Field>
      <button type="submit" aria-busy={busy} disabled={busy}>
        Save as segment
      </button>
      {problem && !nameError && !filterError && <ErrorNotice problem={problem} />}
      {saved && (
        <p role="status" class="notice-ok">
          {saved}
        </p>
      )}
    </form>
  );
}

type AddOutcome = { added: string[]; refused: { who: string; message: string }[] };

/** Adds the selected people to a study (POST /studies/{studyId}/participants) and says, per person, what happened. */
/** `onDone` clears the selection (after every selected person was added, or on Clear selection); a selection outlives filter changes and pages. */
function AddToStudy({ selected, emails, onDone }: { selected: ReadonlySet<string>; emails: ReadonlyMap<string, string>; onDone(): void }) {
  const { api } = useSession().session;
  const studies = useLoad(async () => unwrap(await api.GET('/studies', { params: { query: { size: 100 } } })).results.filter((study) => study.status !== 'CLOSED'), [api]);
  const [studyId, setStudyId] = useState('');
  const [problem, setProblem] = useState<Problem | undefined>();
  const [outcome, setOutcome] = useState<AddOutcome | undefined>();
  const [busy, setBusy] = useState(false);

  async function add(event: Event) {
    event.preventDefault();
    setProblem(undefined);
    setOutcome(undefined);
    if (!studyId) {
      setProblem({ status: 0, summary: 'Choose a study first.', fields: [{ message: 'Choose a study.', path: ['studyId'] }] });
      return;
    }
    const personIds = [...selected];
    setBusy(true);
    try {
      const answer = unwrap(await api.POST('/studies/{studyId}/participants', { params: { path: { studyId } }, body: { personIds } }));
      const who = (personId: string | undefined) => (personId ? (emails.get(personId) ?? 'a selected person') : 'someone');
      setOutcome({
        added: answer.results.map((participant) => participant.email ?? who(participant.personId)),
        refused: answer.errors.map((item) => ({ who: who(item.path[0] === 'personIds' ? personIds[Number(item.path[1])] : undefined), message: item.message })),
      });
      if (answer.errors.length === 0) onDone();
    } catch (error) {
      setProblem(describeProblem(error));
    } finally {
      setBusy(false);
    }
  }

  return (
    <form class="search-tool" onSubmit={(event) => void add(event)} aria-labelledby="add-to-study-heading">
      <h3 id="add-to-study-heading">Add to a study</h3>
      <Field label="Study" error={fieldMessage(problem, ['studyId'])}>
        {(control) => (
          <select {...control} value={studyId} onChange={(event) => setStudyId(event.currentTarget.value)}>
            <option value="">Choose a study…</option>
            {(studies.data ?? []).map((study) => (
              <option key={study.studyId} value={study.studyId}>
                {study.studyPlan.name || 'Untitled study'} ({humanize(study.status)})
              </option>
            ))}
          </select>
        )}
      </Field>
      <button type="submit" aria-busy={busy} disabled={busy || selected.size === 0}>
        Add to study
      </button>{' '}
      <span class="muted">
        {selected.size} {selected.size === 1 ? 'person' : 'people'} selected
      </span>{' '}
      {selected.size > 0 && (
        <button type="button" class="secondary outline" onClick={onDone}>
          Clear selection
        </button>
      )}
      <ErrorNotice problem={studies.problem} />
      {problem && !fieldMessage(problem, ['studyId']) && <ErrorNotice problem={problem} />}
      {outcome && (
        <div role="status" class="add-outcome">
          <p>
            {outcome.added.length} added{outcome.refused.length > 0 ? `, ${outcome.refused.length} not added` : ''}.
          </p>
          <ul>
            {outcome.added.map((who) => (
              <li key={`added-${who}`}>{who}: added</li>
            ))}
            {outcome.refused.map((item) => (
              <li key={`refused-${item.who}`}>
                {item.who}: not added — {item.message}
              </li>
            ))}
          </ul>
        </div>
      )}
    </form>
  );
}
