import { type Static, Type } from '@sinclair/typebox';
import { Text } from '../../http/schemas.js';
import { exampleParticipant, Participant, ApprovalStatusValue, ParticipantStatusValue, ScreenerStateValue } from './schemas.js';

export const MAX_PARTICIPANTS_PER_ADD = 1000;

const Id = Type.String({ minLength: 1, maxLength: 200 });

export const StudyParams = Type.Object({ studyId: Id });
export const ParticipantParams = Type.Object({ studyId: Id, participantId: Id });

export const AddParticipantsBody = Type.Object(
  {
    personIds: Type.Array(Type.String({ minLength: 1, maxLength: 200 }), {
      minItems: 1,
      maxItems: MAX_PARTICIPANTS_PER_ADD,
      description: `The people to add, 1–${MAX_PARTICIPANTS_PER_ADD}.`,
    }),
  },
  { additionalProperties: false, examples: [{ personIds: ['per_01JD0000000000000000000000', 'per_01JD0000000000000000000001'] }] },
);
export type AddParticipantsBody = Static<typeof AddParticipantsBody>;

const ErrorItem = Type.Object({ message: Type.String(), path: Type.Array(Type.String()) });

export const AddedParticipants = Type.Object(
  {
    results: Type.Array(Type.Ref(Participant), { description: 'The participants added, in the order of personIds.' }),
    errors: Type.Array(ErrorItem, { description: 'One item per person not added, path ["personIds", index].' }),
  },
  {
    examples: [
      {
        results: [{ ...exampleParticipant, status: 'NOT_STARTED', approvalStatus: 'PENDING_REVIEW', screenerState: 'NOT_SENT', invitedToStudyAt: null, approvedAt: null, screenerSentAt: null, interviewStartTime: null, screenerResponseDate: null, note: null, quotaGroup: null, consentFormSubmittedAt: null }],
        errors: [{ message: 'The person has opted out and cannot be added to a study', path: ['personIds', '1'] }],
      },
    ],
  },
);

const DateTimeOrNull = (description: string) => Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description });

export const UpdateParticipantBody = Type.Object(
  {
    status: Type.Optional(ParticipantStatusValue()),
    approvalStatus: Type.Optional(ApprovalStatusValue()),
    screenerState: Type.Optional(ScreenerStateValue()),
    note: Type.Optional(Type.Union([Text({ maxLength: 10_000 }), Type.Null()], { description: 'Replaces the note, which the caller then authors; null removes it.' })),
    rating: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 5 }), Type.Null()], { description: 'A rating of 1–5; null removes it.' })),
    interviewStartTime: Type.Optional(DateTimeOrNull('The booked session; null clears it (refused while the participant is SCHEDULED).')),
    testCompletedAt: Type.Optional(DateTimeOrNull('When the participant completed the test or survey; null clears it.')),
    quotaGroup: Type.Optional(Type.Union([Text({ minLength: 1, maxLength: 200 }), Type.Null()], { description: 'The quota group the participant fills; null removes it.' })),
    sendMessage: Type.Optional(
      Type.Object(
        { templateId: Type.String({ minLength: 1, maxLength: 100, description: 'The message template to send.' }) },
        {
          additionalProperties: false,
          description:
            'With a move to INVITED (`status`) or SCREENER_SENT (`screenerState`) in the same request: sends the person this template, queued in the move\'s transaction. ' +
            'The message is the move\'s contact, not a second one. The answer\'s `message` says what became of it: QUEUED, NOT_SENT (SMTP is not configured), or SKIPPED ' +
            '(`reason`: the person is UNREACHABLE or has no address; or NO_MOVE when the participant already had that status, so nothing moved and nothing is sent). ' +
            'Without such a move in the request, a 400 naming `sendMessage`.',
        },
      ),
    ),
    consentFormSubmitted: Type.Optional(
      Type.Literal(true, {
        description:
          "Records the participant's consent to the study's consent form (the study plan's consentFormId, which may be unset) as a consent submission, once: repeating it changes nothing.",
      }),
    ),
  },
  {
    additionalProperties: false,
    examples: [
      { status: 'SCHEDULED', interviewStartTime: '2026-11-25T14:00:00.000Z' },
      { approvalStatus: 'APPROVED', note: 'Prefers afternoons', rating: 4 },
    ],
  },
);
export type UpdateParticipantBody = Static<typeof UpdateParticipantBody>;
