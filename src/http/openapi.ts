import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance, RouteOptions } from 'fastify';
import { ErrorBody, errorResponse, PageInfo, plainText } from './schemas.js';
import { assignableRights, rolesWithRight } from './rights.js';
import { IDEMPOTENCY_HEADER, IDEMPOTENCY_KEY_PATTERN, idempotencyKeyDescription, REPLAYED_HEADER, takesIdempotencyKey } from './idempotency/plugin.js';

export const apiPrefix = '/v1';

export const tags = [
  { name: 'Studies', description: 'Studies: create, read, update, launch, pause and close; screeners and templates.' },
  { name: 'Person Properties', description: "The workspace's own fields on people: import (create), list and delete, with select options." },
  { name: 'Property Groups', description: 'Groups of person properties and the populations they apply to (scope ALL or SPECIFIC).' },
  { name: 'Populations', description: 'Pools of people the workspace recruits from.' },
  { name: 'People', description: 'The panel: create, read, update, delete people, their custom property values and opted-out status.' },
  { name: 'Segments', description: 'Saved people filters; their members are whoever matches them at the time of a search (PERSON.SEGMENT_MEMBERSHIP).' },
  { name: 'Person', description: 'Deprecated, superseded by People: the older operations by email, kept working unchanged.' },
  { name: 'Participants', description: 'People taking part in a study: add them, move them through invitation, scheduling, screening and approval, and read them.' },
  { name: 'Scheduling', description: "Sessions booked in the person's own time zone: a study's hosts and their hours, its open times, and bookings made, moved and canceled by the person or the team, each with a calendar invitation." },
  { name: 'Screener responses', description: "People's answers to a study's screener, for the team: one participant's with the questions as asked, a study's paged or as CSV, and the study's funnel." },
  { name: 'Imports', description: 'CSV imports of people, streamed into the workspace and run in the background.' },
  { name: 'Backfills', description: "A panel's history brought from another tool as CSV (restricted access: SUPER_ADMIN): past studies, participations with their statuses and dates, incentives paid." },
  { name: 'Forms', description: 'Signup forms: people send them, without a token, to join the panel; the workspace reviews each submission.' },
  { name: 'Participant Status Events', description: "Every change of a participant's status, approval status or screener state, polled in commit order: each event exactly once." },
  { name: 'Study Status Events', description: "Every change of a study's status, polled in commit order: each event exactly once." },
  { name: 'Incentives', description: 'Payments to participants: send (through a provider, or recorded as paid outside one), read, resend and cancel.' },
  { name: 'Incentive provider', description: "The provider a workspace's incentives are paid through (Tremendous, or the sandbox that pays no one) and its credentials, stored encrypted: SUPER_ADMIN only." },
  { name: 'Webhooks', description: "Push delivery of the workspace's events to its endpoints, signed by the Standard Webhooks specification, retried for about 3 days, every attempt recorded; re-send and replay." },
  { name: 'Consent', description: "People's consents: to a study's consent form or on a signup form, with the version or text agreed to; read by PERSON.CONSENT_SUBMISSIONS, CONSENT_FORM_WAS_SUBMITTED and PARTICIPANT.CONSENT_FORM_SUBMITTED." },
  { name: 'Consent forms', description: 'The consent forms a study asks people to sign, in immutable versions: Markdown text rendered to safe HTML, required statements, optional choices and a hash of the content.' },
  { name: 'Branding configs', description: "How a study's participant pages look: a display name, an accent colour checked for contrast (4.5:1) and a logo (PNG, JPEG or WebP), named by a study plan's brandingConfigId." },
  { name: 'Messages', description: "Messages to people: templates with variables (Liquid), checked when saved and previewed for one person." },
  { name: 'Calendar feeds', description: "A user's subscribable calendars (iCalendar) of the sessions they host: places booked, no participant's data; the URL is the credential, shown once." },
  { name: 'Users', description: "The authenticated user, and the workspace's users: invitations by email, roles, seats, deactivation." },
  { name: 'Session', description: "The console's sign-in: invitations accepted, emailed links, passwords, the session cookie (with its CSRF token) and sign-out. The API's bearer tokens are unchanged." },
  { name: 'Teams', description: 'Teams of the workspace and their members.' },
  { name: 'Custom Roles', description: 'Sets of rights a SUPER_ADMIN chooses, held by CUSTOM users.' },
  { name: 'API Keys', description: 'Self-service API keys: a subset of their owner\'s rights, a name, an expiry, when last used.' },
  { name: 'Audit trail', description: "Every write to the workspace, by whom (a user's key or session, a participant, the service), on what, when, with the status before and after; ids and states only, never personal data; kept for the workspace's retention." },
];

