import { type Static, type TObject, Type } from '@sinclair/typebox';

/**
 * Every event a webhook endpoint can subscribe to, with the schema of its `data`. Payloads carry
 * ids and states, never personal data: a receiver that needs a person's details reads them with
 * a token that may see them, so masking rules hold for pushed events as for the API.
 */
const id = (description: string) => Type.String({ description });
const participantChange = (field: string, description: string) =>
  Type.Object(
    {
      studyId: id('The study.'),
      participantId: id('The participant.'),
      personId: id('The participant\'s person.'),
      from: Type.Union([Type.String(), Type.Null()], { description: `The ${field} before; null for none.` }),
      to: Type.String({ description: `The ${field} now.` }),
    },
    { description },
  );

const bookingChange = (description: string) =>
  Type.Object(
    {
      bookingId: id('The booking: read it with GET /studies/{studyId}/bookings/{bookingId}.'),
      studyId: id('The study.'),
      participantId: id('The participant.'),
      personId: id("The participant's person."),
      sessionId: id('The session.'),
      hostUserId: id('The host.'),
      startTime: Type.String({ format: 'date-time', description: 'When the session starts.' }),
      endTime: Type.String({ format: 'date-time', description: 'When it ends.' }),
      by: Type.Union([Type.Literal('PERSON'), Type.Literal('TEAM')], { description: 'Who made the change.' }),
    },
    { description },
  );

