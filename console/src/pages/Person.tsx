import { type paths, type Schema, unwrap } from '@recruit-ops/sdk/browser';
import { useEffect, useRef, useState } from 'preact/hooks';
import { Link } from 'wouter-preact';
import { describeProblem, fieldMessage, type Problem, type RecruitClient, unplacedMessages } from '../api.js';
import { type ColumnDef, DataTable } from '../components/DataTable.js';
import { ErrorNotice } from '../components/ErrorNotice.js';
import { Field } from '../components/Field.js';
import { isMasked, MaybeMasked } from '../components/Masked.js';
import { Moment } from '../components/Moment.js';
import { PopulationNames } from '../components/PopulationNames.js';
import { humanize, StatusBadge } from '../components/StatusBadge.js';
import { formatCents } from '../format.js';
import { type Loaded, useLoad } from '../hooks.js';
import { loadProperties, type PersonProperty, propertyValueText } from '../properties.js';
import { useMay } from '../rights.js';
import { useSession } from '../session.js';

type Person = Schema<'Person'>;
type PropertyValue = Schema<'PropertyValue'>;
type PersonLocation = Schema<'PersonLocation'>;
type Participant = Schema<'Participant'>;
type Incentive = Schema<'Incentive'>;
type StudySummary = Schema<'StudySummary'>;
type PersonChanges = NonNullable<paths['/people/{personId}']['patch']['requestBody']>['content']['application/json'];

/**
 * Studies looked through for the person's participations, newest first. The API has no read of
 * one person's participations; a membership filter takes at most 1000 ids, and a workspace with
 * more studies is told that only the newest were looked through.
 */
const studiesLookedThroughMax = 1000;

const personIdFilter = (personId: string) => ({ property: { propertyGroup: 'PERSON' as const, propertyName: 'PERSON_ID' }, comparison: 'EQUALS' as const, value: personId });
/** A filter on one person, for the searches that take PERSON names. */
const onePerson = (personId: string) => ({ filters: [personIdFilter(personId)] });

interface Participation {
  study: StudySummary;
  participant: Participant;
}

/**
 * The ids among `studyIds` of the studies the person takes part in, found by halving: a people
 * search on the person and STUDY_MEMBERSHIP HAS_ANY_OF a group answers whether any study of the
 * group is theirs (its total, counted from what the server holds in memory). A person in k of n
 * studies costs about 2k·log2(n) small searches, one when they are in none, instead of n.
 */
async function studiesOfPerson(api: RecruitClient, personId: string, studyIds: string[]): Promise<string[]> {
  if (studyIds.length === 0) return [];
  const found = unwrap(
    await api.POST('/people/search', {
      body: {
        filter: { filters: [personIdFilter(personId), { property: { propertyGroup: 'PERSON', propertyName: 'STUDY_MEMBERSHIP' }, comparison: 'HAS_ANY_OF', value: studyIds }] },
        pageInfo: { size: 1 },
      },
    }),
  );
  if (found.total === 0) return [];
  if (studyIds.length === 1) return studyIds;
  const half = Math.ceil(studyIds.length / 2);
  const [first, second] = await Promise.all([studiesOfPerson(api, personId, studyIds.slice(0, half)), studiesOfPerson(api, personId, studyIds.slice(half))]);
  return [...first, ...second];
}

/** The person's participations, each with its study, newest first. */
async function loadParticipations(api: RecruitClient, personId: string): Promise<{ participations: Participation[]; studiesLookedThrough: number; moreStudies: boolean }> {
  const studies: StudySummary[] = [];
  let moreStudies = false;
  for await (const page of api.pages('/studies', { params: { query: { size: 100 } } })) {
    studies.push(...page.results);
    if (studies.length >= studiesLookedThroughMax) {
      moreStudies = page.pageInfo.hasNextPage;
      break;
    }
  }
  const theirs = await studiesOfPerson(api, personId, studies.slice(0, studiesLookedThroughMax).map((study) => study.studyId));
  const byId = new Map(studies.map((study) => [study.studyId, study]));
  const participations = await Promise.all(
    theirs.map(async (studyId) => {
      const found = unwrap(await api.POST('/studies/{studyId}/participants/search', { params: { path: { studyId } }, body: { filter: onePerson(personId), pageInfo: { size: 1 } } }));
      return found.results.map((participant) => ({ study: byId.get(studyId)!, participant }));
    }),
  );
  const sorted = participations.flat().sort((a, b) => b.participant.addedToStudyAt.localeCompare(a.participant.addedToStudyAt));
  return { participations: sorted, studiesLookedThrough: Math.min(studies.length, studiesLookedThroughMax), moreStudies };
}

