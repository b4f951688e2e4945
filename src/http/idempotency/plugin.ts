import { createHash, randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';
import { badRequest, conflict } from '../errors.js';
import { findKey, insertReservation, releaseKey, renewLease, storeResponse, takeOverKey } from './queries.js';

/**
 * Idempotent POST requests, with Stripe's semantics, for every authenticated JSON POST route.
 *
 * A client that may retry sends `Idempotency-Key: <1–255 printable ASCII characters>`. Keys are
 * scoped to the token's workspace. The first request with a key reserves it (after
 * authentication and validation, before the handler), runs, and its response (status, content
 * type, body) is stored as it is sent. A later request with the same key:
 * - and the same request (method, route, path and query parameters, canonical JSON body, and the
 *   caller: user and what the token may see) gets the stored response again, with the header
 *   `Idempotent-Replayed: true`, and the handler does not run;
 * - and a different request is refused: 400 naming `["Idempotency-Key"]`;
 * - while the first is still running gets 409 naming `["Idempotency-Key"]` (retry later).
 * Responses of 500 and above are not stored: the key is released so that a retry runs again.
 * Requests refused before the handler (401, 403, 429, a 400 of validation) reserve nothing.
 *
 * A reservation is a lease (60 s), renewed every third of that while the handler runs, so it
 * lapses only when the instance running the request dies or stalls: the key is then free for a
 * retry. A handler that must never run twice for one key even then (sending money) also records
 * the key on what it creates (see `idempotencyOf`). A request that lost its lease (a renewal or
 * the final store finds the key taken over) logs a warning: its answer will not be replayed.
 *
 * Keys are kept at least 24 hours; a recurring job prunes older ones (prune.ts). Ages and leases are real
 * time, not the service's clock: the test-helper clock moves business time for one instance,
 * and must not expire another instance's reservations.
 *
 * Routes opt out with `config: { idempotency: false }` (POST /imports does: its CSV body is
 * streamed to storage, never held whole, so it cannot be fingerprinted; and the test helpers,
 * whose retries are meant to act again); they refuse the header.
 */

export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
export const REPLAYED_HEADER = 'Idempotent-Replayed';
export const IDEMPOTENCY_LEASE_SECONDS = 60;
/** Printable ASCII (space to tilde), 1 to 255 characters. */
export const IDEMPOTENCY_KEY_PATTERN = '^[\\x20-\\x7E]{1,255}$';
const keyPattern = new RegExp(IDEMPOTENCY_KEY_PATTERN);

export const idempotencyKeyDescription =
  'Makes this request safe to retry: a retry with the same key and the same request gets the first response again ' +
  '(header `Idempotent-Replayed: true`) and does nothing twice. 1 to 255 printable ASCII characters (a UUID is a good key), ' +
  "scoped to the token's workspace and kept at least 24 hours. The same key with a different request is a 400, and while " +
  'the first request is still running a 409 (both naming `["Idempotency-Key"]`). Responses of status 500 and above are ' +
  'not kept, so a retry after one runs again.';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** `false`: this POST route takes no Idempotency-Key (say why beside it). */
    idempotency?: false;
  }
  interface FastifyRequest {
    idempotency: IdempotencyReservation | undefined;
  }
}

/** The key a request holds while its handler runs. */
export interface IdempotencyReservation {
  workspaceId: string;
  key: string;
  /** What identifies the request; a handler that records the key records this beside it. */
  fingerprint: string;
  leaseToken: string;
}

/** Whether a route takes an Idempotency-Key: every authenticated POST that does not opt out. */
export function takesIdempotencyKey(route: Pick<RouteOptions, 'method' | 'config'>): boolean {
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  return methods.includes('POST') && route.config?.right !== undefined && route.config.idempotency !== false;
}

/** The Idempotency-Key the request holds, if it sent one. */
export function idempotencyOf(request: FastifyRequest): { key: string; fingerprint: string } | undefined {
  const reservation = request.idempotency;
  return reservation ? { key: reservation.key, fingerprint: reservation.fingerprint } : undefined;
}

/** JSON with object keys sorted at every level, so that equal requests have equal text. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) => {
    if (item === null || typeof item !== 'object' || Array.isArray(item)) return item;
    const sorted: Record<string, unknown> = {};
    for (const name of Object.keys(item).sort()) sorted[name] = (item as Record<string, unknown>)[name];
    return sorted;
  });
}

function fingerprintOf(request: FastifyRequest): string {
  const principal = request.principal!;
  const material = canonicalJson([
    request.method,
    request.routeOptions.url,
    request.params ?? {},
    request.query ?? {},
    request.body ?? null,
    // The stored response was shaped for this caller (masking, screeners): never replay it to another.
    principal.userId,
    principal.canReadPersonalData,
    principal.canReadScreeners,
  ]);
  return createHash('sha256').update(material).digest('hex');
}

type Reservation =
  | { kind: 'reserved'; leaseToken: string }
  | { kind: 'replay'; status: number; contentType: string | null; body: string }
  | { kind: 'mismatch' }
  | { kind: 'in-flight' };

/** Reserves the key for this request (a lease of `leaseSeconds`), or says what a retry gets instead. */
export async function reserveKey(
  db: Kysely<DB>,
  workspaceId: string,
  key: string,
  fingerprint: string,
  now: Date,
  leaseSeconds: number = IDEMPOTENCY_LEASE_SECONDS,
): Promise<Reservation> {
  // Three rounds cover a key released or taken over between our statements; then it is busy.
  for (let round = 0; round < 3; round++) {
    const leaseToken = randomUUID();
    if (await insertReservation(db, workspaceId, key, fingerprint, leaseToken, now, leaseSeconds)) return { kind: 'reserved', leaseToken };

    const existing = await findKey(db, workspaceId, key);
    if (!existing) continue;
    if (existing.fingerprint !== fingerprint) return { kind: 'mismatch' };
    if (existing.response_status !== null) {
      return { kind: 'replay', status: existing.response_status, contentType: existing.response_content_type, body: existing.response_body ?? '' };
    }
    if (existing.locked_until !== null && new Date(existing.locked_until) > now) return { kind: 'in-flight' };
    // The lease lapsed: the request that held it died. Take the key over, unless another retry just did.
    if (await takeOverKey(db, workspaceId, key, existing.lease_token, leaseToken, now, leaseSeconds)) return { kind: 'reserved', leaseToken };
  }
  return { kind: 'in-flight' };
}

