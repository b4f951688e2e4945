import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { serviceSecret } from '../../db/service-secrets.js';

/**
 * Signing secrets at rest. HMAC signing needs the secret itself, so it is encrypted, not hashed:
 * AES-256-GCM under a key the operator gives (SECRETS_KEY, 32 bytes in base64) or, when none is
 * given, one the service generates once and keeps in service_secrets, a table the tenant role
 * cannot read. With the operator's key, a copy of the database alone reveals no secret.
 */
export class SecretBox {
  private constructor(private readonly key: Buffer) {}

  static async open(db: Kysely<DB>, configuredKey: string | undefined): Promise<SecretBox> {
    if (configuredKey !== undefined) return new SecretBox(Buffer.from(configuredKey, 'base64'));
    return new SecretBox(await serviceSecret(db, 'webhook-secrets-key'));
  }

  /**
   * A key of its own for another purpose (the HMAC of unsubscribe links), derived from this one
   * with HKDF-SHA256: one key for the operator to keep, and no key used for two purposes.
   */
  derive(purpose: string): Buffer {
    return Buffer.from(hkdfSync('sha256', this.key, Buffer.alloc(0), purpose, 32));
  }

  /** `v1.<iv>.<tag>.<ciphertext>`, each part base64url. */
  seal(secret: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
    return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), sealed.toString('base64url')].join('.');
  }

  open(sealed: string): string {
    const [version, iv, tag, data] = sealed.split('.');
    if (version !== 'v1' || iv === undefined || tag === undefined || data === undefined) throw new Error('A webhook secret is stored in an unknown form');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
  }
}

/** A new signing secret in the Standard Webhooks form: `whsec_` and 32 random bytes in base64. */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** An endpoint's stored secrets: the current one, and the one a rotation replaced with the time it stops signing. */
export interface StoredSecrets {
  secret_ciphertext: string;
  previous_secret_ciphertext: string | null;
  previous_secret_expires_at: string | null;
}

/** Whether the secret a rotation replaced still signs at `at` (ISO 8601). */
export function previousStillSigns(stored: StoredSecrets, at: string): boolean {
  return stored.previous_secret_ciphertext !== null && stored.previous_secret_expires_at !== null && stored.previous_secret_expires_at > at;
}

/** The secrets that sign a delivery made at `at`: the current one, and the replaced one during its 24 hours. */
export function signingSecrets(box: SecretBox, stored: StoredSecrets, at: string): string[] {
  const secrets = [box.open(stored.secret_ciphertext)];
  if (previousStillSigns(stored, at)) secrets.push(box.open(stored.previous_secret_ciphertext!));
  return secrets;
}
