import { type Static, Type } from '@sinclair/typebox';
import { examplePageInfo, IsoDate, PageInfo, Text } from '../../http/schemas.js';

// A string enum rather than a union of literals: Ajv reports a bad value of an anyOf once per
// branch, which would give the client one error item per allowed value instead of one.
const literals = <T extends string>(values: readonly T[]) => Type.Unsafe<T>({ type: 'string', enum: [...values] });

export const studyTypes = ['SURVEY', 'INTERVIEWS', 'UNMODERATED_TEST', 'GROUP_INTERVIEW'] as const;
export const studyStatuses = ['DRAFT', 'ACTIVE', 'PAUSED', 'CLOSED'] as const;
export const recruitmentStrategies = ['IN_SERVICE', 'EXTERNAL'] as const;
export const panelProviders = ['PROVIDER_ONE', 'PROVIDER_TWO'] as const;
export const questionTypes = ['SHORT_FORM', 'LONG_FORM', 'SINGLE_SELECT', 'MULTI_SELECT', 'NUMBER', 'DATE', 'EMAIL', 'PHONE_NUMBER', 'SCALE', 'YES_NO'] as const;
export const screenerRules = ['QUALIFIES', 'DISQUALIFIES', 'NEUTRAL'] as const;
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
  consentBeforeScreener: Type.Optional(
    Type.Boolean({
      description:
        "Where the participant's page asks for consent (when consentFormId names a consent form of the workspace): true, before the screener's questions; false (the default), after a qualifying answer (or one left for review).",
    }),
  ),
  incentive: Type.Optional(IncentiveInput),
  includeScreener: Type.Optional(Type.Boolean({ description: 'true gives the study an empty screener of type SERVICE (whatever the study type) if it has none.' })),
  brandingConfigId: Type.Optional(
    Text({
      minLength: 1,
      maxLength: 200,
      description:
        "Free text, as in the reference API. When it is the id of a branding config of the workspace (`brc_…`, see `/branding-configs`) the study's participant pages wear it; any other value is kept as written and the pages show the workspace's name and their own style.",
    }),
  ),
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
    consentBeforeScreener: Type.Optional(Type.Boolean()),
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

const qualifyByDefaultMeaning =
  'What a submission whose answers fire no rule gives: a choice or range that DISQUALIFIES disqualifies (the first, in question order, wins over any that QUALIFIES); ' +
  'otherwise one that QUALIFIES qualifies; when none fired, true qualifies the person and false leaves them SUBMITTED for the team to review.';

const ScreenerRule = literals(screenerRules);
const keyPattern = '^[A-Za-z0-9_-]{1,64}$';
const QuestionKey = (description: string) => Type.String({ pattern: keyPattern, description });
const ChoiceId = Type.String({ pattern: keyPattern, description: 'Letters, digits, _ and -; at most 64.' });
const Bound = (description: string) => Type.Number({ minimum: -1e12, maximum: 1e12, description });

const choiceFields = {
  id: ChoiceId,
  label: Text({ minLength: 1, maxLength: 500, description: 'What the person reads. Unique within the question, ignoring case.' }),
};
const rangeFields = {
  min: Type.Optional(Bound('Inclusive; left out: no lower bound.')),
  max: Type.Optional(Bound('Inclusive; left out: no upper bound.')),
};

export const ScreenerChoice = Type.Object(
  { ...choiceFields, rule: ScreenerRule },
  {
    $id: 'ScreenerChoice',
    title: 'ScreenerChoice',
    description: 'A choice of a SINGLE_SELECT, MULTI_SELECT or YES_NO question. `id` is stable across edits: answers and skip logic name it.',
  },
);

export const ScreenerRange = Type.Object(
  { ...rangeFields, rule: ScreenerRule },
  { $id: 'ScreenerRange', title: 'ScreenerRange', description: 'A range of answers of a NUMBER or SCALE question and what an answer in it does.' },
);

