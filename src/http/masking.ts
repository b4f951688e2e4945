/**
 * Personal data seen by a token without the personal-data right (`token create --no-pii`).
 * One masking everywhere: text becomes "***", an email "***@***" (still recognisably an email
 * field, never any part of the clear value). Filtering on such fields with such a token is refused.
 */
export const MASKED_TEXT = '***';
export const MASKED_EMAIL = '***@***';

export const maskingNote =
  'Personal data (emails, phones, names) is masked for tokens without the personal-data right: text becomes "***", emails "***@***".';

export function maskText<T extends string | null>(value: T, canRead: boolean): T | string {
  return canRead || value === null ? value : MASKED_TEXT;
}

export function maskEmail<T extends string | null>(value: T, canRead: boolean): T | string {
  return canRead || value === null ? value : MASKED_EMAIL;
}

/** What a key without the personal-data right may not ask (docs/api/README.md, "Personal data"). */
export const personalLookupNote =
  'A token without the personal-data right may not address a person by email (403, `WWW-Authenticate` naming `scope="personal-data"`): the answer would say whether the email is in the panel.';
