import { type Static, Type } from '@sinclair/typebox';
import { IsoDateTime, ListQuery, paged } from '../../http/schemas.js';
import { rootFilterRef } from '../../search/schemas.js';
import { mailAttemptsMax, mailRetryDelaysSeconds } from './dispatcher.js';
import { notSentReasons, skipReasons } from './outbox.js';
import { deliveryErrors } from './delivery-errors.js';
import { MAX_PARTICIPANT_IDS, MAX_RECIPIENTS_PER_SEND } from './sending.js';

const Id = (description: string) => Type.String({ minLength: 1, maxLength: 100, description });

export const messageStatuses = ['QUEUED', 'SENT', 'FAILED', 'NOT_SENT'] as const;
const literals = <T extends string>(values: readonly T[], description?: string) => Type.Unsafe<T>({ type: 'string', enum: [...values], ...(description ? { description } : {}) });
const MessageStatusValue = literals(
  messageStatuses,

      'QUEUED: waiting to be sent, or to be tried again after a temporary failure; SENT: the SMTP server accepted it; ' +
      'FAILED: refused for good (a 5xx), or every attempt failed; NOT_SENT: recorded but never handed to SMTP (`notSentReason` says why: SMTP not configured, or the person opted out, was deleted or became unreachable before it went).',
);

export const retryScheduleNote =
  `A temporary failure (an SMTP 4xx, no connection, a timeout, refused credentials) is tried again after ${mailRetryDelaysSeconds.map((s) => (s < 3600 ? `${s / 60} min` : `${s / 3600} h`)).join(', ')} ` +
  `(each ±10% at random): ${mailAttemptsMax} attempts in all, then FAILED. A 5xx refusal is final at once; a 5xx refusal of the recipient address (at RCPT TO: 550 user unknown, …) ` +
  'also marks the person UNREACHABLE (one such hard bounce is enough), and unreachable people are not sent to again.';

export const SendMessagesBody = Type.Object(
  {
    templateId: Id('The message template to send: rendered for each recipient when the message is sent.'),
    participantIds: Type.Optional(
      Type.Array(Id('A participant of this study.'), {
        minItems: 1,
        maxItems: MAX_PARTICIPANT_IDS,
        description: `The participants to send to (1–${MAX_PARTICIPANT_IDS}; one listed twice gets one message). An unknown one is a 404 naming its index. Give this or \`filter\`.`,
      }),
    ),
    filter: Type.Optional(
      rootFilterRef({
        description: `The participants to send to, chosen as POST /studies/{studyId}/participants/search chooses them (its sort is ignored): at most ${MAX_RECIPIENTS_PER_SEND}; a filter matching more is a 400. \`{"filters": []}\` chooses every participant. Give this or \`participantIds\`.`,
      }),
    ),
  },
  {
    additionalProperties: false,
    examples: [
      { templateId: 'mtp_01JD0000000000000000000000', participantIds: ['ptc_01JD0000000000000000000000'] },
      { templateId: 'mtp_01JD0000000000000000000000', filter: { filters: [{ property: { propertyGroup: 'PARTICIPANT', propertyName: 'STATUS' }, comparison: 'IS_ANY_OF', value: ['NOT_STARTED'] }] } },
    ],
  },
);
export type SendMessagesBody = Static<typeof SendMessagesBody>;

const Skipped = Type.Object(
  Object.fromEntries(skipReasons.map((reason) => [reason, Type.Integer({ minimum: 0 })])) as Record<(typeof skipReasons)[number], ReturnType<typeof Type.Integer>>,
  {
    description:
      'Chosen participants who get no message, by why: OPTED_OUT (the person opted out), DELETED (the person was deleted), UNREACHABLE (their address was refused for good before), NO_EMAIL (no address). They are never sent to.',
  },
);

export const SendMessagesResult = Type.Object(
  {
    recipients: Type.Integer({ description: 'Participants chosen (by id or by the filter).' }),
    queued: Type.Integer({ description: 'Messages queued for sending: one per chosen participant who may be sent to.' }),
    notSent: Type.Integer({ description: 'Messages recorded NOT_SENT because SMTP is not configured (then `queued` is 0).' }),
    notSentReason: Type.Union([Type.String(), Type.Null()], { description: `"${notSentReasons.SMTP_NOT_CONFIGURED}" when SMTP is not configured; null otherwise.` }),
    skipped: Skipped,
  },
  {
    title: 'SendMessagesResult',
    examples: [{ recipients: 120, queued: 117, notSent: 0, notSentReason: null, skipped: { OPTED_OUT: 2, DELETED: 0, UNREACHABLE: 1, NO_EMAIL: 0 } }],
  },
);

const deliveryVocabulary = Object.values(deliveryErrors)
  .map((text) => `"${text}"`)
  .join(', ');

const MessageEvent = Type.Object({
  type: literals(['SENT', 'RETRYING', 'FAILED', 'NOT_SENT', 'UNSUBSCRIBED'] as const),
  occurredAt: IsoDateTime(),
  smtpCode: Type.Union([Type.Integer(), Type.Null()]),
  detail: Type.Union([Type.String(), Type.Null()], { description: `A fixed text, the same for every recipient: for a failed attempt one of ${deliveryVocabulary}; for NOT_SENT the reason's code. The SMTP server's answer and a template's rendering error go to the server's log only (they can quote the address or depend on the person's values).` }),
});

