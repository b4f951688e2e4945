import { type Static, Type } from '@sinclair/typebox';
import { IsoDateTime } from '../../http/schemas.js';

export const actorKinds = ['USER', 'PARTICIPANT', 'VISITOR', 'SERVICE', 'OPERATOR'] as const;
/** How long a workspace keeps its trail, in days: at least a week, at most ten years; 365 until set. */
export const RETENTION_DAYS_MIN = 7;
export const RETENTION_DAYS_MAX = 3650;
export const RETENTION_DAYS_DEFAULT = 365;

const exampleEvent = {
  auditEventId: 'aud_01JD0000000000000000000000',
  occurredAt: '2026-11-22T10:00:00.000Z',
  actor: { kind: 'USER', userId: 'usr_01JD0000000000000000000000', credentialId: 'tok_01JD0000000000000000000000', personId: null, service: null },
  operationId: 'updateParticipant',
  method: 'PATCH',
  resourceType: 'participant',
  resourceId: 'ptc_01JD0000000000000000000000',
  requestId: '6f1c2b9e-3c1d-4c55-9a51-0d7e7d1c4a10',
  statusCode: 200,
  before: 'SHORTLISTED',
  after: 'INVITED',
};

const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);

export const AuditActor = Type.Object(
  {
    kind: Type.String({ enum: [...actorKinds], description: 'USER: a user through an API key or a console session; PARTICIPANT: a person on the participant\'s pages or a public form; VISITOR: someone not signed in asking for a console sign-in link (the resource is the user it names, when there is one); SERVICE: the service\'s own work (a job, a provider\'s report); OPERATOR: the operator token.' }),
    userId: Nullable(Type.String({ description: 'The user (USER).' })),
    credentialId: Nullable(Type.String({ description: 'The API key (`tok_…`) or console session (`ses_…`) the user came with (USER).' })),
    personId: Nullable(Type.String({ description: 'The person, when the page knows who (PARTICIPANT); null on a public form before the person is known.' })),
    service: Nullable(Type.String({ description: "The job's queue or the provider's report (SERVICE), e.g. `incentives.expire`, `provider-webhook:tremendous`." })),
  },
  { $id: 'AuditActor', title: 'AuditActor', additionalProperties: false },
);

export const AuditEvent = Type.Object(
  {
    auditEventId: Type.String(),
    occurredAt: IsoDateTime('When the write was answered (or the job changed the state).'),
    actor: Type.Ref(AuditActor),
    operationId: Type.String({ description: "The OpenAPI operation (`updateParticipant`); for the participant's pages, the method and route (`POST /p/:token/consent`); for the service's work, what it did (`expireIncentive`)." }),
    method: Nullable(Type.String({ description: 'The HTTP method; null for the service\'s own work.' })),
    resourceType: Nullable(Type.String({ description: 'What was written, named after its id (`study`, `participant`, `brandingConfig`); null for a write of many (a bulk add names its study instead where it has one).' })),
    resourceId: Nullable(Type.String({ description: 'Its id, from the path or the created resource; only ids, never an email.' })),
    requestId: Nullable(Type.String({ description: 'The request id (the X-Request-Id answered), to join with the logs.' })),
    statusCode: Type.Union([Type.Integer(), Type.Null()], { description: 'The status answered.' }),
    before: Nullable(Type.String({ description: "The resource's status before the write, for a study, participant or incentive; null otherwise." })),
    after: Nullable(Type.String({ description: 'Its status after the write.' })),
  },
  { $id: 'AuditEvent', title: 'AuditEvent', additionalProperties: false, examples: [exampleEvent] },
);
export type AuditEvent = Static<typeof AuditEvent>;

export const AuditEventList = Type.Object(
  {
    results: Type.Array(Type.Ref(AuditEvent)),
    pageInfo: Type.Object({
      hasNextPage: Type.Boolean(),
      endCursor: Type.String({ description: 'Pass as startCursor to read the next (older) page; empty when the page is empty.' }),
    }),
  },
  { title: 'AuditEventList', examples: [{ results: [exampleEvent], pageInfo: { hasNextPage: true, endCursor: 'WyIyMDI2LTExLTIyVDEwOjAwOjAwLjAwMFoiLCJhdWRfMDFKRDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAiXQ.c2lnbmF0dXJl' } }] },
);

const Id = (description: string) => Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_-]+$', description });
export const AuditEventQuery = Type.Object(
  {
    startCursor: Type.Optional(Type.String({ minLength: 1, maxLength: 2000, description: 'The endCursor of the previous page (with the same filters).' })),
    size: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 25, description: 'Entries per page, 1–100.' })),
    actorUserId: Type.Optional(Id('Only what this user did.')),
    actorKind: Type.Optional(Type.String({ enum: [...actorKinds], description: 'Only entries of this kind of actor.' })),
    resourceType: Type.Optional(Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z][A-Za-z0-9-]*$', description: 'Only writes of this type of resource (`study`, `participant`, …).' })),
    resourceId: Type.Optional(Id('Only writes of this resource (any type).')),
    operationId: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Only this operation (`updateParticipant`).' })),
    from: Type.Optional(IsoDateTime('Only entries at or after this time.')),
    to: Type.Optional(IsoDateTime('Only entries before this time.')),
  },
  { additionalProperties: false },
);
export type AuditEventQuery = Static<typeof AuditEventQuery>;

export const AuditSettings = Type.Object(
  {
    retentionDays: Type.Integer({
      minimum: RETENTION_DAYS_MIN,
      maximum: RETENTION_DAYS_MAX,
      description: `How many days entries are kept, ${RETENTION_DAYS_MIN}–${RETENTION_DAYS_MAX} (${RETENTION_DAYS_DEFAULT} until set); older ones are deleted by the hourly \`audit.prune\` job.`,
    }),
    updatedAt: Type.Union([IsoDateTime('When they were last set; null: never set, the default holds.'), Type.Null()]),
  },
  { $id: 'AuditSettings', title: 'AuditSettings', additionalProperties: false, examples: [{ retentionDays: 365, updatedAt: null }] },
);
export type AuditSettings = Static<typeof AuditSettings>;

export const PutAuditSettingsBody = Type.Object(
  {
    retentionDays: Type.Integer({ minimum: RETENTION_DAYS_MIN, maximum: RETENTION_DAYS_MAX, description: `Days to keep entries, ${RETENTION_DAYS_MIN}–${RETENTION_DAYS_MAX}.` }),
  },
  { additionalProperties: false, examples: [{ retentionDays: 730 }] },
);

export const auditSchemas = [AuditActor, AuditEvent, AuditSettings];
