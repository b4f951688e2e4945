import { type Static, Type } from '@sinclair/typebox';
import { IsoDateTime, ListQuery, paged, Text } from '../../http/schemas.js';
import { eventCatalogue, type EventType, subscribableEventTypes } from './events.js';
import { attemptsMax, failingDaysBeforeDisabling, retryDelaysSeconds } from './schedule.js';

const exampleEndpoint = {
  endpointId: 'whe_01JD0000000000000000000000',
  url: 'https://hooks.example.com/recruit',
  description: 'Scheduling tool',
  eventTypes: ['participant.status_changed', 'study.status_changed'],
  enabled: true,
  disabledReason: null,
  previousSecretExpiresAt: null,
  createdAt: '2026-11-22T10:00:00.000Z',
  updatedAt: '2026-11-22T10:00:00.000Z',
};
const exampleSecret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw6G8Xh6QuXlI=';

// A string enum rather than a union of literals: Ajv reports a bad value of an anyOf once per
// branch, which would give the client one error item per event type instead of one.
export const EventTypeName = Type.Unsafe<Exclude<EventType, 'webhook.test'>>({
  type: 'string',
  enum: [...subscribableEventTypes],
  description: 'An event type (see GET /webhook-event-types and the webhooks section of this document).',
});

export const scheduleDescription =
  `Delivery is at least once, by the Standard Webhooks specification: headers \`webhook-id\` (the message id, the same on every retry: deduplicate on it), ` +
  '`webhook-timestamp` (seconds since the epoch, of this attempt) and `webhook-signature` (`v1,<base64 HMAC-SHA256 of id.timestamp.body>`, ' +
  'two space-separated signatures while a rotated-out secret is still valid). Answer 2xx within 10 s; anything else, a redirect, or no answer is a failure. ' +
  `A failed delivery is retried after ${retryDelaysSeconds.map((seconds) => (seconds < 60 ? `${seconds} s` : seconds < 3600 ? `${seconds / 60} min` : `${seconds / 3600} h`)).join(', ')} ` +
  `(each ±10% at random): ${attemptsMax} attempts over about 3 days, then the delivery is FAILED. An endpoint whose every attempt has failed for ${failingDaysBeforeDisabling} days is disabled, ` +
  'and `disabledReason` says since when and why; enabling it again (PATCH `enabled: true`) resumes its pending deliveries.';

export const WebhookEndpoint = Type.Object(
  {
    endpointId: Type.String(),
    url: Type.String({ description: 'Where deliveries are POSTed: https, and not a private, loopback or link-local address.' }),
    description: Type.String({ description: 'Empty when none was given.' }),
    eventTypes: Type.Array(EventTypeName, { description: 'The event types delivered; empty: every type, including types added later.' }),
    enabled: Type.Boolean({ description: 'A disabled endpoint is sent nothing; events meanwhile can be replayed to it.' }),
    disabledReason: Type.Union([Type.String(), Type.Null()], { description: 'Why the service disabled the endpoint; null when enabled, or disabled by hand.' }),
    previousSecretExpiresAt: Type.Union([IsoDateTime(), Type.Null()], { description: 'Until when the secret replaced by the last rotation still signs deliveries, beside the new one.' }),
    createdAt: IsoDateTime(),
    updatedAt: IsoDateTime(),
  },
  { $id: 'WebhookEndpoint', title: 'WebhookEndpoint', description: `An address the workspace's events are pushed to. ${scheduleDescription}`, examples: [exampleEndpoint] },
);
export type WebhookEndpoint = Static<typeof WebhookEndpoint>;

export const WebhookEndpointWithSecret = Type.Object(
  {
    ...WebhookEndpoint.properties,
    secret: Type.String({ description: 'The signing secret (`whsec_…`). Shown only here, once: store it now. Verify deliveries with any Standard Webhooks library.' }),
  },
  { title: 'WebhookEndpointWithSecret', examples: [{ ...exampleEndpoint, secret: exampleSecret }] },
);

export const WebhookEndpointList = paged(Type.Ref(WebhookEndpoint), 'WebhookEndpointList', exampleEndpoint);

