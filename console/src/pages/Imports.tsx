import { type Schema, unwrap } from '@recruit-ops/sdk/browser';
import { useEffect, useId, useState } from 'preact/hooks';
import { describeProblem, fieldMessage, type Problem, type RecruitClient } from '../api.js';
import { type ColumnDef, DataTable } from '../components/DataTable.js';
import { ErrorNotice } from '../components/ErrorNotice.js';
import { Field } from '../components/Field.js';
import { humanize, StatusBadge } from '../components/StatusBadge.js';
import { formatMoment } from '../format.js';
import { isBlankRecord, parseCsv, writeCsv } from '../csv.js';
import { useLoad } from '../hooks.js';
import { loadProperties } from '../properties.js';
import { useMay } from '../rights.js';
import { useSession } from '../session.js';

type Import = Schema<'Import'>;
type PersonProperty = Schema<'PersonProperty'>;
type PropertyType = PersonProperty['propertyType'];
type ImportError = Import['errors'][number];

/** The columns every import knows besides the workspace's properties (matched case-insensitively, as the API does). */
const coreColumns = ['email', 'firstName', 'lastName', 'phone'];
const newPropertyTypes: readonly PropertyType[] = ['STRING', 'NUMBER', 'BOOLEAN', 'DATETIME', 'SINGLE_SELECT', 'MULTI_SELECT', 'LOCATION'];
/** The API's limit on a property's options. */
const optionsMax = 100;
/** How often a running import is read again. */
const pollMs = 1_000;

/**
 * The imports this tab started or opened. The API lists no imports (only GET /imports/{importId}),
 * so the page keeps their ids, with the file's name and row count, in sessionStorage beside the token.
 */
interface KnownImport {
  importId: string;
  fileName?: string;
  /** Data rows in the file as uploaded (the progress bar's maximum). */
  rows?: number;
  startedAt?: string;
}
const knownImportsKey = 'recruit-ops.console.imports';

function readKnownImports(): KnownImport[] {
  try {
    const parsed: unknown = JSON.parse(sessionStorage.getItem(knownImportsKey) ?? '[]');
    return Array.isArray(parsed) ? (parsed as KnownImport[]) : [];
  } catch {
    return [];
  }
}

function useKnownImports() {
  const [known, setKnown] = useState<KnownImport[]>(readKnownImports);
  const add = (entry: KnownImport) =>
    setKnown((previous) => {
      const next = [entry, ...previous.filter((item) => item.importId !== entry.importId)];
      sessionStorage.setItem(knownImportsKey, JSON.stringify(next));
      return next;
    });
  return { known, add };
}

/** The imports page: upload a CSV (mapping unknown columns first), and the imports with their progress and refused rows. */
export function ImportsPage() {
  const mayImport = useMay('post /imports');
  const imports = useKnownImports();
  return (
    <>
      <h1>Imports</h1>
      {mayImport ? <Upload onStarted={imports.add} /> : <p>Your role may not import people; it may follow imports by their id.</p>}
      <section aria-labelledby="imports-heading">
        <h2 id="imports-heading">Imports in this tab</h2>
        <OpenImport onFound={imports.add} />
        {imports.known.length === 0 ? <p>No import yet in this tab.</p> : imports.known.map((entry) => <ImportProgress key={entry.importId} entry={entry} />)}
      </section>
    </>
  );
}

/** What the page does with a column the API would not know: leave it out, put it in a property, or make one. */
type ColumnChoice = { kind: 'unchosen' } | { kind: 'leave-out' } | { kind: 'property'; propertyId: string } | { kind: 'create'; propertyType: PropertyType };

interface ReadFile {
  name: string;
  header: string[];
  records: string[][];
  /** Data rows (blank lines are none: the server skips them too). */
  rows: number;
  /** Indexes of the header's columns neither core nor a property. */
  unknown: number[];
}