export const ScreenerShowWhen = Type.Object(
  {
    questionKey: Type.String({ description: 'The key of an earlier question.' }),
    choiceIds: Type.Optional(Type.Array(Type.String())),
    range: Type.Optional(Type.Object(rangeFields)),
  },
  {
    $id: 'ScreenerShowWhen',
    title: 'ScreenerShowWhen',
    description:
      'Skip logic: the question is shown only when the earlier question `questionKey` was shown and answered with one of `choiceIds` ' +
      '(any of them, for MULTI_SELECT) or with a number in `range`. Exactly one of the two.',
  },
);

const questionDescription =
  'One version of a question. `id` names this version: an edit of the screener makes new versions (new ids) and answers keep the version they answered; ' +
  '`key` is the question across versions. `choices` is present for SINGLE_SELECT, MULTI_SELECT and YES_NO questions; ' +
  '`minimum`, `maximum`, `integer` and `ranges` for NUMBER and SCALE questions; `showWhen` when the question has skip logic.';

export const ScreenerQuestion = Type.Object(
  {
    id: Type.String({ description: 'This version of the question.' }),
    key: Type.String({ description: 'The question across versions; skip logic names earlier questions by it.' }),
    workspaceId: Type.String(),
    category: Type.String(),
    type: Type.String(),
    name: Type.String(),
    isRequired: Type.Boolean(),
    description: nullableString,
    mappedToPropertyId: nullableString,
    questionTemplateId: nullableString,
    choices: Type.Optional(Type.Array(Type.Ref(ScreenerChoice))),
    minimum: Type.Optional(Type.Number()),
    maximum: Type.Optional(Type.Number()),
    integer: Type.Optional(Type.Boolean()),
    ranges: Type.Optional(Type.Array(Type.Ref(ScreenerRange))),
    showWhen: Type.Optional(Type.Ref(ScreenerShowWhen)),
  },
  { $id: 'ScreenerQuestion', title: 'ScreenerQuestion', description: questionDescription },
);

