/**
 * Dates, times, money and numbers as the viewer reads them: in the browser's locale and time zone,
 * through Intl (no hand-made formats). The API speaks UTC instants and cents; a research team
 * member in Auckland or Berlin reads their own wall time and their own digits.
 */

/** The locale Intl picks for this browser (its languages): undefined means exactly that. */
const viewerLocale = undefined;

const dayFormat = new Intl.DateTimeFormat(viewerLocale, { dateStyle: 'medium' });
const momentFormat = new Intl.DateTimeFormat(viewerLocale, { dateStyle: 'medium', timeStyle: 'short' });
/**
 * A time that matters to a person's day (a session, an event's moment) says its zone: dateStyle
 * and timeStyle cannot be combined with timeZoneName, hence the parts.
 */
export const zonedMomentOptions: Intl.DateTimeFormatOptions = {
  weekday: 'short',
  year: 'numeric',
  month: 'short',
  day: 'numeric',
  hour: 'numeric',
  minute: '2-digit',
  timeZoneName: 'short',
};
const zonedMomentFormat = new Intl.DateTimeFormat(viewerLocale, zonedMomentOptions);
/** A calendar day the API gives without a time (a study plan's start date): read in UTC so it never moves a day. */
const calendarDayFormat = new Intl.DateTimeFormat(viewerLocale, { dateStyle: 'medium', timeZone: 'UTC' });

/** The viewer's time zone by its IANA name (`Europe/Berlin`): said beside a time they type. */
export const viewerTimeZone = new Intl.DateTimeFormat().resolvedOptions().timeZone;

const asDate = (at: string | Date) => (typeof at === 'string' ? new Date(at) : at);

/** The day of an instant, in the viewer's zone: "4 Mar 2031", "04.03.2031". */
export const formatDay = (at: string | Date) => dayFormat.format(asDate(at));

/** An instant's day and time, in the viewer's zone. */
export const formatMoment = (at: string | Date) => momentFormat.format(asDate(at));

/** An instant's day and time with the zone's name: a session, an event. */
export const formatZonedMoment = (at: string | Date) => zonedMomentFormat.format(asDate(at));

/** A `YYYY-MM-DD` day as the viewer writes days; anything else as given. */
export function formatCalendarDay(day: string): string {
  const at = new Date(`${day}T00:00:00Z`);
  return /^\d{4}-\d{2}-\d{2}$/.test(day) && !Number.isNaN(at.getTime()) ? calendarDayFormat.format(at) : day;
}

const moneyFormats = new Map<string, Intl.NumberFormat>();
function moneyFormat(currency: string): Intl.NumberFormat {
  let format = moneyFormats.get(currency);
  if (!format) {
    format = new Intl.NumberFormat(viewerLocale, { style: 'currency', currency });
    moneyFormats.set(currency, format);
  }
  return format;
}

/** Cents as money: 7550 → "$75.50" (en-US), "75,50 $" (de-DE). Incentives are in US dollars (the API's rule). */
export const formatCents = (cents: number, currency = 'USD') => moneyFormat(currency).format(cents / 100);

/** An amount in whole units of its currency (a study plan's incentive: 75 USD). */
export const formatAmount = (amount: number, currency = 'USD') => moneyFormat(currency).format(amount);

const numberFormat = new Intl.NumberFormat(viewerLocale, { maximumFractionDigits: 6 });
export const formatNumber = (value: number) => numberFormat.format(value);

/**
 * The amount a person typed, in the currency's units, as cents: "75", "12.50", and "12,50" as
 * the many locales that write a decimal comma do; undefined for anything else.
 */
export function parseMoney(text: string): number | undefined {
  const match = /^\s*(\d{1,9})(?:[.,](\d{1,2}))?\s*$/.exec(text);
  if (!match) return undefined;
  return Number(match[1]) * 100 + Number((match[2] ?? '').padEnd(2, '0'));
}
