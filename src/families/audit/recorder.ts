import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Insertable, Kysely } from 'kysely';
import type { AuditEventsTable, DB } from '../../db/schema.js';
import { idPrefixes, newId } from '../../ids.js';
import { SYSTEM_WORKSPACE_ID } from '../../jobs/queue.js';
import type { ServiceDeps } from '../../context.js';
import { insertEvents } from './queries.js';

/** The methods that write: every successful request with one of them is recorded. */
const writeMethods = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** Ids as the service writes them (`stu_` and a ULID): a path value of another shape (an email) is never recorded. */
const ID_SHAPE = /^[a-z]{2,5}_[0-9A-HJKMNP-TV-Z]{26}$/;
/** POST operations that read (searches, a preview): they change nothing, so they record nothing. */
const readingOperation = /^(search|preview)[A-Z]/;

/** The states the trail records before and after, by resource type: read just before the handler, and from its answer. */
const statefulTables = {
  study: { table: 'studies', key: 'study_id' },
  participant: { table: 'participants', key: 'participant_id' },
  incentive: { table: 'incentives', key: 'incentive_id' },
} as const;
type StatefulType = keyof typeof statefulTables;
const isStateful = (type: string | undefined): type is StatefulType => type !== undefined && Object.hasOwn(statefulTables, type);

export type AuditRow = Insertable<AuditEventsTable>;

export interface RecorderOptions {
  /** Entries are written together once this many wait (default 200)... */
  maxBatch?: number;
  /** ...or this long after the first of them (default 20 ms). */
  flushMs?: number;
}

/**
 * The trail's writer: entries from requests wait in memory and are written in one multi-row
 * insert every few milliseconds (or sooner when many wait), so a write costs its request no
 * round trip of its own. flush() writes what waits (the read route calls it first, so a reader
 * sees its own writes at once on this instance); close() flushes at shutdown. An insert that
 * fails is logged with the number of entries lost: the writes themselves are already committed.
 */
export class AuditRecorder {
  private waiting: AuditRow[] = [];
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  private readonly maxBatch: number;
  private readonly flushMs: number;
  constructor(
    private readonly db: Kysely<DB>,
    private readonly log: FastifyBaseLogger,
    options: RecorderOptions = {},
  ) {
    this.maxBatch = options.maxBatch ?? 200;
    this.flushMs = options.flushMs ?? 20;
  }

  add(row: AuditRow) {
    this.waiting.push(row);
    if (this.waiting.length >= this.maxBatch) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), this.flushMs);
  }

  /** Writes every entry added before the call; resolves once they are in the database (or logged as lost). */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const rows = this.waiting;
    this.waiting = [];
    this.writing = this.writing.then(async () => {
      if (rows.length === 0) return;
      try {
        await insertEvents(this.db, rows);
      } catch (error) {
        this.log.error({ err: error, lost: rows.length }, 'audit trail: entries could not be written');
      }
    });
    return this.writing;
  }

  close(): Promise<void> {
    return this.flush();
  }
}

interface RouteFacts {
  operationId: string;
  /** What the route writes: the collection it adds to, or the resource its path names. */
  resourceType: string | undefined;
  /** The path parameter naming a resource (`participantId`), and that resource's type (`participant`). */
  idParam: string | undefined;
  idType: string | undefined;
  /** The answer's field naming a created resource (`studyId` for `POST /studies`). */
  idField: string | undefined;
  skip: boolean;
}

const singular = (word: string) => (word === 'people' ? 'person' : word.endsWith('ies') ? `${word.slice(0, -3)}y` : word.endsWith('s') ? word.slice(0, -1) : word);
const camel = (word: string) => word.replace(/-([a-z])/g, (_match, letter: string) => letter.toUpperCase());

/**
 * What the trail says of a route, worked out once from its path, operationId and config: the
 * resource is the collection the path ends in (`POST /studies/:studyId/participants` adds
 * participants), else the last resource its path names (`POST /studies/:studyId/launch`, a study).
 */
