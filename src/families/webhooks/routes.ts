import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import { requestContext, type ServiceDeps } from '../../context.js';
import { cursorScope, listPage } from '../../http/pagination.js';
import { errorResponse, ListQuery } from '../../http/schemas.js';
import type { Webhooks } from './runtime.js';
import {
  AttemptsQuery,
  CreateWebhookEndpointBody,
  EventTypeDescription,
  MessagesQuery,
  QueuedDelivery,
  ReplayBody,
  ReplayResult,
  RotatedSecret,
  UpdateWebhookEndpointBody,
  WebhookAttempt,
  WebhookAttemptList,
  WebhookEndpoint,
  WebhookEndpointList,
  WebhookEndpointWithSecret,
  WebhookMessage,
  WebhookMessageList,
} from './schemas.js';
import * as service from './service.js';

const tags = ['Webhooks'];
const invalid = errorResponse('Invalid input; `path` names the offending field or parameter.');
const endpointNotFound = errorResponse("Webhook endpoint not found (also another workspace's).");
const EndpointParams = Type.Object({ endpointId: Type.String({ minLength: 1, maxLength: 100 }) });

export const webhooksRoutes: FastifyPluginAsyncTypebox<{ deps: ServiceDeps; webhooks: Webhooks }> = async (app, { deps, webhooks }) => {
  const context = (request: FastifyRequest) => requestContext(deps, request);

  app.post(
    '/webhook-endpoints',
    {
      config: { right: 'webhooks:write' },
      schema: {
        operationId: 'createWebhookEndpoint',
        summary: 'Create a webhook endpoint',
        description:
          "Registers an https URL to push the workspace's events to. The answer holds the signing secret, shown this once. " +
          'The URL is refused (400 on `url`) when it is not https, carries credentials, or its host is or resolves to a loopback, private, ' +
          'link-local or cloud-metadata address; the same check runs again on every delivery, on the address connected to.',
        tags,
        body: CreateWebhookEndpointBody,
        response: { 201: WebhookEndpointWithSecret, 400: invalid },
      },
    },
    async (request, reply) => reply.code(201).send(await service.createEndpoint(context(request), webhooks, request.body)),
  );

  app.get(
    '/webhook-endpoints',
    {
      config: { right: 'webhooks:read' },
      schema: {
        operationId: 'listWebhookEndpoints',
        summary: 'List webhook endpoints',
        description: 'In the order they were made, keyset-paged. Secrets are never shown again.',
        tags,
        querystring: ListQuery,
        response: { 200: WebhookEndpointList, 400: invalid },
      },
    },
    async (request) =>
      listPage(deps.cursors, cursorScope(context(request).workspaceId, 'webhook-endpoints'), request.query, (endpoint) => endpoint.endpointId, (after, size) =>
        service.listEndpoints(context(request), after, size),
      ),
  );

  app.get(
    '/webhook-endpoints/:endpointId',
    {
      config: { right: 'webhooks:read' },
      schema: {
        operationId: 'getWebhookEndpoint',
        summary: 'Read a webhook endpoint',
        tags,
        params: EndpointParams,
        response: { 200: Type.Ref(WebhookEndpoint), 400: invalid, 404: endpointNotFound },
      },
    },
    async (request) => service.getEndpoint(context(request), request.params.endpointId),
  );

  app.patch(
    '/webhook-endpoints/:endpointId',
    {
      config: { right: 'webhooks:write' },
      schema: {
        operationId: 'updateWebhookEndpoint',
        summary: 'Update a webhook endpoint',
        description: 'Changes the URL (checked as on create), the description, the event types, or whether it is enabled. Enabling clears `disabledReason` and resumes pending deliveries.',
        tags,
        params: EndpointParams,
        body: UpdateWebhookEndpointBody,
        response: { 200: Type.Ref(WebhookEndpoint), 400: invalid, 404: endpointNotFound },
      },
    },
    async (request) => service.updateEndpoint(context(request), webhooks, request.params.endpointId, request.body),
  );

  app.delete(
    '/webhook-endpoints/:endpointId',
    {
      config: { right: 'webhooks:write' },
      schema: {
        operationId: 'deleteWebhookEndpoint',
        summary: 'Delete a webhook endpoint',
        description: 'Its pending deliveries and its attempts go with it; the messages stay (other endpoints, replays).',
        tags,
        params: EndpointParams,
        response: { 200: Type.Object({ endpointId: Type.String() }, { examples: [{ endpointId: 'whe_01JD0000000000000000000000' }] }), 400: invalid, 404: endpointNotFound },
      },
    },
    async (request) => {
      await service.deleteEndpoint(context(request), request.params.endpointId);
      return { endpointId: request.params.endpointId };
    },
  );

  app.post(
    '/webhook-endpoints/:endpointId/rotate-secret',
    {
      config: { right: 'webhooks:write' },
      schema: {
        operationId: 'rotateWebhookSecret',
        summary: "Rotate an endpoint's signing secret",
        description: 'Answers a new secret, shown this once. For 24 hours each delivery carries two signatures, by the new secret and the previous one, so a receiver can switch at its own pace.',
        tags,
        params: EndpointParams,
        response: { 200: RotatedSecret, 400: invalid, 404: endpointNotFound },
      },
    },
    async (request) => service.rotateSecret(context(request), webhooks, request.params.endpointId),
  );

  app.post(
    '/webhook-endpoints/:endpointId/test',
    {
      config: { right: 'webhooks:write' },
      schema: {
        operationId: 'testWebhookEndpoint',
        summary: 'Send a test event',
        description: 'Sends a signed `webhook.test` event to the endpoint now, once (enabled or not), and answers the attempt: status, time, and the first 1 KB of the answer.',
        tags,
        params: EndpointParams,
        response: { 200: Type.Ref(WebhookAttempt), 400: invalid, 404: endpointNotFound },
      },
    },
    async (request) => service.testEndpoint(context(request), webhooks, request.params.endpointId),
  );

  app.get(
    '/webhook-endpoints/:endpointId/attempts',
    {
      config: { right: 'webhooks:read' },
      schema: {
        operationId: 'listWebhookAttempts',
        summary: "List an endpoint's delivery attempts",
        description: 'Every attempt, newest first: status, duration, the first 1 KB of the answer and the error. `messageId` narrows to one message.',
        tags,
        params: EndpointParams,
        querystring: AttemptsQuery,
        response: { 200: WebhookAttemptList, 400: invalid, 404: endpointNotFound },
      },
    },
    async (request) =>
      listPage(
        deps.cursors,
        cursorScope(context(request).workspaceId, `webhook-attempts:${request.params.endpointId}:${request.query.messageId ?? ''}`),
        request.query,
        (attempt) => attempt.attemptId,
        (before, size) => service.listAttempts(context(request), request.params.endpointId, request.query.messageId, before, size),
      ),
  );

  app.post(
    '/webhook-endpoints/:endpointId/messages/:messageId/resend',
    {
      config: { right: 'webhooks:write' },
      schema: {
        operationId: 'resendWebhookMessage',
        summary: 'Re-send a message to an endpoint',
        description: 'Queues the message for the endpoint again, due now, with a fresh retry schedule; whether or not it was delivered before, and whether or not the endpoint subscribes to its type.',
        tags,
        params: Type.Object({ endpointId: Type.String({ minLength: 1, maxLength: 100 }), messageId: Type.String({ minLength: 1, maxLength: 100 }) }),
        response: { 202: QueuedDelivery, 400: invalid, 404: errorResponse("Webhook endpoint or message not found (also another workspace's).") },
      },
    },
    async (request, reply) => reply.code(202).send(await service.resendMessage(context(request), request.params.endpointId, request.params.messageId)),
  );

  app.post(
    '/webhook-endpoints/:endpointId/replay',
    {
      config: { right: 'webhooks:write' },
      schema: {
        operationId: 'replayWebhookMessages',
        summary: 'Replay messages to an endpoint',
        description:
          "Queues every message since a time (within the 30 days messages are kept), of the endpoint's event types or those given, for delivery to the endpoint: " +
          'those it missed while disabled or down, or all of them again. Each is delivered at least once more; receivers deduplicate on `webhook-id`.',
        tags,
        params: EndpointParams,
        body: ReplayBody,
        response: { 202: ReplayResult, 400: invalid, 404: endpointNotFound },
      },
    },
    async (request, reply) => reply.code(202).send(await service.replay(context(request), request.params.endpointId, request.body)),
  );

  app.get(
    '/webhook-messages',
    {
      config: { right: 'webhooks:read' },
      schema: {
        operationId: 'listWebhookMessages',
        summary: 'List webhook messages',
        description: "The workspace's events as delivered, oldest first, kept 30 days; by type and from a time.",
        tags,
        querystring: MessagesQuery,
        response: { 200: WebhookMessageList, 400: invalid },
      },
    },
    async (request) =>
      listPage(
        deps.cursors,
        cursorScope(context(request).workspaceId, `webhook-messages:${request.query.eventType ?? ''}:${request.query.since ?? ''}`),
        request.query,
        (message) => message.messageId,
        (after, size) => service.listMessages(context(request), { eventType: request.query.eventType, since: request.query.since }, after, size),
      ),
  );

  app.get(
    '/webhook-messages/:messageId',
    {
      config: { right: 'webhooks:read' },
      schema: {
        operationId: 'getWebhookMessage',
        summary: 'Read a webhook message',
        tags,
        params: Type.Object({ messageId: Type.String({ minLength: 1, maxLength: 100 }) }),
        response: { 200: Type.Ref(WebhookMessage), 400: invalid, 404: errorResponse("Webhook message not found (also another workspace's).") },
      },
    },
    async (request) => service.getMessage(context(request), request.params.messageId),
  );

  app.get(
    '/webhook-event-types',
    {
      config: { right: 'webhooks:read' },
      schema: {
        operationId: 'listWebhookEventTypes',
        summary: 'List webhook event types',
        description: "Every event type an endpoint can subscribe to, with the JSON Schema of its payload's `data` (also in this document's `webhooks` section).",
        tags,
        response: {
          200: Type.Object(
            { results: Type.Array(EventTypeDescription) },
            { examples: [{ results: [{ type: 'person.opted_out', description: 'A person opted out of contact.', dataSchema: { type: 'object', properties: { personId: { type: 'string' } }, required: ['personId'] } }] }] },
          ),
        },
      },
    },
    async () => ({ results: service.describeEventTypes() }),
  );
};
