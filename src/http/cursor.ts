import { createCipheriv, createDecipheriv, createHmac, hkdfSync } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import { serviceSecret } from '../db/service-secrets.js';
import { badRequest } from './errors.js';

/**
 * Opaque keyset cursors, encrypted and authenticated (issue 32, item 7): a cursor carries sort
 * values (a person's email, a name), which its holder sees only as the service's ciphertext.
 *
 * A cursor is base64url(nonce ‖ AES-256-GCM ciphertext ‖ tag), with the query's scope (workspace,
 * route, filters, sort) as the additional authenticated data: a changed, truncated or extended
 * cursor, or one taken from another query, workspace or key, fails the tag and is a 400 naming
 * the cursor parameter. The nonce is an HMAC of the scope and the position (a synthetic IV), so
 * one position of one query always reads the same cursor, and two different ones never share a
 * nonce. The keys are derived with HKDF from one secret (see loadCursorSecret).
 */
export class CursorCodec {
  private readonly encryptionKey: Buffer;
  private readonly nonceKey: Buffer;

  constructor(secret: Buffer) {
    this.encryptionKey = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), 'recruit-ops cursors v2 encryption', 32));
    this.nonceKey = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), 'recruit-ops cursors v2 nonce', 32));
  }

  encode(scope: string, key: unknown[]): string {
    const plaintext = Buffer.from(JSON.stringify(key), 'utf8');
    const nonce = createHmac('sha256', this.nonceKey).update(scope).update('\u0000').update(plaintext).digest().subarray(0, NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.encryptionKey, nonce);
    cipher.setAAD(Buffer.from(scope, 'utf8'));
    const sealed = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    return Buffer.concat([nonce, sealed, cipher.getAuthTag()]).toString('base64url');
  }

  /** The key a cursor carries; `path` names the parameter in the 400 when it is not valid. */
  decode(scope: string, cursor: string, path: string[]): unknown[] {
    const invalid = () => badRequest('startCursor is not a valid cursor for this query', path);
    // One spelling only: base64url without padding, as encode writes it (base64 decoding ignores
    // stray characters and the spare bits of the last one, so the text is checked, not just decoded).
    if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw invalid();
    const bytes = Buffer.from(cursor, 'base64url');
    if (bytes.toString('base64url') !== cursor || bytes.length < NONCE_BYTES + TAG_BYTES + 2) throw invalid();
    let plaintext: Buffer;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.encryptionKey, bytes.subarray(0, NONCE_BYTES));
      decipher.setAAD(Buffer.from(scope, 'utf8'));
      decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
      plaintext = Buffer.concat([decipher.update(bytes.subarray(NONCE_BYTES, bytes.length - TAG_BYTES)), decipher.final()]);
    } catch {
      throw invalid();
    }
    const key: unknown = JSON.parse(plaintext.toString('utf8'));
    if (!Array.isArray(key)) throw invalid();
    return key;
  }
}

const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/**
 * The secret cursors are keyed from, the same on every instance: the operator's SECRETS_KEY when
 * set (cursors get a key of their own from it by HKDF); otherwise a random one generated once and
 * kept in the database's service_secrets (closed to the tenant role), which every instance reads.
 */
export async function loadCursorSecret(db: Kysely<DB>, configuredKey?: string): Promise<Buffer> {
  if (configuredKey !== undefined) return Buffer.from(hkdfSync('sha256', Buffer.from(configuredKey, 'base64'), Buffer.alloc(0), 'recruit-ops cursor secret', 32));
  return serviceSecret(db, 'cursor');
}