function readFile(name: string, text: string, properties: PersonProperty[]): ReadFile | Problem {
  const records = parseCsv(text);
  const header = records[0]?.map((cell) => cell.trim());
  if (!header || header.every((cell) => cell === '')) return { status: 0, summary: 'The file has no header row.', fields: [{ path: ['file'], message: 'The file has no header row.' }] };
  const known = new Set([...coreColumns, ...properties.map((property) => property.name)].map((column) => column.toLowerCase()));
  if (!header.some((column) => column.toLowerCase() === 'email')) {
    return { status: 0, summary: 'The file has no email column.', fields: [{ path: ['file'], message: 'The header has no email column: every row is matched to a person by email.' }] };
  }
  const unknown = header.flatMap((column, index) => (known.has(column.toLowerCase()) ? [] : [index]));
  return { name, header, records, rows: records.slice(1).filter((record) => !isBlankRecord(record)).length, unknown };
}

const isProblem = (value: ReadFile | Problem): value is Problem => 'summary' in value;

/** The distinct values of column `index` (split on ";" for a multi select): the options of a select property made from it. */
function columnOptions(file: ReadFile, index: number, multi: boolean): string[] {
  const seen = new Map<string, string>();
  for (const record of file.records.slice(1)) {
    const cell = record[index]?.trim() ?? '';
    for (const value of multi ? cell.split(';').map((part) => part.trim()) : [cell]) {
      if (value !== '' && !seen.has(value.toLowerCase())) seen.set(value.toLowerCase(), value);
    }
  }
  return [...seen.values()];
}

/**
 * The file as sent: unknown columns renamed to the property they go into (a new property has the
 * column's name) or left out, blank lines dropped.
 */
function rewrite(file: ReadFile, choices: Record<number, ColumnChoice>, properties: PersonProperty[]): string {
  const named = new Map(properties.map((property) => [property.propertyId, property.name]));
  const kept = file.header.map((_, index) => choices[index]?.kind !== 'leave-out');
  const header = file.header.map((column, index) => {
    const choice = choices[index];
    return choice?.kind === 'property' ? (named.get(choice.propertyId) ?? column) : column;
  });
  const records = [header, ...file.records.slice(1).filter((record) => !isBlankRecord(record))];
  return writeCsv(records.map((record) => record.filter((_, index) => kept[index])));
}

