import { type Static, Type } from '@sinclair/typebox';
import { IsoDateTime, PageInfo } from '../../http/schemas.js';

const pollingNote =
  'Oldest first, in commit order. Keep `pageInfo.endCursor` and poll again with it as `startCursor`: every event arrives exactly once, ' +
  'also while events are being written. An event appears once every transaction that began before it has ended, on the whole database server (including transactions of other workspaces and other applications), so a slow write delays events, never loses them. ' +
  'An empty page still carries an endCursor: the position to poll from next time. `hasNextPage` says whether more events are ready now; when false, poll again later.';

export const eventsDescription = pollingNote;

const field = (values: readonly string[], description: string) => Type.Unsafe<string>({ type: 'string', enum: [...values], description });

/** Who made a change: the audit trail (GET /audit-events) says more (the key or session, the request). */
const EventActor = Type.Object(
  {
    kind: Type.Union([Type.Unsafe<'USER' | 'PARTICIPANT' | 'SERVICE'>({ type: 'string', enum: ['USER', 'PARTICIPANT', 'SERVICE'] }), Type.Null()], {
      description: "USER: a user through the API or the console (userId says who); PARTICIPANT: the person on the participant's pages; SERVICE: the service's own work. Null on events recorded before the service named actors.",
    }),
    userId: Type.Union([Type.String(), Type.Null()], { description: 'The user who made the change (USER).' }),
  },
  { additionalProperties: false },
);

const exampleParticipantEvent = {
  eventId: '1042',
  occurredAt: '2026-11-22T10:05:00.000Z',
  studyId: 'stu_01JD0000000000000000000000',
  participantId: 'ptc_01JD0000000000000000000000',
  personId: 'per_01JD0000000000000000000000',
  field: 'status',
  from: 'NOT_STARTED',
  to: 'INVITED',
  actor: { kind: 'USER', userId: 'usr_01JD0000000000000000000000' },
};

export const ParticipantStatusEvent = Type.Object(
  {
    eventId: Type.String({ description: 'Opaque; unique in the service.' }),
    occurredAt: IsoDateTime(),
    studyId: Type.String(),
    participantId: Type.String(),
    personId: Type.String(),
    field: field(['status', 'approvalStatus', 'screenerState'], 'The participant field that changed.'),
    from: Type.Union([Type.String(), Type.Null()], { description: 'The value before the change.' }),
    to: Type.String({ description: 'The value after the change.' }),
    actor: EventActor,
  },
  {
    $id: 'ParticipantStatusEvent',
    title: 'ParticipantStatusEvent',
    description: "A change of a participant's status, approval status or screener state. Events of deleted people are not shown.",
    examples: [exampleParticipantEvent],
  },
);

const exampleStudyEvent = {
  eventId: '77',
  occurredAt: '2026-11-22T10:00:00.000Z',
  studyId: 'stu_01JD0000000000000000000000',
  field: 'status',
  from: 'DRAFT',
  to: 'ACTIVE',
  actor: { kind: 'USER', userId: 'usr_01JD0000000000000000000000' },
};

export const StudyStatusEvent = Type.Object(
  {
    eventId: Type.String({ description: 'Opaque; unique in the service.' }),
    occurredAt: IsoDateTime(),
    studyId: Type.String(),
    field: field(['status'], 'The study field that changed.'),
    from: Type.Union([Type.String(), Type.Null()], { description: 'The status before the change; null for the creation of the study (to DRAFT).' }),
    to: Type.String({ description: 'The status after the change.' }),
    actor: EventActor,
  },
  { $id: 'StudyStatusEvent', title: 'StudyStatusEvent', description: "A change of a study's status (its creation included).", examples: [exampleStudyEvent] },
);

const examplePageInfo = {
  hasNextPage: false,
  hasPreviousPage: false,
  startCursor: 'WyI4NDEiLCIxMDQyIl0.J4mVZbqk2m7b2n8bS1c9xJm3e2Qq0GmC6m2b8c4kWm0',
  endCursor: 'WyI4NDEiLCIxMDQyIl0.J4mVZbqk2m7b2n8bS1c9xJm3e2Qq0GmC6m2b8c4kWm0',
};

const eventPage = <T extends ReturnType<typeof Type.Ref>>(item: T, title: string, example: unknown) =>
  Type.Object({ results: Type.Array(item), pageInfo: Type.Ref(PageInfo) }, { title, examples: [{ results: [example], pageInfo: examplePageInfo }] });

export const ParticipantStatusEventPage = eventPage(Type.Ref(ParticipantStatusEvent), 'ParticipantStatusEventPage', exampleParticipantEvent);
export const StudyStatusEventPage = eventPage(Type.Ref(StudyStatusEvent), 'StudyStatusEventPage', exampleStudyEvent);

export const EventsQuery = Type.Object(
  {
    startCursor: Type.Optional(Type.String({ minLength: 1, maxLength: 2000, description: 'The endCursor of the previous poll.' })),
    size: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 25, description: 'Events per page, 1–100.' })),
    studyId: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: "Only this study's events (404 when the study does not exist). A cursor belongs to the studyId it was read with." })),
  },
  { additionalProperties: false },
);
export type EventsQuery = Static<typeof EventsQuery>;

export const eventSchemas = [ParticipantStatusEvent, StudyStatusEvent];
