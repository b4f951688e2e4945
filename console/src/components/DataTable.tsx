import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
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
 * A read-only table of `rows`. Columns are TanStack column definitions; a cell renders as text
 * unless its `cell` returns elements, and nothing is ever inserted as HTML.
 */
export function DataTable<Data extends RowData>({ caption, columns, rows, rowId, empty = 'Nothing to show.' }: DataTableProps<Data>) {
  const table = useTable<Data>({ data: rows, columns, getCoreRowModel: getCoreRowModel(), getRowId: (row) => rowId(row) });
  return (
    <div class="table-scroll">
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
