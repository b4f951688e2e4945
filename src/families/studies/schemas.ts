import { type Static, Type } from '@sinclair/typebox';
import { examplePageInfo, IsoDate, PageInfo, Text } from '../../http/schemas.js';

// A string enum rather than a union of literals: Ajv reports a bad value of an anyOf once per
// branch, which would give the client one error item per allowed value instead of one.
const literals = <T extends string>(values: readonly T[]) => Type.Unsafe<T>({ type: 'string', enum: [...values] });

export const studyTypes = ['SURVEY', 'INTERVIEWS', 'UNMODERATED_TEST', 'GROUP_INTERVIEW'] as const;
export const studyStatuses = ['DRAFT', 'ACTIVE', 'PAUSED', 'CLOSED'] as const;
export const recruitmentStrategies = ['IN_SERVICE', 'EXTERNAL'] as const;
export const panelProviders = ['PROVIDER_ONE', 'PROVIDER_TWO'] as const;
export const questionTypes = ['SHORT_FORM', 'LONG_FORM', 'SINGLE_SELECT', 'MULTI_SELECT', 'NUMBER', 'DATE', 'EMAIL', 'PHONE_NUMBER', 'SCALE'] as const;
export const questionCategories = ['simple', 'contact', 'consent'] as const;

export const StudyType = literals(studyTypes);
export const StudyStatus = literals(studyStatuses);
export const RecruitmentStrategy = literals(recruitmentStrategies);
export const PanelProvider = literals(panelProviders);

const IncentiveInput = Type.Object(
  {
    incentiveBudgetId: Type.Optional(Text({ minLength: 1, maxLength: 200 })),
    amount: Type.Optional(Type.Number({ minimum: 0, maximum: 1_000_000, description: 'Incentive per participant, in the currency\'s major unit.' })),
    customIncentiveId: Type.Optional(Text({ minLength: 1, maxLength: 200 })),
    defaultCustomIncentiveValue: Type.Optional(Text({ maxLength: 500 })),
  },
  { additionalProperties: false, description: 'Input: incentiveType and currency are derived and appear only in responses.' },
);

/** The study-plan fields a client may set (E19 and E3 accept the same set). */
const studyPlanInputProperties = {
  name: Type.Optional(Text({ minLength: 1, maxLength: 200, description: 'Internal name. Required unless the study is duplicated or made from a template.' })),
  externalName: Type.Optional(Text({ maxLength: 200, description: 'The name participants see.' })),
  description: Type.Optional(Text({ maxLength: 10_000 })),
  externalDescription: Type.Optional(Text({ maxLength: 10_000 })),
  startDate: Type.Optional(IsoDate()),
  endDate: Type.Optional(IsoDate('On or after startDate.')),
  researchPlanUrl: Type.Optional(Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2000, description: 'An http(s) URL.' })),
  participationLimit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
  consentFormId: Type.Optional(Text({ minLength: 1, maxLength: 200 })),
  incentive: Type.Optional(IncentiveInput),
  includeScreener: Type.Optional(Type.Boolean({ description: 'true gives the study an empty screener of type SERVICE (whatever the study type) if it has none.' })),
  brandingConfigId: Type.Optional(Text({ minLength: 1, maxLength: 200 })),
  language: Type.Optional(Type.String({ pattern: '^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$', description: 'A short language code.', examples: ['en', 'pt-BR'] })),
  scheduler: Type.Optional(
    Type.Object({ interviewDurationMinutes: Type.Optional(Type.Integer({ minimum: 5, maximum: 480 })) }, { additionalProperties: false }),
  ),
};

export const StudyPlanInput = Type.Object(studyPlanInputProperties, { additionalProperties: false });
export type StudyPlanInput = Static<typeof StudyPlanInput>;

export const StudyPlan = Type.Object(
  {
    name: Type.Optional(Type.String()),
    externalName: Type.Optional(Type.String()),
    description: Type.Optional(Type.String()),
    externalDescription: Type.Optional(Type.String()),
    startDate: Type.Optional(Type.String({ format: 'date' })),
    endDate: Type.Optional(Type.String({ format: 'date' })),
    researchPlanUrl: Type.Optional(Type.String()),
    participationLimit: Type.Optional(Type.Number()),
    consentFormId: Type.Optional(Type.String()),
    incentive: Type.Optional(
      Type.Object({
        incentiveType: Type.Optional(literals(['MONEY_OR_GIFT_CARD', 'CUSTOM'] as const)),
        incentiveBudgetId: Type.Optional(Type.String()),
        amount: Type.Optional(Type.Number()),
        customIncentiveId: Type.Optional(Type.String()),
        defaultCustomIncentiveValue: Type.Optional(Type.String()),
        currency: Type.Optional(Type.Literal('USD')),
      }),
    ),
    includeScreener: Type.Boolean(),
    brandingConfigId: Type.Optional(Type.String()),
    language: Type.Optional(Type.String()),
    scheduler: Type.Optional(Type.Object({ interviewDurationMinutes: Type.Optional(Type.Number()) })),
  },
  { $id: 'StudyPlan', title: 'StudyPlan' },
);

