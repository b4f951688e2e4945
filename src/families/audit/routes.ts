import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { requestContext, type ServiceDeps } from '../../context.js';
import { badRequest } from '../../http/errors.js';
import { cursorScope } from '../../http/pagination.js';
import { errorResponse } from '../../http/schemas.js';
import type { AuditRecorder } from './recorder.js';
import { AuditEventList, AuditEventQuery, AuditSettings, PutAuditSettingsBody, RETENTION_DAYS_MAX, RETENTION_DAYS_MIN } from './schemas.js';
import * as service from './service.js';

const tags = ['Audit trail'];

export const auditRoutes: FastifyPluginAsyncTypebox<{ deps: ServiceDeps; recorder: AuditRecorder }> = async (app, { deps, recorder }) => {
  app.get(
    '/audit-events',
    {
      config: { right: 'audit:read' },
      schema: {
        operationId: 'listAuditEvents',
        summary: 'Read the audit trail',
        description:
          "Every successful write to the workspace (by a user with an API key or a console session, by a person on the participant's pages or a public form, by the service's own jobs and provider reports), newest first, keyset-paged: pass `pageInfo.endCursor` as `startCursor` with the same filters. " +
          'Filters combine (AND). The trail holds ids, operation names, resource types and statuses, never personal data; entries older than the workspace\'s retention (GET /audit-settings) are deleted. ' +
          'Entries of this instance are written before the page is read, so a write is in the next page read through the same instance; through another, within a few milliseconds.',
        tags,
        querystring: AuditEventQuery,
        response: { 200: AuditEventList, 400: errorResponse('Invalid input; `path` names the parameter: a size out of 1–100, an unknown actorKind, a time that is not ISO 8601, `from` after `to`, or a startCursor not of this query.') },
      },
    },
    async (request) => {
      const context = requestContext(deps, request);
      const { startCursor, size: _size, ...filters } = request.query;
      if (filters.from !== undefined && filters.to !== undefined && Date.parse(filters.from) > Date.parse(filters.to)) throw badRequest('from is after to', ['from']);
      const scope = cursorScope(context.workspaceId, `audit-events:${JSON.stringify(filters)}`);
      let after: { at: string; id: string } | undefined;
      if (startCursor !== undefined) {
        const [at, id] = deps.cursors.decode(scope, startCursor, ['startCursor']);
        if (typeof at !== 'string' || typeof id !== 'string') throw badRequest('startCursor is not a valid cursor for this query', ['startCursor']);
        after = { at, id };
      }
      await recorder.flush();
      const { events, hasNextPage } = await service.listEvents(context, request.query, after);
      const last = events.at(-1);
      return { results: events, pageInfo: { hasNextPage, endCursor: last === undefined ? '' : deps.cursors.encode(scope, [last.occurredAt, last.auditEventId]) } };
    },
  );

  app.get(
    '/audit-settings',
    {
      config: { right: 'audit:read' },
      schema: {
        operationId: 'getAuditSettings',
        summary: "Read the audit trail's retention",
        description: `How many days the workspace keeps its audit trail (${RETENTION_DAYS_MIN}–${RETENTION_DAYS_MAX}; 365 until set).`,
        tags,
        response: { 200: Type.Ref(AuditSettings) },
      },
    },
    async (request) => service.getSettings(requestContext(deps, request)),
  );

  app.put(
    '/audit-settings',
    {
      config: { right: 'audit:manage' },
      schema: {
        operationId: 'putAuditSettings',
        summary: "Set the audit trail's retention",
        description:
          `Sets how many days entries are kept, ${RETENTION_DAYS_MIN}–${RETENTION_DAYS_MAX}. The hourly \`audit.prune\` job deletes older entries in batches of 1,000; a shorter retention takes effect at its next run. SUPER_ADMIN only. ` +
          'The change is itself an entry of the trail.',
        tags,
        body: PutAuditSettingsBody,
        response: { 200: Type.Ref(AuditSettings), 400: errorResponse(`Invalid input; \`path\` is ["retentionDays"]: a whole number of days, ${RETENTION_DAYS_MIN}–${RETENTION_DAYS_MAX}.`) },
      },
    },
    async (request) => service.putSettings(requestContext(deps, request), request.body),
  );
};
