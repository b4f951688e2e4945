import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';

/** What the key of provider credentials is derived for: no other purpose shares it. */
export const providerCredentialsPurpose = 'recruit-ops incentive provider credentials v1';

/** One key of the ring: its id is a digest of the key (never the key), stored with what it sealed. */
interface RingKey {
  id: string;
  key: Buffer;
}

const keyOf = (key: Buffer): RingKey => ({ id: createHash('sha256').update('key id\u0000').update(key).digest('hex').slice(0, 16), key });

/**
 * Provider credentials at rest: AES-256-GCM under a key derived (HKDF-SHA256) from the service's
 * secret (SECRETS_KEY, or the generated one in service_secrets), bound to their workspace and
 * provider by the cipher's additional data, so a sealed value copied to another row does not
 * open. Each sealed value starts with the id of the key that sealed it: after a rotation of
 * SECRETS_KEY, the previous key (SECRETS_KEY_PREVIOUS) still opens what it sealed, and every
 * change seals with the current one (`needsResealing` says which rows are left).
 */
export class CredentialBox {
  private readonly current: RingKey;
  private readonly byId: Map<string, RingKey>;

  constructor(current: Buffer, previous: readonly Buffer[] = []) {
    this.current = keyOf(current);
    this.byId = new Map([this.current, ...previous.map(keyOf)].map((ring) => [ring.id, ring]));
  }

  /** From the service's secret box derivation (SecretBox.derive) and an optional previous root key. */
  static fromRoot(root: Buffer, previousRoot?: Buffer, purpose = providerCredentialsPurpose): CredentialBox {
    const derive = (key: Buffer) => Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), purpose, 32));
    return new CredentialBox(derive(root), previousRoot ? [derive(previousRoot)] : []);
  }

  get keyId(): string {
    return this.current.id;
  }

  needsResealing(keyId: string): boolean {
    return keyId !== this.current.id;
  }

  /** `<key id>.<iv>.<tag>.<ciphertext>`, each part after the id base64url. */
  seal(credentials: Readonly<Record<string, string>>, scope: { workspaceId: string; provider: string }): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.current.key, iv);
    cipher.setAAD(Buffer.from(`${scope.workspaceId}\u0000${scope.provider}`));
    const sealed = Buffer.concat([cipher.update(JSON.stringify(credentials), 'utf8'), cipher.final()]);
    return [this.current.id, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), sealed.toString('base64url')].join('.');
  }

  open(sealed: string, scope: { workspaceId: string; provider: string }): Record<string, string> {
    const [keyId, iv, tag, data] = sealed.split('.');
    if (keyId === undefined || iv === undefined || tag === undefined || data === undefined) throw new Error('Provider credentials are stored in an unknown form');
    const ring = this.byId.get(keyId);
    if (!ring) throw new Error(`Provider credentials of workspace ${scope.workspaceId} were sealed under a key this service no longer has (key id ${keyId}): set them again`);
    const decipher = createDecipheriv('aes-256-gcm', ring.key, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(`${scope.workspaceId}\u0000${scope.provider}`));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    const text = Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
    return JSON.parse(text) as Record<string, string>;
  }
}