export const rateLimitHeaders = {
  'X-RateLimit-Limit': { type: 'integer', description: 'Requests allowed per window for this token.' },
  'X-RateLimit-Remaining': { type: 'integer', description: 'Requests left in the current window.' },
  'X-RateLimit-Reset': { type: 'integer', description: 'Unix epoch seconds when the budget refills.' },
};

export const plainErrors = {
  401: plainText('Unauthorized: the token is missing, unknown, revoked, or its user is deactivated.', 'Unauthorized'),
  403: plainText("Forbidden: the token's role lacks the right this operation requires.", 'Forbidden'),
  429: {
    ...plainText('Too Many Requests: the rate-limit budget is spent; retry after Retry-After seconds.', 'Too Many Requests'),
    headers: { ...rateLimitHeaders, 'Retry-After': { type: 'integer', description: 'Seconds until the budget refills.' } },
  },
  500: plainText('Internal Server Error: a bug; the body never carries details, the log does.', 'Internal Server Error'),
};

declare module 'fastify' {
  interface FastifySchema {
    'x-reference-id'?: string;
    'x-required-right'?: string;
    'x-roles'?: string[];
  }
}

/**
 * Completes every route's schema from what the route declares, so that the OpenAPI document
 * cannot drift from what is enforced: the security scheme, the right and the roles holding it,
 * the plain 401/403/429/500 answers and the rate-limit headers on every authenticated response.
 */
const enriched = new WeakSet<object>();
const statusDescriptions: Record<string, string> = { 200: 'OK', 201: 'Created', 202: 'Accepted', 204: 'No Content' };

export function enrichRouteSchema(route: RouteOptions): void {
  const schema = route.schema;
  // Fastify also announces the HEAD twin of every GET route, with the same schema object.
  if (!schema || schema.hide || enriched.has(schema)) return;
  enriched.add(schema);
  const right = route.config?.right;
  if (!right) {
    // The auth hook lets a route without a right through unauthenticated: that must be a
    // decision (`config.public`), never a forgotten line, so a documented route without either
    // stops the service from starting.
    if (!route.config?.public) throw new Error(`Route ${route.method} ${route.url} declares neither config.right nor config.public`);
    // A route the console's session cookie authenticates (the sign-in family checks it) says so.
    schema.security = route.config?.sessionCookie ? [{ sessionCookie: [] }] : [];
    const responses = { ...(schema.response as Record<string, Record<string, unknown>> | undefined) };
    documentBodyRefusals(route, responses);
    schema.response = responses;
    return;
  }
  const roles = rolesWithRight(right);
  schema.security = [{ bearerAuth: [] }];
  schema['x-required-right'] = right;
  schema['x-roles'] = roles;
  const referenceNote = schema['x-reference-id'] ? `Reference operation ${schema['x-reference-id']}. ` : '';
  schema.description = `${schema.description ? `${schema.description}\n\n` : ''}${referenceNote}Requires the right \`${right}\` (roles: ${roles.join(', ')}${assignableRights.includes(right) ? '; CUSTOM users whose custom role holds it' : ''}).`;
  const idempotent = takesIdempotencyKey(route);
  if (idempotent) documentIdempotencyKey(schema);
  const responses = { ...(schema.response as Record<string, Record<string, unknown>> | undefined) };
  // A replay answers what the handler answered the first time: any of the route's own statuses.
  const ownHeaders = idempotent ? { ...rateLimitHeaders, ...replayedHeader } : rateLimitHeaders;
  for (const [status, response] of Object.entries(responses)) {
    if (!response.content) responses[status] = { description: statusDescriptions[status] ?? 'Response', ...response, headers: ownHeaders };
  }
  if (idempotent) {
    responses[409] = responses[409]
      ? { ...responses[409], description: `${String(responses[409].description ?? 'Conflict.')} Or: ${inFlightNote.charAt(0).toLowerCase()}${inFlightNote.slice(1)}` }
      : { ...errorResponse(inFlightNote), headers: ownHeaders };
    if (responses[400]) responses[400] = { ...responses[400], description: `${String(responses[400].description ?? 'Invalid input.')} Or: ${reusedKeyNote}` };
    else responses[400] = { ...errorResponse(`Invalid input; \`path\` names the offending field or parameter. Or: ${reusedKeyNote}`), headers: ownHeaders };
  }
  // What the shared mechanisms answer on every route that takes input, so each route need not say it.
  const takesInput = schema.params !== undefined || schema.querystring !== undefined || schema.body !== undefined;
  if (takesInput && !responses[400]) responses[400] = { ...errorResponse('Invalid input; `path` names the offending field or parameter.'), headers: rateLimitHeaders };
  documentBodyRefusals(route, responses, rateLimitHeaders);
  for (const [status, response] of Object.entries(plainErrors)) {
    if (!responses[status]) responses[status] = { ...response, headers: { ...rateLimitHeaders, ...(response as { headers?: object }).headers } };
  }
  responses[503] ??= plainText('Service Unavailable: the instance is shutting down; retry on another.', 'Service Unavailable');
  schema.response = responses;
}

