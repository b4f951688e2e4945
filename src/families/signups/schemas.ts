import { type Static, Type } from '@sinclair/typebox';
import type { SignupApprovalStatus as StoredApprovalStatus } from '../../db/schema.js';
import { IsoDateTime, KeyedRecord, paged, Text } from '../../http/schemas.js';
import { propertyIdKey } from '../people/requests.js';

export const signupApprovalStatuses = ['PENDING_REVIEW', 'APPROVED', 'REJECTED'] as const satisfies readonly StoredApprovalStatus[];

// A string enum rather than a union of literals: Ajv then reports a bad value once, not once per value.
const ApprovalStatus = Type.Unsafe<StoredApprovalStatus>({
  type: 'string',
  enum: [...signupApprovalStatuses],
  description:
    'PENDING_REVIEW: not reviewed yet (every new submission); APPROVED or REJECTED: reviewed. Any value may follow any other (a review can be changed or withdrawn). ' +
    'The review is a mark on the submission: it changes neither the person nor their memberships.',
});

const exampleFormId = 'sgf_wsp_01JD00000000000000000000AB_01JD0000000000000000000042';

const exampleForm = {
  signupFormId: exampleFormId,
  name: 'Join our research panel',
  populationId: 'pop_01JD0000000000000000000000',
  consentFormId: 'consent-2026-v2',
  createdAt: '2026-11-22T10:00:00.000Z',
};

export const SignupForm = Type.Object(
  {
    signupFormId: Type.String({
      description:
        'Public: it goes into the form\'s public link. It is `sgf_<workspaceId>_<ULID>`, so the unauthenticated submission route finds the workspace from the id alone.',
    }),
    name: Type.String(),
    populationId: Type.String({ description: 'The population every person who sends the form joins.' }),
    consentFormId: Type.Union([Type.String(), Type.Null()], {
      description: 'The consent form the signup form presents: the only one a public submission may record a consent to. Null: it presents none, and a submission naming one is a 400.',
    }),
    createdAt: IsoDateTime(),
  },
  { $id: 'SignupForm', title: 'SignupForm', description: 'A public signup form: people send it to join the panel.', examples: [exampleForm] },
);
export type SignupForm = Static<typeof SignupForm>;

export const SignupFormList = paged(Type.Ref(SignupForm), 'SignupFormList', exampleForm);

export const CreateSignupFormBody = Type.Object(
  {
    name: Text({ minLength: 1, maxLength: 200, description: 'Need not be unique.' }),
    populationId: Type.String({ minLength: 1, maxLength: 100, description: 'An existing population (404 naming ["populationId"] otherwise).' }),
    consentFormId: Type.Optional(
      Text({ minLength: 1, maxLength: 200, description: 'The consent form the signup form presents (as the workspace names its consent forms, like a study plan\'s consentFormId). Unset: it presents none.' }),
    ),
  },
  { additionalProperties: false, examples: [{ name: 'Join our research panel', populationId: 'pop_01JD0000000000000000000000' }] },
);
export type CreateSignupFormBody = Static<typeof CreateSignupFormBody>;

const exampleSubmission = {
  submissionId: 'sgs_01JD0000000000000000000007',
  signupFormId: exampleFormId,
  personId: 'per_01JD0000000000000000000000',
  approvalStatus: 'PENDING_REVIEW',
  submittedAt: '2026-11-22T10:05:00.000Z',
  consentSubmissionId: 'cns_01JD0000000000000000000003',
  referralCode: 'SPRING-NEWSLETTER',
  reviewedAt: null,
};

export const SignupSubmission = Type.Object(
  {
    submissionId: Type.String(),
    signupFormId: Type.String(),
    personId: Type.String({ description: 'The person the submission created or updated.' }),
    approvalStatus: ApprovalStatus,
    submittedAt: IsoDateTime(),
    consentSubmissionId: Type.Union([Type.String(), Type.Null()], { description: 'The consent recorded with the submission; null when it carried no consentFormId.' }),
    referralCode: Type.Union([Type.String(), Type.Null()], { description: 'The referral code the submission carried, as sent; null when none.' }),
    reviewedAt: Type.Union([IsoDateTime(), Type.Null()], { description: 'When approvalStatus was last set to APPROVED or REJECTED; null while PENDING_REVIEW.' }),
  },
  {
    $id: 'SignupSubmission',
    title: 'SignupSubmission',
    description: "One sending of a signup form. Submissions of deleted people are not found. Nothing in it is personal data, so it is the same for every token.",
    examples: [exampleSubmission],
  },
);
export type SignupSubmission = Static<typeof SignupSubmission>;

export const SignupFormParams = Type.Object({ signupFormId: Type.String({ minLength: 1, maxLength: 200 }) });
export const SubmissionParams = Type.Object({
  signupFormId: Type.String({ minLength: 1, maxLength: 200 }),
  submissionId: Type.String({ minLength: 1, maxLength: 100 }),
});

export const ReviewSubmissionBody = Type.Object(
  { approvalStatus: ApprovalStatus },
  { additionalProperties: false, examples: [{ approvalStatus: 'APPROVED' }] },
);
export type ReviewSubmissionBody = Static<typeof ReviewSubmissionBody>;

/**
 * A referral code is a campaign's code, not free text: 1–100 letters, digits, ".", "_" or "-",
 * starting with a letter or digit. With no spaces and no "@" it refuses an email address or a
 * full name written with spaces; a name written as one word ("jane.doe") still fits, so the shape
 * keeps free text out, not every name.
 */
export const REFERRAL_CODE_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$';

export const PublicSubmissionBody = Type.Object(
  {
    email: Type.String({ format: 'email', maxLength: 320, description: 'Finds the person (case-insensitively) or makes a new one.', examples: ['grace@example.org'] }),
    firstName: Type.Optional(Text({ minLength: 1, maxLength: 200 })),
    lastName: Type.Optional(Text({ minLength: 1, maxLength: 200 })),
    phone: Type.Optional(Text({ minLength: 1, maxLength: 40 })),
    referralCode: Type.Optional(
      Type.String({ pattern: REFERRAL_CODE_PATTERN, description: 'A campaign or referrer code: 1–100 letters, digits, ".", "_" or "-", starting with a letter or digit.' }),
    ),
    consentFormId: Type.Optional(
      Text({
        minLength: 1,
        maxLength: 200,
        description:
          "The consent form the person agreed to on the form: it must be the one the signup form presents (400 naming [\"consentFormId\"] otherwise, or when it presents none). " +
          "A consent submission is recorded, and its id becomes the submission's consentSubmissionId, only when the submission made a new person: a known email proves nothing about who sent the form, so a known person's consent is left for the workspace to record.",
      }),
    ),
    properties: Type.Optional(
      KeyedRecord(propertyIdKey, Type.Unknown(), {
        maxProperties: 200,
        description:
          'Custom property values by property id, checked exactly as POST /people checks them (an unknown id is a 404, a value of the wrong shape a 400, each naming ["properties", propertyId]; null is not a value here).',
      }),
    ),
  },
  {
    additionalProperties: false,
    examples: [{ email: 'grace@example.org', firstName: 'Grace', lastName: 'Hopper', referralCode: 'SPRING-NEWSLETTER', consentFormId: 'consent-2026-v2' }],
  },
);
export type PublicSubmissionBody = Static<typeof PublicSubmissionBody>;

export const SubmissionCreated = Type.Object({ submissionId: Type.String() }, { examples: [{ submissionId: 'sgs_01JD0000000000000000000007' }] });

export const signupSchemas = [SignupForm, SignupSubmission];
