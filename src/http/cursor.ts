import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import { badRequest } from './errors.js';

/**
 * Opaque, tamper-evident keyset cursors: base64url(JSON payload) + "." + HMAC-SHA256 over the
 * payload and the query's scope (route, filters, sort). A changed or truncated cursor, or one
 * from another query, fails the MAC and is a 400.
 */
export class CursorCodec {
  constructor(private readonly secret: Buffer) {}

  private mac(scope: string, payload: string): Buffer {
    return createHmac('sha256', this.secret).update(scope).update('\u0000').update(payload).digest();
  }

  encode(scope: string, key: unknown[]): string {
    const payload = Buffer.from(JSON.stringify(key)).toString('base64url');
    return `${payload}.${this.mac(scope, payload).toString('base64url')}`;
  }

  /** The key a cursor carries; `path` names the parameter in the 400 when it is not valid. */
  decode(scope: string, cursor: string, path: string[]): unknown[] {
    const [payload, signature, extra] = cursor.split('.');
    const invalid = () => badRequest('startCursor is not a valid cursor for this query', path);
    if (!payload || !signature || extra !== undefined) throw invalid();
    // Compare the signature's text, not its decoded bytes: base64 decoding ignores spare bits and
    // stray characters, so several spellings would otherwise pass. timingSafeEqual throws on
    // different lengths, hence the length check first (the length of a MAC is no secret).
    const expected = Buffer.from(this.mac(scope, payload).toString('base64url'));
    const given = Buffer.from(signature);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalid();
    const key: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
    if (!Array.isArray(key)) throw invalid();
    return key;
  }
}

/** The secret is kept in the database so that every instance accepts every other's cursors. */
export async function loadCursorSecret(db: Kysely<DB>): Promise<Buffer> {
  await db
    .insertInto('service_secrets')
    .values({ name: 'cursor', value: randomBytes(32).toString('base64') })
    .onConflict((conflict) => conflict.column('name').doNothing())
    .execute();
  const row = await db.selectFrom('service_secrets').where('name', '=', 'cursor').select('value').executeTakeFirstOrThrow();
  return Buffer.from(row.value, 'base64');
}
