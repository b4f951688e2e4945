import { Webhook, WebhookVerificationError as StandardWebhooksError } from 'standardwebhooks';
import type { webhooks } from './generated/openapi.js';

/**
 * The body of any webhook the OpenAPI document describes (its `webhooks` section), or `unknown`
 * while it describes none: regenerating the SDK types (`npm run openapi`) types it.
 */
type DocumentedEvents = {
  [Name in keyof webhooks]: webhooks[Name] extends { post: { requestBody?: { content: { 'application/json': infer Event } } } } ? Event : never;
}[keyof webhooks];
export type WebhookEvent = [DocumentedEvents] extends [never] ? unknown : DocumentedEvents;

/** Why a delivery was refused. */
export type WebhookFailure =
  /** `webhook-id`, `webhook-timestamp` or `webhook-signature` is missing or unreadable. */
  | 'headers'
  /** `webhook-timestamp` is more than 5 minutes from now (a replay, or a clock that is off). */
  | 'timestamp'
  /** No signature matches any of the secrets: another sender, or a body that was changed. */
  | 'signature'
  /** Signed, but the body is not JSON. */
  | 'payload';

export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
  constructor(
    readonly reason: WebhookFailure,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A request's headers: a fetch `Headers`, or Node's `IncomingHttpHeaders` (lowercase names). */
export type WebhookHeaders = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

/** A request's body exactly as it arrived: parse it only after verifying, since any change breaks the signature. */
export type RawBody = string | Uint8Array;

/** Checks one delivery and answers its event, or throws a WebhookVerificationError. */
export type WebhookVerifier = <Event = WebhookEvent>(headers: WebhookHeaders, rawBody: RawBody) => Event;

const standardHeaders = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const;

/**
 * A verifier of Standard Webhooks deliveries (https://www.standardwebhooks.com: headers
 * `webhook-id`, `webhook-timestamp`, `webhook-signature`, HMAC-SHA256 over
 * `id.timestamp.body`), through the `standardwebhooks` library.
 *
 * `secrets` are the endpoint's signing secrets (`whsec_<base64>`): give the old and the new one
 * while rotating, and a delivery signed with either passes. A secret that cannot be read throws
 * here, at once, not on the first delivery.
 */
export function createWebhookVerifier(secrets: string | readonly string[]): WebhookVerifier {
  const list = typeof secrets === 'string' ? [secrets] : [...secrets];
  if (list.length === 0) throw new TypeError('createWebhookVerifier: give at least one secret');
  const verifiers = list.map((secret, index) => {
    try {
      return new Webhook(secret);
    } catch (error) {
      throw new TypeError(`webhook secret ${index + 1} of ${list.length} is not a signing secret (whsec_ then base64): ${(error as Error).message}`, { cause: error });
    }
  });

  return <Event = WebhookEvent>(headers: WebhookHeaders, rawBody: RawBody): Event => {
    const picked = pickHeaders(headers);
    const body = typeof rawBody === 'string' ? rawBody : new TextDecoder().decode(rawBody);
    for (const verifier of verifiers) {
      try {
        // Parsing is ours, after the signature: a signed body that is not JSON is a failure of its own.
        verifier.verify(body, picked, { jsonParse: false });
      } catch (error) {
        if (!(error instanceof StandardWebhooksError)) throw error;
        const reason = failureOf(error.message);
        // Only a signature mismatch depends on the secret: try the next one.
        if (reason === 'signature') continue;
        throw new WebhookVerificationError(reason, error.message, { cause: error });
      }
      try {
        return JSON.parse(body) as Event;
      } catch (error) {
        throw new WebhookVerificationError('payload', `The signed body is not JSON: ${(error as Error).message}`, { cause: error });
      }
    }
    throw new WebhookVerificationError('signature', 'No signature matches the secrets given');
  };
}

/**
 * Verifies one delivery: see createWebhookVerifier, which reads the secrets once for every
 * delivery to come.
 *
 * ```ts
 * const event = verifyWebhook([process.env.WEBHOOK_SECRET, process.env.WEBHOOK_SECRET_PREVIOUS], request.headers, rawBody);
 * ```
 */
export function verifyWebhook<Event = WebhookEvent>(secrets: string | readonly string[], headers: WebhookHeaders, rawBody: RawBody): Event {
  return createWebhookVerifier(secrets)<Event>(headers, rawBody);
}

function pickHeaders(headers: WebhookHeaders): Record<string, string> {
  const picked: Record<string, string> = {};
  for (const name of standardHeaders) {
    let value: string | readonly string[] | null | undefined;
    if (headers instanceof Headers) value = headers.get(name);
    else value = Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];
    // Several signatures may come as several header lines: the standard separates them by spaces.
    if (value !== undefined && value !== null) picked[name] = typeof value === 'string' ? value : value.join(' ');
  }
  return picked;
}

function failureOf(message: string): WebhookFailure {
  if (/timestamp too (old|new)/i.test(message)) return 'timestamp';
  if (/no matching signature/i.test(message)) return 'signature';
  // "Missing required headers", "Invalid Signature Headers" (an unreadable timestamp).
  return 'headers';
}
