import { type Static, Type } from '@sinclair/typebox';
import { Text } from '../../http/schemas.js';
import { type RootFilter, rootFilterRef } from '../../search/schemas.js';

/** The most groups a study may have: each qualified submission evaluates them in order. */
export const MAX_QUOTA_GROUPS = 50;
/** The most answer conditions one group may have. */
export const MAX_ANSWER_CONDITIONS = 20;

const keyPattern = '^[A-Za-z0-9_-]{1,64}$';
const Bound = (description: string) => Type.Number({ minimum: -1e12, maximum: 1e12, description });
const rangeFields = {
  min: Type.Optional(Bound('Inclusive; left out: no lower bound.')),
  max: Type.Optional(Bound('Inclusive; left out: no upper bound.')),
};

const exampleFilter = { filters: [{ property: { propertyId: 'prp_01JD0000000000000000000000' }, comparison: 'IS_ANY_OF', value: ['iOS'] }] };
const exampleGroup = {
  quotaGroupId: 'qgr_01JD0000000000000000000000',
  studyId: 'stu_01JD0000000000000000000000',
  name: 'Weekly shoppers on iOS',
  position: 0,
  cap: 7,
  filled: 3,
  isFull: false,
  answers: [{ questionKey: 'frequency', choiceIds: ['weekly'] }],
  filter: exampleFilter,
  createdAt: '2026-11-22T10:00:00.000Z',
  updatedAt: '2026-11-22T10:00:00.000Z',
};

export const QuotaAnswerCondition = Type.Object(
  {
    questionKey: Type.String({ pattern: keyPattern, description: "The key of a question of the study's screener (stable across its revisions)." }),
    choiceIds: Type.Optional(Type.Array(Type.String({ pattern: keyPattern }), { minItems: 1, maxItems: 100, uniqueItems: true, description: 'For a SINGLE_SELECT, MULTI_SELECT or YES_NO question: matches an answer with any of these choices.' })),
    range: Type.Optional(Type.Object(rangeFields, { additionalProperties: false, description: 'For a NUMBER or SCALE question: matches an answer in the range, bounds included.' })),
  },
  {
    $id: 'QuotaAnswerCondition',
    title: 'QuotaAnswerCondition',
    additionalProperties: false,
    description:
      "A condition over one screener answer, in the shape of a question's showWhen: exactly one of choiceIds and range. A question the person was not shown, or left unanswered, matches no condition.",
  },
);

export const QuotaGroup = Type.Object(
  {
    quotaGroupId: Type.String(),
    studyId: Type.String(),
    name: Type.String({ description: "Unique within the study, ignoring case. A placed participant's quotaGroup is this name." }),
    position: Type.Integer({ description: 'The group\'s place in the order of evaluation, from 0: a qualified person joins the first open group they match.' }),
    cap: Type.Integer({ minimum: 1, description: 'The most places the group gives.' }),
    filled: Type.Integer({ minimum: 0, description: 'Places taken by qualified submissions. Never more than the cap at the time each was taken; it may exceed a cap lowered since.' }),
    isFull: Type.Boolean({ description: 'filled ≥ cap: the group takes nobody more.' }),
    answers: Type.Union([Type.Array(Type.Ref(QuotaAnswerCondition)), Type.Null()], {
      description: 'Every condition must match (AND); an empty list matches every answer. null for a token that cannot read screeners (the conditions name its questions and choices).',
    }),
    filter: Type.Union([Type.Unsafe<RootFilter>({ type: 'object', additionalProperties: true, description: "A RootFilter over the person's PERSON names and custom properties." }), Type.Null()], {
      description: 'The person must match it too, as the people search would at the time of the submission (after mapped answers are written); null: no condition on the person.',
    }),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  {
    $id: 'QuotaGroup',
    title: 'QuotaGroup',
    description: "A study's quota group (the reference's STUDY_QUOTA_GROUP): who it is for, and how many places it gives.",
    examples: [exampleGroup],
  },
);

export const QuotaGroupList = Type.Object(
  { quotaGroups: Type.Array(Type.Ref(QuotaGroup), { description: 'In their order of evaluation.' }) },
  { title: 'QuotaGroupList', examples: [{ quotaGroups: [exampleGroup] }] },
);

export const QuotaGroupInput = Type.Object(
  {
    quotaGroupId: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'An existing group of the study to keep (its places filled stay); left out: a new group.' })),
    name: Text({ minLength: 1, maxLength: 200, description: 'Unique within the study, ignoring case. A group with places filled keeps its name.' }),
    cap: Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'The most places the group gives; may be lowered below filled (the group then takes nobody more).' }),
    answers: Type.Optional(Type.Array(Type.Ref(QuotaAnswerCondition), { maxItems: MAX_ANSWER_CONDITIONS, description: 'Conditions over screener answers, all of which must match. Default: none.' })),
    filter: Type.Optional(
      Type.Union([rootFilterRef({ description: 'PERSON names and custom properties, without sort and without SEGMENT_MEMBERSHIP.' }), Type.Null()], { description: "A condition on the person's properties; null or left out: none." }),
    ),
  },
  { additionalProperties: false },
);

export const PutQuotaGroupsBody = Type.Object(
  {
    quotaGroups: Type.Array(QuotaGroupInput, {
      maxItems: MAX_QUOTA_GROUPS,
      description: 'Every group of the study, in their order of evaluation: groups named by quotaGroupId are kept and changed, others are new, and groups left out are deleted. An empty list removes quotas.',
    }),
  },
  {
    additionalProperties: false,
    examples: [
      {
        quotaGroups: [
          { name: 'Weekly shoppers on iOS', cap: 7, answers: [{ questionKey: 'frequency', choiceIds: ['weekly'] }], filter: exampleFilter },
          { name: 'Everyone else', cap: 3 },
        ],
      },
    ],
  },
);
export type PutQuotaGroupsBody = Static<typeof PutQuotaGroupsBody>;

export const QuotaGroupsParams = Type.Object({ studyId: Type.String({ minLength: 1, maxLength: 200 }) });

export const quotaGroupSchemas = [QuotaAnswerCondition, QuotaGroup];
