import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * The pages' Content-Security-Policy: nothing but this origin's stylesheet and images, forms that
 * post only to this origin, no script at all (the pages work without it), no framing. A page that
 * an attacker managed to inject markup into still could not run script or send a form elsewhere.
 */
export const participantContentSecurityPolicy = [
  "default-src 'none'",
  "style-src 'self'",
  "img-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Headers on every participant page and asset: no referrer (the URL holds the link's token), no sniffing, no framing, no cache of a page. */
export function setPageHeaders(reply: FastifyReply, options: { cacheable: boolean }): void {
  reply.header('Content-Security-Policy', participantContentSecurityPolicy);
  reply.header('Referrer-Policy', 'no-referrer');
  reply.header('X-Content-Type-Options', 'nosniff');
  reply.header('X-Frame-Options', 'DENY');
  reply.header('Cross-Origin-Resource-Policy', 'same-origin');
  reply.header('Permissions-Policy', 'camera=(), microphone=(), geolocation=(), interest-cohort=()');
  reply.header('Cache-Control', options.cacheable ? 'public, max-age=31536000, immutable' : 'no-store');
}

/**
 * The form's anti-forgery token: an HMAC of the link's id and the form's name under a key of the
 * service's. The link's own token is already a secret another site cannot know; this one also
 * ties a posted form to the page the service rendered for that link, so a form posted without
 * having been served (a missing or altered field) is refused, with no cookie needed.
 */
export function formToken(key: Buffer, linkId: string, form: string): string {
  return createHmac('sha256', key).update(`participant-form\u0000${linkId}\u0000${form}`).digest('base64url');
}

export function formTokenIsValid(key: Buffer, linkId: string, form: string, given: unknown): boolean {
  if (typeof given !== 'string') return false;
  const expected = Buffer.from(formToken(key, linkId, form), 'utf8');
  const actual = Buffer.from(given, 'utf8');
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/**
 * Whether a form post comes from another site, as the browser says: Sec-Fetch-Site (every current
 * browser sends it) or else Origin. A request with neither (an old browser, a script) is judged by
 * the form token alone.
 */
export function isCrossSitePost(request: FastifyRequest, publicOrigin: string | undefined): boolean {
  const site = request.headers['sec-fetch-site'];
  if (typeof site === 'string') return site !== 'same-origin' && site !== 'none';
  const origin = request.headers.origin;
  if (typeof origin !== 'string' || origin === 'null') return origin === 'null';
  const expected = publicOrigin ?? `${request.protocol}://${request.host}`;
  return origin !== new URL(expected).origin;
}

/**
 * The link's token exactly as the request's path spells it (`/p/<token>` or `/p/<token>/<step>`),
 * or undefined when the router's decoded parameter differs from it: a percent-encoded spelling
 * of the link is another spelling, and a link is accepted in the one spelling the service wrote.
 */
export function linkTokenAsSpelled(rawUrl: string | undefined, decoded: string): string | undefined {
  const spelled = (rawUrl ?? '').split('?')[0]!.split('/')[2];
  return spelled === decoded ? decoded : undefined;
}
