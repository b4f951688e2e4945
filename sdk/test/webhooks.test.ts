import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { createWebhookVerifier, verifyWebhook, WebhookVerificationError } from '../src/index.js';

const newSecret = () => `whsec_${randomBytes(24).toString('base64')}`;

/** A delivery as a Standard Webhooks sender makes it, signed with standardwebhooks' own Webhook.sign. */
function deliver(secret: string, payload: string, options: { id?: string; at?: Date } = {}) {
  const id = options.id ?? `msg_${randomBytes(6).toString('hex')}`;
  const at = options.at ?? new Date();
  return {
    headers: {
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': new Webhook(secret).sign(id, at, payload),
    },
    body: payload,
  };
}

const event = { type: 'participant.status_changed', data: { participantId: 'ptc_1', from: 'INVITED', to: 'SCHEDULED' } };
const payload = JSON.stringify(event);

function failureOf(run: () => unknown): WebhookVerificationError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(WebhookVerificationError);
    return error as WebhookVerificationError;
  }
  throw new Error('the delivery was accepted');
}

describe('verifyWebhook', () => {
  it('answers the parsed event of a delivery signed with the secret', () => {
    const secret = newSecret();
    const { headers, body } = deliver(secret, payload);
    expect(verifyWebhook(secret, headers, body)).toEqual(event);
  });

  it('reads fetch Headers, Node header objects (any case, repeated lines) and a raw Buffer or Uint8Array body', () => {
    const secret = newSecret();
    const { headers, body } = deliver(secret, payload);
    expect(verifyWebhook(secret, new Headers(headers), new TextEncoder().encode(body))).toEqual(event);
    expect(verifyWebhook(secret, { 'Webhook-Id': headers['webhook-id'], 'WEBHOOK-TIMESTAMP': headers['webhook-timestamp'], 'webhook-signature': ['v1,bm90LWl0', headers['webhook-signature']] }, Buffer.from(body))).toEqual(event);
  });

  it('accepts any of several secrets, so a receiver holds the old and the new one while rotating', () => {
    const [previous, current, unrelated] = [newSecret(), newSecret(), newSecret()];
    const verify = createWebhookVerifier([current, previous]);
    const signedBefore = deliver(previous, payload);
    const signedAfter = deliver(current, payload);
    expect(verify(signedBefore.headers, signedBefore.body)).toEqual(event);
    expect(verify(signedAfter.headers, signedAfter.body)).toEqual(event);
    const stranger = deliver(unrelated, payload);
    expect(failureOf(() => verify(stranger.headers, stranger.body)).reason).toBe('signature');
  });

  it('refuses a body changed after signing, even by one character', () => {
    const secret = newSecret();
    const { headers } = deliver(secret, payload);
    const tampered = payload.replace('SCHEDULED', 'COMPLETED');
    const failure = failureOf(() => verifyWebhook(secret, headers, tampered));
    expect(failure.reason).toBe('signature');
    expect(failure.name).toBe('WebhookVerificationError');
    // The same body re-serialized (another spacing) is another body too: verify the raw bytes.
    expect(failureOf(() => verifyWebhook(secret, headers, JSON.stringify(event, null, 2))).reason).toBe('signature');
  });

  it('refuses a delivery whose timestamp is more than 5 minutes old (a replay) or ahead', () => {
    const secret = newSecret();
    const old = deliver(secret, payload, { at: new Date(Date.now() - 10 * 60_000) });
    expect(failureOf(() => verifyWebhook(secret, old.headers, old.body)).reason).toBe('timestamp');
    const ahead = deliver(secret, payload, { at: new Date(Date.now() + 10 * 60_000) });
    expect(failureOf(() => verifyWebhook(secret, ahead.headers, ahead.body)).reason).toBe('timestamp');
    // Moving the timestamp header forward to look fresh breaks the signature, which covers it.
    const moved = { ...old.headers, 'webhook-timestamp': String(Math.floor(Date.now() / 1000)) };
    expect(failureOf(() => verifyWebhook(secret, moved, old.body)).reason).toBe('signature');
  });

  it('refuses missing headers, and a signed body that is not JSON', () => {
    const secret = newSecret();
    const { headers, body } = deliver(secret, payload);
    const { 'webhook-signature': _signature, ...unsigned } = headers;
    expect(failureOf(() => verifyWebhook(secret, unsigned, body)).reason).toBe('headers');
    expect(failureOf(() => verifyWebhook(secret, { ...headers, 'webhook-timestamp': 'yesterday' }, body)).reason).toBe('headers');
    const notJson = deliver(secret, 'not json');
    expect(failureOf(() => verifyWebhook(secret, notJson.headers, notJson.body)).reason).toBe('payload');
  });

  it('refuses at once a secret it cannot read, or none at all', () => {
    expect(() => createWebhookVerifier([])).toThrow(TypeError);
    expect(() => createWebhookVerifier([newSecret(), 'whsec_not base64!'])).toThrow(/webhook secret 2 of 2/);
  });
});