/** The person's incentives, with the names of their studies (read with them: a row never shows a study's id). */
async function loadIncentives(api: RecruitClient, personId: string) {
  const incentives = unwrap(await api.POST('/incentives/search', { body: { filter: onePerson(personId), pageInfo: { size: 100 } } }));
  const studyIds = [...new Set(incentives.results.map((incentive) => incentive.studyId))];
  const studies = await Promise.all(
    studyIds.map(async (studyId) => {
      const { data } = await api.GET('/studies/{studyId}', { params: { path: { studyId } } });
      return [studyId, data ? data.studyPlan.name || 'Untitled study' : 'A study you may not read'] as const;
    }),
  );
  return { ...incentives, studyNames: new Map(studies) };
}

/** One person of the panel: their details and properties, studies, incentives, opt-out; editing and deletion. */
export function PersonPage({ personId }: { personId: string }) {
  const { api } = useSession().session;
  const person = useLoad(async () => unwrap(await api.GET('/people/{personId}', { params: { path: { personId } } })), [api, personId]);
  const properties = useLoad(() => loadProperties(api), [api]);
  const participations = useLoad(() => loadParticipations(api, personId), [api, personId]);
  const [deleted, setDeleted] = useState(false);
  const [editing, setEditing] = useState(false);
  const [saved, setSaved] = useState(false);
  const mayEdit = useMay('patch /people/{personId}');

  if (deleted) {
    return (
      <>
        <h1 tabIndex={-1} ref={(heading) => heading?.focus()}>
          Person deleted
        </h1>
        <p role="status">The person was deleted. Their personal data will be erased for good within 90 days.</p>
        <p>
          <Link href="/people">Back to the people</Link>
        </p>
      </>
    );
  }
  if (!person.data) {
    return (
      <div aria-busy={person.loading}>
        {person.problem ? (
          <>
            <h1>Person</h1>
            <ErrorNotice problem={person.problem} />
            <Link href="/people">Back to the people</Link>
          </>
        ) : (
          <h1>Loading the person…</h1>
        )}
      </div>
    );
  }
  const current = person.data;
  const anyMasked = [current.email, current.firstName, current.lastName, current.phone, ...Object.values(current.properties)].some(isMasked);
  return (
    <>
      <header class="page-header">
        <h1>{current.name && !isMasked(current.name) ? current.name : current.email && !isMasked(current.email) ? current.email : 'Person'}</h1>
        <StatusBadge status={current.contactStatus} />
      </header>
      {anyMasked && (
        <p class="notice-info" data-testid="masked-notice">
          Your token may not read personal data: the values marked <strong>Masked</strong> are hidden by the API.
        </p>
      )}
      {saved && !editing && (
        <p class="notice-success" role="status">
          Saved.
        </p>
      )}
      {editing && properties.data ? (
        <EditPerson
          person={current}
          properties={properties.data}
          onCancel={() => setEditing(false)}
          onSaved={() => {
            setEditing(false);
            setSaved(true);
            person.reload();
          }}
        />
      ) : (
        <>
          {mayEdit && (
            <div class="actions">
              <button
                type="button"
                disabled={!properties.data}
                onClick={() => {
                  setSaved(false);
                  setEditing(true);
                }}
              >
                Edit
              </button>
            </div>
          )}
          <Details person={current} properties={properties.data} />
          <ErrorNotice problem={properties.problem} />
        </>
      )}
      <OptOut person={current} onChanged={person.reload} />
      <Participations loaded={participations} />
      <Incentives personId={current.personId} />
      <DeletePerson person={current} onDeleted={() => setDeleted(true)} />
    </>
  );
}

