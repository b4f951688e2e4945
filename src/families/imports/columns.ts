import type { PropertyValue } from '../../db/schema.js';
import { type CatalogueProperty, checkPropertyValue, type PropertyCatalogue } from '../people/values.js';
import { columnLabel } from './text.js';

const coreColumns = ['email', 'firstName', 'lastName', 'phone'] as const;
type CoreColumn = (typeof coreColumns)[number];

export type Column = { kind: CoreColumn } | { kind: 'property'; property: CatalogueProperty } | { kind: 'ignored' };

/** One thing wrong with the header: `column` is the name as written (the API's error path is ["header", column]). */
export interface HeaderProblem {
  message: string;
  column: string;
}

export type HeaderCheck = { ok: true; columns: Column[] } | { ok: false; problems: HeaderProblem[] };

/** At most this many property names are listed in an unknown column's message; GET /properties lists them all. */
const LISTED_PROPERTIES_MAX = 50;

/** The names the import knows, lower-cased: the built-in columns and the catalogue's properties (delimiter detection scores by them). */
export function knownColumnNames(catalogue: PropertyCatalogue): Set<string> {
  return new Set([...coreColumns, ...[...catalogue.values()].map((property) => property.name)].map((name) => name.trim().toLowerCase()));
}

/** A name as compared for a suggestion: "First Name", "first_name" and "firstName" are one. */
const looseKey = (name: string) => name.toLowerCase().replace(/[^\p{L}\p{N}]/gu, '');

/**
 * Maps the header row to columns, names compared case-insensitively. Every problem is reported at
 * once (each unknown, unnamed or repeated column, and a missing email column), so a file is fixed
 * in one go. With `ignoreUnknown` (the job, reading a header the upload accepted) a name that no
 * longer matches a property, because the property was deleted meanwhile, is skipped: its values
 * would have been removed anyway.
 */
export function resolveHeader(header: readonly string[], catalogue: PropertyCatalogue, options: { ignoreUnknown?: boolean } = {}): HeaderCheck {
  const properties = new Map([...catalogue.values()].map((property) => [property.name.trim().toLowerCase(), property]));
  const seen = new Map<string, number>();
  const columns: Column[] = [];
  const problems: HeaderProblem[] = [];
  header.forEach((raw, index) => {
    const name = raw.trim();
    const key = name.toLowerCase();
    const earlier = seen.get(key);
    if (name !== '' && earlier !== undefined) {
      problems.push({ message: `Column "${name}" appears twice in the header (${columnLabel(earlier)}, and ${columnLabel(index)}): a column may appear once`, column: name });
      columns.push({ kind: 'ignored' });
      return;
    }
    seen.set(key, index);
    const core = coreColumns.find((column) => column.toLowerCase() === key);
    if (core) {
      columns.push({ kind: core });
      return;
    }
    const property = properties.get(key);
    if (property) columns.push({ kind: 'property', property });
    else {
      columns.push({ kind: 'ignored' });
      if (options.ignoreUnknown) return;
      if (name === '') problems.push({ message: `The header's ${columnLabel(index)} has no name: name it after a column the import knows, or remove the column. ${allowedColumns(catalogue)}`, column: name });
      else problems.push({ message: `Unknown column "${name}" (${columnLabel(index)}).${suggestion(name, catalogue)} ${allowedColumns(catalogue)}`, column: name });
    }
  });
  if (!seen.has('email')) problems.push({ message: 'The header has no email column: every row is matched to a person by email', column: 'email' });
  return problems.length > 0 ? { ok: false, problems } : { ok: true, columns };
}

/** ' Did you mean "firstName"?' for a name that differs from a known one only in case, spaces or punctuation. */
function suggestion(name: string, catalogue: PropertyCatalogue): string {
  const key = looseKey(name);
  if (key === '') return '';
  const match = [...coreColumns, ...[...catalogue.values()].map((property) => property.name)].find((known) => looseKey(known) === key);
  return match === undefined ? '' : ` Did you mean "${match}"?`;
}

function allowedColumns(catalogue: PropertyCatalogue): string {
  const names = [...catalogue.values()].map((property) => property.name).sort((a, b) => a.localeCompare(b));
  const core = 'The columns are email (required), firstName, lastName, phone';
  if (names.length === 0) return `${core}; the workspace has no person properties to import into.`;
  const listed = names.slice(0, LISTED_PROPERTIES_MAX).map((name) => `"${name}"`).join(', ');
  const more = names.length > LISTED_PROPERTIES_MAX ? ` and ${names.length - LISTED_PROPERTIES_MAX} more (GET /properties lists them all)` : '';
  return `${core}, and the workspace's person properties: ${listed}${more}.`;
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