const messageFields = {
  messageId: Type.String(),
  personId: Type.String(),
  studyId: Type.Union([Type.String(), Type.Null()]),
  participantId: Type.Union([Type.String(), Type.Null()]),
  templateId: Type.Union([Type.String(), Type.Null()], { description: 'The template it was made from (it may have been deleted since); null for the service\'s own message (origin REMINDER), written from its catalogue in the study\'s language.' }),
  templateName: Type.String({ description: "The template's name when the message was requested; for a REMINDER, `Session reminder`." }),
  origin: literals(
    ['SEND', 'INVITED', 'SCREENER_SENT', 'REMINDER'] as const,
    'SEND: POST /studies/{studyId}/messages; INVITED or SCREENER_SENT: sent with that participant move (PATCH … `sendMessage`); REMINDER: a booked session\'s reminder, sent by the service at the study\'s reminder offsets (docs/api/scheduling.md).',
  ),
  status: MessageStatusValue,
  notSentReason: Type.Union([Type.String(), Type.Null()]),
  attempts: Type.Integer({ description: 'SMTP attempts made.' }),
  nextAttemptAt: Type.Union([IsoDateTime(), Type.Null()], { description: 'When a QUEUED message is due (its first attempt, or its retry).' }),
  lastError: Type.Union([Type.String(), Type.Null()], { description: `Why the last attempt failed, in a fixed vocabulary (the same text for every recipient; the server's log has the detail): ${deliveryVocabulary}, possibly followed by " (no attempts left: ${mailAttemptsMax} made)".` }),
  lastSmtpCode: Type.Union([Type.Integer(), Type.Null()]),
  queuedAt: IsoDateTime('When it was requested.'),
  sentAt: Type.Union([IsoDateTime(), Type.Null()], { description: 'When the SMTP server accepted it (the attempt that did).' }),
  failedAt: Type.Union([IsoDateTime(), Type.Null()]),
  unsubscribedAt: Type.Union([IsoDateTime(), Type.Null()], { description: "When the person followed this message's unsubscribe link." }),
  countsAsContact: Type.Boolean({ description: 'Whether delivering it counts as a contact (LAST_CONTACT_DATE, TOTAL_NUMBER_OF_CONTACT*): false for a message sent with a move, which is the contact.' }),
  recipientEmail: Type.Union([Type.String(), Type.Null()], { description: 'The address it was sent to (set when sent; masked without the personal-data right).' }),
};

const exampleMessage = {
  messageId: 'eml_01JD0000000000000000000000',
  personId: 'per_01JD0000000000000000000000',
  studyId: 'stu_01JD0000000000000000000000',
  participantId: 'ptc_01JD0000000000000000000000',
  templateId: 'mtp_01JD0000000000000000000000',
  templateName: 'Interview invitation',
  origin: 'SEND',
  status: 'SENT',
  notSentReason: null,
  attempts: 1,
  nextAttemptAt: null,
  lastError: null,
  lastSmtpCode: 250,
  queuedAt: '2026-11-28T10:00:00.000Z',
  sentAt: '2026-11-28T10:00:01.000Z',
  failedAt: null,
  unsubscribedAt: null,
  countsAsContact: true,
  recipientEmail: 'ada@example.org',
};

export const Message = Type.Object(messageFields, {
  $id: 'Message',
  title: 'Message',
  description: 'A message sent (or to be sent) to one person, and what became of it.',
  examples: [exampleMessage],
});

export const MessageDetail = Type.Object(
  {
    ...messageFields,
    subject: Type.Union([Type.String(), Type.Null()], { description: 'As sent (rendered when it was sent); null until then. Masked ("***") without the personal-data right.' }),
    textBody: Type.Union([Type.String(), Type.Null()], { description: 'As sent; null until then. Masked ("***") without the personal-data right.' }),
    htmlBody: Type.Union([Type.String(), Type.Null()], { description: 'As sent; null until then or for a text-only template. Masked ("***") without the personal-data right.' }),
    events: Type.Array(MessageEvent, { description: 'The history: each attempt, and the unsubscribe, oldest first.' }),
  },
  {
    title: 'MessageDetail',
    examples: [{ ...exampleMessage, subject: 'Join our study', textBody: 'Hi Ada, …', htmlBody: null, events: [{ type: 'SENT', occurredAt: '2026-11-28T10:00:01.000Z', smtpCode: 250, detail: null }] }],
  },
);

export const MessageList = paged(Type.Ref(Message), 'MessageList', exampleMessage);

export const ListMessagesQuery = Type.Object(
  {
    ...ListQuery.properties,
    studyId: Type.Optional(Id('Only messages about this study.')),
    personId: Type.Optional(Id('Only messages to this person.')),
    status: Type.Optional(MessageStatusValue),
  },
  { additionalProperties: false },
);

export const MessageParams = Type.Object({ messageId: Id('The message.') });
export const StudyParams = Type.Object({ studyId: Id('The study.') });
export const UnsubscribeParams = Type.Object({ token: Type.String({ minLength: 1, maxLength: 200, description: 'The signed token of the link.' }) });

export const UnsubscribeBody = Type.Object(
  { 'List-Unsubscribe': Type.Optional(Type.Literal('One-Click', { description: 'RFC 8058: what a mail client posts.' })) },
  {
    additionalProperties: false,
    description: 'RFC 8058: `List-Unsubscribe=One-Click`, form-encoded (or multipart, or JSON); an empty body (a form button) does the same.',
    examples: [{ 'List-Unsubscribe': 'One-Click' }],
  },
);

export const sendingSchemas = [Message];