function Upload({ onStarted }: { onStarted(entry: KnownImport): void }) {
  const { api } = useSession().session;
  const mayCreateProperties = useMay('post /properties/import');
  const properties = useLoad(() => loadProperties(api), [api]);
  const [file, setFile] = useState<ReadFile | undefined>();
  const [choices, setChoices] = useState<Record<number, ColumnChoice>>({});
  const [problem, setProblem] = useState<Problem | undefined>();
  const [busy, setBusy] = useState(false);
  const [inputKey, setInputKey] = useState(0);

  async function choose(event: Event) {
    const input = event.currentTarget as HTMLInputElement;
    const chosen = input.files?.[0];
    setProblem(undefined);
    setFile(undefined);
    setChoices({});
    if (!chosen || !properties.data) return;
    const read = readFile(chosen.name, await chosen.text(), properties.data);
    if (isProblem(read)) setProblem(read);
    else setFile(read);
  }

  async function upload(event: Event) {
    event.preventDefault();
    if (!file || !properties.data) {
      setProblem({ status: 0, summary: 'Choose a CSV file first.', fields: [{ path: ['file'], message: 'Choose a CSV file to import.' }] });
      return;
    }
    const unchosen = file.unknown.filter((index) => (choices[index]?.kind ?? 'unchosen') === 'unchosen');
    if (unchosen.length > 0) {
      setProblem({
        status: 0,
        summary: 'Say what to do with each column the workspace does not know.',
        fields: unchosen.map((index) => ({ path: ['columns', String(index)], message: 'Choose a property for this column, or leave it out.' })),
      });
      return;
    }
    setBusy(true);
    setProblem(undefined);
    try {
      // Read again: a property made by an earlier attempt whose upload failed is not made twice.
      let known = await loadProperties(api);
      const exists = (column: string) => known.some((property) => property.name.toLowerCase() === column.toLowerCase());
      const toCreate = file.unknown.filter((index) => choices[index]?.kind === 'create' && !exists(file.header[index]!));
      if (toCreate.length > 0) {
        const created = await createProperties(api, file, toCreate, choices);
        if (created.made > 0) known = await loadProperties(api);
        if (created.problem) {
          setProblem(created.problem);
          setBusy(false);
          properties.reload();
          return;
        }
      }
      const accepted = unwrap(await api.POST('/imports', { body: rewrite(file, choices, known) }));
      onStarted({ importId: accepted.importId, fileName: file.name, rows: file.rows, startedAt: new Date().toISOString() });
      setFile(undefined);
      setChoices({});
      setInputKey((value) => value + 1);
      properties.reload();
    } catch (error) {
      const described = describeProblem(error);
      // The API names a header it refuses as ["header", column]: beside that column's choice, or the file.
      setProblem({
        ...described,
        fields: described.fields.map((item) => {
          if (item.path[0] !== 'header') return item;
          const index = file.header.findIndex((column) => column.toLowerCase() === (item.path[1] ?? '').toLowerCase());
          return { ...item, path: index >= 0 && file.unknown.includes(index) ? ['columns', String(index)] : ['file'] };
        }),
      });
    }
    setBusy(false);
  }

  const available = (properties.data ?? []).filter((property) => !file?.header.some((column) => column.toLowerCase() === property.name.toLowerCase()));
  return (
    <section aria-labelledby="upload-heading">
      <h2 id="upload-heading">Import a CSV file</h2>
      <p class="muted">
        The header names the columns: <code>email</code> (required), <code>firstName</code>, <code>lastName</code>, <code>phone</code> and the workspace’s properties. Each row
        adds a person, or updates the person with that email.
      </p>
      <ErrorNotice problem={properties.problem} />
      <ErrorNotice problem={problem} />
      <form onSubmit={(event) => void upload(event)} noValidate>
        <Field label="CSV file" error={fieldMessage(problem, ['file'])} {...(file ? { hint: `${file.rows} data rows; columns: ${file.header.join(', ')}.` } : {})}>
          {(control) => <input key={inputKey} {...control} type="file" accept=".csv,text/csv" disabled={!properties.data} onChange={(event) => void choose(event)} />}
        </Field>
        {file && file.unknown.length > 0 && (
          <fieldset>
            <legend>Columns the workspace does not know</legend>
            <div class="column-mapping">
              {file.unknown.map((index) => (
                <ColumnMapping
                  key={index}
                  column={file.header[index]!}
                  choice={choices[index] ?? { kind: 'unchosen' }}
                  properties={available}
                  mayCreate={mayCreateProperties}
                  error={fieldMessage(problem, ['columns', String(index)])}
                  onChange={(choice) => setChoices({ ...choices, [index]: choice })}
                />
              ))}
            </div>
          </fieldset>
        )}
        <div class="actions">
          <button type="submit" aria-busy={busy} disabled={busy || !file}>
            Upload and import
          </button>
        </div>
      </form>
    </section>
  );
}

