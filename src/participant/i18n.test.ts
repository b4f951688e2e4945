import { parse, TYPE, type MessageFormatElement } from '@formatjs/icu-messageformat-parser';
import { describe, expect, it } from 'vitest';
import { en } from './catalogues/en.js';
import { catalogues, chooseLocale, locales, translator } from './i18n.js';

/** The arguments a message names, with their kinds: a translation must name the same ones. */
function argumentsOf(elements: MessageFormatElement[], found = new Map<string, number>()): Map<string, number> {
  for (const element of elements) {
    if (element.type === TYPE.literal || element.type === TYPE.pound) continue;
    if ('value' in element && typeof element.value === 'string') found.set(element.value, element.type);
    if (element.type === TYPE.plural || element.type === TYPE.select) for (const option of Object.values(element.options)) argumentsOf(option.value, found);
    if (element.type === TYPE.tag) argumentsOf(element.children, found);
  }
  return found;
}

/** Keys whose English is only arguments and punctuation (the error summary's "{field} — {message}"). */
const punctuationOnly = new Set(['errors.summaryItem']);
/** Words spelled alike in English and another shipped language (Spanish "No"). */
const sameWord = new Set(['hub.profile.no']);

describe("the participant pages' message catalogues", () => {
  it('ship English, German, French, Spanish and Arabic', () => {
    expect(locales.sort()).toEqual(['ar', 'de', 'en', 'es', 'fr']);
  });

  it.each(locales)('%s has every key of English and no other, each a message that parses and names the same arguments', (locale) => {
    const catalogue = catalogues[locale];
    expect(Object.keys(catalogue).sort()).toEqual(Object.keys(en).sort());
    for (const [key, reference] of Object.entries(en)) {
      const message = catalogue[key as keyof typeof en];
      expect(message.trim(), `${locale} ${key}`).not.toBe('');
      const expected = argumentsOf(parse(reference));
      const actual = argumentsOf(parse(message));
      expect([...actual.entries()].sort(), `${locale} ${key}`).toEqual([...expected.entries()].sort());
      // A message that is only punctuation around its arguments may read the same in another language.
      if (locale !== 'en' && !punctuationOnly.has(key) && !sameWord.has(key)) expect(message, `${locale} ${key} is translated`).not.toBe(reference);
    }
  });

  it('format numbers, plurals and dates the locale way', () => {
    expect(translator('en').t('rateLimited.body', { seconds: 1 })).toBe('Please wait 1 second and try again.');
    expect(translator('de').t('errors.tooLong', { max: 5000 })).toBe('Schreiben Sie höchstens 5.000 Zeichen.');
    expect(translator('fr').t('errors.tooLong', { max: 5000 })).toBe('Écrivez au plus 5\u202f000 caractères.');
    expect(translator('ar').t('rateLimited.body', { seconds: 2 })).toContain('ثانيتين');
    expect(translator('ar').direction).toBe('rtl');
    expect(translator('es').t('screener.answered.body', { study: 'X', date: new Date('2026-12-01T12:00:00Z') })).toContain('1 de diciembre de 2026');
  });
});

describe('chooseLocale', () => {
  it.each([
    ['de', undefined, 'de'],
    ['de-AT', 'fr', 'de'],
    ['pt', 'fr-CA,fr;q=0.9', 'fr'],
    [undefined, 'es-MX,es;q=0.9,en;q=0.5', 'es'],
    [undefined, 'ja, ar;q=0.1', 'ar'],
    [undefined, 'de;q=0, fr;q=0.5', 'fr'],
    [undefined, 'ja', 'en'],
    [undefined, undefined, 'en'],
    ['', '', 'en'],
    [null, '*', 'en'],
  ] as const)('study %s, browser %s: %s', (study, browser, expected) => {
    expect(chooseLocale(study, browser)).toBe(expected);
  });
});
