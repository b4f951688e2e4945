import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { attributeWrite } from '../../http/audit-actor.js';
import type { FastifyRequest } from 'fastify';
import { requestContext, type ServiceDeps } from '../../context.js';
import { maskingNote } from '../../http/masking.js';
import { plainErrors } from '../../http/openapi.js';
import { cursorScope, listPage } from '../../http/pagination.js';
import { errorResponse, plainText } from '../../http/schemas.js';
import type { Mail } from './runtime.js';
import { ListMessagesQuery, MessageDetail, MessageList, MessageParams, retryScheduleNote, SendMessagesBody, SendMessagesResult, StudyParams, UnsubscribeBody, UnsubscribeParams } from './send-schemas.js';
import * as sending from './sending.js';
import { tokenAsSpelled } from './unsubscribe.js';

/** The link's token as the path spells it; another spelling of it (percent-encoded) is '' (no link: a 404). */
const exactToken = (request: { raw: { url?: string | undefined }; params: { token: string } }) => tokenAsSpelled(request.raw.url, request.params.token) ?? '';

const tags = ['Messages'];
const invalid = errorResponse('Invalid input; `path` names the offending field or parameter.');

const html = (description: string, example: string) => ({ description, content: { 'text/html': { schema: { type: 'string', examples: [example] } } } });
const escapeHtml = (value: string) => value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const page = (title: string, body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${escapeHtml(title)}</title></head>` +
  `<body style="font-family:sans-serif;max-width:32rem;margin:3rem auto">${body}</body></html>`;

/** Form posts of mail clients (RFC 8058) and of the confirmation page: `List-Unsubscribe=One-Click`, read as a small object. */
function parseForm(body: string): Record<string, string> {
  const multipart = /name="([^"]+)"\r?\n\r?\n([^\r\n]*)/g;
  if (body.includes('Content-Disposition')) return Object.fromEntries([...body.matchAll(multipart)].map((match) => [match[1]!, match[2]!]));
  return Object.fromEntries(new URLSearchParams(body));
}

export const messageSendingRoutes: FastifyPluginAsyncTypebox<{ deps: ServiceDeps; mail: Mail }> = async (app, { deps, mail }) => {
  const context = (request: FastifyRequest) => requestContext(deps, request);
  for (const type of ['application/x-www-form-urlencoded', 'multipart/form-data']) {
    app.addContentTypeParser(type, { parseAs: 'string', bodyLimit: 4096 }, (_request, body, done) => done(null, parseForm(String(body))));
  }

  app.post(
    '/studies/:studyId/messages',
    {
      config: { right: 'messages:write' },
      schema: {
        operationId: 'sendMessages',
        summary: "Send a message to a study's participants",
        description:
          'Sends the template to participants of the study chosen by id (`participantIds`) or by the filter language (`filter`), one message each. ' +
          'People who opted out, were deleted, are UNREACHABLE or have no address are never sent to: `skipped` counts them by reason. ' +
          'The messages are recorded in one transaction with the request (the outbox) and sent in the background through SMTP, rendered for each person as they go; ' +
          'GET /messages shows each one and what became of it. Each carries a signed one-click unsubscribe link (in the body, and the List-Unsubscribe and List-Unsubscribe-Post headers of RFC 8058).\n\n' +
          'Without SMTP configured (SMTP_HOST) nothing is sent: the messages are recorded NOT_SENT, and the answer says so (`notSent`, `notSentReason`). ' +
          `Sending is limited per workspace (MAIL_RATE_PER_MINUTE attempts a minute, default 600): beyond it messages wait in the queue. ${retryScheduleNote}\n\n` +
          '`links.screener`, `links.consent` and `links.scheduling` become the participant\'s own link to the page, made as the message goes (one per message and purpose). ' +
          'Refused (400, path ["templateId"]): a template that uses `links.screener` for a study with no screener question, `links.consent` for a study whose plan names no consent form, or `links.scheduling` for a study with no host (PUT /studies/{studyId}/schedule). ' +
          'A delivered message counts as a contact of the person (LAST_CONTACT_DATE, TOTAL_NUMBER_OF_CONTACT*).',
        tags,
        params: StudyParams,
        body: SendMessagesBody,
        response: {
          200: SendMessagesResult,
          400: invalid,
          404: errorResponse('Study, message template (path ["templateId"]) or participant (path ["participantIds", index]) not found; also another workspace\'s.'),
        },
      },
    },
    async (request) => sending.sendToParticipants(context(request), deps.cursors, request.params.studyId, request.body),
  );

  app.get(
    '/messages',
    {
      config: { right: 'messages:read' },
      schema: {
        operationId: 'listMessages',
        summary: 'List messages',
        description: `Messages of the workspace in the order they were requested, keyset-paged (pass \`pageInfo.endCursor\` as \`startCursor\`), optionally of one study, one person or one status. ${maskingNote}`,
        tags,
        querystring: ListMessagesQuery,
        response: { 200: MessageList, 400: invalid },
      },
    },
    async (request) => {
      const { studyId, personId, status } = request.query;
      const scope = cursorScope(context(request).workspaceId, `messages:${JSON.stringify([studyId ?? null, personId ?? null, status ?? null])}`);
      return listPage(deps.cursors, scope, request.query, (message) => message.messageId, (after, size) => sending.listMessages(context(request), { studyId, personId, status }, after, size));
    },
  );

  app.get(
    '/messages/:messageId',
    {
      config: { right: 'messages:read' },
      schema: {
        operationId: 'getMessage',
        summary: 'Read a message',
        description: `The message with what was sent (subject and bodies as rendered, once sent) and its history. ${maskingNote} The rendered subject and bodies are masked whole ("***") without the personal-data right.`,
        tags,
        params: MessageParams,
        response: { 200: MessageDetail, 400: invalid, 404: errorResponse("Message not found (also another workspace's).") },
      },
    },
    async (request) => sending.getMessage(context(request), request.params.messageId),
  );

  const linkNotFound = errorResponse('The link is not one this service made: malformed, forged or altered (path ["token"]). Nothing changes.');
  app.get(
    '/unsubscribe/:token',
    {
      config: { public: true },
      schema: {
        operationId: 'showUnsubscribe',
        summary: 'The unsubscribe page of a message (public, no token)',
        description:
          'Where the unsubscribe link of a message leads a person: a page with one button that unsubscribes them (a POST to the same link). ' +
          'Following the link changes nothing by itself, as RFC 8058 asks, since mail scanners follow links.',
        tags,
        params: UnsubscribeParams,
        response: { 200: html('A page with the unsubscribe button, or saying the person is already unsubscribed.', '<!doctype html><html lang="en">…<h1>Unsubscribe</h1><p>Stop emails from Acme Research?</p><form method="post">…</form>…</html>'), 400: invalid, 404: linkNotFound, 500: plainErrors[500] },
      },
    },
    async (request, reply) => {
      const found = await sending.inspectUnsubscribe(deps.db, mail.unsubscribeKey, exactToken(request));
      const from = escapeHtml(found.workspaceName);
      const body = found.unsubscribed
        ? `<h1>You are unsubscribed</h1><p>${from} will not email you again.</p>`
        : `<h1>Unsubscribe</h1><p>Stop emails from ${from}?</p><form method="post"><input type="hidden" name="List-Unsubscribe" value="One-Click"><button type="submit">Unsubscribe</button></form>`;
      return reply.type('text/html; charset=utf-8').header('Cache-Control', 'no-store').send(page('Unsubscribe', body));
    },
  );

  app.post(
    '/unsubscribe/:token',
    {
      config: { public: true },
      schema: {
        operationId: 'unsubscribe',
        summary: 'Unsubscribe, one click (public, no token)',
        description:
          "RFC 8058's one-click unsubscribe: what a mail client posts to the List-Unsubscribe URL of a message (`List-Unsubscribe=One-Click`), and what the unsubscribe page's button posts. " +
          'It opts the person out, exactly as PUT /people/{personId}/opted-out does (contact status OPTED_OUT, the `person.opted_out` webhook event), and records an UNSUBSCRIBED event on the message. ' +
          'Following it again changes nothing and answers the same. The link is signed (HMAC) by the service: a forged or altered one is a 404 and changes nothing.',
        tags,
        params: UnsubscribeParams,
        body: UnsubscribeBody,
        consumes: ['application/x-www-form-urlencoded', 'multipart/form-data', 'application/json'],
        response: { 200: html('A page saying the person is unsubscribed.', '<!doctype html><html lang="en">…<h1>You are unsubscribed</h1><p>Acme Research will not email you again.</p>…</html>'), 400: invalid, 404: linkNotFound, 500: plainErrors[500], 503: plainText('Service Unavailable: the instance is shutting down; retry on another.', 'Service Unavailable') },
      },
      // A form button, or a client, may post no body at all: it means the same one click.
      preValidation: async (request) => {
        request.body ??= {};
      },
    },
    async (request, reply) => {
      const done = await sending.unsubscribe({ db: deps.db, clock: deps.clock }, mail.unsubscribeKey, exactToken(request));
      attributeWrite(request, { workspaceId: done.workspaceId, actor: { kind: 'PARTICIPANT', personId: done.personId }, resourceType: 'message', resourceId: done.messageId });
      return reply
        .type('text/html; charset=utf-8')
        .header('Cache-Control', 'no-store')
        .send(page('Unsubscribed', `<h1>You are unsubscribed</h1><p>${escapeHtml(done.workspaceName)} will not email you again.</p>`));
    },
  );
};