function Details({ person, properties }: { person: Person; properties: PersonProperty[] | undefined }) {
  const named = new Map((properties ?? []).map((property) => [property.propertyId, property]));
  const rows: [string, string | null][] = [
    ['Email', person.email],
    ['First name', person.firstName],
    ['Last name', person.lastName],
    ['Phone', person.phone],
  ];
  if (person.additionalEmails.length > 0) rows.push(['Other emails', person.additionalEmails.join(', ')]);
  if (person.additionalPhones.length > 0) rows.push(['Other phones', person.additionalPhones.join(', ')]);
  // A value's property by its name: the section waits for the names rather than show ids first.
  const propertyRows = Object.entries(person.properties).map(([propertyId, value]) => [named.get(propertyId)?.name ?? 'A deleted property', propertyValueText(value, named.get(propertyId)?.propertyType === 'DATETIME')] as const);
  return (
    <>
      <section aria-labelledby="details-heading">
        <h2 id="details-heading">Details</h2>
        <dl class="facts">
          <MaskedFacts rows={rows} />
          <div>
            <dt>Id</dt>
            <dd>{person.personId}</dd>
          </div>
          <div>
            <dt>Added</dt>
            <dd>
              <Moment at={person.createdAt} />
            </dd>
          </div>
          <div>
            <dt>Last changed</dt>
            <dd>
              <Moment at={person.updatedAt} />
            </dd>
          </div>
          {person.populationIds.length > 0 && (
            <div>
              <dt>Populations</dt>
              <dd>
                <PopulationNames populationIds={person.populationIds} />
              </dd>
            </div>
          )}
        </dl>
      </section>
      <section aria-labelledby="properties-heading">
        <h2 id="properties-heading">Properties</h2>
        {!properties ? (
          <p aria-busy="true">Loading the properties…</p>
        ) : propertyRows.length === 0 ? (
          <p>No property has a value for this person.</p>
        ) : (
          <dl class="facts">
            <MaskedFacts rows={propertyRows} />
          </dl>
        )}
      </section>
    </>
  );
}

/** A `<dl>`'s term and value pairs, each value as the API gave it (masked values badged). */
function MaskedFacts({ rows }: { rows: readonly (readonly [string, string | null | undefined])[] }) {
  return (
    <>
      {rows.map(([term, value]) => (
        <div key={term}>
          <dt>{term}</dt>
          <dd>
            <MaybeMasked value={value} />
          </dd>
        </div>
      ))}
    </>
  );
}

/** The text a property's input starts with. */
function propertyInput(property: PersonProperty, value: PropertyValue | undefined): string | string[] {
  if (value === undefined || value === null) return property.propertyType === 'MULTI_SELECT' ? [] : '';
  if (Array.isArray(value)) return value;
  if (typeof value === 'object') return value.country;
  return String(value);
}

/**
 * A property's input as the value PATCH takes, or null (remove it). A NUMBER that is no number
 * goes as typed: the API's 400 names the property, and the page shows it beside the field.
 */
function propertyValue(property: PersonProperty, input: string | string[], original: PropertyValue | undefined): unknown {
  if (Array.isArray(input)) return input.length > 0 ? input : null;
  const text = input.trim();
  if (text === '') return null;
  switch (property.propertyType) {
    case 'NUMBER':
      return Number.isFinite(Number(text)) ? Number(text) : text;
    case 'BOOLEAN':
      return text === 'true';
    case 'LOCATION':
      return typeof original === 'object' && original !== null && !Array.isArray(original) ? { ...(original as PersonLocation), country: text.toUpperCase() } : { country: text.toUpperCase() };
    default:
      return text;
  }
}

const sameInput = (a: string | string[], b: string | string[]) => (Array.isArray(a) && Array.isArray(b) ? a.join('\u0000') === b.join('\u0000') : a === b);

const corePaths = { email: ['email'], firstName: ['firstName'], lastName: ['lastName'], phone: ['phone'] } as const;
type CoreField = keyof typeof corePaths;
const coreLabels: Record<CoreField, string> = { email: 'Email', firstName: 'First name', lastName: 'Last name', phone: 'Phone' };

/**
 * The edit form. Only what changed is sent (PATCH merges); an emptied name or phone is cleared,
 * an emptied property removed. Masked values are shown, disabled, and never sent.
 */
