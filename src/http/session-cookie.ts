import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * The console's session cookie and its CSRF token (issue 36, item 2). The cookie holds a session's
 * secret (32 random bytes, base64url); the service keeps only its SHA-256. The CSRF token is a
 * second digest of the same secret (a synchronizer token that needs no storage): a page of the
 * service reads it from GET /v1/session and sends it back in X-CSRF-Token on every write; another
 * site's page can neither read the cookie nor the answer, so it cannot forge the header.
 */
export const sessionCookieName = 'recruit_session';
export const csrfHeaderName = 'x-csrf-token';

const SECRET_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/** The value of one cookie of the request, or undefined. */
export function cookieOf(request: FastifyRequest, name: string): string | undefined {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}

/** The session secret the request's cookie carries, when it has a secret's shape. */
export function sessionSecretOf(request: FastifyRequest): string | undefined {
  const value = cookieOf(request, sessionCookieName);
  return value !== undefined && SECRET_SHAPE.test(value) ? value : undefined;
}

/** The stored digest of a session secret (hex, as API tokens' digests). */
export function sessionDigest(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

/** The session's CSRF token: a digest of the secret under its own label, so it reveals nothing of it. */
export function csrfTokenOf(secret: string): string {
  return createHash('sha256').update(`csrf\0${secret}`, 'utf8').digest('base64url');
}

/** Whether the request's X-CSRF-Token is the session's, compared in constant time over fixed-length digests. */
export function presentsCsrfToken(request: FastifyRequest, secret: string): boolean {
  const given = request.headers[csrfHeaderName];
  const value = typeof given === 'string' ? given : '';
  const expected = createHash('sha256').update(csrfTokenOf(secret)).digest();
  const presented = createHash('sha256').update(value).digest();
  return timingSafeEqual(expected, presented) && value.length > 0;
}

/** Whether a method writes (anything but GET, HEAD and OPTIONS). */
export const isWrite = (method: string) => method !== 'GET' && method !== 'HEAD' && method !== 'OPTIONS';

/**
 * Sets (or, with an empty value, clears) the session cookie: HttpOnly, SameSite=Lax, Path=/,
 * Secure when the service's public URL is https.
 */
export function setSessionCookie(reply: FastifyReply, value: string, maxAgeSeconds: number, secure: boolean) {
  reply.header('Set-Cookie', `${sessionCookieName}=${value}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}${secure ? '; Secure' : ''}`);
}
