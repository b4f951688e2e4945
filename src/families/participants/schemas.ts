import { Type } from '@sinclair/typebox';
import { maskingNote } from '../../http/masking.js';
import {
  approvalMeaning,
  approvalRules,
  approvalStatuses,
  describeStateField,
  participantStatuses,
  screenerMeaning,
  screenerRules,
  screenerStates,
  statusMeaning,
  statusRules,
} from './states.js';

// A string enum rather than a union of literals: Ajv reports a bad value of an anyOf once per
// branch, which would give the client one error item per allowed value instead of one.
const literals = <T extends string>(values: readonly T[], description: string) => Type.Unsafe<T>({ type: 'string', enum: [...values], description });

/*
 * The descriptions of the three state fields are written from the tables of states.ts, the same
 * tables refusedMove enforces: the document cannot say one thing while the service does another.
 */
export const statusDescription = describeStateField(statusMeaning, statusRules);
export const approvalStatusDescription = describeStateField(approvalMeaning, approvalRules);
export const screenerStateDescription = describeStateField(screenerMeaning, screenerRules);

export const ParticipantStatusValue = (description = statusDescription) => literals(participantStatuses, description);
export const ApprovalStatusValue = (description = approvalStatusDescription) => literals(approvalStatuses, description);
export const ScreenerStateValue = (description = screenerStateDescription) => literals(screenerStates, description);

const nullableDateTime = (description: string) => Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description });

export const ParticipantNote = Type.Object(
  {
    note: Type.String(),
    createdByUserId: Type.Union([Type.String(), Type.Null()], { description: 'The user who wrote the note (null if that is not known).' }),
  },
  { $id: 'ParticipantNote', title: 'ParticipantNote' },
);

export const exampleParticipant = {
  participantId: 'ptc_01JD0000000000000000000000',
  personId: 'per_01JD0000000000000000000000',
  studyId: 'stu_01JD0000000000000000000000',
  email: 'grace@example.org',
  phone: '+44 20 7946 0000',
  additionalEmails: [],
  additionalPhones: [],
  status: 'SCHEDULED',
  statusBeforeHidden: null,
  invitedToStudyAt: '2026-11-22T10:00:00.000Z',
  approvedAt: '2026-11-22T09:30:00.000Z',
  screenerSentAt: '2026-11-21T16:00:00.000Z',
  testCompletedAt: null,
  interviewStartTime: '2026-11-25T14:00:00.000Z',
  screenerResponseDate: '2026-11-21T18:12:00.000Z',
  addedToStudyAt: '2026-11-21T15:00:00.000Z',
  approvalStatus: 'APPROVED',
  screenerState: 'QUALIFIED',
  note: { note: 'Prefers afternoons', createdByUserId: 'usr_01JD0000000000000000000000' },
  rating: null,
  quotaGroup: 'Frequent shoppers',
  consentFormSubmittedAt: '2026-11-22T11:00:00.000Z',
};

/** A person taking part in a study (the reference's Participant, plus statusBeforeHidden, rating, quotaGroup and consentFormSubmittedAt). */
export const Participant = Type.Object(
  {
    participantId: Type.String(),
    personId: Type.String(),
    studyId: Type.String(),
    email: Type.Union([Type.String(), Type.Null()], { description: "The person's primary email; null once their personal data is erased. Masked (\"***@***\") without the personal-data right." }),
    phone: Type.Union([Type.String(), Type.Null()], { description: "The person's primary phone, or null. Masked (\"***\") without the personal-data right." }),
    additionalEmails: Type.Array(Type.String()),
    additionalPhones: Type.Array(Type.String()),
    status: ParticipantStatusValue(),
    statusBeforeHidden: Type.Union([ParticipantStatusValue(), Type.Null()], {
      description: 'While the status is HIDDEN: the status the participant had, the only one unhiding may return to (PATCH status). Null otherwise.',
    }),
    invitedToStudyAt: nullableDateTime('When the participant was first invited (status INVITED).'),
    approvedAt: nullableDateTime('When the participant was last approved (approvalStatus APPROVED).'),
    screenerSentAt: nullableDateTime('When the screener was sent (screenerState SCREENER_SENT).'),
    testCompletedAt: nullableDateTime('When the participant completed the test or survey: as given, or the time the status became COMPLETED in an unmoderated test or survey.'),
    interviewStartTime: nullableDateTime('The booked session (interview studies).'),
    screenerResponseDate: nullableDateTime('When the participant answered the screener (screenerState SUBMITTED).'),
    addedToStudyAt: Type.String({ format: 'date-time' }),
    approvalStatus: ApprovalStatusValue(),
    screenerState: ScreenerStateValue(),
    note: Type.Union([Type.Ref(ParticipantNote), Type.Null()], { description: "The study team's note on the participant, with its author; null when none." }),
    rating: Type.Union([Type.Integer({ minimum: 1, maximum: 5 }), Type.Null()], { description: "The study team's rating of the participant, 1–5 (PARTICIPANT_RATING)." }),
    quotaGroup: Type.Union([Type.String(), Type.Null()], { description: 'The quota group the participant fills (PARTICIPANT filter STUDY_QUOTA_GROUP).' }),
    consentFormSubmittedAt: nullableDateTime("When the participant's consent to the study's consent form was recorded (PARTICIPANT filter CONSENT_FORM_SUBMITTED)."),
  },
  {
    $id: 'Participant',
    title: 'Participant',
    description: `A person taking part in a study. ${maskingNote}`,
    examples: [exampleParticipant],
  },
);

export const participantSchemas = [ParticipantNote, Participant];

/** PATCH's answer: the Participant, and (when the request asked to send a message with its move) what became of the message. */
export const UpdatedParticipant = Type.Object(
  {
    ...Participant.properties,
    message: Type.Optional(
      Type.Object(
        {
          messageId: Type.Union([Type.String(), Type.Null()], { description: 'The message (GET /messages/{messageId}); null when none was made.' }),
          status: Type.Union([Type.Literal('QUEUED'), Type.Literal('NOT_SENT'), Type.Literal('SKIPPED')]),
          reason: Type.Union([Type.String(), Type.Null()], { description: 'Why NOT_SENT or SKIPPED (UNREACHABLE, NO_EMAIL, NO_MOVE).' }),
        },
        { description: 'Only when the request gave `sendMessage`.' },
      ),
    ),
  },
  { title: 'UpdatedParticipant' },
);