export const eventCatalogue = {
  'participant.status_changed': participantChange('status', 'A participant\'s status moved (INVITED, SCHEDULED, COMPLETED, NO_SHOW, CANCELED, HIDDEN…).'),
  'participant.approval_changed': participantChange('approval status', 'A participant\'s approval status moved (PENDING_REVIEW, APPROVED, REJECTED).'),
  'participant.screener_changed': participantChange('screener state', 'A participant\'s screener state moved (SCREENER_SENT, SUBMITTED, QUALIFIED, DISQUALIFIED…).'),
  'study.status_changed': Type.Object(
    {
      studyId: id('The study.'),
      from: Type.Union([Type.String(), Type.Null()], { description: 'The status before; null when the study was just created.' }),
      to: Type.String({ description: 'The status now: DRAFT, ACTIVE, PAUSED or CLOSED.' }),
    },
    { description: 'A study was created (from null to DRAFT) or its status moved.' },
  ),
  'incentive.status_changed': Type.Object(
    {
      incentiveId: id('The incentive.'),
      studyId: id('Its study.'),
      participantId: id('Its participant.'),
      personId: id('Its recipient.'),
      type: Type.String({ description: 'The incentive type.' }),
      amountCents: Type.Integer({ description: "The amount, in the currency's minor unit." }),
      currency: Type.String({ description: 'ISO 4217 code.' }),
      from: Type.Union([Type.String(), Type.Null()], { description: 'The status before; null when the incentive was just sent.' }),
      to: Type.String({ description: 'The status now: UNCLAIMED, SENT, CLAIMED, ERROR (failed), CANCELED or EXPIRED.' }),
      failureReason: Type.Union([Type.String(), Type.Null()], { description: 'Why it failed, for ERROR; otherwise null.' }),
    },
    { description: 'An incentive was sent, or its status moved: claimed, failed (ERROR), canceled, expired.' },
  ),
  'incentive.approval_changed': Type.Object(
    {
      incentiveId: id('The incentive.'),
      studyId: id('Its study.'),
      participantId: id('Its participant.'),
      personId: id('Its recipient.'),
      amountCents: Type.Integer({ description: "The amount, in the currency's minor unit." }),
      currency: Type.String({ description: 'ISO 4217 code.' }),
      from: Type.Union([Type.String(), Type.Null()], { description: 'The approval state before; null when the incentive was just sent above the threshold.' }),
      to: Type.String({ description: 'The approval state now: PENDING, APPROVED, REFUSED or WITHDRAWN.' }),
      decidedByUserId: Type.Union([Type.String(), Type.Null()], { description: 'Who approved or refused; null otherwise.' }),
    },
    { description: "An incentive above the workspace's approval threshold waits for approval (from null to PENDING), or was approved, refused or withdrawn." },
  ),
  'person.opted_out': Type.Object({ personId: id('The person.') }, { description: 'A person opted out of contact.' }),
  'person.opted_in': Type.Object({ personId: id('The person.') }, { description: 'A person who had opted out is contactable again.' }),
  'person.deleted': Type.Object({ personId: id('The person.') }, { description: 'A person was deleted (erased by the purge afterwards).' }),
  'person.updated': Type.Object(
    {
      personId: id('The person.'),
      fields: Type.Array(Type.String(), { description: 'What changed, by name: `email`, `firstName`, `lastName`, `phone`, `additionalEmails`, `additionalPhones`, `populationIds`, or `properties.<propertyId>`. Never the values.' }),
      actor: Type.Union([Type.Literal('TEAM'), Type.Literal('PERSON')], { description: 'TEAM: through the API (PATCH /people/{personId}); PERSON: the person on their own page.' }),
    },
    { description: "A person's fields were changed." },
  ),
  'participant.messages_stopped': Type.Object(
    {
      studyId: id('The study.'),
      participantId: id('The participant.'),
      personId: id("The participant's person."),
      actor: Type.Literal('PERSON', { description: 'The person, on their own page.' }),
    },
    { description: 'The person asked for no more messages about this study: messages to this participant are skipped as for an opted-out person.' },
  ),
  'import.completed': Type.Object(
    {
      importId: id('The import.'),
      importedCount: Type.Integer({ description: 'Rows imported.' }),
      errorCount: Type.Integer({ description: 'Rows refused; read them with GET /imports/{importId}.' }),
    },
    { description: 'An import finished: every row was read.' },
  ),
  'import.failed': Type.Object(
    { importId: id('The import.'), error: Type.String({ description: 'Why it stopped.' }) },
    { description: 'An import stopped before reading every row.' },
  ),
  'signup.submitted': Type.Object(
    {
      signupFormId: id('The signup form.'),
      submissionId: id('The submission.'),
      personId: id('The person it created or filled.'),
    },
    { description: 'Someone submitted a public signup form.' },
  ),
  'consent.submitted': Type.Object(
    {
      consentSubmissionId: id('The consent submission: read it with GET /consent-submissions/{consentSubmissionId}.'),
      personId: id('The person who consented.'),
      studyId: Type.Union([Type.String(), Type.Null()], { description: 'The study consented to; null for a signup form\'s consent.' }),
      signupFormId: Type.Union([Type.String(), Type.Null()], { description: 'The signup form consented on; null for a study consent.' }),
    },
    { description: 'A consent was recorded: through POST /consent-submissions, with a public signup form, or by a participant update (`consentFormSubmitted`).' },
  ),
  'consent.withdrawn': Type.Object(
    {
      consentSubmissionId: id('The consent withdrawn: its `withdrawnAt` is set.'),
      personId: id('The person who withdrew it.'),
      studyId: id('The study.'),
      participantId: Type.Union([Type.String(), Type.Null()], { description: "The person's participant of the study; null when they take no part in it any more." }),
    },
    { description: "A person withdrew a study consent from the withdrawal link of their signed copy's email (the participant's page)." },
  ),
  'booking.created': bookingChange('A session was booked: by the person on their page (`by` PERSON) or through the API (TEAM).'),
  'booking.moved': bookingChange('A booking moved to another time (or host): the times are the new ones.'),
  'booking.canceled': bookingChange('A booking was canceled and its place freed: the times are those of the session canceled.'),
  'webhook.test': Type.Object(
    { endpointId: id('The endpoint tested.'), message: Type.String() },
    { description: 'Sent by POST /webhook-endpoints/{endpointId}/test, to that endpoint only; never subscribed to.' },
  ),
} satisfies Record<string, TObject>;

export type EventType = keyof typeof eventCatalogue;
export type EventData<Type extends EventType> = Static<(typeof eventCatalogue)[Type]>;

/** Types an endpoint may subscribe to: every one but the test event. */
export const subscribableEventTypes = (Object.keys(eventCatalogue) as EventType[]).filter((type) => type !== 'webhook.test');

/** One event, as a family hands it to the outbox. */
export type OutboxEvent = { [Type in EventType]: { type: Type; data: EventData<Type> } }[EventType];

/**
 * The body every delivery carries (the Standard Webhooks shape): the type, when the change
 * happened, and its data. The message id travels in the `webhook-id` header.
 */
export function eventBody(event: OutboxEvent, occurredAt: string) {
  return { type: event.type, timestamp: occurredAt, data: event.data };
}
