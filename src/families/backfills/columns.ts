import type { ParticipantStatus, StudyType } from '../../db/schema.js';
import { currencyExponent, isSupportedCurrency, maximumAmount, supportedCurrencies } from '../incentives/currencies.js';

/**
 * The columns of a backfill's CSV file and the check of each row: one row per participation (a
 * person in a past study), checked at the edge so a row error names its column and what is
 * allowed, never repeating the cell's value (it may be personal data).
 */

export const backfillColumns = [
  'email',
  'personId',
  'studyKey',
  'studyName',
  'studyType',
  'studyStartDate',
  'studyEndDate',
  'status',
  'invitedAt',
  'interviewStartTime',
  'completedAt',
  'canceledAt',
  'incentiveAmount',
  'incentiveCurrency',
  'incentivePaidAt',
] as const;
export type BackfillColumn = (typeof backfillColumns)[number];

export const knownBackfillColumns: ReadonlySet<string> = new Set(backfillColumns.map((name) => name.toLowerCase()));

/** The statuses a participation of the past may end in. */
export const backfillStatuses = ['INVITED', 'SCHEDULED', 'COMPLETED', 'NO_SHOW', 'CANCELED'] as const satisfies readonly ParticipantStatus[];
export type BackfillStatus = (typeof backfillStatuses)[number];
export const backfillStudyTypes = ['INTERVIEWS', 'GROUP_INTERVIEW', 'SURVEY', 'UNMODERATED_TEST'] as const satisfies readonly StudyType[];

export const KEY_MAX = 200;
export const NAME_MAX = 500;

export type HeaderCheck = { ok: true; positions: Map<BackfillColumn, number> } | { ok: false; problems: { column: string; message: string }[] };

const allowed = `the columns allowed are ${backfillColumns.join(', ')}`;

/** The header's columns by name (case-insensitive, any order): every unknown, unnamed or repeated one is a problem, and so is a header without studyKey, status, or both of email and personId missing. */
export function resolveBackfillHeader(cells: readonly string[]): HeaderCheck {
  const problems: { column: string; message: string }[] = [];
  const positions = new Map<BackfillColumn, number>();
  const byLower = new Map(backfillColumns.map((name) => [name.toLowerCase(), name]));
  cells.forEach((cell, index) => {
    const name = cell.replace(/^\uFEFF/, '').trim();
    if (name === '') return problems.push({ column: String(index + 1), message: `Column ${index + 1} has no name; ${allowed}` });
    const known = byLower.get(name.toLowerCase());
    if (!known) return problems.push({ column: name, message: `Unknown column "${name}"; ${allowed}` });
    if (positions.has(known)) return problems.push({ column: name, message: `Column ${known} is named twice` });
    positions.set(known, index);
  });
  for (const required of ['studyKey', 'status'] as const) {
    if (!positions.has(required)) problems.push({ column: required, message: `The header has no ${required} column; it is required` });
  }
  if (!positions.has('email') && !positions.has('personId')) problems.push({ column: 'email', message: 'The header has neither an email nor a personId column; one of them names the person' });
  return problems.length > 0 ? { ok: false, problems } : { ok: true, positions };
}

/** A checked row: the person (by email key or id), the study, and the participation's history. */
export interface BackfillRow {
  emailKey: string | null;
  personId: string | null;
  studyKey: string;
  studyName: string | null;
  studyType: StudyType;
  studyStartDate: string | null;
  studyEndDate: string | null;
  status: BackfillStatus;
  invitedAt: string | null;
  interviewStartTime: string | null;
  completedAt: string | null;
  canceledAt: string | null;
  incentive: { amountMinor: number; currency: string; paidAt: string } | null;
}

export type RowCheck = { ok: true; row: BackfillRow } | { ok: false; column: BackfillColumn | null; message: string };

const isoDateTime = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2}))?$/i;
const isoDate = /^\d{4}-\d{2}-\d{2}$/;

class RowError extends Error {
  constructor(
    readonly column: BackfillColumn | null,
    message: string,
  ) {
    super(message);
  }
}

