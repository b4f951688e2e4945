import { IntlMessageFormat } from 'intl-messageformat';
import { ar } from './catalogues/ar.js';
import { de } from './catalogues/de.js';
import { type Catalogue, en, type MessageKey } from './catalogues/en.js';
import { es } from './catalogues/es.js';
import { fr } from './catalogues/fr.js';

export type { MessageKey };

/** The languages the participant's pages, emails and documents are written in; a study's `language` picks one. */
export const catalogues = { en, de, fr, es, ar } satisfies Record<string, Catalogue>;
export type Locale = keyof typeof catalogues;
export const locales = Object.keys(catalogues) as Locale[];
const rightToLeft = new Set<Locale>(['ar']);

export type MessageValues = Record<string, string | number | Date>;

export interface Translator {
  locale: Locale;
  /** `rtl` for Arabic, else `ltr`: the page's `dir`. */
  direction: 'ltr' | 'rtl';
  t(key: MessageKey, values?: MessageValues): string;
  /** A date and time as the person reads it, in their time zone when known. */
  dateTime(at: Date | string, timeZone?: string): string;
}

const formats = new Map<string, IntlMessageFormat>();

function formatOf(locale: Locale, key: MessageKey): IntlMessageFormat {
  const cacheKey = `${locale}\u0000${key}`;
  let format = formats.get(cacheKey);
  if (!format) {
    format = new IntlMessageFormat(catalogues[locale][key], locale, undefined, { ignoreTag: true });
    formats.set(cacheKey, format);
  }
  return format;
}

function isLocale(value: string): value is Locale {
  return Object.hasOwn(catalogues, value);
}

/**
 * The locale of a page: the study's language when the service ships it (its primary subtag:
 * `de-AT` → `de`), else the best of the browser's Accept-Language that it ships, else English.
 * The study's choice comes first: the team wrote the questions in that language.
 */
export function chooseLocale(studyLanguage: string | null | undefined, acceptLanguage: string | undefined): Locale {
  const primary = (tag: string) => tag.trim().split(/[-_]/)[0]!.toLowerCase();
  if (studyLanguage && isLocale(primary(studyLanguage))) return primary(studyLanguage) as Locale;
  const ranked = (acceptLanguage ?? '')
    .split(',')
    .map((part, index) => {
      const [tag = '', ...parameters] = part.split(';');
      const quality = parameters.map((parameter) => /^\s*q=([0-9.]+)\s*$/.exec(parameter)?.[1]).find((value) => value !== undefined);
      return { tag: primary(tag), quality: quality === undefined ? 1 : Number(quality), index };
    })
    .filter((entry) => entry.tag && entry.quality > 0)
    .sort((a, b) => b.quality - a.quality || a.index - b.index);
  return (ranked.find((entry) => isLocale(entry.tag))?.tag as Locale | undefined) ?? 'en';
}

export function translator(locale: Locale): Translator {
  return {
    locale,
    direction: rightToLeft.has(locale) ? 'rtl' : 'ltr',
    t: (key, values) => String(formatOf(locale, key).format(values)),
    dateTime: (at, timeZone) =>
      // dateStyle and timeStyle refuse timeZoneName: with a zone, the same parts are spelled out one by one.
      new Intl.DateTimeFormat(
        locale,
        timeZone ? { year: 'numeric', month: 'long', day: 'numeric', hour: 'numeric', minute: '2-digit', timeZone, timeZoneName: 'short' } : { dateStyle: 'long', timeStyle: 'short' },
      ).format(typeof at === 'string' ? new Date(at) : at),
  };
}