/** Makes the properties chosen as new (POST /properties/import, ten at a time); their errors go beside their columns. */
async function createProperties(api: RecruitClient, file: ReadFile, indexes: number[], choices: Record<number, ColumnChoice>): Promise<{ made: number; problem?: Problem }> {
  let made = 0;
  const fields: Problem['fields'] = [];
  for (let start = 0; start < indexes.length; start += 10) {
    const batch = indexes.slice(start, start + 10);
    const items = batch.map((index) => {
      const choice = choices[index] as Extract<ColumnChoice, { kind: 'create' }>;
      const item: { name: string; propertyType: PropertyType; propertyOptions?: { name: string }[] } = { name: file.header[index]!, propertyType: choice.propertyType };
      if (choice.propertyType === 'SINGLE_SELECT' || choice.propertyType === 'MULTI_SELECT') {
        const options = columnOptions(file, index, choice.propertyType === 'MULTI_SELECT');
        if (options.length === 0 || options.length > optionsMax) {
          fields.push({ path: ['columns', String(index)], message: `A select property needs 1 to ${optionsMax} options; this column has ${options.length} distinct values.` });
          return undefined;
        }
        item.propertyOptions = options.map((name) => ({ name }));
      }
      return item;
    });
    const sendable = items.flatMap((item, position) => (item ? [{ item, index: batch[position]! }] : []));
    if (sendable.length === 0) continue;
    const result = unwrap(await api.POST('/properties/import', { body: sendable.map(({ item }) => item) }));
    made += result.results.length;
    for (const error of result.errors) {
      const index = sendable[Number(error.path[0])]?.index;
      fields.push({ path: ['columns', String(index)], message: error.message });
    }
  }
  return fields.length > 0 ? { made, problem: { status: 400, summary: 'Some properties could not be made; nothing was imported.', fields } } : { made };
}

function ColumnMapping(props: {
  column: string;
  choice: ColumnChoice;
  properties: PersonProperty[];
  mayCreate: boolean;
  error: string | undefined;
  onChange(choice: ColumnChoice): void;
}) {
  const { column, choice, properties, mayCreate, error, onChange } = props;
  const value = choice.kind === 'property' ? `property:${choice.propertyId}` : choice.kind;
  const select = (selected: string) => {
    if (selected === 'leave-out') onChange({ kind: 'leave-out' });
    else if (selected === 'create') onChange({ kind: 'create', propertyType: 'STRING' });
    else if (selected.startsWith('property:')) onChange({ kind: 'property', propertyId: selected.slice('property:'.length) });
    else onChange({ kind: 'unchosen' });
  };
  return (
    <div>
      <Field label={`Column “${column}”`} error={error}>
        {(control) => (
          <select {...control} value={value} onChange={(event) => select(event.currentTarget.value)}>
            <option value="unchosen">Choose…</option>
            {mayCreate && <option value="create">A new property named “{column}”</option>}
            {properties.map((property) => (
              <option key={property.propertyId} value={`property:${property.propertyId}`}>
                Property “{property.name}” ({humanize(property.propertyType)})
              </option>
            ))}
            <option value="leave-out">Leave this column out</option>
          </select>
        )}
      </Field>
      {choice.kind === 'create' && (
        <Field label={`Type of the new property “${column}”`} hint="Select types take the column’s distinct values as their options.">
          {(control) => (
            <select {...control} value={choice.propertyType} onChange={(event) => onChange({ kind: 'create', propertyType: event.currentTarget.value as PropertyType })}>
              {newPropertyTypes.map((type) => (
                <option key={type} value={type}>
                  {humanize(type)}
                </option>
              ))}
            </select>
          )}
        </Field>
      )}
    </div>
  );
}

/** Adds an import to the list by its id (one started elsewhere). */
function OpenImport({ onFound }: { onFound(entry: KnownImport): void }) {
  const { api } = useSession().session;
  const [problem, setProblem] = useState<Problem | undefined>();
  const [busy, setBusy] = useState(false);
  async function open(event: Event) {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const importId = String(new FormData(form).get('importId') ?? '').trim();
    setProblem(undefined);
    if (importId === '') {
      setProblem({ status: 0, summary: 'Give the id of an import.', fields: [{ path: ['importId'], message: 'Give the id of an import (imp_…).' }] });
      return;
    }
    setBusy(true);
    try {
      unwrap(await api.GET('/imports/{importId}', { params: { path: { importId } } }));
      onFound({ importId });
      form.reset();
    } catch (error) {
      const described = describeProblem(error);
      setProblem(described.status === 404 || described.status === 400 ? { ...described, fields: [{ path: ['importId'], message: described.summary }] } : described);
    }
    setBusy(false);
  }
  return (
    <form class="open-import" onSubmit={(event) => void open(event)} noValidate>
      <Field label="Import id" error={fieldMessage(problem, ['importId'])}>
        {(control) => <input {...control} name="importId" type="text" autocomplete="off" />}
      </Field>
      <button type="submit" class="secondary" aria-busy={busy} disabled={busy}>
        Show
      </button>
      {problem && problem.fields.length === 0 && <ErrorNotice problem={problem} />}
    </form>
  );
}

