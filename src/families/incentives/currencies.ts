import { badRequest } from '../../http/errors.js';

/**
 * The currencies incentives and budgets may be in, each with the largest amount one incentive may
 * carry, in the currency's minor unit. Amounts are always integers of the minor unit (the field
 * keeps the reference's name, amountCents): 1 is a cent of USD, a yen of JPY, a fils of BHD.
 *
 * The exponent (digits after the decimal point) is ISO 4217's, read from the ICU data Node ships
 * (Intl.NumberFormat's currency digits: JPY 0, BHD 3, most 2), not copied by hand; currencies.test.ts
 * holds the table to the standard's values at the edges.
 *
 * The maximums are the service's ceiling per incentive, about US$10,000 in each currency, below
 * the per-reward limits the providers publish for these currencies (a larger order is refused
 * here with the range, not at the provider after it was recorded).
 */
const maximumMajor: Record<string, number> = {
  USD: 10_000,
  EUR: 10_000,
  GBP: 8_000,
  CAD: 14_000,
  AUD: 15_000,
  NZD: 16_000,
  CHF: 9_000,
  SEK: 100_000,
  NOK: 100_000,
  DKK: 70_000,
  JPY: 1_500_000,
  BHD: 3_500,
};

export const supportedCurrencies = Object.keys(maximumMajor) as readonly string[];

/** ISO 4217 minor-unit digits, from ICU. */
export function currencyExponent(currency: string): number {
  return new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
}

/** The largest amount of one incentive, in the currency's minor unit. */
export function maximumAmount(currency: string): number {
  return maximumMajor[currency]! * 10 ** currencyExponent(currency);
}

export function isSupportedCurrency(currency: string): boolean {
  return Object.hasOwn(maximumMajor, currency);
}

/** A 400 naming `path` unless the currency is one incentives may be in. */
export function checkCurrency(currency: string, path: string[]): void {
  if (!isSupportedCurrency(currency)) throw badRequest(`currency must be one of ${supportedCurrencies.join(', ')}`, path);
}

/** A 400 naming `path` with the allowed range unless the amount fits one incentive in this currency. */
export function checkAmount(amount: number, currency: string, path: string[]): void {
  const maximum = maximumAmount(currency);
  if (amount > maximum) {
    throw badRequest(`amountCents must be between 1 and ${maximum} for ${currency} (${formatMinor(maximum, currency)}; the amount is in the currency's minor unit)`, path);
  }
}

/** An amount in the minor unit as people read it: 150000 JPY is "¥150,000", 1500 BHD is "BHD 1.500". */
export function formatMinor(amount: number, currency: string): string {
  const exponent = currencyExponent(currency);
  return new Intl.NumberFormat('en', { style: 'currency', currency, minimumFractionDigits: exponent, maximumFractionDigits: exponent }).format(amount / 10 ** exponent);
}

export const currencyDescription =
  `ISO 4217 code, one of ${supportedCurrencies.join(', ')}. Amounts are integers in the currency's minor unit (amountCents: cents for USD, ` +
  'yen for JPY (no decimals), fils for BHD (three)).';