function EditPerson({ person, properties, onCancel, onSaved }: { person: Person; properties: PersonProperty[]; onCancel(): void; onSaved(): void }) {
  const { api } = useSession().session;
  const initialCore = { email: person.email, firstName: person.firstName ?? '', lastName: person.lastName ?? '', phone: person.phone ?? '' };
  const initialProperties = Object.fromEntries(properties.map((property) => [property.propertyId, propertyInput(property, person.properties[property.propertyId])]));
  const [core, setCore] = useState(initialCore);
  const [values, setValues] = useState<Record<string, string | string[]>>(initialProperties);
  const [problem, setProblem] = useState<Problem | undefined>();
  const [busy, setBusy] = useState(false);
  const headingRef = useRef<HTMLHeadingElement>(null);
  useEffect(() => headingRef.current?.focus(), []);

  async function submit(event: Event) {
    event.preventDefault();
    const body: PersonChanges = {};
    for (const field of Object.keys(corePaths) as CoreField[]) {
      if (isMasked(initialCore[field]) || core[field] === initialCore[field]) continue;
      const text = core[field].trim();
      if (field === 'email') body.email = text;
      else body[field] = text === '' ? null : text;
    }
    const changedProperties: Record<string, unknown> = {};
    for (const property of properties) {
      const id = property.propertyId;
      if (isMasked(person.properties[id]) || sameInput(values[id]!, initialProperties[id]!)) continue;
      changedProperties[id] = propertyValue(property, values[id]!, person.properties[id]);
    }
    if (Object.keys(changedProperties).length > 0) body.properties = changedProperties;
    if (Object.keys(body).length === 0) {
      onCancel();
      return;
    }
    setBusy(true);
    setProblem(undefined);
    try {
      // The API checks every value and names what it refuses (shown beside its field).
      unwrap(await api.PATCH('/people/{personId}', { params: { path: { personId: person.personId } }, body }));
      onSaved();
    } catch (error) {
      setProblem(describeProblem(error));
      setBusy(false);
    }
  }

  const shownPaths = [...Object.values(corePaths), ...properties.map((property) => ['properties', property.propertyId])];
  const maskedHint = 'Masked: your token may not read personal data, so this value cannot be changed here.';
  return (
    <section aria-labelledby="edit-heading">
      <h2 id="edit-heading" tabIndex={-1} ref={headingRef}>
        Edit details
      </h2>
      <ErrorNotice problem={problem} extra={problem ? unplacedMessages(problem, shownPaths) : []} />
      <form onSubmit={(event) => void submit(event)} noValidate>
        {(Object.keys(corePaths) as CoreField[]).map((field) => {
          const masked = isMasked(initialCore[field]);
          return (
            <Field key={field} label={coreLabels[field]} error={fieldMessage(problem, corePaths[field])} {...(masked ? { hint: maskedHint } : {})}>
              {(control) => (
                <input
                  {...control}
                  name={field}
                  type={field === 'email' ? 'email' : field === 'phone' ? 'tel' : 'text'}
                  autocomplete="off"
                  value={core[field]}
                  disabled={masked}
                  onInput={(event) => setCore({ ...core, [field]: event.currentTarget.value })}
                />
              )}
            </Field>
          );
        })}
        {properties.length > 0 && <h3>Properties</h3>}
        {properties.map((property) => (
          <PropertyField
            key={property.propertyId}
            property={property}
            value={values[property.propertyId]!}
            masked={isMasked(person.properties[property.propertyId])}
            maskedHint={maskedHint}
            error={fieldMessage(problem, ['properties', property.propertyId])}
            onChange={(value) => setValues({ ...values, [property.propertyId]: value })}
          />
        ))}
        <div class="actions">
          <button type="submit" aria-busy={busy} disabled={busy}>
            Save
          </button>
          <button type="button" class="secondary" onClick={onCancel}>
            Cancel
          </button>
        </div>
      </form>
    </section>
  );
}

const typeHints: Partial<Record<PersonProperty['propertyType'], string>> = {
  NUMBER: 'A number.',
  DATETIME: 'An ISO 8601 date and time with its time zone: 2026-11-24T14:00:00Z.',
  LOCATION: 'A two-letter country code (ISO 3166-1): GB, DE, US.',
  MULTI_SELECT: 'Choose any number of options.',
};