function factsOf(request: FastifyRequest): RouteFacts {
  const options = request.routeOptions;
  const url = options.url ?? '';
  const schema = options.schema as { operationId?: string } | undefined;
  const operationId = schema?.operationId ?? `${request.method} ${url}`;
  const audit = options.config.audit;
  const segments = url.split('/').filter((segment) => segment !== '' && segment !== 'v1');
  let idAt = -1;
  segments.forEach((segment, index) => {
    if (/^:[A-Za-z]+Id(OrEmail)?$/.test(segment) && segment !== ':workspaceId') idAt = index;
  });
  const idParam = idAt < 0 ? undefined : segments[idAt]!.slice(1);
  const idType = idParam?.replace(/Id(OrEmail)?$/, '');
  const collection = segments.slice(idAt + 1).findLast((segment) => !segment.startsWith(':') && (segment.endsWith('s') || segment === 'people'));
  const resourceType = audit && audit.resourceType ? audit.resourceType : collection !== undefined ? camel(singular(collection)) : idType;
  return { operationId, resourceType, idParam, idType, idField: resourceType === undefined ? undefined : `${resourceType}Id`, skip: audit === false || readingOperation.test(operationId) };
}

interface Pending {
  facts: RouteFacts;
  before?: string | null;
  createdId?: string;
  after?: string | null;
}

declare module 'fastify' {
  interface FastifyRequest {
    auditPending: Pending | undefined;
  }
}

const idShaped = (value: unknown): value is string => typeof value === 'string' && ID_SHAPE.test(value);

/**
 * Records every successful write: after the handler answered 2xx or 3xx (onResponse), one entry
 * with its actor, operation, resource and, for a study, participant or incentive, its status before
 * (read just before the handler) and after (from the answer). A request that failed records
 * nothing. The entry is written after the write committed, by the recorder's next flush: a crash
 * in between loses it (docs/security.md says so).
 */
