import { notSentReasons } from './outbox.js';

/**
 * What the API says of a message that could not be rendered or delivered: a fixed vocabulary, the
 * same for every recipient (issue 32). The detail (LiquidJS's message with its line and column,
 * the SMTP server's answer, which often quotes the address) goes to the server's log only, with
 * the message's id: a template whose failing line depends on a character of the recipient's
 * email, or a bounce that names the address, would otherwise hand personal data to any key that
 * reads messages. `lastSmtpCode` and the event's `smtpCode` still give the server's reply code.
 */
export const deliveryErrors = {
  RENDER_FAILED: 'The template could not be rendered for this recipient',
  RECIPIENT_REFUSED: "The recipient's mail server refused the address",
  MESSAGE_REFUSED: 'The mail server refused the message',
  TEMPORARY: 'The mail server could not be reached, or asked to try again later',
  CREDENTIALS_REFUSED: "The mail server refused the service's SMTP credentials",
  /** What a stored text outside this vocabulary (written before it existed) reads as. */
  FAILED: 'The attempt failed',
} as const;

export type DeliveryError = keyof typeof deliveryErrors;

/** The text of a failure whose retries are spent. */
export const attemptsSpent = (error: DeliveryError, attempts: number) => `${deliveryErrors[error]} (no attempts left: ${attempts} made)`;

/** The UNSUBSCRIBED event's detail. */
export const unsubscribedDetail = 'The person followed the unsubscribe link and is opted out';

/** Every text a writer stores in `last_error` or an event's `detail` (the attempts suffix aside), not-sent reasons' codes included. */
export const storedDetailTexts: readonly string[] = [...Object.values(deliveryErrors), unsubscribedDetail, ...Object.keys(notSentReasons)];

const attemptsSuffix = / \(no attempts left: \d+ made\)$/;
const fixedTexts = new Set<string>([...Object.values(deliveryErrors), unsubscribedDetail]);

/**
 * A stored `last_error` or event `detail` as the API shows it: a text of the vocabulary (or a
 * not-sent reason's code) as stored, anything else as FAILED. The writers store the vocabulary
 * alone; this keeps a row written before it, or by a writer that forgot, from reaching a client.
 */
export function publicDetail(stored: string | null, notSentReasonCodes: readonly string[]): string | null {
  if (stored === null) return null;
  if (fixedTexts.has(stored.replace(attemptsSuffix, '')) || notSentReasonCodes.includes(stored)) return stored;
  return deliveryErrors.FAILED;
}
