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
  row: Type.Integer({
    description:
      'The row as a spreadsheet program numbers it: the header is row 1, the first data row row 2. A blank line counts as a row (a spreadsheet ' +
      'shows it as an empty row) but is no data row; a quoted cell that holds line breaks is still one row. In a text editor, row N is line N ' +
      'unless a cell above it holds line breaks.',
  }),
  message: Type.String({
    description:
      'Why the row was refused; names the column, never repeats a cell value. The row where a file stops being valid CSV also names the ' +
      "file's line it starts on and what is wrong there (a quote never closed, a quote inside a cell that is not quoted).",
  }),
});

export const Import = Type.Object(
  {
    importId: Type.String(),
    status: ImportStatus,
    rowsTotal: Type.Integer({
      description:
        'Data rows read so far (blank lines are none), always `rowsImported` + `rowsFailed`; once COMPLETED, every data row of the file. ' +
        'When the file stops being valid CSV, the row where it does is counted (as failed) and the rows after it are not: they were not read.',
    }),
    rowsImported: Type.Integer({ description: 'Rows that created or updated a person.' }),
    rowsFailed: Type.Integer({ description: 'Rows refused: each one is listed in `errors`, or counted in `errorsOmitted` past the first 1000.' }),
    errors: Type.Array(ImportRowError, { description: 'The refused rows in row order: the first 1000 of them.' }),
    errorsOmitted: Type.Optional(
      Type.Integer({
        description:
          'Present when more than 1000 rows were refused: how many refused rows `errors` does not list. They all come after the last row it ' +
          'lists; to find them, fix the file and import the rows after that row again (an import updates people by email, so a row imported ' +
          'twice makes no second person).',
      }),
    ),
    lastRow: Type.Optional(
      Type.Integer({
        description:
          'The row number (as `errors` numbers rows) of the last row read: every data row up to it was imported unless `errors` lists it ' +
          '(or `errorsOmitted` counts it); the rows after it have not been read yet (QUEUED, RUNNING) or never will be (FAILED). Absent ' +
          'until a data row has been read.',
      }),
    ),
    failureReason: Type.Optional(Type.String({ description: 'FAILED only: why the import stopped, and which rows it read.' })),
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
        errors: [{ row: 3, message: 'email is not a valid email address' }],
        lastRow: 4,
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
    'CSV text, as spreadsheet programs save it. Encoding: UTF-8, with or without a byte-order mark; or UTF-16 with its byte-order mark ' +
    "(Excel's \"Unicode text\"). Bytes that are not valid UTF-8 (a file saved as Windows-1252 or Latin-1) are refused with a 400 naming the " +
    'line. Separator: comma, semicolon or tab, detected from the header row: each one splits the row (a separator inside a quoted name does ' +
    'not count), and the one that gives the most column names the import knows wins, then the one that gives the most columns, then comma, ' +
    'semicolon, tab in that order. Line breaks: CRLF, LF or CR. Quotes as in RFC 4180: a cell holding the separator, a quote or a line ' +
    'break is quoted whole, its quotes doubled. The header row names the columns: `email` (required), `firstName`, `lastName`, `phone`, ' +
    "and the names of the workspace's person properties, all matched case-insensitively, in any order; every unknown, unnamed or repeated " +
    'column is reported in one 400, with the columns allowed. Each further row upserts one person by ' +
    'email (case-insensitive, among people not deleted): a new email creates a person, a known one updates the columns the row fills; ' +
    'cells are trimmed, and an empty cell leaves the value as it was; blank lines are skipped. Property cells: STRING as is; NUMBER a decimal number; DATETIME an ISO 8601 date-time ' +
    'with a time zone; BOOLEAN `true`/`false` (also `yes`/`no`, `1`/`0`); SINGLE_SELECT an option name; MULTI_SELECT option names ' +
    'separated by `;`; LOCATION an ISO 3166-1 alpha-2 country code or a JSON object of the LOCATION shape. At most 2 GiB.',
  examples: ['email,firstName,lastName,Age\ngrace@example.org,Grace,Hopper,85\n'],
};

export const importSchemas = [ImportAccepted, Import];