export const Owner = Type.Object(
  { userId: Type.String(), emailAccountId: Type.String(), fullname: Type.String(), email: Type.String() },
  { $id: 'StudyOwner', title: 'StudyOwner' },
);

const nullableString = Type.Union([Type.String(), Type.Null()]);

export const ScreenerQuestion = Type.Object(
  {
    id: Type.String(),
    workspaceId: Type.String(),
    category: Type.String(),
    type: Type.String(),
    name: Type.String(),
    isRequired: Type.Boolean(),
    description: nullableString,
    mappedToPropertyId: nullableString,
    questionTemplateId: nullableString,
  },
  { $id: 'ScreenerQuestion', title: 'ScreenerQuestion' },
);

export const Screener = Type.Object(
  {
    id: Type.String(),
    workspaceId: Type.String(),
    studyId: Type.String(),
    type: literals(['SERVICE', 'EXTERNAL_SURVEY'] as const),
    showSchedulerToQualified: Type.Boolean(),
    qualifyByDefault: Type.Boolean(),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
    questions: Type.Array(Type.Ref(ScreenerQuestion)),
    externalSurveyId: nullableString,
    surveyPlatformCollectorId: nullableString,
    externalSurveySetupStatus: nullableString,
    externalSurveySetupErrorCode: nullableString,
    externalSurveySetupUpdatedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    customLinkUrl: nullableString,
    customLinkTokensJson: nullableString,
  },
  {
    $id: 'Screener',
    title: 'Screener',
    description:
      'SERVICE screeners are built and answered in this service; includeScreener true gives any study, a SURVEY study too, an empty one. ' +
      'EXTERNAL_SURVEY screeners are hosted by a survey platform; only a SURVEY study keeps one (a duplicate or a template carries it only to a SURVEY study).',
    examples: [
      {
        id: 'scr_01JD0000000000000000000000',
        workspaceId: 'wsp_01JD0000000000000000000000',
        studyId: 'stu_01JD0000000000000000000000',
        type: 'SERVICE',
        showSchedulerToQualified: true,
        qualifyByDefault: false,
        createdAt: '2026-11-22T10:00:00.000Z',
        updatedAt: '2026-11-22T10:05:00.000Z',
        questions: [
          {
            id: 'sqn_01JD0000000000000000000000',
            workspaceId: 'wsp_01JD0000000000000000000000',
            category: 'simple',
            type: 'SINGLE_SELECT',
            name: 'How often do you shop online?',
            isRequired: true,
            description: null,
            mappedToPropertyId: null,
            questionTemplateId: null,
          },
        ],
        externalSurveyId: null,
        surveyPlatformCollectorId: null,
        externalSurveySetupStatus: null,
        externalSurveySetupErrorCode: null,
        externalSurveySetupUpdatedAt: null,
        customLinkUrl: null,
        customLinkTokensJson: null,
      },
    ],
  },
);

const studyProperties = {
  studyId: Type.String(),
  studyType: StudyType,
  recruitmentStrategy: RecruitmentStrategy,
  recruitmentPanelProvider: Type.Union([PanelProvider, Type.Null()], { description: 'Set only for EXTERNAL recruitment.' }),
  status: StudyStatus,
  studyPlan: Type.Ref(StudyPlan),
  createdAt: Type.String({ format: 'date-time' }),
  createdFromTemplateId: nullableString,
  teamId: nullableString,
  populationId: nullableString,
  owners: Type.Array(Type.Ref(Owner)),
};

const exampleStudy = {
  studyId: 'stu_01JD0000000000000000000000',
  studyType: 'INTERVIEWS',
  recruitmentStrategy: 'IN_SERVICE',
  recruitmentPanelProvider: null,
  status: 'DRAFT',
  studyPlan: { name: 'Checkout interviews', externalName: 'Tell us about paying online', includeScreener: false, language: 'en' },
  createdAt: '2026-11-22T10:00:00.000Z',
  createdFromTemplateId: null,
  teamId: null,
  populationId: null,
  owners: [{ userId: 'usr_01JD0000000000000000000000', emailAccountId: 'eac_01JD0000000000000000000000', fullname: 'Ada Lovelace', email: 'ada@example.org' }],
};

/** A study as single-study responses give it: with its screener (null without one, or without the right). */
export const Study = Type.Object(
  { ...studyProperties, screener: Type.Union([Type.Ref(Screener), Type.Null()]) },
  { $id: 'Study', title: 'Study', examples: [{ ...exampleStudy, screener: null }] },
);

/** A study in lists and in the status-change response: no screener field. */
export const StudySummary = Type.Object(studyProperties, { $id: 'StudySummary', title: 'StudySummary', examples: [exampleStudy] });

