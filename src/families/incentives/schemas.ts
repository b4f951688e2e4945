import { type Static, Type } from '@sinclair/typebox';
import { Text } from '../../http/schemas.js';
import { incentiveStatuses, incentiveTypes, statusMeaning, typeMeaning } from './states.js';

const listMeanings = (meanings: Record<string, string>) =>
  Object.entries(meanings)
    .map(([value, meaning]) => `${value}: ${meaning}`)
    .join('; ');

const nullableString = (description?: string) => Type.Union([Type.String(), Type.Null()], description ? { description } : {});

export const exampleIncentive = {
  incentiveId: 'inc_01JD0000000000000000000000',
  type: 'MONEY_OR_GIFT_CARD',
  amountCents: 7500,
  sentAt: '2026-11-22T10:00:00.000Z',
  recipientEmail: 'grace@example.org',
  personId: 'per_01JD0000000000000000000000',
  participantId: 'ptc_01JD0000000000000000000000',
  studyId: 'stu_01JD0000000000000000000000',
  status: 'UNCLAIMED',
  budgetId: 'bgt_research_2026',
  customIncentiveId: null,
  customIncentiveValue: null,
};

/** The reference's Incentive (E7, E13, and POST /incentives). */
export const Incentive = Type.Object(
  {
    incentiveId: Type.String(),
    type: Type.Union([...incentiveTypes.map((type) => Type.Literal(type)), Type.Null()], { description: listMeanings(typeMeaning) }),
    amountCents: Type.Integer({
      minimum: 0,
      description:
        'The amount in cents (USD), greater than 0; 0 for a CUSTOM incentive sent without an amount (a gift or a voucher code, whose ' +
        'customIncentiveValue says what it is). Sums of money sent (TOTAL_SENT_*, INCENTIVE_PAID) count such an incentive as 0.',
    }),
    sentAt: Type.String({ format: 'date-time' }),
    recipientEmail: nullableString(
      'The recipient\'s current email; null when the recipient was deleted; masked ("***@***") for tokens without the personal-data right.',
    ),
    personId: Type.String(),
    participantId: Type.String(),
    studyId: Type.String(),
    status: Type.Union(
      incentiveStatuses.map((status) => Type.Literal(status)),
      { description: listMeanings(statusMeaning) },
    ),
    budgetId: nullableString('The incentive budget it is paid from (the study plan\'s incentiveBudgetId unless given).'),
    customIncentiveId: nullableString('CUSTOM incentives: the custom reward.'),
    customIncentiveValue: nullableString('CUSTOM incentives: its value, as text.'),
  },
  { $id: 'Incentive', title: 'Incentive', examples: [exampleIncentive] },
);
export type Incentive = Static<typeof Incentive>;

const Identifier = (description: string) => Type.String({ minLength: 1, maxLength: 100, description });

export const SendIncentiveBody = Type.Object(
  {
    participantId: Identifier('The participant paid: a person taking part in a study of this workspace (404 otherwise).'),
    type: Type.Union(
      incentiveTypes.map((type) => Type.Literal(type)),
      { description: listMeanings(typeMeaning) },
    ),
    amountCents: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 100_000_000,
        description:
          'The amount in cents (USD), greater than 0. Required for every type but CUSTOM (400 naming ["amountCents"] without it). ' +
          'A CUSTOM incentive is a thing, not necessarily money: without amountCents it reads amountCents 0 and needs a ' +
          "customIncentiveValue (given, or the study plan's defaultCustomIncentiveValue) to say what was given.",
      }),
    ),
    budgetId: Type.Optional(Identifier("The incentive budget it is paid from; default: the study plan's incentiveBudgetId.")),
    customIncentiveId: Type.Optional(Identifier("CUSTOM only: the custom reward; default: the study plan's customIncentiveId.")),
    customIncentiveValue: Type.Optional(
      Text({ minLength: 1, maxLength: 1000, description: "CUSTOM only: the reward's value, as text; default: the study plan's defaultCustomIncentiveValue." }),
    ),
  },
  {
    additionalProperties: false,
    examples: [
      { participantId: 'ptc_01JD0000000000000000000000', type: 'MONEY_OR_GIFT_CARD', amountCents: 7500, budgetId: 'bgt_research_2026' },
      { participantId: 'ptc_01JD0000000000000000000000', type: 'CUSTOM', customIncentiveId: 'tote-bag', customIncentiveValue: 'Branded tote bag' },
    ],
  },
);
export type SendIncentiveBody = Static<typeof SendIncentiveBody>;

export const IncentiveIdParams = Type.Object({ incentiveId: Type.String({ minLength: 1, maxLength: 100 }) });

export const IncentiveActionResult = Type.Object(
  { success: Type.Boolean({ description: 'Always true: a refusal is an error response.' }), incentiveId: Type.String() },
  { title: 'IncentiveActionResult', examples: [{ success: true, incentiveId: 'inc_01JD0000000000000000000000' }] },
);

export const incentiveSchemas = [Incentive];