function PropertyField(props: {
  property: PersonProperty;
  value: string | string[];
  masked: boolean;
  maskedHint: string;
  error: string | undefined;
  onChange(value: string | string[]): void;
}) {
  const { property, value, masked, error, onChange } = props;
  const hint = masked ? props.maskedHint : [property.description, typeHints[property.propertyType]].filter(Boolean).join(' ') || undefined;
  return (
    <Field label={property.name} error={error} {...(hint ? { hint } : {})}>
      {(control) => {
        if (masked) return <input {...control} type="text" value="***" disabled />;
        switch (property.propertyType) {
          case 'BOOLEAN':
            return (
              <select {...control} value={value as string} onChange={(event) => onChange(event.currentTarget.value)}>
                <option value="">No value</option>
                <option value="true">Yes</option>
                <option value="false">No</option>
              </select>
            );
          case 'SINGLE_SELECT':
            return (
              <select {...control} value={value as string} onChange={(event) => onChange(event.currentTarget.value)}>
                <option value="">No value</option>
                {property.propertyOptions.map((option) => (
                  <option key={option.propertyOptionId} value={option.name}>
                    {option.name}
                  </option>
                ))}
              </select>
            );
          case 'MULTI_SELECT':
            return (
              <select
                {...control}
                multiple
                onChange={(event) => onChange([...event.currentTarget.selectedOptions].map((option) => option.value))}
              >
                {property.propertyOptions.map((option) => (
                  <option key={option.propertyOptionId} value={option.name} selected={(value as string[]).includes(option.name)}>
                    {option.name}
                  </option>
                ))}
              </select>
            );
          default:
            return (
              <input
                {...control}
                type="text"
                inputMode={property.propertyType === 'NUMBER' ? 'decimal' : undefined}
                autocomplete="off"
                value={value as string}
                onInput={(event) => onChange(event.currentTarget.value)}
              />
            );
        }
      }}
    </Field>
  );
}

function OptOut({ person, onChanged }: { person: Person; onChanged(): void }) {
  const { api } = useSession().session;
  const mayChange = useMay('put /people/{personIdOrEmail}/opted-out');
  const [problem, setProblem] = useState<Problem | undefined>();
  const [busy, setBusy] = useState(false);

  async function change(isOptedOut: boolean) {
    setBusy(true);
    setProblem(undefined);
    try {
      unwrap(await api.PUT('/people/{personIdOrEmail}/opted-out', { params: { path: { personIdOrEmail: person.personId } }, body: { isOptedOut } }));
      onChanged();
    } catch (error) {
      setProblem(describeProblem(error));
    } finally {
      setBusy(false);
    }
  }

  return (
    <section aria-labelledby="opt-out-heading">
      <h2 id="opt-out-heading">Contact</h2>
      <p data-testid="opt-out-state">
        {person.isOptedOut
          ? 'Opted out: this person is kept out of studies and is not contacted.'
          : person.contactStatus === 'UNREACHABLE'
            ? 'Unreachable: attempts to contact this person failed.'
            : 'Contactable: this person may be invited to studies.'}
      </p>
      {mayChange && (
        <div class="actions">
          <button type="button" class="secondary" aria-busy={busy} disabled={busy} onClick={() => void change(!person.isOptedOut)}>
            {person.isOptedOut ? 'Opt back in' : 'Opt out'}
          </button>
        </div>
      )}
      <ErrorNotice problem={problem} />
    </section>
  );
}

const participationColumns: ColumnDef<Participation>[] = [
  {
    id: 'study',
    header: 'Study',
    cell: ({ row }) => <Link href={`/studies/${encodeURIComponent(row.original.study.studyId)}`}>{row.original.study.studyPlan.name || 'Untitled study'}</Link>,
  },
  { id: 'studyStatus', header: 'Study status', cell: ({ row }) => <StatusBadge status={row.original.study.status} /> },
  { id: 'status', header: 'Participant status', cell: ({ row }) => <StatusBadge status={row.original.participant.status} /> },
  { id: 'approval', header: 'Approval', cell: ({ row }) => humanize(row.original.participant.approvalStatus) },
  { id: 'added', header: 'Added', cell: ({ row }) => <Moment at={row.original.participant.addedToStudyAt} as="day" /> },
];

function Participations({ loaded }: { loaded: Loaded<Awaited<ReturnType<typeof loadParticipations>>> }) {
  return (
    <section aria-labelledby="studies-heading" aria-busy={loaded.loading}>
      <h2 id="studies-heading">Studies</h2>
      <ErrorNotice problem={loaded.problem} />
      {loaded.data && (
        <>
          <DataTable
            caption="Studies this person takes part in"
            columns={participationColumns}
            rows={loaded.data.participations}
            rowId={(row) => row.participant.participantId}
            empty="Not a participant of any study."
          />
          {loaded.data.moreStudies && <p class="muted">Looked through the {loaded.data.studiesLookedThrough} most recent studies.</p>}
        </>
      )}
    </section>
  );
}

