import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import {
  type ColumnDef,
  createTable,
  getCoreRowModel,
  type RowData,
  type Table,
  type TableOptions,
  type TableOptionsResolved,
  type TableState,
} from '@tanstack/table-core';

export type { ColumnDef };

/**
 * TanStack Table's core in Preact: what @tanstack/react-table's useReactTable does, without React.
 * The table object lives as long as the component; its state is Preact state, so a change
 * (sorting, selection, when pages add them) renders again.
 */
export function useTable<Data extends RowData>(options: TableOptions<Data>): Table<Data> {
  const resolved: TableOptionsResolved<Data> = { state: {}, onStateChange: () => {}, renderFallbackValue: null, ...options };
  const [table] = useState(() => createTable<Data>(resolved));
  const [state, setState] = useState<TableState>(() => table.initialState);
  table.setOptions((previous) => ({
    ...previous,
    ...options,
    state: { ...state, ...options.state },
    onStateChange: (updater) => {
      setState(updater);
      options.onStateChange?.(updater);
    },
  }));
  return table;
}

/** A column's header or cell template: a string, or a function of its context (flexRender's rule). */
export function render<Context>(template: string | ((context: Context) => unknown) | undefined, context: Context): ComponentChildren {
  if (template === undefined) return null;
  return (typeof template === 'function' ? template(context) : template) as ComponentChildren;
}

export interface DataTableProps<Data extends RowData> {
  /** Says what the rows are, for assistive technology (the table's caption). */
  caption: string;
  columns: ColumnDef<Data>[];
  rows: Data[];
  /** A stable key per row (an id), so rows keep their DOM when pages change. */
  rowId: (row: Data) => string;
  /** What to show when there are no rows. */
  empty?: ComponentChildren;
}

/**
 * Whether the element is narrower than what it holds (a table on a phone): it then scrolls
 * sideways inside itself, and must be reachable by keyboard to be scrolled.
 */
function useOverflows(element: { current: HTMLElement | null }): boolean {
  const [overflows, setOverflows] = useState(false);
  useEffect(() => {
    const target = element.current;
    if (!target) return;
    const measure = () => setOverflows(target.scrollWidth > target.clientWidth + 1);
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(target);
    if (target.firstElementChild) observer.observe(target.firstElementChild);
    return () => observer.disconnect();
  }, []);
  return overflows;
}

/**
 * A read-only table of `rows`. Columns are TanStack column definitions; a cell renders as text
 * unless its `cell` returns elements, and nothing is ever inserted as HTML. A table wider than the
 * page (a phone) scrolls inside its own box, never the page; that box is then a labelled region in
 * the tab order, so a keyboard user can scroll it with the arrow keys.
 */
export function DataTable<Data extends RowData>({ caption, columns, rows, rowId, empty = 'Nothing to show.' }: DataTableProps<Data>) {
  const table = useTable<Data>({ data: rows, columns, getCoreRowModel: getCoreRowModel(), getRowId: (row) => rowId(row) });
  const box = useRef<HTMLDivElement>(null);
  const overflows = useOverflows(box);
  return (
    <div class="table-scroll" ref={box} {...(overflows ? { role: 'region', 'aria-label': `${caption} (scrolls sideways)`, tabIndex: 0 } : {})}>
      <table class="striped">
        <caption class="visually-hidden">{caption}</caption>
        <thead>
          {table.getHeaderGroups().map((group) => (
            <tr key={group.id}>
              {group.headers.map((header) => (
                <th key={header.id} scope="col">
                  {header.isPlaceholder ? null : render(header.column.columnDef.header, header.getContext())}
                </th>
              ))}
            </tr>
          ))}
        </thead>
        <tbody>
          {table.getRowModel().rows.map((row) => (
            <tr key={row.id}>
              {row.getVisibleCells().map((cell) => (
                <td key={cell.id}>{render(cell.column.columnDef.cell, cell.getContext())}</td>
              ))}
            </tr>
          ))}
          {rows.length === 0 && (
            <tr>
              <td colSpan={columns.length}>{empty}</td>
            </tr>
          )}
        </tbody>
      </table>
    </div>
  );
}
