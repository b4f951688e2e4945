import { randomBytes } from 'node:crypto';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * Opaque identifiers: a readable prefix and a ULID (48-bit millisecond time, 80 random bits,
 * Crockford base32). Time-ordered, so keyset pages over ids follow creation order.
 */
export function newId(prefix: string, nowMs: number = Date.now()): string {
  let time = '';
  let remaining = nowMs;
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[remaining % 32] + time;
    remaining = Math.floor(remaining / 32);
  }
  const random = randomBytes(10);
  let bits = 0;
  let value = 0;
  let tail = '';
  for (const byte of random) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      tail += CROCKFORD[(value >> bits) & 31];
    }
  }
  return `${prefix}_${time}${tail}`;
}

export const idPrefixes = {
  workspace: 'wsp',
  user: 'usr',
  emailAccount: 'eac',
  team: 'tem',
  token: 'tok',
  study: 'stu',
  studyTemplate: 'stt',
  screener: 'scr',
  question: 'sqn',
  population: 'pop',
} as const;
