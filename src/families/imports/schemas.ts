import { type Static, Type } from '@sinclair/typebox';

const exampleImportId = 'imp_01JD0000000000000000000000';

export const ImportStatus = Type.Union(['QUEUED', 'RUNNING', 'COMPLETED', 'FAILED'].map((status) => Type.Literal(status)), {
  description:
    'QUEUED: stored, waiting for a worker. RUNNING: rows are going in. COMPLETED: every row was read (bad rows are in `errors`). ' +
    'FAILED: the import stopped for good (an unreadable file, or its background work ran out of attempts); rows committed before that stay in.',
});

export const ImportAccepted = Type.Object(
  { importId: Type.String(), status: ImportStatus },
  { $id: 'ImportAccepted', title: 'ImportAccepted', examples: [{ importId: exampleImportId, status: 'QUEUED' }] },
);

export const ImportRowError = Type.Object({
  row: Type.Integer({ description: '1-based number of the data row (the header row is not counted).' }),
  message: Type.String({ description: 'Why the row was refused; never repeats a cell value.' }),
});

export const Import = Type.Object(
  {
    importId: Type.String(),
    status: ImportStatus,
    rowsTotal: Type.Integer({ description: 'Data rows read so far; once COMPLETED, every data row of the file.' }),
    rowsImported: Type.Integer({ description: 'Rows that created or updated a person.' }),
    rowsFailed: Type.Integer({ description: 'Rows refused; each is reported in `errors` (the first 1000 of them).' }),
    errors: Type.Array(ImportRowError, { description: 'The first 1000 refused rows, in row order.' }),
  },
  {
    $id: 'Import',
    title: 'Import',
    examples: [
      {
        importId: exampleImportId,
        status: 'COMPLETED',
        rowsTotal: 3,
        rowsImported: 2,
        rowsFailed: 1,
        errors: [{ row: 2, message: 'email is not a valid email address' }],
      },
    ],
  },
);

export const CreateImportQuery = Type.Object(
  {
    populationId: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Every imported row also joins this population (404 if it does not exist).' })),
  },
  { additionalProperties: false },
);
export type CreateImportQuery = Static<typeof CreateImportQuery>;

export const ImportIdParams = Type.Object({ importId: Type.String({ minLength: 1, maxLength: 100 }) });

/**
 * The CSV body, for the document only: the route streams it to storage unparsed, so this schema
 * accepts anything (the header is checked as it arrives).
 */
export const CsvBody = {
  description:
    'UTF-8 CSV (RFC 4180; a byte-order mark is allowed). The header row names the columns: `email` (required), `firstName`, `lastName`, `phone`, ' +
    "and the names of the workspace's person properties, all matched case-insensitively, in any order. Each further row upserts one person by " +
    'email (case-insensitive, among people not deleted): a new email creates a person, a known one updates the columns the row fills; ' +
    'cells are trimmed, and an empty cell leaves the value as it was. Property cells: STRING as is; NUMBER a decimal number; DATETIME an ISO 8601 date-time ' +
    'with a time zone; BOOLEAN `true`/`false` (also `yes`/`no`, `1`/`0`); SINGLE_SELECT an option name; MULTI_SELECT option names ' +
    'separated by `;`; LOCATION an ISO 3166-1 alpha-2 country code or a JSON object of the LOCATION shape. At most 2 GiB.',
  examples: ['email,firstName,lastName,Age\ngrace@example.org,Grace,Hopper,85\n'],
};

export const importSchemas = [ImportAccepted, Import];