const incentiveColumns = (studyNames: ReadonlyMap<string, string>): ColumnDef<Incentive>[] => [
  { id: 'type', header: 'Type', cell: ({ row }) => (row.original.type ? humanize(row.original.type) : '—') },
  {
    id: 'amount',
    header: 'Amount',
    cell: ({ row }) => (row.original.type === 'CUSTOM' && row.original.amountCents === 0 ? (row.original.customIncentiveValue ?? '—') : formatCents(row.original.amountCents)),
  },
  { id: 'status', header: 'Status', cell: ({ row }) => <StatusBadge status={row.original.status} /> },
  {
    id: 'study',
    header: 'Study',
    cell: ({ row }) => <Link href={`/studies/${encodeURIComponent(row.original.studyId)}`}>{studyNames.get(row.original.studyId)}</Link>,
  },
  { id: 'sentAt', header: 'Sent', cell: ({ row }) => <Moment at={row.original.sentAt} as="day" /> },
];

function Incentives({ personId }: { personId: string }) {
  const { api } = useSession().session;
  const loaded = useLoad(() => loadIncentives(api, personId), [api, personId]);
  return (
    <section aria-labelledby="incentives-heading" aria-busy={loaded.loading}>
      <h2 id="incentives-heading">Incentives</h2>
      <ErrorNotice problem={loaded.problem} />
      {loaded.data && (
        <>
          <DataTable caption="Incentives sent to this person" columns={incentiveColumns(loaded.data.studyNames)} rows={loaded.data.results} rowId={(row) => row.incentiveId} empty="No incentive sent." />
          {loaded.data.total > loaded.data.results.length && (
            <p class="muted">
              The {loaded.data.results.length} first of {loaded.data.total}.
            </p>
          )}
        </>
      )}
    </section>
  );
}

/**
 * Deletion, after a confirmation that states what it does (the contract of DELETE
 * /people/{personId}, the participant and incentive searches, and the purge).
 */
function DeletePerson({ person, onDeleted }: { person: Person; onDeleted(): void }) {
  const { api } = useSession().session;
  const mayDelete = useMay('delete /people/{personId}');
  const dialogRef = useRef<HTMLDialogElement>(null);
  const [problem, setProblem] = useState<Problem | undefined>();
  const [busy, setBusy] = useState(false);
  if (!mayDelete) return null;

  const open = () => {
    setProblem(undefined);
    dialogRef.current?.showModal();
  };
  const close = () => dialogRef.current?.close();

  async function confirm() {
    setBusy(true);
    setProblem(undefined);
    try {
      unwrap(await api.DELETE('/people/{personId}', { params: { path: { personId: person.personId } } }));
      close();
      onDeleted();
    } catch (error) {
      setProblem(describeProblem(error));
      setBusy(false);
    }
  }

  return (
    <section aria-labelledby="delete-heading">
      <h2 id="delete-heading">Delete</h2>
      <div class="actions">
        <button type="button" class="secondary" onClick={open}>
          Delete person…
        </button>
      </div>
      <dialog ref={dialogRef} aria-labelledby="delete-dialog-heading" aria-describedby="delete-consequences">
        <article>
          <header>
            <h2 id="delete-dialog-heading">Delete this person?</h2>
          </header>
          <ul id="delete-consequences" class="consequences">
            <li>They disappear at once from every list, search, count and export, and from the participant lists of their studies.</li>
            <li>Their email address and their values of unique properties become free for another person to use.</li>
            <li>Incentives already sent to them stay on record, without their email; an incentive the provider has not confirmed yet is voided.</li>
            <li>Their consent records disappear at once.</li>
            <li>Their personal data (emails, phones, names, property values) is erased for good by background work within 90 days. The console cannot undo this.</li>
          </ul>
          <ErrorNotice problem={problem} />
          <footer>
            <button type="button" class="secondary" onClick={close} disabled={busy}>
              Keep this person
            </button>
            <button type="button" class="contrast" aria-busy={busy} disabled={busy} onClick={() => void confirm()}>
              Delete for good
            </button>
          </footer>
        </article>
      </dialog>
    </section>
  );
}