function headerValue(reply: FastifyReply, name: string): string | null {
  const value = reply.getHeader(name);
  return value === undefined ? null : String(value);
}

export interface IdempotencyOptions {
  /** The workspace's database handle (row-level security's scope: src/db/tenancy.ts). */
  dbFor(workspaceId: string): Kysely<DB>;
  now?: () => Date;
  /** How long a reservation holds without renewal (default IDEMPOTENCY_LEASE_SECONDS; tests shorten it). */
  leaseSeconds?: number;
}

export function installIdempotency(app: FastifyInstance, deps: IdempotencyOptions): void {
  const now = deps.now ?? (() => new Date());
  const leaseSeconds = deps.leaseSeconds ?? IDEMPOTENCY_LEASE_SECONDS;
  if (!(leaseSeconds > 0)) throw new Error('The idempotency lease must be positive');
  app.decorateRequest('idempotency', undefined);
  /** The lease renewal of each request holding a key, stopped once its response is stored (or sent). */
  const renewals = new WeakMap<FastifyRequest, NodeJS.Timeout>();
  const stopRenewal = (request: FastifyRequest) => {
    clearInterval(renewals.get(request));
    renewals.delete(request);
  };
  const keepRenewing = (request: FastifyRequest, reservation: IdempotencyReservation) => {
    let renewing = false;
    const timer = setInterval(() => {
      // One renewal at a time: a slow database must not pile them up.
      if (renewing) return;
      renewing = true;
      renewLease(deps.dbFor(reservation.workspaceId), reservation, now(), leaseSeconds)
        .then((held) => {
          if (held || renewals.get(request) !== timer) return;
          stopRenewal(request);
          request.log.warn({ idempotencyKey: reservation.key }, 'idempotency: the lease on the key was lost while the request ran; a retry may run it again');
        })
        .catch((error: unknown) => request.log.error({ err: error }, 'idempotency: the lease could not be renewed'))
        .finally(() => {
          renewing = false;
        });
    }, (leaseSeconds * 1000) / 3);
    // A renewal alone never keeps a process alive.
    timer.unref();
    renewals.set(request, timer);
  };

  // preHandler: after authentication (onRequest) and validation, so refused requests reserve nothing.
  app.addHook('preHandler', async (request: FastifyRequest, reply: FastifyReply) => {
    const given = request.headers['idempotency-key'];
    if (given === undefined || request.method !== 'POST' || !request.principal) return;
    if (request.routeOptions.config.idempotency === false) {
      throw badRequest(`POST ${request.routeOptions.url} does not take an Idempotency-Key`, [IDEMPOTENCY_HEADER]);
    }
    if (typeof given !== 'string' || !keyPattern.test(given)) {
      throw badRequest('Idempotency-Key must be one value of 1 to 255 printable ASCII characters', [IDEMPOTENCY_HEADER]);
    }
    const workspaceId = request.principal.workspaceId;
    const fingerprint = fingerprintOf(request);
    const reservation = await reserveKey(deps.dbFor(workspaceId), workspaceId, given, fingerprint, now(), leaseSeconds);
    switch (reservation.kind) {
      case 'reserved':
        request.idempotency = { workspaceId, key: given, fingerprint, leaseToken: reservation.leaseToken };
        keepRenewing(request, request.idempotency);
        return;
      case 'replay':
        reply.code(reservation.status).header(REPLAYED_HEADER, 'true');
        if (reservation.contentType) reply.type(reservation.contentType);
        return reply.send(reservation.body);
      case 'mismatch':
        throw badRequest('This Idempotency-Key was already used with a different request', [IDEMPOTENCY_HEADER]);
      case 'in-flight':
        throw conflict('A request with this Idempotency-Key is still in progress; retry later', [IDEMPOTENCY_HEADER]);
    }
  });

  // onSend, not onResponse: the response is stored before the client can see it, so a retry
  // made the moment it arrives is a replay, never a 409.
  app.addHook('onSend', async (request, reply, payload) => {
    const reservation = request.idempotency;
    if (!reservation) return payload;
    request.idempotency = undefined;
    stopRenewal(request);
    try {
      // Only text bodies are kept (every JSON route's); anything else is not replayable, so released.
      const db = deps.dbFor(reservation.workspaceId);
      if (reply.statusCode >= 500 || typeof payload !== 'string') await releaseKey(db, reservation);
      else if (!(await storeResponse(db, reservation, reply.statusCode, headerValue(reply, 'content-type'), payload, now()))) {
        request.log.warn(
          { idempotencyKey: reservation.key, statusCode: reply.statusCode },
          'idempotency: the lease on the key was lost before the response was stored (another request took the key over); this response will not be replayed',
        );
      }
    } catch (error) {
      // The response itself is fine: send it. The key stays reserved until its lease lapses.
      request.log.error({ err: error }, 'idempotency: the response could not be stored');
    }
    return payload;
  });
  // However the response ends (onSend stops it first in every ordinary case), the renewal stops with it.
  app.addHook('onResponse', async (request) => stopRenewal(request));
}
