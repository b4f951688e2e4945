import { performance } from 'node:perf_hooks';
import { Webhook } from 'standardwebhooks';
import type { Agent } from 'undici';
import { guardedLookup, literalAddressRefusal, type TargetPolicy } from './targets.js';

/** What one attempt found: recorded as a webhook_attempts row. */
export interface AttemptResult {
  succeeded: boolean;
  durationMs: number;
  responseStatus: number | null;
  /** The first 1 KB of the response body. */
  responseBody: string | null;
  error: string | null;
}

export interface OutgoingMessage {
  messageId: string;
  /** The JSON body, signed and sent as is. */
  body: string;
}

const RESPONSE_BODY_BYTES_MAX = 1024;

function describe(error: unknown, timeoutMs: number): string {
  if (error instanceof Error) {
    if (error.name === 'TimeoutError' || error.name === 'AbortError' || /timeout/i.test(error.name)) return `No response within ${timeoutMs / 1000} s`;
    const code = (error as NodeJS.ErrnoException).code;
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
    return `${error.message}${code !== undefined && !error.message.includes(code) ? ` (${code})` : ''}${cause}`.slice(0, 1000);
  }
  return String(error).slice(0, 1000);
}

/**
 * Sends messages by the Standard Webhooks specification: `webhook-id`, `webhook-timestamp` (the
 * time of this attempt, so a receiver's replay window holds for retries too) and
 * `webhook-signature`, signed by the `standardwebhooks` library with every secret the endpoint
 * holds (two while a rotated-out secret is still valid). One attempt is one POST: no redirect is
 * followed, and it fails after `timeoutMs`. Only a 2xx answer is a success.
 */
export class WebhookSender {
  /**
   * undici (about 6 MiB resident) loads with the first send: an instance whose workspaces have no
   * endpoint never carries it. A CommonJS package: only `default` (its `module.exports`) holds
   * under Node and in the bundle alike, where esbuild's chunk exports nothing else.
   */
  private client: Promise<{ agent: Agent; request: typeof import('undici').request }> | undefined;

  constructor(
    private readonly policy: TargetPolicy,
    private readonly timeoutMs: number,
  ) {}

  private http() {
    this.client ??= import('undici').then(({ default: { Agent, request } }) => ({
      request,
      agent: new Agent({
        connect: { timeout: this.timeoutMs, ...(this.policy.allowPrivateTargets ? {} : { lookup: guardedLookup(this.policy.resolve) }) },
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
        keepAliveTimeout: 4_000,
        connections: 64,
      }),
    }));
    return this.client;
  }

  async send(url: string, secrets: readonly string[], message: OutgoingMessage): Promise<AttemptResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const failure = (error: string, responseStatus: number | null = null, responseBody: string | null = null): AttemptResult => ({
      succeeded: false,
      durationMs: elapsed(),
      responseStatus,
      responseBody,
      error,
    });
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return failure('The endpoint URL is not valid');
    }
    const refusal = await literalAddressRefusal(target, this.policy);
    if (refusal !== undefined) return failure(refusal);
    const { agent, request } = await this.http();
    const sentAt = new Date();
    const signature = secrets.map((secret) => new Webhook(secret).sign(message.messageId, sentAt, message.body)).join(' ');
    try {
      const response = await request(target, {
        method: 'POST',
        dispatcher: agent,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'recruit-ops-webhooks/1',
          'webhook-id': message.messageId,
          'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
          'webhook-signature': signature,
        },
        body: message.body,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      const responseBody = await readPrefix(response.body);
      const status = response.statusCode;
      if (status >= 200 && status < 300) return { succeeded: true, durationMs: elapsed(), responseStatus: status, responseBody, error: null };
      if (status >= 300 && status < 400) return failure(`Redirects are not followed (HTTP ${status}${response.headers.location ? ` to ${String(response.headers.location)}` : ''})`, status, responseBody);
      return failure(`HTTP ${status}`, status, responseBody);
    } catch (error) {
      return failure(describe(error, this.timeoutMs));
    }
  }

  async close(): Promise<void> {
    if (this.client) await (await this.client).agent.close();
  }
}

/** The body's first bytes as text; the rest is not read (the connection is dropped instead). */
async function readPrefix(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<string> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    length += chunk.length;
    if (length >= RESPONSE_BODY_BYTES_MAX) {
      body.destroy();
      break;
    }
  }
  // PostgreSQL text refuses NUL; the prefix is for people to read.
  return Buffer.concat(chunks).subarray(0, RESPONSE_BODY_BYTES_MAX).toString('utf8').replaceAll('\u0000', '');
}