export function installAuditTrail(app: FastifyInstance, deps: Pick<ServiceDeps, 'tenantDb' | 'clock'>, recorder: AuditRecorder) {
  const factsByRoute = new WeakMap<object, RouteFacts>();
  const routeFacts = (request: FastifyRequest) => {
    const key = request.routeOptions.config as object;
    let facts = factsByRoute.get(key);
    if (!facts) {
      facts = factsOf(request);
      factsByRoute.set(key, facts);
    }
    return facts;
  };

  app.decorateRequest('auditAttribution', undefined);
  app.decorateRequest('auditDetails', undefined);
  app.decorateRequest('auditPending', undefined);

  app.addHook('preHandler', async (request) => {
    if (!request.routeOptions.url) return;
    const audit = request.routeOptions.config.audit;
    if (!writeMethods.has(request.method) && !(audit && audit.writesOnGet)) return;
    const facts = routeFacts(request);
    if (facts.skip) return;
    const pending: Pending = { facts };
    request.auditPending = pending;
    const principal = request.principal;
    const id = facts.idParam === undefined ? undefined : (request.params as Record<string, unknown>)[facts.idParam];
    if (principal && isStateful(facts.resourceType) && facts.idType === facts.resourceType && idShaped(id)) {
      const { table, key } = statefulTables[facts.resourceType];
      const row = await deps
        .tenantDb(principal.workspaceId)
        .selectFrom(table)
        .select('status')
        .where('workspace_id', '=', principal.workspaceId)
        .where(key, '=', id)
        .executeTakeFirst();
      pending.before = row?.status ?? null;
    }
  });

  app.addHook('preSerialization', async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const pending = request.auditPending;
    if (!pending || reply.statusCode >= 400 || payload === null || typeof payload !== 'object') return payload;
    const body = payload as Record<string, unknown>;
    const { idField, resourceType } = pending.facts;
    if (idField !== undefined && idShaped(body[idField])) pending.createdId = body[idField];
    if (isStateful(resourceType) && typeof body.status === 'string') pending.after = body.status;
    return payload;
  });

  app.addHook('onResponse', async (request, reply) => {
    const pending = request.auditPending;
    if (!pending || reply.statusCode >= 400) return;
    const { facts } = pending;
    const details = request.auditDetails;
    const attribution = request.auditAttribution;
    const params = request.params as Record<string, unknown>;
    const fromPath = facts.idParam === undefined ? undefined : params[facts.idParam];
    // A created resource by its id; else the one the path names (a write of many names what it was made on: a study's participants, the study).
    let resourceType = facts.resourceType;
    let resourceId = pending.createdId;
    if (resourceId === undefined && idShaped(fromPath)) {
      resourceType = facts.idType;
      resourceId = fromPath;
    }
    const given = details ?? attribution;
    if (given?.resourceType !== undefined) {
      resourceType = given.resourceType;
      resourceId = given.resourceId;
    }
    const stateful = isStateful(resourceType) && resourceType === facts.resourceType;
    const row: AuditRow = {
      workspace_id: '',
      audit_event_id: newId(idPrefixes.auditEvent),
      occurred_at: deps.clock.now().toISOString(),
      actor_kind: 'USER',
      operation_id: facts.operationId,
      method: request.method,
      resource_type: resourceType ?? null,
      resource_id: resourceId ?? null,
      request_id: request.id,
      status_code: reply.statusCode,
      before_state: details?.before ?? attribution?.before ?? (stateful ? (pending.before ?? null) : null),
      after_state: details?.after ?? attribution?.after ?? (stateful ? (pending.after ?? null) : null),
    };
    const principal = request.principal;
    if (principal) {
      row.workspace_id = principal.workspaceId;
      row.actor_user_id = principal.userId;
      row.actor_credential_id = principal.tokenId;
    } else if (attribution) {
      row.workspace_id = attribution.workspaceId;
      row.actor_kind = attribution.actor.kind;
      if (attribution.actor.kind === 'PARTICIPANT') row.actor_person_id = attribution.actor.personId ?? null;
      else if (attribution.actor.kind === 'SERVICE') row.actor_service = attribution.actor.service;
      else if (attribution.actor.kind === 'USER') {
        row.actor_user_id = attribution.actor.userId;
        row.actor_credential_id = attribution.actor.credentialId;
      }
    } else if (request.operator) {
      const query = request.query as Record<string, unknown> | undefined;
      row.workspace_id = typeof query?.workspaceId === 'string' && /^wsp_/.test(query.workspaceId) ? query.workspaceId : SYSTEM_WORKSPACE_ID;
      row.actor_kind = 'OPERATOR';
    } else {
      // A public write that named no workspace: a route that forgot attributeWrite. The walk test finds it.
      request.log.warn({ operationId: facts.operationId }, 'audit trail: a public write named no workspace; not recorded');
      return;
    }
    recorder.add(row);
  });
}

/** A change the service made itself, for recordServiceChanges. */
export interface ServiceChange {
  workspaceId: string;
  at: string;
  /** The job's queue or the provider (`messages.deliver`, `incentives.expire`). */
  service: string;
  operationId: string;
  resourceType: string;
  resourceId: string;
  before?: string | null;
  after?: string | null;
}

/**
 * Entries for what the service changed itself (a job, a provider's report), written at once with
 * `db`: pass the job's transaction so that they commit, or not, with the change.
 */
export async function recordServiceChanges(db: Kysely<DB>, changes: readonly ServiceChange[]) {
  await insertEvents(
    db,
    changes.map((change) => ({
      workspace_id: change.workspaceId,
      audit_event_id: newId(idPrefixes.auditEvent),
      occurred_at: change.at,
      actor_kind: 'SERVICE' as const,
      actor_service: change.service,
      operation_id: change.operationId,
      resource_type: change.resourceType,
      resource_id: change.resourceId,
      before_state: change.before ?? null,
      after_state: change.after ?? null,
    })),
  );
}
