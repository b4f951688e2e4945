import { type Static, Type } from '@sinclair/typebox';
import { paged } from '../../http/schemas.js';
import { supportedCurrencies } from '../incentives/currencies.js';
import { backfillColumns, backfillStatuses, backfillStudyTypes } from './columns.js';

const exampleBackfillId = 'bkf_01JD0000000000000000000000';

export const BackfillStatus = Type.Union(['QUEUED', 'RUNNING', 'COMPLETED', 'FAILED'].map((status) => Type.Literal(status)), {
  description:
    'QUEUED: stored, waiting for a worker. RUNNING: rows are going in. COMPLETED: every row was read (refused rows are listed at ' +
    '`GET /backfills/{backfillId}/errors`). FAILED: it stopped for good (the file stops being valid CSV, or its background work ran out of attempts); rows committed before that stay in.',
});

export const BackfillAccepted = Type.Object(
  { backfillId: Type.String(), status: BackfillStatus },
  { $id: 'BackfillAccepted', title: 'BackfillAccepted', examples: [{ backfillId: exampleBackfillId, status: 'QUEUED' }] },
);

export const Backfill = Type.Object(
  {
    backfillId: Type.String(),
    status: BackfillStatus,
    rowsTotal: Type.Integer({ description: 'Data rows read so far (blank lines are none): always `rowsWritten` + `rowsSkipped` + `rowsFailed`.' }),
    rowsWritten: Type.Integer({ description: 'Rows that wrote a participation (and its status events, and its incentive when given).' }),
    rowsSkipped: Type.Integer({
      description: 'Rows whose person already takes part in the study (written by an earlier backfill, an earlier row, or made here): nothing is changed, so the same file twice writes nothing the second time.',
    }),
    rowsFailed: Type.Integer({ description: 'Rows refused: each is listed at `GET /backfills/{backfillId}/errors` (the first 10,000).' }),
    studiesCreated: Type.Integer({ description: 'Past studies made by this backfill, one per new studyKey.' }),
    incentivesWritten: Type.Integer({ description: 'Incentives paid in the other tool, recorded as CUSTOM incentives in status SENT.' }),
    errorsListed: Type.Integer({ description: 'Refused rows kept to list (the first 10,000).' }),
    lastRow: Type.Optional(Type.Integer({ description: 'The row number (the header is row 1) of the last row read; absent until one is.' })),
    failureReason: Type.Optional(Type.String({ description: 'FAILED only: why it stopped, and which rows it read.' })),
    createdByUserId: Type.String(),
    createdAt: Type.String({ format: 'date-time' }),
    finishedAt: Type.Optional(Type.String({ format: 'date-time' })),
  },
  {
    $id: 'Backfill',
    title: 'Backfill',
    examples: [
      {
        backfillId: exampleBackfillId,
        status: 'COMPLETED',
        rowsTotal: 3,
        rowsWritten: 2,
        rowsSkipped: 0,
        rowsFailed: 1,
        studiesCreated: 1,
        incentivesWritten: 1,
        errorsListed: 1,
        lastRow: 4,
        createdByUserId: 'usr_01JD0000000000000000000000',
        createdAt: '2026-12-14T10:00:00.000Z',
        finishedAt: '2026-12-14T10:00:02.000Z',
      },
    ],
  },
);

export const BackfillRowError = Type.Object(
  {
    row: Type.Integer({ description: 'The row as a spreadsheet numbers it: the header is row 1.' }),
    column: Type.Optional(Type.String({ description: 'The column the row was refused for; absent when the row is not valid CSV.' })),
    message: Type.String({ description: 'Why, and what is allowed; never repeats a cell value.' }),
  },
  { $id: 'BackfillRowError', title: 'BackfillRowError', examples: [{ row: 3, column: 'status', message: `status must be one of ${backfillStatuses.join(', ')}` }] },
);

export const BackfillList = paged(Type.Ref(Backfill), 'BackfillList', Backfill.examples[0]);
export const BackfillErrorList = paged(Type.Ref(BackfillRowError), 'BackfillErrorList', BackfillRowError.examples[0]);

export const BackfillIdParams = Type.Object({ backfillId: Type.String({ minLength: 1, maxLength: 100 }) });
export type BackfillIdParams = Static<typeof BackfillIdParams>;

/** The CSV body, for the document only: the route streams it to storage unparsed. */
export const BackfillCsvBody = {
  description:
    'CSV text (UTF-8, or UTF-16 with its byte-order mark; comma, semicolon or tab separated, as the people import reads it), one row per ' +
    'participation: a person in a past study. Columns, matched case-insensitively in any order: ' +
    '`email` or `personId` (one of them; the person must exist in the workspace, personId wins when both are filled); ' +
    '`studyKey` (required, at most 200 characters: the study\'s key in the tool the history comes from; the first row of a new key makes the study, CLOSED and marked backfilled); ' +
    '`studyName` (default: the key), `studyStartDate`, `studyEndDate` (YYYY-MM-DD), ' +
    `\`studyType\` (${backfillStudyTypes.join(', ')}; default INTERVIEWS), taken from the row that makes the study; ` +
    `\`status\` (required: ${backfillStatuses.join(', ')}), ` +
    '`invitedAt` (required for INVITED), `interviewStartTime` (interview studies; required for SCHEDULED and NO_SHOW), `completedAt` ' +
    '(COMPLETED only; required unless an interview has interviewStartTime), `canceledAt` (CANCELED only, required): ISO 8601 date-times ' +
    'with a time zone, or dates (midnight UTC), none in the future and none before invitedAt; ' +
    `\`incentiveAmount\` (optional, in the currency's major unit: 75.00), \`incentiveCurrency\` (${supportedCurrencies.join(', ')}; default USD), ` +
    '`incentivePaidAt` (default completedAt). Every unknown, unnamed or repeated column is a 400 naming it.',
  examples: ['email,studyKey,studyName,studyType,status,invitedAt,interviewStartTime,incentiveAmount\ngrace@example.org,OLD-42,Checkout interviews,INTERVIEWS,COMPLETED,2025-03-01,2025-03-08T15:00:00Z,75.00\n'],
};

export const backfillSchemas = [BackfillAccepted, Backfill, BackfillRowError];
export { backfillColumns };