export const Screener = Type.Object(
  {
    id: Type.String(),
    workspaceId: Type.String(),
    studyId: Type.String(),
    type: literals(['SERVICE', 'EXTERNAL_SURVEY'] as const),
    showSchedulerToQualified: Type.Boolean(),
    qualifyByDefault: Type.Boolean({ description: qualifyByDefaultMeaning }),
    revision: Type.Integer({ description: 'The current revision: 1 when created, one more at each PUT. The questions are those of this revision.' }),
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
        revision: 2,
        createdAt: '2026-11-22T10:00:00.000Z',
        updatedAt: '2026-11-22T10:05:00.000Z',
        questions: [
          {
            id: 'sqn_01JD0000000000000000000000',
            key: 'frequency',
            workspaceId: 'wsp_01JD0000000000000000000000',
            category: 'simple',
            type: 'SINGLE_SELECT',
            name: 'How often do you shop online?',
            isRequired: true,
            description: null,
            mappedToPropertyId: null,
            questionTemplateId: null,
            choices: [
              { id: 'weekly', label: 'Every week', rule: 'QUALIFIES' },
              { id: 'never', label: 'Never', rule: 'DISQUALIFIES' },
            ],
          },
          {
            id: 'sqn_01JD0000000000000000000001',
            key: 'orders',
            workspaceId: 'wsp_01JD0000000000000000000000',
            category: 'simple',
            type: 'NUMBER',
            name: 'How many orders did you place last month?',
            isRequired: false,
            description: null,
            mappedToPropertyId: null,
            questionTemplateId: null,
            minimum: 0,
            maximum: 1000,
            integer: true,
            ranges: [{ max: 0, rule: 'DISQUALIFIES' }],
            showWhen: { questionKey: 'frequency', choiceIds: ['weekly'] },
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
    key: Type.Optional(
      QuestionKey('The question across edits; skip logic names earlier questions by it. Unique within the screener; left out: the service makes one.'),
    ),
    name: Text({ minLength: 1, maxLength: 1000 }),
    type: literals(questionTypes),
    category: Type.Optional(literals(questionCategories)),
    isRequired: Type.Optional(Type.Boolean({ default: false, description: 'Whether a person shown the question must answer it.' })),
    description: Type.Optional(Text({ maxLength: 5000 })),
    mappedToPropertyId: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description:
          "The person property the answer is written to. Checked when defined: SHORT_FORM, LONG_FORM, EMAIL and PHONE_NUMBER map to STRING; NUMBER and SCALE to NUMBER; DATE to DATETIME; " +
          "YES_NO to BOOLEAN; SINGLE_SELECT to SINGLE_SELECT and MULTI_SELECT to MULTI_SELECT properties whose options include every choice's label (ignoring case). " +
          'At most one question maps to a property. An unknown id (or another workspace\'s) is a 404 naming this field.',
      }),
    ),
    questionTemplateId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    choices: Type.Optional(
      Type.Array(
        Type.Object(
          { ...choiceFields, rule: Type.Optional(Type.Unsafe<(typeof screenerRules)[number]>({ type: 'string', enum: [...screenerRules], default: 'NEUTRAL' })) },
          { additionalProperties: false },
        ),
        {
          maxItems: 100,
          description:
            'SINGLE_SELECT and MULTI_SELECT: required, at least one. YES_NO: optional, exactly the ids `yes` and `no` (left out: labels Yes and No, both NEUTRAL). ' +
            '`rule` (default NEUTRAL) says what picking the choice does: QUALIFIES, DISQUALIFIES or NEUTRAL.',
        },
      ),
    ),
    minimum: Type.Optional(Bound('NUMBER and SCALE (required for SCALE): the smallest answer accepted.')),
    maximum: Type.Optional(Bound('NUMBER and SCALE (required for SCALE): the largest answer accepted.')),
    integer: Type.Optional(Type.Boolean({ description: 'NUMBER: only whole numbers are accepted (default false). SCALE always takes whole numbers.' })),
    ranges: Type.Optional(
      Type.Array(Type.Object({ ...rangeFields, rule: ScreenerRule }, { additionalProperties: false }), {
        maxItems: 20,
        description: 'NUMBER and SCALE: what an answer in each range does. Bounds inclusive, at least one per range; ranges must not overlap.',
      }),
    ),
    showWhen: Type.Optional(
      Type.Object(
        {
          questionKey: QuestionKey('The key of an earlier question.'),
          choiceIds: Type.Optional(Type.Array(ChoiceId, { minItems: 1, maxItems: 100, uniqueItems: true, description: 'For a SINGLE_SELECT, MULTI_SELECT or YES_NO question.' })),
          range: Type.Optional(Type.Object(rangeFields, { additionalProperties: false, description: 'For a NUMBER or SCALE question.' })),
        },
        {
          additionalProperties: false,
          description: 'Skip logic: show this question only when the earlier question was shown and its answer matches. Exactly one of choiceIds and range.',
        },
      ),
    ),
  },
  { additionalProperties: false },
);
export type QuestionInput = Static<typeof QuestionInput>;

export const PutScreenerBody = Type.Object(
  {
    qualifyByDefault: Type.Optional(Type.Boolean({ description: `${qualifyByDefaultMeaning} Left out: unchanged (false for a new screener).` })),
    showSchedulerToQualified: Type.Optional(Type.Boolean()),
    questions: Type.Array(QuestionInput, { maxItems: 200 }),
  },
  {
    additionalProperties: false,
    examples: [
      {
        qualifyByDefault: false,
        questions: [
          {
            key: 'frequency',
            name: 'How often do you shop online?',
            type: 'SINGLE_SELECT',
            isRequired: true,
            choices: [
              { id: 'weekly', label: 'Every week', rule: 'QUALIFIES' },
              { id: 'monthly', label: 'Every month' },
              { id: 'never', label: 'Never', rule: 'DISQUALIFIES' },
            ],
          },
          {
            key: 'orders',
            name: 'How many orders did you place last month?',
            type: 'NUMBER',
            minimum: 0,
            maximum: 1000,
            integer: true,
            ranges: [{ max: 0, rule: 'DISQUALIFIES' }],
            showWhen: { questionKey: 'frequency', choiceIds: ['weekly', 'monthly'] },
          },
        ],
      },
    ],
  },
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

export const studySchemas = [StudyPlan, Owner, ScreenerChoice, ScreenerRange, ScreenerShowWhen, ScreenerQuestion, Screener, Study, StudySummary, StudyTemplate];