const Url = Type.String({ minLength: 1, maxLength: 2000, description: 'An https URL; its host must resolve to public addresses only.', examples: ['https://hooks.example.com/recruit'] });
const EventTypes = Type.Array(EventTypeName, { maxItems: 50, uniqueItems: true, description: 'Event types to deliver; empty or left out: every type.' });

export const CreateWebhookEndpointBody = Type.Object(
  {
    url: Url,
    description: Type.Optional(Text({ maxLength: 500 })),
    eventTypes: Type.Optional(EventTypes),
    enabled: Type.Optional(Type.Boolean({ default: true })),
  },
  { additionalProperties: false, examples: [{ url: 'https://hooks.example.com/recruit', description: 'Scheduling tool', eventTypes: ['participant.status_changed'] }] },
);
export type CreateWebhookEndpointBody = Static<typeof CreateWebhookEndpointBody>;

export const UpdateWebhookEndpointBody = Type.Object(
  {
    url: Type.Optional(Url),
    description: Type.Optional(Text({ maxLength: 500 })),
    eventTypes: Type.Optional(EventTypes),
    enabled: Type.Optional(Type.Boolean({ description: 'true also clears disabledReason and resumes pending deliveries.' })),
  },
  { additionalProperties: false, minProperties: 1, examples: [{ enabled: true }] },
);
export type UpdateWebhookEndpointBody = Static<typeof UpdateWebhookEndpointBody>;

export const RotatedSecret = Type.Object(
  {
    secret: Type.String({ description: 'The new signing secret, shown only here.' }),
    previousSecretExpiresAt: IsoDateTime('Until then deliveries carry a signature by the previous secret too.'),
  },
  { title: 'RotatedSecret', examples: [{ secret: exampleSecret, previousSecretExpiresAt: '2026-11-23T10:00:00.000Z' }] },
);

export const WebhookAttempt = Type.Object(
  {
    attemptId: Type.String(),
    endpointId: Type.String(),
    messageId: Type.String(),
    trigger: Type.Union([Type.Literal('SCHEDULED'), Type.Literal('MANUAL'), Type.Literal('TEST')], {
      description: 'SCHEDULED: the delivery or its retries; MANUAL: re-sent or replayed by hand; TEST: a test send.',
    }),
    attemptedAt: IsoDateTime(),
    durationMs: Type.Integer(),
    succeeded: Type.Boolean({ description: 'The endpoint answered 2xx.' }),
    responseStatus: Type.Union([Type.Integer(), Type.Null()], { description: 'Null when no answer came (timeout, refused connection, refused address).' }),
    responseBody: Type.Union([Type.String(), Type.Null()], { description: 'The first 1 KB of the answer.' }),
    error: Type.Union([Type.String(), Type.Null()], { description: 'Why the attempt failed; null when it succeeded.' }),
  },
  {
    $id: 'WebhookAttempt',
    title: 'WebhookAttempt',
    examples: [
      {
        attemptId: 'wha_01JD0000000000000000000000',
        endpointId: exampleEndpoint.endpointId,
        messageId: 'msg_01JD0000000000000000000000',
        trigger: 'SCHEDULED',
        attemptedAt: '2026-11-22T10:00:00.120Z',
        durationMs: 48,
        succeeded: false,
        responseStatus: 503,
        responseBody: 'upstream unavailable',
        error: 'HTTP 503',
      },
    ],
  },
);
export const WebhookAttemptList = paged(Type.Ref(WebhookAttempt), 'WebhookAttemptList', WebhookAttempt.examples?.[0]);

