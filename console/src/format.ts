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

/** ISO 4217 decimals of a currency, from the browser's ICU: JPY 0, BHD 3, most 2. */
export function currencyDigits(currency: string): number {
  return new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
}

/**
 * An amount in the currency's minor unit (the API's amountCents) as money: 7550 USD → "$75.50"
 * (en-US), "75,50 $" (de-DE); 5000 JPY → "¥5,000"; 1500 BHD → "BHD 1.500".
 */
export const formatCents = (cents: number, currency = 'USD') => moneyFormat(currency).format(cents / 10 ** currencyDigits(currency));

/** An amount in whole units of its currency (a study plan's incentive: 75 USD). */
export const formatAmount = (amount: number, currency = 'USD') => moneyFormat(currency).format(amount);

const numberFormat = new Intl.NumberFormat(viewerLocale, { maximumFractionDigits: 6 });
export const formatNumber = (value: number) => numberFormat.format(value);

/**
 * The amount a person typed, in the currency's units, as its minor unit (cents; yen for JPY, fils for BHD): "75", "12.50", and "12,50" as
 * the many locales that write a decimal comma do; undefined for anything else.
 */
export function parseMoney(text: string, currency = 'USD'): number | undefined {
  const digits = currencyDigits(currency);
  const match = (digits === 0 ? /^\s*(\d{1,9})()\s*$/ : new RegExp(`^\\s*(\\d{1,9})(?:[.,](\\d{1,${digits}}))?\\s*$`)).exec(text);
  if (!match) return undefined;
  return Number(match[1]) * 10 ** digits + Number((match[2] ?? '').padEnd(digits, '0') || '0');
}