/** The methods whose requests Fastify reads a body of (and so may refuse one of): all but GET, HEAD and TRACE. */
const bodyMethods = new Set(['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/**
 * What the shared body handling answers on every route of a method that carries a body, whether
 * or not the operation takes one (a DELETE with a body is parsed like a POST): 413 for a body
 * over the limit, 415 for one that is not JSON (nor the operation's own type, such as text/csv),
 * and 400 for malformed JSON or, on an operation without a body, one with fields.
 */
function documentBodyRefusals(route: RouteOptions, responses: Record<string, Record<string, unknown>>, rateLimited?: object): void {
  const methods = Array.isArray(route.method) ? route.method : [route.method];
  if (!methods.some((method) => bodyMethods.has(method))) return;
  const takesBody = route.schema?.body !== undefined;
  const noBodyNote = 'This operation takes no body: a request with one that has fields (or is not a JSON object) is refused.';
  const headers = rateLimited ? { headers: rateLimited } : {};
  if (!responses[400]) responses[400] = { ...errorResponse(takesBody ? 'Invalid input; `path` names the offending field or parameter.' : noBodyNote), ...headers };
  else if (!takesBody) responses[400] = { ...responses[400], description: `${String(responses[400].description ?? 'Invalid input.')} Or: ${noBodyNote.charAt(0).toLowerCase()}${noBodyNote.slice(1)}` };
  responses[413] ??= { ...errorResponse('The request body is larger than 1 MiB.'), ...headers };
  responses[415] ??= {
    ...errorResponse(takesBody ? 'The request body is not application/json.' : 'The request carries a body that is not application/json (this operation takes none; send no body).'),
    ...headers,
  };
}

const replayedHeader = {
  [REPLAYED_HEADER]: { type: 'string', enum: ['true'], description: 'Present on a replay: the stored response of an earlier request with the same Idempotency-Key.' },
};
const inFlightNote = 'A request with the same Idempotency-Key is still in progress (path ["Idempotency-Key"]); retry later.';
const reusedKeyNote = 'the Idempotency-Key was already used with a different request, or is not 1–255 printable ASCII characters (path ["Idempotency-Key"]).';

/**
 * The Idempotency-Key header of every POST that takes one (src/http/idempotency/plugin.ts), as a header
 * parameter: Fastify validates it (a bad key is a 400 naming ["Idempotency-Key"]) and the
 * document shows it.
 */
function documentIdempotencyKey(schema: NonNullable<RouteOptions['schema']>): void {
  const headers = (schema.headers ?? { type: 'object', properties: {} }) as { type: string; properties: Record<string, unknown> };
  schema.headers = {
    ...headers,
    properties: {
      ...headers.properties,
      [IDEMPOTENCY_HEADER]: { type: 'string', minLength: 1, maxLength: 255, pattern: IDEMPOTENCY_KEY_PATTERN, description: idempotencyKeyDescription, examples: ['5f0c8e0e-3b9a-4f1e-9a57-0d7e4c1b2a60'] },
    },
  };
}

export async function registerOpenApi(app: FastifyInstance, options: { publicUrl?: string; webhooks?: Record<string, unknown> }): Promise<void> {
  app.addSchema(ErrorBody);
  app.addSchema(PageInfo);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Participant recruitment and research operations API',
        version: '1.0',
        description:
          'The public API v1 of a self-hostable participant-recruitment and research-operations service. ' +
          'Every operation needs `Authorization: Bearer <token>` unless its security is empty; data is scoped to the ' +
          "token's workspace. Errors: 400/404/409 carry `{errors:[{message,path}]}`; 401, 403, 429 and 500 are text/plain.\n\n" +
          'Without a token: this document at `GET /v1/openapi.json`, the interactive reference at `GET /docs`, ' +
          '`GET /healthz` (the process is up) and `GET /readyz` (the database is reachable).',
        license: { name: 'MIT', identifier: 'MIT' },
      },
      // Without PUBLIC_URL the server is relative: a client (the interactive reference's "Try it
      // out" among them) resolves it against the address it read the document from, so it reaches
      // the server that served it, on whatever host and port; and the committed document is the
      // same on every machine.
      servers: [
        options.publicUrl
          ? { url: `${options.publicUrl.replace(/\/+$/, '')}${apiPrefix}`, description: 'This service (PUBLIC_URL)' }
          : { url: apiPrefix, description: 'This service: the server this document was read from' },
      ],
      tags,
      // What the service POSTs to webhook endpoints, one entry per event type (OpenAPI 3.1).
      ...(options.webhooks ? { webhooks: options.webhooks } : {}),
      components: {
        securitySchemes: {
          bearerAuth: { type: 'http', scheme: 'bearer', description: 'A token from `cli token create` or `cli workspace create`.' },
          sessionCookie: { type: 'apiKey', in: 'cookie', name: 'recruit_session', description: "The console's session cookie, set by a sign-in under /session; every write with it also sends X-CSRF-Token (GET /session answers it)." },
        },
      },
    },
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, index) => (typeof json.$id === 'string' ? json.$id : `def-${index}`),
    },
    transform: ({ schema, url }) => ({ schema: schema as never, url: url.startsWith(apiPrefix) ? url.slice(apiPrefix.length) : url }),
  });
  // The reference page and its assets are public, like the document they show.
  app.addHook('onRoute', (route) => {
    if (route.url.startsWith('/docs')) route.config = { ...route.config, public: true };
  });
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { docExpansion: 'list', deepLinking: true },
    theme: { title: 'Participant recruitment API v1' },
    // The page and its assets come from this server only. Swagger UI's default policy would
    // allow fonts, styles and a validator badge from anywhere and add upgrade-insecure-requests,
    // which breaks the page on a plain-HTTP intranet host; this one allows nothing outside.
    staticCSP: {
      'default-src': ["'self'"],
      'base-uri': ["'self'"],
      'connect-src': ["'self'"],
      'font-src': ["'self'", 'data:'],
      'form-action': ["'self'"],
      'frame-ancestors': ["'self'"],
      'img-src': ["'self'", 'data:'],
      'object-src': ["'none'"],
      'script-src': ["'self'"],
      'script-src-attr': ["'none'"],
      'style-src': ["'self'"],
    },
    transformSpecification: (document) => document,
  });
}

export { plainText };
