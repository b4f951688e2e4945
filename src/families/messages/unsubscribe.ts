import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * One-click unsubscribe links (RFC 8058). A link names a message of a workspace and carries an
 * HMAC-SHA256 (truncated to 128 bits) over the workspace, the person and the message, under a key
 * derived from the service's secrets key (SECRETS_KEY, or the one kept in service_secrets): only
 * the service can make one, and changing any part of it (another message, another person's id, a
 * truncated MAC) makes it refused. The person is not in the link (their id is read from the
 * message and then checked by the MAC), so a link shows no more than a message id.
 *
 * Changing SECRETS_KEY invalidates the links of every message already sent.
 */
export const unsubscribeKeyPurpose = 'recruit-ops unsubscribe links v1';

const TOKEN = /^(wsp_[0-9A-Z]{26})\.(eml_[0-9A-Z]{26})\.([A-Za-z0-9_-]{22})$/;

export interface UnsubscribeClaim {
  workspaceId: string;
  messageId: string;
  /** The MAC as given, checked against the person the message was sent to by verifyUnsubscribeMac. */
  mac: string;
}

function macOf(key: Buffer, workspaceId: string, personId: string, messageId: string): Buffer {
  return createHmac('sha256', key).update(`unsubscribe\u0000${workspaceId}\u0000${personId}\u0000${messageId}`).digest().subarray(0, 16);
}

export function unsubscribeToken(key: Buffer, workspaceId: string, personId: string, messageId: string): string {
  return `${workspaceId}.${messageId}.${macOf(key, workspaceId, personId, messageId).toString('base64url')}`;
}

/** The parts of a well-formed token, or undefined: a malformed one is refused before any lookup. */
export function parseUnsubscribeToken(token: string): UnsubscribeClaim | undefined {
  const match = TOKEN.exec(token);
  if (!match) return undefined;
  return { workspaceId: match[1]!, messageId: match[2]!, mac: match[3]! };
}

/**
 * Whether the claim's MAC is the one the service made for this person, compared as the text the
 * link carries (in constant time, fixed length): decoding first would accept several spellings of
 * one MAC (base64 ignores the spare bits of the last character), and a link has exactly one.
 */
export function verifyUnsubscribeMac(key: Buffer, claim: UnsubscribeClaim, personId: string): boolean {
  const given = Buffer.from(claim.mac, 'utf8');
  const expected = Buffer.from(macOf(key, claim.workspaceId, personId, claim.messageId).toString('base64url'), 'utf8');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * The token exactly as the request's path spells it, or undefined when the router's decoded
 * parameter differs from it: a percent-encoded spelling of the link (`%2E` for `.`, `%41` for
 * `A`) is another spelling, and a link is accepted in the one spelling the service wrote.
 */
export function tokenAsSpelled(rawUrl: string | undefined, decoded: string): string | undefined {
  const path = (rawUrl ?? '').split('?')[0]!;
  const spelled = path.slice(path.lastIndexOf('/') + 1);
  return spelled === decoded ? decoded : undefined;
}

/** The absolute link a message carries: `PUBLIC_URL/v1/unsubscribe/<token>`. */
export function unsubscribeUrl(publicUrl: string, token: string): string {
  return `${publicUrl.replace(/\/+$/, '')}/v1/unsubscribe/${token}`;
}
