import type { ComponentChildren } from 'preact';
import { useId } from 'preact/hooks';
import { type Problem, unplacedMessages } from '../api.js';
import { type ColumnDef, DataTable } from '../components/DataTable.js';
import { ErrorNotice } from '../components/ErrorNotice.js';
import { Pager } from '../components/Pager.js';
import type { ValueCell } from './columns.js';
import { FilterBuilder } from './FilterBuilder.js';
import { type FilterProperty, namedProperties, type PropertyGroup } from './model.js';
import { type FilterSearch, isSortable, pageSizes, type Sort } from './search.js';

export interface SearchColumn<Row> {
  id: string;
  header: string;
  cell(row: Row): ComponentChildren;
  /** The name the API sorts this column by; the header offers sorting only when the API lists it. */
  sortBy?: { propertyGroup: PropertyGroup; propertyName: string };
  /** The filter properties (FilterProperty keys) this column already shows: a condition on one adds no column of its own. */
  covers?: readonly string[];
}

export interface Selection {
  selected: ReadonlySet<string>;
  onChange(selected: Set<string>): void;
}

export interface SearchPanelProps<Row> {
  search: FilterSearch<Row>;
  /** `people`, `participants`: how the total and the table name the rows. */
  noun: { one: string; many: string };
  columns: SearchColumn<Row>[];
  rowId(row: Row): string;
  /** The words a row's checkbox is labelled with ("Select ada@example.org"). */
  rowLabel(row: Row): string;
  selection?: Selection;
  /**
   * How a row shows a property the filter names (personCell, participantCell): each such property
   * gets a column after the page's own; undefined when the row's answer does not hold its value.
   */
  filterCell?(property: FilterProperty): ValueCell<Row> | undefined;
  /** Below the total, above the table: what the page does with the filter or the selection. */
  children?: ComponentChildren;
}

function SortButton({ column, sort, onSort }: { column: SearchColumn<unknown>; sort: Sort | undefined; onSort(update: (previous: Sort | undefined) => Sort | undefined): void }) {
  const by = column.sortBy!;
  const operatorOf = (given: Sort | undefined) => (given && given.propertyGroup === by.propertyGroup && given.propertyName === by.propertyName ? given.operator : undefined);
  const current = operatorOf(sort);
  const state = current === 'ASC' ? 'sorted ascending' : current === 'DESC' ? 'sorted descending' : 'not sorted';
  // Unsorted → ascending → descending → unsorted (the API's default order, by id), from the sort as
  // it is when the press is handled: two quick presses go two steps, even before a render.
  const press = () =>
    onSort((previous) => {
      const operator = operatorOf(previous);
      const next = operator === undefined ? 'ASC' : operator === 'ASC' ? 'DESC' : undefined;
      return next ? { ...by, operator: next } : undefined;
    });
  return (
    <button type="button" class="sort-button" aria-label={`${column.header}, ${state}: sort`} onClick={press}>
      {column.header}
      <span aria-hidden="true">{current === 'ASC' ? ' ▲' : current === 'DESC' ? ' ▼' : ' ↕'}</span>
    </button>
  );
}

/** The search's failure in words: a refused filter points at its conditions; a 403 on a filter may be personal data. */
function explained(problem: Problem, filtered: boolean): Problem {
  if (problem.fields.length > 0) return { ...problem, summary: 'The API refused this filter: the conditions it names say why.' };
  if (problem.status === 403 && filtered) {
    return { ...problem, summary: 'Refused: this token may not filter or sort on personal data (emails, names, phones, properties marked PII or PHI), or your role may not search.' };
  }
  return problem;
}

/**
 * A search screen's body: the filter builder, the live total, the results with sortable columns,
 * optional row selection, the page size and the pager.
 */
