import { type Static, Type } from '@sinclair/typebox';
import type { ConsentSource as StoredConsentSource } from '../../db/schema.js';
import { IsoDateTime, ListQuery, paged, Text } from '../../http/schemas.js';

/** Every source a consent row may hold; SIGNUP_FORM is the public signup route's alone. */
export const consentSources = ['API', 'SIGNUP_FORM', 'PAPER', 'EMAIL', 'VERBAL', 'IMPORT', 'OTHER', 'PARTICIPANT_PAGE'] as const satisfies readonly StoredConsentSource[];
/** The sources a token may record (SIGNUP_FORM and PARTICIPANT_PAGE are refused: the public signup route and the participant's page record those). */
export const recordableSources = consentSources.filter((source) => source !== 'SIGNUP_FORM' && source !== 'PARTICIPANT_PAGE');

export const sourceDescription =
  'How the consent was given: API (recorded through the API with no more detail; also a participant updated with `consentFormSubmitted: true`), ' +
  'SIGNUP_FORM (sent with a public signup form; recorded by that route only), PAPER, EMAIL, VERBAL, IMPORT (taken over from another system), OTHER, ' +
  "PARTICIPANT_PAGE (signed by the person on the participant's consent page, through their link; recorded by that page only).";

/** Ids are bounded like every other id in a request; the NUL character is refused by validation. */
const Id = (description: string) => Type.String({ minLength: 1, maxLength: 200, description });

const exampleConsent = {
  consentSubmissionId: 'cns_01JD0000000000000000000003',
  personId: 'per_01JD0000000000000000000000',
  studyId: 'stu_01JD0000000000000000000000',
  signupFormId: null,
  consentFormId: 'consent-2026-v2',
  formVersion: '2.1',
  textSha256: '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
  source: 'PAPER',
  submittedAt: '2026-11-28T09:30:00.000Z',
  recordedByUserId: 'usr_01JD0000000000000000000000',
  createdAt: '2026-11-28T10:00:00.000Z',
  signedName: null,
  choices: null,
  withdrawnAt: null,
};

export const ConsentSubmission = Type.Object(
  {
    consentSubmissionId: Type.String(),
    personId: Type.String({ description: 'The person who consented.' }),
    studyId: Type.Union([Type.String(), Type.Null()], { description: "The study whose consent form was agreed to; null for a signup form's consent." }),
    signupFormId: Type.Union([Type.String(), Type.Null()], { description: 'The signup form the consent was given on; null for a study consent.' }),
    consentFormId: Type.Union([Type.String(), Type.Null()], {
      description: "The consent form agreed to, as the workspace names it: as recorded, or for a study the study plan's `consentFormId` when none was given; null when neither.",
    }),
    formVersion: Type.Union([Type.String(), Type.Null()], { description: 'The version of the form, as recorded.' }),
    textSha256: Type.Union([Type.String(), Type.Null()], { description: 'Lower-case hex SHA-256 of the consent text shown (UTF-8, as given); the text itself is not kept.' }),
    source: Type.Unsafe<StoredConsentSource>({ type: 'string', enum: [...consentSources], description: sourceDescription }),
    submittedAt: IsoDateTime('When the consent was given.'),
    recordedByUserId: Type.Union([Type.String(), Type.Null()], { description: 'The user whose token recorded it; null for a public signup.' }),
    createdAt: IsoDateTime('When it was recorded.'),
    signedName: Type.Union([Type.String(), Type.Null()], {
      description: 'The full name the person typed when signing on the participant\'s page (PARTICIPANT_PAGE); null for other sources. Personal data: "***" for tokens without the personal-data right.',
    }),
    choices: Type.Union([Type.Record(Type.String(), Type.Boolean()), Type.Null()], {
      description: "Each optional choice of the version signed, by its id: true when the person agreed (e.g. to be recorded). Null for sources other than PARTICIPANT_PAGE.",
    }),
    withdrawnAt: Type.Union([IsoDateTime(), Type.Null()], { description: "When the person withdrew the consent (the withdrawal link of their signed copy's email); null while it stands." }),
  },
  {
    $id: 'ConsentSubmission',
    title: 'ConsentSubmission',
    description:
      "A person's consent: for a study's consent form, or on a signup form (exactly one of `studyId` and `signupFormId`). " +
      'Consents of deleted people are not found, and the deletion purge erases them. Only `signedName` is personal data (masked for tokens without the personal-data right).',
    examples: [exampleConsent],
  },
);
export type ConsentSubmission = Static<typeof ConsentSubmission>;

export const ConsentSubmissionList = paged(Type.Ref(ConsentSubmission), 'ConsentSubmissionList', exampleConsent);

export const RecordConsentBody = Type.Object(
  {
    personId: Id('The person who consented: a live person of the workspace (404 naming ["personId"] otherwise, also for a deleted person).'),
    studyId: Type.Optional(
      Id(
        'The study whose consent form the person agreed to. Give this or `signupFormId`, not both. ' +
          "When the person is a participant of the study, the participant's `consentFormSubmittedAt` is set (to the earliest consent recorded) in the same transaction: PARTICIPANT.CONSENT_FORM_SUBMITTED.",
      ),
    ),
    signupFormId: Type.Optional(Id('The signup form the person consented on. Give this or `studyId`, not both.')),
    consentFormId: Type.Optional(Text({ minLength: 1, maxLength: 200, description: "The consent form agreed to. For a study, the study plan's `consentFormId` when not given." })),
    formVersion: Type.Optional(Text({ minLength: 1, maxLength: 100, description: 'The version of the form agreed to, as the workspace names it.' })),
    textSha256: Type.Optional(
      Type.String({ pattern: '^[0-9a-fA-F]{64}$', description: 'Hex SHA-256 of the consent text shown (stored lower-case). Give this or `text`, not both.' }),
    ),
    text: Type.Optional(
      Text({
        minLength: 1,
        maxLength: 100_000,
        description: 'The consent text shown: its SHA-256 (of its UTF-8 bytes, exactly as given) is recorded as `textSha256`, and the text itself is not kept. Give this or `textSha256`, not both.',
      }),
    ),
    submittedAt: Type.Optional(IsoDateTime('When the consent was given (a paper form signed last week); now when not given. At most 5 minutes ahead of the service clock.')),
    source: Type.Optional(
      Type.Unsafe<(typeof recordableSources)[number]>({ type: 'string', enum: [...recordableSources], default: 'API', description: `${sourceDescription} Default API.` }),
    ),
  },
  {
    additionalProperties: false,
    examples: [{ personId: 'per_01JD0000000000000000000000', studyId: 'stu_01JD0000000000000000000000', formVersion: '2.1', text: 'I agree to take part in this study…', source: 'PAPER', submittedAt: '2026-11-28T09:30:00.000Z' }],
  },
);
export type RecordConsentBody = Static<typeof RecordConsentBody>;

export const ConsentListQuery = Type.Object(
  {
    ...ListQuery.properties,
    personId: Type.Optional(Id("Only this person's consents (404 naming [\"personId\"] when no live person of the workspace has it).")),
    studyId: Type.Optional(Id('Only consents for this study (404 naming ["studyId"] when the workspace has no such study).')),
    signupFormId: Type.Optional(Id('Only consents given on this signup form (404 naming ["signupFormId"] when the workspace has no such form).')),
  },
  { additionalProperties: false },
);
export type ConsentListQuery = Static<typeof ConsentListQuery>;

export const ConsentParams = Type.Object({ consentSubmissionId: Type.String({ minLength: 1, maxLength: 100 }) });

export const consentSchemas = [ConsentSubmission];