/** An instant: an ISO 8601 date-time with a time zone, or a date (midnight UTC); not after `now`. */
function instant(column: BackfillColumn, text: string, now: Date): string {
  if (!isoDateTime.test(text)) throw new RowError(column, `${column} must be an ISO 8601 date-time with a time zone (2024-03-01T14:00:00Z) or a date (2024-03-01)`);
  const at = new Date(isoDate.test(text) ? `${text}T00:00:00Z` : text.replace(' ', 'T'));
  if (Number.isNaN(at.getTime())) throw new RowError(column, `${column} is not a valid date`);
  if (at.getTime() > now.getTime()) throw new RowError(column, `${column} must not be in the future: a backfill records history`);
  return at.toISOString();
}

function calendarDate(column: BackfillColumn, text: string): string {
  if (!isoDate.test(text) || Number.isNaN(Date.parse(`${text}T00:00:00Z`)) || new Date(`${text}T00:00:00Z`).toISOString().slice(0, 10) !== text) {
    throw new RowError(column, `${column} must be a date as YYYY-MM-DD`);
  }
  return text;
}

const emailShape = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Checks one data row against the header's columns; `now` bounds its dates. */
export function checkBackfillRow(positions: ReadonlyMap<BackfillColumn, number>, record: readonly string[], now: Date): RowCheck {
  const cell = (column: BackfillColumn): string | undefined => {
    const index = positions.get(column);
    if (index === undefined) return undefined;
    const value = record[index]?.trim();
    return value === '' ? undefined : value;
  };
  try {
    const email = cell('email');
    const personId = cell('personId');
    if (email === undefined && personId === undefined) throw new RowError(positions.has('email') ? 'email' : 'personId', 'email or personId is required: it names the person, who must exist');
    if (email !== undefined && (email.length > 320 || !emailShape.test(email))) throw new RowError('email', 'email is not a valid email address');
    if (personId !== undefined && (personId.length > 100 || !personId.startsWith('per_'))) throw new RowError('personId', 'personId must be a person id (per_…)');

    const studyKey = cell('studyKey');
    if (studyKey === undefined) throw new RowError('studyKey', 'studyKey is required: the study\'s key in the tool the history comes from');
    if (studyKey.length > KEY_MAX) throw new RowError('studyKey', `studyKey must be at most ${KEY_MAX} characters`);
    const studyName = cell('studyName') ?? null;
    if (studyName !== null && studyName.length > NAME_MAX) throw new RowError('studyName', `studyName must be at most ${NAME_MAX} characters`);
    const typeText = cell('studyType')?.toUpperCase() ?? 'INTERVIEWS';
    if (!(backfillStudyTypes as readonly string[]).includes(typeText)) throw new RowError('studyType', `studyType must be one of ${backfillStudyTypes.join(', ')}`);
    const studyType = typeText as StudyType;
    const startText = cell('studyStartDate');
    const endText = cell('studyEndDate');
    const studyStartDate = startText === undefined ? null : calendarDate('studyStartDate', startText);
    const studyEndDate = endText === undefined ? null : calendarDate('studyEndDate', endText);
    if (studyStartDate !== null && studyEndDate !== null && studyEndDate < studyStartDate) throw new RowError('studyEndDate', 'studyEndDate must not be before studyStartDate');

    const statusText = cell('status')?.toUpperCase();
    if (statusText === undefined || !(backfillStatuses as readonly string[]).includes(statusText)) throw new RowError('status', `status must be one of ${backfillStatuses.join(', ')}`);
    const status = statusText as BackfillStatus;
    const at = (column: BackfillColumn) => {
      const text = cell(column);
      return text === undefined ? null : instant(column, text, now);
    };
    const invitedAt = at('invitedAt');
    const interviewStartTime = at('interviewStartTime');
    let completedAt = at('completedAt');
    const canceledAt = at('canceledAt');
    const isInterview = studyType === 'INTERVIEWS' || studyType === 'GROUP_INTERVIEW';
    if (!isInterview && interviewStartTime !== null) throw new RowError('interviewStartTime', 'interviewStartTime is for interview studies only (studyType INTERVIEWS or GROUP_INTERVIEW)');
    if (!isInterview && (status === 'SCHEDULED' || status === 'NO_SHOW')) throw new RowError('status', `status ${status} is for interview studies only (studyType INTERVIEWS or GROUP_INTERVIEW)`);
    if (status === 'INVITED' && invitedAt === null) throw new RowError('invitedAt', 'invitedAt is required when status is INVITED');
    if ((status === 'SCHEDULED' || status === 'NO_SHOW') && interviewStartTime === null) throw new RowError('interviewStartTime', `interviewStartTime is required when status is ${status}`);
    if (status === 'COMPLETED') {
      // As a completion made here: an interview completes at its session's start unless told otherwise.
      completedAt ??= isInterview ? interviewStartTime : null;
      if (completedAt === null) throw new RowError('completedAt', isInterview ? 'completedAt or interviewStartTime is required when status is COMPLETED' : 'completedAt is required when status is COMPLETED');
    } else if (completedAt !== null) {
      throw new RowError('completedAt', 'completedAt is allowed only when status is COMPLETED');
    }
    if (status === 'CANCELED' && canceledAt === null) throw new RowError('canceledAt', 'canceledAt is required when status is CANCELED');
    if (status !== 'CANCELED' && canceledAt !== null) throw new RowError('canceledAt', 'canceledAt is allowed only when status is CANCELED');
    if (invitedAt !== null) {
      for (const [column, later] of [['interviewStartTime', interviewStartTime], ['completedAt', completedAt], ['canceledAt', canceledAt]] as const) {
        if (later !== null && later < invitedAt) throw new RowError(column, `${column} must not be before invitedAt`);
      }
    }

    const amountText = cell('incentiveAmount');
    const currencyText = cell('incentiveCurrency')?.toUpperCase();
    const paidText = cell('incentivePaidAt');
    let incentive: BackfillRow['incentive'] = null;
    if (amountText === undefined) {
      if (currencyText !== undefined || paidText !== undefined) throw new RowError('incentiveAmount', 'incentiveAmount is required when incentiveCurrency or incentivePaidAt is given');
    } else {
      const currency = currencyText ?? 'USD';
      if (!isSupportedCurrency(currency)) throw new RowError('incentiveCurrency', `incentiveCurrency must be one of ${supportedCurrencies.join(', ')}`);
      const digits = currencyExponent(currency);
      const shape = digits === 0 ? /^\d+$/ : new RegExp(`^\\d+(?:\\.\\d{1,${digits}})?$`);
      if (!shape.test(amountText)) throw new RowError('incentiveAmount', `incentiveAmount must be a positive amount in ${currency} with at most ${digits} decimals (75.00)`);
      const [whole, fraction = ''] = amountText.split('.');
      const amountMinor = Number(whole) * 10 ** digits + Number(fraction.padEnd(digits, '0') || '0');
      if (amountMinor <= 0 || amountMinor > maximumAmount(currency)) {
        throw new RowError('incentiveAmount', `incentiveAmount must be more than 0 and at most ${maximumAmount(currency) / 10 ** digits} ${currency}`);
      }
      const paidAt = paidText === undefined ? (completedAt ?? null) : instant('incentivePaidAt', paidText, now);
      if (paidAt === null) throw new RowError('incentivePaidAt', 'incentivePaidAt is required when an incentive is given and status is not COMPLETED');
      incentive = { amountMinor, currency, paidAt };
    }
    return {
      ok: true,
      row: {
        // personId names the person exactly; an email is looked up (case-insensitively) only without one.
        emailKey: personId === undefined ? email!.toLowerCase() : null,
        personId: personId ?? null,
        studyKey,
        studyName,
        studyType,
        studyStartDate,
        studyEndDate,
        status,
        invitedAt,
        interviewStartTime,
        completedAt,
        canceledAt,
        incentive,
      },
    };
  } catch (error) {
    if (error instanceof RowError) return { ok: false, column: error.column, message: error.message };
    throw error;
  }
}
