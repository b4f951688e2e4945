import { type Static, Type } from '@sinclair/typebox';
import { IsoDateTime, ListQuery, paged } from '../../http/schemas.js';

/** The outcomes a response can hold: the rules' three, and OVER_QUOTA once quotas place people (a qualified person every matching group of which was full). */
export const responseOutcomes = ['QUALIFIED', 'DISQUALIFIED', 'NEEDS_REVIEW', 'OVER_QUOTA'] as const;

const Outcome = (description: string) => Type.Unsafe<(typeof responseOutcomes)[number]>({ type: 'string', enum: [...responseOutcomes], description });

const exampleAnswer = {
  questionId: 'sqn_01JD0000000000000000000000',
  questionKey: 'freq',
  revision: 1,
  text: 'How often do you shop online?',
  type: 'SINGLE_SELECT',
  choices: [
    { id: 'weekly', label: 'Weekly' },
    { id: 'never', label: 'Never' },
  ],
  value: 'weekly',
  choiceLabels: ['Weekly'],
  masked: false,
};

const exampleResponse = {
  participantId: 'ptc_01JD0000000000000000000000',
  studyId: 'stu_01JD0000000000000000000000',
  personId: 'per_01JD0000000000000000000000',
  revision: 1,
  outcome: 'QUALIFIED',
  decidedBy: { kind: 'RANGE', questionId: 'sqn_01JD0000000000000000000001', questionKey: 'orders', rangeIndex: 1, rule: 'QUALIFIES' },
  suspectedBot: false,
  startedAt: '2026-12-07T10:00:00.000Z',
  submittedAt: '2026-12-07T10:02:14.000Z',
  secondsToComplete: 134,
  answers: [exampleAnswer],
};

export const ScreenerAnswer = Type.Object(
  {
    questionId: Type.String({ description: 'The question version answered (a screener PUT makes new versions; this one is kept while an answer names it).' }),
    questionKey: Type.String({ description: "The question's key: the same question across revisions." }),
    revision: Type.Integer({ description: 'The screener revision the question version belongs to.' }),
    text: Type.String({ description: 'The question as it was asked (its `name` at that version).' }),
    type: Type.String({ description: 'The question type at that version (SHORT_FORM, SINGLE_SELECT, NUMBER, …).' }),
    choices: Type.Union([Type.Array(Type.Object({ id: Type.String(), label: Type.String() })), Type.Null()], {
      description: "The choices as they were offered at that version (a YES_NO question's yes and no included); null for other types.",
    }),
    value: Type.Unknown({
      description:
        'The answer as kept: a text, a number, a date (YYYY-MM-DD), a choice id, or choice ids for MULTI_SELECT. Masked ("***", "***@***" for an EMAIL question) for a token without the personal-data right when the question maps to a property flagged isPII or isPHI (or to one since deleted), and for EMAIL and PHONE_NUMBER questions.',
    }),
    choiceLabels: Type.Union([Type.Array(Type.String()), Type.Null()], { description: "The labels of the chosen choices at that version; null for other types, and when masked." }),
    masked: Type.Boolean({ description: 'The value is masked for this token.' }),
  },
  { $id: 'ScreenerAnswer', title: 'ScreenerAnswer', examples: [exampleAnswer] },
);

export const ScreenerResponse = Type.Object(
  {
    participantId: Type.String(),
    studyId: Type.String(),
    personId: Type.String(),
    revision: Type.Integer({ description: 'The screener revision that was answered.' }),
    outcome: Outcome(
      'What the submission decided: QUALIFIED, DISQUALIFIED, NEEDS_REVIEW (no rule fired and qualifyByDefault is false, or a suspected robot), OVER_QUOTA (qualified, but every matching quota group was full). ' +
        "It stays as decided; the participant's screenerState is the team's to change.",
    ),
    decidedBy: Type.Object(
      { kind: Type.String({ description: 'CHOICE (a choice\'s rule), RANGE (a number range\'s rule), DEFAULT (qualifyByDefault), SUSPECTED_BOT (the hidden field was filled), or a kind quotas add.' }) },
      {
        additionalProperties: true,
        description: 'Why: the rule that decided the outcome, with the question (id and key) and the choice id or range index. For the team only: the person is never shown it.',
      },
    ),
    suspectedBot: Type.Boolean({ description: 'The hidden field robots fill was filled; such a response is left for review whatever the rules say.' }),
    startedAt: Type.Union([IsoDateTime('When the page the answers were sent from was served.'), Type.Null()]),
    submittedAt: IsoDateTime('When the answers were recorded.'),
    secondsToComplete: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], { description: 'From startedAt to submittedAt, in whole seconds.' }),
    answers: Type.Array(Type.Ref(ScreenerAnswer), { description: 'One per question answered (questions hidden by skip logic have none), in question order.' }),
  },
  {
    $id: 'ScreenerResponse',
    title: 'ScreenerResponse',
    description: "A participant's answers to their study's screener, sent from their page, with the outcome the rules gave. One per participant.",
    examples: [exampleResponse],
  },
);
export type ScreenerResponse = Static<typeof ScreenerResponse>;

export const ScreenerResponseList = paged(Type.Ref(ScreenerResponse), 'ScreenerResponseList', exampleResponse);

export const ScreenerResponsesQuery = Type.Object(
  {
    ...ListQuery.properties,
    outcome: Type.Optional(Outcome('Only responses with this outcome.')),
  },
  { additionalProperties: false },
);
export type ScreenerResponsesQuery = Static<typeof ScreenerResponsesQuery>;

export const ScreenerExportQuery = Type.Object({ outcome: Type.Optional(Outcome('Only responses with this outcome.')) }, { additionalProperties: false });

const exampleFunnel = {
  studyId: 'stu_01JD0000000000000000000000',
  participants: 120,
  sent: 100,
  opened: 74,
  started: 61,
  submitted: 58,
  qualified: 31,
  disqualified: 19,
  needsReview: 5,
  overQuota: 3,
  quotaGroups: [
    { name: 'Weekly shoppers', participants: 20 },
    { name: 'Monthly shoppers', participants: 11 },
  ],
};

const Count = (description: string) => Type.Integer({ minimum: 0, description });

export const ScreenerFunnel = Type.Object(
  {
    studyId: Type.String(),
    participants: Count("The study's participants."),
    sent: Count('Participants whose screener was sent (screenerState reached SCREENER_SENT: screenerSentAt is set).'),
    opened: Count('Participants who opened the screener page through one of their SCREENER links at least once.'),
    started: Count('Participants who sent the form at least once: those who submitted, and those whose every post was refused (an answer missing or invalid).'),
    submitted: Count('Participants whose answers were recorded.'),
    qualified: Count('Submitted with the outcome QUALIFIED.'),
    disqualified: Count('Submitted with the outcome DISQUALIFIED.'),
    needsReview: Count('Submitted with the outcome NEEDS_REVIEW.'),
    overQuota: Count('Submitted with the outcome OVER_QUOTA.'),
    quotaGroups: Type.Array(Type.Object({ name: Type.String(), participants: Count('Participants placed in the group.') }), {
      description: 'Participants per quota group they were placed in, by name; groups nobody was placed in are not listed.',
    }),
  },
  {
    $id: 'ScreenerFunnel',
    title: 'ScreenerFunnel',
    description:
      "A study's screener funnel: each stage counts participants (of people not deleted), each on its own (a link made with the API opens the page without a screener sent, so a stage can exceed the one before it).",
    examples: [exampleFunnel],
  },
);

export const screenerResponseSchemas = [ScreenerAnswer, ScreenerResponse, ScreenerFunnel];
