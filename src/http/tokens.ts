import { createHash, randomBytes } from 'node:crypto';

const TOKEN_PATTERN = /^rk_(wsp_[0-9A-Z]{26})_([A-Za-z0-9_-]{43})$/;

/**
 * API tokens: `rk_<workspaceId>_<32 random bytes, base64url>`. The workspace id lets a lookup
 * use the workspace-leading index (and, later, find the shard); the 256 random bits are the
 * secret. Only the SHA-256 digest is stored; argon2 would add latency and no safety for keys
 * with this much entropy.
 */
export function generateToken(workspaceId: string): { token: string; digest: string } {
  const token = `rk_${workspaceId}_${randomBytes(32).toString('base64url')}`;
  return { token, digest: digestToken(token) };
}

export function digestToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export function parseToken(token: string): { workspaceId: string } | undefined {
  const match = TOKEN_PATTERN.exec(token);
  return match ? { workspaceId: match[1]! } : undefined;
}
