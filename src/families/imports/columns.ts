import type { PropertyValue } from '../../db/schema.js';
import { type CatalogueProperty, checkPropertyValue, type PropertyCatalogue } from '../people/values.js';

const coreColumns = ['email', 'firstName', 'lastName', 'phone'] as const;
type CoreColumn = (typeof coreColumns)[number];

export type Column = { kind: CoreColumn } | { kind: 'property'; property: CatalogueProperty } | { kind: 'ignored' };

export type HeaderCheck = { ok: true; columns: Column[] } | { ok: false; message: string; column: string };

/**
 * Maps the header row to columns, names compared case-insensitively. With `ignoreUnknown` (the
 * job, reading a header the upload accepted) a name that no longer matches a property, because
 * the property was deleted meanwhile, is skipped: its values would have been removed anyway.
 */
export function resolveHeader(header: readonly string[], catalogue: PropertyCatalogue, options: { ignoreUnknown?: boolean } = {}): HeaderCheck {
  const properties = new Map([...catalogue.values()].map((property) => [property.name.toLowerCase(), property]));
  const seen = new Set<string>();
  const columns: Column[] = [];
  for (const raw of header) {
    const name = raw.trim();
    const key = name.toLowerCase();
    if (seen.has(key)) return { ok: false, message: `Column "${name}" appears twice in the header`, column: name };
    seen.add(key);
    const core = coreColumns.find((column) => column.toLowerCase() === key);
    if (core) {
      columns.push({ kind: core });
      continue;
    }
    const property = properties.get(key);
    if (property) columns.push({ kind: 'property', property });
    else if (options.ignoreUnknown) columns.push({ kind: 'ignored' });
    else {
      return {
        ok: false,
        message: `Unknown column "${name}": columns are email, firstName, lastName, phone and the names of the workspace's person properties`,
        column: name,
      };
    }
  }
  if (!seen.has('email')) return { ok: false, message: 'The header has no email column', column: 'email' };
  return { ok: true, columns };
}

/** One data row as it goes into `people`: only the fields its cells fill. */
export interface ImportedRow {
  email: string;
  /** How emails are compared: lower case. */
  emailKey: string;
  firstName?: string;
  lastName?: string;
  phone?: string;
  properties: Record<string, PropertyValue>;
}

export type RowCheck = { ok: true; row: ImportedRow } | { ok: false; message: string };

// The `email` format of the request schemas (ajv-formats), so an import accepts what POST /people does.
const EMAIL = /^[a-z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/i;
const coreLimits = { firstName: 200, lastName: 200, phone: 40 } as const;
const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;
const booleans: Record<string, boolean> = { true: true, false: false, yes: true, no: false, 1: true, 0: false };

/** The cell's text as the value its property's type takes, or a message naming the column (never the value). */
function cellValue(property: CatalogueProperty, text: string): { ok: true; value: unknown } | { ok: false } {
  switch (property.propertyType) {
    case 'NUMBER':
      return NUMBER.test(text) ? { ok: true, value: Number(text) } : { ok: false };
    case 'BOOLEAN': {
      const value = booleans[text.toLowerCase()];
      return value === undefined ? { ok: false } : { ok: true, value };
    }
    case 'SINGLE_SELECT':
      return { ok: true, value: optionName(property, text) };
    case 'MULTI_SELECT':
      return {
        ok: true,
        value: text
          .split(';')
          .map((item) => item.trim())
          .filter((item) => item !== '')
          .map((item) => optionName(property, item)),
      };
    case 'LOCATION':
      if (/^[A-Za-z]{2}$/.test(text)) return { ok: true, value: { country: text.toUpperCase() } };
      try {
        return { ok: true, value: JSON.parse(text) as unknown };
      } catch {
        return { ok: false };
      }
    default:
      return { ok: true, value: text };
  }
}

/** Each select property's option names by their lower case, made once per catalogue entry rather than once per cell. */
const optionsByKey = new WeakMap<CatalogueProperty, Map<string, string>>();

/** Option names match case-insensitively in a file; the stored value is the option's own name. */
function optionName(property: CatalogueProperty, text: string): string {
  let options = optionsByKey.get(property);
  if (options === undefined) {
    options = new Map();
    // The first of two names equal but for case wins, as a search in order would find it.
    for (const name of property.optionNames) if (!options.has(name.toLowerCase())) options.set(name.toLowerCase(), name);
    optionsByKey.set(property, options);
  }
  return options.get(text.toLowerCase()) ?? text;
}

/** Checks one data row (its cells in header order). Messages name columns, never cell values. */
export function checkRow(columns: readonly Column[], cells: readonly string[]): RowCheck {
  if (cells.length !== columns.length) return { ok: false, message: `The row has ${cells.length} cells; the header has ${columns.length} columns` };
  const row: Partial<ImportedRow> & { properties: Record<string, PropertyValue> } = { properties: {} };
  for (let index = 0; index < columns.length; index++) {
    const column = columns[index]!;
    const text = cells[index]!.trim();
    if (column.kind === 'ignored') continue;
    if (text.includes('\u0000')) return { ok: false, message: `${columnName(column)} contains the NUL character` };
    if (text === '') {
      if (column.kind === 'email') return { ok: false, message: 'email is empty' };
      continue;
    }
    if (column.kind === 'email') {
      if (text.length > 320 || !EMAIL.test(text)) return { ok: false, message: 'email is not a valid email address' };
      row.email = text;
      row.emailKey = text.toLowerCase();
    } else if (column.kind === 'property') {
      const parsed = cellValue(column.property, text);
      if (!parsed.ok) return { ok: false, message: `${column.property.name}: the value is not a valid ${column.property.propertyType} value` };
      // The checker's messages describe the type (and a select's options), never the value.
      const checked = checkPropertyValue(column.property, parsed.value);
      if (!checked.ok) {
        // A LOCATION's message may quote a key of the cell's JSON: say only what the type is.
        const message = column.property.propertyType === 'LOCATION' ? 'A LOCATION value is a country code or a JSON object with at least a country' : checked.message;
        return { ok: false, message: `${column.property.name}: ${message}` };
      }
      row.properties[column.property.propertyId] = checked.value;
    } else {
      if (text.length > coreLimits[column.kind]) return { ok: false, message: `${column.kind} is longer than ${coreLimits[column.kind]} characters` };
      row[column.kind] = text;
    }
  }
  return { ok: true, row: row as ImportedRow };
}

function columnName(column: Exclude<Column, { kind: 'ignored' }>): string {
  return column.kind === 'property' ? column.property.name : column.kind;
}