export const AttemptsQuery = Type.Object(
  { ...ListQuery.properties, messageId: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Only the attempts of this message.' })) },
  { additionalProperties: false },
);

const exampleMessage = {
  messageId: 'msg_01JD0000000000000000000000',
  eventType: 'study.status_changed',
  occurredAt: '2026-11-22T10:00:00.000Z',
  payload: { type: 'study.status_changed', timestamp: '2026-11-22T10:00:00.000Z', data: { studyId: 'stu_01JD0000000000000000000000', from: 'DRAFT', to: 'ACTIVE' } },
};

export const WebhookMessage = Type.Object(
  {
    messageId: Type.String({ description: 'The `webhook-id` of its deliveries.' }),
    eventType: Type.String(),
    occurredAt: IsoDateTime(),
    payload: Type.Object(
      { type: Type.String(), timestamp: IsoDateTime(), data: Type.Object({}, { additionalProperties: true }) },
      { description: 'The body every delivery of this message carries: the same JSON, keys in this order.' },
    ),
  },
  { $id: 'WebhookMessage', title: 'WebhookMessage', description: 'An event in the outbox. Messages are kept 30 days, whether or not an endpoint listens.', examples: [exampleMessage] },
);
export const WebhookMessageList = paged(Type.Ref(WebhookMessage), 'WebhookMessageList', exampleMessage);

export const MessagesQuery = Type.Object(
  {
    ...ListQuery.properties,
    eventType: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    since: Type.Optional(IsoDateTime('Only messages of events at or after this time.')),
  },
  { additionalProperties: false },
);

export const ReplayBody = Type.Object(
  {
    since: IsoDateTime('Every message of an event at or after this time (within the last 30 days)…'),
    until: Type.Optional(IsoDateTime('…and before this time (default: now).')),
    eventTypes: Type.Optional(Type.Array(EventTypeName, { maxItems: 50, uniqueItems: true, description: "Only these types; default: the endpoint's subscription." })),
  },
  { additionalProperties: false, examples: [{ since: '2026-11-21T00:00:00.000Z' }] },
);
export type ReplayBody = Static<typeof ReplayBody>;

export const ReplayResult = Type.Object(
  { queued: Type.Integer({ description: 'Messages queued for delivery to the endpoint (again, for those it had had).' }) },
  { title: 'ReplayResult', examples: [{ queued: 42 }] },
);

export const QueuedDelivery = Type.Object(
  {
    endpointId: Type.String(),
    messageId: Type.String(),
    state: Type.Literal('PENDING'),
  },
  { title: 'QueuedDelivery', examples: [{ endpointId: exampleEndpoint.endpointId, messageId: exampleMessage.messageId, state: 'PENDING' }] },
);

export const EventTypeDescription = Type.Object(
  { type: Type.String(), description: Type.String(), dataSchema: Type.Object({}, { additionalProperties: true, description: "The JSON Schema of the payload's `data`." }) },
  { title: 'EventTypeDescription' },
);

export const webhookSchemas = [WebhookEndpoint, WebhookAttempt, WebhookMessage];

/** The OpenAPI `webhooks` section: what each event's delivery carries. */
export function webhookDocumentation(): Record<string, unknown> {
  const headers = [
    { name: 'webhook-id', in: 'header', required: true, schema: { type: 'string' }, description: 'The message id: the same on each retry; deduplicate on it.' },
    { name: 'webhook-timestamp', in: 'header', required: true, schema: { type: 'string' }, description: 'Seconds since the epoch when this attempt was made.' },
    { name: 'webhook-signature', in: 'header', required: true, schema: { type: 'string' }, description: '`v1,<base64 HMAC-SHA256>` signatures, space-separated.' },
  ];
  return Object.fromEntries(
    (Object.keys(eventCatalogue) as EventType[]).map((type) => {
      const data = eventCatalogue[type];
      return [
        type,
        {
          post: {
            operationId: `webhook_${type.replace('.', '_')}`,
            summary: type,
            description: `${data.description ?? ''}\n\n${scheduleDescription}`,
            tags: ['Webhooks'],
            security: [],
            parameters: headers,
            requestBody: {
              required: true,
              content: {
                'application/json': {
                  schema: {
                    type: 'object',
                    required: ['type', 'timestamp', 'data'],
                    properties: { type: { const: type }, timestamp: { type: 'string', format: 'date-time', description: 'When the change was made.' }, data },
                  },
                },
              },
            },
            responses: { '200': { description: 'Received: any 2xx. Anything else is retried.' } },
          },
        },
      ];
    }),
  );
}