const finished = (status: Import['status']) => status === 'COMPLETED' || status === 'FAILED';

const errorColumns: ColumnDef<ImportError>[] = [
  { id: 'row', header: 'Row', cell: ({ row }) => row.original.row },
  { id: 'message', header: 'Why it was refused', cell: ({ row }) => row.original.message },
];

/** One import: its status, a progress bar read again every second until it ends, then the refused rows by number. */
function ImportProgress({ entry }: { entry: KnownImport }) {
  const { api } = useSession().session;
  const [current, setCurrent] = useState<Import | undefined>();
  const [problem, setProblem] = useState<Problem | undefined>();
  const progressId = useId();
  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const read = async () => {
      try {
        const answer = unwrap(await api.GET('/imports/{importId}', { params: { path: { importId: entry.importId } } }));
        if (stopped) return;
        setCurrent(answer);
        setProblem(undefined);
        if (!finished(answer.status)) timer = setTimeout(() => void read(), pollMs);
      } catch (error) {
        if (stopped) return;
        setProblem(describeProblem(error));
        timer = setTimeout(() => void read(), pollMs * 5);
      }
    };
    void read();
    return () => {
      stopped = true;
      if (timer) clearTimeout(timer);
    };
  }, [api, entry.importId]);

  const done = current ? current.rowsImported + current.rowsFailed : 0;
  const max = current?.status === 'COMPLETED' ? Math.max(current.rowsTotal, 1) : entry.rows !== undefined ? Math.max(entry.rows, 1) : undefined;
  const value = current?.status === 'COMPLETED' ? max : done;
  const headingId = `${progressId}-heading`;
  return (
    <article aria-labelledby={headingId} data-import-id={entry.importId}>
      <header class="page-header">
        <h3 id={headingId}>{entry.fileName ?? entry.importId}</h3>
        {current && <StatusBadge status={current.status} />}
      </header>
      <p class="muted">
        Import {entry.importId}
        {entry.startedAt && `, started ${formatMoment(entry.startedAt)}`}
      </p>
      <ErrorNotice problem={problem} />
      <label for={progressId} class="progress-label">
        Import progress:{' '}
        {current
          ? `${done}${entry.rows !== undefined ? ` of ${entry.rows}` : ''} rows${current.status === 'QUEUED' ? ', waiting to start' : ''}`
          : 'reading…'}
      </label>
      {/* Without a known size (an import opened by id) the bar is indeterminate until it ends. */}
      <progress id={progressId} {...(max !== undefined && current ? { value, max } : {})} />
      {current && finished(current.status) && (
        <div aria-live="polite">
          <p data-testid="import-outcome">
            {current.status === 'FAILED' ? 'The import stopped for good; rows committed before that stay in. ' : 'Finished. '}
            {current.rowsImported} {current.rowsImported === 1 ? 'row' : 'rows'} imported, {current.rowsFailed} refused.
          </p>
          {current.errors.length > 0 && (
            <>
              <h4>Refused rows</h4>
              <DataTable caption={`Rows refused by import ${entry.importId}`} columns={errorColumns} rows={current.errors} rowId={(row) => String(row.row)} />
              {current.rowsFailed > current.errors.length && <p class="muted">The first {current.errors.length} of {current.rowsFailed} refused rows.</p>}
            </>
          )}
        </div>
      )}
    </article>
  );
}