export function SearchPanel<Row>({ search, noun, columns, rowId, rowLabel, selection, filterCell, children }: SearchPanelProps<Row>) {
  const sizeId = useId();
  const { results } = search;
  const rows = results.data?.results ?? [];
  const problem = results.problem;
  const shownPaths = [...search.built.paths.values()].filter((path) => path.length > 1);
  const unplaced = problem ? unplacedMessages(problem, shownPaths) : [];

  // The properties the filter names, each a column (a filter on age and country shows both).
  const byKey = new Map(search.properties.map((property) => [property.key, property]));
  const named = namedProperties(search.root)
    .filter((key) => !columns.some((column) => column.covers?.includes(key)))
    .flatMap((key) => {
      const property = byKey.get(key);
      return property ? [property] : [];
    });
  const shownNamed: SearchColumn<Row>[] = [];
  const notShown: FilterProperty[] = [];
  for (const property of named) {
    const cell = filterCell?.(property);
    if (!cell) {
      notShown.push(property);
      continue;
    }
    shownNamed.push({ id: `filter-${property.key}`, header: property.label, cell, ...('propertyGroup' in property.ref ? { sortBy: property.ref } : {}) });
  }

  const definitions: ColumnDef<Row>[] = [...columns, ...shownNamed].map((column) => ({
    id: column.id,
    header: () =>
      column.sortBy && isSortable(column.sortBy.propertyGroup, column.sortBy.propertyName) ? (
        <SortButton column={column as SearchColumn<unknown>} sort={search.sort} onSort={search.setSort} />
      ) : (
        column.header
      ),
    cell: ({ row }) => column.cell(row.original),
  }));
  if (selection) {
    const pageIds = rows.map(rowId);
    const allChosen = pageIds.length > 0 && pageIds.every((id) => selection.selected.has(id));
    definitions.unshift({
      id: 'select',
      header: () => (
        <input
          type="checkbox"
          aria-label={`Select every ${noun.one} on this page`}
          checked={allChosen}
          disabled={pageIds.length === 0}
          onChange={(event) => {
            const next = new Set(selection.selected);
            for (const id of pageIds) {
              if (event.currentTarget.checked) next.add(id);
              else next.delete(id);
            }
            selection.onChange(next);
          }}
        />
      ),
      cell: ({ row }) => (
        <input
          type="checkbox"
          aria-label={`Select ${rowLabel(row.original)}`}
          checked={selection.selected.has(rowId(row.original))}
          onChange={(event) => {
            const next = new Set(selection.selected);
            if (event.currentTarget.checked) next.add(rowId(row.original));
            else next.delete(rowId(row.original));
            selection.onChange(next);
          }}
        />
      ),
    });
  }

  const total = results.data?.total;
  return (
    <>
      <section aria-labelledby={`${sizeId}-filter`}>
        <h2 id={`${sizeId}-filter`}>Filter</h2>
        {search.propertiesProblem && <ErrorNotice problem={{ ...search.propertiesProblem, summary: `The custom properties could not be loaded: ${search.propertiesProblem.summary}` }} />}
        <FilterBuilder root={search.root} onChange={search.setRoot} properties={search.properties} built={search.built} problem={search.filterProblem} />
      </section>
      <section aria-labelledby={`${sizeId}-results`}>
        <div class="page-header search-summary">
          <h2 id={`${sizeId}-results`}>Results</h2>
          <p class="search-total" aria-live="polite" aria-busy={!search.settled} data-testid="search-total">
            {total === undefined ? 'Counting…' : total === 1 ? `1 ${noun.one} matches` : `${total} ${noun.many} match`}
          </p>
          <div class="filters">
            <label for={sizeId}>Per page</label>
            <select id={sizeId} value={search.size} onChange={(event) => search.setSize(Number(event.currentTarget.value))}>
              {pageSizes.map((size) => (
                <option key={size} value={size}>
                  {size}
                </option>
              ))}
            </select>
          </div>
        </div>
        <ErrorNotice problem={problem && explained(problem, search.built.filter !== undefined || search.sort !== undefined)} extra={unplaced} />
        {children}
        <div aria-busy={results.loading}>
          <DataTable caption={`Matching ${noun.many}`} columns={definitions} rows={rows} rowId={rowId} empty={`No ${noun.one} matches.`} />
          {notShown.length > 0 && (
            <p class="muted" data-testid="columns-not-shown">
              No column for {notShown.map((property) => property.label).join(', ')}: the search computes {notShown.length === 1 ? 'it' : 'them'} to match, and does not return{' '}
              {notShown.length === 1 ? 'it' : 'them'} with each {noun.one}.
            </p>
          )}
          {results.data && (
            <Pager
              label={`Pages of ${noun.many}`}
              pageNumber={search.pageNumber}
              total={results.data.total}
              shown={rows.length}
              hasNextPage={results.data.pageInfo.hasNextPage}
              onPrevious={search.previous}
              onNext={() => results.data && search.next(results.data.pageInfo.endCursor)}
            />
          )}
        </div>
      </section>
    </>
  );
}
