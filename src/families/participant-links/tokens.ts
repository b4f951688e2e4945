import { createHash, randomBytes } from 'node:crypto';

/**
 * A participant link's token: 32 random bytes (256 bits) in base64url, 43 characters, carrying no
 * personal data and nothing derivable from an id. Only its SHA-256 is stored: a copy of the
 * database gives no working link. A slow hash would add nothing: the token is random and long,
 * not a password a person chose.
 */
export function newLinkToken(): { token: string; sha256: Buffer } {
  const token = randomBytes(32).toString('base64url');
  return { token, sha256: linkTokenDigest(token) };
}

export function linkTokenDigest(token: string): Buffer {
  return createHash('sha256').update(token, 'utf8').digest();
}

const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/**
 * Whether the text has a token's shape. A link is accepted in the one spelling the service
 * wrote: base64url of 32 bytes has spare bits in its last character, so that character must be
 * the one encoding writes (one of 16), else two spellings would open one link.
 */
export function isLinkTokenShaped(token: string): boolean {
  if (!TOKEN_SHAPE.test(token)) return false;
  return Buffer.from(token, 'base64url').toString('base64url') === token;
}

/** The page a token opens: `PUBLIC_URL/p/<token>`. */
export function participantLinkUrl(publicUrl: string, token: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/p/${token}`;
}