export const StudyList = Type.Object(
  { results: Type.Array(Type.Ref(StudySummary)), total: Type.Integer(), pageInfo: Type.Ref(PageInfo) },
  { title: 'StudyList', examples: [{ results: [exampleStudy], total: 26, pageInfo: examplePageInfo }] },
);

export const StudyParams = Type.Object({ studyId: Type.String({ minLength: 1, maxLength: 200 }) });

export const CreateStudyBody = Type.Object(
  {
    studyPlan: StudyPlanInput,
    studyType: Type.Optional(StudyType),
    recruitmentStrategy: Type.Optional(RecruitmentStrategy),
    recruitmentPanelProvider: Type.Optional(PanelProvider),
    idOfStudyToDuplicate: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    studyTemplateId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    owners: Type.Optional(
      Type.Object(
        { userIds: Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { minItems: 1, maxItems: 50, uniqueItems: true }) },
        { additionalProperties: false, description: 'The users who own the study; defaults to the caller.' },
      ),
    ),
    teamId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    populationId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  },
  {
    additionalProperties: false,
    examples: [{ studyPlan: { name: 'Checkout interviews', participationLimit: 12 }, studyType: 'INTERVIEWS', recruitmentStrategy: 'IN_SERVICE' }],
  },
);
export type CreateStudyBody = Static<typeof CreateStudyBody>;

export const UpdateStudyBody = Type.Object(
  { studyPlan: Type.Optional(StudyPlanInput) },
  { additionalProperties: false, examples: [{ studyPlan: { participationLimit: 20, incentive: { amount: 75 } } }] },
);

export const StatusBody = Type.Object(
  { status: literals(['PAUSED', 'CLOSED'] as const) },
  { additionalProperties: false, examples: [{ status: 'PAUSED' }] },
);

export const QuestionInput = Type.Object(
  {
    name: Text({ minLength: 1, maxLength: 1000 }),
    type: literals(questionTypes),
    category: Type.Optional(literals(questionCategories)),
    isRequired: Type.Optional(Type.Boolean({ default: false })),
    description: Type.Optional(Text({ maxLength: 5000 })),
    mappedToPropertyId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    questionTemplateId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  },
  { additionalProperties: false },
);

export const PutScreenerBody = Type.Object(
  {
    qualifyByDefault: Type.Optional(Type.Boolean()),
    showSchedulerToQualified: Type.Optional(Type.Boolean()),
    questions: Type.Array(QuestionInput, { maxItems: 200 }),
  },
  { additionalProperties: false, examples: [{ qualifyByDefault: false, questions: [{ name: 'How often do you shop online?', type: 'SHORT_FORM', category: 'simple', isRequired: true }] }] },
);
export type PutScreenerBody = Static<typeof PutScreenerBody>;

export const ListStudiesQuery = Type.Object(
  {
    startCursor: Type.Optional(Type.String({ minLength: 1, maxLength: 2000 })),
    size: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 25 })),
    status: Type.Optional(StudyStatus),
    studyType: Type.Optional(StudyType),
  },
  { additionalProperties: false },
);

const exampleTemplate = {
  studyTemplateId: 'stt_01JD0000000000000000000000',
  name: 'Standard 30-minute interview',
  studyType: 'INTERVIEWS',
  recruitmentStrategy: 'IN_SERVICE',
  recruitmentPanelProvider: null,
  studyPlan: { name: 'Checkout interviews', includeScreener: true, language: 'en', scheduler: { interviewDurationMinutes: 30 } },
  hasScreener: true,
  createdFromStudyId: 'stu_01JD0000000000000000000000',
  createdAt: '2026-11-22T10:00:00.000Z',
};

export const StudyTemplate = Type.Object(
  {
    studyTemplateId: Type.String(),
    name: Type.String(),
    studyType: StudyType,
    recruitmentStrategy: RecruitmentStrategy,
    recruitmentPanelProvider: Type.Union([PanelProvider, Type.Null()]),
    studyPlan: Type.Ref(StudyPlan),
    hasScreener: Type.Boolean(),
    createdFromStudyId: nullableString,
    createdAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'StudyTemplate', title: 'StudyTemplate', examples: [exampleTemplate] },
);

export const CreateTemplateBody = Type.Object(
  { studyId: Type.String({ minLength: 1, maxLength: 200, description: 'The study whose type, plan and screener the template keeps.' }), name: Text({ minLength: 1, maxLength: 200 }) },
  { additionalProperties: false, examples: [{ studyId: 'stu_01JD0000000000000000000000', name: 'Standard 30-minute interview' }] },
);

export const TemplateList = Type.Object(
  { results: Type.Array(Type.Ref(StudyTemplate)), total: Type.Integer(), pageInfo: Type.Ref(PageInfo) },
  { title: 'StudyTemplateList', examples: [{ results: [exampleTemplate], total: 1, pageInfo: { ...examplePageInfo, hasNextPage: false } }] },
);

export const studySchemas = [StudyPlan, Owner, ScreenerQuestion, Screener, Study, StudySummary, StudyTemplate];
