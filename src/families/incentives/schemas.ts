import { type Static, Type } from '@sinclair/typebox';
import { IsoDateTime, ListQuery, paged, Text } from '../../http/schemas.js';
import { ledgerActorKinds, ledgerKindMeaning, ledgerKinds } from './ledger.js';
import { currencyDescription } from './currencies.js';
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
  currency: 'USD',
  sentAt: '2026-11-22T10:00:00.000Z',
  recipientEmail: 'grace@example.org',
  personId: 'per_01JD0000000000000000000000',
  participantId: 'ptc_01JD0000000000000000000000',
  studyId: 'stu_01JD0000000000000000000000',
  status: 'UNCLAIMED',
  budgetId: 'bgt_research_2026',
  customIncentiveId: null,
  customIncentiveValue: null,
  approval: null,
};

export const approvalStates = ['PENDING', 'APPROVED', 'REFUSED', 'WITHDRAWN'] as const;
const approvalStateMeaning: Record<(typeof approvalStates)[number], string> = {
  PENDING: 'above the workspace\'s approval threshold: waiting for a second person; not ordered at the provider yet (status reads UNCLAIMED)',
  APPROVED: 'approved by a second person, then ordered',
  REFUSED: 'refused by a second person: never ordered, status CANCELED, its budget given back',
  WITHDRAWN: 'canceled (POST /incentives/{incentiveId}/cancel) before a decision: never ordered, status CANCELED',
};

export const Approval = Type.Object(
  {
    state: Type.Union(
      approvalStates.map((state) => Type.Literal(state)),
      { description: listMeanings(approvalStateMeaning) },
    ),
    decidedByUserId: nullableString('Who approved or refused it; null while PENDING or when WITHDRAWN.'),
    decidedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    reason: nullableString("The refusal's reason, if one was given."),
  },
  { title: 'IncentiveApproval' },
);

/** The reference's Incentive (E7, E13, and POST /incentives). */
export const Incentive = Type.Object(
  {
    incentiveId: Type.String(),
    type: Type.Union([...incentiveTypes.map((type) => Type.Literal(type)), Type.Null()], { description: listMeanings(typeMeaning) }),
    amountCents: Type.Integer({
      minimum: 0,
      description:
        "The amount in the currency's minor unit (cents for USD and EUR, yen for JPY, fils for BHD), greater than 0; 0 for a CUSTOM incentive sent without an amount (a gift or a voucher code, whose " +
        'customIncentiveValue says what it is). Sums of money sent (TOTAL_SENT_*, INCENTIVE_PAID) count such an incentive as 0, and count USD incentives only (sums never mix currencies).',
    }),
    currency: Type.String({ description: currencyDescription }),
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
    approval: Type.Union([Approval, Type.Null()], {
      description:
        "null unless the incentive was above the workspace's approval threshold for its currency. While approval.state is PENDING the " +
        'status reads UNCLAIMED (the reference has no waiting status) but nothing is ordered: it cannot be resent, and cancel withdraws it.',
    }),
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
          "The amount in the currency's minor unit, greater than 0, at most the currency's maximum (400 naming [\"amountCents\"] with the range: " +
          'USD 1000000, EUR 1000000, JPY 1500000, BHD 3500000…; see docs/api/incentives.md). Required for every type but CUSTOM (400 naming ["amountCents"] without it). ' +
          'A CUSTOM incentive is a thing, not necessarily money: without amountCents it reads amountCents 0 and needs a ' +
          "customIncentiveValue (given, or the study plan's defaultCustomIncentiveValue) to say what was given.",
      }),
    ),
    currency: Type.Optional(
      Type.String({
        minLength: 3,
        maxLength: 3,
        description: `${currencyDescription} Default: the budget's currency, else USD; with a budget it must be the budget's (400 naming ["currency"]).`,
      }),
    ),
    budgetId: Type.Optional(
      Identifier(
        "The incentive budget it is paid from (POST /incentive-budgets); default: the study plan's incentiveBudgetId. Its amount is taken from " +
          'the budget as the incentive is recorded: 404 when no such budget, 409 when archived or with too little left.',
      ),
    ),
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

export const RefuseIncentiveBody = Type.Object(
  { reason: Type.Optional(Text({ minLength: 1, maxLength: 1000, description: 'Why, for the sender and the ledger.' })) },
  { additionalProperties: false },
);


const exampleEntry = {
  entryId: 'led_01JD0000000000000000000000',
  incentiveId: 'inc_01JD0000000000000000000000',
  kind: 'SENT',
  amountCents: 7500,
  currency: 'USD',
  studyId: 'stu_01JD0000000000000000000000',
  participantId: 'ptc_01JD0000000000000000000000',
  personId: 'per_01JD0000000000000000000000',
  budgetId: 'bgt_01JD0000000000000000000000',
  status: 'UNCLAIMED',
  actor: { kind: 'USER', id: 'usr_01JD0000000000000000000000', tokenId: 'tok_01JD0000000000000000000000' },
  recipientEmail: 'grace@example.org',
  note: null,
  at: '2026-11-22T10:00:00.000Z',
};

export const LedgerEntry = Type.Object(
  {
    entryId: Type.String({ description: 'Entries are in the order they were written.' }),
    incentiveId: Type.String(),
    kind: Type.Union(
      ledgerKinds.map((kind) => Type.Literal(kind)),
      { description: listMeanings(ledgerKindMeaning) },
    ),
    amountCents: Type.Integer({ description: "The incentive's amount, in the currency's minor unit." }),
    currency: Type.String(),
    studyId: Type.String(),
    participantId: Type.String(),
    personId: Type.String(),
    budgetId: nullableString(),
    status: Type.Union(
      incentiveStatuses.map((status) => Type.Literal(status)),
      { description: "The incentive's status after this entry." },
    ),
    actor: Type.Object(
      {
        kind: Type.Union(
          ledgerActorKinds.map((kind) => Type.Literal(kind)),
          { description: 'USER: through the API (id: the user; tokenId: the token used); JOB: the background work (id: its queue); PROVIDER: a provider report (id: the provider).' },
        ),
        id: Type.String(),
        tokenId: nullableString(),
      },
      { additionalProperties: false },
    ),
    recipientEmail: nullableString(
      'SENT entries: the address the incentive went to. Null once the person is deleted (the entry stays, without their values); masked for tokens without the personal-data right.',
    ),
    note: nullableString("A provider's words, a refusal's reason; erased with the person."),
    at: Type.String({ format: 'date-time' }),
  },
  { $id: 'IncentiveLedgerEntry', title: 'IncentiveLedgerEntry', examples: [exampleEntry] },
);

export const LedgerEntryList = paged(Type.Ref(LedgerEntry), 'IncentiveLedgerEntryList', exampleEntry);
export const IncentiveLedger = Type.Object({ results: Type.Array(Type.Ref(LedgerEntry)) }, { title: 'IncentiveLedger', examples: [{ results: [exampleEntry] }] });
export const IncentiveList = paged(Type.Ref(Incentive), 'IncentiveList', exampleIncentive);

export const LedgerQuery = Type.Object(
  {
    ...ListQuery.properties,
    since: Type.Optional(IsoDateTime('Only entries written at or after this time.')),
    until: Type.Optional(IsoDateTime('Only entries written before this time.')),
  },
  { additionalProperties: false },
);

export const incentiveSchemas = [Incentive, LedgerEntry];
