import { createHmac, timingSafeEqual } from 'node:crypto';
import { type ProviderReport, type ProviderWebhookEvent, type ProviderWebhookInput, ProviderWebhookRejected } from '../provider.js';
import { TANGO_CLAIMED_REWARD_STATUSES, incentiveIdFromTangoRef } from './refs.js';

/**
 * Tango webhook deliveries (its "webhook notifications" and "webhook authentication" pages):
 * a JSON POST `{eventId, revision, category, eventType, eventOccurredAt, eventData}` with the
 * signature in `X-Signed-Payload`. Of Tango's payload verification methods (X509, HMAC, NONE) this
 * reads HMAC: an HMAC-SHA256 over the raw body with the shared key the workspace gave Tango as
 * `hmacSharedSecretKey` (base64, as Tango requires it), the digest base64-encoded. The documentation
 * does not spell out the encoding of the header value nor whether the key is used decoded: this
 * takes the key decoded and the digest in base64, the reading the fake (test/fakes/tango-fake.ts)
 * shares; see the operating page for what is unconfirmed.
 *
 * Tango signs no timestamp header. `eventOccurredAt` is inside the signed body, so a delivery whose
 * event is older than the tolerance is refused as stale (Tango's retries of a recent event pass); a
 * replay within it carries the same `eventId`, which the service de-duplicates.
 */

export const TANGO_SIGNATURE_HEADER = 'x-signed-payload';
/** How old an event may be when delivered (Tango retries failed deliveries; the reconciliation job covers the rest). */
export const TANGO_WEBHOOK_TOLERANCE_MS = 72 * 60 * 60 * 1000;
/** How far in the future an event may claim to be (clock skew). */
const FUTURE_SKEW_MS = 5 * 60 * 1000;

/** The signature the fake sends and the adapter expects: base64(HMAC-SHA256(base64-decoded key, raw body)). */
export function tangoWebhookSignature(secret: string, rawBody: Buffer | string): string {
  return createHmac('sha256', Buffer.from(secret, 'base64')).update(rawBody).digest('base64');
}

interface TangoWebhookBody {
  eventId?: unknown;
  revision?: unknown;
  category?: unknown;
  eventType?: unknown;
  eventTypes?: unknown;
  eventOccurredAt?: unknown;
  eventData?: Record<string, unknown>;
}

function header(headers: ProviderWebhookInput['headers'], name: string): string | undefined {
  const value = headers[name] ?? Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];
  if (Array.isArray(value)) {
    if (value.length !== 1) throw new ProviderWebhookRejected(`Expected one ${name} header, got ${value.length}`);
    return value[0];
  }
  return value;
}

/** `"REWARD"` or `["REWARD"]` (the generic example shows arrays, the per-event examples strings). */
function names(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((entry): entry is string => typeof entry === 'string') : [];
}

const stringField = (data: Record<string, unknown> | undefined, ...keys: string[]): string | undefined => {
  for (const key of keys) {
    const value = data?.[key];
    if (typeof value === 'string' && value) return value;
  }
  return undefined;
};

export function readTangoWebhook(delivery: ProviderWebhookInput): ProviderWebhookEvent {
  if (!delivery.secret) throw new ProviderWebhookRejected('No Tango webhook secret is configured for this workspace');
  const signature = header(delivery.headers, TANGO_SIGNATURE_HEADER);
  if (!signature) throw new ProviderWebhookRejected(`The delivery has no ${TANGO_SIGNATURE_HEADER} header`);
  const expected = Buffer.from(tangoWebhookSignature(delivery.secret, delivery.rawBody), 'base64');
  const given = Buffer.from(signature.trim(), 'base64');
  // timingSafeEqual needs equal lengths; the length of an HMAC-SHA256 is public.
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw new ProviderWebhookRejected('The Tango webhook signature does not match');

  let body: TangoWebhookBody;
  try {
    body = JSON.parse(delivery.rawBody.toString('utf8')) as TangoWebhookBody;
  } catch {
    throw new ProviderWebhookRejected('The Tango webhook body is not JSON');
  }
  if (typeof body !== 'object' || body === null || typeof body.eventId !== 'string' || !body.eventId) {
    throw new ProviderWebhookRejected('The Tango webhook body has no eventId');
  }
  const occurredAt = typeof body.eventOccurredAt === 'string' ? Date.parse(body.eventOccurredAt) : Number.NaN;
  if (Number.isNaN(occurredAt)) throw new ProviderWebhookRejected('The Tango webhook body has no eventOccurredAt');
  const age = delivery.now.getTime() - occurredAt;
  if (age > TANGO_WEBHOOK_TOLERANCE_MS) throw new ProviderWebhookRejected(`The Tango event ${body.eventId} is stale (occurred ${body.eventOccurredAt})`);
  if (age < -FUTURE_SKEW_MS) throw new ProviderWebhookRejected(`The Tango event ${body.eventId} claims to occur in the future (${body.eventOccurredAt})`);

  return { eventId: body.eventId, report: reportOf(body) };
}

/**
 * What a verified event says about an incentive: a redemption (RewardStatus PARTIAL_REDEMPTION,
 * FULL_REDEMPTION, ACTIVATED) is a claim; an async order that FAILED is a failure. Everything else
 * (frozen, unfrozen, cancelled — the service's own doing —, catalog and account events) is null.
 */
function reportOf(body: TangoWebhookBody): ProviderWebhookEvent['report'] {
  const data = body.eventData;
  const externalRefId = stringField(data, 'externalRefID', 'externalRefId');
  const incentiveId = externalRefId ? incentiveIdFromTangoRef(externalRefId) : null;
  if (!incentiveId) return null;
  const reference = stringField(data, 'referenceOrderID', 'referenceOrderId');
  const status = stringField(data, 'status', 'rewardStatus')?.toUpperCase();
  const types = names(body.eventType).concat(names(body.eventTypes));
  let report: Omit<ProviderReport, 'workspaceId'> | null = null;
  if (types.includes('RewardStatus') && status && TANGO_CLAIMED_REWARD_STATUSES.has(status)) {
    report = { incentiveId, kind: 'claimed' };
  } else if (types.includes('AsyncOrderStatus') && status === 'FAILED') {
    report = { incentiveId, kind: 'failed', reason: 'Tango reports the order FAILED: the reward was not delivered' };
  }
  if (report && reference) report.reference = reference;
  return report;
}
