import { randomBytes } from 'node:crypto';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const ALPHABET = Buffer.from(CROCKFORD, 'latin1');
/** Each half of the 80 random bits: 40 bits, 8 characters, exact in a double. */
const HALF_MAX = 2 ** 40 - 1;
/** Where ids are written; grown for a longer prefix. */
let scratch = Buffer.alloc(64);

/**
 * The id's text, written into one buffer and read out as one flat string. Built a character at a
 * time, with BigInt arithmetic, an id cost about 2 KB of garbage and came out as a chain of
 * concatenations that outlived it until first flattened; an import makes one per person (issue 12:
 * the import's promoted garbage).
 */
export function formatId(prefix: string, timeMs: number, high: number, low: number): string {
  if (scratch.length < prefix.length + 27) scratch = Buffer.alloc(2 * (prefix.length + 27));
  const buffer = scratch;
  let at = buffer.write(prefix, 'latin1');
  buffer[at++] = 0x5f; // _
  let end = at + 10;
  for (let index = end - 1, rest = timeMs; index >= at; index--, rest = Math.floor(rest / 32)) buffer[index] = ALPHABET[rest % 32]!;
  at = end;
  end = at + 8;
  for (let index = end - 1, rest = high; index >= at; index--, rest = Math.floor(rest / 32)) buffer[index] = ALPHABET[rest % 32]!;
  at = end;
  end = at + 8;
  for (let index = end - 1, rest = low; index >= at; index--, rest = Math.floor(rest / 32)) buffer[index] = ALPHABET[rest % 32]!;
  return buffer.toString('latin1', 0, end);
}

/** 80 fresh random bits, as two 40-bit halves. */
function randomHalves(): [number, number] {
  const bytes = randomBytes(10);
  return [bytes.readUIntBE(0, 5), bytes.readUIntBE(5, 5)];
}

let lastTime = -1;
let lastHigh = 0;
let lastLow = 0;

/**
 * Opaque identifiers: a readable prefix and a ULID (48-bit millisecond time, 80 random bits,
 * Crockford base32). Time-ordered, so keyset pages over ids follow creation order; within one
 * process they are strictly increasing (a second id in the same millisecond increments the
 * random part), so "newest first" is exact for ids one instance made.
 */
export function newId(prefix: string, nowMs: number = Date.now()): string {
  let time = nowMs;
  let high: number;
  let low: number;
  if (time <= lastTime && (lastHigh < HALF_MAX || lastLow < HALF_MAX)) {
    time = lastTime;
    high = lastLow === HALF_MAX ? lastHigh + 1 : lastHigh;
    low = lastLow === HALF_MAX ? 0 : lastLow + 1;
  } else {
    [high, low] = randomHalves();
  }
  lastTime = time;
  lastHigh = high;
  lastLow = low;
  return formatId(prefix, time, high, low);
}

/**
 * An identifier that is public and must not be guessed from another one (a signup form's id goes
 * into a public link): a prefix and a ULID whose 80 random bits are always fresh. newId's ids
 * made in one millisecond differ by one in their random part, so knowing one would give away
 * the next; these never do. They are time-ordered to the millisecond only: ids made within one
 * millisecond sort in no particular order.
 */
export function newUnguessableId(prefix: string, nowMs: number = Date.now()): string {
  const [high, low] = randomHalves();
  return formatId(prefix, nowMs, high, low);
}

export const idPrefixes = {
  workspace: 'wsp',
  user: 'usr',
  emailAccount: 'eac',
  team: 'tem',
  token: 'tok',
  customRole: 'crl',
  study: 'stu',
  studyTemplate: 'stt',
  screener: 'scr',
  question: 'sqn',
  // The default key of a screener question (its identity across versions), when the client names none.
  questionKey: 'sqk',
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
  consentForm: 'cfm',
  brandingConfig: 'brc',
  segment: 'seg',
  webhookEndpoint: 'whe',
  webhookMessage: 'msg',
  webhookAttempt: 'wha',
  messageTemplate: 'mtp',
  message: 'eml',
  messageEvent: 'eme',
  quotaGroup: 'qgr',
  session: 'ses',
  booking: 'bkg',
  calendarFeed: 'cfd',
  incentiveBudget: 'bgt',
  ledgerEntry: 'led',
  backfill: 'bkf',
  ssoAttempt: 'ssa',
  auditEvent: 'aud',
} as const;
