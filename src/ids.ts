import { randomBytes } from 'node:crypto';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const RANDOM_BITS = 80n;
const RANDOM_LIMIT = 1n << RANDOM_BITS;

function encode(value: bigint, length: number): string {
  let text = '';
  for (let i = 0; i < length; i++) {
    text = CROCKFORD[Number(value & 31n)] + text;
    value >>= 5n;
  }
  return text;
}

let lastTime = -1;
let lastRandom = 0n;

/**
 * Opaque identifiers: a readable prefix and a ULID (48-bit millisecond time, 80 random bits,
 * Crockford base32). Time-ordered, so keyset pages over ids follow creation order; within one
 * process they are strictly increasing (a second id in the same millisecond increments the
 * random part), so "newest first" is exact for ids one instance made.
 */
export function newId(prefix: string, nowMs: number = Date.now()): string {
  let time = nowMs;
  let random: bigint;
  if (time <= lastTime && lastRandom + 1n < RANDOM_LIMIT) {
    time = lastTime;
    random = lastRandom + 1n;
  } else {
    random = BigInt(`0x${randomBytes(10).toString('hex')}`);
  }
  lastTime = time;
  lastRandom = random;
  return `${prefix}_${encode(BigInt(time), 10)}${encode(random, 16)}`;
}

/**
 * An identifier that is public and must not be guessed from another one (a signup form's id goes
 * into a public link): a prefix and a ULID whose 80 random bits are always fresh. newId's ids
 * made in one millisecond differ by one in their random part, so knowing one would give away
 * the next; these never do. They are time-ordered to the millisecond only: ids made within one
 * millisecond sort in no particular order.
 */
export function newUnguessableId(prefix: string, nowMs: number = Date.now()): string {
  return `${prefix}_${encode(BigInt(nowMs), 10)}${encode(BigInt(`0x${randomBytes(10).toString('hex')}`), 16)}`;
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
  person: 'per',
  import: 'imp',
  personProperty: 'prp',
  propertyOption: 'pro',
  propertyGroup: 'prg',
  bulkActionRequest: 'bar',
  participant: 'ptc',
  incentive: 'inc',
  signupForm: 'sgf',
  signupSubmission: 'sgs',
  consentSubmission: 'cns',
  segment: 'seg',
  webhookEndpoint: 'whe',
  webhookMessage: 'msg',
  webhookAttempt: 'wha',
  messageTemplate: 'mtp',
  message: 'eml',
  messageEvent: 'eme',
} as const;
